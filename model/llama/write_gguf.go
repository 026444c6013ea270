package llama

import (
	"fmt"
	"io"

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

// WriteGGUF writes m's weights (all layers) as a GGUF v3 llama file with the
// tokenizer in its metadata. Matrices are stored as t (F32, F16, Q8_0 or
// Q4_0); norms stay F32. Tensor names and metadata keys follow llama.cpp, and
// q/k rows are in the interleaved rotary order llama.cpp expects. Each
// matrix is converted while it is written, so the converted weights are never
// all held in memory.
func WriteGGUF(out io.Writer, m *Model, t tensor.DType, name string) (ConvertStats, error) {
	var st ConvertStats
	w := m.w
	c := w.Config
	gw := gguf.NewWriter()
	gw.AddString("general.architecture", "llama")
	gw.AddString("general.name", name)
	gw.AddUint32("general.file_type", fileType(t))
	gw.AddUint32("llama.context_length", uint32(c.SeqLen))
	gw.AddUint32("llama.embedding_length", uint32(c.Dim))
	gw.AddUint32("llama.feed_forward_length", uint32(c.Hidden))
	gw.AddUint32("llama.block_count", uint32(len(w.Layers)))
	gw.AddUint32("llama.attention.head_count", uint32(c.Heads))
	gw.AddUint32("llama.attention.head_count_kv", uint32(c.KVHeads))
	gw.AddUint32("llama.rope.dimension_count", uint32(c.HeadSize()))
	gw.AddUint32("llama.vocab_size", uint32(c.Vocab))
	gw.AddFloat32("llama.rope.freq_base", float32(c.RopeTheta))
	gw.AddFloat32("llama.attention.layer_norm_rms_epsilon", c.NormEps)
	if m.tok != nil {
		addTokenizer(gw, m.tok.Vocab())
	}
	add := func(name string, mt *tensor.Matrix) error {
		target := t
		if mt.Cols%t.BlockSize() != 0 {
			target = mt.Type
			st.Kept++
		}
		// Refuse up front what cannot be written; the conversion itself
		// runs row by row as the file is written.
		if err := mt.CheckConvert(target); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		gt, err := ggufTypeOf(target)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		rb, _ := target.RowBytes(mt.Cols)
		st.Tensors++
		st.Bytes += int64(mt.Rows) * int64(rb)
		return gw.AddTensorFunc(name, []uint64{uint64(mt.Cols), uint64(mt.Rows)}, gt, func(out io.Writer) error {
			return writeMatrix(out, mt, target)
		})
	}
	vec := func(name string, v []float32) error {
		st.Tensors++
		st.Bytes += int64(4 * len(v))
		return gw.AddTensor(name, []uint64{uint64(len(v))}, gguf.F32, tensor.EncodeRow(nil, tensor.F32, v))
	}
	var err error
	w.Matrices(func(name string, mt *tensor.Matrix) {
		if err == nil {
			err = add(name, mt)
		}
	})
	if err != nil {
		return st, err
	}
	for l, ly := range w.Layers {
		if err := vec(fmt.Sprintf("blk.%d.attn_norm.weight", l), ly.AttnNorm); err != nil {
			return st, err
		}
		if err := vec(fmt.Sprintf("blk.%d.ffn_norm.weight", l), ly.FFNNorm); err != nil {
			return st, err
		}
	}
	if err := vec("output_norm.weight", w.FinalNorm); err != nil {
		return st, err
	}
	_, err = gw.WriteTo(out)
	return st, err
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
		{"tokenizer.ggml.eot_token_id", v.EOT}, {"tokenizer.ggml.eom_token_id", v.EOM}} {
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
