package sim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/uncertainty"
	"github.com/hlmproject/hlm/wordnet"
)

// TestCollectMeasures: every token gets β and one uncertainty per measure
// in [0, 1] on the grid {0, 1/M, …, 1}; MC dropout is charged M + 1 passes
// per token; the cache survives MC dropout (CollectMeasures checks the
// restored logits bit for bit); prompt perturbation runs when WordNet is
// installed.
func TestCollectMeasures(t *testing.T) {
	ms := pair(t, stories+"@exit=4")
	p := hybrid.DefaultParams()
	p.MaxTokens, p.M = 12, 8
	cfg := MeasureConfig{Params: p, Dropout: uncertainty.MCDropout{M: 8}}
	if _, err := os.Stat(filepath.Join(wordnet.DefaultDir(), "index.noun")); err == nil {
		db, err := wordnet.Open(wordnet.DefaultDir())
		if err != nil {
			t.Fatal(err)
		}
		cfg.Paraphraser = &wordnet.Paraphraser{DB: db}
	} else {
		t.Logf("WordNet not installed (%v): prompt perturbation not tested", err)
	}
	log, err := CollectMeasures(context.Background(), ms, cfg, []string{"Once upon a time, a little dog found a big ball.", "Tom had a red car."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := len(log.Beta)
	if n == 0 || len(log.U) != len(log.Names) {
		t.Fatalf("%d tokens, %d measures for %d names", n, len(log.U), len(log.Names))
	}
	for m, us := range log.U {
		if len(us) != n {
			t.Fatalf("%s: %d values for %d tokens", log.Names[m], len(us), n)
		}
		for _, u := range us {
			if k := u * 8; u < 0 || u > 1 || k != float64(int(k)) {
				t.Fatalf("%s: u = %v not on the grid of M = 8", log.Names[m], u)
			}
		}
	}
	if log.Passes[0] != 0 || log.Passes[1] != 9*n {
		t.Errorf("passes %v for %d tokens (want 0 and %d)", log.Passes, n, 9*n)
	}
	if cfg.Paraphraser != nil && (len(log.Examples) != 8 || log.Passes[2] <= 8*n) {
		t.Errorf("prompt perturbation: %d paraphrases, %d passes", len(log.Examples), log.Passes[2])
	}
	t.Logf("%d tokens; measures %v; seconds %.3f; paraphrase e.g. %q", n, log.Names, log.Seconds, log.Examples)
}

// TestAttentionCollapse: one summary per drafted token; the statistics are
// those of the row (max ≥ mean, normalized entropy in [0, 1]).
func TestAttentionCollapse(t *testing.T) {
	ms := pair(t, stories+"@exit=2")
	p := hybrid.DefaultParams()
	p.MaxTokens = 20
	log, err := AttentionCollapse(context.Background(), ms, p, []string{"Once upon a time", "Tom had a red car."}, [][2]float64{{3, 1.5}})
	if err != nil {
		t.Fatal(err)
	}
	for step := range log.Max {
		for i := range log.Max[step] {
			if mx, h, n := log.Max[step][i], log.Entropy[step][i], log.Len[step][i]; !(mx > 0 && n >= 1) || h < 0 || h > 1+1e-9 {
				t.Fatalf("step %d prompt %d: max %v entropy %v over %v positions", step, i, mx, h, n)
			}
		}
	}
	if len(log.Important[0]) != len(log.Max) {
		t.Errorf("importance recorded for %d of %d steps", len(log.Important[0]), len(log.Max))
	}
}

// noDropoutModel's sessions are its model's without their dropout (as
// llama.cpp's library's): only model.Session's methods, and a Close that
// counts.
type noDropoutModel struct {
	model.Model
	closed *int
}

type noDropoutSession struct {
	model.Session
	closed *int
}

func (m noDropoutModel) NewSession() model.Session {
	return noDropoutSession{m.Model.NewSession(), m.closed}
}

func (s noDropoutSession) Close() error { *s.closed++; return nil }

// TestCheckMeasures: a draft on hlm's engine passes; one whose sessions
// have no dropout is refused, by CheckMeasures and by CollectMeasures
// before any prompt, and the session opened to ask is closed.
func TestCheckMeasures(t *testing.T) {
	ms := pair(t, stories)
	if err := CheckMeasures(ms); err != nil {
		t.Fatalf("hlm's engine: %v", err)
	}
	closed := 0
	plain := *ms
	plain.SLM = noDropoutModel{ms.SLM, &closed}
	if err := CheckMeasures(&plain); !errors.Is(err, errNoDropout) {
		t.Fatalf("a draft without dropout: %v, want %v", err, errNoDropout)
	}
	if closed != 1 {
		t.Errorf("%d sessions closed, want 1", closed)
	}
	p := hybrid.DefaultParams()
	p.MaxTokens, p.M = 4, 2
	cfg := MeasureConfig{Params: p, Dropout: uncertainty.MCDropout{M: 2}}
	if _, err := CollectMeasures(context.Background(), &plain, cfg, []string{"Tom had a red car."}, nil); !errors.Is(err, errNoDropout) {
		t.Fatalf("CollectMeasures: %v, want %v", err, errNoDropout)
	}
	if closed != 2 {
		t.Errorf("CollectMeasures opened %d sessions to ask before its work, want 1", closed-1)
	}
	plain.SLM = nil
	if err := CheckMeasures(&plain); err == nil {
		t.Error("no draft: no error")
	}
}
