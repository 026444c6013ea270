package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", []string{}},
		{"  \n\t ", []string{}},
		{"The quick brown fox.", []string{"the", "quick", "brown", "fox"}},
		{"Hello, WORLD!! it's 2024-05-01", []string{"hello", "world", "it", "s", "2024", "05", "01"}},
		{"don't_stop-me", []string{"don", "t", "stop", "me"}},
		{"café naïve Ärger", []string{"caf", "na", "ve", "rger"}}, // non-ASCII letters are separators
		{"İx \u212aelvin", []string{"i", "x", "kelvin"}},          // Python: "İ".lower() = "i\u0307"
		{"a\xffb", []string{"a", "b"}},                            // invalid UTF-8
		{"x²³ ４２", []string{"x"}},
	} {
		if got := Tokenize(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Tokenize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestTokenizeLowerCaseToASCII checks the premise of tokenize's two special
// cases: besides 'A'–'Z', only U+0130 and U+212A lower-case to ASCII
// letters or digits (Python agrees: these are the only two code points whose
// str.lower() contains [a-z0-9]).
func TestTokenizeLowerCaseToASCII(t *testing.T) {
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		l := unicode.ToLower(r)
		if l < 0x80 && (unicode.IsLetter(l) || unicode.IsDigit(l)) && r != 0x130 && r != 0x212a {
			t.Errorf("U+%04X lower-cases to %q", r, l)
		}
	}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestRouge checks against rouge-score's own tests (rouge_scorer_test.py,
// whose expected values come from ROUGE-1.5.5; note its score(target,
// prediction) argument order), its README example and hand-computed values.
func TestRouge(t *testing.T) {
	const (
		// rouge/testdata/target.txt and prediction.txt, lines 1 and 2.
		target0     = "ZfbCUIUuePaiLVUlCaUXxkpu XPeWing tUHfPMuZ',-Xd Y BrUgVJing M-HV.-DgdDaY.rFDJCRing Ht-LM EKBDXkME,yz'RBr q'wtion wIojNbN wL,b .a-'XdQggyFl jB-RPP'iyOIcUxer tKM L"
		prediction0 = "rFDJCRtion Ht-LM EKtDXkME,yz'RBr q'wer wrojNbN wL,b .a-'XdQggyFl jB-RPP'iyOIcUxi"
		target1     = "KsJdPByEtAor fE-Qg Dpdbring cw-WeFyu vC MoBL Xdn g wkvcEiGvKtion BDFhrpMtion psing sbKao Q m qiing LMmer HqqLFXe,XPY,J XsurkMer ,ed nB'wH'bWVHjWFEing tQ.saefZwJtKrTlixYpMMsJing UCAPwNHeYVjDing c T BUySKtion gMPfJpwGw p'NvxAoping eu pBwMBKV'I DNxqelhu,PHPxDEq,mtion SN"
		prediction1 = "n cw-WeFyu vC MoBL Xdn g wkvcEiGvKtion BDFhrpMer pstion sbKao Q m qier LMmed HqqLFXe,XPY,J XsurkMeo ,ed nB'wH'bWVHjWFEer tQ.saefZwJtKrTlixYpMMNJtion UCAPwNHeYVjD"
	)
	type prf = [3]float64 // precision, recall, F1
	for _, tc := range []struct {
		name       string
		cand, ref  string
		r1, r2, rl prf
		tol        float64
		skipR2     bool
	}{
		{name: "rouge-score testRouge1", cand: "testing", ref: "testing one two",
			r1: prf{1, 1. / 3, 1. / 2}, r2: prf{0, 0, 0}, rl: prf{1, 1. / 3, 1. / 2}, tol: 1e-12},
		{name: "rouge-score testRouge2/testRougeLConsecutive", cand: "testing one", ref: "testing one two",
			r1: prf{1, 2. / 3, 4. / 5}, r2: prf{1, 1. / 2, 2. / 3}, rl: prf{1, 2. / 3, 4. / 5}, tol: 1e-12},
		{name: "rouge-score testRougeLNonConsecutive", cand: "testing two", ref: "testing one two",
			r1: prf{1, 2. / 3, 4. / 5}, r2: prf{0, 0, 0}, rl: prf{1, 2. / 3, 4. / 5}, tol: 1e-12},
		{name: "rouge-score testRougeEmpty", cand: "", ref: "testing one two", tol: 0},
		{name: "empty reference", cand: "testing", ref: "", tol: 0},
		{name: "both empty", cand: "", ref: "", tol: 0},
		{name: "only punctuation", cand: "?!", ref: "... ,", tol: 0},
		{name: "rouge-score vs ROUGE-1.5.5, line 1", cand: prediction0, ref: target0,
			r1: prf{0.68750, 0.40741, 0.51163}, r2: prf{0.53333, 0.30769, 0.39024}, rl: prf{0.68750, 0.40741, 0.51163}, tol: 5e-6},
		{name: "rouge-score vs ROUGE-1.5.5, line 2", cand: prediction1, ref: target1,
			r1: prf{0.65385, 0.40476, 0.50000}, r2: prf{0.48000, 0.29268, 0.36364}, rl: prf{0.65385, 0.40476, 0.50000}, tol: 5e-6},
		// README: score('The quick brown fox jumps over the lazy dog', 'The quick brown dog jumps on the log.')
		{name: "rouge-score README", cand: "The quick brown dog jumps on the log.", ref: "The quick brown fox jumps over the lazy dog",
			r1: prf{0.75, 6. / 9, 0.7058823529411765}, rl: prf{0.625, 5. / 9, 0.5882352941176471}, tol: 1e-12, skipR2: true},
		// By hand: unigrams clip "the" (3 in the candidate, 1 in the reference)
		// and "cat" (2, 1): 5 matches of 8 and 6. Bigrams of the candidate
		// "the cat|cat sat|sat on|on the|the mat|mat the|the cat" against
		// "the cat|cat sat|sat on|on a|a mat": 3 clipped matches of 7 and 5.
		// LCS "the cat sat on mat": 5.
		{name: "hand: clipping", cand: "The cat sat on the mat, the cat.", ref: "the cat sat on a mat",
			r1: prf{5. / 8, 5. / 6, 2 * (5. / 8) * (5. / 6) / (5./8 + 5./6)},
			r2: prf{3. / 7, 3. / 5, 2 * (3. / 7) * (3. / 5) / (3./7 + 3./5)},
			rl: prf{5. / 8, 5. / 6, 2 * (5. / 8) * (5. / 6) / (5./8 + 5./6)}, tol: 1e-12},
		{name: "hand: repeated candidate word", cand: "the the the", ref: "the cat",
			r1: prf{1. / 3, 1. / 2, 0.4}, r2: prf{0, 0, 0}, rl: prf{1. / 3, 1. / 2, 0.4}, tol: 1e-12},
		{name: "hand: case and punctuation only", cand: "Hello, WORLD!", ref: "hello world",
			r1: prf{1, 1, 1}, r2: prf{1, 1, 1}, rl: prf{1, 1, 1}, tol: 1e-12},
		{name: "hand: reversed", cand: "c b a", ref: "a b c",
			r1: prf{1, 1, 1}, r2: prf{0, 0, 0}, rl: prf{1. / 3, 1. / 3, 1. / 3}, tol: 1e-12},
	} {
		s := Rouge(tc.cand, tc.ref)
		for _, m := range []struct {
			name string
			got  Score
			want prf
			skip bool
		}{{"ROUGE-1", s.Rouge1, tc.r1, false}, {"ROUGE-2", s.Rouge2, tc.r2, tc.skipR2}, {"ROUGE-L", s.RougeL, tc.rl, false}} {
			if m.skip {
				continue
			}
			g := m.got
			if !near(g.Precision, m.want[0], tc.tol) || !near(g.Recall, m.want[1], tc.tol) || !near(g.F1, m.want[2], tc.tol) {
				t.Errorf("%s: %s = P %.6f R %.6f F %.6f, want P %.6f R %.6f F %.6f (tol %g)",
					tc.name, m.name, g.Precision, g.Recall, g.F1, m.want[0], m.want[1], m.want[2], tc.tol)
			}
		}
		// The single-metric functions agree with Rouge.
		if RougeN(tc.cand, tc.ref, 1) != s.Rouge1 || RougeN(tc.cand, tc.ref, 2) != s.Rouge2 || RougeL(tc.cand, tc.ref) != s.RougeL {
			t.Errorf("%s: RougeN/RougeL disagree with Rouge", tc.name)
		}
	}
}

func TestRougeNLarger(t *testing.T) {
	// 3-grams: "a b c", "b c d" against "a b c", "b c e": 1 of 2 each way.
	if got, want := RougeN("a b c d", "a b c e", 3), (Score{0.5, 0.5, 0.5}); got != want {
		t.Errorf("RougeN 3 = %+v, want %+v", got, want)
	}
	if got := RougeN("a b", "a b", 3); got != (Score{}) {
		t.Errorf("RougeN 3 of 2-token texts = %+v, want zero", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("RougeN(n = 0) did not panic")
		}
	}()
	RougeN("a", "a", 0)
}

// TestRougeLsum uses rouge-score's testRougeLsum and testSummaryLevelLcs
// cases.
func TestRougeLsum(t *testing.T) {
	for _, tc := range []struct {
		cand, ref string
		want      [3]float64
	}{
		{"w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5", "w1 w2 w3 w4 w5", [3]float64{0.4, 0.8, 0.4 * 0.8 * 2 / 1.2}},
		{"", "w1 w2 w3 w4 w5", [3]float64{}},
		{"w1", "", [3]float64{}},
		{"/", "w1 w2 w3 w4 w5", [3]float64{}},
		{"a b\n\nc d", "a b c d", [3]float64{1, 1, 1}},
		// An LCS tie: "b a" against "a b" has two LCSs, a (reference index
		// 0) and b (index 1). rouge-score's _backtrack_norec steps to i−1
		// on ties (j−1 only when t[i][j−1] > t[i−1][j]), so it takes a; the
		// union with the second sentence's b covers both reference tokens:
		// P = 2/3, R = 2/2.
		{"b a\nb", "a b", [3]float64{2.0 / 3, 1, 0.8}},
	} {
		g := RougeLsum(tc.cand, tc.ref)
		if !near(g.Precision, tc.want[0], 1e-12) || !near(g.Recall, tc.want[1], 1e-12) || !near(g.F1, tc.want[2], 1e-12) {
			t.Errorf("RougeLsum(%q, %q) = %+v, want %v", tc.cand, tc.ref, g, tc.want)
		}
	}
}

// TestLCS checks lcsIndices on rouge-score's testLcsTable and, on random
// sequences, that it reads back a common subsequence as long as lcsLen and
// as a brute-force search over subsets of the shorter sequence.
func TestLCS(t *testing.T) {
	if got := lcsIndices([]int32{1, 2, 3, 4, 5}, []int32{2, 5, 3, 4}); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("lcsIndices = %v, want [1 2 3]", got)
	}
	if got := lcsIndices([]int32{1, 2, 3, 4, 5}, []int32{8, 9}); len(got) != 0 {
		t.Errorf("lcsIndices = %v, want []", got)
	}
	// A tie between two LCSs is resolved as rouge-score does (i−1 first).
	if got := lcsIndices([]int32{1, 2}, []int32{2, 1}); !slices.Equal(got, []int{0}) {
		t.Errorf("lcsIndices([1 2], [2 1]) = %v, want [0]", got)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		a := randSeq(rng, rng.IntN(9), 4)
		b := randSeq(rng, rng.IntN(12), 4)
		n := lcsLen(a, b)
		idx := lcsIndices(a, b)
		if len(idx) != n || n != bruteLCS(a, b) {
			t.Fatalf("a=%v b=%v: lcsLen %d, lcsIndices %v, brute force %d", a, b, n, idx, bruteLCS(a, b))
		}
		sub := make([]int32, len(idx))
		for i, j := range idx {
			sub[i] = a[j]
		}
		if !isSubseq(sub, b) {
			t.Fatalf("a=%v b=%v: %v is not a subsequence of b", a, b, sub)
		}
	}
}

func randSeq(rng *rand.Rand, n, k int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(rng.IntN(k))
	}
	return s
}

