package score

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/hlmproject/hlm/model"
)

// ErrMismatch: a model and its base (or a base file) cannot be compared
// position by position — different vocabularies, tokens or windows.
var ErrMismatch = errors.New("score: model and base do not match")

// DefaultWindow is llama-perplexity's default context (-c 512).
const DefaultWindow = 512

// NoBOS is WindowConfig.BOS (and the bos of DivergenceFile and
// PairedFile) for a tokenizer that adds no BOS: each window keeps the
// text's own first token.
const NoBOS = -1

// WindowConfig says how a text is cut into windows, as llama-perplexity
// cuts it: the whole text is one token sequence (BOS first when the
// tokenizer adds one), split into Window-token windows (a remainder shorter
// than a window is dropped); each window's first token is replaced by BOS
// when the tokenizer adds one (llama.cpp's add_bos) and is kept otherwise
// (GPT-2, GPT-Neo: the window is the text's own tokens), and the window is
// evaluated on its own; only its second half is scored — the positions
// Window/2 … Window−2, which predict tokens Window/2+1 … Window−1 — so
// every scored token has at least Window/2 tokens of context.
//
// BOS has no usable zero value: 0 is a token like any other, so a caller
// sets it to the tokenizer's BOS or to NoBOS, always.
type WindowConfig struct {
	Window int // tokens per window (llama-perplexity -c); DefaultWindow if 0
	Chunks int // at most this many windows (llama-perplexity --chunks); 0: all
	BOS    int // the token that replaces each window's first when the tokenizer adds BOS; NoBOS: none
}

// Validate reports a configuration that cannot be run.
func (c WindowConfig) Validate() error {
	switch {
	case c.Window < 4:
		return fmt.Errorf("score: window of %d tokens (at least 4)", c.Window)
	case c.Chunks < 0:
		return fmt.Errorf("score: %d chunks: want 0 (all windows) or more", c.Chunks)
	case c.BOS < NoBOS:
		return fmt.Errorf("score: BOS token %d (NoBOS, %d, when the tokenizer adds none)", c.BOS, NoBOS)
	}
	return nil
}

func (c WindowConfig) withDefaults() WindowConfig {
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	return c
}

// Windows returns the windows of ids (llama-perplexity's chunks; see
// WindowConfig), each a new slice, its first token replaced by BOS unless
// BOS is NoBOS.
// A text shorter than two windows is an error, as in llama-perplexity.
func Windows(ids []int, c WindowConfig) ([][]int, error) {
	c = c.withDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if len(ids) < 2*c.Window {
		return nil, fmt.Errorf("score: %d tokens: at least %d (two windows of %d) are needed; a longer text, or a smaller window (hlm nll --ctx)", len(ids), 2*c.Window, c.Window)
	}
	n := len(ids) / c.Window
	if c.Chunks > 0 {
		n = min(n, c.Chunks)
	}
	out := make([][]int, n)
	for i := range out {
		w := append([]int(nil), ids[i*c.Window:(i+1)*c.Window]...)
		if c.BOS >= 0 {
			w[0] = c.BOS
		}
		out[i] = w
	}
	return out, nil
}

// Scored is the range of positions of a window of n tokens that are
// scored: logits rows [first, n−1), predicting tokens first+1 … n−1.
func Scored(n int) (first, end int) { return n / 2, n - 1 }

