package eval

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/dataset"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/sim"
)

// The token-tree rerun (`hlm eval paper trees`; beyond the papers):
// token trees (tree-q-s, tree-k-sqs) against chains (q-s at L = 1…8, k-sqs
// filled to the bits of L drafts) at equal uplink bits per round, over a
// grid of round-trip times, uplink rates and temperatures, on both shipped
// pairs, with held-out prompts. trees.go runs the grid; trees_report.go
// makes the tables and figures; trees_diag.go measures why trees win or
// lose (the trees' acceptance, budget split and node use).

// treesScale is how big the rerun is: the full one, or the quick one the
// tests run (PaperConfig.Quick).
type treesScale struct {
	rtts  []float64 // round-trip times, seconds: half on each direction's per-message overhead
	rates []float64 // uplink rates of the fixed link, bit/s
	temps []float64
	ls    []int // chain lengths L
	nodes []int // tree_nodes of the node-limit ablation
	n     int   // prompts
}

func (p *paper) treesScale() treesScale {
	if p.cfg.Quick {
		return treesScale{rtts: []float64{0, 0.05}, rates: []float64{treesRefRate}, temps: []float64{treesRefTemp}, ls: []int{1, 2, 4},
			nodes: []int{16, treesNodes}, n: 3}
	}
	return treesScale{rtts: []float64{0, 0.02, 0.05, 0.1}, rates: []float64{6.4e4, treesRefRate}, temps: []float64{0.5, treesRefTemp},
		ls: []int{1, 2, 3, 4, 5, 6, 7, 8}, nodes: []int{16, treesNodes, 64}, n: p.cfg.N}
}

// The reference setting: the equal-bits curves, the diagnostics and the
// node-limit ablation are measured at every round trip of it.
const (
	treesRefRate = 1e6 // bit/s
	treesRefTemp = 1.0
	treesRefRTT  = 0.05 // the round trip of the tables shown in full
	treesNodes   = 32   // tree_nodes of every tree but the ablation's (the default, 16, binds: see the ablation)
)

// treePoint is one setting of the grid.
type treePoint struct{ temp, rate, rtt float64 }

func (g treePoint) sets() []string {
	half := fmt.Sprint(g.rtt / 2)
	return []string{"channel=fixed", fmt.Sprintf("rate_bps=%g", g.rate), "up_overhead_s=" + half, "down_overhead_s=" + half, fmt.Sprintf("temperature=%g", g.temp)}
}

func (g treePoint) ref() bool { return g.temp == treesRefTemp && g.rate == treesRefRate }

func (g treePoint) String() string {
	return fmt.Sprintf("T = %g, %s, RTT %g ms", g.temp, rateName(g.rate), 1000*g.rtt)
}

// rateName is a rate as "64 kbit/s" or "1 Mbit/s".
func rateName(r float64) string {
	if r >= 1e6 {
		return fmt.Sprintf("%g Mbit/s", r/1e6)
	}
	return fmt.Sprintf("%g kbit/s", r/1e3)
}

// chainCfg is one chain configuration: q-s at L drafts, or k-sqs with the
// budget of L of its drafts (SQS's L^t = max{L : Σ b ≤ B} is then L).
type chainCfg struct {
	label, method string
	sets          []string
	l             int
	bits          int // a full round's uplink bits: L·(⌈log2 V⌉ + payload)
}

// chainConfigs are q-s and k-sqs at every L of ls, for a vocabulary of v,
// lattice resolution ell and K-SQS support k.
func chainConfigs(v, ell, k int, ls []int) ([]chainCfg, error) {
	qb, err := codec.Lattice{L: ell}.Bits(v)
	if err != nil {
		return nil, err
	}
	kb, err := codec.KSQS{K: k, L: ell}.Bits(v)
	if err != nil {
		return nil, err
	}
	id := int(math.Ceil(math.Log2(float64(v))))
	var out []chainCfg
	for _, l := range ls {
		out = append(out, chainCfg{label: fmt.Sprintf("q-s L=%d", l), method: hybrid.QS, sets: []string{fmt.Sprintf("l=%d", l)}, l: l, bits: l * (id + qb)})
	}
	for _, l := range ls {
		b := l * (id + kb)
		out = append(out, chainCfg{label: fmt.Sprintf("k-sqs L=%d", l), method: hybrid.KSQS, sets: []string{fmt.Sprintf("budget_bits=%d", b), "batch_max=0"}, l: l, bits: b})
	}
	return out, nil
}

// treeCfg is one tree configuration: a tree method with a bit budget per
// round and a node limit.
type treeCfg struct {
	method string
	budget int
	nodes  int
	at     string // what the budget is: the chain whose full-round bits it is
}

