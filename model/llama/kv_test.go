package llama

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
)

// halfCache is m's view with both caches in half precision.
func halfCache(tb testing.TB, m *Model) *Model { return cacheView(tb, m, "f16") }

// q8Cache is m's view with both caches in Q8_0 blocks.
func q8Cache(tb testing.TB, m *Model) *Model { return cacheView(tb, m, "q8_0") }

// cacheView is m's view with both caches of type typ.
func cacheView(tb testing.TB, m *Model, typ string) *Model {
	tb.Helper()
	h, err := m.WithCacheTypes(typ, typ)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// cacheTypes are the cache types other than float32, with how far each
// may move a logit (of the largest logit's magnitude) and the bytes it
// holds per 128 bytes of float32.
var cacheTypes = []struct {
	typ      string
	tol      float64
	per128   int64
	headSize int // the head sizes it takes are its multiples
}{
	{"f16", 0.01, 64, 1},
	{"q8_0", 0.05, 34, tensor.QK},
}

// halfCacheModels: head sizes of 8 (stories260K: every kernel's Go tail),
// 16, 32, 64 and 128 (whole vectors at both levels), with grouped queries,
// sliding windows and soft-caps (Gemma 2), and QK norms (Qwen3). Q8_0
// caches take those of 32, 64 and 128.
var halfCacheModels = []struct {
	name string
	open func(testing.TB) *Model
}{
	{"stories260K", builtinModel("")},
	{"qwen3", familyModel("qwen3.gguf")},
	{"gemma2", familyModel("gemma2.gguf")},
	{"random hs=64", func(tb testing.TB) *Model {
		return randomModel(tb, model.Config{Dim: 256, Hidden: 384, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 300, SeqLen: 96}, 5)
	}},
	{"random hs=128", func(tb testing.TB) *Model {
		return randomModel(tb, model.Config{Dim: 256, Hidden: 256, Layers: 2, Heads: 2, KVHeads: 1, Vocab: 300, SeqLen: 96}, 6)
	}},
}

// TestCacheTypesClose: a half cache (ctk=f16, ctv=f16) holds half the
// memory and a Q8_0 cache 34/128 of it; each changes the logits (so it is
// in effect), and keeps them within its tolerance (cacheTypes: 1% and 5%)
// of the largest logit magnitude of the float32 cache's, with the same
// greedy choice wherever the float32 cache's top two are that far apart. A
// Q8_0 cache is refused for a head size it cannot take.
func TestCacheTypesClose(t *testing.T) {
	for _, ct := range cacheTypes {
		for _, tm := range halfCacheModels {
			t.Run(ct.typ+"/"+tm.name, func(t *testing.T) {
				m := tm.open(t)
				if hs := m.cfg.HeadSize(); hs%ct.headSize != 0 {
					if _, err := m.WithCacheTypes(ct.typ, ""); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("this model's is %d: use f16", hs)) {
						t.Fatalf("ctk=%s with head size %d: %v", ct.typ, hs, err)
					}
					return
				}
				closeCache(t, m, ct.typ, ct.tol, ct.per128)
			})
		}
	}
}

