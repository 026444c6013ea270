package hybrid

import (
	"reflect"
	"slices"
	"testing"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/wire"
)

// TestFinishVerdictIsFinish: for every method that uploads, a server that
// finishes its rounds with FinishVerdict (hlm serve's: a lazy verifier
// computes no distribution past the first rejection) gives, round after
// round, the verdict and the sequence of one that finishes with Finish
// (the simulator's, with a trace), at two temperatures and with the bonus
// token, over whole generations.
func TestFinishVerdictIsFinish(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("Once upon a time there was a little dog", true)
	rounds := 0
	for _, m := range methods {
		if m.Name == SLM {
			continue // never uploads
		}
		variants := []struct {
			temp    float64
			sampler Sampler
		}{{1, ""}, {0.6, ""}}
		if m.Name == LLM {
			variants = append(variants, struct {
				temp    float64
				sampler Sampler
			}{1, SamplerGumbel}) // coupled verification's lazy path
		}
		for _, vr := range variants {
			temp := vr.temp
			p := DefaultParams()
			p.Method, p.Seed, p.MaxTokens, p.Temperature = m.Name, 11, 24, temp
			if vr.sampler != "" {
				p.Sampler = vr.sampler
			}
			if slices.Contains(m.Keys, "bonus") {
				p.Bonus = true
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("%s: %v", m.Name, err)
			}
			dev, err := NewDevice(p, slm, llm.Config().Vocab, prompt)
			if err != nil {
				t.Fatalf("%s: %v", m.Name, err)
			}
			newServer := func() *Server {
				var s *Server
				var err error
				if m.ServerDraft {
					s, err = NewReplicaServer(p, llm, slm, prompt)
				} else {
					s, err = NewServer(p, llm, prompt)
				}
				if err != nil {
					t.Fatalf("%s: %v", m.Name, err)
				}
				return s
			}
			traced, lazy := newServer(), newServer()
			for len(dev.Output()) < p.MaxTokens {
				st, err := dev.Step(p.MaxTokens - len(dev.Output()))
				if err != nil {
					t.Fatalf("%s T=%g: step: %v", m.Name, temp, err)
				}
				if st.Upload == nil {
					continue // committed on the device
				}
				want, _, err := traced.Verify(st.Upload)
				if err != nil {
					t.Fatalf("%s T=%g: Finish: %v", m.Name, temp, err)
				}
				got := finishVerdict(t, lazy, st.Upload)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s T=%g round %d: FinishVerdict %+v, Finish %+v", m.Name, temp, st.Upload.Round, got, want)
				}
				if _, err := dev.Apply(st, want); err != nil {
					t.Fatalf("%s T=%g: apply: %v", m.Name, temp, err)
				}
				rounds++
			}
			if !slices.Equal(traced.Sequence(), lazy.Sequence()) {
				t.Fatalf("%s T=%g: sequences differ:\n%v\n%v", m.Name, temp, traced.Sequence(), lazy.Sequence())
			}
		}
	}
	t.Logf("%d rounds compared", rounds)
}

// finishVerdict verifies up as hlm serve does: Prepare, the LLM pass with
// the prompt's rows skipped, FinishVerdict.
func finishVerdict(t *testing.T, s *Server, up *wire.Upload) *wire.Verdict {
	t.Helper()
	j, err := s.Prepare(up)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]float32
	if toks := j.Tokens(); len(toks) > 0 {
		if rows, err = model.EvalSkip(j.Session(), toks, j.Skip()); err != nil {
			t.Fatal(err)
		}
	}
	v, err := j.FinishVerdict(rows)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
