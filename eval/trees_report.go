package eval

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/metrics"
	"github.com/hlmproject/hlm/report"
)

// The tables and figures of the token-tree rerun (trees.go).

// treeAt is the row of tree t at point i (ok false when it was not run).
func (o *treesOutcome) treeAt(i int, t treeCfg) (Row, bool) {
	r, ok := o.tree[i][t.label()]
	return r, ok
}

// bestTree is the tree with the highest throughput among those compared
// at point i.
func (o *treesOutcome) bestTree(i int) (treeCfg, Row) {
	var bt treeCfg
	var br Row
	for _, t := range o.grid[i] {
		if r, ok := o.treeAt(i, t); ok && (br.Runs == nil || r.Summary.ThroughputTPS > br.Summary.ThroughputTPS) {
			bt, br = t, r
		}
	}
	return bt, br
}

// atBest is the better (by throughput) of the trees run at the best
// chain's bits at point i.
func (o *treesOutcome) atBest(i int) (treeCfg, Row, bool) {
	var bt treeCfg
	var br Row
	found := false
	for _, t := range o.grid[i] {
		if t.at != o.chains[o.best[i]].label {
			continue
		}
		if r, ok := o.treeAt(i, t); ok && (!found || r.Summary.ThroughputTPS > br.Summary.ThroughputTPS) {
			bt, br, found = t, r, true
		}
	}
	return bt, br, found
}

// shownRTT is the round trip whose reference tables are shown in full:
// treesRefRTT when the grid has it, else the largest.
func (o *treesOutcome) shownRTT() float64 {
	rtt := math.Inf(-1)
	for _, g := range o.points {
		if g.ref() {
			if g.rtt == treesRefRTT {
				return g.rtt
			}
			rtt = math.Max(rtt, g.rtt)
		}
	}
	return rtt
}

func pmCell(r Row, f ratioCol, digits int) string {
	v, h := pooled(r, f)
	return PM(v, h, digits)
}

func diffCell(a, b Row, f ratioCol, digits int) string {
	d, h := pairedDiff(a, b, f)
	return PM(d, h, digits)
}

func ratioOf(a, b Row, f ratioCol) string { return ratioCell(pairedRatio(a, b, f)) }

