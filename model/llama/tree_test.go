package llama

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
)

// treeModels are the models the tree tests run: every committed tiny
// family model (sliding windows: Gemma 2 and 3, GPT-Neo; learned
// positions: GPT-2, OPT, GPT-Neo; soft-caps: Gemma 2) and the built-in
// stories260K, with its Q8_0 copy and an early-exit view, and two with
// half caches.
var treeModels = []struct {
	name string
	open func(testing.TB) *Model
}{
	{"llama2", familyModel("llama2.gguf")},
	{"llama31", familyModel("llama31.gguf")},
	{"llama32", familyModel("llama32.gguf")},
	{"qwen2", familyModel("qwen2.gguf")},
	{"qwen3", familyModel("qwen3.gguf")},
	{"phi3", familyModel("phi3.gguf")},
	{"gemma2", familyModel("gemma2.gguf")},
	{"gemma3", familyModel("gemma3.gguf")},
	{"gpt2", familyModel("gpt2.gguf")},
	{"opt_pre", familyModel("opt_pre")},
	{"opt_post", familyModel("opt_post")},
	{"gpt_neo", familyModel("gpt_neo")},
	{"stories260K", builtinModel("")},
	{"stories260K@q8", builtinModel("q8")},
	{"stories260K@exit=3", func(tb testing.TB) *Model {
		m, err := builtinModel("")(tb).EarlyExit(3)
		if err != nil {
			tb.Fatal(err)
		}
		return m
	}},
	// Half caches (ctk=f16, ctv=f16): a tree's rows move and are read as
	// halves.
	{"qwen3@ctk=f16@ctv=f16", func(tb testing.TB) *Model { return halfCache(tb, familyModel("qwen3.gguf")(tb)) }},
	{"gpt_neo@ctk=f16@ctv=f16", func(tb testing.TB) *Model { return halfCache(tb, familyModel("gpt_neo")(tb)) }},
	// A Q8_0 cache: the rows moved are blocks.
	{"qwen3@ctk=q8_0@ctv=q8_0", func(tb testing.TB) *Model { return q8Cache(tb, familyModel("qwen3.gguf")(tb)) }},
}

func familyModel(name string) func(testing.TB) *Model {
	return func(tb testing.TB) *Model {
		m, err := OpenSpec(filepath.Join("testdata", "families", name), "")
		if err != nil {
			tb.Fatal(err)
		}
		return m
	}
}

// randomTree draws a token tree of at most max nodes: a chain 1–8 deep,
// then branches that give nodes 1–4 children (siblings hold the same token
// a third of the time) and the context 1–4 children, numbered in a random
// order that puts every parent before its children.
func randomTree(rng *rand.Rand, vocab, max int) (tokens, parents []int) {
	type node struct{ parent, token, depth, kids int }
	depth := 1 + rng.IntN(8)
	var ns []node
	roots := 0
	add := func(parent int) {
		d := 0
		if parent >= 0 {
			d = ns[parent].depth + 1
			ns[parent].kids++
		} else {
			roots++
		}
		tok := rng.IntN(vocab)
		if rng.IntN(3) == 0 { // the token of a sibling, if any
			for i := len(ns) - 1; i >= 0; i-- {
				if ns[i].parent == parent {
					tok = ns[i].token
					break
				}
			}
		}
		ns = append(ns, node{parent: parent, token: tok, depth: d})
	}
	add(-1)
	for len(ns) < depth {
		add(len(ns) - 1)
	}
	for range rng.IntN(2 * max) {
		if len(ns) == max {
			break
		}
		p := rng.IntN(len(ns)+1) - 1
		if p < 0 && roots < 4 || p >= 0 && ns[p].depth < depth-1 && ns[p].kids < 4 {
			add(p)
		}
	}
	// A random order with parents first.
	newID := make([]int, len(ns))
	var ready []int
	for i, n := range ns {
		if n.parent < 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		k := rng.IntN(len(ready))
		i := ready[k]
		ready = append(ready[:k], ready[k+1:]...)
		newID[i] = len(tokens)
		p := -1
		if ns[i].parent >= 0 {
			p = newID[ns[i].parent]
		}
		tokens, parents = append(tokens, ns[i].token), append(parents, p)
		for j, n := range ns {
			if n.parent == i {
				ready = append(ready, j)
			}
		}
	}
	return tokens, parents
}

