package tokenizer

import (
	"fmt"
	"strings"
)

// Vocab is a tokenizer's data in the form GGUF stores it (tokenizer.ggml.*),
// so that a GGUF reader or writer can exchange tokenizers with this package
// without either depending on the other.
type Vocab struct {
	// Model is tokenizer.ggml.model:
	//   - "llama": SentencePiece pieces ("▁" for space). With Merges empty,
	//     llama2.c/SentencePiece merging by Scores; with Merges, Hugging
	//     Face BPE merging by rank over characters with byte fallback.
	//   - "gpt2": byte-level BPE (pieces in GPT-2's byte-to-unicode
	//     alphabet, merged by rank) after the pre-tokenizer Pre names.
	//   - "gemma4": llama.cpp's Gemma-4 vocabulary, BPE by rank over
	//     SentencePiece pieces with byte fallback, text split at newlines.
	Model string
	// Pre is tokenizer.ggml.pre, the pre-tokenizer of a "gpt2" vocabulary
	// ("gpt-2", "llama-bpe", "qwen2", ...; see the package documentation).
	Pre    string
	Tokens []string  // pieces (tokenizer.ggml.tokens)
	Scores []float32 // tokenizer.ggml.scores; required without Merges, else may be nil
	// Types is tokenizer.ggml.token_type (TypeNormal, ...); nil derives
	// them: "<0xHH>" pieces are bytes, BOS and EOS control, UNK unknown.
	Types  []int32
	Merges []string // tokenizer.ggml.merges, "left right" in rank order
	// BOS, EOS and UNK are ids, -1 when absent.
	BOS, EOS, UNK int
	// EOT (end of turn) and EOM (end of message) are ids, nil when absent
	// (tokenizer.ggml.eot_token_id, eom_token_id; pointers, so that a Vocab
	// written without them does not end generations at token 0).
	EOT, EOM       *int `json:",omitempty"`
	AddBOS, AddEOS bool
	// AddSpacePrefix is SentencePiece's add_dummy_prefix: non-empty text
	// gets a leading "▁" before encoding, and decoding removes it.
	AddSpacePrefix bool
	// ChatTemplate is tokenizer.chat_template ("" for none).
	ChatTemplate string `json:",omitempty"`
	// Name is general.name; llama.cpp keys one tokenization rule on it
	// (Phi-3: whitespace after special tokens is stripped). Vocab sets it
	// only for such a model.
	Name string `json:",omitempty"`
}

// VocabDefaults returns llama.cpp's defaults for tokenizer.ggml.add_bos_token
// and tokenizer.ggml.add_space_prefix when a GGUF file of the given model
// and pre-tokenizer leaves them out.
func VocabDefaults(model, pre string) (addBOS, addSpacePrefix bool) {
	switch model {
	case "llama":
		return true, true
	case "gemma4":
		return true, false
	}
	if p := presets[pre]; p != nil {
		return p.addBOS, false
	}
	return false, false
}

