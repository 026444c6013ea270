package sampling

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hlmproject/hlm/tensor"
)

func TestSoftmaxTable(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	ln2 := float32(math.Ln2)
	tests := []struct {
		name   string
		logits []float32
		temp   float64
		want   []float64
	}{
		{"powers of two", []float32{0, ln2, 2 * ln2}, 1, []float64{1.0 / 7, 2.0 / 7, 4.0 / 7}},
		{"temperature halves gaps", []float32{0, 2 * ln2}, 2, []float64{1.0 / 3, 2.0 / 3}},
		{"shift invariant", []float32{1024, 1024.5}, 1, []float64{1 / (1 + math.Exp(0.5)), 1 / (1 + math.Exp(-0.5))}},
		{"huge logits do not overflow", []float32{3e38, 3e38, -3e38}, 1, []float64{0.5, 0.5, 0}},
		{"greedy", []float32{0.1, 0.7, 0.3}, 0, []float64{0, 1, 0}},
		{"greedy ties: lowest id", []float32{0.5, 0.9, 0.9}, 0, []float64{0, 1, 0}},
		{"negative temperature acts as greedy", []float32{0.1, 0.7, 0.3}, -1, []float64{0, 1, 0}},
		{"infinite temperature: uniform over finite", []float32{1, 5, float32(math.Inf(-1)), 2}, math.Inf(1), []float64{1.0 / 3, 1.0 / 3, 0, 1.0 / 3}},
		{"NaN logit has no mass", []float32{0, nan, 0}, 1, []float64{0.5, 0, 0.5}},
		{"-Inf logit has no mass", []float32{0, float32(math.Inf(-1))}, 1, []float64{1, 0}},
		{"+Inf logits share the mass", []float32{inf, 3, inf}, 1, []float64{0.5, 0, 0.5}},
		{"all -Inf: uniform", []float32{float32(math.Inf(-1)), float32(math.Inf(-1))}, 1, []float64{0.5, 0.5}},
		{"single token", []float32{-7}, 0.5, []float64{1}},
		{"subnormal temperature: the limit T → 0+", []float32{0.1, 0.7, 0.3, 0.7}, 5e-324, []float64{0, 0.5, 0, 0.5}},
		{"tiny temperature", []float32{0.1, 0.7, 0.3}, 1e-300, []float64{0, 1, 0}},
		{"empty", nil, 1, []float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Softmax(nil, tt.logits, tt.temp)
			if len(got) != len(tt.want) {
				t.Fatalf("len = %d, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if math.Abs(got[i]-tt.want[i]) > 1e-7 {
					t.Errorf("p[%d] = %v, want %v (got %v)", i, got[i], tt.want[i], got)
				}
			}
		})
	}
}

// Against the textbook formula on moderate logits where it does not
// overflow, over random vocabularies up to 32,000 tokens.
func TestSoftmaxMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, v := range []int{1, 2, 17, 1000, 32000} {
		for _, temp := range []float64{0.3, 1, 2} {
			logits := make([]float32, v)
			for i := range logits {
				logits[i] = float32(rng.NormFloat64() * 3)
			}
			got := Softmax(nil, logits, temp)
			ref := make([]float64, v)
			s := 0.0
			for i, z := range logits {
				ref[i] = math.Exp(float64(z) / temp)
				s += ref[i]
			}
			maxRel, sum := 0.0, 0.0
			for i := range ref {
				ref[i] /= s
				sum += got[i]
				if rel := math.Abs(got[i]-ref[i]) / ref[i]; rel > maxRel {
					maxRel = rel
				}
			}
			if maxRel > 1e-12 || math.Abs(sum-1) > 1e-12 {
				t.Errorf("V=%d T=%v: max relative error %.3g, sum−1 = %.3g", v, temp, maxRel, sum-1)
			}
		}
	}
}

