package wordnet

import (
	"math"
	"math/rand/v2"
	"strings"
	"unicode"
)

// Paraphraser rewrites text by replacing some of its content words with
// WordNet synonyms (synonym replacement, as in EDA, Wei & Zou 2019): the
// prompt perturbation of U-HLM and CU-HLM.
//
// A word is a candidate when it is made of ASCII letters, at least three
// long, not a function word (Stopwords), not joined to an apostrophe, and
// has a synonym: a word of one of the first Senses synsets of its lemma in
// the part of speech where the lemma's senses are most often tagged
// (Entry.Tagsense; ties go to noun, verb, adjective, adverb in that order).
// The lemma is the word itself, or — for a plural noun — its singular, and
// the synonym is then pluralized; other inflected forms are left alone
// rather than replaced by a bare lemma. The replacement keeps the word's
// capitalization (capitalized or all capitals).
//
// Each paraphrase replaces max(1, round(Rate·c)) of the c candidates,
// chosen at random, each by a synonym drawn uniformly; text without
// candidates comes back unchanged. Everything else — spacing,
// punctuation — is kept.
type Paraphraser struct {
	DB     *DB
	Rate   float64 // share of candidate words replaced (default 0.3)
	Senses int     // synsets per lemma that synonyms come from (default 2)
}

// Stopwords are never replaced: articles, pronouns, auxiliaries,
// prepositions, conjunctions and a few very common words whose WordNet
// senses are rare ("be" → "live", "a" → vitamin A).
var Stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or but nor so yet for of to in on at by with from into onto
	upon about above below over under after before between through during without within along across
	i me my mine we us our ours you your yours he him his she her hers it its they them their theirs
	this that these those who whom whose which what when where why how there here
	is am are was were be been being have has had having do does did doing done will would shall
	should can could may might must not no yes all any some each every both either neither one
	very too also just than then only own same such more most other again once ever never
	said say says get got go went gone come came make made let like`) {
		Stopwords[w] = true
	}
}

// Synonyms are the replacements Paraphrase may use for word: lower case,
// in database order, the word itself excluded, pluralized when the word is
// a plural noun. Nil for a word that is not a candidate.
func (p Paraphraser) Synonyms(word string) []string {
	w := strings.ToLower(word)
	if len(w) < 3 || Stopwords[w] || !isLetters(w) {
		return nil
	}
	senses := p.Senses
	if senses <= 0 {
		senses = 2
	}
	lemma, plural := w, false
	best, bestPOS := -1, POS("")
	for _, pos := range All {
		if e, ok := p.DB.index[pos][w]; ok && e.Tagsense > best {
			best, bestPOS = e.Tagsense, pos
		}
	}
	if bestPOS == "" {
		// A plural noun: its singular is a noun lemma.
		for _, l := range p.DB.Morphy(w, Noun) {
			if l != w && strings.HasSuffix(w, "s") {
				lemma, plural, bestPOS = l, true, Noun
				break
			}
		}
		if bestPOS == "" {
			return nil
		}
	}
	e := p.DB.index[bestPOS][lemma]
	var out []string
	seen := map[string]bool{w: true, lemma: true}
	for i, off := range e.Offsets {
		if i >= senses {
			break
		}
		s, err := p.DB.Synset(bestPOS, off)
		if err != nil {
			continue
		}
		for _, syn := range s.Words {
			syn = strings.ToLower(syn)
			if plural {
				syn = pluralize(syn)
			}
			if !seen[syn] {
				seen[syn] = true
				out = append(out, syn)
			}
		}
	}
	return out
}

// Paraphrase returns one paraphrase of text, with its randomness from rng.
func (p Paraphraser) Paraphrase(text string, rng *rand.Rand) string {
	return p.Paraphrases(text, 1, rng)[0]
}

// Paraphrases returns m paraphrases of text, drawn one after another from
// rng (the same texts as m calls of Paraphrase); the words and their
// synonyms are looked up once.
func (p Paraphraser) Paraphrases(text string, m int, rng *rand.Rand) []string {
	rate := p.Rate
	if !(rate > 0) {
		rate = 0.3
	}
	type span struct {
		lo, hi int
		syns   []string
	}
	var cands []span
	b := []byte(text)
	for i := 0; i < len(b); {
		if !isLetter(b[i]) {
			i++
			continue
		}
		j := i
		for j < len(b) && isLetter(b[j]) {
			j++
		}
		apostrophe := (i > 0 && (b[i-1] == '\'' || b[i-1] >= 0x80)) || (j < len(b) && (b[j] == '\'' || b[j] >= 0x80))
		if !apostrophe {
			if syns := p.Synonyms(text[i:j]); len(syns) > 0 {
				cands = append(cands, span{i, j, syns})
			}
		}
		i = j
	}
	out := make([]string, m)
	if len(cands) == 0 {
		for i := range out {
			out[i] = text
		}
		return out
	}
	n := max(1, int(math.Round(rate*float64(len(cands)))))
	chosen := make([]bool, len(cands))
	for i := range out {
		clear(chosen)
		for _, k := range rng.Perm(len(cands))[:min(n, len(cands))] {
			chosen[k] = true
		}
		var sb strings.Builder
		last := 0
		for k, c := range cands {
			if !chosen[k] {
				continue
			}
			sb.WriteString(text[last:c.lo])
			sb.WriteString(matchCase(c.syns[rng.IntN(len(c.syns))], text[c.lo:c.hi]))
			last = c.hi
		}
		sb.WriteString(text[last:])
		out[i] = sb.String()
	}
	return out
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isLetter(s[i]) {
			return false
		}
	}
	return true
}

// pluralize makes the last word of a (possibly multi-word) noun plural by
// the regular English rules.
func pluralize(s string) string {
	switch {
	case strings.HasSuffix(s, "s"), strings.HasSuffix(s, "x"), strings.HasSuffix(s, "z"),
		strings.HasSuffix(s, "ch"), strings.HasSuffix(s, "sh"):
		return s + "es"
	case strings.HasSuffix(s, "y") && len(s) > 1 && !strings.ContainsRune("aeiou", rune(s[len(s)-2])):
		return s[:len(s)-1] + "ies"
	}
	return s + "s"
}

// matchCase gives repl the capitalization of orig: all capitals,
// capitalized, or as is.
func matchCase(repl, orig string) string {
	if len(orig) > 1 && strings.ToUpper(orig) == orig {
		return strings.ToUpper(repl)
	}
	if r := rune(orig[0]); unicode.IsUpper(r) {
		return strings.ToUpper(repl[:1]) + repl[1:]
	}
	return repl
}
