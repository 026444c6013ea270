package llama

import (
	"fmt"
	"io"
	"math"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/gguf"
	"github.com/hlmproject/hlm/tensor"
	"github.com/hlmproject/hlm/tokenizer"
)

// ConvertStats says what WriteGGUF did.
type ConvertStats struct {
	Tensors int
	// Kept counts matrices left in their original type because their row
	// length is not a multiple of the target type's block size.
	Kept  int
	Bytes int64
}

// WriteGGUF writes m's weights (all layers) as a GGUF v3 file of its
// architecture, with the tokenizer in its metadata. Matrices are stored as
// t (F32, F16, Q8_0, Q4_0 or Q5_0); norms and biases stay F32. Tensor names and
// metadata keys are those llama.cpp reads for the architecture (fused
// tensors fused again, q/k rows in the rotary order llama.cpp expects,
// Gemma's norms as 1+w), so llama.cpp runs the file; OPT and GPT-Neo, which
// llama.cpp does not run, are written with keys of hlm's own (see
// archMetadata). Each matrix is converted while it is written, so the
// converted weights are never all held in memory.
func WriteGGUF(out io.Writer, m *Model, t tensor.DType, name string, meta ...Meta) (ConvertStats, error) {
	var st ConvertStats
	w := m.w
	gw := gguf.NewWriter()
	if err := archMetadata(gw, w, t, name); err != nil {
		return st, err
	}
	for _, kv := range meta {
		gw.AddString(kv.Key, kv.Value)
	}
	if m.tok != nil {
		addTokenizer(gw, m.tok.Vocab())
	}
	bs, err := w.bindings()
	if err != nil {
		return st, err
	}
	// Matrices first, then vectors, each in binding order (the order hlm
	// has always written Llama files in, so they stay byte-identical).
	for _, matrices := range []bool{true, false} {
		for _, b := range bs {
			if (b.cols > 0) != matrices {
				continue
			}
			parts := b.parts
			if len(parts) == 0 {
				parts = []part{{rows: b.rows, mat: b.mat, vec: b.vec}}
			}
			present := 0
			for _, p := range parts {
				if p.mat != nil && *p.mat != nil || p.vec != nil && *p.vec != nil {
					present++
				}
			}
			switch {
			case present == 0:
				continue
			case present < len(parts):
				return st, fmt.Errorf("%s: only %d of its %d parts are present", b.name, present, len(parts))
			case b.name == "output.weight" && *b.mat == w.Embedding:
				continue // tied: llama.cpp reuses token_embd.weight
			}
			if matrices {
				err = addMatrices(gw, &st, b.name, parts, t)
			} else {
				err = addVectors(gw, &st, b.name, parts)
			}
			if err != nil {
				return st, err
			}
		}
	}
	_, err = gw.WriteTo(out)
	return st, err
}

// Meta is a string key of a GGUF file's metadata beyond the model's own.
type Meta struct{ Key, Value string }

// TeacherKey is model.DraftTeacherKey.
const TeacherKey = model.DraftTeacherKey

// addMatrices adds a matrix, or the row-wise concatenation of a fused
// tensor's parts, converted to t (a matrix whose rows are not whole blocks
// of t keeps its type; the parts of a fused tensor share one type).
func addMatrices(gw *gguf.Writer, st *ConvertStats, name string, parts []part, t tensor.DType) error {
	first := *parts[0].mat
	target := t
	if first.Cols%t.BlockSize() != 0 {
		target = first.Type
		st.Kept++
	}
	rows := 0
	for _, p := range parts {
		mt := *p.mat
		if mt.Cols != first.Cols || len(parts) > 1 && target != t && mt.Type != target {
			return fmt.Errorf("%s: parts of different shapes or types", name)
		}
		// Refuse up front what cannot be written; the conversion itself
		// runs row by row as the file is written.
		if err := mt.CheckConvert(target); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		rows += mt.Rows
	}
	gt, err := ggufTypeOf(target)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	rb, _ := target.RowBytes(first.Cols)
	st.Tensors++
	st.Bytes += int64(rows) * int64(rb)
	return gw.AddTensorFunc(name, []uint64{uint64(first.Cols), uint64(rows)}, gt, func(out io.Writer) error {
		for _, p := range parts {
			if err := writeMatrix(out, *p.mat, target); err != nil {
				return err
			}
		}
		return nil
	})
}

