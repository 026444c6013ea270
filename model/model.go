// Package model defines the language-model interface the rest of hlm
// consumes — a set of weights that opens sessions, each session holding its
// own KV cache — and the model spec syntax that names a model, an early-exit
// view of it or a quantized copy of it.
//
// The Llama-family engine that implements it lives in model/llama; the file
// formats in model/gguf and model/safetensors.
package model

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hlmproject/hlm/tokenizer"
)

// Sentinel errors, wrapped with details by implementations.
var (
	// ErrFormat: a model file is malformed.
	ErrFormat = errors.New("malformed model file")
	// ErrUnsupported: a model file is well formed but uses something hlm does not implement.
	ErrUnsupported = errors.New("unsupported model")
	// ErrContextFull: an evaluation would go past the model's context length.
	ErrContextFull = errors.New("context length exceeded")
	// ErrToken: a token id is outside the vocabulary.
	ErrToken = errors.New("token id out of range")
	// ErrTree: a token tree or a path kept from it is malformed (see
	// TreeSession).
	ErrTree = errors.New("malformed token tree")
)

// DraftTeacherKey is the GGUF metadata key in which hlm distill records the
// fingerprint of the model a draft was distilled from (the shipped draft of
// an LLM is found by it).
const DraftTeacherKey = "hlm.draft.teacher"

// OriginKey is the GGUF metadata key in which hlm convert records the
// origin of the weights it writes: the fingerprint of the full-precision
// model they were converted or quantized from (model/llama's
// Model.Origin), so that a converted copy is known as the model it copies
// (its shipped draft is found by it) while its own fingerprint, which
// names its logits, differs.
const OriginKey = "hlm.origin"

// Config is the shape of a decoder: a Llama-architecture one by default,
// and the variants of the other families (Arch names the family; see
// model/llama) in the fields after NormEps, whose zero values are Llama's
// and are left out of the JSON, so a Llama configuration reads and hashes
// as before they existed.
type Config struct {
	Arch      string  `json:"arch"`       // "llama", "qwen2", "qwen3", "gemma2", "gemma3", "phi3", "gpt2", "opt", "gpt_neo"
	Dim       int     `json:"dim"`        // residual stream width
	Hidden    int     `json:"hidden"`     // feed-forward width
	Layers    int     `json:"layers"`     // transformer blocks in use
	Heads     int     `json:"heads"`      // query heads
	KVHeads   int     `json:"kv_heads"`   // key/value heads (grouped-query attention when < Heads)
	Vocab     int     `json:"vocab"`      // vocabulary size
	SeqLen    int     `json:"seq_len"`    // maximum context length
	RopeTheta float64 `json:"rope_theta"` // rotary base
	NormEps   float32 `json:"norm_eps"`   // RMSNorm (or LayerNorm) epsilon

	// HeadDim is the width of one head when it is not Dim/Heads (Gemma,
	// Qwen3): queries are Heads·HeadDim wide.
	HeadDim int `json:"head_dim,omitempty"`
	// RopeDims is how many dims of a head rotate (Phi-3's partial
	// rotary); 0: all. RopeNeox pairs dim i with i+RopeDims/2 instead of
	// 2i with 2i+1 (llama.cpp's NEOX rope type: Qwen, Gemma, Phi-3).
	RopeDims int  `json:"rope_dims,omitempty"`
	RopeNeox bool `json:"rope_neox,omitempty"`
	// RopeScale divides the positions of the global layers (linear
	// scaling); 0 or 1: none. With YarnOrigCtx > 0 it is YaRN's factor
	// instead (Peng et al. 2023): the high frequencies kept, the low ones
	// divided, a ramp between them set by the context the model was
	// trained on (YarnOrigCtx), and the rotations scaled by
	// 1 + 0.1·ln(factor). RopeAttnFactor, when > 0, multiplies every
	// rotation (llama.cpp's rope.scaling.attn_factor).
	RopeScale      float64 `json:"rope_scale,omitempty"`
	YarnOrigCtx    int     `json:"yarn_orig_ctx,omitempty"`
	RopeAttnFactor float64 `json:"rope_attn_factor,omitempty"`
	// Window is the sliding window of the layers LocalLayers marks ('L'
	// at a layer's index; 'G' a global layer): a query at position i sees
	// the keys at i−Window+1 … i. LocalTheta is their rotary base (0:
	// RopeTheta); they are not scaled. (A string keeps Config comparable.)
	Window      int     `json:"window,omitempty"`
	LocalLayers string  `json:"local_layers,omitempty"`
	LocalTheta  float64 `json:"local_theta,omitempty"`
	// AttnScale multiplies the attention scores (0: 1/√HeadSize; GPT-Neo
	// 1, Gemma 1/√query_pre_attn_scalar). AttnSoftcap and FinalSoftcap,
	// when > 0, cap scores and logits at c·tanh(x/c) (Gemma 2).
	AttnScale    float32 `json:"attn_scale,omitempty"`
	AttnSoftcap  float32 `json:"attn_softcap,omitempty"`
	FinalSoftcap float32 `json:"final_softcap,omitempty"`
	// EmbedScale multiplies the token embeddings (Gemma: √Dim); 0: 1.
	EmbedScale float32 `json:"embed_scale,omitempty"`
	// PosOffset is the first row of a learned position table (OPT: 2).
	PosOffset int `json:"pos_offset,omitempty"`
	// PostNorm normalizes after each residual addition instead of before
	// each block (OPT with do_layer_norm_before false).
	PostNorm bool `json:"post_norm,omitempty"`
	// EmbedDim is the width of the token embeddings when it is not Dim
	// (OPT's word_embed_proj_dim, projected to Dim and back).
	EmbedDim int `json:"embed_dim,omitempty"`
}

