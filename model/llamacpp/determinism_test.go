package llamacpp

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/tensor"
)

// script is what a server does with a set of sessions: each prefills its
// prompt in one block, then plays rounds of 1 + L tokens (the committed
// token and L drafts, L per session) and drops the rejected drafts — all
// sessions of a round in one EvalBatch, or each alone.
type script struct {
	prompts [][]int
	draftL  []int // L of each session
	rounds  int
	seed    uint64
}

// play runs the script on m and returns every row of logits session 0
// saw. batched puts every session's round in one EvalBatch; tokenwise
// prefills the prompts one token at a time.
func (sc script) play(t testing.TB, m model.Model, batched, tokenwise bool) [][]float32 {
	t.Helper()
	vocab := m.Config().Vocab
	rng := rand.New(rand.NewPCG(sc.seed, 1))
	n := len(sc.prompts)
	ss := make([]model.Session, n)
	var rows0 [][]float32
	for i, p := range sc.prompts {
		ss[i] = m.NewSession()
		if tokenwise {
			for _, tok := range p {
				r, err := ss[i].Eval([]int{tok})
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					rows0 = append(rows0, r...)
				}
			}
			continue
		}
		r, err := ss[i].Eval(p)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			rows0 = append(rows0, r...)
		}
	}
	for range sc.rounds {
		blocks := make([][]int, n)
		keep := make([]int, n)
		for i := range ss {
			b := make([]int, 1+sc.draftL[i])
			for k := range b {
				b[k] = rng.IntN(vocab)
			}
			blocks[i] = b
			keep[i] = ss[i].Len() + 1 + rng.IntN(sc.draftL[i]+1)
		}
		var out [][][]float32
		if batched {
			var err error
			if out, err = m.(model.Batcher).EvalBatch(ss, blocks); err != nil {
				t.Fatal(err)
			}
		} else {
			for i, s := range ss {
				r, err := s.Eval(blocks[i])
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, r)
			}
		}
		rows0 = append(rows0, out[0]...)
		for i, s := range ss {
			if err := s.Truncate(keep[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	return rows0
}

// defaultScript: four sessions with the three golden prompts (and the
// first again), drafts of 4, 4, 2 and 6, eight rounds.
func defaultScript(t testing.TB, golden string) script {
	var ps [][]int
	for _, p := range []string{"", "_p2", "_p3", ""} {
		g := readGolden(t, golden+p+".bin")
		ps = append(ps, g.ids[:min(len(g.ids), 24)])
	}
	return script{prompts: ps, draftL: []int{4, 4, 2, 6}, rounds: 8, seed: 7}
}

// typedFile writes a copy of a family model with its matrices of type dt.
func typedFile(t testing.TB, file string, dt tensor.DType) string {
	t.Helper()
	m, err := llama.OpenSpec(filepath.Join(familiesDir, file), "")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := llama.WriteGGUF(&buf, m, dt, "typed"); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), fmt.Sprint(dt)+"_"+file)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func openPath(t testing.TB, path, opts string) *Model {
	t.Helper()
	needLib(t)
	m, err := OpenSpec(path+"@llama.cpp"+withDevice(opts), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// weightTypes are the weights the contract is measured on: the committed
// F32 files and hlm-written F16 and Q8_0 copies.
var weightTypes = []struct {
	name string
	dt   tensor.DType
}{{"f32", tensor.F32}, {"f16", tensor.F16}, {"q8_0", tensor.Q8_0}}

func weightFile(t testing.TB, file string, dt tensor.DType) string {
	if dt == tensor.F32 {
		return filepath.Join(familiesDir, file)
	}
	return typedFile(t, file, dt)
}

// TestDeterminismContract measures the package doc's contract on three
// families (one with sliding-window layers) and three weight types:
// session 0's logits over a script of prefills, rounds of drafts and
// rollbacks are bit-identical to those it has alone with 2 threads and 4
// slots
//   - batched with three other sessions whose rounds have other lengths,
//   - on 1 thread, alone or batched,
//   - with 2 slots (the four sessions evicted and brought back every
//     round: saved and restored, or evaluated again on the
//     sliding-window family),
//   - with rounds of one token (the llm method), alone or batched,
//   - after rollback: with other tokens in the rejected positions,
//   - and after a resume: a new session prefilled with the whole sequence
//     in one block continues with the same logits.
func TestDeterminismContract(t *testing.T) {
	needLib(t)
	for _, fam := range []struct{ file, golden string }{
		{"llama32.gguf", "llama32_golden"},
		{"qwen3.gguf", "qwen3_golden"},
		{"gemma3.gguf", "gemma3_golden"},
	} {
		for _, wt := range weightTypes {
			t.Run(fam.file+"/"+wt.name, func(t *testing.T) {
				path := weightFile(t, fam.file, wt.dt)
				sc := defaultScript(t, fam.golden)
				const base = "@c=128@np=4@t=2"
				ref := sc.play(t, openPath(t, path, base), false, false)
				single := sc
				single.draftL = []int{0, 0, 0, 0}
				refSingle := single.play(t, openPath(t, path, base), false, false)
				for _, v := range []struct {
					name    string
					sc      script
					ref     [][]float32
					opts    string
					batched bool
				}{
					{"batched", sc, ref, base, true},
					{"one thread", sc, ref, "@c=128@np=4@t=1", false},
					{"one thread, batched", sc, ref, "@c=128@np=4@t=1", true},
					{"two slots, batched (evictions)", sc, ref, "@c=128@np=2@t=2", true},
					{"two slots, alone (evictions)", sc, ref, "@c=128@np=2@t=2", false},
					{"one-token rounds, batched", single, refSingle, base, true},
					{"read into memory (lm=none)", sc, ref, base + "@lm=none", true},
				} {
					m := openPath(t, path, v.opts)
					got := v.sc.play(t, m, v.batched, false)
					if ok, i, j := sameBits(got, v.ref); !ok {
						d, _ := diff(got, v.ref)
						t.Errorf("%s: logits differ from alone, 2 threads, 4 slots at row %d, token %d (max |Δ| %.3g)", v.name, i, j, d)
					}
					if strings.Contains(v.opts, "np=2") && m.Stats().Evictions == 0 {
						t.Errorf("%s: no eviction happened", v.name)
					}
				}
				if got := playRejectedElsewhere(t, openPath(t, path, base), sc); !sameRows(got, ref) {
					t.Errorf("after rollback: the logits depend on the rejected drafts")
				}
				if err := resumeMatches(t, openPath(t, path, base), sc); err != nil {
					t.Errorf("resume: %v", err)
				}
			})
		}
	}
}

// resumeMatches plays sc on one session and, before each round, prefills
// a new session with the whole sequence so far in one block: its logits
// for the round must be the played session's.
func resumeMatches(t testing.TB, m model.Model, sc script) error {
	vocab := m.Config().Vocab
	rng := rand.New(rand.NewPCG(sc.seed, 5))
	s := m.NewSession()
	seq := append([]int(nil), sc.prompts[0]...)
	if _, err := s.Eval(seq); err != nil {
		return err
	}
	for r := range sc.rounds {
		b := make([]int, 1+sc.draftL[0])
		for k := range b {
			b[k] = rng.IntN(vocab)
		}
		got, err := s.Eval(b)
		if err != nil {
			return err
		}
		fresh := m.NewSession()
		if _, err := fresh.Eval(seq); err != nil {
			return err
		}
		want, err := fresh.Eval(b)
		if err != nil {
			return err
		}
		if !sameRows(got, want) {
			d, _ := diff(got, want)
			return fmt.Errorf("round %d: a session prefilled in one block continues differently (max |Δ| %.3g)", r, d)
		}
		keep := 1 + rng.IntN(sc.draftL[0]+1)
		seq = append(seq, b[:keep]...)
		if err := s.Truncate(len(seq)); err != nil {
			return err
		}
	}
	return nil
}

// TestDeterminismBreakers shows what the contract depends on, so that it
// is measured rather than assumed: each of these changes session 0's
// logits (F16 weights of llama32), and the test fails the day llama.cpp
// makes them agree (the package doc must then say so).
//   - a block of one token batched with others (plan decodes those alone);
//   - a prompt evaluated one token at a time rather than in one block
//     (the history of a session's cache matters where it had one-token
//     passes);
//   - a micro-batch of 2, which cuts rounds of 5 into 2 + 2 + 1;
//   - flash attention: its logits depend on the block shape (a prompt one
//     token at a time vs in one block), though not on batching.
func TestDeterminismBreakers(t *testing.T) {
	needLib(t)
	path := typedFile(t, "llama32.gguf", tensor.F16)
	sc := defaultScript(t, "llama32_golden")
	const base = "@c=128@np=4@t=2"
	ref := sc.play(t, openPath(t, path, base), false, false)
	single := sc
	single.draftL = []int{0, 0, 0, 0}
	refSingle := single.play(t, openPath(t, path, base), false, false)
	batchSingles = true
	gotSingle := single.play(t, openPath(t, path, base), true, false)
	batchSingles = false
	faRef := sc.play(t, openPath(t, path, base+"@fa=on"), false, false)
	for _, v := range []struct {
		name      string
		got, want [][]float32
	}{
		{"one-token blocks batched together", gotSingle, refSingle},
		{"prompt one token at a time", sc.play(t, openPath(t, path, base), false, true), ref},
		{"micro-batch of 2", sc.play(t, openPath(t, path, base+"@ub=2"), false, false), ref},
		{"flash attention, prompt one token at a time", sc.play(t, openPath(t, path, base+"@fa=on"), false, true), faRef},
	} {
		if sameRows(v.got, v.want) {
			t.Errorf("%s: the logits did not change; the contract in the package doc is out of date", v.name)
		} else {
			d, _ := diff(v.got, v.want)
			t.Logf("%s: max |Δ| %.3g", v.name, d)
		}
	}
	if got := sc.play(t, openPath(t, path, base+"@fa=on"), true, false); !sameRows(got, faRef) {
		t.Errorf("flash attention: batched differs from alone")
	}
}

func TestChunks(t *testing.T) {
	for _, tc := range []struct {
		n, ub int
		want  string
	}{
		{5, 512, "[[0 5]]"},
		{1, 512, "[[0 1]]"},
		{10, 4, "[[0 4] [4 8] [8 10]]"},
		{9, 4, "[[0 4] [4 7] [7 9]]"},
		{5, 3, "[[0 3] [3 5]]"},
		{4, 3, "[[0 2] [2 4]]"},
		{5, 2, "[[0 2] [2 4] [4 5]]"},
	} {
		if got := fmt.Sprint(chunks(tc.n, tc.ub)); got != tc.want {
			t.Errorf("chunks(%d, %d) = %s, want %s", tc.n, tc.ub, got, tc.want)
		}
	}
}

func sameRows(a, b [][]float32) bool { ok, _, _ := sameBits(a, b); return ok }

// playRejectedElsewhere plays sc alone, but writes other tokens in the
// positions each round rejects before evaluating: the kept rows must not
// change. It returns session 0's rows with the rejected positions' rows
// taken from the reference's (they differ by construction), so the result
// compares with sc.play.
func playRejectedElsewhere(t testing.TB, m model.Model, sc script) [][]float32 {
	t.Helper()
	vocab := m.Config().Vocab
	rng := rand.New(rand.NewPCG(sc.seed, 1))
	other := rand.New(rand.NewPCG(sc.seed, 99))
	var rows0 [][]float32
	ss := make([]model.Session, len(sc.prompts))
	for i, p := range sc.prompts {
		ss[i] = m.NewSession()
		r, err := ss[i].Eval(p)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			rows0 = append(rows0, r...)
		}
	}
	for range sc.rounds {
		for i, s := range ss {
			b := make([]int, 1+sc.draftL[i])
			for k := range b {
				b[k] = rng.IntN(vocab)
			}
			keep := s.Len() + 1 + rng.IntN(sc.draftL[i]+1)
			// The same kept tokens, others after them, evaluated first and
			// dropped; then the round itself.
			alt := append([]int(nil), b...)
			for k := keep - s.Len(); k < len(alt); k++ {
				alt[k] = (alt[k] + 1 + other.IntN(vocab-1)) % vocab
			}
			n := s.Len()
			if _, err := s.Eval(alt); err != nil {
				t.Fatal(err)
			}
			if err := s.Truncate(n); err != nil {
				t.Fatal(err)
			}
			r, err := s.Eval(b)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				rows0 = append(rows0, r...)
			}
			if err := s.Truncate(keep); err != nil {
				t.Fatal(err)
			}
		}
	}
	return rows0
}

// realShapes are the files bench/families.sh writes (random weights at
// the shapes of published models), in $HLM_PERF_WORK/families
// (default /tmp/hlm-perf/families).
func realShape(t *testing.T, name string) string {
	work := os.Getenv("HLM_PERF_WORK")
	if work == "" {
		work = filepath.Join(os.TempDir(), "hlm-perf")
	}
	p := filepath.Join(work, "families", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no %s: TYPES=%q FILES_ONLY=1 bench/families.sh %s makes it", p, strings.TrimSuffix(strings.SplitN(name, "-", 3)[2], ".gguf"), strings.Join(strings.SplitN(name, "-", 3)[:2], "-"))
	}
	return p
}

// TestDeterminismRealShapes is TestDeterminismContract's core (batched,
// one thread, evictions) at real shapes: Qwen3-0.6B Q8_0 and Llama-3.2-1B
// Q4_K_M, whose K-quant matrices llama.cpp repacks for its CPU kernels.
// Skipped without the files.
func TestDeterminismRealShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("real shapes: seconds per model")
	}
	needLib(t)
	for _, name := range []string{"qwen3-0.6b-q8_0.gguf", "llama3.2-1b-q4_k_m.gguf"} {
		t.Run(name, func(t *testing.T) {
			path := realShape(t, name)
			base := openPath(t, path, "@c=256@np=4@t=2")
			rng := rand.New(rand.NewPCG(3, 4))
			sc := script{draftL: []int{4, 4, 2, 6}, rounds: 4, seed: 9}
			for _, n := range []int{24, 40, 3, 24} {
				p := make([]int, n)
				for i := range p {
					p[i] = rng.IntN(base.Config().Vocab)
				}
				sc.prompts = append(sc.prompts, p)
			}
			ref := sc.play(t, base, false, false)
			for _, v := range []struct {
				name    string
				opts    string
				batched bool
			}{
				{"batched", "@c=256@np=4@t=2", true},
				{"one thread, batched", "@c=256@np=4@t=1", true},
				{"two slots, batched (evictions)", "@c=256@np=2@t=2", true},
			} {
				got := sc.play(t, openPath(t, path, v.opts), v.batched, false)
				if ok, i, j := sameBits(got, ref); !ok {
					d, _ := diff(got, ref)
					t.Errorf("%s: logits differ from alone at row %d, token %d (max |Δ| %.3g)", v.name, i, j, d)
				}
			}
			if err := resumeMatches(t, base, sc); err != nil {
				t.Errorf("resume: %v", err)
			}
			// What breaks it: llama.cpp's weight repacking (repack=on,
			// llama-bench's and llama-server's default) for K-quants.
			if strings.Contains(name, "q4_k") {
				alone := sc.play(t, openPath(t, path, "@c=256@np=4@t=2@repack=on"), false, false)
				if batched := sc.play(t, openPath(t, path, "@c=256@np=4@t=2@repack=on"), true, false); sameRows(batched, alone) {
					t.Errorf("repack=on: batched equals alone; the package doc's contract is out of date")
				} else {
					d, _ := diff(batched, alone)
					t.Logf("repack=on: batched differs from alone by up to %.3g", d)
				}
			}
		})
	}
}
