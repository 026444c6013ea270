package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tokenizerDir writes a directory holding only tokenizer files: GPT-2's
// byte-level alphabet with a few merges, special tokens and a chat
// template of our own.
func tokenizerDir(t *testing.T, template string) string {
	t.Helper()
	vocab := map[string]int{}
	alphabet := func(b int) string { // GPT-2's bytes_to_unicode
		if '!' <= b && b <= '~' || 0xA1 <= b && b <= 0xAC || 0xAE <= b && b <= 0xFF {
			return string(rune(b))
		}
		n := 0
		for c := 0; c < b; c++ {
			if !('!' <= c && c <= '~' || 0xA1 <= c && c <= 0xAC || 0xAE <= c && c <= 0xFF) {
				n++
			}
		}
		return string(rune(256 + n))
	}
	for b := 0; b < 256; b++ {
		vocab[alphabet(b)] = b
	}
	merges := []string{"H i", "Ġ t", "h e"}
	for _, m := range merges {
		vocab[strings.ReplaceAll(m, " ", "")] = len(vocab)
	}
	tok := map[string]any{
		"added_tokens": []map[string]any{
			{"id": len(vocab), "content": "<|start|>", "special": true},
			{"id": len(vocab) + 1, "content": "<|end|>", "special": true},
		},
		"normalizer":    nil,
		"pre_tokenizer": map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
		"decoder":       map[string]any{"type": "ByteLevel"},
		"model":         map[string]any{"type": "BPE", "vocab": vocab, "merges": merges},
	}
	dir := t.TempDir()
	write := func(name string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("tokenizer.json", tok)
	cfg := map[string]any{"bos_token": "<|start|>", "eos_token": "<|end|>"}
	if template != "" {
		cfg["chat_template"] = template
	}
	write("tokenizer_config.json", cfg)
	return dir
}

func runHLM(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	c := commands[args[0]]
	err = c.run(context.Background(), args[1:], &out, &errb)
	return out.String(), errb.String(), err
}

// TestTokenizeCommand: hlm tokenize and detokenize on a directory with only
// tokenizer files, in llama-tokenize's output shapes.
func TestTokenizeCommand(t *testing.T) {
	dir := tokenizerDir(t, "")
	out, _, err := runHLM(t, "tokenize", "--model", dir, "--ids", "Hi there<|end|>")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	if err := json.Unmarshal([]byte(out), &ids); err != nil || !strings.HasSuffix(out, "]\n") {
		t.Fatalf("--ids output %q is not a list", out)
	}
	if len(ids) == 0 || ids[len(ids)-1] != 260 {
		t.Errorf("ids %v: the special token written in the text should be its id (260) at the end", ids)
	}
	plain, _, _ := runHLM(t, "tokenize", "--model", dir, "--ids", "--no-parse-special", "Hi there<|end|>")
	if plain == out {
		t.Error("--no-parse-special gave the same ids")
	}
	out2, _, err := runHLM(t, "tokenize", "--model", dir, "Hi")
	if err != nil || out2 != fmt.Sprintf("%6d -> 'Hi'\n", ids[0]) {
		t.Errorf("default output %q, %v", out2, err)
	}
	text, _, err := runHLM(t, "detokenize", "--model", dir, strings.TrimSpace(out))
	if err != nil || text != "Hi there" {
		t.Errorf("detokenize = %q, %v (control tokens left out)", text, err)
	}
	text, _, _ = runHLM(t, "detokenize", "--model", dir, "--special", strings.TrimSpace(out))
	if text != "Hi there<|end|>" {
		t.Errorf("detokenize --special = %q", text)
	}
	if _, _, err := runHLM(t, "detokenize", "--model", dir, "[1, 99999]"); err == nil {
		t.Error("an id out of range was accepted")
	}
	if _, _, err := runHLM(t, "tokenize", "--model", dir); err == nil {
		t.Error("no input was accepted")
	}
}

// TestTokenizeParseSpecialFalse: --parse-special=false is
// --no-parse-special, anywhere among the arguments; --parse-special and
// =true are the default; of the two flags the last given wins.
func TestTokenizeParseSpecialFalse(t *testing.T) {
	dir := tokenizerDir(t, "")
	const text = "Hi there<|end|>"
	ids := func(args ...string) string {
		t.Helper()
		out, _, err := runHLM(t, append([]string{"tokenize", "--model", dir, "--ids"}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out
	}
	special, plain := ids(text), ids("--no-parse-special", text)
	if special == plain {
		t.Fatalf("--no-parse-special gave the ids of the default, %s", special)
	}
	for _, c := range []struct {
		args  []string
		plain bool
	}{
		{[]string{"--parse-special=false", text}, true},
		{[]string{text, "--parse-special=false"}, true},
		{[]string{"--parse-special=0", text}, true},
		{[]string{"--parse-special", text}, false},
		{[]string{"--parse-special=true", text}, false},
		{[]string{"--no-parse-special=false", text}, false},
		{[]string{"--no-parse-special", "--parse-special", text}, false},
		{[]string{"--parse-special", text, "--no-parse-special"}, true},
	} {
		want, name := special, "the default's"
		if c.plain {
			want, name = plain, "--no-parse-special's"
		}
		if got := ids(c.args...); got != want {
			t.Errorf("%v: %s, want %s %s", c.args, strings.TrimSpace(got), name, strings.TrimSpace(want))
		}
	}
	if _, _, err := runHLM(t, "tokenize", "--model", dir, "--parse-special=maybe", text); err == nil {
		t.Error("--parse-special=maybe accepted")
	}
	if _, _, err := runHLM(t, "tokenize", "--model", dir, "--no-parse-special=maybe", text); err == nil || !strings.Contains(err.Error(), "no-parse-special") {
		t.Errorf("--no-parse-special=maybe: %v, want an error naming the flag", err)
	}
}

// TestChatTemplateCommand renders a conversation exactly (no added
// newline), falls back to the plain format without a template, passes
// --chat-var, and reports a template's raised error.
func TestChatTemplateCommand(t *testing.T) {
	const tmpl = `{{ bos_token }}{% for m in messages %}{% if m['role'] == 'system' and not allow_system %}{{ raise_exception('System role not supported') }}{% endif %}` +
		`<{{ m['role'] }}>{{ m['content'] }}{{ eos_token }}{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}`
	msgs := filepath.Join(t.TempDir(), "m.json")
	os.WriteFile(msgs, []byte(`[{"role":"user","content":"Hi\n"},{"role":"assistant","content":"Hello"},{"role":"user","content":"Bye"}]`), 0o644)
	sys := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(sys, []byte(`[{"role":"system","content":"S"},{"role":"user","content":"Hi"}]`), 0o644)
	dir := tokenizerDir(t, tmpl)
	out, _, err := runHLM(t, "chat-template", "--model", dir, "--messages", msgs)
	want := "<|start|><user>Hi\n<|end|><assistant>Hello<|end|><user>Bye<|end|><assistant>"
	if err != nil || out != want {
		t.Errorf("render = %q, %v\nwant %q", out, err, want)
	}
	out, _, _ = runHLM(t, "chat-template", "--model", dir, "--messages", msgs, "--no-generation-prompt")
	if out != strings.TrimSuffix(want, "<assistant>") {
		t.Errorf("--no-generation-prompt: %q", out)
	}
	if _, _, err := runHLM(t, "chat-template", "--model", dir, "--messages", sys); err == nil || !strings.Contains(err.Error(), "System role not supported") {
		t.Errorf("raising template: %v", err)
	}
	if out, _, err := runHLM(t, "chat-template", "--model", dir, "--messages", sys, "--chat-var", "allow_system=true"); err != nil || !strings.Contains(out, "<system>S") {
		t.Errorf("--chat-var: %q, %v", out, err)
	}
	out, stderr, err := runHLM(t, "chat-template", "--model", tokenizerDir(t, ""), "--messages", msgs)
	if err != nil || out != "User: Hi\n\nAssistant: Hello\nUser: Bye\nAssistant:" || !strings.Contains(stderr, "plain") {
		t.Errorf("plain format: %q (stderr %q), %v", out, stderr, err)
	}
	out, _, err = runHLM(t, "chat-template", "--model", tokenizerDir(t, ""), "--messages", msgs, "--no-generation-prompt")
	if err != nil || out != "User: Hi\n\nAssistant: Hello\nUser: Bye\n" {
		t.Errorf("plain format, --no-generation-prompt: %q, %v", out, err)
	}
}

// TestTokenizeBuiltin: tokenize, detokenize and chat-template take a
// built-in model (builtin:NAME, a model spec like any other) and default to
// the built-in stories260K, so that they work after go install with nothing
// beside hlm; --pieces prints "<s>" as written, not JSON's "\u003cs\u003e".
func TestTokenizeBuiltin(t *testing.T) {
	msgs := filepath.Join(t.TempDir(), "m.json")
	os.WriteFile(msgs, []byte(`[{"role":"user","content":"Hi"}]`), 0o644)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"builtin spec", []string{"tokenize", "--model", "builtin:stories260K", "--ids", "Once upon"}, "[1, 403, 407]\n"},
		{"default model", []string{"tokenize", "--ids", "Once upon"}, "[1, 403, 407]\n"},
		{"draft spec", []string{"tokenize", "--model", "builtin:stories260K-draft", "--ids", "Once upon"}, "[1, 403, 407]\n"},
		{"special token parsed", []string{"tokenize", "--ids", "--no-bos", "<s>Once"}, "[1, 403]\n"},
		{"pieces unescaped", []string{"tokenize", "--pieces", "<s>"}, "[\"<s>\",\"<s>\"]\n"},
		{"detokenize default", []string{"detokenize", "1, 403, 407"}, "Once upon"},
		{"detokenize words", []string{"detokenize", "1", "403", "407"}, "Once upon"},
		{"tokenize words", []string{"tokenize", "--ids", "Once", "upon"}, "[1, 403, 407]\n"},
		{"flags after the text", []string{"tokenize", "Once upon", "--ids"}, "[1, 403, 407]\n"},
		{"flags between words", []string{"tokenize", "Once", "--ids", "upon"}, "[1, 403, 407]\n"},
		{"-- before a text like a flag", []string{"tokenize", "--ids", "--no-bos", "--", "--ids"}, "[410, 464, 464, 292, 419]\n"},
		{"detokenize flags after", []string{"detokenize", "1, 403, 407", "--special"}, "<s> Once upon"},
		{"chat-template default", []string{"chat-template", "--messages", msgs}, "User: Hi\nAssistant:"},
	} {
		out, _, err := runHLM(t, c.args...)
		if err != nil || out != c.want {
			t.Errorf("%s: hlm %s = %q, %v; want %q", c.name, strings.Join(c.args, " "), out, err, c.want)
		}
	}
}

// TestChatMessagesChecked: a message with an unknown role or a user message
// without content is refused (the plain format and templates dropped it).
func TestChatMessagesChecked(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ json, want string }{
		{`[{"role":"usr","content":"Tell me a story"}]`, `role "usr"`},
		{`[{"role":"system","content":"Be brief."},{"role":"user","text":"Hi"}]`, `message 2 (user) has no "content"`},
	} {
		f := filepath.Join(dir, "m.json")
		os.WriteFile(f, []byte(c.json), 0o644)
		for _, cmd := range [][]string{{"chat-template", "--messages", f}, {"generate", "--chat", "--messages", f, "--max-tokens", "1"}} {
			if _, _, err := runHLM(t, cmd...); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("hlm %s on %s: %v; want %q", strings.Join(cmd, " "), c.json, err, c.want)
			}
		}
	}
}

