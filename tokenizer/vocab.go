package tokenizer

import (
	"fmt"
	"strings"
)

// Vocab is a tokenizer's data in the form GGUF stores it (tokenizer.ggml.*),
// so that a GGUF reader or writer can exchange tokenizers with this package
// without either depending on the other.
type Vocab struct {
	// Model is tokenizer.ggml.model. Only "llama" is supported: with
	// Merges empty it is SentencePiece-style merging by Scores; with
	// Merges it is Hugging Face-style BPE merging by rank.
	Model  string
	Tokens []string  // pieces, "▁" for space (tokenizer.ggml.tokens)
	Scores []float32 // tokenizer.ggml.scores; required without Merges, else may be nil
	// Types is tokenizer.ggml.token_type (TypeNormal, ...); nil derives
	// them: "<0xHH>" pieces are bytes, BOS and EOS control, UNK unknown.
	Types  []int32
	Merges []string // tokenizer.ggml.merges, "left right" in rank order
	// BOS, EOS and UNK are ids, -1 when absent.
	BOS, EOS, UNK  int
	AddBOS, AddEOS bool
	// AddSpacePrefix is SentencePiece's add_dummy_prefix: non-empty text
	// gets a leading "▁" before encoding, and decoding removes it.
	AddSpacePrefix bool
}