// EmbedWidth is the width of the token embeddings: EmbedDim, else Dim.
func (c Config) EmbedWidth() int {
	if c.EmbedDim > 0 {
		return c.EmbedDim
	}
	return c.Dim
}

// RopeWidth is how many dims of a head rotate: RopeDims, else all.
func (c Config) RopeWidth() int {
	if c.RopeDims > 0 {
		return c.RopeDims
	}
	return c.HeadSize()
}

// HeadSize is the width of one head: HeadDim, else Dim/Heads.
func (c Config) HeadSize() int {
	if c.HeadDim > 0 {
		return c.HeadDim
	}
	return c.Dim / c.Heads
}

// QDim is the width of the queries of one layer, Heads·HeadSize.
func (c Config) QDim() int { return c.Heads * c.HeadSize() }

// KVDim is the width of the key and value vectors of one layer.
func (c Config) KVDim() int { return c.KVHeads * c.HeadSize() }

// Local reports whether layer l attends within the sliding window.
func (c Config) Local(l int) bool {
	return c.Window > 0 && l >= 0 && l < len(c.LocalLayers) && c.LocalLayers[l] == 'L'
}

// MACs is the number of multiply-adds one decoding step costs at position
// pos (pos earlier tokens in the cache): the weight matrices of every layer
// (q, k, v, o, gate, up, down), attention over pos+1 keys (scores and the
// weighted sum of values, every head), and the classifier. Norms, RoPE,
// softmax and activations are O(Dim) and left out.
func (c Config) MACs(pos int) int64 {
	d, q, kv, h := int64(c.Dim), int64(c.QDim()), int64(c.KVDim()), int64(c.Hidden)
	perLayer := 2*q*d + 2*kv*d + 3*h*d + 2*q*int64(pos+1)
	return int64(c.Layers)*perLayer + int64(c.Vocab)*d
}

// MaxMACsRatio is the largest ratio of c's multiply-adds per token to
// ref's over the positions 0 … n−1, and the first position where it is
// reached: the cost bound that holds along a whole context, not just at
// one position. Both counts are affine in the position, so their ratio is
// monotonic and the largest is at one end.
func (c Config) MaxMACsRatio(ref Config, n int) (ratio float64, pos int) {
	at := func(p int) float64 { return float64(c.MACs(p)) / float64(ref.MACs(p)) }
	last := max(n-1, 0)
	if r0, r1 := at(0), at(last); r1 > r0 {
		return r1, last
	}
	return at(0), 0
}

