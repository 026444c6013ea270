package hybrid

import (
	"math"
	"testing"

	"github.com/hlmproject/hlm/model"
)

// TestTreeStatsLine: the first candidates' acceptance line is the least-
// squares fit of the observations (with the prior's pseudo-observations),
// so with many observations on a line it recovers the line; with none it
// is the prior, 0.5 + 0.5q.
func TestTreeStatsLine(t *testing.T) {
	st := &treeStats{}
	if a, b := st.line(); math.Abs(a-0.5) > 1e-12 || math.Abs(b-0.5) > 1e-12 {
		t.Errorf("prior line %v + %v·q, want 0.5 + 0.5·q", a, b)
	}
	// 10,000 observations per q on 0.55 + 0.4·q, accepted in proportion.
	const n = 10000
	for i := range 11 {
		q := float64(i) / 10
		acc := math.Round(n * (0.55 + 0.4*q))
		st.fit[0] += n
		st.fit[1] += n * q
		st.fit[2] += n * q * q
		st.fit[3] += acc
		st.fit[4] += acc * q
	}
	a, b := st.line()
	if math.Abs(a-0.55) > 1e-3 || math.Abs(b-0.4) > 1e-3 {
		t.Errorf("fitted %v + %v·q, want 0.55 + 0.4·q (within 1e-3)", a, b)
	}
	if r := st.firstRate(0.05); math.Abs(r-0.57) > 2e-3 {
		t.Errorf("firstRate(0.05) = %v, want 0.57", r)
	}
}

// TestTreeReportAddsUp: what the device reports of its trees agrees with
// the run's own counts — one tree per upload, its SLM passes, accepted
// drafts and uplink bits — and the growth's estimate of the accepted
// drafts is within 20% of them on the real pair (the value model is
// calibrated).
func TestTreeReportAddsUp(t *testing.T) {
	llm, slm := openPair(t, stories+"-draft")
	prompt := llm.Tokenizer().Encode("Once upon a time", true)
	for _, m := range []string{TreeQS, TreeKSQS} {
		var rep TreeReport
		var res Result
		for seed := range uint64(4) {
			r, g := runTree(t, llm, slm, prompt, m, 64, seed, "budget_bits=3000", "tree_nodes=32", "channel=fixed", "up_overhead_s=0.025", "down_overhead_s=0.025")
			if g.Trees != r.Uploads || g.Internal != r.Drafted || g.Accepted != r.Accepted || g.PayloadBits+g.IDBits+g.ParentBits != r.UplinkBits {
				t.Errorf("%s seed %d: report %d trees, %d passes, %d accepted, %d+%d+%d bits; run %d uploads, %d drafted, %d accepted, %d bits",
					m, seed, g.Trees, g.Internal, g.Accepted, g.PayloadBits, g.IDBits, g.ParentBits, r.Uploads, r.Drafted, r.Accepted, r.UplinkBits)
			}
			rep.Predicted += g.Predicted
			rep.Accepted += g.Accepted
			res.Uploads += r.Uploads
		}
		if ratio := rep.Predicted / float64(rep.Accepted); ratio < 0.8 || ratio > 1.2 {
			t.Errorf("%s: predicted %.1f accepted drafts, %d accepted (ratio %.2f)", m, rep.Predicted, rep.Accepted, ratio)
		}
	}
}

// TestTreeTimeTest: a leaf is opened only when its SLM pass pays for
// itself in the device's model of the round's time. With SLM passes that
// cost nothing every tree grows beyond the root; with passes of 10 s none
// does (one distribution, the root's, per round); with the papers' 25.6 ms
// a round trip of 1 s makes the trees deeper than none does.
func TestTreeTimeTest(t *testing.T) {
	llm, slm := openPair(t, stories+"-draft")
	prompt := llm.Tokenizer().Encode("Once upon a time", true)
	passes := func(sets ...string) float64 {
		p := DefaultParams()
		p.Method, p.MaxTokens = TreeQS, 48
		if err := p.SetAll(append([]string{"budget_bits=4000", "tree_nodes=32", "channel=fixed"}, sets...)); err != nil {
			t.Fatal(err)
		}
		r := runOnce(t, p, llm, slm, prompt)
		return float64(r.Drafted) / float64(r.Uploads)
	}
	if n := passes("tau_slm=0"); !(n > 1.5) {
		t.Errorf("free SLM passes: %.2f per round, want the trees to grow", n)
	}
	if n := passes("tau_slm=10"); n != 1 {
		t.Errorf("10 s SLM passes: %.2f per round, want 1", n)
	}
	if near, far := passes(), passes("up_overhead_s=0.5", "down_overhead_s=0.5"); !(far > near) {
		t.Errorf("SLM passes per round %.2f with no round trip, %.2f with 1 s: want more with the longer round trip", near, far)
	}
}