// addVectors adds a vector, or the concatenation of a fused tensor's
// parts, as F32.
func addVectors(gw *gguf.Writer, st *ConvertStats, name string, parts []part) error {
	var v []float32
	for _, p := range parts {
		v = append(v, *p.vec...)
	}
	st.Tensors++
	st.Bytes += int64(4 * len(v))
	return gw.AddTensor(name, []uint64{uint64(len(v))}, gguf.F32, tensor.EncodeRow(nil, tensor.F32, v))
}

// archMetadata writes general.* and the architecture's hyperparameters as
// llama.cpp's converter writes them (and llama.cpp's loader reads them back
// into the same configuration).
func archMetadata(gw *gguf.Writer, w *Weights, t tensor.DType, name string) error {
	c := w.Config
	fam, err := familyOf(c.Arch)
	if err != nil {
		return err
	}
	k := func(s string) string { return c.Arch + "." + s }
	gw.AddString("general.architecture", c.Arch)
	gw.AddString("general.name", name)
	gw.AddUint32("general.file_type", fileType(t))
	gw.AddUint32(k("context_length"), uint32(c.SeqLen))
	gw.AddUint32(k("embedding_length"), uint32(c.Dim))
	gw.AddUint32(k("feed_forward_length"), uint32(c.Hidden))
	gw.AddUint32(k("block_count"), uint32(len(w.Layers)))
	gw.AddUint32(k("attention.head_count"), uint32(c.Heads))
	gw.AddUint32(k("attention.head_count_kv"), uint32(c.KVHeads))
	if c.HeadDim > 0 {
		gw.AddUint32(k("attention.key_length"), uint32(c.HeadDim))
		gw.AddUint32(k("attention.value_length"), uint32(c.HeadDim))
	}
	if !fam.learnedPos {
		gw.AddUint32(k("rope.dimension_count"), uint32(c.RopeWidth()))
	}
	if c.Arch == "llama" {
		gw.AddUint32(k("vocab_size"), uint32(c.Vocab))
	}
	if !fam.learnedPos {
		gw.AddFloat32(k("rope.freq_base"), float32(c.RopeTheta))
	}
	if fam.layerNorm {
		gw.AddFloat32(k("attention.layer_norm_epsilon"), c.NormEps)
	} else {
		gw.AddFloat32(k("attention.layer_norm_rms_epsilon"), c.NormEps)
	}
	switch {
	case c.YarnOrigCtx > 0:
		gw.AddString(k("rope.scaling.type"), "yarn")
		gw.AddFloat32(k("rope.scaling.factor"), float32(c.RopeScale))
		gw.AddUint32(k("rope.scaling.original_context_length"), uint32(c.YarnOrigCtx))
	case c.RopeScale > 0 && c.RopeScale != 1:
		gw.AddString(k("rope.scaling.type"), "linear")
		gw.AddFloat32(k("rope.scaling.factor"), float32(c.RopeScale))
	}
	if c.RopeAttnFactor > 0 {
		gw.AddFloat32(k("rope.scaling.attn_factor"), float32(c.RopeAttnFactor))
	}
	if c.Window > 0 {
		gw.AddUint32(k("attention.sliding_window"), uint32(c.Window))
		pattern := make([]bool, len(w.Layers))
		def := make([]byte, len(w.Layers))
		for l := range pattern {
			pattern[l] = c.Local(l)
			def[l] = localMark(l%6 < 5)
			if c.Arch == "gemma2" {
				def[l] = localMark(l%2 < 1)
			}
		}
		if string(def) != c.LocalLayers[:len(w.Layers)] || !fam.llamaCpp {
			if err := gw.AddKV(k("attention.sliding_window_pattern"), gguf.ArrayOf(pattern)); err != nil {
				return err
			}
		}
		if c.LocalTheta > 0 {
			gw.AddFloat32(k("rope.freq_base_swa"), float32(c.LocalTheta))
		}
	}
	switch c.Arch {
	case "gemma2":
		gw.AddFloat32(k("attn_logit_softcapping"), c.AttnSoftcap)
		gw.AddFloat32(k("final_logit_softcapping"), c.FinalSoftcap)
	case "gemma3":
		if c.FinalSoftcap > 0 {
			gw.AddFloat32(k("final_logit_softcapping"), c.FinalSoftcap)
		}
	case "opt", "gpt_neo":
		gw.AddUint32(k("position_offset"), uint32(c.PosOffset))
		gw.AddBool(k("post_norm"), c.PostNorm)
		gw.AddFloat32(k("attention.scale"), c.AttnScale)
	}
	if fam.llamaCpp {
		// What llama.cpp derives from the architecture must be what the
		// model computes.
		back := c
		back.EmbedScale, back.AttnScale = 0, 0
		if c.Arch == "gemma2" || c.Arch == "gemma3" {
			back.EmbedScale = float32(math.Sqrt(float64(c.Dim)))
			if c.Arch == "gemma2" && c.Layers == 46 || c.Arch == "gemma3" && c.Layers == 62 {
				back.AttnScale = float32(1 / math.Sqrt(float64(c.Dim/c.Heads)))
			}
		}
		if back.EmbedScale != c.EmbedScale || back.AttnScale != c.AttnScale && !(c.AttnScale == float32(1/math.Sqrt(float64(c.HeadSize()))) && back.AttnScale == 0) {
			return fmt.Errorf("%w: %s with an embedding scale of %g and an attention scale of %g, which llama.cpp would not use", model.ErrUnsupported, c.Arch, c.EmbedScale, c.AttnScale)
		}
	}
	return nil
}

