package llama

import (
	"fmt"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
	"github.com/hlmproject/hlm/tokenizer"
)

// Model is a Llama decoder ready to evaluate: weights, the number of layers
// in use (fewer than the weights hold for an early-exit view), the rotary
// tables and the tokenizer. It is safe for concurrent use by many sessions.
type Model struct {
	w    *Weights
	cfg  model.Config // cfg.Layers = layers in use
	fam  family
	rope *tensor.Rope // nil with learned positions
	// ropeLocal rotates the sliding-window layers when their base or
	// scaling differs (Gemma 3); nil: rope.
	ropeLocal *tensor.Rope
	tok       *tokenizer.Tokenizer
	name      string
	fp        *fingerprint
	// The origin of the weights (see Origin): the one recorded in the
	// file (model.OriginKey; "" when none), or the model a quantized copy
	// was made from (nil when none).
	recorded string
	src      *Model
	// The types of the sessions' KV caches (ctk, ctv): float32 unless
	// a view (WithCacheTypes) says otherwise.
	cacheK, cacheV cacheType
}

var _ model.Model = (*Model)(nil)

// New makes a model from validated weights. tok may be nil.
func New(w *Weights, tok *tokenizer.Tokenizer, name string) (*Model, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if tok != nil && tok.VocabSize() > w.Config.Vocab {
		return nil, fmt.Errorf("%w: tokenizer has %d tokens, model vocabulary is %d", model.ErrFormat, tok.VocabSize(), w.Config.Vocab)
	}
	c := w.Config
	fam, err := familyOf(c.Arch)
	if err != nil {
		return nil, err
	}
	m := &Model{w: w, cfg: c, fam: fam, tok: tok, name: name, fp: new(fingerprint)}
	if !fam.learnedPos {
		rc := tensor.RopeConfig{HeadSize: c.HeadSize(), Dims: c.RopeDims, Theta: c.RopeTheta, Scale: c.RopeScale, Factors: w.RopeFactors, Neox: c.RopeNeox}
		if c.YarnOrigCtx > 0 {
			rc.Scale, rc.Yarn = 0, tensor.Yarn{Factor: c.RopeScale, OrigCtx: c.YarnOrigCtx}
		}
		rc.AttnFactor = c.RopeAttnFactor
		m.rope = tensor.NewRopeFrom(rc, c.SeqLen)
		if c.Window > 0 && (c.LocalTheta > 0 && c.LocalTheta != c.RopeTheta || c.RopeScale > 0 && c.RopeScale != 1) {
			// Local layers: their own base, no scaling (llama.cpp's swa
			// frequency base and scale; Gemma 2's equal the global ones).
			rc.Scale, rc.Factors, rc.Yarn = 0, nil, tensor.Yarn{}
			if c.LocalTheta > 0 {
				rc.Theta = c.LocalTheta
			}
			if c.Arch == "gemma2" && c.YarnOrigCtx == 0 {
				rc.Scale = c.RopeScale
			}
			m.ropeLocal = tensor.NewRopeFrom(rc, c.SeqLen)
		}
	}
	return m, nil
}

// Config is the shape in use (Layers counts only the layers evaluated).
func (m *Model) Config() model.Config { return m.cfg }

// Weights are the full weights behind the model (all layers, even for an
// early-exit view).
func (m *Model) Weights() *Weights { return m.w }

// Tokenizer is the model's tokenizer, or nil.
func (m *Model) Tokenizer() *tokenizer.Tokenizer { return m.tok }

// Name is the spec the model was opened from.
func (m *Model) Name() string { return m.name }

// EarlyExit returns a view of m that evaluates only its first n layers, then
// the final norm and the output head: a cheaper draft model over the same
// vocabulary. It shares m's weights.
func (m *Model) EarlyExit(n int) (*Model, error) {
	if n <= 0 || n > len(m.w.Layers) {
		return nil, fmt.Errorf("early exit after %d layers: the model has %d", n, len(m.w.Layers))
	}
	v := *m
	v.cfg.Layers = n
	v.name = fmt.Sprintf("%s@exit=%d", m.name, n)
	v.fp = new(fingerprint)
	return &v, nil
}

