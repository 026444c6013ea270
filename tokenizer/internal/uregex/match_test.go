package uregex

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// interpreter is a copy of re that runs on the interpreter only.
func interpreter(re *Regexp) *Regexp {
	c := re.WithStepLimit(re.limit)
	c.fast = nil
	return c
}

// engines are the ways re can run: its own (the fast matcher where it has
// one) and the interpreter.
func engines(re *Regexp) map[string]*Regexp {
	es := map[string]*Regexp{"interpreter": interpreter(re)}
	if re.fast != nil {
		es["fast"] = re
	}
	return es
}

// format writes matches as "start:text" items, which tests compare with
// hand-checked expectations.
func format(s string, ms [][2]int) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%d:%s", m[0], s[m[0]:m[1]]))
	}
	return out
}

type matchCase struct {
	pattern, text string
	want          []string // "start:matched text", in order
}

func runMatchCases(t *testing.T, cases []matchCase) {
	t.Helper()
	for _, tc := range cases {
		re, err := Compile(tc.pattern)
		if err != nil {
			t.Errorf("Compile(%q): %v", tc.pattern, err)
			continue
		}
		for name, e := range engines(re) {
			ms, err := e.FindAll(tc.text, nil)
			if err != nil {
				t.Errorf("%s: %q on %q: %v", name, tc.pattern, tc.text, err)
				continue
			}
			if got := format(tc.text, ms); !slices.Equal(got, tc.want) {
				t.Errorf("%s: %q on %q:\n got %q\nwant %q", name, tc.pattern, tc.text, got, tc.want)
			}
		}
	}
}