// Validate reports a shape the engine cannot run. Limits are generous (models
// far larger than Llama-2-70B pass) but rule out nonsense read from a corrupt
// file before anything is allocated.
func (c Config) Validate() error {
	const maxDim = 1 << 16
	switch {
	case c.Dim <= 0 || c.Dim > maxDim:
		return fmt.Errorf("%w: dim %d", ErrFormat, c.Dim)
	case c.Hidden <= 0 || c.Hidden > 8*maxDim:
		return fmt.Errorf("%w: hidden dim %d", ErrFormat, c.Hidden)
	case c.Layers <= 0 || c.Layers > 1024:
		return fmt.Errorf("%w: %d layers", ErrFormat, c.Layers)
	case c.Heads <= 0 || c.Heads > maxDim || c.HeadDim == 0 && c.Dim%c.Heads != 0:
		return fmt.Errorf("%w: %d heads for dim %d", ErrFormat, c.Heads, c.Dim)
	case c.HeadDim < 0 || c.HeadDim > maxDim || c.QDim() > 4*maxDim:
		return fmt.Errorf("%w: head size %d", ErrFormat, c.HeadDim)
	case c.KVHeads <= 0 || c.Heads%c.KVHeads != 0:
		return fmt.Errorf("%w: %d kv heads for %d heads", ErrFormat, c.KVHeads, c.Heads)
	case c.HeadSize()%2 != 0:
		return fmt.Errorf("%w: odd head size %d", ErrFormat, c.HeadSize())
	case c.Vocab <= 0 || c.Vocab > 1<<22:
		return fmt.Errorf("%w: vocab size %d", ErrFormat, c.Vocab)
	case c.SeqLen <= 0 || c.SeqLen > 1<<22:
		return fmt.Errorf("%w: context length %d", ErrFormat, c.SeqLen)
	case !(c.RopeTheta > 0):
		return fmt.Errorf("%w: rope theta %g", ErrFormat, c.RopeTheta)
	case !(c.NormEps > 0 && c.NormEps < 1):
		return fmt.Errorf("%w: norm epsilon %g", ErrFormat, c.NormEps)
	case c.RopeDims < 0 || c.RopeDims%2 != 0 || c.RopeDims > c.HeadSize():
		return fmt.Errorf("%w: %d rotary dims for head size %d", ErrFormat, c.RopeDims, c.HeadSize())
	case c.RopeScale < 0 || c.RopeScale > 1<<20 || c.RopeScale != c.RopeScale:
		return fmt.Errorf("%w: rope scale %g", ErrFormat, c.RopeScale)
	case c.YarnOrigCtx < 0 || c.YarnOrigCtx > 1<<30 || c.YarnOrigCtx > 0 && !(c.RopeScale >= 1):
		return fmt.Errorf("%w: YaRN over an original context of %d with factor %g", ErrFormat, c.YarnOrigCtx, c.RopeScale)
	case c.RopeAttnFactor < 0 || c.RopeAttnFactor > 1<<10 || c.RopeAttnFactor != c.RopeAttnFactor:
		return fmt.Errorf("%w: rope attention factor %g", ErrFormat, c.RopeAttnFactor)
	case c.Window < 0:
		return fmt.Errorf("%w: sliding window %d", ErrFormat, c.Window)
	case len(c.LocalLayers) > 0 && len(c.LocalLayers) < c.Layers ||
		strings.Trim(c.LocalLayers, "LG") != "":
		return fmt.Errorf("%w: local-layer pattern %q for %d layers", ErrFormat, c.LocalLayers, c.Layers)
	case c.LocalTheta < 0 || c.LocalTheta != c.LocalTheta:
		return fmt.Errorf("%w: local rope theta %g", ErrFormat, c.LocalTheta)
	case !(c.AttnScale >= 0) || !(c.AttnSoftcap >= 0) || !(c.FinalSoftcap >= 0) || !(c.EmbedScale >= 0):
		return fmt.Errorf("%w: attention scale %g, soft-caps %g and %g, embedding scale %g", ErrFormat, c.AttnScale, c.AttnSoftcap, c.FinalSoftcap, c.EmbedScale)
	case c.PosOffset < 0 || c.PosOffset > 1<<16:
		return fmt.Errorf("%w: position offset %d", ErrFormat, c.PosOffset)
	case c.EmbedDim < 0 || c.EmbedDim > maxDim:
		return fmt.Errorf("%w: embedding width %d", ErrFormat, c.EmbedDim)
	}
	return nil
}

