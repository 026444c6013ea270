package uregex

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkMatches checks what holds of any FindAll result: in order, not
// overlapping, within s, on character boundaries, and no empty match
// right after a non-empty one.
func checkMatches(t *testing.T, pattern, s string, ms [][2]int) {
	t.Helper()
	prev, prevEmpty := 0, true
	for i, m := range ms {
		if m[0] < prev || m[1] < m[0] || m[1] > len(s) {
			t.Fatalf("%q on %q: match %d %v out of order or bounds: %v", pattern, s, i, m, ms)
		}
		if !boundary(s, m[0]) || !boundary(s, m[1]) {
			t.Fatalf("%q on %q: match %v not on character boundaries", pattern, s, m)
		}
		if m[0] == m[1] && !prevEmpty && m[0] == prev && i > 0 {
			t.Fatalf("%q on %q: empty match %v right after a non-empty one: %v", pattern, s, m, ms)
		}
		prev, prevEmpty = m[1], m[0] == m[1]
	}
}

// boundary reports whether i starts a character of s as FindAll reads it
// (a valid UTF-8 sequence or one invalid byte) or is len(s).
func boundary(s string, i int) bool {
	for j := 0; j < len(s); {
		if j == i {
			return true
		}
		if j > i {
			return false
		}
		_, w := utf8.DecodeRuneInString(s[j:])
		j += w
	}
	return i == len(s)
}

// compareEngines runs re's fast matcher and the interpreter on s and
// fails if they disagree; a step-limit error on either side skips the
// comparison (they count steps differently).
func compareEngines(t *testing.T, re *Regexp, s string) {
	t.Helper()
	in, err := interpreter(re).FindAll(s, nil)
	if err != nil && !errors.Is(err, ErrStepLimit) {
		t.Fatalf("%q on %q: interpreter: %v", re, s, err)
	}
	if err == nil {
		checkMatches(t, re.String(), s, in)
	}
	if re.fast == nil {
		return
	}
	fast, ferr := re.FindAll(s, nil)
	if ferr != nil && !errors.Is(ferr, ErrStepLimit) {
		t.Fatalf("%q on %q: fast: %v", re, s, ferr)
	}
	if err == nil && ferr == nil && !slices.Equal(in, fast) {
		t.Fatalf("%q on %q: fast matcher %v %q, interpreter %v %q", re, s, fast, pieces(s, fast), in, pieces(s, in))
	}
}

// FuzzCompile feeds hostile patterns and texts to Compile and FindAll:
// neither may panic or run away (the step limit bounds backtracking), the
// matches must be well formed, and the fast matcher must agree with the
// interpreter.
func FuzzCompile(f *testing.F) {
	for _, p := range preTokenizerPatterns {
		f.Add(p.expr, "Hello, world! It's 2024.\n  x\t😀 中文 e\u0301\xff")
	}
	for _, seed := range [][2]string{
		{`(a*)*b`, "aaaaaaaaaaaaaaaaaaaaaaaaa"},
		{`(?:a|a){0,30}b`, "aaaaaaaaaaaaaaaaaaaaaaaaa"},
		{`(?i:'s|'t)|\s+(?!\S)`, "'S  'ſ x"},
		{`[\w&&[^\d]]+(?=\d)`, "ab12"},
		{`a{2}?|b{1,2}+|(?>c|cd)d|^$|\b\B\A\z\Z`, "aaa bb cdd\n"},
		{`(?=(\d{3})+(?!\d))`, "1234567"},
		{`(?:(?:a?)*)*`, "aaab"},
		{`[^]]+[]-]`, "ab]-"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		if len(pattern) > 200 || len(text) > 300 {
			return
		}
		re, err := Compile(pattern)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !(errors.Is(err, ErrSyntax) || errors.Is(err, ErrUnsupported)) {
				t.Fatalf("Compile(%q): error %v is not an *Error wrapping ErrSyntax or ErrUnsupported", pattern, err)
			}
			return
		}
		compareEngines(t, re.WithStepLimit(20_000), text)
	})
}

// FuzzPreTokenizerText runs every listed pattern on arbitrary bytes: the
// fast matcher must agree with the interpreter, and the matches and gaps
// must tile the text.
func FuzzPreTokenizerText(f *testing.F) {
	for _, s := range corpusTexts {
		f.Add(s)
	}
	f.Add("\xff\xfe a\xc3 \xe2\x82\xac\xe2\x82 1234 'S'ſ")
	res := make([]*Regexp, len(preTokenizerPatterns))
	for i, p := range preTokenizerPatterns {
		res[i] = MustCompile(p.expr)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 2000 {
			return
		}
		for _, re := range res {
			compareEngines(t, re, text)
			ms, err := re.FindAll(text, nil)
			if err != nil {
				t.Fatalf("%q: %v", re, err)
			}
			if got := strings.Join(isolated(text, ms), ""); got != text {
				t.Fatalf("%q on %q: the pieces do not tile the text", re, text)
			}
		}
	})
}