// FromVocab builds a tokenizer from GGUF-style data, as llama.cpp reads
// it.
//
// "llama" without Merges is llama2.c's algorithm with "▁" for spaces:
// code points looked up as pieces (never unknown, control, unused or byte
// pieces), else spelled with the byte tokens (pieces of type TypeByte) or
// else UNK, then the pair whose concatenation has the highest score merged
// first. "llama" with Merges is Hugging Face BPE (byte fallback through
// the TypeByte tokens, consecutive unknown characters fused into one
// UNK). "gpt2" is byte-level BPE after the pre-tokenizer Pre names (an
// unknown or missing Pre is ErrUnsupported); "gemma4" is llama.cpp's
// Gemma-4 vocabulary.
//
// Control, user-defined and unknown tokens are matched in the text before
// the model runs (control and unknown tokens only when the caller parses
// special tokens), as llama.cpp does. Duplicate pieces, ids out of range,
// and merges naming pieces that do not exist are errors (ErrFormat); a
// model other than these is ErrUnsupported.
func FromVocab(v Vocab) (*Tokenizer, error) {
	var p *preset
	switch v.Model {
	case "llama":
	case "gpt2":
		if v.Pre == "" {
			return nil, fmt.Errorf("%w: byte-level (gpt2) vocabulary without tokenizer.ggml.pre: llama.cpp would fall back to a generic split that differs from the model's own tokenizer; reconvert the model with a current llama.cpp converter", ErrUnsupported)
		}
		if p = presets[v.Pre]; p == nil || p.sentencePiece {
			return nil, fmt.Errorf("%w: pre-tokenizer %q is not implemented (hlm reads: %s)", ErrUnsupported, v.Pre, presetNames())
		}
	case "gemma4":
		p = presets["gemma4"]
	default:
		return nil, fmt.Errorf("%w: vocab model %q, only \"llama\", \"gpt2\" and \"gemma4\" are implemented", ErrUnsupported, v.Model)
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
	} else if p != nil {
		return nil, fmt.Errorf("%w: %s vocab has no merges", ErrFormat, v.Model)
	} else if v.Scores == nil {
		return nil, fmt.Errorf("%w: vocab has neither scores nor merges", ErrFormat)
	}
	t := &Tokenizer{
		alg:          alg,
		src:          fromVocab,
		pieces:       append([]string(nil), v.Tokens...),
		space:        space,
		addPrefix:    v.AddSpacePrefix,
		addBOS:       v.AddBOS,
		addEOS:       v.AddEOS,
		fuseUnk:      true,
		chatTemplate: v.ChatTemplate,
	}
	if v.Scores != nil {
		t.scores = append([]float32(nil), v.Scores...)
	}
	if err := t.setSpecials(v.BOS, v.EOS, v.UNK, idOrNone(v.EOT), idOrNone(v.EOM)); err != nil {
		return nil, err
	}
	if err := t.setTypes(v.Types); err != nil {
		return nil, err
	}
	if p != nil {
		if err := t.usePreset(v.Model, v.Pre, p); err != nil {
			return nil, err
		}
	} else if alg == byRank {
		t.norm = normalizer{{kind: normReplace, from: " ", to: space}}
		if t.addPrefix {
			t.norm = append(t.norm, normStep{kind: normPrepend, to: space})
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
		ids := t.lookup
		if t.byteLevel {
			ids = t.pieceIDs()
		}
		list := make([][2]string, len(v.Merges))
		for i, m := range v.Merges {
			pair, ok := splitMerge(m, ids)
			if !ok {
				return nil, fmt.Errorf("%w: merge %d %q is not two pieces of the vocabulary joined by a space",
					ErrFormat, i, m)
			}
			list[i] = pair
		}
		if err := t.setMerges(list, ids); err != nil {
			return nil, err
		}
	}
	if t.byteLevel {
		for b := range t.byteID {
			t.byteID[b] = -1
			if id, ok := t.lookup[string([]byte{byte(b)})]; ok {
				t.byteID[b] = id
			}
		}
	}
	if isPhi3(v.Name) {
		t.name = v.Name // the one name that changes the tokenization
	}
	t.added = newAddedVocab(t.specialTokens(isPhi3(v.Name)), nil, true)
	t.eog = t.findEOG(nil)
	return t, nil
}

// setSpecials validates and sets the special ids.
func (t *Tokenizer) setSpecials(bos, eos, unk, eot, eom int) error {
	n := len(t.pieces)
	var err error
	for _, s := range []struct {
		name string
		id   int
		dst  *int
	}{{"BOS", bos, &t.bos}, {"EOS", eos, &t.eos}, {"UNK", unk, &t.unk}, {"EOT", eot, &t.eot}, {"EOM", eom, &t.eom}} {
		if *s.dst, err = checkSpecial(s.name, s.id, n); err != nil {
			return err
		}
	}
	return nil
}

// setTypes sets the token types (nil derives them) and the byte-fallback
// tokens.
func (t *Tokenizer) setTypes(types []int32) error {
	if types != nil {
		t.types = append([]int32(nil), types...)
		for id, ty := range t.types {
			if ty < TypeUndefined || ty > TypeByte {
				return fmt.Errorf("%w: token %d has type %d, want 0..6", ErrFormat, id, ty)
			}
		}
	} else {
		t.types = make([]int32, len(t.pieces))
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
			return fmt.Errorf("%w: byte token %d has piece %q, want <0xHH>", ErrFormat, id, t.pieces[id])
		}
		if t.byteToken[b] < 0 {
			t.byteToken[b] = int32(id)
		}
	}
	return nil
}

// usePreset sets up a "gpt2" or "gemma4" vocabulary's pre-tokenizer.
func (t *Tokenizer) usePreset(model, pre string, p *preset) error {
	steps, err := splitSteps(p.patterns)
	if err != nil {
		return err
	}
	t.pre = steps
	t.ignoreMerges = p.ignoreMerges
	if p.noBOS {
		t.bos = -1
	}
	if p.sentencePiece {
		t.norm = normalizer{{kind: normReplace, from: " ", to: space}}
		t.wholeNewline = true
		t.preName = "gemma4"
		return nil
	}
	t.byteLevel = true
	t.preName = pre
	return nil
}

// pieceIDs maps every piece to its id.
func (t *Tokenizer) pieceIDs() map[string]int32 {
	m := make(map[string]int32, len(t.pieces))
	for id, p := range t.pieces {
		if _, dup := m[p]; !dup {
			m[p] = int32(id)
		}
	}
	return m
}

