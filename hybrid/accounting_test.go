package hybrid

import (
	"math"
	"testing"

	"github.com/hlmproject/hlm/wire"
)

// ceilLog2 is ⌈log2 n⌉ for n ≥ 1, from the floating-point logarithm (exact
// for the small n used here).
func ceilLog2(n int) int { return int(math.Ceil(math.Log2(float64(n)))) }

// TestUplinkBitsFormula: an upload costs ⌈log2 V⌉ bits per token id, the
// locally committed tokens that ride along as well as the drafts (U-HLM
// Sec. II, CU-HLM eq. 7, Q-S eq. 7: "⌈log2 V⌉ bits per token"), plus each
// draft's codec payload, plus a tree's parent indices (⌈log2 i⌉ bits for
// the i-th draft, i = 1…n) and a replica upload's 64-bit check.
func TestUplinkBitsFormula(t *testing.T) {
	drafts := func(bits ...uint32) []wire.Draft {
		var d []wire.Draft
		for _, b := range bits {
			d = append(d, wire.Draft{Bits: b})
		}
		return d
	}
	for _, c := range []struct {
		name  string
		up    wire.Upload
		vocab int
		extra int // tree and check bits, from their definitions
	}{
		{"one draft", wire.Upload{Drafts: drafts(100)}, 32000, 0},
		{"skipped tokens ride along", wire.Upload{Committed: []int32{1, 2, 3}, Drafts: drafts(100, 7)}, 32000, 0},
		{"power of two", wire.Upload{Committed: []int32{1}, Drafts: drafts(0)}, 256, 0},
		{"one above a power of two", wire.Upload{Committed: []int32{1}, Drafts: drafts(0)}, 257, 0},
		{"check", wire.Upload{Drafts: drafts(5, 5), HasCheck: true}, 512, 64},
		// Parents of 4 drafts: ⌈log2 1⌉ + ⌈log2 2⌉ + ⌈log2 3⌉ + ⌈log2 4⌉ = 0+1+2+2.
		{"tree", wire.Upload{Drafts: drafts(1, 2, 3, 4), Parents: []int32{-1, 0, 0, 1}}, 1000, 5},
	} {
		want := (len(c.up.Committed)+len(c.up.Drafts))*ceilLog2(c.vocab) + c.extra
		for _, d := range c.up.Drafts {
			want += int(d.Bits)
		}
		if got := UplinkBits(&c.up, c.vocab); got != want {
			t.Errorf("%s: UplinkBits = %d, want %d", c.name, got, want)
		}
	}
}

// TestVerdictBitsFormula: a verdict on L drafts is the accepted count in
// ⌈log2(L+1)⌉ bits and the token id in ⌈log2 V⌉ (Q-S eq. 8, with the count's
// L+1 values); list matching adds ⌈log2 K⌉ bits naming the accepted draft
// among the K drafts of n/K tokens.
func TestVerdictBitsFormula(t *testing.T) {
	const vocab = 32000
	for _, c := range []struct {
		method string
		k, n   int
	}{
		{QS, 1, 4},
		{QS, 1, 7},
		{CoupledList, 2, 8},
		{CoupledList, 3, 6},
		{CoupledList, 4, 16},
	} {
		p := DefaultParams()
		p.Method, p.ListK = c.method, c.k
		want := ceilLog2(c.n/c.k+1) + ceilLog2(vocab) + ceilLog2(c.k)
		if got := VerdictBits(p, c.n, vocab); got != want {
			t.Errorf("%s K=%d, %d drafts: VerdictBits = %d, want %d", c.method, c.k, c.n, got, want)
		}
	}
}

// TestCompressionRatioFormula: Result.CompressionRatio is the codec's bits
// over what the same drafts' full distributions cost at 32 bits per entry,
// 32·V per verified draft for a method whose every draft carries a
// distribution (CU-HLM's top-k).
func TestCompressionRatioFormula(t *testing.T) {
	llm, slm := openPair(t, stories)
	prompt := llm.Tokenizer().Encode("Once upon a time", true)
	p := DefaultParams()
	p.Method, p.Seed, p.MaxTokens, p.UTh = CUHLMOffline, 3, 24, 0
	r := runOnce(t, p, llm, slm, prompt)
	if r.Verified == 0 || r.CompressionRatio == nil {
		t.Fatalf("no verified drafts (%d) or no ratio: the test has no power", r.Verified)
	}
	v := llm.Config().Vocab
	want := float64(r.CodecBits) / (32 * float64(v) * float64(r.Verified))
	if got := *r.CompressionRatio; math.Abs(got-want) > 1e-12*want {
		t.Errorf("compression ratio %v, want codec bits %d / (32·%d·%d drafts) = %v", got, r.CodecBits, v, r.Verified, want)
	}
}
