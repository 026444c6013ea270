package sampling

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// ErrInvalidSampler is returned (wrapped) by Sampler.Validate.
var ErrInvalidSampler = errors.New("sampling: invalid sampler")

// Sampler is a sampling configuration: temperature, then top-k, then top-p.
//
// The zero value is greedy decoding (temperature 0, no filters).
type Sampler struct {
	// Temperature divides the logits before the softmax. 0 means greedy
	// (argmax); 1 samples from the model's distribution unchanged.
	Temperature float64 `json:"temperature"`
	// TopK keeps only the K most probable tokens; 0 disables the filter.
	TopK int `json:"top_k"`
	// TopP keeps the smallest set of most probable tokens whose mass is at
	// least TopP; 0 and 1 disable the filter.
	TopP float64 `json:"top_p"`
}

// Validate reports whether s is a usable configuration: a finite
// non-negative temperature, TopK ≥ 0 and TopP in [0, 1].
func (s Sampler) Validate() error {
	if !(s.Temperature >= 0) || math.IsInf(s.Temperature, 1) {
		return fmt.Errorf("%w: temperature %v (want finite, ≥ 0)", ErrInvalidSampler, s.Temperature)
	}
	if s.TopK < 0 {
		return fmt.Errorf("%w: top_k %d (want ≥ 0; 0 disables)", ErrInvalidSampler, s.TopK)
	}
	if !(s.TopP >= 0 && s.TopP <= 1) {
		return fmt.Errorf("%w: top_p %v (want in [0, 1]; 0 and 1 disable)", ErrInvalidSampler, s.TopP)
	}
	return nil
}

// Next samples a token from logits and returns it together with the
// distribution it was sampled from: softmax at s.Temperature, then the TopK
// and TopP filters. The distribution is freshly allocated; use NextInto to
// reuse a buffer.
//
// Next assumes a valid configuration (see Validate); a negative temperature
// behaves as 0. It consumes exactly one draw from rng. For empty logits it
// returns −1 and an empty distribution.
func (s Sampler) Next(logits []float32, rng *rand.Rand) (token int, dist []float64) {
	return s.NextInto(nil, logits, rng)
}

// NextInto is Next writing the distribution into dst (reused when large
// enough, as in Softmax).
func (s Sampler) NextInto(dst []float64, logits []float32, rng *rand.Rand) (token int, dist []float64) {
	dist = Softmax(dst, logits, s.Temperature)
	if s.Temperature > 0 {
		if s.TopK > 0 {
			TopK(dist, s.TopK)
		}
		if s.TopP > 0 && s.TopP < 1 {
			TopP(dist, s.TopP)
		}
	}
	return Sample(dist, rng), dist
}