func TestConstructs(t *testing.T) {
	runMatchCases(t, []matchCase{
		// Literals, alternation (leftmost, then first alternative), groups.
		{`abc`, "xabcabc", []string{"1:abc", "4:abc"}},
		{`a|ab`, "ab", []string{"0:a"}},
		{`ab|a`, "ab", []string{"0:ab"}},
		{`(?:ab)+`, "ababa", []string{"0:abab"}},
		{`(a)(b)`, "ab", []string{"0:ab"}},
		{`x(?:a|b|c|d|e|f|g)y`, "xgy xhy", []string{"0:xgy"}},
		// '.' is anything but '\n', unless (?m).
		{`a.c`, "abc a\nc a€c", []string{"0:abc", "8:a€c"}},
		{`(?m:a.c)`, "a\nc", []string{"0:a\nc"}},
		// Greedy, lazy and possessive quantifiers.
		{`ab?`, "a ab abb", []string{"0:a", "2:ab", "5:ab"}},
		{`ab??`, "ab", []string{"0:a"}},
		{`a*?b`, "aaab", []string{"0:aaab"}},
		{`a+?`, "aaa", []string{"0:a", "1:a", "2:a"}},
		{`a{2}`, "aaaaa", []string{"0:aa", "2:aa"}},
		{`a{2,}`, "aaaaa", []string{"0:aaaaa"}},
		{`a{,2}`, "aaa", []string{"0:aa", "2:a"}},
		{`a{1,2}?`, "aaa", []string{"0:a", "1:a", "2:a"}},
		{`a{2}?`, "aaa", []string{"0:aa", "3:"}},  // (?:a{2})? in this syntax
		{`a{1,2}+`, "aaaaa", []string{"0:aaaaa"}}, // (?:a{1,2})+
		{`a{`, "a{", []string{"0:a{"}},
		{`a{,}`, "a{,}", []string{"0:a{,}"}},
		{`a*+a`, "aaa", []string{}},
		{`a?+a`, "a aa", []string{"2:aa"}},
		{`a++b`, "aab", []string{"0:aab"}},
		{`(?:ab)*+c`, "ababc", []string{"0:ababc"}},
		{`(?:a|ab)++c`, "abc", []string{}},
		{`\d{1,3}`, "1234567", []string{"0:123", "3:456", "6:7"}},
		{`(?:ab|a){2}c`, "aabc", []string{"0:aabc"}},
		{`(?:a|b){1,3}?c`, "abbc", []string{"0:abbc"}},
		// Atomic groups and lookahead.
		{`(?>a*)a`, "aaa", []string{}},
		{`(?>ab|a)c`, "ac abc", []string{"0:ac", "3:abc"}},
		{`(?>a|ab)c`, "abc", []string{}},
		{`(?:a|ab)c`, "abc", []string{"0:abc"}},
		{`a(?=b)`, "ab ac", []string{"0:a"}},
		{`a(?!b)`, "ab ac", []string{"3:a"}},
		{`a(?=bc|b)`, "abd", []string{"0:a"}},
		{`(?=(\d{3})+(?!\d))`, "1234567", []string{"1:", "4:"}},
		{`\s+(?!\S)`, "a   b", []string{"1:  "}},
		{`\s+(?!\S)|\s+`, "a   b  ", []string{"1:  ", "3: ", "5:  "}},
		// Anchors: ^ and $ know only '\n'; ^ not after a final '\n'.
		{`^a`, "a\na\n", []string{"0:a", "2:a"}},
		{`a$`, "a\na\r\na", []string{"0:a", "5:a"}},
		{`^`, "a\n", []string{"0:"}},
		{`$`, "a\nb", []string{"1:", "3:"}},
		{`\A`, "ab", []string{"0:"}},
		{`\z`, "ab", []string{"2:"}},
		{`\Z`, "ab\n", []string{"2:", "3:"}},
		{`\b`, "ab cd", []string{"0:", "2:", "3:", "5:"}},
		{`\B`, "abc", []string{"1:", "2:"}},
		{`\s+$`, "a  \nb  ", []string{"1:  ", "5:  "}},
		// Classes.
		{`[a-c]+`, "abcd", []string{"0:abc"}},
		{`[^a-c]+`, "abcd", []string{"3:d"}},
		{`[]a]+`, "a]b", []string{"0:a]"}},
		{`[^]a]+`, "a]b", []string{"2:b"}},
		{`[a-]+`, "a-b", []string{"0:a-"}},
		{`[-a]+`, "a-b", []string{"0:a-"}},
		{`[a-c-e]+`, "b-ed", []string{"0:b-e"}},
		{`[!--]+`, "!,-.", []string{"0:!,-"}},
		{`[a\-z]+`, "a-zb", []string{"0:a-z"}},
		{`[\w&&[^\d]]+`, "ab12c", []string{"0:ab", "4:c"}},
		{`[a-z&&[^aeiou]]+`, "hello", []string{"0:h", "2:ll"}},
		{`[a[0-9]]+`, "a1b", []string{"0:a1"}},
		{`[^\s\p{L}\p{N}]+`, "a!?b", []string{"1:!?"}},
		{`[\x{4E00}-\x{9FA5}]+`, "中文a", []string{"0:中文"}},
		{`[一-龥]+`, "中文a字", []string{"0:中文", "7:字"}},
		{`[\r\n]+`, "a\r\nb", []string{"1:\r\n"}},
		{`[\t ]+`, "a \tb", []string{"1: \t"}},
		{`[\\\]]+`, `a\]b`, []string{`1:\]`}},
		{"[^(\\s|.,!?…。，、।۔،)]+", "ab|cd", []string{"0:ab", "3:cd"}},
		// Shorthands, with Oniguruma's Unicode meanings.
		{`\d+`, "a٣4", []string{"1:٣4"}},
		{`\w+`, "ab_1²é-x", []string{"0:ab_1²é", "9:x"}},
		{`\W`, "a-b", []string{"1:-"}},
		{`\h+`, "0fG", []string{"0:0f"}},
		{`\H`, "0fG", []string{"2:G"}},
		{`\s+`, "a\u00a0\u3000\u0085b\u200bc", []string{"1:\u00a0\u3000\u0085"}},
		{`\S+`, "a\u200bb c", []string{"0:a\u200bb", "6:c"}},
		{`\D`, "1a", []string{"1:a"}},
		// Escapes.
		{`\x41\x{1F600}\u0042`, "A😀B", []string{"0:A😀B"}},
		{`\t\n\r\f\v\a\e`, "\t\n\r\f\v\a\x1b", []string{"0:\t\n\r\f\v\a\x1b"}},
		{`\.\*\+\?\(\)\[\]\{\}\|\^\$\/\-`, ".*+?()[]{}|^$/-", []string{"0:.*+?()[]{}|^$/-"}},
		{`\0`, "a\x00", []string{"1:\x00"}},
		{`\o{101}\x42`, "AB", []string{"0:AB"}},
		// Properties.
		{`\p{Lu}+`, "abCDe", []string{"2:CD"}},
		{`\p{Letter}+`, "ab1c", []string{"0:ab", "3:c"}},
		{`\p{Uppercase_Letter}`, "aB", []string{"1:B"}},
		{`\p{^L}+`, "ab12c", []string{"2:12"}},
		{`\P{L}+`, "ab12c", []string{"2:12"}},
		{`\p{Han}+`, "中a文", []string{"0:中", "4:文"}},
		{`\p{Hiragana}+`, "ひらカ", []string{"0:ひら"}},
		{`\p{N}+`, "Ⅻ½²٣", []string{"0:Ⅻ½²٣"}},
		{`\p{M}+`, "e\u0301\u0302", []string{"1:\u0301\u0302"}},
		{`\p{Zs}`, "a\u3000", []string{"1:\u3000"}},
		{`\p{Cf}`, "a\u200d", []string{"1:\u200d"}},
		{`\p{Any}`, "a", []string{"0:a"}},
		{`\p{l u}`, "aB", []string{"1:B"}}, // Oniguruma ignores spaces, '-', '_' and case
		{`[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+`, "Ab中ǅ", []string{"0:A", "5:ǅ"}},
		// Case-insensitive matching by simple case folding.
		{`(?i)abc`, "ABC aBc", []string{"0:ABC", "4:aBc"}},
		{`(?i:'s)`, "'S 'ſ 's", []string{"0:'S", "3:'ſ", "7:'s"}},
		{`(?i)k`, "K k K", []string{"0:K", "2:k", "4:K"}},
		{`(?i:[a-c]+)`, "AbC", []string{"0:AbC"}},
		{`(?i)[^a]`, "Ab", []string{"1:b"}},
		{`a(?i)b|c`, "aB c ac", []string{"0:aB", "5:ac"}},
		{`(?i)a(?-i)b`, "Ab AB", []string{"0:Ab"}},
		{`(?i:[sdmt]|ll)`, "SLLx", []string{"0:S", "1:LL"}},
		{`(?i)[A-Z]+`, "aB", []string{"0:aB"}}, // a bracket class is folded
		// Empty matches as onig's find_iter reports them.
		{`\d*`, "a1b2", []string{"0:", "1:1", "3:2"}},
		{`\d*`, "a1bbb2", []string{"0:", "1:1", "3:", "4:", "5:2"}},
		{`x*`, "", []string{"0:"}},
		{`(?:a*)*b`, "aab", []string{"0:aab"}},
		{`(?:a?)+`, "aa", []string{"0:aa"}},
		{`(?:a|)*`, "ab", []string{"0:a", "2:"}},
		// Invalid UTF-8: each invalid byte is one character, U+FFFD.
		{`.`, "\xe4\xb8", []string{"0:\xe4", "1:\xb8"}},
		{`\p{S}+`, "a\xff\xfeb", []string{"1:\xff\xfe"}},
		{`\x{FFFD}`, "\xff", []string{"0:\xff"}},
		{`[^\x{FFFD}]`, "\xff", []string{}},
		{`[^\s\p{L}\p{N}]+`, "a\xc3(\xe2\x82", []string{"1:\xc3(\xe2\x82"}},
		{`\p{L}+`, "é\xc3\xa9\xa9", []string{"0:éé"}},
		{`\s+(?!\S)`, "  \xff", []string{"0: "}},
		{`\b`, "a\xff", []string{"0:", "1:"}},
	})
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		kind    error
		detail  string
	}{
		{`(?<=a)b`, ErrUnsupported, "lookbehind"},
		{`(?<!a)b`, ErrUnsupported, "lookbehind"},
		{`(?<n>a)`, ErrUnsupported, "named group"},
		{`(?'n'a)`, ErrUnsupported, "named group"},
		{`(a)\1`, ErrUnsupported, "backreference"},
		{`\o{101}\101`, ErrUnsupported, "backreference"},
		{`\k<a>`, ErrUnsupported, "backreference"},
		{`\g<1>`, ErrUnsupported, "subexpression call"},
		{`\Ga`, ErrUnsupported, `\G`},
		{`a\Kb`, ErrUnsupported, `\K`},
		{`\R`, ErrUnsupported, `\R`},
		{`\X`, ErrUnsupported, `\X`},
		{`[[:alpha:]]`, ErrUnsupported, "POSIX bracket"},
		{`(?x)a`, ErrUnsupported, "option"},
		{`(?#c)a`, ErrUnsupported, "comment"},
		{`(?~a)`, ErrUnsupported, "absent"},
		{`(?(1)a|b)`, ErrUnsupported, "conditional"},
		{`\p{Foo}`, ErrUnsupported, "property"},
		{`\p{Alpha}`, ErrUnsupported, "property"},
		{`a**`, ErrUnsupported, "nested quantifier"},
		{`a+?+`, ErrUnsupported, "nested quantifier"},
		{`^*`, ErrUnsupported, "zero-width"},
		{`(?=a)*`, ErrUnsupported, "zero-width"},
		{`\q`, ErrUnsupported, "escape"},
		{`[\A]`, ErrUnsupported, "anchor"},
		{`(?i)ß`, ErrUnsupported, "multi-character case folding"},
		{`(?i)ss`, ErrUnsupported, "U+00DF"},
		{`(?i:xST)`, ErrUnsupported, "U+FB05"},
		{`(?i:[ß])`, ErrUnsupported, "multi-character case folding"},
		{`(?i)\p{Lu}`, ErrUnsupported, "case folding"},
		{`(?i)\p{L}`, ErrUnsupported, "case folding"}, // U+0345 (Mn) folds to ι
		{`(?i:(?x)a)`, ErrUnsupported, "option"},
		{`(`, ErrSyntax, "unmatched parenthesis"},
		{`)`, ErrSyntax, "unmatched close parenthesis"},
		{`a)`, ErrSyntax, "unmatched close parenthesis"},
		{`[a`, ErrSyntax, "premature end of char-class"},
		{`[]`, ErrSyntax, "empty char-class"},
		{`a{2,1}`, ErrSyntax, "upper bound"},
		{`a{100001}`, ErrSyntax, "too big"},
		{`*a`, ErrSyntax, "target of repeat"},
		{`a|*`, ErrSyntax, "target of repeat"},
		{`{2}`, ErrSyntax, "target of repeat"},
		{`[z-a]`, ErrSyntax, "empty range"},
		{`[\d-z]`, ErrSyntax, "range"},
		{`[a-\d]`, ErrSyntax, "range"},
		{`\x{110000}`, ErrSyntax, "code point"},
		{`\u12`, ErrSyntax, `\u`},
		{`\`, ErrSyntax, "escape"},
		{`\p{L`, ErrSyntax, "property name"},
		{"a\xff", ErrSyntax, "UTF-8"},
	} {
		_, err := Compile(tc.pattern)
		if err == nil {
			t.Errorf("Compile(%q) succeeded; want an error wrapping %v", tc.pattern, tc.kind)
			continue
		}
		var e *Error
		if !errors.Is(err, tc.kind) || !errors.As(err, &e) || !strings.Contains(err.Error(), tc.detail) {
			t.Errorf("Compile(%q) = %v; want an *Error wrapping %v that mentions %q", tc.pattern, err, tc.kind, tc.detail)
		}
	}
}

// TestStepLimit checks that catastrophic backtracking ends with
// ErrStepLimit on both engines, and that WithStepLimit sets the bound.
func TestStepLimit(t *testing.T) {
	text := strings.Repeat("a", 40)
	for _, pattern := range []string{`(a*)*b`, `(a|a)*b`, `(?:a|a){0,40}b`, `(?:a?){40}a{40}b`} {
		re := MustCompile(pattern).WithStepLimit(200_000)
		for name, e := range engines(re) {
			ms, err := e.FindAll(text, nil)
			if !errors.Is(err, ErrStepLimit) {
				t.Errorf("%s: %q: FindAll = %v, %v; want ErrStepLimit", name, pattern, ms, err)
			}
		}
	}
	// A bound that the work fits in.
	re := MustCompile(`(a|b)*c`).WithStepLimit(1000)
	for name, e := range engines(re) {
		if ms, err := e.FindAll("ababc", nil); err != nil || len(ms) != 1 {
			t.Errorf("%s: FindAll = %v, %v", name, ms, err)
		}
	}
}

// TestLongInputs runs the pre-tokenizer patterns on long runs that make a
// careless matcher quadratic or deep; each must finish well within the
// step limit.
func TestLongInputs(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	texts := map[string]string{
		"spaces":    strings.Repeat(" ", n) + "x",
		"newlines":  strings.Repeat("\n", n) + "x",
		"mixed ws":  strings.Repeat(" \t\n", n/3) + "x",
		"letters":   strings.Repeat("a", n),
		"digits":    strings.Repeat("7", n),
		"punct":     strings.Repeat("!", n) + "\n",
		"marks":     "e" + strings.Repeat("\u0301", n/2),
		"invalid":   strings.Repeat("\xff", n),
		"apostroph": strings.Repeat("'", n),
	}
	for _, p := range preTokenizerPatterns {
		re := MustCompile(p.expr)
		for name, text := range texts {
			if (p.name == "superbpe-2" || p.name == "tiny_aya-1") && name == "digits" {
				// A lookahead that scans the rest of a run of digits at
				// each digit is quadratic in the run, in Oniguruma too
				// (TestLookaheadRuns measures it).
				continue
			}
			t0 := time.Now()
			ms, err := re.FindAll(text, nil)
			if err != nil {
				t.Errorf("%s on %s: %v", p.name, name, err)
			}
			if d := time.Since(t0); d > 200*time.Millisecond {
				t.Logf("%s on %s: %v", p.name, name, d)
			}
			covered := 0
			for _, m := range ms {
				covered += m[1] - m[0]
			}
			if covered > len(text) {
				t.Errorf("%s on %s: overlapping matches", p.name, name)
			}
		}
	}
}

// TestLookaheadRuns pins the cost of the two patterns whose lookahead
// scans the rest of a run of digits from every digit: quadratic in the
// run, as in Oniguruma, and so still quick for runs of a few thousand.
func TestLookaheadRuns(t *testing.T) {
	digits := strings.Repeat("7", 3000)
	for _, name := range []string{"superbpe-2", "tiny_aya-1"} {
		re := MustCompile(patternByName(name))
		t0 := time.Now()
		ms, err := re.FindAll(digits, nil)
		if err != nil || len(ms) != 1000 {
			t.Errorf("%s: %d matches, %v; want 1000", name, len(ms), err)
		}
		t.Logf("%s on %d digits: %v", name, len(digits), time.Since(t0))
	}
}

// TestConcurrent runs one Regexp from several goroutines (go test -race
// checks that they share nothing mutable).
func TestConcurrent(t *testing.T) {
	for _, name := range []string{"llama3", "exaone_moe", "deepseek_llm-4"} {
		re := MustCompile(patternByName(name))
		text := strings.Join(corpusTexts, "\n")
		want, err := re.FindAll(text, nil)
		if err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 4)
		for range 4 {
			go func() {
				for range 20 {
					got, err := re.FindAll(text, nil)
					if err == nil && !slices.Equal(got, want) {
						err = fmt.Errorf("%s: concurrent FindAll differs", name)
					}
					if err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			}()
		}
		for range 4 {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
	}
}
