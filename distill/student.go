package distill

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
	"strconv"
	"strings"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/train"
)

// studentShape is the student's configuration: the flags, with the
// teacher's values where they are 0 (one layer by default).
func (c Config) studentShape(teacher model.Config) model.Config {
	// The student is a Llama-architecture decoder whatever the teacher's
	// family: its widths default to the teacher's, its vocabulary and
	// context are the teacher's.
	s := model.Config{Arch: "llama", Dim: teacher.Dim, Hidden: teacher.Hidden, Heads: teacher.Heads, KVHeads: teacher.KVHeads,
		Vocab: teacher.Vocab, SeqLen: teacher.SeqLen, RopeTheta: teacher.RopeTheta, NormEps: teacher.NormEps}
	if s.Dim%s.Heads != 0 {
		s.Heads, s.KVHeads = 1, 1 // a teacher with its own head width (Gemma, Qwen3): pass --heads
	}
	s.Layers = 1
	for _, f := range []struct {
		dst *int
		v   int
	}{{&s.Layers, c.Layers}, {&s.Dim, c.Dim}, {&s.Hidden, c.Hidden}, {&s.Heads, c.Heads}, {&s.KVHeads, c.KVHeads}} {
		if f.v > 0 {
			*f.dst = f.v
		}
	}
	return s
}

// copyByName copies every tensor of src into the tensor of dst with the same
// name (src's tied embedding stands for a missing classifier). When the
// shapes differ — a student with a narrower or wider feed-forward layer —
// the overlapping top-left block is copied and the rest keeps its
// initialisation. It returns how many tensors it copied from.
func copyByName(dst, src *train.Params[float32]) int {
	n := 0
	for _, t := range dst.Tensors {
		name := t.Name
		if _, ok := src.Info(name); !ok && name == "output.weight" && src.Shape.Tied {
			name = "token_embd.weight"
		}
		st, ok := src.Info(name)
		if !ok {
			continue
		}
		rows, cols := min(t.Rows, st.Rows), min(t.Cols, st.Cols)
		for r := 0; r < rows; r++ {
			copy(dst.Data[t.Off+r*t.Cols:t.Off+r*t.Cols+cols], src.Data[st.Off+r*st.Cols:st.Off+r*st.Cols+cols])
		}
		n++
	}
	return n
}

