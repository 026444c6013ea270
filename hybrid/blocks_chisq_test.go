package hybrid

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hlmproject/hlm/channel"
	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/internal/stattest"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/sampling"
	"github.com/hlmproject/hlm/speculative"
	"github.com/hlmproject/hlm/wire"
)

// Real-pair chi-square tests over several positions: the
// stories260K LLM and the draft hlm ships for it, runs of chiPositions
// tokens, and for each position j the tokens the runs committed there
// against the distribution they should have followed given each run's own
// committed prefix. TestLosslessOnRealPair looks at the first token only
// (MaxTokens = 1), so it never sees a block of several drafts, a batch cut
// by the bit budget, a C-SQS threshold rolled back or a coupled race after
// a rejection; these runs do.
//
// The statistic. At position j each run's token is a draw from its own
// reference distribution, P(· | the run's first j−1 tokens), evaluated
// here with the run's own prefix (the models are re-run on it, outside the
// code under test). stattest.Conditional tests the counts per token against
// the sum of those distributions with their exact covariance (cells below
// 5 expected pooled), asymptotically χ² under the null hypothesis that
// every token followed its reference; the runs (seeds 0…N−1) are
// independent. Each case makes chiPositions tests, each at
// α = 0.001/chiPositions (Bonferroni): a case that is right fails with
// probability at most 0.001.

const (
	chiPositions = 5     // tokens per run, each position tested
	chiAlpha     = 0.001 // per case, split over the positions
)

// chiRuns is N, the runs per case: 2,000, or 600 with -short.
func chiRuns() int {
	if testing.Short() {
		return 600
	}
	return 2000
}

// roundLog is what a verified round did, as the device's link sees it.
type roundLog struct {
	L, room, bits  int // drafts per list, tokens still to commit, codec bits
	accepted, list int // the verdict: accepted drafts, the list it followed
	resampled      bool
	later          bool // a tree's path went through a candidate other than its node's first
}

// loggingVerifier verifies on the local server and logs each round.
type loggingVerifier struct {
	*Local
	K, max, done int
	rounds       []roundLog
}

func (v *loggingVerifier) Verify(ctx context.Context, up *wire.Upload) (*wire.Verdict, error) {
	vd, err := v.Local.Verify(ctx, up)
	if err != nil {
		return vd, err
	}
	bits := 0
	for _, d := range up.Drafts {
		bits += int(d.Bits)
	}
	v.rounds = append(v.rounds, roundLog{L: len(up.Drafts) / v.K, room: v.max - v.done, bits: bits,
		accepted: vd.Accepted, list: vd.Draft, resampled: vd.Resampled, later: laterCandidate(up, vd)})
	v.done += vd.Accepted + 1
	return vd, nil
}

// laterCandidate reports that a tree verdict's path took a candidate that
// was not the first of its node.
func laterCandidate(up *wire.Upload, vd *wire.Verdict) bool {
	if up.Parents == nil || !vd.HasNode {
		return false
	}
	for n := vd.Node - 1; n >= 0; n = int(up.Parents[n]) {
		first := slices.Index(up.Parents, up.Parents[n])
		if first != n {
			return true
		}
	}
	return false
}

// runLogged is runOnce with the rounds logged.
func runLogged(t testing.TB, p Params, llm, slm model.Model, prompt []int) (Result, []roundLog) {
	t.Helper()
	dev, err := NewDevice(p, slm, llm.Config().Vocab, prompt)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewReplicaServer(p, llm, slm, prompt)
	if err != nil {
		t.Fatal(err)
	}
	link, err := channel.New(p.Channel)
	if err != nil {
		t.Fatal(err)
	}
	l := &Local{Server: srv}
	v := &loggingVerifier{Local: l, K: p.listK(), max: p.MaxTokens}
	r, err := Run(context.Background(), Config{Device: dev, Verifier: v, Oracle: l, Link: link, Context: llm.Config().SeqLen})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tokens) < p.MaxTokens {
		t.Fatalf("seed %d: %d tokens, want %d", p.Seed, len(r.Tokens), p.MaxTokens)
	}
	return r, v.rounds
}

