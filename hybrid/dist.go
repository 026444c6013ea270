package hybrid

import (
	"github.com/hlmproject/hlm/sampling"
	"github.com/hlmproject/hlm/wire"
)

// Dist turns logits into the distribution a model samples from in a run
// with these parameters: softmax at the run's temperature, then its top-k
// and top-p filters (both models apply the same rule, so verification
// compares like with like). Whatever measures a run's distributions
// outside the round loop (calibration, uncertainty measures) uses it too.
func (p *Params) Dist(dst []float64, logits []float32) []float64 { return p.distOf(dst, logits) }

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

// softmaxOnly reports whether distOf is sampling.Softmax at the
// temperature alone, no top-k or top-p cut: what a race over the logits
// (speculative.CoupledSampleLogits) stands for.
func (p *Params) softmaxOnly() bool {
	return !(p.Temperature > 0) || p.TopK <= 0 && !(p.TopP > 0 && p.TopP < 1)
}

// idBits is ⌈log2 V⌉, the bits of one token id.
func idBits(vocab int) int {
	b := 0
	for (1 << b) < vocab {
		b++
	}
	return b
}

// CommonPrefix is the length of the longest common prefix of a and b.
func CommonPrefix(a, b []int) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// UplinkBits is the papers' bit count of an upload: ⌈log2 V⌉ per token id
// (drafts and committed tokens), the codec payload bits, and 64 bits of
// replica check when present. Device and server count the same way.
//
// A token tree (Upload.Parents) adds each node's parent index, ⌈log2(i+1)⌉
// bits for node i (treeBits).
func UplinkBits(up *wire.Upload, vocab int) int {
	bits := (len(up.Committed) + len(up.Drafts)) * idBits(vocab)
	if up.Parents != nil {
		bits += treeBits(len(up.Drafts))
	}
	for _, d := range up.Drafts {
		bits += int(d.Bits)
	}
	if up.HasCheck {
		bits += checkBits
	}
	return bits
}

// DownlinkBits is the bit count of a verdict on L drafts: the accepted count
// in ⌈log2(L+1)⌉ bits and the new token id. Q-S eq. 8 prints ⌈log2 L⌉ for
// the count, one bit less when L is a power of two; the count takes L+1
// values (0…L), so hlm counts ⌈log2(L+1)⌉ (no effect at the papers' default
// downlink, which costs no time).
func DownlinkBits(L, vocab int) int { return idBits(L+1) + idBits(vocab) }

// VerdictBits is the bit count of a verdict on an upload of n draft tokens
// under p: DownlinkBits of the block, plus ⌈log2 K⌉ bits naming the
// accepted draft when list matching sends K drafts of n/K tokens.
func VerdictBits(p Params, n, vocab int) int {
	K := p.listK() // idBits(1) = 0
	return DownlinkBits(n/K, vocab) + idBits(K)
}