// treesTargets states issue 30's targets on pair 1 at T = 1 and whether
// the runs meet them.
func (p *paper) treesTargets(outs []*treesOutcome) error {
	o := outs[0]
	p.doc.H(2, "The targets on pair 1 (T = 1)")
	shown := o.shownRTT()
	// Target 1: committed tokens per round against Q-S's chain at the same bits.
	cols := []string{"RTT (ms)", "q-s chain", "chain tokens/round", "chain bits/round", "tree", "tree tokens/round", "tree bits/round", "tree / chain [95%]", "tree / q-s curve at the tree's bits [95%]"}
	t, full := &report.Table{Columns: cols[1:]}, &report.Table{Columns: cols}
	type best struct {
		ratio, lo float64
		what      string
	}
	bestOf := map[string]best{}
	note := func(key string, r, lo float64, what string) {
		// A tie in the ratio goes to the tighter interval's lower end.
		if b, ok := bestOf[key]; !ok || r > b.ratio || (r == b.ratio && lo > b.lo) {
			bestOf[key] = best{r, lo, what}
		}
	}
	for i, g := range o.points {
		if !g.ref() {
			continue
		}
		for _, c := range o.chains {
			if c.method != hybrid.QS {
				continue
			}
			ch := o.chain[i][o.chainIndex(c.label)]
			for _, m := range []string{hybrid.TreeQS, hybrid.TreeKSQS} {
				tr, ok := o.treeAt(i, treeCfg{m, c.bits, treesNodes, c.label})
				if !ok {
					continue
				}
				r, lo, hi := pairedRatio(tr, ch, colTokensPerRound)
				what := fmt.Sprintf("%s at the bits of %s, RTT %g ms", m, c.label, 1000*g.rtt)
				note(m, r, lo, what)
				curve := "beyond the chains"
				if ri, li, hi2, ok := o.curveRatio(i, tr); ok {
					curve = ratioCell(ri, li, hi2)
					note(m+" curve", ri, li, what)
				}
				row := []string{report.Float(1000*g.rtt, 0), c.label, pmCell(ch, colTokensPerRound, 3), report.Float(pooledV(ch, colBitsPerRound), 0),
					tr.Label, pmCell(tr, colTokensPerRound, 3), report.Float(pooledV(tr, colBitsPerRound), 0), ratioCell(r, lo, hi), curve}
				full.AddRow(row...)
				if g.rtt == shown {
					t.AddRow(row[1:]...)
				}
			}
		}
	}
	p.doc.P("**Target 1: committed tokens per round ≥ 1.25× Q-S's chain at the same bits per round.** Each q-s chain (L drafts, ℓ = 100) next to the trees given its full-round bits as budget (T = 1, %s), two ways: *tree / chain* against that chain — strict, since the tree spends at most the chain's full-round bits and, paying its parent indices, affords one distribution fewer than the chain at a q-s chain's exact bits; and *tree / q-s curve* against the q-s chains' tokens per round interpolated linearly in bits per round at the tree's measured bits (between L and L + 1, and below L = 1 toward the LLM alone's 1 token at 0 bits; its interval treats the tree's bits as fixed). Shown for RTT %g ms; every reference round trip is in `targets_tokens.csv` (the tree's growth depends on the round trip, the chain's does not).",
		rateName(treesRefRate), 1000*shown)
	var verdict []string
	for _, k := range []string{hybrid.TreeQS, hybrid.TreeQS + " curve", hybrid.TreeKSQS, hybrid.TreeKSQS + " curve"} {
		b, ok := bestOf[k]
		if !ok {
			continue
		}
		status := targetStatus(b.ratio, b.lo)
		how := "against the chain of the same budget"
		if strings.HasSuffix(k, " curve") {
			how = "against the q-s curve"
		}
		verdict = append(verdict, fmt.Sprintf("%s %s: at best %.3g× (lower 95%% bound %.3g; %s) — %s", strings.TrimSuffix(k, " curve"), how, b.ratio, b.lo, b.what, status))
	}
	p.doc.P("Best ratios over the chains and round trips: %s.", strings.Join(verdict, "; "))
	if err := p.doc.Table("", t); err != nil {
		return err
	}
	if err := writeCSV(filepath.Join(p.cfg.Out, "targets_tokens.csv"), full); err != nil {
		return err
	}
	// Target 2: throughput against the best chain where RTT ≥ 50 ms.
	t2 := &report.Table{Columns: []string{"rate", "RTT (ms)", "best chain", "chain tokens/s", "best tree", "tree tokens/s", "tree − chain (paired)", "tree / chain [95%]", "≥ 1.2×"}}
	met, n := 0, 0
	for i, g := range o.points {
		if g.temp != treesRefTemp || g.rtt < 0.05 {
			continue
		}
		ch := o.chain[i][o.best[i]]
		bt, br := o.bestTree(i)
		if br.Runs == nil {
			continue
		}
		r, lo, hi := pairedRatio(br, ch, colTPS)
		ok := "no"
		if r >= 1.2 {
			ok = "yes"
			met++
		}
		n++
		t2.AddRow(rateName(g.rate), report.Float(1000*g.rtt, 0), o.chains[o.best[i]].label, pmCell(ch, colTPS, 4), bt.label(), pmCell(br, colTPS, 4),
			diffCell(br, ch, colTPS, 3), ratioCell(r, lo, hi), ok)
	}
	p.doc.P("**Target 2: throughput ≥ 1.2× the best chain method where the round trip is ≥ 50 ms.** At every such point of the grid at T = 1: the chain configuration with the highest throughput there against the best tree there (throughput on the virtual clock). The point estimate reaches 1.2× at **%d of %d** points.", met, n)
	if err := p.doc.Table("targets_throughput", t2); err != nil {
		return err
	}
	p.treesWhy(o)
	return nil
}

