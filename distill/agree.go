package distill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/hlmproject/hlm/metrics"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/sampling"
	"github.com/hlmproject/hlm/speculative"
)

// Agreement measures a draft against its target along text the target
// writes: the mean acceptance probability 1 − TV(x, y) of speculative
// sampling per draft token, where y is the target's and x the draft's
// next-token distribution after the same prefix.
type Agreement struct {
	// Accept is the mean 1 − TV over every generated position (prompts
	// contribute by their length) and Accept95 the half-width of its 95%
	// confidence interval, prompts as clusters (metrics.RatioCI).
	Accept   float64 `json:"accept"`
	Accept95 float64 `json:"accept_ci95"`
	// PerPrompt summarises the prompts' own means (each prompt weighs the
	// same, however soon its generation ended).
	PerPrompt metrics.Summary `json:"per_prompt"`
	Tokens    int             `json:"tokens"` // positions measured
	Prompts   int             `json:"prompts"`
	MeanPos   float64         `json:"mean_position"`
	// Multiply-adds per token at the mean position (model.Config.MACs).
	LLMMACs int64 `json:"llm_macs"`
	SLMMACs int64 `json:"slm_macs"`
	// MaxRatio is the largest ratio of the draft's multiply-adds to the
	// LLM's at any position of the LLM's context, reached at MaxRatioPos
	// (model.Config.MaxMACsRatio).
	MaxRatio    float64 `json:"max_macs_ratio"`
	MaxRatioPos int     `json:"max_macs_ratio_position"`
	// ByStep is the mean 1 − TV by generated token index, in buckets of
	// StepBucket tokens after the prompt.
	ByStep []float64 `json:"by_step"`
}

// MarshalJSON writes the interval of a single prompt, which is not
// defined (NaN), as null.
func (a Agreement) MarshalJSON() ([]byte, error) {
	type plain Agreement // without this method
	return json.Marshal(struct {
		plain
		Accept   *float64 `json:"accept"`
		Accept95 *float64 `json:"accept_ci95"`
	}{plain(a), metrics.Finite(a.Accept), metrics.Finite(a.Accept95)})
}

// StepBucket is the width of Agreement.ByStep's buckets.
const StepBucket = 16

// Agree generates up to maxTokens tokens after each prompt from llm at
// temperature temp (prompt i with its own stream from seed; generation
// stops at an end-of-generation id, eog) and measures slm's agreement at
// every generated position.
func Agree(ctx context.Context, llm, slm model.Model, prompts [][]int, maxTokens int, temp float64, seed uint64, eog []int) (*Agreement, error) {
	if llm.Config().Vocab != slm.Config().Vocab {
		return nil, fmt.Errorf("the draft's vocabulary (%d) is not the target's (%d)", slm.Config().Vocab, llm.Config().Vocab)
	}
	switch {
	case !(temp > 0):
		return nil, fmt.Errorf("agreement is measured at a temperature above 0 (got %g): the samples of two greedy models agree or not, with no distribution to compare", temp)
	case maxTokens <= 0:
		return nil, fmt.Errorf("agreement needs max tokens above 0 (got %d)", maxTokens)
	case len(prompts) == 0:
		return nil, errors.New("agreement needs prompts (got none)")
	}
	var perPrompt, sums, counts []float64
	var posSum float64
	var bSum []float64
	var bN []int
	n := 0
	var x, y []float64
	for i, p := range prompts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(p) == 0 {
			return nil, fmt.Errorf("prompt %d has no tokens", i)
		}
		ls, ss := llm.NewSession(), slm.NewSession()
		lz, err := ls.Prefill(p)
		if err != nil {
			return nil, fmt.Errorf("prompt %d: %w", i, err)
		}
		sz, err := ss.Prefill(p)
		if err != nil {
			return nil, fmt.Errorf("prompt %d: %w", i, err)
		}
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		var ps float64
		k := 0
		for k < maxTokens && ls.Len() < min(llm.Config().SeqLen, slm.Config().SeqLen) {
			y = sampling.Softmax(y, lz, temp)
			x = sampling.Softmax(x, sz, temp)
			acc := 1 - speculative.TV(x, y)
			ps += acc
			posSum += float64(ls.Len() - 1)
			b := k / StepBucket
			if b == len(bSum) {
				bSum, bN = append(bSum, 0), append(bN, 0)
			}
			bSum[b] += acc
			bN[b]++
			k++
			next := sampling.Sample(y, rng)
			if next < 0 {
				return nil, fmt.Errorf("prompt %d: the target's distribution is not finite", i)
			}
			if slices.Contains(eog, next) {
				break
			}
			if lz, err = ls.Prefill([]int{next}); err != nil {
				return nil, err
			}
			if sz, err = ss.Prefill([]int{next}); err != nil {
				return nil, err
			}
		}
		n += k
		perPrompt = append(perPrompt, ps/float64(k))
		sums, counts = append(sums, ps), append(counts, float64(k))
	}
	a := &Agreement{PerPrompt: metrics.Summarize(perPrompt), Tokens: n, Prompts: len(prompts), MeanPos: posSum / float64(n)}
	a.Accept, a.Accept95 = metrics.RatioCI(sums, counts)
	for i := range bSum {
		a.ByStep = append(a.ByStep, bSum[i]/float64(bN[i]))
	}
	a.LLMMACs = llm.Config().MACs(int(a.MeanPos + 0.5))
	a.SLMMACs = slm.Config().MACs(int(a.MeanPos + 0.5))
	a.MaxRatio, a.MaxRatioPos = slm.Config().MaxMACsRatio(llm.Config(), llm.Config().SeqLen)
	return a, nil
}