// newStudent builds the student's initial parameters and freezes what
// exit-head mode keeps.
func newStudent(c Config, teacher *llama.Model, open func(spec string) (*llama.Model, error)) (*train.Params[float32], error) {
	tc := teacher.Weights().Config
	if c.ExitHead > 0 {
		if c.ExitHead > tc.Layers {
			return nil, fmt.Errorf("--exit-head %d: the teacher has %d layers", c.ExitHead, tc.Layers)
		}
		layers := c.ExitHead
		if c.ExtraLayer {
			layers++
		}
		shape := tc
		shape.Layers = layers
		p, err := train.NewParams[float32](train.Shape{Config: shape})
		if err != nil {
			return nil, err
		}
		p.InitRandom(c.Seed, 0.02)
		src, err := train.FromWeights[float32](teacher.Weights(), min(layers, tc.Layers))
		if err != nil {
			return nil, err
		}
		copyByName(p, src)
		frozen := []string{"token_embd.weight"}
		for _, t := range p.Tensors {
			if l, ok := blockOf(t.Name); ok && l < c.ExitHead {
				frozen = append(frozen, t.Name)
			}
		}
		if err := p.Freeze(true, frozen...); err != nil {
			return nil, err
		}
		return p, nil
	}

	if n, ok := c.initExit(); ok {
		if n > tc.Layers {
			return nil, fmt.Errorf("--init exit=%d: the teacher has %d layers", n, tc.Layers)
		}
		shape := c.studentShape(tc)
		if c.Layers == 0 {
			shape.Layers = n
		}
		if shape.Dim != tc.Dim || shape.Heads != tc.Heads || shape.KVHeads != tc.KVHeads {
			return nil, fmt.Errorf("--init exit=%d copies the teacher's layers: the student's dim/heads/kv-heads (%d/%d/%d) must be the teacher's (%d/%d/%d); --hidden may differ",
				n, shape.Dim, shape.Heads, shape.KVHeads, tc.Dim, tc.Heads, tc.KVHeads)
		}
		if shape.Layers < n {
			return nil, fmt.Errorf("--init exit=%d needs at least %d student layers, not %d", n, n, shape.Layers)
		}
		tied := teacher.Weights().Output == teacher.Weights().Embedding
		p, err := train.NewParams[float32](train.Shape{Config: shape, Tied: tied})
		if err != nil {
			return nil, err
		}
		p.InitRandom(c.Seed, 0.02)
		src, err := train.FromWeights[float32](teacher.Weights(), n)
		if err != nil {
			return nil, err
		}
		copyByName(p, src)
		return p, nil
	}

	if c.Init != "random" && c.Init != "svd" {
		m, err := open(c.Init)
		if err != nil {
			return nil, fmt.Errorf("--init: %w", err)
		}
		ic := m.Weights().Config
		if ic.Vocab != tc.Vocab {
			return nil, fmt.Errorf("--init %s has a vocabulary of %d tokens, the teacher %d: a draft must share the teacher's vocabulary", c.Init, ic.Vocab, tc.Vocab)
		}
		if it, tt := m.Tokenizer(), teacher.Tokenizer(); it != nil && tt != nil && it.Fingerprint() != tt.Fingerprint() {
			return nil, fmt.Errorf("--init %s has a different tokenizer from the teacher's (same size, different pieces)", c.Init)
		}
		return train.FromWeights[float32](m.Weights(), m.Config().Layers)
	}

	shape := c.studentShape(tc)
	p, err := train.NewParams[float32](train.Shape{Config: shape, Tied: true})
	if err != nil {
		// The shape comes from flags, not from a file: say so, and what a
		// shape must satisfy.
		return nil, fmt.Errorf("the student's shape (--layers %d --dim %d --hidden %d --heads %d --kv-heads %d; by default one layer of the teacher's widths) is impossible: %s (--dim must be a multiple of --heads, and --heads of --kv-heads)",
			shape.Layers, shape.Dim, shape.Hidden, shape.Heads, shape.KVHeads, strings.TrimPrefix(err.Error(), model.ErrFormat.Error()+": "))
	}
	p.InitRandom(c.Seed, 0.02)
	if c.Init == "svd" {
		if err := projectEmbedding(p, teacher.Weights()); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// projectEmbedding starts the student's token embedding (its classifier
// too: the student is tied) from the teacher's, projected onto the teacher
// embedding's top Dim right singular vectors: E·V_k, the best rank-k
// approximation of the teacher's token geometry in the student's width.
func projectEmbedding(p *train.Params[float32], tw *llama.Weights) error {
	width, k := tw.Embedding.Cols, p.Shape.Dim
	if k > width {
		return fmt.Errorf("--init svd projects the teacher's %d-wide embedding: the student's --dim %d must not be wider", width, k)
	}
	e := mat.NewDense(tw.Embedding.Rows, tw.Embedding.Cols, nil)
	row := make([]float32, tw.Embedding.Cols)
	for r := 0; r < tw.Embedding.Rows; r++ {
		tw.Embedding.Row(row, r)
		for c, v := range row {
			e.Set(r, c, float64(v))
		}
	}
	var svd mat.SVD
	if !svd.Factorize(e, mat.SVDThin) {
		return fmt.Errorf("--init svd: the SVD of the teacher's embedding did not converge")
	}
	var v, out mat.Dense
	svd.VTo(&v)
	out.Mul(e, v.Slice(0, width, 0, k))
	for i := range tw.Embedding.Rows {
		for j := range k {
			p.Embedding[i*k+j] = float32(out.At(i, j))
		}
	}
	return nil
}

// blockOf is the block index of a tensor named "blk.N.…".
func blockOf(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return 0, false
	}
	num, _, ok := strings.Cut(rest, ".")
	n, err := strconv.Atoi(num)
	return n, ok && err == nil
}