// closeCache is TestCacheTypesClose for one model and type.
func closeCache(t *testing.T, m *Model, typ string, tol float64, per128 int64) {
	h := cacheView(t, m, typ)
	if k, v := h.CacheTypes(); k != typ || v != typ {
		t.Fatalf("CacheTypes() = %s, %s", k, v)
	}
	if got, want := h.KVBytes(100), m.KVBytes(100)/128*per128; got != want {
		t.Fatalf("KVBytes(100) = %d with a %s cache, want %d", got, typ, want)
	}
	if h.Fingerprint() == m.Fingerprint() {
		t.Fatalf("a %s cache's fingerprint equals the float32 cache's: their logits differ", typ)
	}
	if h.Origin() != m.Origin() || h.WeightsOrigin() != m.WeightsOrigin() {
		t.Fatalf("a %s cache's origin differs from its weights'", typ)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	n := min(48, m.cfg.SeqLen)
	toks := make([]int, n)
	for i := range toks {
		toks[i] = rng.IntN(m.cfg.Vocab)
	}
	sf, sh := m.Session(), h.Session()
	want, err := sf.Eval(toks)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sh.Eval(toks)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sh.KVBytes(), sf.KVBytes()/128*per128; got != want {
		t.Fatalf("Session.KVBytes() = %d with a %s cache, want %d", got, typ, want)
	}
	differ, worst := false, 0.0
	for i := range want {
		scale, top, second := 0.0, -1, -1
		for j, x := range want[i] {
			scale = max(scale, math.Abs(float64(x)))
			if top < 0 || x > want[i][top] {
				top, second = j, top
			} else if second < 0 || x > want[i][second] {
				second = j
			}
		}
		for j := range want[i] {
			d := math.Abs(float64(got[i][j] - want[i][j]))
			differ = differ || d > 0
			worst = max(worst, d/scale)
		}
		if float64(want[i][top]-want[i][second]) > tol*scale && argmax(got[i]) != top {
			t.Errorf("position %d: greedy %d with a %s cache, %d with float32 (margin %.3g of %.3g)", i, argmax(got[i]), typ, top, want[i][top]-want[i][second], scale)
		}
	}
	t.Logf("largest difference: %.2e of the largest logit", worst)
	if !differ {
		t.Fatalf("a %s cache gave the float32 cache's logits bit for bit: it is not in effect", typ)
	}
	if worst > tol {
		t.Fatalf("a %s cache moved a logit by %.2e of the largest: more than %g", typ, worst, tol)
	}
}

// TestCacheTypesDeterministic: with half and Q8_0 caches, a block equals
// its tokens one by one, a batch (with a float32-cache session of the same
// weights beside it) equals each session alone, and a rollback
// re-evaluates to the same bits, at every kernel level and at 1, 2 and 7
// threads (which cut the attention's groups of queries into more pieces);
// the levels agree with each other.
func TestCacheTypesDeterministic(t *testing.T) {
	levels := tensor.AvailableKernels()
	defer tensor.SetKernels(levels[len(levels)-1])
	defer tensor.SetThreads(0)
	models := halfCacheModels
	if testing.Short() { // the emulated arm64 run (internal/crossarch)
		models = models[:2]
	}
	for _, ct := range cacheTypes {
		for _, tm := range models {
			if hs := tm.open(t).cfg.HeadSize(); hs%ct.headSize != 0 {
				continue
			}
			t.Run(ct.typ+"/"+tm.name, func(t *testing.T) { deterministicCache(t, levels, tm.open, ct.typ) })
		}
	}
}

// deterministicCache is TestCacheTypesDeterministic for one model and type.
func deterministicCache(t *testing.T, levels []string, open func(testing.TB) *Model, typ string) {
	var first [][]float32 // the first level's block, for the others
	for _, level := range levels {
		if err := tensor.SetKernels(level); err != nil {
			t.Fatal(err)
		}
		base := open(t)
		m := cacheView(t, base, typ)
		rng := rand.New(rand.NewPCG(11, 12))
		toks := make([]int, min(24, m.cfg.SeqLen))
		for i := range toks {
			toks[i] = rng.IntN(m.cfg.Vocab)
		}
		for _, th := range []int{1, 2, 7} { // 7: attention groups cut into pieces
			tensor.SetThreads(th)
			what := fmt.Sprintf("%s kernels, %d threads", level, th)
			block, err := m.Session().Eval(toks)
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = block
			}
			for i := range block {
				assertSame(t, fmt.Sprintf("%s: position %d against the first level", what, i), block[i], first[i])
			}
			step := m.Session()
			for i, tk := range toks {
				r, err := step.Eval([]int{tk})
				if err != nil {
					t.Fatal(err)
				}
				assertSame(t, fmt.Sprintf("%s: step %d", what, i), r[0], block[i])
			}
			if err := step.Truncate(len(toks) / 2); err != nil {
				t.Fatal(err)
			}
			again, err := step.Eval(toks[len(toks)/2:])
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range again {
				assertSame(t, fmt.Sprintf("%s: re-evaluated %d", what, len(toks)/2+i), r, block[len(toks)/2+i])
			}
			a, f := m.Session(), base.Session()
			if _, err := a.Eval(toks[:3]); err != nil {
				t.Fatal(err)
			}
			fAlone, err := base.Session().Eval(toks[:5])
			if err != nil {
				t.Fatal(err)
			}
			out, err := EvalBatch([]*Session{f, a}, [][]int{toks[:5], toks[3:9]}, false)
			if err != nil {
				t.Fatal(err)
			}
			for i := range out[1] {
				assertSame(t, fmt.Sprintf("%s: batched %s %d", what, typ, i), out[1][i], block[3+i])
			}
			for i := range out[0] {
				assertSame(t, fmt.Sprintf("%s: batched float32 %d", what, i), out[0][i], fAlone[i])
			}
		}
	}
}