// pathOf is node i's path: the nodes from its root to it.
func pathOf(parents []int, i int) []int {
	var p []int
	for ; i >= 0; i = parents[i] {
		if len(p) == len(parents) {
			panic(fmt.Sprintf("parents %v: not a tree", parents))
		}
		p = append([]int{i}, p...)
	}
	return p
}

// tokensOf are the tokens of nodes.
func tokensOf(tokens, nodes []int) []int {
	out := make([]int, len(nodes))
	for j, n := range nodes {
		out[j] = tokens[n]
	}
	return out
}

// checkPaths compares the logits of every node of a tree (got, from
// EvalTree after prefix) with those of its path alone after prefix, bit
// for bit: each leaf's path evaluated by ref (which holds prefix) in one
// Eval, then token by token (not under -short: the emulated arm64 run,
// where the determinism tests check blocks against steps).
func checkPaths(t *testing.T, what string, ref *Session, prefix, tokens, parents []int, got [][]float32) {
	t.Helper()
	if len(got) != len(tokens) {
		t.Fatalf("%s: %d rows of logits for %d nodes", what, len(got), len(tokens))
	}
	leaf := make([]bool, len(tokens))
	for i := range leaf {
		leaf[i] = true
	}
	for _, p := range parents {
		if p >= 0 {
			leaf[p] = false
		}
	}
	checked := make([]bool, len(tokens))
	for i := range tokens {
		if !leaf[i] {
			continue
		}
		path := pathOf(parents, i)
		toks := tokensOf(tokens, path)
		if err := ref.Truncate(len(prefix)); err != nil {
			t.Fatal(err)
		}
		block, err := ref.Eval(toks)
		if err != nil {
			t.Fatal(err)
		}
		if err := ref.Truncate(len(prefix)); err != nil {
			t.Fatal(err)
		}
		for d, node := range path {
			checked[node] = true
			assertSame(t, fmt.Sprintf("%s: node %d (depth %d of leaf %d) against its path in one Eval", what, node, d, i), got[node], block[d])
			if testing.Short() {
				continue
			}
			step, err := ref.Eval(toks[d : d+1])
			if err != nil {
				t.Fatal(err)
			}
			assertSame(t, fmt.Sprintf("%s: node %d (depth %d of leaf %d) against its path token by token", what, node, d, i), got[node], step[0])
		}
	}
	if i := slices.Index(checked, false); i >= 0 { // not a tree
		t.Fatalf("%s: node %d is on no leaf's path", what, i)
	}
}

// checkKeep keeps the path of a random node of the tree s just evaluated
// after prefix, continues with three tokens and compares their logits with
// those of a new session that evaluated prefix, the path and the tokens
// with Eval.
func checkKeep(t *testing.T, what string, rng *rand.Rand, s *Session, prefix, tokens, parents []int) {
	t.Helper()
	path := pathOf(parents, rng.IntN(len(tokens)))
	if err := s.KeepPath(path); err != nil {
		t.Fatalf("%s: KeepPath(%v): %v", what, path, err)
	}
	if s.Len() != len(prefix)+len(path) {
		t.Fatalf("%s: Len() = %d after keeping %d nodes over %d positions", what, s.Len(), len(path), len(prefix))
	}
	vocab := s.m.cfg.Vocab
	more := []int{rng.IntN(vocab), rng.IntN(vocab), rng.IntN(vocab)}
	got, err := s.Eval(more)
	if err != nil {
		t.Fatal(err)
	}
	fresh := s.m.Session()
	seq := append(append(append([]int(nil), prefix...), tokensOf(tokens, path)...), more...)
	want, err := fresh.Eval(seq)
	if err != nil {
		t.Fatal(err)
	}
	for j := range more {
		assertSame(t, fmt.Sprintf("%s: token %d after keeping path %v", what, j, path), got[j], want[len(seq)-len(more)+j])
	}
}