// roles gives, for each of the first n committed tokens, the draft index
// it was committed at (an accepted draft, or the residual token at the
// rejected draft) or −1 for a bonus token.
func roles(rounds []roundLog, n int) []int {
	var out []int
	for _, r := range rounds {
		for l := 0; l < r.accepted; l++ {
			out = append(out, l)
		}
		if r.resampled {
			out = append(out, r.accepted)
		} else {
			out = append(out, -1)
		}
	}
	if len(out) < n {
		panic(fmt.Sprintf("roles: %d tokens from the rounds, want %d", len(out), n))
	}
	return out[:n]
}

// usage sums what the runs of a case exercised.
type usage struct {
	runs, rounds int
	deep         int // tokens committed as accepted drafts at block index ≥ 1
	budgetBound  int // rounds whose batch ended below the tokens left: the bit budget ended it
	overBudget   int // rounds of more than one draft whose codec bits exceed B
	rollback     int // rounds rejected before their last draft (C-SQS rolls β back)
	otherList    int // rounds that followed a list other than list 0
	later        int // tree rounds whose path took a node's later candidate
}

func (u *usage) add(p Params, rounds []roundLog) {
	u.runs++
	for _, r := range rounds {
		u.rounds++
		u.deep += max(r.accepted-1, 0)
		if r.L < r.room {
			u.budgetBound++
		}
		if r.L > 1 && r.bits > p.Budget {
			u.overBudget++
		}
		if r.resampled && r.accepted+1 < r.L {
			u.rollback++
		}
		if r.list > 0 {
			u.otherList++
		}
		if r.later {
			u.later++
		}
	}
}

func (u usage) String() string {
	return fmt.Sprintf("%d rounds in %d runs: %d later drafts accepted, %d batches cut by the budget, %d rolled back, %d won by a list other than 0, %d through a tree node's later candidate",
		u.rounds, u.runs, u.deep, u.budgetBound, u.rollback, u.otherList, u.later)
}

// chiCase is one method and setting; exercised fails the case when its
// runs did not exercise what the case is there for.
type chiCase struct {
	name      string
	method    string
	sets      []string
	lossy     bool // reference: the method's own exact output distribution, and it must fail against the LLM's
	broken    bool // a seeded break: it must fail against the LLM's (no reference of its own)
	hook      func() (restore func())
	exercised func(u usage) error
}

// atLeast fails when got < frac·of.
func atLeast(what string, got int, frac float64, of int) error {
	if float64(got) < frac*float64(of) {
		return fmt.Errorf("%s: %d, want at least %.0f%% of %d", what, got, 100*frac, of)
	}
	return nil
}