// curveRatio is tree row tr's pooled tokens per round over the q-s chains'
// at point i interpolated linearly at tr's measured bits per round (below
// the shortest chain, toward the LLM alone: 1 token per round at 0 bits),
// with the 95% interval of the ratio's logarithm, linearized with the
// interpolation weight held fixed. ok is false beyond the longest chain.
func (o *treesOutcome) curveRatio(i int, tr Row) (ratio, lo, hi float64, ok bool) {
	b := pooledV(tr, colBitsPerRound)
	type pt struct {
		bits float64
		row  *Row
	}
	pts := []pt{{0, nil}} // the LLM alone
	for j, c := range o.chains {
		if c.method == hybrid.QS {
			pts = append(pts, pt{pooledV(o.chain[i][j], colBitsPerRound), &o.chain[i][j]})
		}
	}
	k := 1
	for k < len(pts) && pts[k].bits < b {
		k++
	}
	if k == len(pts) {
		return 0, 0, 0, false
	}
	a, c := pts[k-1], pts[k]
	w := (b - a.bits) / (c.bits - a.bits)
	n := len(tr.Runs)
	rt, zt := influence(split(tr, colTokensPerRound))
	at, za := 1.0, make([]float64, n)
	if a.row != nil {
		at, za = influence(split(*a.row, colTokensPerRound))
	}
	ct, zc := influence(split(*c.row, colTokensPerRound))
	curve := (1-w)*at + w*ct
	z := make([]float64, n)
	for j := range z {
		z[j] = zt[j]/rt - ((1-w)*za[j]+w*zc[j])/curve
	}
	h := metrics.CI95(z)
	ratio = rt / curve
	return ratio, ratio * math.Exp(-h), ratio * math.Exp(h), true
}

// pooledV is a row's pooled rate.
func pooledV(r Row, f ratioCol) float64 { v, _ := pooled(r, f); return v }

// chainIndex is the index of the chain labelled l.
func (o *treesOutcome) chainIndex(l string) int {
	for i, c := range o.chains {
		if c.label == l {
			return i
		}
	}
	panic("eval: no chain " + l)
}

// treesWhy says, from pair 1's diagnostics at the shown round trip, what
// bounds the trees: the acceptance of first and later candidates, the
// share of the bits the distributions take, the SLM passes and the node
// limit.
func (p *paper) treesWhy(o *treesOutcome) {
	shown := o.shownRTT()
	for _, d := range o.diags {
		if d.point.rtt != shown || d.cfg.method != hybrid.TreeQS || d.cfg.at != "" || d.cfg.budget != o.looseBudget() {
			continue
		}
		r := d.rep
		later := 0
		for _, l := range r.Later {
			later += l[0]
		}
		total := r.PayloadBits + r.IDBits + r.ParentBits
		node := [2]int{}
		for _, l := range r.Levels {
			node[0] += l[0]
			node[1] += l[1]
		}
		p.doc.P("**Why, in numbers** (tree-q-s with the loosest budget, %s; the device's own counts, `p1_diagnostics.csv`): "+
			"a first candidate is accepted %.1f%% of the time, a node with its candidates %.1f%% (the later candidates take %.1f%% of the accepted drafts; %.1f%% of the trees' accepted paths went through one). "+
			"The trees average %.2f SLM passes (distributions) and %.1f nodes per round against a limit of %d, %.0f%% of them repeats that can never be accepted; the distributions take %.0f%% of the tree's %.0f bits per round, the candidates' ids %.0f%% and the parent indices %.0f%%. "+
			"So a tree cannot carry many more tokens per round than a chain of as many distributions: the tokens a round commits are bounded by its depth + 1, every level of depth costs one distribution (%.0f bits of lattice payload and one SLM pass of %g ms), and extra candidates lift the acceptance of a level from %.2f to %.2f, not more. "+
			"At equal bits the tree affords one distribution less than the chain (its parent indices and its candidates take the bits of about one), and the time test stops the growth where another SLM pass costs more time than it saves.",
			d.point, 100*frac(r.First[0], r.First[1]), 100*frac(node[0], node[1]), 100*frac(later, r.Accepted), 100*frac(r.LaterPaths, r.Trees),
			frac(r.Internal, r.Trees), frac(r.Nodes, r.Trees), d.cfg.nodes, 100*frac(r.Dups, r.Nodes),
			100*float64(r.PayloadBits)/float64(total), float64(total)/float64(r.Trees), 100*float64(r.IDBits)/float64(total), 100*float64(r.ParentBits)/float64(total),
			float64(r.PayloadBits)/float64(max(1, r.Internal)), 1000*p.setup.Base.TauSLM, frac(r.First[0], r.First[1]), frac(node[0], node[1]))
		return
	}
}

