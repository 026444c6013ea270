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
	mr, err := newMeasurer(ms, cfg)
	if err != nil {
		return nil, err
	}
	for i, prompt := range prompts {
		if err := mr.prompt(ctx, i, prompt); err != nil {
			return nil, err
		}
		if progress != nil {
			progress(i+1, len(prompts))
		}
	}
	if len(mr.log.Beta) == 0 {
		return nil, errors.New("no tokens measured")
	}
	return mr.log, nil
}

// The measures' indices in MeasureLog's U, Seconds and Passes.
const (
	measureTemperature = iota
	measureDropout
	measurePrompt
)

// measurer fills a MeasureLog: the measures' settings and the pair they
// run on.
type measurer struct {
	ms      *Models
	cfg     MeasureConfig
	perturb uncertainty.Perturbation
	batcher model.Batcher // the draft's, when it batches (paraphrases)
	ctxLen  int
	log     *MeasureLog
}

// newMeasurer checks cfg's measures and starts their log.
func newMeasurer(ms *Models, cfg MeasureConfig) (*measurer, error) {
	perturb := uncertainty.Perturbation{M: cfg.Params.M, ThetaMax: cfg.Params.ThetaMax}
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
	log.U, log.Seconds, log.Passes = make([][]float64, nm), make([]float64, nm), make([]int, nm)
	batcher, _ := ms.SLM.(model.Batcher)
	return &measurer{ms: ms, cfg: cfg, perturb: perturb, batcher: batcher, ctxLen: ms.Context(), log: log}, nil
}

// since adds the wall time since start to measure m's.
func (mr *measurer) since(m int, start time.Time) {
	mr.log.Seconds[m] += time.Since(start).Seconds()
}

// prompt measures every draft of prompt i's lossless run (seeded by the
// prompt's index).
func (mr *measurer) prompt(ctx context.Context, i int, prompt string) error {
	p := mr.cfg.Params
	seed := p.Seed + uint64(i)
	rng := rand.New(rand.NewPCG(seed, 0x6d656173)) // drafts and verification
	rngs := [3]*rand.Rand{rand.New(rand.NewPCG(seed, 1)), rand.New(rand.NewPCG(seed, 2)), rand.New(rand.NewPCG(seed, 3))}
	run, err := startLossless(mr.ms, prompt, p.MaxTokens)
	if err != nil {
		return fmt.Errorf("prompt %d: %w", i, err)
	}
	ss, ok := run.slm.(uncertainty.DropoutSession)
	if !ok {
		return errNoDropout
	}
	var paras *paraphrased
	longest := len(run.seq)
	if mr.cfg.Paraphraser != nil {
		start := time.Now()
		paras, err = mr.paraphrase(i, prompt, rngs[measurePrompt])
		mr.since(measurePrompt, start)
		if err != nil {
			return err
		}
		longest = max(longest, paras.longest)
	}
	for n := 0; n < p.MaxTokens && longest+n < mr.ctxLen-1; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		x := p.Dist(nil, run.sl)
		y := p.Dist(nil, run.ll)
		d := sampling.Sample(x, rng)
		mr.log.Beta = append(mr.log.Beta, uncertainty.Beta(x[d], y[d]))
		if err := mr.measure(run, ss, paras, d, rngs); err != nil {
			return err
		}
		tok, done, err := run.commit(x, y, d, rng)
		if err != nil {
			return err
		}
		if done {
			break
		}
		if paras != nil {
			start := time.Now()
			err := paras.advance(mr.batcher, tok)
			mr.since(measurePrompt, start)
			if err != nil {
				return err
			}
			mr.log.Passes[measurePrompt] += len(paras.sessions)
		}
	}
	return nil
}

// measure logs draft d's uncertainty under each measure, with its time
// and passes.
func (mr *measurer) measure(run *lossless, ss uncertainty.DropoutSession, paras *paraphrased, d int, rngs [3]*rand.Rand) error {
	log, p := mr.log, mr.cfg.Params
	start := time.Now()
	log.U[measureTemperature] = append(log.U[measureTemperature], mr.perturb.Measure(run.sl, d, rngs[measureTemperature]))
	mr.since(measureTemperature, start)

	start = time.Now()
	u, restored, err := mr.cfg.Dropout.Measure(ss, run.seq[len(run.seq)-1], d, p.Temperature, rngs[measureDropout])
	mr.since(measureDropout, start)
	if err != nil {
		return err
	}
	if !slices.Equal(restored, run.sl) {
		return errors.New("MC dropout did not restore the SLM's cache exactly")
	}
	log.U[measureDropout] = append(log.U[measureDropout], u)
	log.Passes[measureDropout] += mr.cfg.Dropout.Samples() + 1

	if paras != nil {
		start = time.Now()
		log.U[measurePrompt] = append(log.U[measurePrompt], paras.disagreement(p, d, rngs[measurePrompt]))
		mr.since(measurePrompt, start)
	}
	return nil
}

// paraphrased is prompt perturbation's state for one prompt: a session per
// paraphrase and the logits after it.
type paraphrased struct {
	sessions []model.Session
	logits   [][]float32
	longest  int // the longest paraphrase's tokens
	dist     []float64
}

// paraphrase prefills a draft session for each of prompt i's M
// paraphrases (the first prompt's are kept as the log's examples).
func (mr *measurer) paraphrase(i int, prompt string, rng *rand.Rand) (*paraphrased, error) {
	p := mr.cfg.Params
	pp := &paraphrased{}
	for m, text := range mr.cfg.Paraphraser.Paraphrases(prompt, p.M, rng) {
		if i == 0 {
			mr.log.Examples = append(mr.log.Examples, text)
		}
		ids, err := PromptIDs(mr.ms, text, p.MaxTokens)
		if err != nil {
			return nil, fmt.Errorf("prompt %d, paraphrase %d: %w", i, m, err)
		}
		ps := mr.ms.SLM.NewSession()
		lg, err := ps.Prefill(ids)
		if err != nil {
			return nil, err
		}
		pp.sessions = append(pp.sessions, ps)
		pp.logits = append(pp.logits, lg)
		pp.longest = max(pp.longest, len(ids))
		mr.log.Passes[measurePrompt] += len(ids)
	}
	return pp, nil
}

// disagreement is prompt perturbation's uncertainty of draft d: the share
// of paraphrases whose own draw is not d (uncertainty.Disagreement).
func (pp *paraphrased) disagreement(p hybrid.Params, d int, rng *rand.Rand) float64 {
	samples := make([]int, len(pp.logits))
	for m, lg := range pp.logits {
		pp.dist = p.Dist(pp.dist, lg)
		samples[m] = sampling.Sample(pp.dist, rng)
	}
	return uncertainty.Disagreement(samples, d)
}

// advance appends tok to every paraphrase's session.
func (pp *paraphrased) advance(b model.Batcher, tok int) (err error) {
	pp.logits, err = advance(b, pp.sessions, tok)
	return err
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