// Model is a set of weights that opens sessions. It is safe for concurrent use.
type Model interface {
	Config() Config
	// NewSession opens a session with an empty KV cache.
	NewSession() Session
	// Tokenizer is the model's tokenizer, or nil when none was found.
	Tokenizer() *tokenizer.Tokenizer
	// Name describes the model for humans (the spec it was opened from).
	Name() string
	// Fingerprint identifies the computation: equal fingerprints mean
	// bit-identical logits for the same tokens.
	Fingerprint() string
}

// OriginOf is the fingerprint of the full-precision model m was made from
// — a quantized view or a converted file names its origin (an Origin
// method) — else m's own Fingerprint. Equal origins mean the same trained
// weights, not the same logits: the shipped draft of a model is found by
// it (model/builtin.DraftFor).
func OriginOf(m Model) string {
	if o, ok := m.(interface{ Origin() string }); ok {
		if s := o.Origin(); s != "" {
			return s
		}
	}
	return m.Fingerprint()
}

// Session is one sequence being evaluated: a KV cache over positions
// [0, Len()). A session is not safe for concurrent use; different sessions of
// one model are.
type Session interface {
	// Eval appends tokens at positions Len()…Len()+n−1 in one pass and returns
	// the logits that follow each of them (n rows of Vocab values).
	Eval(tokens []int) ([][]float32, error)
	// Prefill is Eval returning only the logits after the last token.
	Prefill(tokens []int) ([]float32, error)
	// Truncate drops every position ≥ n (n ≤ Len()), e.g. rejected drafts.
	Truncate(n int) error
	// Len is the number of positions in the cache.
	Len() int
	// SetCapture chooses which attention probabilities of the newest
	// position each Eval records.
	SetCapture(c Capture)
	// Attention is what the last Eval captured for its newest position.
	Attention() *Attention
}

// Capture selects the attention probabilities a session records.
type Capture int

const (
	CaptureNone      Capture = iota
	CaptureLastLayer         // last layer, averaged over heads
	CaptureLayers            // every layer, averaged over heads
	CaptureHeads             // every layer, every head
)

// Attention holds the attention probabilities of one query position over the
// positions 0…Len−1 it attends to. Rows are indexed layer-major: row
// (l·Heads + h) is layer FirstLayer+l, head h (Heads is 1 when averaged).
type Attention struct {
	FirstLayer int
	Layers     int
	Heads      int
	Len        int
	Rows       [][]float32
}

// Last returns the row of the last captured layer, averaged over heads.
func (a *Attention) Last() []float32 {
	if a == nil || len(a.Rows) == 0 {
		return nil
	}
	if a.Heads == 1 {
		return a.Rows[len(a.Rows)-1]
	}
	out := make([]float32, a.Len)
	rows := a.Rows[len(a.Rows)-a.Heads:]
	for _, r := range rows {
		for i, v := range r {
			out[i] += v
		}
	}
	for i := range out {
		out[i] /= float32(a.Heads)
	}
	return out
}