// looseBudget is the loosest tree budget: the bits of the longest chain.
func (o *treesOutcome) looseBudget() int {
	b := 0
	for _, c := range o.chains {
		b = max(b, c.bits)
	}
	return b
}

// treesReport makes one pair's section: the equal-bits comparison at the
// reference setting, the grid, where trees win and lose, the diagnostics
// and the node-limit ablation.
func (p *paper) treesReport(sc treesScale, o *treesOutcome) error {
	p.doc.H(2, o.pair.name)
	if err := p.treesEqualBits(o); err != nil {
		return err
	}
	if err := p.treesGrid(o); err != nil {
		return err
	}
	if err := p.treesDiagnostics(o); err != nil {
		return err
	}
	return p.treesNodes(sc, o)
}

// treesEqualBits is every chain next to the trees given its bits, at the
// reference setting: a table (the shown round trip; all in the CSV) and
// the tokens per round against the bits per round.
func (p *paper) treesEqualBits(o *treesOutcome) error {
	tag, shown := o.pair.tag, o.shownRTT()
	cols := []string{"RTT (ms)", "chain", "chain tokens/round", "chain bits/round", "chain SLM passes/round", "chain tokens/s", "tree", "tree tokens/round", "tree bits/round", "tree SLM passes/round", "tree tokens/s", "tokens/round tree / chain [95%]", "tokens/s tree − chain (paired)"}
	t, full := &report.Table{Columns: cols[1:]}, &report.Table{Columns: cols}
	var curves = map[string]*report.Series{}
	series := func(name string) *report.Series {
		if curves[name] == nil {
			curves[name] = &report.Series{Name: name}
		}
		return curves[name]
	}
	point := func(name string, r Row) {
		v, h := pooled(r, colTokensPerRound)
		s := series(name)
		s.X, s.Y, s.YErr = append(s.X, pooledV(r, colBitsPerRound)), append(s.Y, v), append(s.YErr, h)
	}
	for i, g := range o.points {
		if !g.ref() {
			continue
		}
		for j, c := range o.chains {
			ch := o.chain[i][j]
			if g.rtt == shown {
				point(c.method+" chain", ch)
			}
			for _, m := range []string{hybrid.TreeQS, hybrid.TreeKSQS} {
				tr, ok := o.treeAt(i, treeCfg{m, c.bits, treesNodes, c.label})
				if !ok {
					continue
				}
				row := []string{report.Float(1000*g.rtt, 0), c.label, pmCell(ch, colTokensPerRound, 3), report.Float(pooledV(ch, colBitsPerRound), 0), report.Float(pooledV(ch, colPassesPerRound), 2), pmCell(ch, colTPS, 4),
					fmt.Sprintf("%s B=%d", m, c.bits), pmCell(tr, colTokensPerRound, 3), report.Float(pooledV(tr, colBitsPerRound), 0), report.Float(pooledV(tr, colPassesPerRound), 2), pmCell(tr, colTPS, 4),
					ratioOf(tr, ch, colTokensPerRound), diffCell(tr, ch, colTPS, 3)}
				full.AddRow(row...)
				if g.rtt == shown {
					t.AddRow(row[1:]...)
					if c.method == hybrid.QS || m == hybrid.TreeKSQS {
						point(m, tr)
					}
				}
			}
		}
	}
	p.doc.H(3, "Trees at the bits of each chain")
	p.doc.P("T = %g, %s, RTT %g ms (every reference round trip in `%s_equal_bits.csv`). Each chain, then each tree given the chain's full-round bits as budget_bits: committed tokens per round, uplink bits per round and SLM passes per round as measured (a tree stops short of its budget where the time test or the node limit stops it), throughput on the virtual clock, and the paired comparisons.",
		treesRefTemp, rateName(treesRefRate), 1000*shown, tag)
	if err := p.doc.Table("", t); err != nil {
		return err
	}
	if err := writeCSV(filepath.Join(p.cfg.Out, tag+"_equal_bits.csv"), full); err != nil {
		return err
	}
	lp := &report.LinePlot{Title: fmt.Sprintf("%s, T = %g, %s, RTT %g ms", o.pair.short, treesRefTemp, rateName(treesRefRate), 1000*shown),
		XLabel: "uplink bits per round (measured)", YLabel: "committed tokens per round", Legend: "bottom-right"}
	for _, name := range []string{"q-s chain", "k-sqs chain", hybrid.TreeQS, hybrid.TreeKSQS} {
		if s := curves[name]; s != nil {
			lp.Series = append(lp.Series, byX(*s))
		}
	}
	return p.doc.Plot(tag+"_tokens_per_round", "Committed tokens per round against uplink bits per round: chains and the trees given their bits ("+o.pair.name+")", lp)
}

