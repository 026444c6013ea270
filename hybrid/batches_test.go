package hybrid

import (
	"math"
	"testing"

	"github.com/hlmproject/hlm/codec"
)

// TestBudgetDecidesBatch: with no batch_max, a K-SQS batch holds exactly
// ⌊B/b⌋ drafts of b bits when B ends it, and otherwise exactly the tokens
// left to generate; batch_max caps it. C-SQS batches fit B, and β after
// each batch is β before it moved by eq. 8 over exactly the examined
// drafts (the rollback of Algorithm 1). At every draft the exact rejection
// probability TV(q̂, p) is at most Theorem 1's TV(q, p) + α_n + K_n/(4ℓ).
func TestBudgetDecidesBatch(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("Once upon a time", true)
	vocab := llm.Config().Vocab
	for _, tc := range []struct {
		method string
		sets   []string
		cap    int
	}{
		{KSQS, []string{"sqs_k=8"}, 0},
		{KSQS, []string{"sqs_k=32", "budget_bits=3000", "temperature=0.6"}, 0},
		{KSQS, []string{"sqs_k=8", "batch_max=5"}, 5},
		{CSQS, []string{"conf_beta=0.01", "conf_eta=0.01", "conf_alpha=0.02"}, 0},
		{CSQS, []string{"conf_beta=0.001", "temperature=0.8"}, 0},
	} {
		p := DefaultParams()
		p.Method, p.MaxTokens, p.Seed = tc.method, 100, 7
		if err := p.SetAll(tc.sets); err != nil {
			t.Fatal(err)
		}
		r := runOnce(t, p, llm, slm, prompt)
		if len(r.Batches) != r.Uploads || len(r.Batches) == 0 {
			t.Fatalf("%s %v: %d batches recorded, %d uploads", tc.method, tc.sets, len(r.Batches), r.Uploads)
		}
		perDraft := 0
		if tc.method == KSQS {
			b, err := codec.KSQS{K: p.SQSK, L: p.Ell}.Bits(vocab)
			if err != nil {
				t.Fatal(err)
			}
			perDraft = b
		}
		checkBatchLengths(t, tc.method, tc.sets, p, r.Batches, perDraft, tc.cap)
		checkProbes(t, tc.method, tc.sets, p, r)
		checkBatchTerms(t, tc.method, tc.sets, p, r.Batches)
	}
}

// checkBatchLengths: what ended each batch.
func checkBatchLengths(t *testing.T, method string, sets []string, p Params, bs []Batch, perDraft, cap int) {
	t.Helper()
	done, capped, byB := 0, 0, 0
	for i, b := range bs {
		left := p.MaxTokens - done
		switch {
		case b.Bits > p.Budget && b.L > 1:
			t.Errorf("%s %v batch %d: %d bits > B = %d", method, sets, i, b.Bits, p.Budget)
		case cap > 0 && b.L > cap:
			t.Errorf("%s %v batch %d: %d drafts > batch_max %d", method, sets, i, b.L, cap)
		case b.BudgetEnd && perDraft > 0 && b.L != p.Budget/perDraft:
			t.Errorf("%s %v batch %d: B ended it at %d drafts of %d bits, want ⌊B/b⌋ = %d", method, sets, i, b.L, perDraft, p.Budget/perDraft)
		case !b.BudgetEnd && cap == 0 && b.L != max(1, left-1):
			// The room left, less the bonus that follows a fully accepted batch.
			t.Errorf("%s %v batch %d: %d drafts, not ended by B, with %d tokens left (want %d)", method, sets, i, b.L, left, max(1, left-1))
		}
		if b.BudgetEnd {
			byB++
		}
		if cap > 0 && b.L == cap {
			capped++
		}
		done += b.Accepted + 1
	}
	if cap == 0 && byB == 0 {
		t.Errorf("%s %v: B ended no batch", method, sets)
	}
	if cap > 0 && capped == 0 {
		t.Errorf("%s %v: batch_max %d never reached", method, sets, cap)
	}
}