// Quantized returns a copy of m (same layers in use) with its matrices stored
// as t, and the number of matrices left unquantized because their rows are not
// a whole number of blocks.
func (m *Model) Quantized(t tensor.DType) (*Model, int, error) {
	w, kept, err := m.w.Quantized(t)
	if err != nil {
		return nil, 0, err
	}
	v := *m
	v.w = w
	v.fp = new(fingerprint)
	v.src, v.recorded = m, ""
	return &v, kept, nil
}

// NewSession opens a session with an empty cache.
func (m *Model) NewSession() model.Session { return m.Session() }

// Session opens a session with an empty cache, as its concrete type.
func (m *Model) Session() *Session {
	return &Session{m: m, k: make([]kvRows, m.cfg.Layers), v: make([]kvRows, m.cfg.Layers)}
}

// KVBytes is the memory of a session's KV cache of n positions: the keys
// and values of every layer, 4 bytes a value in float32, 2 in half
// precision and 34 per 32 in Q8_0 (ctk, ctv), for n rounded up to whole pages of 64 positions (a
// cache grows a page at a time, Session.grow).
func (m *Model) KVBytes(n int) int64 {
	return int64(pagesFor(n)*kvPage) * m.KVPositionBytes()
}

// KVPositionBytes is the memory of one cached position: the keys and
// values of every layer, in the cache's types.
func (m *Model) KVPositionBytes() int64 {
	return int64(m.cfg.Layers) * (m.cacheK.rowBytes(m.cfg.KVDim()) + m.cacheV.rowBytes(m.cfg.KVDim()))
}

// KVBytes is the memory its KV cache holds now (its capacity, not its
// length).
func (s *Session) KVBytes() int64 {
	var n int64
	for l := range s.k {
		n += s.k[l].bytes() + s.v[l].bytes()
	}
	return n
}

// WithCacheTypes returns a view of m whose sessions keep their keys and
// values as k and v ("f32", "f16", "q8_0"; "" is f32): the spec options
// ctk and ctv, named as llama.cpp names its cache types. It shares m's
// weights, their Origin and their hash; its Fingerprint differs from m's
// when a type is not f32 (its logits differ). m itself when nothing
// changes.
func (m *Model) WithCacheTypes(k, v string) (*Model, error) {
	tk, err := parseCacheType(k)
	if err != nil {
		return nil, err
	}
	tv, err := parseCacheType(v)
	if err != nil {
		return nil, err
	}
	for _, t := range []struct {
		name string
		typ  cacheType
	}{{"ctk", tk}, {"ctv", tv}} {
		if err := t.typ.check(m.cfg.HeadSize()); err != nil {
			return nil, fmt.Errorf("%s=%s: %w", t.name, t.typ, err)
		}
	}
	if tk == m.cacheK && tv == m.cacheV {
		return m, nil
	}
	c := *m // shares m.fp: the weights' hash does not depend on the caches
	c.cacheK, c.cacheV = tk, tv
	return &c, nil
}

// CacheTypes are the types of its sessions' keys and values ("f32",
// "f16" or "q8_0").
func (m *Model) CacheTypes() (k, v string) { return m.cacheK.String(), m.cacheV.String() }

var (
	_ model.Batcher     = (*Model)(nil)
	_ model.SkipBatcher = (*Model)(nil)
	_ model.SkipSession = (*Session)(nil)
)

// EvalBatch evaluates blocks of several sessions of this model in one pass
// (see the package-level EvalBatch).
func (m *Model) EvalBatch(sessions []model.Session, tokens [][]int) ([][][]float32, error) {
	return m.EvalBatchSkip(sessions, tokens, nil)
}

// EvalBatchSkip is EvalBatch without the logits after the first skip[i]
// tokens of session i (see the package-level EvalBatchSkip).
func (m *Model) EvalBatchSkip(sessions []model.Session, tokens [][]int, skip []int) ([][][]float32, error) {
	ss := make([]*Session, len(sessions))
	for i, s := range sessions {
		ls, ok := s.(*Session)
		if !ok || ls.m.w != m.w {
			return nil, fmt.Errorf("EvalBatch: session %d does not belong to %s", i, m.name)
		}
		ss[i] = ls
	}
	return EvalBatchSkip(ss, tokens, skip)
}