func (t treeCfg) label() string {
	s := fmt.Sprintf("%s B=%d", t.method, t.budget)
	if t.nodes != treesNodes {
		s += fmt.Sprintf(" nodes=%d", t.nodes)
	}
	return s
}

func (t treeCfg) sets() []string {
	return []string{fmt.Sprintf("budget_bits=%d", t.budget), fmt.Sprintf("tree_nodes=%d", t.nodes)}
}

// treePair is one LLM and its draft.
type treePair struct {
	name  string // what the report calls it
	short string // "pair 1", "pair 2"
	tag   string // the prefix of its files
	ms    *sim.Models
	llm   string
}

// treesOutcome is one pair's measurements.
type treesOutcome struct {
	pair   treePair
	chains []chainCfg
	points []treePoint
	// chain[point][i] is chains[i] at points[point]; tree[point] the trees
	// run there, by label.
	chain [][]Row
	tree  []map[string]Row
	// best[point] is the index of the best chain there (highest throughput).
	best []int
	// grid[point] are the trees compared at each point: at the best
	// chain's bits, and with the loosest budget (the time test decides).
	grid  [][]treeCfg
	diags []treeDiag // at the reference point's round trips
}

// trees reruns the comparison of trees and chains on each pair.
func (p *paper) trees(ctx context.Context) error {
	sc := p.treesScale()
	pairs, skipped, err := p.treePairs()
	if err != nil {
		return err
	}
	ex, err := p.examples("tinystories", sc.n)
	if err != nil {
		return err
	}
	p.treesIntro(sc, pairs, skipped, ex)
	var outs []*treesOutcome
	for _, pr := range pairs {
		o, err := p.treesPair(ctx, sc, pr, ex)
		if err != nil {
			return fmt.Errorf("%s: %w", pr.name, err)
		}
		outs = append(outs, o)
	}
	if err := p.treesTargets(outs); err != nil {
		return err
	}
	for _, o := range outs {
		if err := p.treesReport(sc, o); err != nil {
			return fmt.Errorf("%s: %w", o.pair.name, err)
		}
	}
	return nil
}

// treePairs are the pair at hand and, when it is the default pair 1
// (stories260K and its shipped draft), pair 2 (TinyStories-656K from the
// shared material and its shipped draft) if the shared material is there;
// skipped says why pair 2 is not.
func (p *paper) treePairs() (pairs []treePair, skipped string, err error) {
	pairs = []treePair{{name: "pair 1 (" + p.cfg.LLM + " + " + p.draftName() + ")", short: "pair 1", tag: "p1", ms: p.setup.Models, llm: p.cfg.LLM}}
	if p.cfg.LLM != builtin.DefaultLLM {
		return pairs, "the LLM is not the default pair 1's, so only the pair at hand is measured", nil
	}
	dir := filepath.Join(p.cfg.Shared, "models", "tinystories-656k")
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
		return pairs, fmt.Sprintf("%s is not there (set HLM_SHARED to the directory that holds models/)", dir), nil
	}
	ms, err := sim.Open(dir, "", p.cfg.Tokenizer)
	if err != nil {
		return nil, "", fmt.Errorf("pair 2: %w", err)
	}
	name := "none"
	if ms.SLM != nil {
		name = ms.SLM.Name()
	}
	return append(pairs, treePair{name: "pair 2 (TinyStories-656K + " + name + ")", short: "pair 2", tag: "p2", ms: ms, llm: dir}), "", nil
}

// treesBase are the parameters every run of the rerun shares.
func (p *paper) treesBase() (hybrid.Params, error) {
	b := p.setup.Base
	return b, b.SetAll([]string{"ell=100", "sqs_k=8", "tree_shape=dynamic", "tree_depth=8", "diagnostics=false"})
}

// treesPair runs one pair: every chain at every point, then the trees.
func (p *paper) treesPair(ctx context.Context, sc treesScale, pr treePair, ex []dataset.Example) (*treesOutcome, error) {
	base, err := p.treesBase()
	if err != nil {
		return nil, err
	}
	chains, err := chainConfigs(pr.ms.LLM.Config().Vocab, base.Ell, base.SQSK, sc.ls)
	if err != nil {
		return nil, err
	}
	o := &treesOutcome{pair: pr, chains: chains}
	for _, t := range sc.temps {
		for _, r := range sc.rates {
			for _, rtt := range sc.rtts {
				o.points = append(o.points, treePoint{t, r, rtt})
			}
		}
	}
	s := p.setup
	s.Models, s.Base, s.NLL, s.GloVe = pr.ms, base, false, nil
	if err := o.runChains(ctx, s, p.cfg.Out, ex); err != nil {
		return nil, err
	}
	if err := o.runTrees(ctx, s, p.cfg.Out, ex, o.treeConfigs(sc.nodes)); err != nil {
		return nil, err
	}
	if err := o.diagnose(); err != nil {
		return nil, err
	}
	return o, nil
}

