package hybrid

import "math"

// entropyMeter measures, in the simulator only and with Params.Entropy,
// the mean Shannon entropy of the exact distribution each committed token
// followed (Q-S Fig. 3b): for a verified draft position the output
// distribution of speculative sampling (speculative.OutputDist, as the oracle's
// deviation uses; the LLM's own for Q-S by Prop. 1), for a bonus or an
// LLM-sampled token the LLM's, for a token committed on the device the
// SLM's. Coupled drafts (no x̂ on the server) count as following the
// LLM's distribution.
type entropyMeter struct {
	d      *Device
	server *Server
	sum    float64
	n      int
}

func (e *entropyMeter) add(p []float64) {
	e.sum += entropy(p)
	e.n++
}

func (e *entropyMeter) observe(r *round) error {
	tr := r.server
	if !r.verified() || tr == nil {
		return nil
	}
	for _, x := range r.unsentX {
		e.add(x)
	}
	pos := r.positions()
	L := len(pos)
	// A last round may commit past max_tokens (a bonus after a block that
	// filled the room): the output ends at max_tokens, and so does the
	// measure, so that it is over the output's tokens (round.beyond).
	keep := len(r.committed) - r.beyond
	for l := 0; l <= r.verdict.Accepted && l < len(tr.DraftY) && l < keep; l++ {
		y := tr.DraftY[l]
		if l == L || l >= len(tr.XHat) || tr.XHat[l] == nil { // bonus, LLM-only, coupled
			if l < L || r.bonus() || L == 0 {
				e.add(y)
			}
			continue
		}
		eff, err := e.d.outputDist(pos[l], tr.XHat[l], y)
		if err != nil {
			return err
		}
		e.add(eff)
	}
	return nil
}

// end measures the tokens committed on the device after the last upload.
func (e *entropyMeter) end() error {
	for _, x := range e.d.unsentX {
		e.add(x)
	}
	return nil
}

func (e *entropyMeter) fill(res *Result) {
	if e.n > 0 {
		res.MeanEntropy, res.EntropyTokens = ptr(e.sum/float64(e.n)), e.n
	}
}

// entropy is −Σ p_i ln p_i in nats.
func entropy(p []float64) float64 {
	h := 0.0
	for _, v := range p {
		if v > 0 {
			h -= v * math.Log(v)
		}
	}
	return h
}