func chiCases() []chiCase {
	deep := func(u usage) error { return atLeast("later drafts accepted (per run)", u.deep, 0.5, u.runs) }
	return []chiCase{
		{name: "q-s l=3", method: QS, sets: []string{"l=3", "ell=20"}, exercised: deep},
		{name: "k-sqs budget", method: KSQS, sets: []string{"sqs_k=4", "ell=10", "budget_bits=" + fmt.Sprint(3*ksqsBits(4, 10))},
			exercised: func(u usage) error {
				if u.overBudget > 0 {
					return fmt.Errorf("%d batches over the budget", u.overBudget)
				}
				return firstErr(atLeast("batches cut by the budget (per run)", u.budgetBound, 1, u.runs), deep(u))
			}},
		{name: "c-sqs budget+rollback", method: CSQS, sets: []string{"conf_beta=0.01", "ell=10", "budget_bits=300"},
			exercised: func(u usage) error {
				if u.overBudget > 0 {
					return fmt.Errorf("%d batches over the budget", u.overBudget)
				}
				return firstErr(atLeast("batches cut by the budget (per run)", u.budgetBound, 1, u.runs),
					atLeast("batches rolled back", u.rollback, 0.1, u.rounds), deep(u))
			}},
		{name: "coupled l=3", method: Coupled, sets: []string{"l=3"}, exercised: deep},
		{name: "replica l=3", method: Replica, sets: []string{"l=3"}, exercised: deep},
		// Away from temperature 1 and with a top-k cut: a server that
		// rebuilds x̂ (replica) or the tree's targets without the sampler
		// settings passes every case at temperature 1 above.
		{name: "replica l=3 T=0.6 top_k=12", method: Replica, sets: []string{"l=3", "temperature=0.6", "top_k=12"}, exercised: deep},
		{name: "coupled-list K=3 l=3", method: CoupledList, sets: []string{"list_k=3", "l=3"},
			exercised: func(u usage) error {
				return firstErr(atLeast("rounds won by a list other than 0", u.otherList, 0.05, u.rounds), deep(u))
			}},
		// Token trees: recursive rejection sampling over candidates at
		// every node of the path, deep paths and later candidates taken.
		{name: "tree-q-s dynamic", method: TreeQS, sets: []string{"ell=20", "budget_bits=" + fmt.Sprint(3*latticeBits(20))},
			exercised: func(u usage) error {
				return firstErr(atLeast("rounds through a later candidate", u.later, 0.03, u.rounds), deep(u))
			}},
		{name: "tree-q-s shape 3,2,2", method: TreeQS, sets: []string{"ell=20", "tree_shape=3,2,2", "budget_bits=4000"},
			exercised: func(u usage) error {
				return firstErr(atLeast("rounds through a later candidate", u.later, 0.03, u.rounds), deep(u))
			}},
		{name: "tree-q-s shape 3,2,2 T=0.6 top_k=12", method: TreeQS, sets: []string{"ell=20", "tree_shape=3,2,2", "budget_bits=4000", "temperature=0.6", "top_k=12"}, exercised: deep},
		{name: "tree-k-sqs", method: TreeKSQS, sets: []string{"sqs_k=4", "ell=10", "tree_shape=2,2,2"},
			exercised: func(u usage) error {
				return firstErr(atLeast("rounds through a later candidate", u.later, 0.03, u.rounds), deep(u))
			}},
		// Seeded breaks of the trees; each must be caught: candidates
		// drafted from another distribution (with x̂'s support) than the
		// x̂ the server checks them against, and every candidate of a node
		// checked against y itself, without the residual update.
		{name: "break: tree candidates from a sharper x̂", method: TreeQS, sets: []string{"ell=20", "tree_shape=3,2,2", "budget_bits=4000"}, broken: true, exercised: deep,
			hook: func() func() {
				treeDraftFrom = func(tr *tree, n int) []float64 { // x̂², renormalized: the same support, another law
					s := slices.Clone(tr.sample(n))
					sum := 0.0
					for i := range s {
						s[i] *= s[i]
						sum += s[i]
					}
					for i := range s {
						s[i] /= sum
					}
					return s
				}
				return func() { treeDraftFrom = (*tree).sample }
			}},
		{name: "break: tree without the residual", method: TreeQS, sets: []string{"ell=20", "tree_shape=3,2,2", "budget_bits=4000"}, broken: true, exercised: deep,
			hook: func() func() {
				verifyTree = treeWithoutResidual
				return func() { verifyTree = speculative.VerifyTree }
			}},
		// Lossy controls: sample, then compress. Against their own exact
		// output distribution they must pass; against the LLM's they must
		// fail — the power of the test at these sizes.
		{name: "s-q l=3 ℓ=8", method: SQ, sets: []string{"l=3", "ell=8"}, lossy: true, exercised: deep},
		{name: "k-sqs sample_from=slm", method: KSQS, sets: []string{"sqs_k=4", "ell=10", "sample_from=slm", "budget_bits=" + fmt.Sprint(3*ksqsBits(4, 10))}, lossy: true, exercised: deep},
	}
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// treeWithoutResidual is speculative.VerifyTree broken: each candidate of
// a node is checked against y itself, with no residual update after a
// rejection, and the token after all rejections drawn from y.
func treeWithoutResidual(t speculative.Tree, xhat func(n int) []float64, y func(n int) []float64, rng *rand.Rand) (speculative.TreeResult, error) {
	var res speculative.TreeResult
	for n := -1; ; {
		kids := t.Children(n)
		target := y(n)
		accepted := -1
		for _, k := range kids {
			c := t.Tokens[k]
			if rng.Float64()*xhat(n)[c] < target[c] {
				accepted = kids[slices.IndexFunc(kids, func(j int) bool { return t.Tokens[j] == c })] // a repeat's first occurrence
				break
			}
		}
		if accepted < 0 {
			res.Token, res.Resampled = sampling.Sample(target, rng), len(kids) > 0
			return res, nil
		}
		res.Path = append(res.Path, accepted)
		n = accepted
	}
}

// latticeBits is the payload of one lattice draft over stories260K's 512
// tokens.
func latticeBits(ell int) int {
	b, err := codec.Lattice{L: ell}.Bits(512)
	if err != nil {
		panic(err)
	}
	return b
}

// ksqsBits is the payload of one K-SQS draft over stories260K's 512 tokens.
func ksqsBits(k, ell int) int {
	b, err := codec.KSQS{K: k, L: ell}.Bits(512)
	if err != nil {
		panic(err)
	}
	return b
}

// TestBlocksFollowTheLLMOnRealPair: for every case, the first chiPositions
// tokens of N runs (seeds 0…N−1, prompt "She was", temperature 1 unless
// the case sets another)
// against the LLM's conditional distributions (lossless methods) or the
// method's own exact output distribution (lossy controls:
// speculative.OutputDist of the SLM's x, its reconstruction x̂ and y at a
// draft position, y at a bonus position), position by position, at
// 0.001/chiPositions each. The lossy controls must also fail against the
// LLM. Each case must have exercised its mechanism (later drafts of a
// block accepted, batches cut by the budget, C-SQS rollbacks, lists
// other than the first winning).
func TestBlocksFollowTheLLMOnRealPair(t *testing.T) {
	llm, slm := openPair(t, builtin.Prefix+"stories260K-draft")
	prompt := llm.Tokenizer().Encode("She was", true)
	n := chiRuns()
	for _, tc := range chiCases() {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultParams()
			if tc.hook != nil {
				defer tc.hook()()
			}
			p.Method, p.MaxTokens = tc.method, chiPositions
			if err := p.SetAll(tc.sets); err != nil {
				t.Fatal(err)
			}
			ref := newReference(t, p, llm, slm, prompt)
			var u usage
			for seed := 0; seed < n; seed++ {
				p.Seed = uint64(seed)
				r, rounds := runLogged(t, p, llm, slm, prompt)
				u.add(p, rounds)
				ref.add(t, r.Tokens[:chiPositions], roles(rounds, chiPositions), tc.lossy)
			}
			t.Logf("%s", u)
			if err := tc.exercised(u); err != nil {
				t.Errorf("the runs did not exercise the case: %v", err)
			}
			if tc.broken {
				if w := ref.reportLLM(t); w >= chiAlpha/chiPositions {
					t.Errorf("%s passed against the LLM (smallest p-value %.3g): the test does not catch it", tc.name, w)
				}
				return
			}
			worst := ref.report(t, "reference")
			if worst < chiAlpha/chiPositions {
				t.Errorf("%s deviates from its reference: smallest p-value %.3g < %.3g", tc.name, worst, chiAlpha/chiPositions)
			}
			if tc.lossy {
				if w := ref.reportLLM(t); w >= chiAlpha/chiPositions {
					t.Errorf("%s is lossy but passed against the LLM (smallest p-value %.3g): the test has no power", tc.name, w)
				}
			}
		})
	}
}

