package score

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/llama"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*max(1, math.Abs(b)) }

// TestCompareByHand: base p = (1/4, 3/4), model q = (1/2, 1/2), token 1.
func TestCompareByHand(t *testing.T) {
	p := Compare([]float32{0, float32(math.Log(3))}, []float32{0, 0}, 1)
	// KL = 1/4 ln(1/2) + 3/4 ln(3/2) = 0.130812…; NLL = ln 2; NLL_base = ln(4/3).
	want := Position{KLD: 0.25*math.Log(0.5) + 0.75*math.Log(1.5), NLL: math.Ln2, NLLBase: math.Log(4.0 / 3), Top: 0, TopBase: 1}
	if !near(p.KLD, want.KLD, 1e-7) || !near(p.NLL, want.NLL, 1e-12) || !near(p.NLLBase, want.NLLBase, 1e-7) ||
		p.Top != want.Top || p.TopBase != want.TopBase {
		t.Errorf("Compare = %+v, want %+v (the model's tie goes to the lower id)", p, want)
	}
	if d, w := p.PDiff(), 0.5-0.75; !near(d, w, 1e-7) {
		t.Errorf("Δp = %g, want %g", d, w)
	}
	// Three tokens: p = (0.5, 0.25, 0.25), q = (0.25, 0.5, 0.25).
	l := func(x ...float64) []float32 {
		out := make([]float32, len(x))
		for i, v := range x {
			out[i] = float32(math.Log(v))
		}
		return out
	}
	p = Compare(l(0.5, 0.25, 0.25), l(0.25, 0.5, 0.25), 2)
	if w := 0.5*math.Log(2) + 0.25*math.Log(0.5); !near(p.KLD, w, 1e-7) || p.Top != 1 || p.TopBase != 0 {
		t.Errorf("Compare = %+v, want KLD %g, tops 1 and 0", p, w)
	}
}

func TestCompareIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		l := make([]float32, 1+rng.IntN(300))
		for i := range l {
			l[i] = float32(rng.NormFloat64() * 5)
		}
		p := Compare(l, l, rng.IntN(len(l)))
		if p.KLD != 0 || p.NLL != p.NLLBase || p.Top != p.TopBase || p.PDiff() != 0 {
			t.Fatalf("identical logits: %+v", p)
		}
	}
}

// TestSummaryByHand: twelve positions whose statistics are worked out in
// the comments, with llama.cpp's formulas.
func TestSummaryByHand(t *testing.T) {
	var k KLD
	for i := range 12 {
		nb := 1 + 0.1*float64(i)
		top := 0
		if i%4 == 3 { // 3 of 12 disagree
			top = 1
		}
		k.Add(Position{KLD: float64(i) / 100, NLL: nb + 0.1, NLLBase: nb, Top: top, TopBase: 0})
	}
	s := k.Summary()
	// KLD: 0, 0.01, …, 0.11: mean 0.055; mean of squares 0.01²·Σi²/12 =
	// 0.00421667; variance 0.00421667 − 0.055² = 0.00119167;
	// error √(0.00119167/11) = 0.0104083.
	// Sorted, the 90% quantile is at 9.9: 0.099; 99% at 10.89: 0.1089;
	// the median the mean of the 6th and 7th values, 0.055.
	checks := []struct {
		name      string
		got, want float64
	}{
		{"mean KLD", s.KLD.Value, 0.055},
		{"KLD error", s.KLD.Err, 0.01040833},
		{"median KLD", s.KLDQuantiles.Median, 0.055},
		{"KLD 90%", s.KLDQuantiles.P90, 0.099},
		{"KLD 99%", s.KLDQuantiles.P99, 0.1089},
		{"KLD max", s.KLDQuantiles.Max, 0.11},
		{"KLD min", s.KLDQuantiles.Min, 0},
		// NLL_base: 1, 1.1, …, 2.1: mean 1.55; NLL is 0.1 more everywhere.
		{"mean NLL", s.MeanNLL.Value, 1.65},
		{"mean NLL base", s.MeanNLLBase.Value, 1.55},
		{"PPL", s.PPL.Value, math.Exp(1.65)},
		{"PPL base", s.PPLBase.Value, math.Exp(1.55)},
		// The NLLs move together: the ratio's error is 0 and the correlation 1.
		{"ln PPL ratio", s.LogPPLRatio.Value, 0.1},
		{"ln PPL ratio error", s.LogPPLRatio.Err, 0},
		{"PPL ratio", s.PPLRatio.Value, math.Exp(0.1)},
		{"correlation", s.LogPPLCorrelation, 1},
		{"PPL diff", s.PPLDiff.Value, math.Exp(1.65) - math.Exp(1.55)},
		// Same top: 9 of 12 = 0.75 ± √(0.75·0.25/11) = 0.1305582.
		{"same top", s.SameTop.Value, 0.75},
		{"same top error", s.SameTop.Err, 0.1305582},
	}
	for _, c := range checks {
		if !near(c.got, c.want, 1e-6) {
			t.Errorf("%s = %.9g, want %.9g", c.name, c.got, c.want)
		}
	}
	// Δp = e^{−NLL} − e^{−NLL_base} = e^{−NLL_base}(e^{−0.1} − 1).
	var sum float64
	for i := range 12 {
		sum += math.Exp(-(1 + 0.1*float64(i))) * (math.Exp(-0.1) - 1)
	}
	if !near(s.PDiff.Value, sum/12, 1e-12) {
		t.Errorf("mean Δp = %g, want %g", s.PDiff.Value, sum/12)
	}
	if s.Positions != 12 {
		t.Errorf("%d positions", s.Positions)
	}
}