// TestEvalTreeMatchesPaths: on every tree model, at every kernel level this
// CPU runs and at 1 and 2 threads, over an empty cache and over a prompt
// (longer than the sliding windows of 6, which the trees, up to 8 deep, cut
// into too), every node's logits from EvalTree are bit-identical to its
// path's alone, and after KeepPath the session continues as one that
// evaluated the kept path with Eval. The trees are random (seeded: the same
// at every level).
func TestEvalTreeMatchesPaths(t *testing.T) {
	trees, nodes := 3, 40
	if testing.Short() || raceEnabled { // the emulated arm64 run (internal/crossarch), the race detector
		trees, nodes = 1, 16
	}
	levels := tensor.AvailableKernels()
	defer tensor.SetKernels(levels[len(levels)-1])
	defer tensor.SetThreads(0)
	for mi, tm := range treeModels {
		for _, level := range levels {
			if err := tensor.SetKernels(level); err != nil {
				t.Fatal(err)
			}
			m := tm.open(t) // opened at each level: a level may lay the weights out its own way
			vocab := m.cfg.Vocab
			for _, th := range []int{1, 2, 7} { // 7: attention groups cut into pieces
				tensor.SetThreads(th)
				rng := rand.New(rand.NewPCG(uint64(mi), 1))
				for _, cached := range []bool{false, true} {
					var prefix []int
					if cached {
						prefix = make([]int, 7+rng.IntN(10))
						for i := range prefix {
							prefix[i] = rng.IntN(vocab)
						}
					}
					s, ref := m.Session(), m.Session()
					for _, x := range []*Session{s, ref} {
						if len(prefix) > 0 {
							if _, err := x.Eval(prefix); err != nil {
								t.Fatal(err)
							}
						}
					}
					for k := range trees {
						tokens, parents := randomTree(rng, vocab, nodes)
						what := fmt.Sprintf("%s, %s kernels, %d threads, %d cached, tree %d (parents %v)", tm.name, level, th, len(prefix), k, parents)
						got, err := s.EvalTree(tokens, parents)
						if err != nil {
							t.Fatalf("%s: %v", what, err)
						}
						if s.Len() != len(prefix) {
							t.Fatalf("%s: Len() = %d after EvalTree, want %d", what, s.Len(), len(prefix))
						}
						checkPaths(t, what, ref, prefix, tokens, parents, got)
						if k == trees-1 {
							checkKeep(t, what, rng, s, prefix, tokens, parents)
						}
						// else the next EvalTree drops this tree
					}
				}
			}
		}
	}
}