// writeMatrix writes the storage of m converted to t (as m.Convert(t) would
// store it), one row at a time.
func writeMatrix(w io.Writer, m *tensor.Matrix, t tensor.DType) error {
	if m.Type == t && t != tensor.F32 {
		_, err := w.Write(m.Data)
		return err
	}
	row := make([]float32, m.Cols)
	var buf []byte
	for i := 0; i < m.Rows; i++ {
		m.Row(row, i)
		buf = tensor.EncodeRow(buf[:0], t, row)
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// fileType is general.file_type as llama.cpp numbers it (mostly-type).
func fileType(t tensor.DType) uint32 {
	switch t {
	case tensor.F16:
		return 1
	case tensor.Q4_0:
		return 2
	case tensor.Q8_0:
		return 7
	case tensor.Q5_0:
		return 8
	case tensor.BF16:
		return 32
	}
	return 0
}

func addTokenizer(gw *gguf.Writer, v tokenizer.Vocab) {
	model := v.Model
	if model == "" {
		model = "llama"
	}
	gw.AddString("tokenizer.ggml.model", model)
	if v.Pre != "" {
		gw.AddString("tokenizer.ggml.pre", v.Pre)
	}
	gw.AddStrings("tokenizer.ggml.tokens", v.Tokens)
	if len(v.Scores) == len(v.Tokens) {
		gw.AddFloat32s("tokenizer.ggml.scores", v.Scores)
	}
	if len(v.Types) == len(v.Tokens) {
		gw.AddInt32s("tokenizer.ggml.token_type", v.Types)
	}
	if len(v.Merges) > 0 {
		gw.AddStrings("tokenizer.ggml.merges", v.Merges)
	}
	for _, id := range []struct {
		key string
		id  int
	}{{"tokenizer.ggml.bos_token_id", v.BOS}, {"tokenizer.ggml.eos_token_id", v.EOS}, {"tokenizer.ggml.unknown_token_id", v.UNK},
		{"tokenizer.ggml.eot_token_id", deref(v.EOT)}, {"tokenizer.ggml.eom_token_id", deref(v.EOM)}} {
		if id.id >= 0 {
			gw.AddUint32(id.key, uint32(id.id))
		}
	}
	gw.AddBool("tokenizer.ggml.add_bos_token", v.AddBOS)
	gw.AddBool("tokenizer.ggml.add_eos_token", v.AddEOS)
	gw.AddBool("tokenizer.ggml.add_space_prefix", v.AddSpacePrefix)
	if v.ChatTemplate != "" {
		gw.AddString("tokenizer.chat_template", v.ChatTemplate)
	}
}

// deref is *p, or -1 for nil.
func deref(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}
