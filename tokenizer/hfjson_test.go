package tokenizer

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hfSpec describes a small tokenizer.json; json renders it. Fields left nil
// take the Llama-style defaults.
type hfSpec struct {
	vocab        []string // piece of each id
	merges       []any    // "a b" strings or []string pairs
	unk          any      // unk_token; nil means "<unk>"
	byteFallback bool
	fuseUnk      bool
	ignoreMerges bool
	added        []map[string]any
	normalizer   any
	preTokenizer any
	decoder      any
	post         any
	modelType    string
}

var (
	llamaNormalizer = map[string]any{"type": "Sequence", "normalizers": []any{
		map[string]any{"type": "Prepend", "prepend": "▁"},
		map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"},
	}}
	llamaDecoder = map[string]any{"type": "Sequence", "decoders": []any{
		map[string]any{"type": "Replace", "pattern": map[string]any{"String": "▁"}, "content": " "},
		map[string]any{"type": "ByteFallback"},
		map[string]any{"type": "Fuse"},
		map[string]any{"type": "Strip", "content": " ", "start": 1, "stop": 0},
	}}
	bosTemplate = map[string]any{
		"type":           "TemplateProcessing",
		"single":         []any{map[string]any{"SpecialToken": map[string]any{"id": "<s>", "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
		"special_tokens": map[string]any{"<s>": map[string]any{"id": "<s>", "ids": []int{1}, "tokens": []string{"<s>"}}},
	}
)

func (s hfSpec) json() []byte {
	vocab := map[string]int{}
	for id, p := range s.vocab {
		vocab[p] = id
	}
	orDefault := func(v, def any) any {
		if v == nil {
			return def
		}
		return v
	}
	typ := s.modelType
	if typ == "" {
		typ = "BPE"
	}
	merges := s.merges
	if merges == nil {
		merges = []any{}
	}
	added := s.added
	if added == nil {
		added = []map[string]any{
			{"id": 0, "content": "<unk>", "special": true},
			{"id": 1, "content": "<s>", "special": true},
			{"id": 2, "content": "</s>", "special": true},
		}
	}
	f := map[string]any{
		"version":        "1.0",
		"added_tokens":   added,
		"normalizer":     orDefault(s.normalizer, llamaNormalizer),
		"pre_tokenizer":  s.preTokenizer,
		"post_processor": orDefault(s.post, bosTemplate),
		"decoder":        orDefault(s.decoder, llamaDecoder),
		"model": map[string]any{
			"type": typ, "dropout": nil, "unk_token": orDefault(s.unk, "<unk>"),
			"continuing_subword_prefix": nil, "end_of_word_suffix": nil,
			"fuse_unk": s.fuseUnk, "byte_fallback": s.byteFallback, "ignore_merges": s.ignoreMerges,
			"vocab": vocab, "merges": merges,
		},
	}
	out, err := json.Marshal(f)
	if err != nil {
		panic(err)
	}
	return out
}

// tinyHFVocab: ids 0-2 special, then the pieces below; byte tokens for
// 0xC3, 0xA9 (é) and 0xE6 0x97 0xA5 (日) only.
var tinyHFVocab = []string{
	"<unk>", "<s>", "</s>", // 0-2
	"▁", "a", "b", "c", // 3-6
	"ab", "▁a", "abc", "▁ab", // 7-10
	"<0xC3>", "<0xA9>", "<0xE6>", "<0x97>", "<0xA5>", // 11-15
	"bc", "▁abc", // 16-17
}

var tinyHFMerges = []any{"a b", "▁ a", "ab c", []string{"▁a", "b"}, "b c", "▁ab c"}

func tinyHF(tb testing.TB, mod func(*hfSpec)) *Tokenizer {
	tb.Helper()
	s := hfSpec{vocab: tinyHFVocab, merges: tinyHFMerges, byteFallback: true, fuseUnk: true}
	if mod != nil {
		mod(&s)
	}
	tok, err := ParseHFJSON(s.json())
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

func TestHFEncodeTiny(t *testing.T) {
	std := tinyHF(t, nil)
	noFuse := tinyHF(t, func(s *hfSpec) { s.fuseUnk = false })
	noUnk := tinyHF(t, func(s *hfSpec) { s.unk = nil; s.unk = json.RawMessage("null") })
	noBytes := tinyHF(t, func(s *hfSpec) { s.byteFallback = false })
	ignore := tinyHF(t, func(s *hfSpec) { s.ignoreMerges = true })
	for _, c := range []struct {
		name string
		tok  *Tokenizer
		text string
		want []int
	}{
		{"empty", std, "", nil},
		{"a", std, "a", []int{8}},                           // ▁ a
		{"ab", std, "ab", []int{3, 7}},                      // "a b" (rank 0) before "▁ a" (rank 1)
		{"abc", std, "abc", []int{3, 9}},                    // ab, then "ab c"
		{"bc", std, "bc", []int{3, 16}},                     // "b c"
		{"a b", std, "a b", []int{8, 3, 5}},                 // ▁a ▁ b: merges cross words
		{"ab ab", std, "ab ab", []int{3, 7, 3, 7}},          // leftmost "a b" first, both
		{"é bytes", std, "é", []int{3, 11, 12}},             // byte fallback
		{"日 bytes", std, "日", []int{3, 13, 14, 15}},         // three bytes
		{"unknown", std, "z", []int{3, 0}},                  // no byte tokens for z
		{"fused", std, "zzz", []int{3, 0}},                  // consecutive unknowns fuse
		{"not fused", noFuse, "zz", []int{3, 0, 0}},         // fuse_unk false
		{"unk after bytes", std, "zé", []int{3, 11, 12, 0}}, // tokenizers' order
		{"unk run across bytes", std, "zéz", []int{3, 11, 12, 0}},
		{"unk then known", std, "za", []int{3, 0, 4}}, // "▁ a" is not adjacent
		{"no unk token", noUnk, "zaz", []int{8}},      // unknowns dropped: ▁ a
		{"no byte fallback", noBytes, "é", []int{3, 0}},
		{"spaces", std, "  a", []int{3, 3, 8}},
		{"literal ▁", std, "▁a", []int{3, 8}}, // U+2581 is a space after normalizing
		{"ignore_merges whole word", ignore, "abc", []int{17}},
		{"ignore_merges not a word", ignore, "abcab", []int{3, 9, 7}},
	} {
		if got := encode(c.tok, c.text, false, false); !slices.Equal(got, c.want) {
			t.Errorf("%s: Encode(%q) = %v, want %v", c.name, c.text, got, c.want)
		}
	}
	if got := encode(std, "a", true, true); !slices.Equal(got, []int{1, 8, 2}) {
		t.Errorf("Encode(a, bos, eos) = %v, want [1 8 2]", got)
	}
}

func TestHFDecodeTiny(t *testing.T) {
	tok := tinyHF(t, nil)
	for _, c := range []struct {
		ids  []int
		want string
	}{
		{[]int{8}, "a"},                 // the leading space of the text goes
		{[]int{1, 8}, "a"},              // BOS decodes to nothing
		{[]int{3, 8}, " a"},             // only one space goes
		{[]int{4, 8}, "a a"},            // spaces inside stay
		{[]int{1, 3, 11, 12, 2}, "é"},   // bytes, then the strip
		{[]int{0}, "<unk>"},             // unknown keeps its piece
		{[]int{13, 14}, "\uFFFD\uFFFD"}, // incomplete 日
		{[]int{13, 14, 4}, "\uFFFD\uFFFDa"},
		{[]int{99, -5}, "\uFFFD\uFFFD"},
	} {
		if got := tok.Decode(c.ids); got != c.want {
			t.Errorf("Decode(%v) = %q, want %q", c.ids, got, c.want)
		}
	}
	noStrip := tinyHF(t, func(s *hfSpec) {
		s.decoder = map[string]any{"type": "Sequence", "decoders": []any{
			map[string]any{"type": "Replace", "pattern": map[string]any{"String": "▁"}, "content": " "},
			map[string]any{"type": "ByteFallback"}, map[string]any{"type": "Fuse"},
		}}
	})
	if got := noStrip.Decode([]int{8}); got != " a" {
		t.Errorf("without Strip: Decode = %q, want \" a\"", got)
	}
}

func TestHFMergeFormats(t *testing.T) {
	legacy := tinyHF(t, func(s *hfSpec) { s.merges = []any{"#version: 0.2", "a b", "▁ a", "ab c", "▁a b", "b c", "▁ab c"} })
	pairs := tinyHF(t, func(s *hfSpec) {
		s.merges = []any{[]string{"a", "b"}, []string{"▁", "a"}, []string{"ab", "c"}, []string{"▁a", "b"}, []string{"b", "c"}, []string{"▁ab", "c"}}
	})
	for _, text := range []string{"abc", "ab ab c", "bca", "cab"} {
		if a, b := encode(legacy, text, false, false), encode(pairs, text, false, false); !slices.Equal(a, b) {
			t.Errorf("Encode(%q): string merges %v, pair merges %v", text, a, b)
		}
	}
	if v := legacy.Vocab(); len(v.Merges) != 6 || v.Merges[0] != "a b" {
		t.Errorf("#version line kept as a merge: %q", v.Merges)
	}
}

func TestHFSpecialTokens(t *testing.T) {
	tok := tinyHF(t, nil)
	if tok.BOS() != 1 || tok.EOS() != 2 || tok.UNK() != 0 {
		t.Errorf("BOS/EOS/UNK = %d/%d/%d, want 1/2/0", tok.BOS(), tok.EOS(), tok.UNK())
	}
	if ty := tok.Type(1); ty != TypeControl {
		t.Errorf("type of <s> = %d, want control", ty)
	}
	if ty := tok.Type(11); ty != TypeByte {
		t.Errorf("type of <0xC3> = %d, want byte", ty)
	}
	v := tok.Vocab()
	if !v.AddBOS || v.AddEOS || !v.AddSpacePrefix || len(v.Scores) != len(v.Tokens) {
		t.Errorf("AddBOS %v AddEOS %v AddSpacePrefix %v Scores %v", v.AddBOS, v.AddEOS, v.AddSpacePrefix, v.Scores)
	}

	// EOS from a template: a special token after the sequence.
	eosTemplate := map[string]any{
		"type": "TemplateProcessing",
		"single": []any{
			map[string]any{"SpecialToken": map[string]any{"id": "<s>"}},
			map[string]any{"Sequence": map[string]any{"id": "A"}},
			map[string]any{"SpecialToken": map[string]any{"id": "</s>"}},
		},
		"special_tokens": map[string]any{
			"<s>":  map[string]any{"ids": []int{1}},
			"</s>": map[string]any{"ids": []int{2}},
		},
	}
	withEOS := tinyHF(t, func(s *hfSpec) { s.post = eosTemplate })
	if v := withEOS.Vocab(); !v.AddBOS || !v.AddEOS || v.EOS != 2 {
		t.Errorf("template with EOS: AddBOS %v AddEOS %v EOS %d", v.AddBOS, v.AddEOS, v.EOS)
	}

	// No post-processor: BOS and EOS by name, and no AddBOS.
	byName := tinyHF(t, func(s *hfSpec) { s.post = json.RawMessage("null") })
	if v := byName.Vocab(); v.BOS != 1 || v.EOS != 2 || v.AddBOS {
		t.Errorf("by name: BOS %d EOS %d AddBOS %v", v.BOS, v.EOS, v.AddBOS)
	}

	// tokenizer_config.json overrides.
	src := hfSpec{vocab: tinyHFVocab, merges: tinyHFMerges, byteFallback: true, fuseUnk: true}
	cfg := []byte(`{"bos_token": {"content": "</s>"}, "eos_token": "<s>", "add_bos_token": false, "add_eos_token": true}`)
	swapped, err := ParseHFJSONWithConfig(src.json(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if v := swapped.Vocab(); v.BOS != 2 || v.EOS != 1 || v.AddBOS || !v.AddEOS {
		t.Errorf("config: BOS %d EOS %d AddBOS %v AddEOS %v, want 2 1 false true", v.BOS, v.EOS, v.AddBOS, v.AddEOS)
	}
	if _, err := ParseHFJSONWithConfig(src.json(), []byte(`{"bos_token": "<nope>"}`)); !errors.Is(err, ErrFormat) {
		t.Errorf("config naming a missing token: err %v, want ErrFormat", err)
	}

	// LoadHFJSON reads tokenizer_config.json beside tokenizer.json.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), src.json(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadHFJSON(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	if loaded.BOS() != 2 {
		t.Errorf("LoadHFJSON ignored tokenizer_config.json: BOS %d", loaded.BOS())
	}
}

// TestHFMetaspace checks that the Metaspace pre-tokenizer and decoder of
// newer Llama-style tokenizer.json files (no normalizer) encode and decode
// as the legacy Replace/Prepend normalizer does, for texts without special
// tokens.
func TestHFMetaspace(t *testing.T) {
	legacy := tinyHF(t, nil)
	metaspace := map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false}
	tok := tinyHF(t, func(s *hfSpec) {
		s.normalizer = json.RawMessage("null")
		s.preTokenizer = metaspace
		s.decoder = metaspace
	})
	// (Text that starts with a space differs: Metaspace prepends "▁" only
	// to text that does not start with one.)
	for _, text := range []string{"", "a", "abc ab", "a  b ", "日本 é", "abcabc abc"} {
		a, b := encode(legacy, text, true, false), encode(tok, text, true, false)
		if !slices.Equal(a, b) {
			t.Errorf("Encode(%q): Metaspace %v, legacy %v", text, b, a)
		}
		if x, y := legacy.Decode(a), tok.Decode(b); x != y {
			t.Errorf("Decode: Metaspace %q, legacy %q", y, x)
		}
	}
}

func TestParseHFJSONErrors(t *testing.T) {
	base := func() hfSpec {
		return hfSpec{vocab: tinyHFVocab, merges: tinyHFMerges, byteFallback: true, fuseUnk: true}
	}
	for _, c := range []struct {
		name string
		data []byte
		want error
		msg  string // part of the error message
	}{
		{"not json", []byte("{"), ErrFormat, "tokenizer.json"},
		{"no model", []byte(`{"added_tokens": []}`), ErrFormat, "no model"},
		{"unigram", func() []byte { s := base(); s.modelType = "Unigram"; return s.json() }(), ErrUnsupported, "Unigram"},
		{"wordpiece", func() []byte { s := base(); s.modelType = "WordPiece"; return s.json() }(), ErrUnsupported, "WordPiece"},
		{"byte-level pre-tokenizer", func() []byte {
			s := base()
			s.preTokenizer = map[string]any{"type": "ByteLevel", "add_prefix_space": false}
			return s.json()
		}(), ErrUnsupported, "ByteLevel"},
		{"bert pre-tokenizer", func() []byte {
			s := base()
			s.preTokenizer = map[string]any{"type": "BertPreTokenizer"}
			return s.json()
		}(), ErrUnsupported, "BertPreTokenizer"},
		{"lowercase normalizer", func() []byte {
			s := base()
			s.normalizer = map[string]any{"type": "Sequence", "normalizers": []any{map[string]any{"type": "Lowercase"}}}
			return s.json()
		}(), ErrUnsupported, "Lowercase"},
		{"regex replace", func() []byte {
			s := base()
			s.normalizer = map[string]any{"type": "Replace", "pattern": map[string]any{"Regex": " +"}, "content": "▁"}
			return s.json()
		}(), ErrUnsupported, "Replace"},
		{"wordpiece decoder", func() []byte { s := base(); s.decoder = map[string]any{"type": "WordPiece"}; return s.json() }(), ErrUnsupported, "WordPiece"},
		{"null decoder", func() []byte { s := base(); s.decoder = json.RawMessage("null"); return s.json() }(), ErrUnsupported, "decoder"},
		{"strip before fuse", func() []byte {
			s := base()
			s.decoder = map[string]any{"type": "Sequence", "decoders": []any{
				map[string]any{"type": "Replace", "pattern": map[string]any{"String": "▁"}, "content": " "},
				map[string]any{"type": "Strip", "content": " ", "start": 1, "stop": 0},
			}}
			return s.json()
		}(), ErrUnsupported, "Strip"},
		{"merge of missing piece", func() []byte { s := base(); s.merges = []any{"a z"}; return s.json() }(), ErrFormat, `"z"`},
		{"merge result missing", func() []byte { s := base(); s.merges = []any{"c a"}; return s.json() }(), ErrFormat, `"ca"`},
		{"merge with three parts", func() []byte { s := base(); s.merges = []any{"a b c"}; return s.json() }(), ErrFormat, "merge 0"},
		{"merge pair of three", func() []byte { s := base(); s.merges = []any{[]string{"a", "b", "c"}}; return s.json() }(), ErrFormat, "merge 0"},
		{"merge of a number", func() []byte { s := base(); s.merges = []any{7}; return s.json() }(), ErrFormat, "merge 0"},
		{"added id out of range", func() []byte {
			s := base()
			s.added = []map[string]any{{"id": 1 << 40, "content": "<x>", "special": true}}
			return s.json()
		}(), ErrFormat, "out of range"},
		{"added id negative", func() []byte {
			s := base()
			s.added = []map[string]any{{"id": -1, "content": "<x>", "special": true}}
			return s.json()
		}(), ErrFormat, "out of range"},
		{"added token clashes", func() []byte {
			s := base()
			s.added = []map[string]any{{"id": 4, "content": "<x>", "special": true}}
			return s.json()
		}(), ErrFormat, "added token"},
		{"added token duplicates a piece", func() []byte {
			s := base()
			s.added = []map[string]any{{"id": len(tinyHFVocab), "content": "a", "special": false}}
			return s.json()
		}(), ErrFormat, "two ids"},
		{"hole in ids", []byte(`{"normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
			"decoder": {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
			"added_tokens": [{"id": 0, "content": "a"}],
			"model": {"type": "BPE", "vocab": {"a": 0, "b": 2}, "merges": []}}`), ErrFormat, "id 1"},
		{"vocab id huge", []byte(`{"normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
			"decoder": {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
			"model": {"type": "BPE", "vocab": {"a": 4000000000}, "merges": []}}`), ErrFormat, "out of range"},
		{"unk not in vocab", func() []byte { s := base(); s.unk = "<nope>"; return s.json() }(), ErrFormat, "unk_token"},
		{"post-processor id out of range", func() []byte {
			s := base()
			s.post = map[string]any{"type": "TemplateProcessing",
				"single":         []any{map[string]any{"SpecialToken": map[string]any{"id": "<s>"}}},
				"special_tokens": map[string]any{"<s>": map[string]any{"ids": []int{99999}}}}
			return s.json()
		}(), ErrFormat, "99999"},
		{"dropout", []byte(`{"normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
			"decoder": {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
			"model": {"type": "BPE", "dropout": 0.1, "vocab": {"a": 0}, "merges": []}}`), ErrUnsupported, "dropout"},
	} {
		tok, err := ParseHFJSON(c.data)
		if !errors.Is(err, c.want) || !strings.Contains(fmtErr(err), c.msg) {
			t.Errorf("%s: err %v, want %v mentioning %q", c.name, err, c.want, c.msg)
		}
		if tok != nil {
			t.Errorf("%s: non-nil tokenizer with an error", c.name)
		}
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestChatConfig reads the chat template and special tokens of a
// tokenizer_config.json, and the files beside a tokenizer.json that
// replace its template, in transformers' order.
func TestChatConfig(t *testing.T) {
	cfg, err := ParseChatConfig([]byte(`{"bos_token": {"__type": "AddedToken", "content": "<s>"}, "eos_token": "</s>",
		"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]}`))
	if err != nil || cfg.Template != "D" || cfg.BOS != "<s>" || cfg.EOS != "</s>" {
		t.Errorf("ParseChatConfig = %+v, %v", cfg, err)
	}
	if cfg, err := ParseChatConfig([]byte(`{"chat_template": [{"name": "rag", "template": "R"}]}`)); err != nil || cfg.Template != "" {
		t.Errorf("named templates without a default: %+v, %v (want none)", cfg, err)
	}
	if _, err := ParseChatConfig([]byte(`{"chat_template": 3}`)); !errors.Is(err, ErrFormat) {
		t.Errorf("chat_template 3: %v, want ErrFormat", err)
	}
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("tokenizer.json", string(hfSpec{vocab: tinyHFVocab, merges: tinyHFMerges}.json()))
	write("tokenizer_config.json", `{"chat_template": "from config"}`)
	for _, c := range []struct{ file, data, want string }{
		{"", "", "from config"},
		{"chat_template.json", `{"chat_template": "from json"}`, "from json"},
		{"chat_template.jinja", "from jinja", "from jinja"},
	} {
		if c.file != "" {
			write(c.file, c.data)
		}
		tok, err := LoadHFJSON(filepath.Join(dir, "tokenizer.json"))
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.ChatTemplate(); got != c.want {
			t.Errorf("with %s: template %q, want %q", c.file, got, c.want)
		}
	}
}
