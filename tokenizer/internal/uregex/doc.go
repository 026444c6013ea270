// Package uregex is the regular-expression engine of the tokenizers'
// pre-tokenizers: a small backtracking matcher for the Oniguruma patterns
// with which byte-level BPE tokenizers (GPT-2, Llama-3, Qwen, DeepSeek,
// tekken, GPT-4o, …) split text into words, with Oniguruma's semantics,
// since Hugging Face's tokenizers compile these patterns with Oniguruma
// (through Rust's onig crate) and Go's regexp has neither Oniguruma's
// lookahead nor its backtracking order.
//
// # Use
//
// Compile a pattern once; FindAll gives the successive non-overlapping
// matches of a text as byte offsets:
//
//	re, err := uregex.Compile(`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`)
//	matches, err := re.FindAll("Hello world", nil) // [[0 5] [5 11]]
//
// A Regexp is safe for concurrent use; FindAll allocates nothing but the
// growth of dst once warm.
//
// # Syntax
//
// The syntax is Oniguruma's default (ONIG_SYNTAX_ONIGURUMA) on UTF-8:
//
//   - alternation a|b; groups (…) (not captured: only the whole match is
//     reported), (?:…), atomic (?>…), lookahead (?=…) and (?!…);
//   - options (?i:…), (?m:…), (?-i:…) and isolated (?i), which applies to
//     the rest of the enclosing group, across '|' (a(?i)b|c is
//     a(?i:b|c)); m is Ruby's: '.' also matches '\n';
//   - quantifiers ? * + {n} {n,} {,m} {n,m}, lazy with a '?' after them,
//     possessive ?+ *+ ++; as in this syntax {n}? is (?:…{n})? and
//     {n,m}+ is (?:…{n,m})+, not lazy or possessive;
//   - anchors ^ and $ (line anchors that know only '\n'; ^ does not match
//     after a final '\n'), \A, \z, \Z, \b, \B;
//   - classes […] and [^…] with ranges, negation, escapes, \p{…} and
//     shorthands inside, nested classes [a[b]] and intersections [a&&b];
//     a leading ']' is a literal when another ']' follows;
//   - shorthands with Oniguruma's Unicode meanings: \s White_Space, \d
//     Decimal_Number, \w Alphabetic, Mark, Decimal_Number and
//     Connector_Punctuation (plus ² ³ ¹ ¼ ½ ¾, from Oniguruma's ISO-8859-1
//     table), \h hexadecimal digit, and \S \D \W \H; '.' is anything but
//     '\n';
//   - \p{…}, \P{…}, \p{^…}: the general categories (L, Lu, Ll, Lt, Lm,
//     Lo, LC, M, Mn, Mc, Me, N, Nd, Nl, No, P, Pc, Pd, Ps, Pe, Pi, Pf, Po,
//     S, Sm, Sc, Sk, So, Z, Zs, Zl, Zp, C, Cc, Cf, Cs, Co, Cn) by short or
//     long name (Letter, Uppercase_Letter, …), the scripts (Han, Latin, …),
//     Any, Assigned, ASCII, White_Space, Alphabetic and Word; names
//     compare as Oniguruma's do, ignoring case, spaces, '-' and '_';
//   - escapes \t \n \r \f \v \a \e, \xHH, \x{H…}, \uHHHH, \0oo, \o{…},
//     any escaped non-alphanumeric character, and literal UTF-8.
//
// Anything else is an error wrapping ErrUnsupported that names the
// construct (backreferences, lookbehind, named groups, \G, \K, \R, \X,
// POSIX brackets, absent operators, callouts, other options and
// properties, quantified assertions, stacked quantifiers beyond the two
// interval forms above); malformed patterns are errors wrapping ErrSyntax.
// uregex never matches a pattern differently from what it says.
//
// # Case-insensitive matching
//
// (?i) compares code points by Unicode simple case folding, the orbits of
// unicode.SimpleFold, so (?i:'s) also matches "'S" and "'ſ" as in
// Oniguruma. Oniguruma also applies the one-to-many foldings (ß matches
// "ss"); uregex refuses the patterns where that could matter — a
// case-insensitive literal with such a folding, a literal run containing
// one's folding ("ss", "st", "ff", …), or a class containing such a code
// point — and a \p{…} or shorthand that is not closed under case folding
// used outside brackets under (?i). A bracket class under (?i) is closed
// under folding before its own negation, as in Oniguruma.
//
// # Matches
//
// FindAll reports what Rust's onig find_iter reports, which is what
// Hugging Face's Split pre-tokenizer splits on: each search starts where
// the previous match ended and returns the leftmost match, and of the
// matches starting there the first in the pattern's order of preference
// (greedy and lazy quantifiers, alternatives left to right). Empty matches
// are reported (a pattern such as (?=(\d{3})+(?!\d)) splits only by them);
// after one the next search starts a character further on; and, as
// find_iter does, the first empty match found after a non-empty match is
// dropped (so \d* on "a1b" gives [0 0] [1 2] [3 3], not [2 2]). An
// unbounded loop whose body matched the empty string ends (Oniguruma's
// empty check); a counted repeat of a group that can match the empty
// string is expanded into copies without that check, which can only
// matter for a body that prefers the empty string to a longer match.
//
// # Invalid UTF-8
//
// The text may be any bytes. Each byte that is not part of a valid UTF-8
// sequence is one character, read as U+FFFD REPLACEMENT CHARACTER: it is a
// symbol (So), not a letter, number, mark or space. This is what llama.cpp
// does (unicode_cpts_from_utf8 turns each invalid byte into U+FFFD before
// splitting), and the character Oniguruma sees where a lossy decoding
// (Rust's String::from_utf8_lossy, Python's errors="replace") put one,
// though those put one U+FFFD for a whole invalid sequence. uregex keeps
// the original bytes, since the offsets index s. So [^\s\p{L}\p{N}] and
// \p{S} match an invalid byte, and a ' ?[^\s\p{L}\p{N}]+' piece gathers a
// run of them, as in llama.cpp; a byte-level BPE then encodes the bytes
// themselves.
//
// # Engines
//
// A pattern compiles to a program for a backtracking interpreter
// (compile.go, exec.go), which is the reference, and, when it has no
// unbounded repeat of a group, also to a fast matcher: a tree of closures
// in continuation-passing style (cps.go) that FindAll then uses. Both
// dispatch an alternation on its next code point to the branches that
// can start with it, run a repeat of a class as one loop, and make a
// greedy class repeat possessive where giving back a code point could
// never lead to a match (the class and what follows are disjoint, or what
// follows always matches: PCRE's auto-possessification). A class is a
// table for ASCII bytes and a mask over general categories with a short
// list of exceptions; the general category of a code point is two table
// lookups. TestFastMatchesInterpreter and FuzzCompile check that the two
// engines agree; TestReferenceSplits checks the results against
// tokenizers.js. Of the listed pre-tokenizer patterns only EXAONE-MoE's
// ((?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+), SuperBPE's and tiny_aya's digit
// lookaheads and llama.cpp's own lookahead rewrites (of tekken, GPT-4o
// and Granite) run on the interpreter, at about half the speed.
//
// # Backtracking bounds
//
// Like Oniguruma, uregex backtracks, so a pathological pattern such as
// (a*)*b or (a|a)*b takes exponential time. Each match attempt (one start
// position) may take DefaultStepLimit backtracking steps (10,000,000,
// Oniguruma's default retry limit in a match, beyond which Rust's onig
// panics); beyond that FindAll stops and returns the matches so far with
// ErrStepLimit. Regexp.WithStepLimit changes the bound.
//
// The pre-tokenizer patterns take a bounded number of steps per
// character. A greedy unbounded class repeat remembers, for the text at
// hand, where its run ends and from where what follows it failed, so a
// pattern such as \s+$ stays linear on a long run of spaces that does not
// end a line (plain backtracking, Oniguruma's included, is quadratic
// there). Two listed patterns remain quadratic in the length of a run of
// digits, as in Oniguruma, because their lookahead scans the rest of the
// run from every digit: SuperBPE's (?=(\d{3})+(?!\d)) and tiny_aya's
// \d{1,3}(?=(?:\d{3})*\b) (3,000 digits take a few tens of
// milliseconds).
//
// # Unicode version
//
// The categories and scripts are Go's unicode tables (unicode.Version,
// 15.0.0 in Go 1.26); Oniguruma and JavaScript engines may know a newer
// Unicode (Node 20 here knows 17.0) and classify characters assigned
// since then differently. The comparison with tokenizers.js therefore
// draws its random characters from long-established blocks.
package uregex