// FromVocab builds a tokenizer from GGUF-style data.
//
// Without Merges, encoding is llama2.c's algorithm with "▁" for spaces:
// code points looked up as pieces (never unknown, control, unused or byte
// pieces), else spelled with the byte tokens (pieces of type TypeByte) or
// else UNK, then the pair whose concatenation has the highest score merged
// first. With Merges it is Hugging Face BPE (byte fallback through the
// TypeByte tokens, consecutive unknown characters fused into one UNK).
// Duplicate pieces, ids out of range, and merges naming pieces that do not
// exist are errors (ErrFormat); a model other than "llama" is
// ErrUnsupported.
func FromVocab(v Vocab) (*Tokenizer, error) {
	if v.Model != "llama" {
		return nil, fmt.Errorf("%w: vocab model %q, only \"llama\" is implemented", ErrUnsupported, v.Model)
	}
	n := len(v.Tokens)
	if n == 0 {
		return nil, fmt.Errorf("%w: vocab has no tokens", ErrFormat)
	}
	if v.Scores != nil && len(v.Scores) != n {
		return nil, fmt.Errorf("%w: vocab has %d scores for %d tokens", ErrFormat, len(v.Scores), n)
	}
	if v.Types != nil && len(v.Types) != n {
		return nil, fmt.Errorf("%w: vocab has %d token types for %d tokens", ErrFormat, len(v.Types), n)
	}
	alg := byScore
	if len(v.Merges) > 0 {
		alg = byRank
	} else if v.Scores == nil {
		return nil, fmt.Errorf("%w: vocab has neither scores nor merges", ErrFormat)
	}
	t := &Tokenizer{
		alg:       alg,
		src:       fromVocab,
		pieces:    append([]string(nil), v.Tokens...),
		space:     space,
		addPrefix: v.AddSpacePrefix,
		addBOS:    v.AddBOS,
		addEOS:    v.AddEOS,
		fuseUnk:   true,
	}
	if v.Scores != nil {
		t.scores = append([]float32(nil), v.Scores...)
	}
	var err error
	if t.bos, err = checkSpecial("BOS", v.BOS, n); err != nil {
		return nil, err
	}
	if t.eos, err = checkSpecial("EOS", v.EOS, n); err != nil {
		return nil, err
	}
	if t.unk, err = checkSpecial("UNK", v.UNK, n); err != nil {
		return nil, err
	}
	if v.Types != nil {
		t.types = append([]int32(nil), v.Types...)
		for id, ty := range t.types {
			if ty < TypeUndefined || ty > TypeByte {
				return nil, fmt.Errorf("%w: token %d has type %d, want 0..6", ErrFormat, id, ty)
			}
		}
	} else {
		t.types = make([]int32, n)
		for id, p := range t.pieces {
			t.types[id] = TypeNormal
			if _, ok := parseBytePiece(p); ok {
				t.types[id] = TypeByte
			}
		}
		for _, id := range []int{t.bos, t.eos} {
			if id >= 0 {
				t.types[id] = TypeControl
			}
		}
		if t.unk >= 0 {
			t.types[t.unk] = TypeUnknown
		}
	}
	for b := range t.byteToken {
		t.byteToken[b] = -1
	}
	for id, ty := range t.types {
		if ty != TypeByte {
			continue
		}
		b, ok := parseBytePiece(t.pieces[id])
		if !ok {
			return nil, fmt.Errorf("%w: byte token %d has piece %q, want <0xHH>", ErrFormat, id, t.pieces[id])
		}
		if t.byteToken[b] < 0 {
			t.byteToken[b] = int32(id)
		}
	}
	if t.addPrefix {
		if alg == byScore {
			t.strip = stripAfterBOS
		} else {
			t.strip, t.stripN = stripAtStart, 1
		}
	}
	if err := t.index(nil); err != nil {
		return nil, err
	}
	if alg == byRank {
		list := make([][2]string, len(v.Merges))
		for i, m := range v.Merges {
			pair, ok := t.splitMerge(m)
			if !ok {
				return nil, fmt.Errorf("%w: merge %d %q is not two pieces of the vocabulary joined by a space",
					ErrFormat, i, m)
			}
			list[i] = pair
		}
		if err := t.setMerges(list); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// splitMerge splits a GGUF merge "left right" into its two pieces. Pieces
// may themselves contain spaces, so every space is tried, from the first,
// until both halves are pieces.
func (t *Tokenizer) splitMerge(m string) ([2]string, bool) {
	for i := 1; i < len(m)-1; i++ {
		if m[i] != ' ' {
			continue
		}
		a, b := m[:i], m[i+1:]
		if _, ok := t.lookup[a]; !ok {
			continue
		}
		if _, ok := t.lookup[b]; ok {
			return [2]string{a, b}, true
		}
	}
	return [2]string{}, false
}

// setMerges installs the byRank merge rules, list[i] having rank i. As in
// tokenizers, a pair listed twice keeps its last rank.
func (t *Tokenizer) setMerges(list [][2]string) error {
	if len(list) > 1<<31-1 {
		return fmt.Errorf("%w: %d merges", ErrFormat, len(list))
	}
	t.merges = make(map[uint64]merge, len(list))
	for rank, m := range list {
		a, okA := t.lookup[m[0]]
		b, okB := t.lookup[m[1]]
		c, okC := t.lookup[m[0]+m[1]]
		var missing string
		switch {
		case !okA:
			missing = m[0]
		case !okB:
			missing = m[1]
		case !okC:
			missing = m[0] + m[1]
		default:
			t.merges[pairKey(a, b)] = merge{rank: int32(rank), id: c}
			continue
		}
		return fmt.Errorf("%w: merge %d (%q, %q): piece %q is not in the vocabulary",
			ErrFormat, rank, m[0], m[1], missing)
	}
	t.mergeList = list
	return nil
}

// Vocab returns the tokenizer's data in GGUF form; FromVocab of the result
// encodes every text to the same ids. Pieces of a llama2.c tokenizer are
// converted to SentencePiece form as llama.cpp expects: ' ' becomes "▁",
// and BOS "\n<s>\n" and EOS "\n</s>\n" become "<s>" and "</s>". A Hugging
// Face tokenizer gives Model "llama" with Merges, and Scores derived from
// the merge ranks (see rankScores): readers that merge by rank (this
// package) use the merges; readers that merge by score, as llama.cpp does
// for every "llama" vocabulary, use the scores and reproduce the ranks.
//
// Not representable in GGUF, and so lost: fuse_unk=false and
// ignore_merges=true of a tokenizer.json, and a Strip decoder removing
// other than one space. A tokenizer.json BPE with no merges at all gives a
// Vocab with neither merges nor scores, which FromVocab refuses.
func (t *Tokenizer) Vocab() Vocab {
	v := Vocab{
		Model:          "llama",
		Tokens:         append([]string(nil), t.pieces...),
		Types:          append([]int32(nil), t.types...),
		BOS:            t.bos,
		EOS:            t.eos,
		UNK:            t.unk,
		AddBOS:         t.addBOS,
		AddEOS:         t.addEOS,
		AddSpacePrefix: t.addPrefix,
	}
	if t.scores != nil {
		v.Scores = append([]float32(nil), t.scores...)
	}
	if t.src == fromLlama2C {
		seen := make(map[string]bool, len(v.Tokens))
		for i, p := range v.Tokens {
			v.Tokens[i] = strings.ReplaceAll(p, " ", space)
			seen[v.Tokens[i]] = true
		}
		rename := func(id int, from, to string) {
			if id >= 0 && v.Tokens[id] == from && !seen[to] {
				v.Tokens[id] = to
			}
		}
		rename(t.bos, "\n<s>\n", "<s>")
		rename(t.eos, "\n</s>\n", "</s>")
	}
	if t.alg == byRank {
		v.Merges = make([]string, len(t.mergeList))
		for i, m := range t.mergeList {
			v.Merges[i] = m[0] + " " + m[1]
		}
		if v.Scores == nil && len(v.Merges) > 0 {
			v.Scores = t.rankScores()
		}
	}
	return v
}

// rankScores gives every piece a SentencePiece score consistent with the
// merge ranks: −r for the piece that merge rank r produces (the lowest
// such rank), −len(merges) for the pieces no merge produces (characters,
// byte and special tokens, which score merging never forms from two
// symbols anyway). A score-merging encoder (SentencePiece, llama.cpp's
// "llama" tokenizer: merge the adjacent pair whose concatenation has the
// highest score) then takes the ranked merges in rank order. It can still
// differ from BPE where two adjacent symbols concatenate to a piece
// without being that piece's merge pair; TestRankScores checks that
// TinyStories texts never hit that case with the TinyStories-656K
// tokenizer, and llama.cpp's own tokenizer is checked in cmd/hlm.
// (llama.cpp's converter writes the placeholder −1000 for every piece of
// such a tokenizer, which makes its tokenizer merge left to right instead.)
func (t *Tokenizer) rankScores() []float32 {
	scores := make([]float32, len(t.pieces))
	for i := range scores {
		scores[i] = -float32(len(t.mergeList))
	}
	for _, m := range t.merges {
		scores[m.id] = max(scores[m.id], float32(-m.rank))
	}
	return scores
}
