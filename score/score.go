// Package score measures how likely a model finds a text: the negative
// log-likelihood of tokens given their prefix, in nats, evaluated in blocks
// of the model's context length. It is the "NLL under the LLM" quality metric
// of the evaluation and the perplexity check of a loaded model.
package score

import (
	"errors"
	"fmt"
	"math"

	"github.com/hlmproject/hlm/model"
)

// Result accumulates negative log-likelihood over tokens.
type Result struct {
	Tokens int     `json:"tokens"`
	Sum    float64 `json:"nll_sum"` // Σ −ln p(token | prefix), nats
}

// Mean is the mean NLL per token (nats).
func (r Result) Mean() float64 {
	if r.Tokens == 0 {
		return math.NaN()
	}
	return r.Sum / float64(r.Tokens)
}

// Perplexity is exp(Mean).
func (r Result) Perplexity() float64 { return math.Exp(r.Mean()) }

// Add merges another result.
func (r *Result) Add(o Result) { r.Tokens += o.Tokens; r.Sum += o.Sum }

// LogSoftmax returns ln softmax(logits)[id], computed in float64.
func LogSoftmax(logits []float32, id int) float64 {
	maxv := math.Inf(-1)
	for _, v := range logits {
		maxv = math.Max(maxv, float64(v))
	}
	var z float64
	for _, v := range logits {
		z += math.Exp(float64(v) - maxv)
	}
	return float64(logits[id]) - maxv - math.Log(z)
}

// Continuation scores output given prompt: Σ −ln p(output[i] | prompt,
// output[:i]). prompt must be non-empty (start it with BOS). When the whole
// sequence does not fit the context, only the part that fits is scored and
// an error wrapping model.ErrContextFull says so.
func Continuation(m model.Model, prompt, output []int) (Result, error) {
	var r Result
	if len(prompt) == 0 {
		return r, errors.New("score: empty prompt (start it with BOS)")
	}
	seq := append(append([]int(nil), prompt...), output...)
	ctx := m.Config().SeqLen
	var err error
	if len(seq) > ctx {
		err = fmt.Errorf("%w: scored %d of %d output tokens", model.ErrContextFull, ctx-len(prompt), len(output))
		seq = seq[:ctx]
	}
	if len(seq) <= len(prompt) {
		return r, err
	}
	rows, evalErr := m.NewSession().Eval(seq[:len(seq)-1])
	if evalErr != nil {
		return r, evalErr
	}
	for i := len(prompt); i < len(seq); i++ {
		r.Sum -= LogSoftmax(rows[i-1], seq[i])
		r.Tokens++
	}
	return r, err
}

// Text scores a token sequence (starting with BOS) on its own, in
// consecutive windows of the context length, each window conditioned only on
// itself (the first token of each window is context, not scored).
func Text(m model.Model, ids []int) (Result, error) {
	var r Result
	ctx := m.Config().SeqLen
	for start := 0; start+1 < len(ids); start += ctx - 1 {
		end := min(start+ctx, len(ids))
		w, err := Continuation(m, ids[start:start+1], ids[start+1:end])
		if err != nil {
			return r, err
		}
		r.Add(w)
	}
	return r, nil
}