// runChains runs every chain at every point and finds the best chain of
// each point.
func (o *treesOutcome) runChains(ctx context.Context, s Setup, out string, ex []dataset.Example) error {
	var pts []Point
	for _, g := range o.points {
		for _, c := range o.chains {
			pts = append(pts, Point{Label: c.label, Method: c.method, Sets: append(append([]string(nil), c.sets...), g.sets()...)})
		}
	}
	rows, err := Evaluate(ctx, s, "tinystories", ex, pts)
	if err != nil {
		return err
	}
	if err := WriteResults(out, o.pair.tag+"_chains", rows); err != nil {
		return err
	}
	n := len(o.chains)
	for i := range o.points {
		o.chain = append(o.chain, rows[i*n:(i+1)*n])
		best := 0
		for j, r := range o.chain[i] {
			if r.Summary.ThroughputTPS > o.chain[i][best].Summary.ThroughputTPS {
				best = j
			}
		}
		o.best = append(o.best, best)
	}
	return nil
}

// qsDraft is one q-s draft's bits: a tree-q-s round cannot send less.
func (o *treesOutcome) qsDraft() int { return o.chains[0].bits }

// loosest is the loosest budget: the most bits a chain's round sends.
func (o *treesOutcome) loosest() int {
	loose := 0
	for _, c := range o.chains {
		loose = max(loose, c.bits)
	}
	return loose
}

// treeConfigs are the trees to run at each point: at the best chain's bits
// and with the loosest budget (o.grid, the comparison); at the reference
// points also at every chain's bits and with each of nodes (the ablation).
func (o *treesOutcome) treeConfigs(nodes []int) [][]treeCfg {
	qsDraft, loose := o.qsDraft(), o.loosest()
	want := make([][]treeCfg, len(o.points))
	for i, g := range o.points {
		bc := o.chains[o.best[i]]
		add := func(t treeCfg) {
			for _, u := range want[i] {
				if u.label() == t.label() {
					return
				}
			}
			want[i] = append(want[i], t)
		}
		var grid []treeCfg
		for _, m := range []string{hybrid.TreeQS, hybrid.TreeKSQS} {
			if m == hybrid.TreeQS && bc.bits < qsDraft {
				continue
			}
			grid = append(grid, treeCfg{m, bc.bits, treesNodes, bc.label})
		}
		grid = append(grid, treeCfg{hybrid.TreeQS, loose, treesNodes, "loosest"}, treeCfg{hybrid.TreeKSQS, loose, treesNodes, "loosest"})
		o.grid = append(o.grid, grid)
		for _, t := range grid {
			add(t)
		}
		if !g.ref() {
			continue
		}
		for _, c := range o.chains {
			if c.bits >= qsDraft {
				add(treeCfg{hybrid.TreeQS, c.bits, treesNodes, c.label})
			}
			add(treeCfg{hybrid.TreeKSQS, c.bits, treesNodes, c.label})
		}
		for _, n := range nodes {
			add(treeCfg{hybrid.TreeQS, loose, n, "loosest"})
		}
	}
	return want
}

// runTrees runs want[i]'s trees at point i into o.tree.
func (o *treesOutcome) runTrees(ctx context.Context, s Setup, out string, ex []dataset.Example, want [][]treeCfg) error {
	var pts []Point
	var at []int // the point of each tree run
	for i, g := range o.points {
		for _, t := range want[i] {
			pts = append(pts, Point{Label: t.label(), Method: t.method, Sets: append(t.sets(), g.sets()...)})
			at = append(at, i)
		}
	}
	rows, err := Evaluate(ctx, s, "tinystories", ex, pts)
	if err != nil {
		return err
	}
	if err := WriteResults(out, o.pair.tag+"_trees", rows); err != nil {
		return err
	}
	o.tree = make([]map[string]Row, len(o.points))
	for k, r := range rows {
		if o.tree[at[k]] == nil {
			o.tree[at[k]] = map[string]Row{}
		}
		o.tree[at[k]][r.Label] = r
	}
	return nil
}

// diagnose adds, at the reference round trips, why the trees did what they
// did: their own measurements (treeDiagnose).
func (o *treesOutcome) diagnose() error {
	qsDraft, loose := o.qsDraft(), o.loosest()
	for i, g := range o.points {
		if !g.ref() {
			continue
		}
		for _, t := range []treeCfg{{hybrid.TreeQS, o.chains[o.best[i]].bits, treesNodes, ""}, {hybrid.TreeQS, loose, treesNodes, ""}, {hybrid.TreeKSQS, loose, treesNodes, ""}} {
			if t.method == hybrid.TreeQS && t.budget < qsDraft {
				continue
			}
			d, err := treeDiagnose(g, t, o.tree[i][t.label()])
			if err != nil {
				return err
			}
			o.diags = append(o.diags, d)
		}
	}
	return nil
}