// TestSummaryFewPositions: llama.cpp gives no standard error for ten
// positions or fewer.
func TestSummaryFewPositions(t *testing.T) {
	var k KLD
	for i := range 10 {
		k.Add(Position{KLD: float64(i), NLL: float64(i), NLLBase: 1})
	}
	if s := k.Summary(); s.KLD.Err != 0 || s.MeanNLL.Err != 0 || s.KLD.Value != 4.5 {
		t.Errorf("10 positions: %+v", s.KLD)
	}
	if s := (&KLD{}).Summary(); s.Positions != 0 || s.KLD.Value != 0 {
		t.Errorf("empty: %+v", s)
	}
}

// TestEncode16: the stored log-probabilities are within half a step (and
// float rounding) of the exact ones over the 16 nats below the top; the
// rest are at the floor; the top token is at step 65535.
func TestEncode16(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		l := make([]float32, 2+rng.IntN(500))
		for i := range l {
			l[i] = float32(rng.NormFloat64() * 6)
		}
		r := Encode16(l, nil)
		lse, top := logSumExp(l)
		if r.Q[top] != 65535 {
			t.Fatalf("top token at step %d", r.Q[top])
		}
		for i, v := range l {
			exact := float64(v) - lse
			if float64(v) <= float64(l[top])-16 {
				if r.Q[i] != 0 {
					t.Fatalf("token %d, 16 nats below the top: step %d", i, r.Q[i])
				}
				continue
			}
			if d := math.Abs(float64(r.LogProb(i)) - exact); d > float64(r.Scale)/2+1e-5 {
				t.Fatalf("token %d: stored %g, exact %g (step %g)", i, r.LogProb(i), exact, r.Scale)
			}
		}
		// Compared with a model, the stored base gives nearly the exact statistics.
		m := slices.Clone(l)
		for i := range m {
			m[i] += float32(rng.NormFloat64() * 0.1)
		}
		tok := rng.IntN(len(l))
		a, b := Compare(l, m, tok), Compare16(r, m, tok)
		if math.Abs(a.KLD-b.KLD) > 2e-4 || a.NLL != b.NLL || (a.NLLBase < 15 && math.Abs(a.NLLBase-b.NLLBase) > 2e-4) {
			t.Fatalf("exact %+v, stored %+v", a, b)
		}
	}
	// All logits equal: no steps, every token at ln(1/n).
	r := Encode16([]float32{2, 2, 2, 2}, nil)
	if r.Scale != 0 || !near(float64(r.LogProb(3)), math.Log(0.25), 1e-6) {
		t.Errorf("flat logits: %+v", r)
	}
}

// positionsFrom draws positions from fuzz bytes: pairs of logit vectors of
// a small vocabulary, compared exactly and as llama.cpp stores the base.
func positionsFrom(data []byte) []Position {
	if len(data) < 2 {
		return nil
	}
	v := 2 + int(data[0]%15)
	data = data[1:]
	var out []Position
	for len(data) >= 2*v+1 {
		b, m := make([]float32, v), make([]float32, v)
		for i := range v {
			b[i] = float32(int8(data[i])) / 8
			m[i] = float32(int8(data[v+i])) / 8
		}
		tok := int(data[2*v]) % v
		data = data[2*v+1:]
		out = append(out, Compare(b, m, tok), Compare16(Encode16(b, nil), m, tok))
	}
	return out
}