// TreeSession is implemented by sessions that evaluate a tree of tokens in
// one pass (tree attention): the drafts of a token tree, verified at once.
//
// EvalTree appends nodes after the Len() cached positions: node i holds
// tokens[i], its parent is parents[i] (−1: the last cached position, i.e.
// a child of the context; else an earlier node, parents[i] < i), it sits
// at position Len()+depth(i) (depth 0 for the context's children) and
// attends to positions 0…Len()−1 and to its ancestors and itself, nothing
// else. It returns the logits after each node, bit-identical to
// evaluating that node's root-to-node path alone after the cached
// positions. The cache holds the tree until KeepPath or Truncate: Len()
// stays the length before the tree, and only KeepPath, Truncate (which
// drops the whole tree with whatever else it cuts) or another EvalTree
// (which first drops the tree) may follow.
//
// KeepPath keeps the nodes of path — a chain from the context: path[0]'s
// parent is −1 and each next node's parent is the previous one — as
// positions Len()… (their keys and values as the tree pass computed them)
// and drops every other node; an empty path drops the tree.
type TreeSession interface {
	EvalTree(tokens, parents []int) ([][]float32, error)
	KeepPath(path []int) error
}

// Batcher is implemented by models that can evaluate blocks of several of
// their sessions in one pass (reading every weight once for all of them).
// The result is identical to evaluating each session on its own.
type Batcher interface {
	EvalBatch(sessions []Session, tokens [][]int) ([][][]float32, error)
}

// SkipSession is implemented by sessions that can evaluate tokens without
// computing the logits after the first skip of them: EvalSkip returns the
// len(tokens)−skip rows after tokens[skip:] (0 ≤ skip ≤ len(tokens)),
// identical to those rows of Eval. A server's first round evaluates the
// whole prompt with the device's block and reads the block's rows only;
// the classifier over the prompt's rows was a fifth of the evaluation, and
// its logits 600 KB a token at a vocabulary of 151,936.
type SkipSession interface {
	EvalSkip(tokens []int, skip int) ([][]float32, error)
}

// SkipBatcher is Batcher with SkipSession's skip per session: for session
// i, the len(tokens[i])−skip[i] rows after tokens[i][skip[i]:] (a nil
// skip skips none).
type SkipBatcher interface {
	EvalBatchSkip(sessions []Session, tokens [][]int, skip []int) ([][][]float32, error)
}

// Wanted names the rows of an evaluation whose logits an engine computes:
// each block's last (Last: a prefill), or those after the first Skip[i]
// tokens of block i (every row when Skip is nil).
type Wanted struct {
	Last bool
	Skip []int
}

// From is the first wanted row of block i, of n tokens.
func (w Wanted) From(i, n int) int {
	switch {
	case w.Last:
		return n - 1
	case w.Skip != nil:
		return w.Skip[i]
	}
	return 0
}

// CheckSkip checks skip against the blocks it applies to: nil, or one
// count per block, each in [0, len(block)].
func CheckSkip(tokens [][]int, skip []int) error {
	if skip == nil {
		return nil
	}
	if len(skip) != len(tokens) {
		return fmt.Errorf("%d skip counts for %d token blocks", len(skip), len(tokens))
	}
	for i, k := range skip {
		if k < 0 || k > len(tokens[i]) {
			return fmt.Errorf("skip %d of a block of %d tokens", k, len(tokens[i]))
		}
	}
	return nil
}

// EvalSkip evaluates tokens on s, skipping the logits after the first skip
// of them where s can (SkipSession), and returns len(tokens) rows: nil for
// the skipped ones (a session that cannot skip fills them anyway).
func EvalSkip(s Session, tokens []int, skip int) ([][]float32, error) {
	ss, ok := s.(SkipSession)
	if !ok || skip == 0 {
		return s.Eval(tokens)
	}
	rows, err := ss.EvalSkip(tokens, skip)
	if err != nil {
		return nil, err
	}
	return Unskip(rows, skip), nil
}

// Unskip puts rows after skip nil rows: a SkipSession's rows as Eval's
// positions.
func Unskip(rows [][]float32, skip int) [][]float32 {
	if skip == 0 {
		return rows
	}
	out := make([][]float32, skip+len(rows))
	copy(out[skip:], rows)
	return out
}
