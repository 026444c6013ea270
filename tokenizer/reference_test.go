package tokenizer

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The reference encoders below are plain transcriptions of the reference
// loops — llama2.c's encode and tokenizers' merge_word with a rescan of all
// pairs per merge — O(n²) and obviously faithful. The fast encoders must
// agree with them on every input.

// refEncodeScores is llama2.c's encode, byte loop and merge loop as in
// run.c, on t's vocabulary.
func refEncodeScores(t *Tokenizer, text string) []int {
	var toks []int32
	emit := func(g string) {
		key := g
		if g[0] == ' ' {
			key = t.space + g[1:]
		}
		if id, ok := t.lookup[key]; ok {
			toks = append(toks, id)
			return
		}
		for i := 0; i < len(g); i++ {
			if t.byteToken[g[i]] < 0 {
				if t.unk >= 0 {
					toks = append(toks, int32(t.unk))
				}
				return
			}
		}
		for i := 0; i < len(g); i++ {
			toks = append(toks, t.byteToken[g[i]])
		}
	}
	if text != "" && t.addPrefix {
		emit(" ")
	}
	var buf []byte
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c&0xC0 != 0x80 {
			buf = buf[:0]
		}
		buf = append(buf, c)
		if i+1 < len(text) && text[i+1]&0xC0 == 0x80 && len(buf) < 4 {
			continue
		}
		emit(string(buf))
		buf = buf[:0]
	}
	for {
		best, bestID, bestIdx := minScore, int32(-1), -1
		for i := 0; i+1 < len(toks); i++ {
			id, ok := t.lookup[t.pieces[toks[i]]+t.pieces[toks[i+1]]]
			if ok && t.scores[id] > best {
				best, bestID, bestIdx = t.scores[id], id, i
			}
		}
		if bestIdx < 0 {
			break
		}
		toks[bestIdx] = bestID
		toks = slices.Delete(toks, bestIdx+1, bestIdx+2)
	}
	return toInts(toks)
}

// refEncodeRanks is tokenizers' BPE merge_word, then the lowest-rank,
// leftmost pair merged per full rescan.
func refEncodeRanks(t *Tokenizer, text string) []int {
	if text == "" {
		return nil
	}
	s := strings.ReplaceAll(text, " ", "▁")
	if t.addPrefix {
		s = "▁" + s
	}
	if id, ok := t.lookup[s]; ok && t.ignoreMerges {
		return []int{int(id)}
	}
	var toks []int32
	unk := false
	for i := 0; i < len(s); {
		_, w := utf8.DecodeRuneInString(s[i:])
		ch := s[i : i+w]
		i += w
		if id, ok := t.lookup[ch]; ok {
			if unk {
				toks = append(toks, int32(t.unk))
				unk = false
			}
			toks = append(toks, id)
			continue
		}
		var bytes []int32
		for j := 0; j < len(ch); j++ {
			if t.byteToken[ch[j]] < 0 {
				bytes = nil
				break
			}
			bytes = append(bytes, t.byteToken[ch[j]])
		}
		if bytes != nil {
			toks = append(toks, bytes...)
			continue
		}
		if t.unk >= 0 {
			if unk && !t.fuseUnk {
				toks = append(toks, int32(t.unk))
			}
			unk = true
		}
	}
	if unk {
		toks = append(toks, int32(t.unk))
	}
	for {
		bestRank, bestIdx := int32(-1), -1
		var bestID int32
		for i := 0; i+1 < len(toks); i++ {
			m, ok := t.merges[pairKey(toks[i], toks[i+1])]
			if ok && (bestIdx < 0 || m.rank < bestRank) {
				bestRank, bestID, bestIdx = m.rank, m.id, i
			}
		}
		if bestIdx < 0 {
			break
		}
		toks[bestIdx] = bestID
		toks = slices.Delete(toks, bestIdx+1, bestIdx+2)
	}
	return toInts(toks)
}

func toInts(ids []int32) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}

func refEncode(t *Tokenizer, text string) []int {
	if t.alg == byRank {
		return refEncodeRanks(t, text)
	}
	return refEncodeScores(t, text)
}

// checkAgainstReference compares the fast encoder with the reference one.
func checkAgainstReference(t *testing.T, tok *Tokenizer, text string) {
	t.Helper()
	got := encode(tok, text, false, false)
	want := refEncode(tok, text)
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("Encode(%q)\n fast %v\n  ref %v", text, got, want)
	}
}

// TestEncodeMatchesReference runs both encoders over the golden texts and
// a long text with the shared vocabularies.
func TestEncodeMatchesReference(t *testing.T) {
	long := benchText + " 日本語 🙂 \x80\xff naïve  double  spaces\n\ttabs"
	for _, c := range sharedTokenizers {
		t.Run(c.name, func(t *testing.T) {
			tok := c.load(t)
			for _, g := range loadGolden(t, c.golden) {
				checkAgainstReference(t, tok, g.Text)
			}
			checkAgainstReference(t, tok, long)
		})
	}
}
