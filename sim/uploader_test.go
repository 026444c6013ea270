package sim

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/policy"
)

// recording wraps an upload rule and checks and counts what it is given.
type recording struct {
	t       *testing.T
	rule    func(policy.Token) bool
	vocab   int
	calls   int
	uploads int
}

func (r *recording) Upload(tok policy.Token, _ *rand.Rand) bool {
	r.calls++
	var sum float64
	for _, x := range tok.Dist {
		sum += x
	}
	if len(tok.Dist) != r.vocab || math.Abs(sum-1) > 1e-9 || tok.Dist[tok.Draft] != tok.XDraft {
		r.t.Fatalf("token %+v: Dist of %d entries, sum %v", tok.Draft, len(tok.Dist), sum)
	}
	up := r.rule(tok)
	if up {
		r.uploads++
	}
	return up
}

// TestSessionUploader: a rule of one's own replaces a one-token method's
// upload rule. The paper's rule given as one's own reproduces the method's
// run exactly; an entropy rule (a measure the methods do not have) is
// asked once per draft and decides every upload; methods whose rounds ask
// no rule refuse it.
func TestSessionUploader(t *testing.T) {
	ms, err := Open("", "", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, prompt := context.Background(), "Once upon a time"
	p := hybrid.DefaultParams()
	if err := p.SetAll([]string{"method=u-hlm", "max_tokens=32", "seed=5"}); err != nil {
		t.Fatal(err)
	}
	want, err := ms.Simulate(ctx, p, prompt, hybrid.SessionConfig{})
	if err != nil {
		t.Fatal(err)
	}
	th := policy.Threshold{UTh: p.UploadThreshold()}
	rec := &recording{t: t, vocab: ms.LLM.Config().Vocab, rule: func(tok policy.Token) bool { return th.Upload(tok, nil) }}
	got, err := ms.Simulate(ctx, p, prompt, hybrid.SessionConfig{Uploader: rec})
	if err != nil {
		t.Fatal(err)
	}
	got.WallSeconds, want.WallSeconds = 0, 0
	if !reflect.DeepEqual(got.Tokens, want.Tokens) || got.Uploads != want.Uploads || got.UplinkBits != want.UplinkBits || rec.calls != want.Drafted {
		t.Errorf("u-hlm's own rule given as an Uploader: %d uploads, %d bits, %d calls; the method: %d uploads, %d bits, %d drafts",
			got.Uploads, got.UplinkBits, rec.calls, want.Uploads, want.UplinkBits, want.Drafted)
	}
	if want.Uploads == 0 || want.Uploads == want.Drafted {
		t.Fatalf("the run does not test the rule: %d uploads of %d drafts", want.Uploads, want.Drafted)
	}

	// An entropy rule on hlm: upload when the draft distribution's entropy
	// exceeds 1 nat.
	p.Method = hybrid.HLM
	ent := &recording{t: t, vocab: rec.vocab, rule: func(tok policy.Token) bool {
		var h float64
		for _, x := range tok.Dist {
			if x > 0 {
				h -= x * math.Log(x)
			}
		}
		return h > 1
	}}
	r, err := ms.Simulate(ctx, p, prompt, hybrid.SessionConfig{Uploader: ent})
	if err != nil {
		t.Fatal(err)
	}
	if ent.calls != r.Drafted || ent.uploads != r.Uploads || r.Uploads == 0 || r.Skipped != r.Drafted-r.Uploads {
		t.Errorf("entropy rule: %d calls, %d said upload; run: %d drafted, %d uploads, %d skipped", ent.calls, ent.uploads, r.Drafted, r.Uploads, r.Skipped)
	}

	for _, m := range []string{hybrid.QS, hybrid.KSQS, hybrid.LLM, hybrid.SLM} {
		p.Method = m
		_, err := ms.Simulate(ctx, p, prompt, hybrid.SessionConfig{Uploader: policy.Always{}})
		if !errors.Is(err, hybrid.ErrParam) || !strings.Contains(err.Error(), "Uploader") {
			t.Errorf("%s with an Uploader: err = %v", m, err)
		}
	}
}

// TestTraceRuns: with several prompts each trace line says its prompt's
// run ("run": i+1; the round numbers start again at 1 for each); with one
// prompt the lines are as before.
func TestTraceRuns(t *testing.T) {
	p := hybrid.DefaultParams()
	if err := p.SetAll([]string{"method=q-s", "max_tokens=6"}); err != nil {
		t.Fatal(err)
	}
	for _, prompts := range [][]string{{"Once upon a time"}, {"Once upon a time", "The dog"}} {
		var b strings.Builder
		if _, err := Run(context.Background(), Config{Prompts: prompts, Params: p, Trace: &b}); err != nil {
			t.Fatal(err)
		}
		runs := map[float64]int{}
		for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			r, has := rec["run"].(float64)
			if has != (len(prompts) > 1) {
				t.Fatalf("%d prompts: line %q", len(prompts), line)
			}
			runs[r]++
		}
		if len(prompts) > 1 && (runs[1] == 0 || runs[2] == 0) {
			t.Errorf("%d prompts: lines per run %v", len(prompts), runs)
		}
	}
}