func TestSoftmaxReusesDst(t *testing.T) {
	buf := make([]float64, 10, 100)
	got := Softmax(buf, []float32{1, 2, 3}, 1)
	if &got[0] != &buf[0] || len(got) != 3 {
		t.Fatalf("dst with enough capacity was not reused")
	}
	small := make([]float64, 1)
	got = Softmax(small, []float32{1, 2, 3}, 1)
	if len(got) != 3 {
		t.Fatalf("len = %d", len(got))
	}
}

func TestArgmax(t *testing.T) {
	nan := float32(math.NaN())
	ninf := float32(math.Inf(-1))
	tests := []struct {
		logits []float32
		want   int
	}{
		{nil, -1},
		{[]float32{3}, 0},
		{[]float32{1, 3, 2}, 1},
		{[]float32{3, 1, 3}, 0},
		{[]float32{nan, 1, 2}, 2},
		{[]float32{1, nan, 2, nan}, 2},
		{[]float32{nan, nan}, 0},
		{[]float32{nan, ninf, ninf}, 0},
		{[]float32{ninf, -1e30}, 1},
	}
	for _, tt := range tests {
		if got := Argmax(tt.logits); got != tt.want {
			t.Errorf("Argmax(%v) = %d, want %d", tt.logits, got, tt.want)
		}
	}
}

// TestArgmaxThreads: from tensor.ShareMin logits on Argmax searches chunks on the
// threads; it returns one pass's index — the lowest among ties, NaN read as
// −Inf, 0 when nothing exceeds −Inf — whichever chunks the maxima, ties,
// NaN and −Inf fall in. Softmax's normalisation, shared out the same way,
// gives one thread's bits.
func TestArgmaxThreads(t *testing.T) {
	defer tensor.SetThreads(tensor.Threads())
	nan, inf := float32(math.NaN()), float32(math.Inf(-1))
	n := 151936
	cases := map[string]func(z []float32){
		"random":              func(z []float32) {},
		"tie across chunks":   func(z []float32) { z[tensor.ShareChunk*3+7], z[tensor.ShareChunk*20+1] = 50, 50 },
		"tie in a later one":  func(z []float32) { z[tensor.ShareChunk*9+5], z[tensor.ShareChunk*9+2] = 60, 60 },
		"max in the last":     func(z []float32) { z[n-1] = 70 },
		"first chunk all NaN": func(z []float32) { fill(z[:tensor.ShareChunk], nan) },
		"all NaN and −Inf": func(z []float32) {
			for i := range z {
				z[i] = nan
				if i%3 == 0 {
					z[i] = inf
				}
			}
		},
		"all −Inf but one NaN first": func(z []float32) { fill(z, inf); z[0] = nan },
		"one real among NaN":         func(z []float32) { fill(z, nan); z[tensor.ShareChunk*17+3] = -1e30 },
	}
	rng := rand.New(rand.NewPCG(31, 32))
	for name, edit := range cases {
		z := make([]float32, n)
		for i := range z {
			z[i] = float32(rng.NormFloat64() * 3)
		}
		edit(z)
		tensor.SetThreads(4)
		got := Argmax(z)
		if want := argmax(z); got != want {
			t.Errorf("%s: Argmax on 4 threads %d, one pass %d", name, got, want)
		}
		if name == "random" {
			many := Softmax(nil, z, 0.8)
			tensor.SetThreads(1)
			one := Softmax(nil, z, 0.8)
			for i := range one {
				if math.Float64bits(one[i]) != math.Float64bits(many[i]) {
					t.Fatalf("Softmax element %d: 4 threads %v, one %v", i, many[i], one[i])
				}
			}
		}
	}
}

func fill(z []float32, v float32) {
	for i := range z {
		z[i] = v
	}
}

// TestSoftmaxAllocs: below tensor.ShareMin, Softmax into a dst that holds
// the vocabulary allocates nothing (the model's attention and a sampler's
// step take it once per head and token).
func TestSoftmaxAllocs(t *testing.T) {
	z := benchLogits(3)
	dst := make([]float64, len(z))
	if n := testing.AllocsPerRun(50, func() { dst = Softmax(dst, z, 0.9) }); n != 0 {
		t.Errorf("Softmax of %d logits allocates %v objects, want 0", len(z), n)
	}
}
