package policy

import (
	"fmt"
	"math"
)

// Energy is the energy model of U+I Sec. IV ("Energy Efficiency"), after
// Cao et al.:
//
//	ē = e_u + e_r + e_s,  e_u = l_u·B·ε_u,  e_r = l_r·ε_r,  e_s = l_s·ε_s,
//
// with l_u the number of uploaded tokens, B the uplink payload per upload,
// l_r the number of rejected (resampled) tokens and l_s the number of
// locally processed tokens; (ε_u, ε_r, ε_s) = (300, 350, 100).
//
// # Units
//
// The paper calls the ε "per-token power costs" and gives them in W. As
// written the formula cannot be in joules: ε_u multiplies a bit count, so
// it is an energy per bit, while ε_r and ε_s are energies per token, and a
// watt is neither (it would need a duration per token). Total evaluates
// the formula exactly as printed and returns the result in the paper's
// unnamed unit; only ratios such as the saving η are meaningful, and η is
// unit-free.
//
// Two further caveats. First, with B in bits (B = 32,000 × 16 = 512,000 for
// a full half-precision distribution) the upload term is five orders of
// magnitude above the others, so η ≈ 1 − l_u/l_u,HLM; the paper's Table I
// (e.g. η = 69.5% for SLM alone) is not consistent with that, so its B was
// presumably normalized. Passing bitsPerUpload = 1 makes ε_u a cost per
// uploaded token, the reading under which the three costs are comparable.
// Second, "locally processed tokens" is ambiguous: tokens committed without
// the LLM (skipped), or every token the SLM drafted. The caller passes l_s
// and should say which reading it uses. Neither reading reproduces
// Table I exactly from the published rates, because the per-method token
// counts are not published.
type Energy struct {
	Upload   float64 `json:"upload"`   // ε_u, per uploaded bit (or per upload with B = 1)
	Resample float64 `json:"resample"` // ε_r, per rejected-and-resampled token
	SLM      float64 `json:"slm"`      // ε_s, per locally processed token
}

// DefaultEnergy returns the costs of U+I Sec. IV: {300, 350, 100}.
func DefaultEnergy() Energy { return Energy{Upload: 300, Resample: 350, SLM: 100} }

// Validate requires finite non-negative costs.
func (e Energy) Validate() error {
	for _, c := range []struct {
		name string
		v    float64
	}{{"upload", e.Upload}, {"resample", e.Resample}, {"slm", e.SLM}} {
		if !(c.v >= 0) || math.IsInf(c.v, 1) {
			return fmt.Errorf("%w: energy: %s cost %v (want finite, ≥ 0)", ErrInvalid, c.name, c.v)
		}
	}
	return nil
}

// Total returns ē = uploads·bitsPerUpload·ε_u + resampled·ε_r + local·ε_s,
// U+I's formula as printed (see the type's documentation for units).
func (e Energy) Total(uploads, resampled, local int, bitsPerUpload float64) float64 {
	return float64(uploads)*bitsPerUpload*e.Upload + float64(resampled)*e.Resample + float64(local)*e.SLM
}

// Saving returns the energy saving ratio η = 1 − ē/ē_HLM of U+I Sec. IV,
// where hlm is the energy of plain HLM (every token uploaded and verified)
// on the same prompts. It returns 0 when hlm ≤ 0.
func Saving(total, hlm float64) float64 {
	if !(hlm > 0) {
		return 0
	}
	return 1 - total/hlm
}
