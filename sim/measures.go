package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/sampling"
	"github.com/hlmproject/hlm/speculative"
	"github.com/hlmproject/hlm/uncertainty"
	"github.com/hlmproject/hlm/wordnet"
)

// Names of the uncertainty measures of MeasureLog.
const (
	MeasureTemperature = "temperature perturbation"
	MeasureDropout     = "MC dropout"
	MeasurePrompt      = "prompt perturbation"
)

// MeasureConfig configures CollectMeasures.
type MeasureConfig struct {
	// Params: sampling temperature, M and θmax of temperature perturbation,
	// tokens per prompt, seed.
	Params  hybrid.Params
	Dropout uncertainty.MCDropout
	// Paraphraser, when set, adds prompt perturbation with Params.M
	// paraphrases per prompt (nil: the measure is left out).
	Paraphraser *wordnet.Paraphraser
}

// MeasureLog is, for every drafted token of a lossless HLM run, the
// rejection probability β of the draft and its uncertainty under each
// measure (U-HLM Fig. 3, CU-HLM Fig. 2), with what each measure cost.
type MeasureLog struct {
	Names []string    // measures, in the order of U, Seconds, Passes
	Beta  []float64   // β = max(1 − y_d/x_d, 0) per token
	U     [][]float64 // U[m][t]: measure m's uncertainty of token t
	// Seconds is the wall time each measure took over all tokens.
	Seconds []float64
	// Passes counts the extra SLM token evaluations each measure made
	// (temperature perturbation: none; MC dropout: M + 1 per token; prompt
	// perturbation: the paraphrases' prefills plus M per token).
	Passes []int
	// Examples holds the first prompt's paraphrases (prompt perturbation).
	Examples []string
}

// errNoDropout is CollectMeasures' error for a draft without dropout.
var errNoDropout = errors.New("MC dropout needs the draft on hlm's engine: llama.cpp's library has no dropout (drop @llama.cpp from the draft's spec)")

// CheckMeasures reports whether CollectMeasures can run on ms: MC dropout
// needs the draft's sessions to support dropout (hlm's engine does,
// llama.cpp's library does not). Callers with work before the measures
// (a paper rerun's other tables) check it first.
func CheckMeasures(ms *Models) error {
	if ms.SLM == nil {
		return errors.New("the uncertainty measures need a draft model (--slm)")
	}
	s := ms.SLM.NewSession()
	if c, ok := s.(io.Closer); ok {
		defer c.Close()
	}
	if _, ok := s.(uncertainty.DropoutSession); !ok {
		return errNoDropout
	}
	return nil
}