// TestHalfCacheSpec: ctk and ctv reach hlm's engine through a spec, name
// the view, and are refused for types only llama.cpp has and for q8_0 at
// head sizes it cannot take.
func TestHalfCacheSpec(t *testing.T) {
	m, err := OpenSpec("builtin:stories260K@ctk=f16", "")
	if err != nil {
		t.Fatal(err)
	}
	if k, v := m.CacheTypes(); k != "f16" || v != "f32" {
		t.Fatalf("CacheTypes() = %s, %s; want f16, f32", k, v)
	}
	if m.Name() != "builtin:stories260K@ctk=f16" {
		t.Fatalf("Name() = %q", m.Name())
	}
	both, err := OpenSpec("builtin:stories260K@exit=2@ctk=f16@ctv=f16", "")
	if err != nil {
		t.Fatal(err)
	}
	if both.Config().Layers != 2 || both.KVBytes(10) != 64*2*int64(both.Config().KVDim())*4 {
		t.Fatalf("exit=2 with a half cache: %d layers, KVBytes(10) = %d", both.Config().Layers, both.KVBytes(10))
	}
	plain, err := OpenSpec("builtin:stories260K@ctk=f32@ctv=f32", "")
	if err != nil {
		t.Fatal(err)
	}
	if def, _ := OpenSpec("builtin:stories260K", ""); plain != def {
		t.Fatal("ctk=f32@ctv=f32 made a view: it is the default")
	}
	if _, err := OpenSpec("builtin:stories260K@ctk=bf16", ""); err == nil || !strings.Contains(err.Error(), "f32 (its default), f16 or q8_0") {
		t.Fatalf("ctk=bf16 on hlm's engine: %v", err)
	}
	if _, err := OpenSpec("builtin:stories260K@ctv=q8_0", ""); err == nil || !strings.Contains(err.Error(), "ctv=q8_0: a q8_0 KV cache needs a head size that is a multiple of 32, and this model's is 8") {
		t.Fatalf("ctv=q8_0 with heads of 8: %v", err)
	}
	q8, err := OpenSpec(filepath.Join("testdata", "families", "qwen3.gguf")+"@ctk=q8_0@ctv=q8_0", "")
	if err != nil {
		t.Fatal(err)
	}
	if k, v := q8.CacheTypes(); k != "q8_0" || v != "q8_0" {
		t.Fatalf("CacheTypes() = %s, %s; want q8_0, q8_0", k, v)
	}
	if _, err := m.WithCacheTypes("bf16", ""); err == nil {
		t.Fatal("WithCacheTypes(bf16) succeeded")
	}
}

// TestPagedCache: rows on both sides of page boundaries (kvPage) — a
// block over several pages, steps across them, a rollback into an earlier
// page, a tree whose nodes and path lie across one and a kept path moved
// over it, sliding windows that start inside a page — give the bits of the
// same positions evaluated one by one, with float32 and half caches, at
// every level.
func TestPagedCache(t *testing.T) {
	levels := tensor.AvailableKernels()
	defer tensor.SetKernels(levels[len(levels)-1])
	for _, level := range levels {
		if err := tensor.SetKernels(level); err != nil {
			t.Fatal(err)
		}
		// 160 positions (three pages); Gemma 2's sliding windows of 6
		// positions start inside a page.
		wide, gemma := wideModel(tensor.F32)(t), familyModel("gemma2.gguf")(t)
		models, n := []*Model{wide, halfCache(t, wide), q8Cache(t, wide), gemma, halfCache(t, gemma)}, 150
		if testing.Short() { // the emulated arm64 run (internal/crossarch)
			models, n = []*Model{halfCache(t, gemma)}, 80
		}
		for _, m := range models {
			k, _ := m.CacheTypes()
			what := fmt.Sprintf("%s, %s kernels, %s cache", m.Config().Arch, level, k)
			rng := rand.New(rand.NewPCG(21, 22))
			toks := make([]int, n)
			for i := range toks {
				toks[i] = rng.IntN(m.cfg.Vocab)
			}
			step := m.Session()
			want := make([][]float32, len(toks))
			for i, tk := range toks {
				r, err := step.Eval([]int{tk})
				if err != nil {
					t.Fatal(err)
				}
				want[i] = r[0]
			}
			s := m.Session()
			got, err := s.Eval(toks[:n-20]) // across one or two boundaries in one block
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				assertSame(t, fmt.Sprintf("%s: block position %d", what, i), got[i], want[i])
			}
			if err := s.Truncate(60); err != nil { // back into the first page
				t.Fatal(err)
			}
			for i := 60; i < len(toks); i += 9 {
				e := min(i+9, len(toks))
				got, err := s.Eval(toks[i:e])
				if err != nil {
					t.Fatal(err)
				}
				for j := range got {
					assertSame(t, fmt.Sprintf("%s: re-evaluated position %d", what, i+j), got[j], want[i+j])
				}
			}
			if got := s.KVBytes(); got != m.KVBytes(n) {
				t.Fatalf("%s: %d positions hold %d bytes, want %d", what, n, got, m.KVBytes(n))
			}
			// A tree over slots 58… (across the boundary at 64) after a
			// cache of 58 positions.
			tr, ref := m.Session(), m.Session()
			for _, x := range []*Session{tr, ref} {
				if _, err := x.Eval(toks[:58]); err != nil {
					t.Fatal(err)
				}
			}
			tokens, parents := randomTree(rng, m.cfg.Vocab, 30)
			rows, err := tr.EvalTree(tokens, parents)
			if err != nil {
				t.Fatal(err)
			}
			checkPaths(t, what+": tree across a page", ref, toks[:58], tokens, parents, rows)
			checkKeep(t, what+": kept path across a page", rng, tr, toks[:58], tokens, parents)
		}
	}
}