// treesGrid is the best chain and the trees at every point of the grid,
// and the figure of where trees win and lose.
func (p *paper) treesGrid(o *treesOutcome) error {
	tag := o.pair.tag
	t := &report.Table{Columns: []string{"T", "rate", "RTT (ms)", "best chain", "chain tokens/s", "chain tokens/round", "chain bits/token", "tree at its bits", "its tokens/s", "its − chain (paired)", "best tree", "tree tokens/s", "tree tokens/round", "tree bits/token", "best tree / best chain [95%]"}}
	type key struct{ temp, rate float64 }
	lines := map[key]*report.Series{}
	var order []key
	wins, losses := 0, 0
	for i, g := range o.points {
		ch := o.chain[i][o.best[i]]
		row := []string{report.Float(g.temp, 1), rateName(g.rate), report.Float(1000*g.rtt, 0), o.chains[o.best[i]].label, pmCell(ch, colTPS, 4), pmCell(ch, colTokensPerRound, 3), report.Float(pooledV(ch, colBitsPerToken), 0)}
		if at, ar, ok := o.atBest(i); ok {
			row = append(row, at.label(), pmCell(ar, colTPS, 4), diffCell(ar, ch, colTPS, 3))
		} else {
			row = append(row, "–", "–", "–")
		}
		bt, br := o.bestTree(i)
		r, lo, hi := pairedRatio(br, ch, colTPS)
		row = append(row, bt.label(), pmCell(br, colTPS, 4), pmCell(br, colTokensPerRound, 3), report.Float(pooledV(br, colBitsPerToken), 0), ratioCell(r, lo, hi))
		t.AddRow(row...)
		switch {
		case lo > 1:
			wins++
		case hi < 1:
			losses++
		}
		k := key{g.temp, g.rate}
		if lines[k] == nil {
			lines[k] = &report.Series{Name: fmt.Sprintf("T = %g, %s", g.temp, rateName(g.rate))}
			order = append(order, k)
		}
		s := lines[k]
		s.X, s.Y, s.YErr = append(s.X, 1000*g.rtt), append(s.Y, r), append(s.YErr, (hi-lo)/2)
	}
	p.doc.H(3, "The grid: the best chain against the trees")
	p.doc.P("At every point: the chain configuration with the highest throughput there, the better of the two trees given its bits (tree-q-s only where one q-s draft fits), and the best of those trees and the two with the loosest budget (%d bits: only the time test and the node limit stop them). "+
		"Bits/token are uplink bits per committed token. The best tree is faster than the best chain beyond the 95%% interval at **%d of %d** points and slower at **%d**.", o.looseBudget(), wins, len(o.points), losses)
	if err := p.doc.Table(tag+"_grid", t); err != nil {
		return err
	}
	lp := &report.LinePlot{Title: o.pair.short + ": where trees win and lose", XLabel: "round trip (ms)", YLabel: "best tree / best chain throughput", Legend: "bottom-right"}
	var xmin, xmax float64 = math.Inf(1), math.Inf(-1)
	for _, k := range order {
		s := *lines[k]
		lp.Series = append(lp.Series, s)
		for _, x := range s.X {
			xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
		}
	}
	lp.Series = append(lp.Series, report.Series{Name: "parity", X: []float64{xmin, xmax}, Y: []float64{1, 1}}, report.Series{Name: "target 1.2×", X: []float64{xmin, xmax}, Y: []float64{1.2, 1.2}})
	return p.doc.Plot(tag+"_where", "Best tree over best chain, throughput, by round trip, uplink rate and temperature (95% intervals of the paired ratio; "+o.pair.name+")", lp)
}