// TestLlamaLibUnused: --llama-lib with no @llama.cpp spec says that the
// library is not used (a deployer may think the flag alone switches the
// engine), and says nothing when a spec uses it.
func TestLlamaLibUnused(t *testing.T) {
	keepLlamaLib(t)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"generate", "--llama-lib", "/nope/libllama.so", "--max-tokens", "1", "--prompt", "Hi"}, &out, &errb)
	if code != 0 || !strings.Contains(errb.String(), "--llama-lib is given, but no model spec here ends in @llama.cpp") {
		t.Errorf("exit %d, stderr %q; want the notice", code, errb.String())
	}
	errb.Reset()
	run(context.Background(), []string{"generate", "--llama-lib", "/nope/libllama.so", "--model", "m.gguf@llama.cpp", "--max-tokens", "1", "--prompt", "Hi"}, &out, &errb)
	if strings.Contains(errb.String(), "no model spec here") {
		t.Errorf("with a llama.cpp spec: %q", errb.String())
	}
}

// TestReplicaThreadEnv: loadtest's replicas of a llama.cpp LLM sleep
// instead of spinning unless OMP_WAIT_POLICY says otherwise; hlm's own
// engine gets nothing.
func TestReplicaThreadEnv(t *testing.T) {
	t.Setenv("OMP_WAIT_POLICY", "")
	if env, ok := replicaThreadEnv("m.gguf@llama.cpp@np=8"); !ok || env != "OMP_WAIT_POLICY=PASSIVE" {
		t.Errorf("llama.cpp LLM: %q, %v", env, ok)
	}
	if _, ok := replicaThreadEnv("builtin:stories260K"); ok {
		t.Error("hlm's engine got an OpenMP setting")
	}
	t.Setenv("OMP_WAIT_POLICY", "ACTIVE")
	if _, ok := replicaThreadEnv("m.gguf@llama.cpp"); ok {
		t.Error("the user's OMP_WAIT_POLICY was overridden")
	}
}