// reference accumulates, per position, each run's token with the
// distribution it should have followed (and the LLM's, for lossy cases).
type reference struct {
	p          Params
	llm, slm   model.Session
	promptLen  int
	y0, x0     []float64 // the distributions after the prompt
	ref, llmY  []stattest.Conditional
	codecRecon func(x []float64) ([]float64, error)
}

func newReference(t *testing.T, p Params, llm, slm model.Model, prompt []int) *reference {
	t.Helper()
	r := &reference{p: p, llm: llm.NewSession(), slm: slm.NewSession(), promptLen: len(prompt),
		ref: make([]stattest.Conditional, chiPositions), llmY: make([]stattest.Conditional, chiPositions)}
	yl, err := r.llm.Prefill(prompt)
	if err != nil {
		t.Fatal(err)
	}
	xl, err := r.slm.Prefill(prompt)
	if err != nil {
		t.Fatal(err)
	}
	r.y0, r.x0 = p.Dist(nil, yl), p.Dist(nil, xl)
	c, err := Codec(p)
	if err != nil {
		t.Fatal(err)
	}
	if c != nil {
		r.codecRecon = func(x []float64) ([]float64, error) {
			enc, err := c.Encode(x, -1)
			return enc.Recon, err
		}
	}
	return r
}

// along returns a model's distributions at each of the first len(toks)
// positions of a run: after the prompt, then after each token.
func (r *reference) along(t *testing.T, s model.Session, first []float64, toks []int) [][]float64 {
	t.Helper()
	if err := s.Truncate(r.promptLen); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Eval(toks[:len(toks)-1])
	if err != nil {
		t.Fatal(err)
	}
	out := [][]float64{first}
	for _, row := range rows {
		out = append(out, r.p.Dist(nil, row))
	}
	return out
}