// isPhi3 reports whether llama.cpp treats a model of this general.name as
// Phi-3 (whitespace after special tokens stripped).
func isPhi3(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "phi-3") || strings.Contains(n, "phi3")
}

// specialTokens lists the tokens llama.cpp matches in text: control,
// user-defined and unknown tokens (its cache_special_tokens). For a model
// named Phi-3 the whitespace after them is stripped, as llama.cpp does
// (except after <unk>, <s> and <|endoftext|>; also after </s>).
func (t *Tokenizer) specialTokens(phi3 bool) []addedToken {
	var out []addedToken
	for id, ty := range t.types {
		p := t.pieces[id]
		if ty != TypeControl && ty != TypeUserDefined && ty != TypeUnknown {
			continue
		}
		a := addedToken{id: int32(id), content: p, control: ty != TypeUserDefined}
		if phi3 && p != "<unk>" && p != "<s>" && p != "<|endoftext|>" {
			a.rstrip = true
		}
		out = append(out, a)
	}
	return out
}

// splitMerge splits a GGUF merge "left right" into its two pieces. Pieces
// may themselves contain spaces, so every space is tried, from the first,
// until both halves are pieces.
func splitMerge(m string, ids map[string]int32) ([2]string, bool) {
	for i := 1; i < len(m)-1; i++ {
		if m[i] != ' ' {
			continue
		}
		a, b := m[:i], m[i+1:]
		if _, ok := ids[a]; !ok {
			continue
		}
		if _, ok := ids[b]; ok {
			return [2]string{a, b}, true
		}
	}
	return [2]string{}, false
}

// setMerges installs the byRank merge rules, list[i] having rank i, with
// the pieces' ids from ids. As in tokenizers, a pair listed twice keeps
// its last rank.
func (t *Tokenizer) setMerges(list [][2]string, ids map[string]int32) error {
	if len(list) > 1<<31-1 {
		return fmt.Errorf("%w: %d merges", ErrFormat, len(list))
	}
	t.merges = make(map[uint64]merge, len(list))
	for rank, m := range list {
		a, okA := ids[m[0]]
		b, okB := ids[m[1]]
		c, okC := ids[m[0]+m[1]]
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
// encodes every text to the same ids (special tokens written in the text
// aside: GGUF matches control tokens by their raw text, tokenizer.json
// may match normalized ones by their normalized text). Pieces of a
// llama2.c tokenizer are converted to SentencePiece form as llama.cpp
// expects: ' ' becomes "▁", and BOS "\n<s>\n" and EOS "\n</s>\n" become
// "<s>" and "</s>". A Hugging Face SentencePiece-style BPE gives Model
// "llama" with Merges, and Scores derived from the merge ranks (see
// rankScores): readers that merge by rank (this package) use the merges;
// readers that merge by score, as llama.cpp does for every "llama"
// vocabulary, use the scores and reproduce the ranks. A byte-level BPE
// gives Model "gpt2" with Pre naming its pre-tokenizer, or "" when its
// tokenizer.json's pre-tokenizer is none llama.cpp knows (FromVocab then
// refuses it).
//
// Not representable in GGUF, and so lost: a Unicode normalizer (Qwen's
// NFC: llama.cpp normalizes nothing, so text not in NFC encodes
// differently), fuse_unk=false and ignore_merges=true of a
// SentencePiece-style tokenizer.json, and a Strip decoder removing other
// than one space; the end-of-generation tokens follow llama.cpp's rule for
// GGUF (any token named like an end of turn). A tokenizer.json BPE with no
// merges at all gives a Vocab with neither merges nor scores, which
// FromVocab refuses.
func (t *Tokenizer) Vocab() Vocab {
	v := Vocab{
		Model:          "llama",
		Pre:            t.preName,
		Tokens:         append([]string(nil), t.pieces...),
		Types:          append([]int32(nil), t.types...),
		BOS:            t.bos,
		EOS:            t.eos,
		UNK:            t.unk,
		EOT:            noneOrID(t.eot),
		EOM:            noneOrID(t.eom),
		AddBOS:         t.addBOS,
		AddEOS:         t.addEOS,
		AddSpacePrefix: t.addPrefix,
		ChatTemplate:   t.chatTemplate,
		Name:           t.name,
	}
	switch {
	case t.byteLevel:
		v.Model = "gpt2"
	case t.preName == "gemma4":
		v.Model, v.Pre = "gemma4", ""
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
		if v.Scores == nil && len(v.Merges) > 0 && v.Model == "llama" {
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

// idOrNone is *p, or -1 for nil.
func idOrNone(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// noneOrID is a pointer to id, or nil for a negative id.
func noneOrID(id int) *int {
	if id < 0 {
		return nil
	}
	return &id
}
