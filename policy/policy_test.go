package policy

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// peakedRow is important at k = 3, γ = 1 (three weights above θ_imp);
// flatRow is not (attention collapse).
var (
	peakedRow = []float32{0.3, 0.02, 0.25, 0.02, 0.02, 0.28, 0.02, 0.02, 0.03, 0.02, 0.02}
	flatRow   = []float32{0.13, 0.12, 0.125, 0.125, 0.12, 0.13, 0.125, 0.125}
)

func TestUploaders(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ui := UncertaintyImportance{UTh: 0.5, K: 3, Gamma: 1}
	imp := ImportanceOnly{K: 3, Gamma: 1}
	tests := []struct {
		name string
		u    Uploader
		tok  Token
		want bool
	}{
		{"always", Always{}, Token{U: 0}, true},
		{"never", Never{}, Token{U: 1}, false},
		{"threshold above", Threshold{UTh: 0.431}, Token{U: 0.45}, true},
		{"threshold equal skips", Threshold{UTh: 0.45}, Token{U: 0.45}, false},
		{"threshold below", Threshold{UTh: 0.8}, Token{U: 0.75}, false},
		{"threshold NaN uploads", Threshold{UTh: 0.8}, Token{U: math.NaN()}, true},
		{"u+i both", ui, Token{U: 0.6, Attention: peakedRow}, true},
		{"u+i certain", ui, Token{U: 0.5, Attention: peakedRow}, false},
		{"u+i unimportant", ui, Token{U: 0.9, Attention: flatRow}, false},
		{"u+i no attention", ui, Token{U: 0.9}, false},
		{"importance only", imp, Token{U: 0, Attention: peakedRow}, true},
		{"importance only flat", imp, Token{U: 1, Attention: flatRow}, false},
		{"random p=1", Random{P: 1}, Token{}, true},
		{"random p=0", Random{P: 0}, Token{}, false},
	}
	for _, tt := range tests {
		if got := tt.u.Upload(tt.tok, rng); got != tt.want {
			t.Errorf("%s: Upload = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// Random uploads with probability P: n = 10^5 draws, seed (3, 4), z-test at
// α = 0.001 two-sided (|z| ≤ 3.29).
func TestRandomRate(t *testing.T) {
	const n = 100_000
	rng := rand.New(rand.NewPCG(3, 4))
	for _, p := range []float64{0.1, 0.5, 0.9} {
		k := 0
		for range n {
			if (Random{P: p}).Upload(Token{}, rng) {
				k++
			}
		}
		z := (float64(k)/n - p) / math.Sqrt(p*(1-p)/n)
		if math.Abs(z) > 3.29 {
			t.Errorf("p=%v: rate %v, z=%.2f", p, float64(k)/n, z)
		}
	}
}

// constSource is a rand.Source returning one value: rng.Float64() is then
// (v mod 2^53) / 2^53.
type constSource uint64

func (c constSource) Uint64() uint64 { return uint64(c) }

// TestRandomEdges: P(upload) = P exactly, so the uniform's edges decide:
// u = 0 must not upload at P = 0 (Rand-HLM with p = 0 sends nothing) and
// the largest u, 1 − 2^-53, must upload at P = 1.
func TestRandomEdges(t *testing.T) {
	zero, top := rand.New(constSource(0)), rand.New(constSource(^uint64(0)))
	if u := zero.Float64(); u != 0 {
		t.Fatalf("zero source gives %v", u)
	}
	if (Random{P: 0}).Upload(Token{}, zero) {
		t.Error("P = 0 uploaded at u = 0")
	}
	if !(Random{P: 1}).Upload(Token{}, top) {
		t.Error("P = 1 skipped at u = 1 − 2^-53")
	}
	if (Random{P: 0.5}).Upload(Token{}, rand.New(constSource(1<<52))) {
		t.Error("P = 0.5 uploaded at u = 0.5: want u < P")
	}
}

func TestValidate(t *testing.T) {
	type validator interface{ Validate() error }
	tests := []struct {
		v  validator
		ok bool
	}{
		{Random{P: 0.5}, true},
		{Random{P: 1.5}, false},
		{Random{P: math.NaN()}, false},
		{Threshold{UTh: 0.8}, true},
		{Threshold{UTh: 1.2}, true},
		{Threshold{UTh: math.Inf(1)}, false},
		{UncertaintyImportance{UTh: 0.4, K: 3, Gamma: 1.5}, true},
		{UncertaintyImportance{UTh: 0.4, K: 0, Gamma: 1.5}, false},
		{UncertaintyImportance{UTh: 0.4, K: 3, Gamma: -1}, false},
		{ImportanceOnly{K: 11, Gamma: 0.5}, true},
		{ImportanceOnly{K: 3, Gamma: math.NaN()}, false},
		{Fixed{L: 4}, true},
		{Fixed{L: 0}, false},
		{&Heuristic{Initial: 4, Min: 1, Max: 8}, true},
		{&Heuristic{Initial: 4, Min: 0, Max: 8}, false},
		{&Heuristic{Initial: 9, Min: 1, Max: 8}, false},
		{&Heuristic{Initial: 1, Min: 2, Max: 8}, false},
		{DefaultEnergy(), true},
		{Energy{Upload: -1}, false},
		{Energy{SLM: math.Inf(1)}, false},
	}
	for _, tt := range tests {
		err := tt.v.Validate()
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("%+v: Validate() = %v, want ok=%v", tt.v, err, tt.ok)
		}
	}
}

func TestHeuristic(t *testing.T) {
	h := &Heuristic{Initial: 4, Min: 1, Max: 6}
	steps := []struct {
		drafted, accepted int
		want              int // Next after Observe
	}{
		{4, 4, 5}, // all accepted: grow by one
		{5, 5, 6},
		{6, 6, 6}, // capped at Max
		{6, 2, 2}, // set to the accepted count
		{2, 0, 1}, // 0 accepted: floored at Min = 1, never 0
		{1, 0, 1},
		{1, 1, 2},
		{2, 5, 3}, // accepted > drafted is clamped: all accepted
		{-3, 0, 1},
	}
	if got := h.Next(); got != 4 {
		t.Fatalf("first Next = %d, want Initial 4", got)
	}
	for i, s := range steps {
		h.Observe(s.drafted, s.accepted)
		if got := h.Next(); got != s.want {
			t.Errorf("step %d Observe(%d, %d): Next = %d, want %d", i, s.drafted, s.accepted, got, s.want)
		}
	}
	h.Reset()
	if got := h.Next(); got != 4 {
		t.Errorf("after Reset: %d", got)
	}
	h2 := &Heuristic{Initial: 3, Min: 2, Max: 5}
	h2.Observe(3, 0)
	if got := h2.Next(); got != 2 {
		t.Errorf("Min = 2 floor: %d", got)
	}
	if (Fixed{L: 7}).Next() != 7 {
		t.Error("Fixed")
	}
}

// TestEnergy pins U+I's formula with hlm's reading on hand-computed
// numbers: 100 tokens drafted; HLM uploads all 100 at 0.512 Mbit and 29 are
// rejected; U uploads 42 (21.504 Mbit in all), 23 rejected.
func TestEnergy(t *testing.T) {
	e := DefaultEnergy()
	if got, want := e.Total(100*512_000, 29, 100), 100*0.512*300+29*350.0+100*100; math.Abs(got-want) > 1e-9 {
		t.Errorf("HLM: %v, want %v", got, want)
	}
	if got, want := e.Total(42*512_000, 23, 100), 42*0.512*300+23*350.0+100*100; math.Abs(got-want) > 1e-9 {
		t.Errorf("U: %v, want %v", got, want)
	}
	hlm, u := e.Total(100*512_000, 29, 100), e.Total(42*512_000, 23, 100)
	if got, want := Saving(u, hlm), 1-(6451.2+8050+10000)/(15360+10150+10000); math.Abs(got-want) > 1e-12 {
		t.Errorf("Saving = %v, want %v", got, want)
	}
	if Saving(1, 0) != 0 {
		t.Error("Saving with zero baseline")
	}
}

// TestEnergyReadingMatchesTable: with B = 0.512 Mbit (32,000 half-precision
// probabilities) and l_s = every drafted token, the energy model predicts
// the saving η of U+I Table I from the upload and reject rates the table
// prints (per drafted token, reject rate per upload) within 4.1 points on
// average and 16.2 at worst; the readings "B in bits" and "l_s = skipped
// tokens" do not (mean errors ≥ 8 points). The table rounds its rates and
// the methods' token counts are not published, hence the tolerance.
func TestEnergyReadingMatchesTable(t *testing.T) {
	// method, upload rate %, reject rate %, printed η %.
	table := []struct {
		name            string
		up, rej, etaPct float64
	}{
		{"U", 42.06, 54.58, 31.6}, {"I k=3", 70.08, 29.99, 17.8}, {"I k=5", 45.98, 27.88, 23.2},
		{"I k=7", 20.44, 28.95, 43.5}, {"I k=9", 9.04, 27.34, 61.7}, {"I k=11", 4.83, 28.75, 60.3},
		{"U+I 3/0.5", 13.40, 47.80, 57.5}, {"U+I 3/1", 28.63, 58.15, 43.6}, {"U+I 3/1.5", 38.61, 57.80, 40.7},
		{"U+I 5/0.5", 4.27, 45.28, 66.3}, {"U+I 5/1", 19.61, 52.73, 53.5}, {"U+I 5/1.5", 28.73, 56.26, 48.5},
		{"U+I 7/0.5", 0.96, 31.35, 69.2}, {"U+I 7/1", 14.06, 46.47, 59.6}, {"U+I 7/1.5", 25.78, 53.39, 44.3},
		{"U+I 9/0.5", 0.42, 41.38, 67.6}, {"U+I 9/1", 6.66, 49.80, 62.7}, {"U+I 9/1.5", 17.43, 52.15, 52.1},
		{"U+I 11/0.5", 0.08, 75.00, 66.0}, {"U+I 11/1", 3.27, 45.89, 68.9}, {"U+I 11/1.5", 13.32, 50.62, 55.8},
		{"SLM", 0, 0, 69.5},
	}
	const n = 1e6 // drafted tokens, large so that the counts are near exact
	const hlmReject = 29.11
	e := DefaultEnergy()
	// energy of a method under a reading: bitsPerUpload, and whether l_s
	// counts every drafted token or only the skipped ones.
	energy := func(up, rej, bits float64, allDrafted bool) float64 {
		uploads := n * up / 100
		ls := n
		if !allDrafted {
			ls = n - uploads
		}
		return e.Total(int64(uploads*bits), int(uploads*rej/100), int(ls))
	}
	meanErr := func(bits float64, allDrafted bool) (mean, worst float64) {
		hlm := energy(100, hlmReject, bits, allDrafted)
		for _, r := range table {
			d := math.Abs(100*Saving(energy(r.up, r.rej, bits, allDrafted), hlm) - r.etaPct)
			mean += d / float64(len(table))
			worst = max(worst, d)
		}
		return mean, worst
	}
	mean, worst := meanErr(512_000, true)
	t.Logf("B = 0.512 Mbit, l_s = drafted: mean |Δη| %.2f points, worst %.2f", mean, worst)
	if mean > 4.2 || worst > 16.5 {
		t.Errorf("hlm's reading: mean |Δη| %.2f, worst %.2f points (want ≤ 4.2, ≤ 16.5)", mean, worst)
	}
	for _, alt := range []struct {
		name       string
		bits       float64
		allDrafted bool
	}{{"B in bits (×10⁶)", 512_000e6, true}, {"l_s = skipped only", 512_000, false}, {"32-bit B", 1_024_000, true}} {
		m, _ := meanErr(alt.bits, alt.allDrafted)
		t.Logf("%s: mean |Δη| %.2f points", alt.name, m)
		if m < 6 {
			t.Errorf("%s fits Table I as well as hlm's reading (%.2f points): the test has no power", alt.name, m)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		spec string
		want Uploader
		err  error
	}{
		{"always", Always{}, nil},
		{"ALWAYS", Always{}, nil},
		{"never", Never{}, nil},
		{"hlm", nil, ErrUnknown}, // methods are hybrid's, not policies
		{"random", Random{P: 0.5}, nil},
		{"random:p=0.25", Random{P: 0.25}, nil},
		{"threshold", Threshold{UTh: 0.431}, nil},
		{"u-hlm", nil, ErrUnknown},
		{"threshold:u_th=0.6", Threshold{UTh: 0.6}, nil},
		{"u+i", UncertaintyImportance{UTh: 0.431, K: 3, Gamma: 1.5}, nil},
		{" ui : k = 5 , gamma = 1 ", UncertaintyImportance{UTh: 0.431, K: 5, Gamma: 1}, nil},
		{"importance:k=11,gamma=0.5", ImportanceOnly{K: 11, Gamma: 0.5}, nil},
		{"i", ImportanceOnly{K: 3, Gamma: 1.5}, nil},
		{"bogus", nil, ErrUnknown},
		{"random:q=0.5", nil, ErrUnknown},
		{"random:p=2", nil, ErrInvalid},
		{"random:p=", nil, ErrInvalid},
		{"random:p=abc", nil, ErrInvalid},
		{"random:p=0.1,p=0.2", nil, ErrInvalid},
		{"u+i:k=2.5", nil, ErrInvalid},
		{"u+i:k=0", nil, ErrInvalid},
		{"threshold:u_th=NaN", nil, ErrInvalid},
		{":p=1", nil, ErrInvalid},
		{"", nil, ErrInvalid},
	}
	for _, tt := range tests {
		got, err := Parse(tt.spec)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("Parse(%q) error %v, want %v", tt.spec, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %#v, %v; want %#v", tt.spec, got, err, tt.want)
		}
	}
	dl := []struct {
		spec string
		want string
		err  error
	}{
		{"fixed:l=4", "fixed:l=4", nil},
		{"fixed", "fixed:l=1", nil},
		{"heuristic", "heuristic:initial=4,min=1,max=16", nil},
		{"heuristic:initial=2,max=8", "heuristic:initial=2,min=1,max=8", nil},
		{"q-s", "", ErrUnknown},
		{"heuristic:min=0", "", ErrInvalid},
		{"fixed:l=1.5", "", ErrInvalid},
		{"fixed:L=3", "", ErrUnknown},
		{"ddqn", "", ErrUnknown},
	}
	for _, tt := range dl {
		got, err := ParseDraftLength(tt.spec)
		if tt.err != nil {
			if !errors.Is(err, tt.err) || got != nil {
				t.Errorf("ParseDraftLength(%q) = %v, %v; want error %v", tt.spec, got, err, tt.err)
			}
			continue
		}
		if err != nil || got.(interface{ String() string }).String() != tt.want {
			t.Errorf("ParseDraftLength(%q) = %v, %v; want %s", tt.spec, got, err, tt.want)
		}
	}
}

// FuzzParse: any string either fails to parse with a wrapped sentinel, or
// yields a valid policy whose String parses back to an equal policy.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"always", "never", "random:p=0.5", "threshold:u_th=0.8", "u+i:u_th=0.431,k=5,gamma=1",
		"importance:k=11,gamma=0.5", "threshold:u_th=1e308", "random:p=0x1p-3",
		"u+i:k=1e300", "i:gamma=Inf", ":", "a:b=c=d", "random:p=1,,",
		"fixed:l=4", "heuristic:initial=2,min=1,max=3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		u, err := Parse(spec)
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnknown) {
				t.Fatalf("Parse(%q): error %v wraps no sentinel", spec, err)
			}
		} else {
			if err := u.(interface{ Validate() error }).Validate(); err != nil {
				t.Fatalf("Parse(%q) returned an invalid policy: %v", spec, err)
			}
			s := u.(interface{ String() string }).String()
			back, err := Parse(s)
			if err != nil || back != u {
				t.Fatalf("Parse(%q) = %#v; String %q parses to %#v, %v", spec, u, s, back, err)
			}
		}
		d, err := ParseDraftLength(spec)
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnknown) {
				t.Fatalf("ParseDraftLength(%q): error %v wraps no sentinel", spec, err)
			}
			return
		}
		s := d.(interface{ String() string }).String()
		back, err := ParseDraftLength(s)
		if err != nil || back.(interface{ String() string }).String() != s {
			t.Fatalf("ParseDraftLength(%q): String %q does not round-trip: %v", spec, s, err)
		}
		if l := d.Next(); l < 1 {
			t.Fatalf("ParseDraftLength(%q).Next() = %d", spec, l)
		}
	})
}