// checkBatchTerms: Theorem 1's terms at every draft, and C-SQS's rollback.
func checkBatchTerms(t *testing.T, method string, sets []string, p Params, bs []Batch) {
	t.Helper()
	beta := p.ConfBeta
	for i, b := range bs {
		moved := 0.0
		for j, d := range b.Drafts {
			if bound := d.TV + d.Dropped + float64(d.K)/(4*float64(p.Ell)); d.TVHat > bound+1e-12 || d.TVHat < 0 || d.TVHat > 1+1e-12 {
				t.Errorf("%s %v batch %d draft %d: TV(q̂,p) = %v, Theorem 1's bound %v", method, sets, i, j, d.TVHat, bound)
			}
			if d.Examined {
				moved += d.Dropped - p.ConfAlpha
			}
		}
		if method != CSQS {
			if !math.IsNaN(b.Beta) {
				t.Errorf("K-SQS batch %d has a threshold %v", i, b.Beta)
			}
			continue
		}
		beta -= p.ConfEta * moved
		if math.Abs(b.Beta-beta) > 1e-12 {
			t.Errorf("%s %v batch %d: β after %v, eq. 8 over the examined drafts gives %v", method, sets, i, b.Beta, beta)
		}
		beta = b.Beta
	}
}

// TestBlockDraftsRoomLessOne: with room for r more tokens, a block round
// drafts at most r−1 (one when r = 1), a tree round grows at most r−1
// levels: the bonus after a fully accepted block is the r-th token, so an
// r-th draft would be uploaded for nothing.
func TestBlockDraftsRoomLessOne(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("Once upon a time", true)
	for _, tc := range []struct {
		method string
		sets   []string
	}{
		{QS, []string{"l=8"}}, {SQ, []string{"l=8"}},
		{KSQS, []string{"budget_bits=1000000"}}, {CSQS, []string{"budget_bits=1000000"}},
		{Coupled, []string{"l=8"}}, {Replica, []string{"l=8"}},
		{TreeQS, []string{"tree_depth=8", "budget_bits=1000000"}},
	} {
		for _, room := range []int{1, 2, 3, 6} {
			p := DefaultParams()
			p.Method, p.Seed = tc.method, 3
			if err := p.SetAll(tc.sets); err != nil {
				t.Fatalf("%s %v: %v", tc.method, tc.sets, err)
			}
			dev, err := NewDevice(p, slm, llm.Config().Vocab, prompt)
			if err != nil {
				t.Fatal(err)
			}
			st, err := dev.Step(room)
			if err != nil {
				t.Fatalf("%s room %d: %v", tc.method, room, err)
			}
			if st.Upload == nil {
				t.Fatalf("%s room %d: nothing uploaded", tc.method, room)
			}
			want := max(1, room-1)
			got := len(st.Upload.Drafts)
			if ps := st.Upload.Parents; ps != nil {
				depth := make([]int, len(ps))
				got = 0
				for i, pa := range ps {
					depth[i] = 1
					if pa >= 0 {
						depth[i] = depth[pa] + 1
					}
					got = max(got, depth[i])
				}
			}
			if got != want {
				t.Errorf("%s %v, room %d: %d drafts (levels), want %d", tc.method, tc.sets, room, got, want)
			}
		}
	}
}

// checkProbes: a C-SQS batch that B ended computed the draft that did not
// fit, and the virtual clock and the energy model charge that SLM pass; a
// K-SQS batch knows its drafts' size beforehand and computes none.
func checkProbes(t *testing.T, method string, sets []string, p Params, r Result) {
	t.Helper()
	byB := 0
	for _, b := range r.Batches {
		if b.BudgetEnd {
			byB++
		}
	}
	want := 0
	if method == CSQS {
		want = byB
	}
	if r.Probed != want {
		t.Errorf("%s %v: %d SLM passes not sent, want %d (%d batches ended by B)", method, sets, r.Probed, want, byB)
	}
	if slm := float64(r.Drafted+r.Probed) * p.TauSLM; math.Abs(r.SLMSeconds-slm) > 1e-9*slm {
		t.Errorf("%s %v: SLM time %g s, want (%d drafts + %d probes) × τ_SLM = %g s", method, sets, r.SLMSeconds, r.Drafted, r.Probed, slm)
	}
	if e := p.Energy().Total(r.UplinkBits, r.Resampled, r.Drafted+r.Probed); math.Abs(r.Energy-e) > 1e-9*math.Abs(e) {
		t.Errorf("%s %v: energy %g, want %g", method, sets, r.Energy, e)
	}
}