// Divergence scores the windows of ids (see WindowConfig) under base and m
// and compares them position by position: exactly (Compare), or, with
// llama true, with the base stored as llama.cpp stores it (Encode16, then
// Compare16). progress, when not nil, is called after each window.
func Divergence(ctx context.Context, base, m model.Model, ids []int, c WindowConfig, llama bool, progress func(done, total int)) (*KLD, error) {
	bc, mc := base.Config(), m.Config()
	if bc.Vocab != mc.Vocab {
		return nil, fmt.Errorf("%w: vocabularies of %d and %d tokens", ErrMismatch, bc.Vocab, mc.Vocab)
	}
	c = c.withDefaults()
	if c.Window > bc.SeqLen || c.Window > mc.SeqLen {
		return nil, fmt.Errorf("%w: window of %d tokens, contexts of %d (base) and %d", model.ErrContextFull, c.Window, bc.SeqLen, mc.SeqLen)
	}
	windows, err := Windows(ids, c)
	if err != nil {
		return nil, err
	}
	var (
		k   KLD
		buf []uint16
	)
	for wi, w := range windows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		br, err := base.NewSession().Eval(w)
		if err != nil {
			return nil, err
		}
		mr, err := m.NewSession().Eval(w)
		if err != nil {
			return nil, err
		}
		first, end := Scored(len(w))
		for i := first; i < end; i++ {
			if llama {
				r := Encode16(br[i], buf)
				buf = r.Q
				k.Add(Compare16(r, mr[i], w[i+1]))
			} else {
				k.Add(Compare(br[i], mr[i], w[i+1]))
			}
		}
		if progress != nil {
			progress(wi+1, len(windows))
		}
	}
	return &k, nil
}

// DivergenceFile compares m with the base log-probabilities of a
// llama-perplexity --kl-divergence-base file, on that file's tokens and
// windows, as llama-perplexity --kl-divergence does (Compare16). bos
// replaces each window's first token, as the model's tokenizer says (its
// BOS when it adds one, else NoBOS: the file's own first token stays).
func DivergenceFile(ctx context.Context, f *LogitsReader, m model.Model, bos int, progress func(done, total int)) (*KLD, error) {
	mc := m.Config()
	if f.Vocab != mc.Vocab {
		return nil, fmt.Errorf("%w: the base file has %d tokens in its vocabulary, the model %d", ErrMismatch, f.Vocab, mc.Vocab)
	}
	if f.Window > mc.SeqLen {
		return nil, fmt.Errorf("%w: the base file's windows are %d tokens, the model's context %d", model.ErrContextFull, f.Window, mc.SeqLen)
	}
	for _, t := range f.Tokens {
		if t < 0 || int(t) >= mc.Vocab {
			return nil, fmt.Errorf("%w: token %d in the base file", model.ErrToken, t)
		}
	}
	var k KLD
	w := make([]int, f.Window)
	for c := range f.Chunks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for i := range w {
			w[i] = int(f.Tokens[c*f.Window+i])
		}
		if bos >= 0 {
			w[0] = bos
		}
		rows, err := f.Next()
		if err != nil {
			return nil, err
		}
		mr, err := m.NewSession().Eval(w)
		if err != nil {
			return nil, err
		}
		first, _ := Scored(len(w))
		for j, r := range rows {
			i := first + j
			k.Add(Compare16(r, mr[i], w[i+1]))
		}
		if progress != nil {
			progress(c+1, f.Chunks)
		}
	}
	return &k, nil
}