// TestTreeWorth: the time test of an action (gain accepted drafts for
// passes SLM passes and c uplink bits) against the tree's tokens per
// second so far. An action that costs no modelled time is worth any
// gain — with τ_SLM = τ_LLM = 0 and a trace link (bits free) the time test
// once read 0 > 0 and no leaf was ever opened.
func TestTreeWorth(t *testing.T) {
	for _, c := range []struct {
		name   string
		clock  roundTime
		dists  int
		spent  int
		expect float64
		gain   float64
		passes int
		bits   int
		want   bool
	}{
		{"everything free", roundTime{}, 1, 400, 0.7, 0.5, 1, 400, true},
		{"everything free, no gain", roundTime{}, 1, 400, 0.7, 0, 1, 400, false},
		{"free pass, bits free", roundTime{fixed: 0.1}, 1, 400, 0.7, 0.5, 1, 400, true},
		{"pass pays", roundTime{fixed: 0.1, pass: 0.0256, bit: 1e-6}, 1, 400, 0.7, 0.5, 1, 400, true},
		{"pass too slow", roundTime{fixed: 0.1, pass: 10, bit: 1e-6}, 1, 400, 0.7, 0.5, 1, 400, false},
		{"only bits cost, below the tree's rate", roundTime{bit: 1e-6}, 1, 400, 0.7, 0.5, 0, 400, false},
		{"only bits cost, above the tree's rate", roundTime{bit: 1e-6}, 1, 400, 0.7, 0.5, 0, 100, true},
	} {
		tr := &tree{clock: c.clock, dists: c.dists, spent: c.spent, expect: c.expect}
		if got := tr.worth(c.gain, c.passes, c.bits); got != c.want {
			t.Errorf("%s: worth(%v, %d, %d) = %v, want %v", c.name, c.gain, c.passes, c.bits, got, c.want)
		}
	}
}

// TestTreeLastRoomOneCandidate: a round with room for one more token
// commits exactly one whatever it sends, so it sends one candidate, as a
// chain's block drafts one; with room for two the tree has its siblings.
func TestTreeLastRoomOneCandidate(t *testing.T) {
	llm, slm := openPair(t, stories+"-draft")
	prompt := llm.Tokenizer().Encode("Once upon a time", true)
	for _, m := range []string{TreeQS, TreeKSQS} {
		for _, tc := range []struct {
			maxTokens int
			one       bool
		}{{1, true}, {2, false}} {
			r, g := runTree(t, llm, slm, prompt, m, tc.maxTokens, 3, "tree_shape=4,2", "budget_bits=100000")
			if g.Trees == 0 {
				t.Fatalf("%s max_tokens %d: no tree sent", m, tc.maxTokens)
			}
			if tc.one && (g.Nodes != g.Trees || len(r.Tokens) != 1) {
				t.Errorf("%s max_tokens 1: %d nodes in %d trees, %d tokens; want one node a tree, one token", m, g.Nodes, g.Trees, len(r.Tokens))
			}
			if !tc.one && g.Nodes < 4 {
				t.Errorf("%s max_tokens 2: %d nodes; want the shape's first level of 4", m, g.Nodes)
			}
		}
	}
}

// runTree runs tree method m in the simulator and returns the run and the
// device's report of its trees.
func runTree(t *testing.T, llm, slm model.Model, prompt []int, m string, maxTokens int, seed uint64, sets ...string) (Result, TreeReport) {
	t.Helper()
	p := DefaultParams()
	p.Method, p.MaxTokens, p.Seed = m, maxTokens, seed
	if err := p.SetAll(sets); err != nil {
		t.Fatal(err)
	}
	c := inProcess(t, p, llm, slm, prompt)
	r, err := Run(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	return r, c.Device.TreeReport()
}
