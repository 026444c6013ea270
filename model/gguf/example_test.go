package gguf_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log"
	"math"

	"github.com/hlmproject/hlm/model/gguf"
)

// A converter writes metadata and tensors; an engine parses them back.
func Example() {
	w := gguf.NewWriter()
	w.AddString(gguf.KeyArchitecture, "llama")
	w.AddUint32("llama.context_length", 2048)
	w.AddFloat32("llama.attention.layer_norm_rms_epsilon", 1e-5)
	w.AddStrings("tokenizer.ggml.tokens", []string{"<unk>", "<s>", "</s>"})

	// A 2×3 PyTorch matrix [out=2, in=3] has GGUF dims [3, 2].
	var data []byte
	for _, x := range []float32{1, 2, 3, 4, 5, 6} {
		data = binary.LittleEndian.AppendUint32(data, math.Float32bits(x))
	}
	w.AddTensor("output.weight", []uint64{3, 2}, gguf.F32, data)

	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		log.Fatal(err)
	}

	f, err := gguf.Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		log.Fatal(err)
	}
	nCtx, err := f.Uint(f.ArchKey("context_length"))
	if err != nil {
		log.Fatal(err)
	}
	tokens, _ := f.Strings("tokenizer.ggml.tokens")
	fmt.Println(f.Architecture(), nCtx, len(tokens))
	for _, kv := range f.Metadata {
		fmt.Printf("%s = %v\n", kv.Key, kv.Value)
	}
	for _, t := range f.Tensors {
		b, _ := f.TensorData(t.Name)
		fmt.Println(t.Name, t.Type, t.Dims, len(b), "bytes")
	}
	if _, err := f.Float("llama.block_count"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// llama 2048 3
	// general.architecture = "llama"
	// llama.context_length = 2048
	// llama.attention.layer_norm_rms_epsilon = 1e-05
	// tokenizer.ggml.tokens = ["<unk>" "<s>" "</s>"]
	// output.weight F32 [3 2] 24 bytes
	// gguf: missing metadata key: "llama.block_count"
}

// Checking a tensor's type before using its data.
func ExampleType() {
	t := gguf.TensorInfo{Name: "blk.0.ffn_down.weight", Dims: []uint64{11008, 4096}, Type: gguf.Q5_K}
	switch t.Type {
	case gguf.F32, gguf.F16, gguf.Q8_0:
		fmt.Println("supported")
	default:
		fmt.Printf("tensor %s has unsupported type %s (%d bytes per %d elements)\n",
			t.Name, t.Type, t.Type.TypeSize(), t.Type.BlockSize())
	}
	// Output:
	// tensor blk.0.ffn_down.weight has unsupported type Q5_K (176 bytes per 256 elements)
}
