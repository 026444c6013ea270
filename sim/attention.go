package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/importance"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/sampling"
)

// AttentionLog summarizes the draft's attention row — last layer,
// averaged over heads, weights on the preceding positions, as U+I's
// importance test sees it (eq. 5) — at each decoding step of SLM-only
// generation: the data of U+I Fig. 2 (attention collapse). Index [t][i]
// is step t of prompt i; prompts that stopped earlier have fewer steps.
type AttentionLog struct {
	Max     [][]float64 // max_j A_j
	Std     [][]float64 // population standard deviation of A
	Entropy [][]float64 // entropy of A/ΣA over ln(len(A)): 1 = flat
	Len     [][]float64 // len(A): positions attended to
	// Important[c][t][i] is 1 when configuration c of Configs passes the
	// importance test at that step, else 0.
	Important [][][]float64
	Configs   [][2]float64 // (k, γ) pairs tested
}

// AttentionCollapse generates up to p.MaxTokens tokens per prompt with the
// SLM alone (temperature p.Temperature, seeded per prompt) and records the
// attention summaries of every drafted token, and whether the importance
// test passes for each (k, γ) in configs.
func AttentionCollapse(ctx context.Context, ms *Models, p hybrid.Params, prompts []string, configs [][2]float64) (*AttentionLog, error) {
	log := &AttentionLog{Configs: configs, Important: make([][][]float64, len(configs))}
	ctxLen := ms.SLM.Config().SeqLen
	for i, prompt := range prompts {
		rng := rand.New(rand.NewPCG(p.Seed+uint64(i), 0x617474))
		seq, err := PromptIDs(ms, prompt, p.MaxTokens)
		if err != nil {
			return nil, fmt.Errorf("prompt %d: %w", i, err)
		}
		s := ms.SLM.NewSession()
		s.SetCapture(model.CaptureLastLayer)
		lg, err := s.Prefill(seq)
		if err != nil {
			return nil, err
		}
		for t := 0; t < p.MaxTokens && len(seq) < ctxLen-1; t++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			tok := sampling.Sample(p.Dist(nil, lg), rng)
			if ms.Tok.IsEOG(tok) {
				break
			}
			seq = append(seq, tok)
			if lg, err = evalOne(s, tok); err != nil {
				return nil, err
			}
			a := s.Attention()
			if a == nil {
				return nil, errors.New("the SLM did not capture attention")
			}
			row := a.Last()
			row = row[:len(row)-1] // attention to the preceding tokens, as the device's policy sees it
			if t >= len(log.Max) {
				log.Max = append(log.Max, nil)
				log.Std = append(log.Std, nil)
				log.Entropy = append(log.Entropy, nil)
				log.Len = append(log.Len, nil)
				for c := range configs {
					log.Important[c] = append(log.Important[c], nil)
				}
			}
			mx, sd, h := rowStats(row)
			log.Max[t] = append(log.Max[t], mx)
			log.Std[t] = append(log.Std[t], sd)
			log.Entropy[t] = append(log.Entropy[t], h)
			log.Len[t] = append(log.Len[t], float64(len(row)))
			for c, kg := range configs {
				v := 0.0
				if importance.Important(row, int(kg[0]), kg[1]) {
					v = 1
				}
				log.Important[c][t] = append(log.Important[c][t], v)
			}
		}
	}
	if len(log.Max) == 0 {
		return nil, errors.New("no tokens generated")
	}
	return log, nil
}

// rowStats returns the maximum, the population standard deviation and the
// normalized entropy of an attention row.
func rowStats(a []float32) (mx, sd, h float64) {
	if len(a) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	var sum float64
	for _, w := range a {
		mx = max(mx, float64(w))
		sum += float64(w)
	}
	mean := sum / float64(len(a))
	for _, w := range a {
		d := float64(w) - mean
		sd += d * d
		if w > 0 && sum > 0 {
			q := float64(w) / sum
			h -= q * math.Log(q)
		}
	}
	sd = math.Sqrt(sd / float64(len(a)))
	if len(a) > 1 {
		h /= math.Log(float64(len(a)))
	} else {
		h = 0
	}
	return mx, sd, h
}