// TestSimNamesModels: hlm sim's summary and JSON say which models ran,
// the draft found for the LLM included (an engine is part of the spec).
func TestSimNamesModels(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"sim", "--max-tokens", "2"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "models: LLM builtin:stories260K, SLM builtin:stories260K-draft") {
		t.Errorf("summary without the models:\n%s", errb.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"sim", "--method", "llm", "--max-tokens", "2", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var got struct{ LLM, SLM, Method string }
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.LLM != "builtin:stories260K" || got.SLM != "" || got.Method != "llm" {
		t.Errorf("JSON %+v (%v): want the LLM named and no SLM for the llm method", got, err)
	}
}

// TestLoadingNotice: a load that outlasts loadingAfter is announced and
// timed; a quick one says nothing.
func TestLoadingNotice(t *testing.T) {
	var buf bytes.Buffer
	old, oldAfter := notices, loadingAfter
	notices, loadingAfter = &buf, 20*time.Millisecond
	t.Cleanup(func() { notices, loadingAfter = old, oldAfter })
	done := loadingNotice("a big model")
	time.Sleep(100 * time.Millisecond)
	done()
	done()
	if got := buf.String(); !strings.Contains(got, "hlm: loading a big model …\n") || strings.Count(got, "loaded in") != 1 {
		t.Errorf("slow load: %q", got)
	}
	buf.Reset()
	loadingAfter = time.Hour
	loadingNotice("a small model")()
	if buf.Len() != 0 {
		t.Errorf("quick load: %q", buf.String())
	}
}
