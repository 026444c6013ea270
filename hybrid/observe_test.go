package hybrid

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"
)

// TestDraftObserverLeavesTheRunAlone: observing a run's drafts (and, for
// one-token methods, measuring their uncertainty on the observer's own
// stream) changes nothing in the run — same tokens, bits, times, counts —
// and every accepted draft it reports is the output's token at its
// position, with the LLM's distribution and an uncertainty in [0, 1].
func TestDraftObserverLeavesTheRunAlone(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("Lily and Ben", true)
	for _, m := range []string{HLM, UHLM, RandHLM, QS, KSQS, Coupled} {
		p := DefaultParams()
		p.Method, p.Seed, p.MaxTokens = m, 7, 32
		run := func(observe bool) (Result, []DraftRecord, *Device) {
			c := inProcess(t, p, llm, slm, prompt)
			dev := c.Device
			var recs []DraftRecord
			if observe {
				c.OnDraft = func(r DraftRecord) { recs = append(recs, r) }
				if dev.m.Family == FamilySkip {
					if err := dev.measureUncertainty(); err != nil {
						t.Fatal(err)
					}
				}
			}
			r, err := Run(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			r.WallSeconds, r.WallTPS = 0, 0 // the only figures that are not the run's
			return r, recs, dev
		}
		plain, _, _ := run(false)
		seen, recs, dev := run(true)
		a, err := json.Marshal(plain)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(seen)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: observing changed the run:\n%.600s\n%.600s", m, a, b)
			continue
		}
		if len(recs) == 0 {
			t.Errorf("%s: no drafts observed", m)
			continue
		}
		seq := dev.Sequence()
		for i, r := range recs {
			if r.Accepted && (r.Pos >= len(seq) || seq[r.Pos] != r.Token) {
				t.Fatalf("%s: record %d: accepted draft %d at %d is not the sequence's token", m, i, r.Token, r.Pos)
			}
			if len(r.Y) != llm.Config().Vocab || len(r.X) != len(r.Y) {
				t.Fatalf("%s: record %d: distributions of %d and %d entries", m, i, len(r.X), len(r.Y))
			}
			if measured := dev.m.Family == FamilySkip; measured != !math.IsNaN(r.U) || r.U < 0 || r.U > 1 {
				t.Fatalf("%s: record %d: uncertainty %v", m, i, r.U)
			}
		}
		t.Logf("%s: %d drafts observed over %d uploads", m, len(recs), seen.Uploads)
	}
}

// TestDraftObserverNeedsTheOracle: an observer without the server's
// distributions, or of a list method, is refused; so is measuring the
// uncertainty of block drafts.
func TestDraftObserverNeedsTheOracle(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("Lily", true)
	for _, tc := range []struct {
		method string
		oracle bool
	}{{HLM, false}, {CoupledList, true}} {
		p := DefaultParams()
		p.Method = tc.method
		c := inProcess(t, p, llm, slm, prompt)
		c.OnDraft = func(DraftRecord) {}
		if !tc.oracle {
			c.Oracle = nil
		}
		if _, err := Run(context.Background(), c); !errors.Is(err, ErrParam) {
			t.Errorf("%s (oracle %v): %v, want ErrParam", tc.method, tc.oracle, err)
		}
	}
	p := DefaultParams()
	p.Method = QS
	dev, err := NewDevice(p, slm, llm.Config().Vocab, prompt)
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.measureUncertainty(); !errors.Is(err, ErrParam) {
		t.Errorf("q-s: measuring uncertainty: %v, want ErrParam", err)
	}
}