// CollectMeasures runs lossless HLM with one-token rounds over the prompts
// and, for each drafted token, measures its uncertainty by temperature
// perturbation, MC dropout on the SLM's activations and (when a
// paraphraser is given) prompt perturbation, all against the same draft.
// The SLM must support dropout (model/llama's sessions do).
func CollectMeasures(ctx context.Context, ms *Models, cfg MeasureConfig, prompts []string, progress func(done, total int)) (*MeasureLog, error) {
	if err := CheckMeasures(ms); err != nil {
		return nil, err
	}
	p := cfg.Params
	perturb := uncertainty.Perturbation{M: p.M, ThetaMax: p.ThetaMax}
	if err := perturb.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Dropout.Validate(); err != nil {
		return nil, err
	}
	log := &MeasureLog{Names: []string{MeasureTemperature, MeasureDropout}}
	if cfg.Paraphraser != nil {
		log.Names = append(log.Names, MeasurePrompt)
	}
	nm := len(log.Names)
	log.U = make([][]float64, nm)
	log.Seconds = make([]float64, nm)
	log.Passes = make([]int, nm)
	batcher, _ := ms.SLM.(model.Batcher)
	ctxLen := min(ms.LLM.Config().SeqLen, ms.SLM.Config().SeqLen)
	for i, prompt := range prompts {
		seed := p.Seed + uint64(i)
		rng := rand.New(rand.NewPCG(seed, 0x6d656173)) // drafts and verification
		rngs := [3]*rand.Rand{rand.New(rand.NewPCG(seed, 1)), rand.New(rand.NewPCG(seed, 2)), rand.New(rand.NewPCG(seed, 3))}
		run, err := startLossless(ms, prompt, p.MaxTokens)
		if err != nil {
			return nil, fmt.Errorf("prompt %d: %w", i, err)
		}
		ss, ok := run.slm.(uncertainty.DropoutSession)
		if !ok {
			return nil, errNoDropout
		}
		// Prompt perturbation: one session per paraphrase.
		var paras []model.Session
		var paraLogits [][]float32
		longest := len(run.seq)
		if cfg.Paraphraser != nil {
			start := time.Now()
			for m, text := range cfg.Paraphraser.Paraphrases(prompt, p.M, rngs[2]) {
				if i == 0 {
					log.Examples = append(log.Examples, text)
				}
				ids, err := PromptIDs(ms, text, p.MaxTokens)
				if err != nil {
					return nil, fmt.Errorf("prompt %d, paraphrase %d: %w", i, m, err)
				}
				ps := ms.SLM.NewSession()
				lg, err := ps.Prefill(ids)
				if err != nil {
					return nil, err
				}
				paras = append(paras, ps)
				paraLogits = append(paraLogits, lg)
				longest = max(longest, len(ids))
				log.Passes[2] += len(ids)
			}
			log.Seconds[2] += time.Since(start).Seconds()
		}
		var dist []float64
		for n := 0; n < p.MaxTokens && longest+n < ctxLen-1; n++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			x := p.Dist(nil, run.sl)
			y := p.Dist(nil, run.ll)
			d := sampling.Sample(x, rng)
			log.Beta = append(log.Beta, uncertainty.Beta(x[d], y[d]))

			start := time.Now()
			log.U[0] = append(log.U[0], perturb.Measure(run.sl, d, rngs[0]))
			log.Seconds[0] += time.Since(start).Seconds()

			start = time.Now()
			u, restored, err := cfg.Dropout.Measure(ss, run.seq[len(run.seq)-1], d, p.Temperature, rngs[1])
			if err != nil {
				return nil, err
			}
			if !slices.Equal(restored, run.sl) {
				return nil, errors.New("MC dropout did not restore the SLM's cache exactly")
			}
			log.U[1] = append(log.U[1], u)
			log.Seconds[1] += time.Since(start).Seconds()
			log.Passes[1] += cfg.Dropout.Samples() + 1

			if paras != nil {
				start = time.Now()
				samples := make([]int, len(paras))
				for m, lg := range paraLogits {
					dist = p.Dist(dist, lg)
					samples[m] = sampling.Sample(dist, rngs[2])
				}
				log.U[2] = append(log.U[2], uncertainty.Disagreement(samples, d))
				log.Seconds[2] += time.Since(start).Seconds()
			}

			tok, done, err := run.commit(x, y, d, rng)
			if err != nil {
				return nil, err
			}
			if done {
				break
			}
			if paras != nil {
				start = time.Now()
				if paraLogits, err = advance(batcher, paras, tok); err != nil {
					return nil, err
				}
				log.Seconds[2] += time.Since(start).Seconds()
				log.Passes[2] += len(paras)
			}
		}
		if progress != nil {
			progress(i+1, len(prompts))
		}
	}
	if len(log.Beta) == 0 {
		return nil, errors.New("no tokens measured")
	}
	return log, nil
}

// advance appends tok to every session (in one batched pass when the model
// can) and returns the logits after it.
func advance(b model.Batcher, sessions []model.Session, tok int) ([][]float32, error) {
	out := make([][]float32, len(sessions))
	if b != nil {
		toks := make([][]int, len(sessions))
		for i := range toks {
			toks[i] = []int{tok}
		}
		rows, err := b.EvalBatch(sessions, toks)
		if err != nil {
			return nil, err
		}
		for i := range rows {
			out[i] = rows[i][0]
		}
		return out, nil
	}
	for i, s := range sessions {
		lg, err := evalOne(s, tok)
		if err != nil {
			return nil, err
		}
		out[i] = lg
	}
	return out, nil
}

// lossless is a lossless HLM generation with one-token rounds: both
// models' sessions over the sequence so far and the logits after it.
type lossless struct {
	ms       *Models
	seq      []int
	slm, llm model.Session
	sl, ll   []float32
}

// startLossless encodes prompt (PromptIDs) and prefills both models.
func startLossless(ms *Models, prompt string, maxTokens int) (*lossless, error) {
	seq, err := PromptIDs(ms, prompt, maxTokens)
	if err != nil {
		return nil, err
	}
	r := &lossless{ms: ms, seq: seq, slm: ms.SLM.NewSession(), llm: ms.LLM.NewSession()}
	if r.sl, err = r.slm.Prefill(seq); err != nil {
		return nil, err
	}
	if r.ll, err = r.llm.Prefill(seq); err != nil {
		return nil, err
	}
	return r, nil
}

// commit verifies draft d, drawn from x, against y (speculative.Verify) and
// appends the round's token to both sessions; done reports an
// end-of-generation token (not appended).
func (r *lossless) commit(x, y []float64, d int, rng *rand.Rand) (tok int, done bool, err error) {
	tok, _ = speculative.Verify(x, y, d, rng)
	if r.ms.Tok.IsEOG(tok) {
		return tok, true, nil
	}
	r.seq = append(r.seq, tok)
	if r.sl, err = evalOne(r.slm, tok); err != nil {
		return tok, false, err
	}
	r.ll, err = evalOne(r.llm, tok)
	return tok, false, err
}

func evalOne(s model.Session, tok int) ([]float32, error) {
	rows, err := s.Eval([]int{tok})
	if err != nil {
		return nil, err
	}
	return rows[0], nil
}
