package engine

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/hlmproject/hlm/internal/libllama"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/model/llamacpp"
)

// TestOpen: each spec reaches its engine.
func TestOpen(t *testing.T) {
	file := filepath.Join("..", "llama", "testdata", "families", "qwen3.gguf")
	m, err := OpenSpec(file, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.(*llama.Model); !ok {
		t.Errorf("%s opened as %T, want hlm's engine", file, m)
	}
	m, err = OpenSpec(file+"@llama.cpp@c=64", "")
	if _, ok := llamacpp.LibraryPath(); !ok {
		if !errors.Is(err, libllama.ErrLibrary) {
			t.Errorf("without a library: %v, want ErrLibrary", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.(*llamacpp.Model); !ok {
		t.Errorf("%s@llama.cpp opened as %T, want llama.cpp's", file, m)
	}
	if _, err := OpenSpec(file+"@np=2", ""); err == nil {
		t.Error("a llama.cpp option without @llama.cpp was accepted")
	}
}
