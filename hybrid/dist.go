package hybrid

import (
	"github.com/hlmproject/hlm/sampling"
)

// distOf turns logits into the distribution a model samples from: softmax at
// the run's temperature, then its top-k and top-p filters (both models apply
// the same rule, so verification compares like with like).
func (p *Params) distOf(dst []float64, logits []float32) []float64 {
	dst = sampling.Softmax(dst, logits, p.Temperature)
	if p.Temperature > 0 {
		if p.TopK > 0 {
			sampling.TopK(dst, p.TopK)
		}
		if p.TopP > 0 && p.TopP < 1 {
			sampling.TopP(dst, p.TopP)
		}
	}
	return dst
}

// idBits is ⌈log2 V⌉, the bits of one token id.
func idBits(vocab int) int {
	b := 0
	for (1 << b) < vocab {
		b++
	}
	return b
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []int) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
