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

// loadTestModel loads the 2-layer test model of hlm's families.
func loadTestModel(t *testing.T, l *Lib) *Model {
	t.Helper()
	m, err := l.LoadModel(filepath.Join("..", "..", "model", "llama", "testdata", "families", "qwen3.gguf"), l.ModelDefaults(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// newTestContext makes a context of 256 positions on 2 threads.
func newTestContext(t *testing.T, l *Lib, m *Model) *Context {
	t.Helper()
	p := l.ContextDefaults()
	p.NCtx, p.NThreads, p.NThreadsBatch = 256, 2, 2
	c, err := m.NewContext(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// decodeFour decodes four tokens one by one, each from a goroutine of its
// own (whatever thread the scheduler gives it), and returns the last
// logits.
func decodeFour(t *testing.T, c *Context) []float32 {
	t.Helper()
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
	return slices.Clone(r)
}

// TestUseThreadpool: a context decodes the same logits with a threadpool
// attached (replacing one of another size) as without (ggml's pool per
// graph); impossible sizes are refused; an OpenMP build's context, and
// only it, has a decoding thread of its own.
func TestUseThreadpool(t *testing.T) {
	l := testLib(t)
	m := loadTestModel(t, l)
	defer m.Free()
	logits := func(pool int) []float32 {
		c := newTestContext(t, l, m)
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
		for _, bad := range [][2]int{{0, 0}, {513, 0}, {2, -1}, {2, 101}} {
			if err := c.UseThreadpool(bad[0], bad[1]); err == nil {
				t.Errorf("UseThreadpool(%d, %d) accepted", bad[0], bad[1])
			}
		}
		return decodeFour(t, c)
	}
	want := logits(0)
	for _, pool := range []int{2, 3} {
		if got := logits(pool); !slices.Equal(got, want) {
			t.Fatalf("a threadpool of %d threads changed the logits", pool)
		}
	}
}