// FuzzKLD: KL divergences are never negative beyond rounding (exactly,
// Gibbs' inequality; stored, by at most a few steps), quantiles are
// ordered, fractions are fractions, and the statistics do not depend on
// how the positions were split between accumulators or in what order they
// came (to rounding; the quantiles exactly).
func FuzzKLD(f *testing.F) {
	f.Add([]byte{3, 1, 2, 3, 4, 5, 6, 1, 9, 9, 9, 0, 0, 0, 2, 200, 100, 0, 50, 60, 70, 1})
	f.Add(bytes.Repeat([]byte{7, 128, 127, 0, 1}, 40))
	f.Fuzz(func(t *testing.T, data []byte) {
		ps := positionsFrom(data)
		if len(ps) == 0 {
			return
		}
		var all, a, b, rev KLD
		for i, p := range ps {
			if i%2 == 0 && p.KLD < -1e-12 {
				t.Fatalf("exact KL %g < 0", p.KLD)
			}
			if p.KLD < -1e-3 {
				t.Fatalf("stored KL %g", p.KLD)
			}
			all.Add(p)
			if i < len(ps)/2 {
				a.Add(p)
			} else {
				b.Add(p)
			}
			rev.Add(ps[len(ps)-1-i])
		}
		a.Merge(&b)
		s := all.Summary()
		for _, o := range []KLDSummary{a.Summary(), rev.Summary()} {
			if o.Positions != s.Positions || !near(o.KLD.Value, s.KLD.Value, 1e-9) || !near(o.KLD.Err, s.KLD.Err, 1e-6) ||
				!near(o.MeanNLL.Value, s.MeanNLL.Value, 1e-9) || o.SameTop != s.SameTop || o.KLDQuantiles != s.KLDQuantiles ||
				o.PDiffQuantiles != s.PDiffQuantiles {
				t.Fatalf("split or reversed %+v\nwhole %+v", o, s)
			}
		}
		q := s.KLDQuantiles
		order := []float64{q.Min, q.P0_1, q.P1, q.P5, q.P10, q.P25, q.Median, q.P75, q.P90, q.P95, q.P99, q.P99_9, q.Max}
		for i := 1; i < len(order); i++ {
			// Interpolating between equal values may round by an ulp.
			if order[i] < order[i-1]-1e-12*math.Abs(order[i-1]) {
				t.Fatalf("quantiles out of order: %v", order)
			}
		}
		if s.SameTop.Value < 0 || s.SameTop.Value > 1 || s.KLD.Err < 0 || math.IsNaN(s.PPLRatio.Value) {
			t.Fatalf("summary %+v", s)
		}
	})
}