// treesDiagnostics tabulates what the devices measured of their trees.
func (p *paper) treesDiagnostics(o *treesOutcome) error {
	tag := o.pair.tag
	t := &report.Table{Columns: []string{"RTT (ms)", "tree", "tokens/round", "nodes/round", "repeats", "SLM passes/round", "depth", "bits/round", "payload", "ids", "parents",
		"first accepted", "node accepted", "later / accepted", "paths via a later", "predicted accepted/round", "accepted/round", "node acceptance by depth"}}
	// A tree at the best chain's bits is the loose one where the best chain
	// is the largest (quick reruns): each configuration once per point.
	var diags []treeDiag
	seenCfg := map[string]bool{}
	for _, d := range o.diags {
		key := fmt.Sprint(d.point.rtt, d.point.rate, d.point.temp, " ", d.cfg.label())
		if !seenCfg[key] {
			seenCfg[key] = true
			diags = append(diags, d)
		}
	}
	var shown []treeDiag // the loose trees at the shown round trip, for the table by q
	for _, d := range diags {
		if d.point.rtt == o.shownRTT() && d.cfg.budget == o.looseBudget() && d.rep.Trees > 0 {
			shown = append(shown, d)
		}
	}
	q := &report.Table{Columns: []string{"draft's probability q"}}
	for _, d := range shown {
		q.Columns = append(q.Columns, d.cfg.label()+": first candidates", "accepted")
	}
	for b := range 10 {
		row := []string{fmt.Sprintf("%.1f–%.1f", float64(b)/10, float64(b+1)/10)}
		for _, d := range shown {
			c := d.rep.FirstBy[b]
			row = append(row, fmt.Sprint(c[1]), pct(frac(c[0], c[1])))
		}
		q.AddRow(row...)
	}
	for _, d := range diags {
		r := d.rep
		if r.Trees == 0 {
			continue
		}
		T := float64(r.Trees)
		total := float64(r.PayloadBits + r.IDBits + r.ParentBits)
		later := 0
		for _, l := range r.Later {
			later += l[0]
		}
		node := [2]int{}
		var levels []string
		for k, l := range r.Levels {
			node[0] += l[0]
			node[1] += l[1]
			if k < 6 {
				levels = append(levels, fmt.Sprintf("%.2f (%d)", frac(l[0], l[1]), l[1]))
			}
		}
		t.AddRow(report.Float(1000*d.point.rtt, 0), d.cfg.label(), pmCell(d.row, colTokensPerRound, 3), report.Float(float64(r.Nodes)/T, 1), pct(frac(r.Dups, r.Nodes)), report.Float(float64(r.Internal)/T, 2), report.Float(float64(r.Depth)/T, 2),
			report.Float(total/T, 0), pct(float64(r.PayloadBits)/total), pct(float64(r.IDBits)/total), pct(float64(r.ParentBits)/total),
			pct(frac(r.First[0], r.First[1])), pct(frac(node[0], node[1])), pct(frac(later, r.Accepted)), pct(frac(r.LaterPaths, r.Trees)),
			report.Float(r.Predicted/T, 3), report.Float(float64(r.Accepted)/T, 3), strings.Join(levels, ", "))
	}
	p.doc.H(3, "What the trees did")
	p.doc.P("The devices' own counts (hybrid.TreeReport) for tree-q-s at the best chain's bits and with the loosest budget, and tree-k-sqs with the loosest budget, at the reference setting (T = %g, %s) and every round trip; the runs are those of the tables above (each run's Result.Tree). "+
		"*Repeats* are candidates that repeat an earlier candidate of their node: drawn independently from the same distribution, they must be sent (the proof of VerifyCandidates needs every draw) and can never be accepted. "+
		"Bits split into the encoded distributions (payload), the candidates' ids and the parent indices. *First accepted*: the first candidates the walk checked that it accepted; *node accepted*: nodes with candidates that the walk reached where one was accepted; *later / accepted*: the share of accepted drafts that were not their node's first candidate; *paths via a later*: rounds whose accepted path took one. "+
		"*Predicted* is the growth's own estimate (Σ of its nodes' values), next to what was accepted; the last column is the node acceptance at depth 0, 1, … of the accepted paths (with the nodes reached).", treesRefTemp, rateName(treesRefRate))
	if err := p.doc.Table(tag+"_diagnostics", t); err != nil {
		return err
	}
	p.doc.P("First candidates by the draft's own probability of them, with the loosest budget (RTT %g ms): EAGLE-2 reads the draft's confidence as acceptance, which holds for a greedy draft; for a token *sampled* from the draft, acceptance min(1, y/x̂) is far above q where q is small, which is why the growth fits a line to the measured acceptance instead of using q.", 1000*o.shownRTT())
	return p.doc.Table(tag+"_first_by_q", q)
}

