package llamacpp

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hlmproject/hlm/internal/libllama"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/tensor"
)

// TestBadLibrary: a file that is not a library, a missing one, and none
// at all are errors that say how to get one.
func TestBadLibrary(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "libllama.so")
	os.WriteFile(text, []byte("#!/bin/sh\n"), 0o755)
	defer SetLibrary("")
	for _, p := range []string{text, filepath.Join(dir, "missing.so")} {
		SetLibrary(p)
		_, err := OpenSpec(filepath.Join(familiesDir, "llama2.gguf"), "")
		if !errors.Is(err, libllama.ErrLibrary) && !errors.Is(err, libllama.ErrUnavailable) {
			t.Errorf("library %s: %v, want ErrLibrary", p, err)
		} else if errors.Is(err, libllama.ErrLibrary) && !strings.Contains(err.Error(), "--llama-lib names "+p) {
			t.Errorf("library %s: %v: the error should say where the path came from and how to give one", p, err)
		}
	}
	SetLibrary("")
	t.Setenv(EnvLibrary, filepath.Join(dir, "missing.so"))
	if _, err := OpenSpec(filepath.Join(familiesDir, "llama2.gguf"), ""); err == nil || !strings.Contains(err.Error(), "$"+EnvLibrary+" names ") {
		t.Errorf("a library from $%s: %v: the error should name the variable", EnvLibrary, err)
	}
	SetLibrary("")
	t.Setenv(EnvLibrary, "")
	t.Setenv("HLM_PEERS", dir)
	t.Setenv("HOME", dir)
	if _, ok := LibraryPath(); ok {
		t.Fatal("a library was found in an empty home")
	}
	_, err := OpenSpec(filepath.Join(familiesDir, "llama2.gguf"), "")
	if !errors.Is(err, libllama.ErrLibrary) || !strings.Contains(err.Error(), "internal/libllama/build.sh") {
		t.Errorf("no library: %v, want ErrLibrary naming the build script", err)
	}
}

