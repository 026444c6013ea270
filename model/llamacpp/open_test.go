package llamacpp

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/internal/libllama"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/tensor"
)

// TestConvertedFileFindsItsOrigin: a file hlm convert wrote records the
// origin of its weights; on llama.cpp it keeps it (so the draft hlm ships
// for the model is found), while its fingerprint stays llama.cpp's own.
func TestConvertedFileFindsItsOrigin(t *testing.T) {
	needLib(t)
	src, err := llama.OpenSpec(builtin.DefaultLLM, "")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.gguf")
	var buf bytes.Buffer
	if _, err := llama.WriteGGUF(&buf, src, tensor.F32, "s", llama.Meta{Key: model.OriginKey, Value: src.WeightsOrigin()}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := OpenSpec(path+"@llama.cpp"+onDevice(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got, want := model.OriginOf(m), model.OriginOf(src); got != want || m.Fingerprint() == want {
		t.Errorf("origin %s, fingerprint %s; want the origin %s and another fingerprint", got, m.Fingerprint(), want)
	}
	if _, ok := builtin.DraftFor(model.OriginOf(m)); !ok {
		t.Error("no shipped draft found for the converted file on llama.cpp")
	}
}

// TestGPUOptionsWithoutGPU: GPU options on a library without a GPU or RPC
// device are reported through Notify (they would do nothing silently),
// and nothing is reported without them.
func TestGPUOptionsWithoutGPU(t *testing.T) {
	needLib(t)
	if os.Getenv("HLM_TEST_NGL") != "" {
		t.Skip("HLM_TEST_NGL: a GPU library")
	}
	var got []string
	Notify = func(m string) { got = append(got, m) }
	t.Cleanup(func() { Notify = nil })
	m := openLC(t, "qwen3.gguf", "@c=64@np=1@t=1@ts=3,1")
	if len(m.Accelerators()) > 0 {
		t.Skipf("the library sees %v", m.Accelerators())
	}
	if len(got) != 1 || !strings.Contains(got[0], "have no effect") {
		t.Errorf("notices %q; want one saying the GPU options have no effect", got)
	}
	got = nil
	openLC(t, "qwen3.gguf", "@c=64@np=1@t=2")
	if len(got) != 0 {
		t.Errorf("without GPU options: %q", got)
	}
}

// TestLoadModes: every load mode a spec accepts (lm) has its value of
// enum llama_load_mode, and no other is known.
func TestLoadModes(t *testing.T) {
	if len(model.LlamaCppLoadModes) != len(libllama.LoadModes) {
		t.Errorf("spec load modes %q, library's %v", model.LlamaCppLoadModes, libllama.LoadModes)
	}
	for i, name := range model.LlamaCppLoadModes {
		v, ok := libllama.LoadModes[name]
		if !ok || v != int32(i-1) { // llama.h: AUTO = -1, NONE = 0, … in this order
			t.Errorf("lm=%s: enum value %d (known %v), want %d", name, v, ok, i-1)
		}
	}
}