func TestWindows(t *testing.T) {
	ids := make([]int, 37)
	for i := range ids {
		ids[i] = 100 + i
	}
	w, err := Windows(ids, WindowConfig{Window: 8, BOS: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != 4 {
		t.Fatalf("%d windows of 8 in 37 tokens, want 4", len(w))
	}
	for i, win := range w {
		if len(win) != 8 || win[0] != 1 || win[1] != 100+8*i+1 || win[7] != 100+8*i+7 {
			t.Errorf("window %d = %v", i, win)
		}
	}
	if ids[8] != 108 {
		t.Error("Windows changed its input")
	}
	if w, _ := Windows(ids, WindowConfig{Window: 8, Chunks: 2, BOS: NoBOS}); len(w) != 2 || w[0][0] != 100 || w[1][0] != 108 {
		t.Errorf("--chunks 2 without BOS: %v", w)
	}
	if _, err := Windows(ids, WindowConfig{Window: 8, BOS: -2}); err == nil {
		t.Error("BOS −2: no error")
	}
	if _, err := Windows(ids[:15], WindowConfig{Window: 8}); err == nil {
		t.Error("15 tokens in windows of 8: no error")
	}
	if first, end := Scored(512); first != 256 || end != 511 {
		t.Errorf("Scored(512) = %d, %d", first, end)
	}
}

func randomModel(t *testing.T, seed uint64) model.Model {
	t.Helper()
	w, err := llama.RandomWeights(model.Config{Dim: 32, Hidden: 32, Layers: 1, Heads: 2, KVHeads: 2, Vocab: 40, SeqLen: 32}, seed)
	if err != nil {
		t.Fatal(err)
	}
	m, err := llama.New(w, nil, "r")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func testIDs(n int) []int {
	rng := rand.New(rand.NewPCG(5, 6))
	ids := make([]int, n)
	for i := range ids {
		ids[i] = 2 + rng.IntN(38)
	}
	ids[0] = 1
	return ids
}

// TestDivergenceIdentical: a model against itself has KL 0 and agrees on
// every top token; against another model it does not.
func TestDivergenceIdentical(t *testing.T) {
	m := randomModel(t, 1)
	ids := testIDs(100)
	c := WindowConfig{Window: 16, BOS: 1}
	k, err := Divergence(context.Background(), m, m, ids, c, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := k.Summary()
	if s.Positions != 6*7 || s.KLD.Value != 0 || s.KLDQuantiles.Max != 0 || s.SameTop.Value != 1 || s.PPLRatio.Value != 1 || s.PDiffRMS.Value != 0 {
		t.Errorf("identical models: %+v", s)
	}
	// With the base stored in 16 bits: KL within the steps' rounding of 0
	// (each stored log-probability is off by up to half a step, ~1e-5 here).
	k, err = Divergence(context.Background(), m, m, ids, c, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := k.Summary(); math.Abs(s.KLD.Value) > 1e-5 || s.SameTop.Value != 1 {
		t.Errorf("identical models, llama.cpp numerics: KLD %g, same top %g", s.KLD.Value, s.SameTop.Value)
	}
	k, err = Divergence(context.Background(), m, randomModel(t, 2), ids, c, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := k.Summary(); !(s.KLD.Value > 0.01) || s.SameTop.Value == 1 {
		t.Errorf("different models: KLD %g, same top %g", s.KLD.Value, s.SameTop.Value)
	}
	if _, err := Divergence(context.Background(), m, m, ids, WindowConfig{Window: 64}, false, nil); err == nil {
		t.Error("a window longer than the context: no error")
	}
}

// TestBaseFileRoundTrip: a base file SaveBase writes, read back, gives
// DivergenceFile the same positions as Divergence with llama.cpp numerics
// (bit for bit), and the same tokens and windows.
func TestBaseFileRoundTrip(t *testing.T) {
	base, m := randomModel(t, 1), randomModel(t, 3)
	ids := testIDs(70)
	c := WindowConfig{Window: 16, BOS: 1}
	var buf bytes.Buffer
	r, err := SaveBase(context.Background(), base, ids, c, &buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Tokens != 4*7 {
		t.Errorf("saved %d positions", r.Tokens)
	}
	f, err := NewLogitsReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if f.Window != 16 || f.Vocab != 40 || f.Chunks != 4 || len(f.Tokens) != 64 || f.Tokens[16] != int32(ids[16]) {
		t.Fatalf("header: window %d vocab %d chunks %d, %d tokens", f.Window, f.Vocab, f.Chunks, len(f.Tokens))
	}
	got, err := DivergenceFile(context.Background(), f, m, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Divergence(context.Background(), base, m, ids, c, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if gs, ws := got.Summary(), want.Summary(); gs != ws {
		t.Errorf("from the file %+v\ndirect %+v", gs, ws)
	}
	if _, err := f.Next(); err == nil {
		t.Error("read past the last window")
	}
	// Truncated anywhere, the file is an error, never a panic.
	for _, n := range []int{0, 7, 19, 100, buf.Len() - 1} {
		f, err := NewLogitsReader(bytes.NewReader(buf.Bytes()[:n]))
		if err == nil {
			_, err = DivergenceFile(context.Background(), f, m, 1, nil)
		}
		if err == nil {
			t.Errorf("file cut at %d bytes: no error", n)
		}
	}
}

// TestPairedFile: a run paired with its own stored copy differs by exactly
// 0; paired with another model's run, the model that is the base wins.
func TestPairedFile(t *testing.T) {
	a, b := randomModel(t, 1), randomModel(t, 3)
	ids := testIDs(70)
	c := WindowConfig{Window: 16, BOS: 1}
	save := func(m model.Model) []byte {
		var buf bytes.Buffer
		if _, err := SaveBase(context.Background(), m, ids, c, &buf, nil); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	fa, fb := save(a), save(b)
	paired := func(base, other []byte, m model.Model) (Paired, error) {
		br, err := NewLogitsReader(bytes.NewReader(base))
		if err != nil {
			t.Fatal(err)
		}
		or, err := NewLogitsReader(bytes.NewReader(other))
		if err != nil {
			t.Fatal(err)
		}
		return PairedFile(context.Background(), br, or, m, 1, nil)
	}
	p, err := paired(fa, fb, b)
	if err != nil {
		t.Fatal(err)
	}
	if p.Positions != 28 || p.Diff.Value != 0 || p.TopOnly != 0 || p.OtherTopOnly != 0 || !(p.KLD > 0.01) || p.KLD != p.OtherKLD {
		t.Errorf("a run against its stored self: %+v", p)
	}
	p, err = paired(fa, fb, a)
	if err != nil {
		t.Fatal(err)
	}
	if !(p.Diff.Value < 0 && p.Diff.Err > 0 && p.Diff.Value+5*p.Diff.Err < 0) || p.TopOnly <= p.OtherTopOnly || math.Abs(p.KLD) > 1e-5 {
		t.Errorf("the base's own model against another: %+v", p)
	}
	// A file of the same text with one window fewer does not pair.
	var fewer bytes.Buffer
	tokens := make([]int32, 3*16)
	for i := range tokens {
		tokens[i] = int32(ids[i])
	}
	if err := WriteLogitsHeader(&fewer, 16, 40, 3, tokens); err != nil {
		t.Fatal(err)
	}
	if _, err := paired(fa, fewer.Bytes(), a); !errors.Is(err, ErrMismatch) {
		t.Errorf("files of different windows: %v", err)
	}
}