// SaveBase writes m's log-probabilities at the scored positions of the
// windows of ids (see WindowConfig) as a llama-perplexity
// --kl-divergence-base file (see LogitsReader), for llama-perplexity
// --kl-divergence or DivergenceFile, and returns their NLL, computed exactly.
func SaveBase(ctx context.Context, m model.Model, ids []int, c WindowConfig, w io.Writer, progress func(done, total int)) (Result, error) {
	var r Result
	c = c.withDefaults()
	if c.Window > m.Config().SeqLen {
		return r, fmt.Errorf("%w: window of %d tokens, context of %d", model.ErrContextFull, c.Window, m.Config().SeqLen)
	}
	windows, err := Windows(ids, c)
	if err != nil {
		return r, err
	}
	tokens := make([]int32, 0, len(windows)*c.Window)
	for _, t := range ids[:len(windows)*c.Window] {
		tokens = append(tokens, int32(t))
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := WriteLogitsHeader(bw, c.Window, m.Config().Vocab, len(windows), tokens); err != nil {
		return r, err
	}
	var buf []uint16
	for wi, win := range windows {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		rows, err := m.NewSession().Eval(win)
		if err != nil {
			return r, err
		}
		first, end := Scored(len(win))
		for i := first; i < end; i++ {
			row := Encode16(rows[i], buf)
			buf = row.Q
			if err := WriteRow16(bw, row); err != nil {
				return r, err
			}
			r.Sum -= LogSoftmax(rows[i], win[i+1])
			r.Tokens++
		}
		if progress != nil {
			progress(wi+1, len(windows))
		}
	}
	return r, bw.Flush()
}

// Paired compares two runs of a model — this one and another engine's —
// against the same base, position by position: the difference of their KL
// divergences from the base is averaged over the same positions, so its
// standard error is that of the paired differences, far smaller than
// either mean's. Both runs' distributions go through llama.cpp's 16-bit
// storage (the other's comes so from its file; this one's is stored the
// same way), so that neither side gains from the storage.
type Paired struct {
	Positions int      `json:"positions"`
	KLD       float64  `json:"kld"`       // this run's mean KL(base ‖ model)
	OtherKLD  float64  `json:"other_kld"` // the other run's
	Diff      Estimate `json:"diff"`      // mean of KLD − OtherKLD, standard error √(var/(n−1))
	// TopOnly counts the positions where this run's top token is the
	// base's and the other's is not; OtherTopOnly the converse.
	TopOnly      int `json:"top_only"`
	OtherTopOnly int `json:"other_top_only"`
}

// LogProbs returns the stored log-probabilities of every token.
func (r Row16) LogProbs(dst []float32) []float32 {
	dst = append(dst[:0], make([]float32, len(r.Q))...)
	for i := range r.Q {
		dst[i] = r.LogProb(i)
	}
	return dst
}

// PairedFile compares m with the other run stored in other (a
// llama-perplexity --kl-divergence-base file of the same model on the same
// tokens and windows as base's), both against base (see Paired).
func PairedFile(ctx context.Context, base, other *LogitsReader, m model.Model, bos int, progress func(done, total int)) (Paired, error) {
	var p Paired
	if base.Window != other.Window || base.Vocab != other.Vocab || base.Chunks != other.Chunks || !slices.Equal(base.Tokens, other.Tokens) {
		return p, fmt.Errorf("%w: the two base files have different tokens or windows", ErrMismatch)
	}
	if base.Vocab != m.Config().Vocab {
		return p, fmt.Errorf("%w: the base file has %d tokens in its vocabulary, the model %d", ErrMismatch, base.Vocab, m.Config().Vocab)
	}
	if base.Window > m.Config().SeqLen {
		return p, fmt.Errorf("%w: the base file's windows are %d tokens, the model's context %d", model.ErrContextFull, base.Window, m.Config().SeqLen)
	}
	var (
		sum, sum2, sk, so float64
		buf               []uint16
		lp, olp           []float32
	)
	w := make([]int, base.Window)
	for c := range base.Chunks {
		if err := ctx.Err(); err != nil {
			return p, err
		}
		for i := range w {
			w[i] = int(base.Tokens[c*base.Window+i])
			if w[i] < 0 || w[i] >= base.Vocab {
				return p, fmt.Errorf("%w: token %d in the base file", model.ErrToken, w[i])
			}
		}
		if bos >= 0 {
			w[0] = bos
		}
		br, err := base.Next()
		if err != nil {
			return p, err
		}
		or, err := other.Next()
		if err != nil {
			return p, err
		}
		mr, err := m.NewSession().Eval(w)
		if err != nil {
			return p, err
		}
		first, _ := Scored(len(w))
		for j := range br {
			i := first + j
			r := Encode16(mr[i], buf)
			buf = r.Q
			lp, olp = r.LogProbs(lp), or[j].LogProbs(olp)
			a, b := Compare16(br[j], lp, w[i+1]), Compare16(br[j], olp, w[i+1])
			d := a.KLD - b.KLD
			p.Positions++
			sum, sum2, sk, so = sum+d, sum2+d*d, sk+a.KLD, so+b.KLD
			switch at, bt := a.Top == a.TopBase, b.Top == b.TopBase; {
			case at && !bt:
				p.TopOnly++
			case bt && !at:
				p.OtherTopOnly++
			}
		}
		if progress != nil {
			progress(c+1, base.Chunks)
		}
	}
	if p.Positions > 0 {
		p.KLD, p.OtherKLD = sk/float64(p.Positions), so/float64(p.Positions)
		p.Diff = meanAndUncertainty(sum, sum2, p.Positions)
	}
	return p, nil
}
