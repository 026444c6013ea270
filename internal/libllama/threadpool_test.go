package libllama

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"unsafe"
)

// TestThreadpoolLayoutCheck feeds the threadpool layout check the writes
// of a library whose ggml_threadpool_params grew or moved a field: each
// is refused, and the pinned layout passes.
func TestThreadpoolLayoutCheck(t *testing.T) {
	write := func(extent, pollAt int) func(p *byte, n int32) {
		return func(p *byte, n int32) {
			b := unsafe.Slice(p, 1024)
			for i := range extent {
				b[i] = 0
			}
			b[tpNThreads] = byte(n)
			b[pollAt] = 50
		}
	}
	for _, tc := range []struct {
		name   string
		f      func(*byte, int32)
		wantOK bool
	}{
		{"pinned", write(tpExtent, tpPoll), true},
		{"grown", write(tpExtent+4, tpPoll), false},
		{"poll moved", write(tpExtent, tpPoll+4), false},
	} {
		l := &Lib{}
		l.f.tpParamsInit = tc.f
		err := l.checkThreadpoolLayout()
		if tc.wantOK != (err == nil) || err != nil && !errors.Is(err, ErrVersion) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestUseThreadpool: a context decodes the same logits with a threadpool
// attached (replacing one of another size) as without (ggml's pool per
// graph), each decode called from another goroutine; impossible sizes
// are refused.
func TestUseThreadpool(t *testing.T) {
	l := testLib(t)
	m, err := l.LoadModel(filepath.Join("..", "..", "model", "llama", "testdata", "families", "qwen3.gguf"), l.ModelDefaults(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	logits := func(pool int) []float32 {
		p := l.ContextDefaults()
		p.NCtx, p.NThreads, p.NThreadsBatch = 256, 2, 2
		c, err := m.NewContext(p)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Free()
		if (c.thread != nil) != l.OpenMP() {
			t.Fatalf("OpenMP %v, a decoding thread of its own %v", l.OpenMP(), c.thread != nil)
		}
		if pool > 0 {
			if err := c.UseThreadpool(4, 0); err != nil {
				t.Fatal(err)
			}
			if err := c.UseThreadpool(pool, 0); err != nil {
				t.Fatal(err)
			}
		}
		// Each decode from a goroutine of its own: the calls reach
		// llama.cpp from whatever thread the scheduler gives them.
		for pos, tok := range []int32{1, 5, 9, 2} {
			done := make(chan error)
			go func() { done <- c.Decode([]Token{{ID: tok, Pos: int32(pos), Logits: true}}) }()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		r, err := c.Logits(0)
		if err != nil {
			t.Fatal(err)
		}
		out := slices.Clone(r)
		for _, bad := range [][2]int{{0, 0}, {513, 0}, {2, -1}, {2, 101}} {
			if err := c.UseThreadpool(bad[0], bad[1]); err == nil {
				t.Errorf("UseThreadpool(%d, %d) accepted", bad[0], bad[1])
			}
		}
		return out
	}
	want := logits(0)
	for _, pool := range []int{2, 3} {
		if got := logits(pool); !slices.Equal(got, want) {
			t.Fatalf("a threadpool of %d threads changed the logits", pool)
		}
	}
}