// TestFastMatchesInterpreter compares the fast matcher with the
// interpreter on patterns drawn from a grammar of every construct and on
// texts from a small alphabet, from a fixed seed (n patterns, 8 texts
// each).
func TestFastMatchesInterpreter(t *testing.T) {
	n := 4000
	if testing.Short() {
		n = 500
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	compared := 0
	for range n {
		pattern := randomPattern(rnd, 3)
		re, err := Compile(pattern)
		if err != nil {
			if errors.Is(err, ErrSyntax) {
				t.Fatalf("generated pattern %q: %v", pattern, err)
			}
			continue // e.g. a quantified assertion
		}
		if re.fast != nil {
			compared++
		}
		re = re.WithStepLimit(50_000)
		for range 8 {
			compareEngines(t, re, randomSmallText(rnd))
		}
	}
	t.Logf("%d patterns, %d with a fast matcher", n, compared)
}

var (
	patternAtoms = []string{
		"a", "b", "'", " ", `\n`, "1", "é", "中", `\x{FFFD}`,
		"[ab]", "[^a]", `\s`, `\S`, `\d`, `\w`, `\W`, `\p{L}`, `\p{N}`, `\p{Lu}`, `[^\s\p{L}\p{N}]`,
		".", "[a-c]", "(?i:a)", "(?i:'s)", `[\r\n]`, `[\p{L}\p{M}]`, `[a-z&&[^b]]`,
	}
	patternAnchors = []string{"^", "$", `\b`, `\B`, `\A`, `\z`, `\Z`}
	quantifiers    = []string{"?", "*", "+", "{2}", "{1,2}", "{0,3}", "{2,}", "{,2}"}
	textAlphabet   = []string{"a", "b", "c", "A", "'", "s", "S", " ", " ", "\n", "\t", "1", "2", "é", "e\u0301", "中", "😀", "!", ".", "\xff", "\u00a0"}
)

// randomPattern draws a pattern of the given depth from a grammar of the
// constructs uregex supports.
func randomPattern(rnd *rand.Rand, depth int) string {
	if depth == 0 || rnd.IntN(4) == 0 {
		if rnd.IntN(10) == 0 {
			return patternAnchors[rnd.IntN(len(patternAnchors))]
		}
		return patternAtoms[rnd.IntN(len(patternAtoms))]
	}
	switch rnd.IntN(9) {
	case 0, 1: // sequence
		var b strings.Builder
		for range 1 + rnd.IntN(3) {
			b.WriteString(randomPattern(rnd, depth-1))
		}
		return b.String()
	case 2: // alternation
		alts := make([]string, 2+rnd.IntN(3))
		for i := range alts {
			alts[i] = randomPattern(rnd, depth-1)
		}
		return "(?:" + strings.Join(alts, "|") + ")"
	case 3, 4: // quantified atom or group
		var atom string
		if rnd.IntN(2) == 0 {
			atom = patternAtoms[rnd.IntN(len(patternAtoms))]
		} else {
			atom = "(?:" + randomPattern(rnd, depth-1) + ")"
			if rnd.IntN(3) == 0 && depth > 1 {
				// Unbounded loops over groups have no fast matcher; keep
				// them rarer.
				return atom + []string{"?", "{1,3}", "{2}", "{0,2}"}[rnd.IntN(4)] + []string{"", "?", "+"}[rnd.IntN(3)]
			}
		}
		q := quantifiers[rnd.IntN(len(quantifiers))]
		suffix := ""
		switch rnd.IntN(4) {
		case 0:
			suffix = "?"
		case 1:
			if !strings.HasPrefix(q, "{") {
				suffix = "+"
			}
		}
		return atom + q + suffix
	case 5: // lookahead
		return []string{"(?=", "(?!"}[rnd.IntN(2)] + randomPattern(rnd, depth-1) + ")"
	case 6: // atomic
		return "(?>" + randomPattern(rnd, depth-1) + ")"
	case 7: // case-insensitive
		return "(?i:" + randomPattern(rnd, depth-1) + ")"
	}
	return "(" + randomPattern(rnd, depth-1) + ")"
}

func randomSmallText(rnd *rand.Rand) string {
	var b strings.Builder
	for range rnd.IntN(14) {
		b.WriteString(textAlphabet[rnd.IntN(len(textAlphabet))])
	}
	return b.String()
}