// bruteLCS tries every subset of a (len(a) ≤ 16).
func bruteLCS(a, b []int32) int {
	best := 0
	for mask := 0; mask < 1<<len(a); mask++ {
		var sub []int32
		for i := range a {
			if mask&(1<<i) != 0 {
				sub = append(sub, a[i])
			}
		}
		if len(sub) > best && isSubseq(sub, b) {
			best = len(sub)
		}
	}
	return best
}

func isSubseq(s, b []int32) bool {
	i := 0
	for _, x := range b {
		if i < len(s) && s[i] == x {
			i++
		}
	}
	return i == len(s)
}

// benchText is n words drawn from a small vocabulary, so that a pair of
// them shares many n-grams.
func benchText(seed uint64, n int) string {
	words := strings.Fields("the a little girl boy dog cat ran saw big red ball park happy sad mom said played with to and in was")
	rng := rand.New(rand.NewPCG(seed, 0))
	w := make([]string, n)
	for i := range w {
		w[i] = words[rng.IntN(len(words))]
	}
	return strings.Join(w, " ") + "."
}

func BenchmarkRouge200(b *testing.B) {
	c, r := benchText(1, 200), benchText(2, 200)
	b.ReportAllocs()
	for b.Loop() {
		Rouge(c, r)
	}
}

func BenchmarkRougeL200(b *testing.B) {
	c, r := benchText(1, 200), benchText(2, 200)
	for b.Loop() {
		RougeL(c, r)
	}
}