// treesIntro states the setting.
func (p *paper) treesIntro(sc treesScale, pairs []treePair, skipped string, ex []dataset.Example) {
	p.doc.H(1, "Token trees against chains at equal uplink bits")
	p.doc.P("Beyond the papers: methods `tree-q-s` and `tree-k-sqs` send a token *tree* per round instead of a chain — every internal node's distribution encoded once (Q-S's lattice at ℓ = 100, or K-SQS's top-8 sparse lattice) and carried by its first child, further candidates at a node costing only their id (⌈log2 V⌉ bits) and a parent index — and the server verifies node by node with recursive rejection sampling (speculative.VerifyTree; lossless, chi-square-tested in package hybrid). "+
		"This rerun puts them against the chains at equal uplink bits per round. Command:\n\n    %s\n\nEvery number comes from the simulator with seed %d (prompt i runs with seed %d + i, the same for every configuration, so differences are paired); the same command gives byte-identical results files.",
		p.cfg.Command, p.cfg.Seed, p.cfg.Seed)
	var names []string
	for _, pr := range pairs {
		names = append(names, fmt.Sprintf("**%s**, LLM `%s`, vocabulary %d", pr.name, pr.llm, pr.ms.LLM.Config().Vocab))
	}
	note := ""
	if skipped != "" {
		note = " Pair 2 is not measured: " + skipped + "."
		p.notice("pair 2 is not measured: " + skipped)
	}
	prompts := fmt.Sprintf("%d TinyStories validation stories (the first sentence of each; `dataset` package, the shared sample), **held out**: the tree growth rule was tuned on hlm's built-in stories (data/stories) and on nothing here", len(ex))
	if _, err := os.Stat(dataset.Default("tinystories", p.cfg.Shared)); err != nil {
		prompts = fmt.Sprintf("%d of hlm's built-in stories (the shared TinyStories sample is not there), **not held out**: the tree growth rule was tuned on them", len(ex))
	}
	p.doc.P("Pairs: %s.%s Prompts: %s. %d new tokens per prompt; τ_SLM = %g ms per SLM pass (one per distribution a round computes: a chain of L pays L, a tree one per internal node), τ_LLM = %g ms per verification (one tree pass or one chain pass alike).",
		strings.Join(names, "; "), note, prompts, p.cfg.MaxTokens, 1000*p.setup.Base.TauSLM, 1000*p.setup.Base.TauLLM)
	var rtts []string
	for _, r := range sc.rtts {
		rtts = append(rtts, fmt.Sprintf("%g", 1000*r))
	}
	var rates []string
	for _, r := range sc.rates {
		rates = append(rates, rateName(r))
	}
	p.doc.P("Grid: round trip %s ms (half on the uplink's per-message overhead, half on the downlink's: `up_overhead_s`, `down_overhead_s`), a fixed uplink of %s (`channel=fixed`, `rate_bps`; the downlink is instantaneous), temperature %v. "+
		"**Chains**: `q-s` at L = %v (ℓ = 100) and `k-sqs` (K = 8, ℓ = 100) with the budget of exactly L of its drafts (B = L·(⌈log2 V⌉ + payload); no draft cap), so that each chain's full round has known bits. "+
		"**Trees**: `tree-q-s` and `tree-k-sqs` with tree_nodes = %d, tree_depth = 8 and the dynamic growth, given a chain's full-round bits as `budget_bits` (a tree-q-s round cannot send less than one q-s draft, so it is run only at budgets that hold one). "+
		"A tree counts its parent indices in its bits (⌈log2 i⌉ for node i) and so affords a little less than the chain at the same budget; its growth also stops short of the budget when another SLM pass would lower the round's expected tokens per second (below), so its measured bits per round are at most its budget, the chain's full-round bits (the chain's own measured bits can be fewer, and the tree's then more than the chain's: its last round drafts less, and a k-sqs draft can cost less than its share of the budget). "+
		"**The best chain** at a grid point is the chain configuration with the highest throughput there; at each point the trees are run at its bits and with the loosest budget (that of q-s at the largest L), where only the time test and the node limit stop the growth. "+
		"Means carry the half-width of their 95%% interval over prompts (pooled rates by the ratio-of-sums linearization, metrics.RatioCI); a difference between two configurations is paired (same prompts and seeds) and its interval is the linearization of the difference of the two pooled rates, prompt by prompt; a ratio's interval is that of its logarithm.",
		strings.Join(rtts, ", "), strings.Join(rates, " and "), list(sc.temps), list(sc.ls), treesNodes)
}
