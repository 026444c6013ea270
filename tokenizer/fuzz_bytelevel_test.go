package tokenizer

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// tinyByteLevelVocab is a byte-level vocabulary: the 256 single bytes, a
// few merges and control tokens, with the pre-tokenizer pre.
func tinyByteLevelVocab(pre string) Vocab {
	v := Vocab{Model: "gpt2", Pre: pre, BOS: -1, EOS: -1, UNK: -1}
	for b := 0; b < 256; b++ {
		v.Tokens = append(v.Tokens, string(byteRune[b]))
		v.Types = append(v.Types, TypeNormal)
	}
	add := func(p string, ty int32) int {
		v.Tokens = append(v.Tokens, p)
		v.Types = append(v.Types, ty)
		return len(v.Tokens) - 1
	}
	for _, m := range [][2]string{{"Ġ", "t"}, {"h", "e"}, {"Ġt", "he"}, {"Ġ", "a"}, {"i", "n"}, {"Ġa", "n"}, {"Ġan", "d"},
		{"1", "2"}, {"Ċ", "Ċ"}, {"Ġ", "Ġ"}, {"ĠĠ", "ĠĠ"}, {"æ", "Ĺ"}, {"æĹ", "¥"}, {"'", "s"}} {
		p := m[0] + m[1]
		if !slices.Contains(v.Tokens, p) {
			add(p, TypeNormal)
		}
		v.Merges = append(v.Merges, m[0]+" "+m[1])
	}
	v.BOS = add("<|begin|>", TypeControl)
	v.EOS = add("<|end|>", TypeControl)
	add("<tool>", TypeUserDefined)
	return v
}

// tinyByteLevelJSON is the same vocabulary as a tokenizer.json with a
// Split + ByteLevel pre-tokenizer, as Llama-3 and Qwen2 files have it.
func tinyByteLevelJSON(pattern string, ignoreMerges bool) []byte {
	v := tinyByteLevelVocab("")
	vocab := map[string]int{}
	var added []map[string]any
	for id, p := range v.Tokens {
		if v.Types[id] == TypeNormal {
			vocab[p] = id
		} else {
			added = append(added, map[string]any{"id": id, "content": p, "special": v.Types[id] == TypeControl})
		}
	}
	doc := map[string]any{
		"added_tokens": added,
		"normalizer":   nil,
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": pattern}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false},
		}},
		"decoder": map[string]any{"type": "ByteLevel"},
		"model":   map[string]any{"type": "BPE", "vocab": vocab, "merges": v.Merges, "ignore_merges": ignoreMerges},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return b
}

// byteLevelTokenizers are tiny byte-level tokenizers of several
// pre-tokenizers, each as GGUF data and as a tokenizer.json.
func byteLevelTokenizers(tb testing.TB) map[string]*Tokenizer {
	tb.Helper()
	out := map[string]*Tokenizer{}
	for _, pre := range []string{"gpt-2", "llama-bpe", "qwen2", "qwen35", "deepseek-v3", "tekken", "gpt-4o", "smollm", "deepseek-llm", "falcon"} {
		tok, err := FromVocab(tinyByteLevelVocab(pre))
		if err != nil {
			tb.Fatal(err)
		}
		out[pre] = tok
		p := presets[pre]
		if len(p.patterns) != 1 {
			continue
		}
		hf, err := ParseHFJSON(tinyByteLevelJSON(p.patterns[0], p.ignoreMerges))
		if err != nil {
			tb.Fatal(err)
		}
		if hf.Pre() != canonicalPre(pre) {
			tb.Fatalf("tokenizer.json of %s: Pre() = %q", pre, hf.Pre())
		}
		out[pre+"-json"] = hf
	}
	return out
}

// canonicalPre is the name presetByPatterns gives each preset's patterns.
func canonicalPre(pre string) string {
	switch pre {
	case "smollm", "deepseek-llm", "falcon", "deepseek-v3":
		return pre
	}
	return presetByPatterns(presets[pre].patterns, presets[pre].ignoreMerges)
}

