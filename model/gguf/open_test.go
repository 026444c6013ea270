package gguf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// mmapPlatform reports whether Open maps files on this platform; it must
// agree with the build tags of mmap_unix.go.
func mmapPlatform() bool {
	return slices.Contains([]string{"darwin", "dragonfly", "freebsd", "linux", "netbsd", "openbsd"}, runtime.GOOS)
}

// sampleFile returns a small model-like file with a tokenizer and tensors
// of several types, with embedding width dim, a multiple of 32.
func sampleFile(t testing.TB, dim uint64) []byte {
	t.Helper()
	w := NewWriter()
	w.AddString(KeyArchitecture, "llama")
	w.AddUint32("llama.context_length", 256)
	w.AddUint32("llama.embedding_length", uint32(dim))
	w.AddFloat32("llama.attention.layer_norm_rms_epsilon", 1e-5)
	w.AddString("tokenizer.ggml.model", "llama")
	w.AddStrings("tokenizer.ggml.tokens", []string{"<unk>", "<s>", "</s>", "▁a"})
	w.AddFloat32s("tokenizer.ggml.scores", []float32{0, 0, 0, -1.5})
	w.AddInt32s("tokenizer.ggml.token_type", []int32{2, 3, 3, 1})
	w.AddTensor("token_embd.weight", []uint64{dim, 4}, F32, randomBytes(1, dim*4*4))
	w.AddTensor("blk.0.attn_q.weight", []uint64{dim, dim}, Q8_0, randomBytes(2, dim/32*dim*34))
	w.AddTensor("blk.0.ffn_up.weight", []uint64{dim, 3}, F16, randomBytes(3, dim*3*2))
	w.AddTensor("output_norm.weight", []uint64{dim}, F32, randomBytes(4, dim*4))
	return encode(t, w)
}

func TestOpen(t *testing.T) {
	b := sampleFile(t, 64)
	path := filepath.Join(t.TempDir(), "model.gguf")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}

	mapped, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer mapped.Close()
	read, err := open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer read.Close()
	if mapped.Mapped() != mmapPlatform() || read.Mapped() {
		t.Errorf("Mapped() = %v and %v, want %v and false", mapped.Mapped(), read.Mapped(), mmapPlatform())
	}
	parsed := parseBytes(t, b)

	for _, f := range []*File{read, parsed} {
		if f.Version != mapped.Version || f.Alignment != mapped.Alignment || f.DataOffset != mapped.DataOffset || f.Size != mapped.Size {
			t.Errorf("header: %d %d %d %d vs mapped %d %d %d %d", f.Version, f.Alignment, f.DataOffset, f.Size,
				mapped.Version, mapped.Alignment, mapped.DataOffset, mapped.Size)
		}
		if !slices.EqualFunc(f.Metadata, mapped.Metadata, func(a, b KV) bool { return a.Key == b.Key && a.Value.Equal(b.Value) }) {
			t.Errorf("metadata differs:\n%v\n%v", f.Metadata, mapped.Metadata)
		}
		if !slices.EqualFunc(f.Tensors, mapped.Tensors, func(a, b TensorInfo) bool {
			return a.Name == b.Name && slices.Equal(a.Dims, b.Dims) && a.Type == b.Type && a.Offset == b.Offset
		}) {
			t.Errorf("tensors differ:\n%v\n%v", f.Tensors, mapped.Tensors)
		}
		for _, ti := range mapped.Tensors {
			want, err1 := mapped.TensorData(ti.Name)
			got, err2 := f.TensorData(ti.Name)
			if err1 != nil || err2 != nil || !bytes.Equal(got, want) || uint64(len(got)) != ti.NumBytes() {
				t.Errorf("TensorData(%q): %d bytes, %v; mapped %d bytes, %v", ti.Name, len(got), err2, len(want), err1)
			}
			if cap(want) != len(want) {
				t.Errorf("TensorData(%q) of the mapping has spare capacity %d", ti.Name, cap(want)-len(want))
			}
		}
	}

	for _, f := range []*File{mapped, read} {
		if err := f.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := f.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if _, err := f.TensorData("token_embd.weight"); !errors.Is(err, ErrClosed) {
			t.Errorf("TensorData after Close: %v", err)
		}
		if f.Architecture() != "llama" {
			t.Error("metadata lost after Close")
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing.gguf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	for name, content := range map[string][]byte{
		"empty.gguf":     nil,
		"truncated.gguf": sampleFile(t, 64)[:100],
		"text.gguf":      []byte("this is not a model file, just some text"),
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, useMmap := range []bool{true, false} {
			if _, err := open(path, useMmap); !errors.Is(err, ErrFormat) {
				t.Errorf("%s (mmap %v): %v, want ErrFormat", name, useMmap, err)
			}
		}
	}
}

// TestRelease: a released tensor of a mapped file reads back the same
// bytes (its pages come back from the file), and Release ignores what is
// not of the mapping (another slice, a file read without mapping, a closed
// file).
func TestRelease(t *testing.T) {
	b := sampleFile(t, 1024) // attn_q: 1024 × 1024 Q8_0, 1.1 MB: whole pages
	path := filepath.Join(t.TempDir(), "model.gguf")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, useMmap := range []bool{true, false} {
		f, err := open(path, useMmap)
		if err != nil {
			t.Fatal(err)
		}
		for _, ti := range f.Tensors {
			data, err := f.TensorData(ti.Name)
			if err != nil {
				t.Fatal(err)
			}
			want := bytes.Clone(data)
			f.Release(data)
			if !bytes.Equal(data, want) {
				t.Fatalf("mapped %v: %s changed after Release", useMmap, ti.Name)
			}
		}
		f.Release(make([]byte, 10000)) // not of the mapping
		f.Release(nil)
		data, _ := f.TensorData("blk.0.attn_q.weight")
		want := bytes.Clone(data)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		f.Release(want) // closed: nothing happens
	}
}