// TestEvalTreeWideAtTheEnd: only the depth counts against the context. A
// tree of 11 nodes two deep over a cache two short of the context (its
// slots run 9 past it) matches its paths on GPT-Neo (learned positions up
// to the last row, a window of 6); keeping a path fills the context, and
// a chain as deep as the room left fits too.
func TestEvalTreeWideAtTheEnd(t *testing.T) {
	m := familyModel("gpt_neo")(t)
	n := m.cfg.SeqLen
	prompt := make([]int, n-2)
	for i := range prompt {
		prompt[i] = (i*37 + 11) % m.cfg.Vocab
	}
	s, ref := m.Session(), m.Session()
	for _, x := range []*Session{s, ref} {
		if _, err := x.Eval(prompt); err != nil {
			t.Fatal(err)
		}
	}
	tokens := []int{5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	parents := []int{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 3}
	got, err := s.EvalTree(tokens, parents)
	if err != nil {
		t.Fatal(err)
	}
	checkPaths(t, "wide tree at the end of the context", ref, prompt, tokens, parents, got)
	if err := s.KeepPath([]int{3, 10}); err != nil {
		t.Fatal(err)
	}
	if s.Len() != n {
		t.Fatalf("Len() = %d after keeping 2 nodes, want the context %d", s.Len(), n)
	}
	if _, err := s.Eval([]int{1}); !errors.Is(err, model.ErrContextFull) {
		t.Fatalf("Eval in a full context: %v, want %v", err, model.ErrContextFull)
	}
	// A chain as deep as the room left after a short prompt.
	s = m.Session()
	ref.Truncate(3)
	if _, err := s.Eval(prompt[:3]); err != nil {
		t.Fatal(err)
	}
	chain := make([]int, n-3)
	up := make([]int, n-3)
	for i := range chain {
		chain[i], up[i] = (i*11+3)%m.cfg.Vocab, i-1
	}
	got, err = s.EvalTree(chain, up)
	if err != nil {
		t.Fatal(err)
	}
	checkPaths(t, "a chain to the end of the context", ref, prompt[:3], chain, up, got)
}

// TestEvalTreeConcurrent: a session's trees do not disturb other sessions
// of the same model evaluated at the same time from other goroutines (at 2
// threads, sharing the pool): every result equals the one computed alone.
func TestEvalTreeConcurrent(t *testing.T) {
	defer tensor.SetThreads(0)
	tensor.SetThreads(2)
	m := builtinModel("")(t)
	rng := rand.New(rand.NewPCG(7, 8))
	prompt := []int{1, 403, 407, 261, 9, 77}
	tokens, parents := randomTree(rng, m.cfg.Vocab, 40)
	steps := []int{5, 17, 300, 2, 99, 41, 7, 8}
	treeAlone := func() ([][]float32, [][]float32) {
		s := m.Session()
		if _, err := s.Eval(prompt); err != nil {
			t.Error(err)
			return nil, nil
		}
		out, err := s.EvalTree(tokens, parents)
		if err != nil {
			t.Error(err)
			return nil, nil
		}
		if err := s.KeepPath(pathOf(parents, len(tokens)-1)); err != nil {
			t.Error(err)
			return nil, nil
		}
		next, err := s.Eval([]int{3})
		if err != nil {
			t.Error(err)
		}
		return out, next
	}
	decodeAlone := func() [][]float32 {
		s := m.Session()
		var out [][]float32
		for _, tk := range steps {
			r, err := s.Eval([]int{tk})
			if err != nil {
				t.Error(err)
				return nil
			}
			out = append(out, r[0])
		}
		return out
	}
	wantTree, wantNext := treeAlone()
	wantDecode := decodeAlone()
	var wg sync.WaitGroup
	const rounds = 8
	trees := make([][2][][]float32, rounds)
	decodes := make([][][]float32, 2*rounds)
	for i := range rounds {
		wg.Add(3)
		go func() { defer wg.Done(); trees[i][0], trees[i][1] = treeAlone() }()
		go func() { defer wg.Done(); decodes[2*i] = decodeAlone() }()
		go func() { defer wg.Done(); decodes[2*i+1] = decodeAlone() }()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, tr := range trees {
		for j := range wantTree {
			assertSame(t, fmt.Sprintf("round %d: node %d", i, j), tr[0][j], wantTree[j])
		}
		assertSame(t, fmt.Sprintf("round %d: after KeepPath", i), tr[1][0], wantNext[0])
	}
	for i, d := range decodes {
		for j := range wantDecode {
			assertSame(t, fmt.Sprintf("decoder %d: step %d", i, j), d[j], wantDecode[j])
		}
	}
}

// benchTree is a 16-node tree 5 deep, the shape a drafter's top-k
// expansions give: 4 children of the context, then 4, 4, 2 and 2 nodes a
// depth under the first ones.
var benchTree = []int{-1, -1, -1, -1, 0, 0, 1, 2, 4, 4, 5, 6, 8, 8, 12, 13}

// BenchmarkEvalTree measures the verification of a 16-node tree after a
// 64-token prompt three ways, each giving the logits of the 16 nodes
// (tokens/s counts them): tree, one EvalTree (then the tree dropped);
// paths, each node's root-to-node path evaluated alone after the cached
// prompt (16 Evals of 1–5 tokens, 40 in all); chain, one Eval of 16 tokens
// (a chain of drafts of the same size, for scale); and tree-vs-chain, the two
// in turns, their ratio of times.
//
//	go test -run='^$' -bench=EvalTree -benchtime=20x ./model/llama
func BenchmarkEvalTree(b *testing.B) {
	const prompt = 64
	n := len(benchTree)
	for _, sh := range benchShapes {
		m := randomModel(b, sh.cfg, 1)
		tokens := make([]int, n)
		for i := range tokens {
			tokens[i] = (i*7919 + 13) % sh.cfg.Vocab
		}
		paths := make([][]int, n)
		for i := range paths {
			paths[i] = tokensOf(tokens, pathOf(benchTree, i))
		}
		session := func(b *testing.B) *Session {
			s := m.Session()
			p := make([]int, prompt)
			for i := range p {
				p[i] = (i*31 + 5) % sh.cfg.Vocab
			}
			if _, err := s.Eval(p); err != nil {
				b.Fatal(err)
			}
			return s
		}
		run := func(name string, op func(s *Session) error) {
			b.Run(sh.name+"/"+name, func(b *testing.B) {
				s := session(b)
				b.ResetTimer()
				for range b.N {
					if err := op(s); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
		run("tree", func(s *Session) error {
			if _, err := s.EvalTree(tokens, benchTree); err != nil {
				return err
			}
			return s.KeepPath(nil)
		})
		run("paths", func(s *Session) error {
			for _, p := range paths {
				if _, err := s.Eval(p); err != nil {
					return err
				}
				if err := s.Truncate(prompt); err != nil {
					return err
				}
			}
			return nil
		})
		run("chain", func(s *Session) error {
			if _, err := s.Eval(tokens); err != nil {
				return err
			}
			return s.Truncate(prompt)
		})
		// The tree and the chain taken in turns, so that the machine's
		// load drifts over both alike: their ratio of times.
		b.Run(sh.name+"/tree-vs-chain", func(b *testing.B) {
			s := session(b)
			var tree, chain time.Duration
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if _, err := s.EvalTree(tokens, benchTree); err != nil {
					b.Fatal(err)
				}
				s.KeepPath(nil)
				t1 := time.Now()
				if _, err := s.Eval(tokens); err != nil {
					b.Fatal(err)
				}
				s.Truncate(prompt)
				tree, chain = tree+t1.Sub(t0), chain+time.Since(t1)
			}
			b.ReportMetric(float64(tree)/float64(chain), "tree/chain")
		})
	}
}

// TestEvalTreeIgnoresCapture: attention capture does not apply to trees:
// with capture on, EvalTree records nothing (Attention() is nil) and
// gives the same logits; the Eval after KeepPath captures again.
func TestEvalTreeIgnoresCapture(t *testing.T) {
	m := familyModel("gemma2.gguf")(t)
	prompt := []int{311, 289, 292, 259, 295, 44, 298, 297}
	tokens, parents := []int{5, 6, 7, 6}, []int{-1, 0, -1, 2}
	s, plain := m.Session(), m.Session()
	s.SetCapture(model.CaptureHeads)
	for _, x := range []*Session{s, plain} {
		if _, err := x.Eval(prompt); err != nil {
			t.Fatal(err)
		}
	}
	if s.Attention() == nil {
		t.Fatal("no attention captured by Eval")
	}
	got, err := s.EvalTree(tokens, parents)
	if err != nil {
		t.Fatal(err)
	}
	if a := s.Attention(); a != nil {
		t.Fatalf("EvalTree captured %d rows over %d positions; trees record none", len(a.Rows), a.Len)
	}
	want, err := plain.EvalTree(tokens, parents)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		assertSame(t, fmt.Sprintf("node %d with capture on", i), got[i], want[i])
	}
	if err := s.KeepPath([]int{2, 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Eval([]int{9}); err != nil {
		t.Fatal(err)
	}
	if a := s.Attention(); a == nil || a.Len != len(prompt)+3 {
		t.Fatalf("the Eval after KeepPath captured %+v, want rows over %d positions", a, len(prompt)+3)
	}
}