// refByteLevel encodes text the slow way: the same fragments and words,
// each word's bytes merged by rescanning all pairs for the lowest rank,
// the leftmost first, until none merges.
func refByteLevel(t *Tokenizer, text string, parseSpecial bool) []int {
	var out []int
	frags := []fragment{{text: text, id: -1, atStart: true}}
	if t.added != nil {
		frags = t.added.split(nil, &t.added.raw, text, true, parseSpecial)
	}
	var s scratch
	for _, f := range frags {
		if f.id >= 0 {
			out = append(out, int(f.id))
			continue
		}
		for _, w := range slices.Clone(pretokenize(t.pre, t.norm.apply(f.text), f.atStart, &s)) {
			if id, ok := t.lookup[w]; ok && t.ignoreMerges {
				out = append(out, int(id))
				continue
			}
			var sym []int32
			for i := 0; i < len(w); i++ {
				sym = append(sym, t.byteID[w[i]])
			}
			for {
				best, at := int32(-1), -1
				for i := 0; i+1 < len(sym); i++ {
					if m, ok := t.merges[pairKey(sym[i], sym[i+1])]; ok && (best < 0 || m.rank < best) {
						best, at = m.rank, i
					}
				}
				if at < 0 {
					break
				}
				sym = append(sym[:at], append([]int32{t.merges[pairKey(sym[at], sym[at+1])].id}, sym[at+2:]...)...)
			}
			for _, id := range sym {
				out = append(out, int(id))
			}
		}
	}
	return out
}

// FuzzByteLevelEncode checks, on arbitrary text (any bytes), that
// byte-level encoding matches the slow reference, gives ids in range,
// streams as it decodes, round-trips valid UTF-8 without special tokens
// exactly, and that the GGUF and tokenizer.json forms of one vocabulary
// agree.
func FuzzByteLevelEncode(f *testing.F) {
	for _, s := range []string{"", " ", "the and", "  the\n\n\tand", "I'm it's 'S", "12345 1 22", "日本語 🙂",
		"\x80\xff\xe6\x97", "a<|begin|>b<tool> c<|end|>", "ſ K", "e\u0301", "   \n  x", "\r\n\r\n"} {
		f.Add(s)
	}
	toks := byteLevelTokenizers(f)
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1024 {
			text = text[:1024]
		}
		for name, tok := range toks {
			for _, parse := range []bool{true, false} {
				ids := tok.EncodeWith(text, EncodeOptions{PlainSpecial: !parse})
				if want := refByteLevel(tok, text, parse); !slices.Equal(ids, want) {
					t.Fatalf("%s: Encode(%q) = %v, reference %v", name, text, ids, want)
				}
				for _, id := range ids {
					if id < 0 || id >= tok.VocabSize() {
						t.Fatalf("%s: id %d out of range", name, id)
					}
				}
				checkStream(t, tok, ids)
				if !parse && utf8.ValidString(text) && !strings.Contains(text, "<tool>") {
					if got := tok.Decode(ids); got != text {
						t.Fatalf("%s: Decode(Encode(%q)) = %q", name, text, got)
					}
				}
			}
			if strings.HasSuffix(name, "-json") {
				ggufForm := toks[strings.TrimSuffix(name, "-json")]
				if a, b := tok.Encode(text, true), ggufForm.Encode(text, true); !slices.Equal(a, b) {
					t.Fatalf("%s: tokenizer.json %v, GGUF %v for %q", name, a, b, text)
				}
			}
		}
	})
}

// FuzzParseGPT2 feeds hostile vocab.json, merges.txt and
// tokenizer_config.json files to ParseGPT2.
func FuzzParseGPT2(f *testing.F) {
	f.Add([]byte(`{"a": 0, "b": 1, "ab": 2, "Ġ": 3, "<|endoftext|>": 4}`), []byte("#version: 0.2\na b\n"), []byte(nil))
	f.Add([]byte(`{"a": 0, "b": 1}`), []byte("a b\n"), []byte(`{"bos_token": "a", "add_bos_token": true}`))
	f.Add([]byte(`{"a": 5}`), []byte("x y z\n"), []byte(`{"bos_token": {"content": "q"}}`))
	f.Add([]byte(`[]`), []byte{}, []byte(`[]`))
	f.Fuzz(func(t *testing.T, vocab, merges, config []byte) {
		tok, err := ParseGPT2(vocab, merges, config, nil)
		if err != nil {
			checkSentinel(t, err)
			return
		}
		exercise(t, tok)
	})
}