// add records one run's tokens with their reference distributions: the
// LLM's, or for a lossy method at a draft position speculative.OutputDist of the
// distribution the draft was sampled from, the reconstruction x̂ the
// server verifies against, and y.
func (r *reference) add(t *testing.T, toks, role []int, lossy bool) {
	t.Helper()
	ys := r.along(t, r.llm, r.y0, toks)
	var xs [][]float64
	if lossy {
		xs = r.along(t, r.slm, r.x0, toks)
	}
	for j, tok := range toks {
		ref := ys[j]
		if lossy && role[j] >= 0 {
			xhat, err := r.codecRecon(xs[j])
			if err != nil {
				t.Fatal(err)
			}
			s := xs[j]
			if r.p.SamplesRecon() {
				s = xhat
			}
			ref = speculative.OutputDist(s, xhat, ys[j])
		}
		r.ref[j].Add(tok, ref)
		r.llmY[j].Add(tok, ys[j])
	}
}

// report logs each position's test against the reference and returns the
// smallest p-value (0 when a token of reference probability 0 was drawn).
func (r *reference) report(t *testing.T, what string) float64 { return r.test(t, what, r.ref) }

// reportLLM is report against the LLM's distributions.
func (r *reference) reportLLM(t *testing.T) float64 { return r.test(t, "the LLM", r.llmY) }

func (r *reference) test(t *testing.T, what string, tests []stattest.Conditional) float64 {
	t.Helper()
	worst := 1.0
	for j := range tests {
		w, df, impossible, err := tests[j].Test()
		if err != nil {
			t.Fatalf("position %d: %v", j+1, err)
		}
		pv := stattest.Survival(df, w)
		if impossible > 0 {
			pv = 0
		}
		t.Logf("position %d against %s: W %.1f on %d df, p = %.3g (%d tokens of probability 0)", j+1, what, w, df, pv, impossible)
		worst = math.Min(worst, pv)
	}
	return worst
}