// treesNodes is the node-limit ablation: tree-q-s with the loosest budget
// at every tree_nodes of the scale, at the reference setting.
func (p *paper) treesNodes(sc treesScale, o *treesOutcome) error {
	tag := o.pair.tag
	t := &report.Table{Columns: []string{"RTT (ms)", "tree_nodes", "tokens/round", "bits/round", "SLM passes/round", "tokens/s", fmt.Sprintf("− tree_nodes=%d (paired)", treesNodes)}}
	for i, g := range o.points {
		if !g.ref() {
			continue
		}
		ref, ok := o.treeAt(i, treeCfg{hybrid.TreeQS, o.looseBudget(), treesNodes, ""})
		if !ok {
			continue
		}
		for _, n := range sc.nodes {
			r, ok := o.treeAt(i, treeCfg{hybrid.TreeQS, o.looseBudget(), n, ""})
			if !ok {
				continue
			}
			t.AddRow(report.Float(1000*g.rtt, 0), fmt.Sprint(n), pmCell(r, colTokensPerRound, 3), report.Float(pooledV(r, colBitsPerRound), 0), report.Float(pooledV(r, colPassesPerRound), 2), pmCell(r, colTPS, 4), diffCell(r, ref, colTPS, 3))
		}
	}
	p.doc.H(3, "The node limit")
	p.doc.P("tree-q-s with the loosest budget (%d bits) at tree_nodes %v, T = %g, %s (hlm's default is %d; the rest of this report uses %d).", o.looseBudget(), list(sc.nodes), treesRefTemp, rateName(treesRefRate), hybrid.DefaultParams().TreeNodes, treesNodes)
	return p.doc.Table(tag+"_nodes", t)
}

// byX is s with its points in increasing x (a curve drawn left to right).
func byX(s report.Series) report.Series {
	idx := make([]int, len(s.X))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return s.X[idx[a]] < s.X[idx[b]] })
	out := report.Series{Name: s.Name}
	for _, i := range idx {
		out.X, out.Y = append(out.X, s.X[i]), append(out.Y, s.Y[i])
		if s.YErr != nil {
			out.YErr = append(out.YErr, s.YErr[i])
		}
	}
	return out
}

// targetStatus is Target 1's verdict on a ratio and the lower end of its
// 95% interval: met by the point estimate; "beyond its interval" only when
// the lower bound clears the target too. A lower bound that is NaN (one
// prompt: no interval) is said to be missing, not to reach below.
func targetStatus(ratio, lo float64) string {
	switch {
	case lo >= 1.25:
		return "**met**, beyond its interval"
	case ratio >= 1.25 && math.IsNaN(lo):
		return "**met** by the point estimate (no interval: one prompt)"
	case ratio >= 1.25:
		return "**met** by the point estimate (its 95% interval reaches below 1.25)"
	}
	return "**not met**"
}