// TestBadModels: files llama.cpp or hlm cannot use, a tokenizer that does
// not agree, and contexts out of range are errors, not crashes.
func TestBadModels(t *testing.T) {
	needLib(t)
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(familiesDir, "llama2.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	trunc := filepath.Join(dir, "trunc.gguf")
	os.WriteFile(trunc, src[:len(src)/2], 0o644)
	header := filepath.Join(dir, "header.gguf")
	os.WriteFile(header, src[:64], 0o644)
	notGGUF := filepath.Join(dir, "model.bin")
	os.WriteFile(notGGUF, []byte("llama2.c checkpoint, say"), 0o644)
	// OPT in GGUF with hlm's own keys: hlm runs it, llama.cpp does not.
	opt, err := llama.OpenSpec(filepath.Join(familiesDir, "opt_pre"), "")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := llama.WriteGGUF(&buf, opt, tensor.F32, "opt"); err != nil {
		t.Fatal(err)
	}
	optFile := filepath.Join(dir, "opt.gguf")
	os.WriteFile(optFile, buf.Bytes(), 0o644)
	fam := func(f string) string { return filepath.Join(familiesDir, f) }
	// llama2.gguf with one token's text changed (same length), read with
	// the original's tokenizer: llama.cpp and hlm disagree on one token.
	tok, err := llama.LoadTokenizer(fam("llama2.gguf"), 0)
	if err != nil {
		t.Fatal(err)
	}
	altered := filepath.Join(dir, "altered.gguf")
	for i := tok.VocabSize() - 1; i >= 0; i-- {
		p := []byte(tok.Piece(i))
		if last := len(p) - 1; len(p) >= 4 && bytes.Count(src, p) == 1 && p[last] >= 'a' && p[last] < 'z' {
			b := bytes.Clone(src)
			b[bytes.Index(b, p)+last]++
			os.WriteFile(altered, b, 0o644)
			break
		}
	}
	for _, tc := range []struct {
		name, spec, tok, want string
	}{
		{"truncated GGUF", trunc, "", "malformed file"},
		{"GGUF header only", header, "", ""},
		{"not GGUF", notGGUF, "", "reads GGUF only"},
		{"built-in model", "builtin:stories260K@llama.cpp", "", "write it to a file first"},
		{"missing", filepath.Join(dir, "none.gguf"), "", "no such file"},
		{"architecture llama.cpp lacks", optFile, "", "could not load"},
		{"one token's text changed", altered, fam("llama2.gguf"), "tokenizer mismatch: token"},
		{"tokenizer of another size", fam("llama2.gguf"), "../../../shared/models/gpt2-tokenizer", "tokens"},
		{"context past training", fam("llama2.gguf") + "@llama.cpp@c=100000", "", "trained on"},
		{"slots out of range", fam("llama2.gguf") + "@llama.cpp@np=257", "", "np wants"},
		{"context out of range", fam("llama2.gguf") + "@llama.cpp@c=0", "", "c wants"},
	} {
		if strings.Contains(tc.tok, "shared") {
			if _, err := os.Stat(tc.tok); err != nil {
				continue
			}
		}
		m, err := OpenSpec(tc.spec, tc.tok)
		if err == nil {
			m.Close()
			t.Errorf("%s: opened", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want it to say %q", tc.name, err, tc.want)
		}
		t.Logf("%s: %v", tc.name, err)
	}
}

// TestRefusals: what needs hlm's engine says so.
func TestRefusals(t *testing.T) {
	m := openLC(t, "llama2.gguf", "@c=64")
	s := m.NewSession()
	s.SetCapture(model.CaptureLastLayer)
	if _, err := s.Eval([]int{1, 2}); !errors.Is(err, ErrNoAttention) || !strings.Contains(err.Error(), "attention") {
		t.Errorf("attention capture: %v, want ErrNoAttention", err)
	}
	s.SetCapture(model.CaptureNone)
	if _, err := s.Eval([]int{1, 2}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(interface{ SetDropout(float64, any) }); ok {
		t.Error("the session offers dropout")
	}
	for _, spec := range []string{"m.gguf@llama.cpp@exit=1", "m.gguf@llama.cpp@q8"} {
		if _, err := OpenSpec(spec, ""); err == nil || !strings.Contains(err.Error(), "hlm's engine") {
			t.Errorf("%s: %v, want a refusal naming hlm's engine", spec, err)
		}
	}
	if _, err := llama.OpenSpec(filepath.Join(familiesDir, "llama2.gguf")+"@llama.cpp", ""); err == nil || !strings.Contains(err.Error(), "hlm's own engine") {
		t.Errorf("hlm's engine given a llama.cpp spec: %v", err)
	}
}

// TestBadEvaluations: tokens out of range, a full context, a session
// twice in a batch and another model's session are errors that leave
// every session as it was.
func TestBadEvaluations(t *testing.T) {
	m := openLC(t, "llama2.gguf", "@c=16@np=2")
	other := openLC(t, "qwen2.gguf", "@c=16")
	s := m.NewSession()
	if _, err := s.Eval([]int{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    func() error
	}{
		{"token out of range", func() error { _, err := s.Eval([]int{m.Config().Vocab}); return err }},
		{"negative token", func() error { _, err := s.Eval([]int{-1}); return err }},
		{"empty block", func() error { _, err := s.Eval(nil); return err }},
		{"context full", func() error { _, err := s.Eval(make([]int, 14)); return err }},
		{"twice in a batch", func() error { _, err := m.EvalBatch([]model.Session{s, s}, [][]int{{1}, {2}}); return err }},
		{"another model's session", func() error {
			_, err := m.EvalBatch([]model.Session{s, other.NewSession()}, [][]int{{1}, {2}})
			return err
		}},
		{"truncate past the end", func() error { return s.Truncate(4) }},
		{"truncate below zero", func() error { return s.Truncate(-1) }},
	} {
		if err := tc.f(); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
		if s.Len() != 3 {
			t.Fatalf("%s: the session has %d positions, want 3", tc.name, s.Len())
		}
	}
	if _, err := s.Eval(make([]int, 14)); !errors.Is(err, model.ErrContextFull) {
		t.Errorf("context full: want ErrContextFull")
	}
}

// TestDecodeFailures: whatever llama_decode returns (1 no KV slot, 2
// aborted, -1 invalid batch, < -1 fatal; here after it stored the batch,
// as a failed micro-batch leaves the ones before it), the batch's sessions
// are as before and evaluate as if it never happened, and the others are
// untouched. Code 2 also comes from a real abort.
func TestDecodeFailures(t *testing.T) {
	m := openLC(t, "llama32.gguf", "@c=64@np=4")
	g := readGolden(t, "llama32_golden.bin")
	fresh := openLC(t, "llama32.gguf", "@c=64@np=4")
	want := func(prefix, block []int) [][]float32 {
		s := fresh.NewSession()
		if _, err := s.Eval(prefix); err != nil {
			t.Fatal(err)
		}
		r, err := s.Eval(block)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	block := []int{5, 6, 7, 8}
	a, b, c := m.NewSession(), m.NewSession(), m.NewSession()
	for _, s := range []model.Session{a, b, c} {
		if _, err := s.Eval(g.ids[:8]); err != nil {
			t.Fatal(err)
		}
	}
	cRows, err := c.Eval(block)
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []int32{1, 2, -1, -3} {
		m.testRC = func(err error) error {
			if err != nil {
				return err
			}
			return &libllama.DecodeError{Code: code}
		}
		_, err := m.EvalBatch([]model.Session{a, b}, [][]int{block, block[:2]})
		m.testRC = nil
		var de *libllama.DecodeError
		if !errors.As(err, &de) || de.Code != code {
			t.Fatalf("code %d: %v", code, err)
		}
		if code == 1 && !errors.Is(err, model.ErrContextFull) {
			t.Errorf("code 1 is not ErrContextFull: %v", err)
		}
		if a.Len() != 8 || b.Len() != 8 || c.Len() != 12 {
			t.Fatalf("code %d: lengths %d, %d, %d; want 8, 8, 12", code, a.Len(), b.Len(), c.Len())
		}
	}
	// A real abort: llama.cpp stops between graph nodes and returns 2.
	m.ctx.SetAbort(func() bool { return true })
	_, err = m.EvalBatch([]model.Session{a, b}, [][]int{block, block[:2]})
	m.ctx.SetAbort(nil)
	if de := (*libllama.DecodeError)(nil); !errors.As(err, &de) || de.Code != 2 {
		t.Fatalf("abort: %v, want code 2", err)
	}
	if a.Len() != 8 || b.Len() != 8 {
		t.Fatalf("abort: lengths %d, %d; want 8, 8", a.Len(), b.Len())
	}
	out, err := m.EvalBatch([]model.Session{a, b}, [][]int{block, block[:2]})
	if err != nil {
		t.Fatal(err)
	}
	if !sameRows(out[0], want(g.ids[:8], block)) || !sameRows(out[1], want(g.ids[:8], block[:2])) {
		t.Error("after the failures the sessions evaluate differently from fresh ones")
	}
	again, err := c.Eval([]int{9})
	if err != nil {
		t.Fatal(err)
	}
	if !sameRows(cRows, want(g.ids[:8], block)) || !sameRows(again, want(append(append([]int(nil), g.ids[:8]...), block...), []int{9})) {
		t.Error("the session outside the failing batches changed")
	}
}

// TestMoreSessionsThanSlots: twice as many sessions as slots all finish,
// with the logits they have with a slot each.
func TestMoreSessionsThanSlots(t *testing.T) {
	small := openLC(t, "qwen3.gguf", "@c=96@np=2")
	big := openLC(t, "qwen3.gguf", "@c=96@np=4")
	sc := defaultScript(t, "qwen3_golden")
	if got, want := sc.play(t, small, true, false), sc.play(t, big, true, false); !sameRows(got, want) {
		t.Error("batched, 4 sessions on 2 slots: logits differ from 4 slots")
	}
	st := small.Stats()
	if st.Evictions == 0 || st.Restores == 0 {
		t.Errorf("stats %+v: expected evictions and restores", st)
	}
}

// TestDroppedSessionFreesItsSequence: a session closed, or dropped and
// collected, gives its llama.cpp sequence back.
func TestDroppedSessionFreesItsSequence(t *testing.T) {
	m := openLC(t, "llama2.gguf", "@c=32@np=2")
	busy := func() int {
		m.mu.Lock()
		defer m.mu.Unlock()
		n := 0
		for _, s := range m.slots {
			if s != nil {
				n++
			}
		}
		return n
	}
	func() {
		a, b := m.NewSession(), m.NewSession()
		a.Eval([]int{1, 2})
		b.Eval([]int{1, 2})
		if busy() != 2 {
			t.Fatalf("%d sequences in use, want 2", busy())
		}
		a.(*Session).Close()
		if busy() != 1 {
			t.Fatalf("after Close: %d sequences in use, want 1", busy())
		}
	}()
	for i := 0; i < 50 && busy() > 0; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if busy() != 0 {
		t.Fatalf("a dropped session still holds its sequence")
	}
	before := m.Stats().Evictions
	c, d := m.NewSession(), m.NewSession()
	c.Eval([]int{3})
	d.Eval([]int{4})
	if m.Stats().Evictions != before {
		t.Error("new sessions evicted where free sequences should have been")
	}
}
