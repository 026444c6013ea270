// Package gguf reads and writes GGUF files, the container format of
// llama.cpp: a header, typed key-value metadata (architecture parameters,
// tokenizer), a tensor index, and the tensor data, aligned so that it can
// be memory-mapped and used in place.
//
// This package is about the container only. It knows the name, block size
// and block byte size of every ggml tensor type, so that it can check a
// file's layout and a caller can report "tensor X has unsupported type
// Q5_K", but it does not convert (dequantize) tensor data.
//
// # Layout
//
// All integers are little-endian. A file is
//
//	offset  size  field
//	0       4     magic "GGUF" (0x47 0x47 0x55 0x46)
//	4       4     uint32 version: 3 (2 is read too; 1 is rejected)
//	8       8     uint64 tensor_count
//	16      8     uint64 metadata_kv_count
//	24      ...   metadata_kv_count entries:
//	                string   key
//	                uint32   value type
//	                ...      value
//	        ...   tensor_count tensor infos:
//	                string   name
//	                uint32   n_dims (≤ 4)
//	                uint64   dims[n_dims], innermost first: a PyTorch [out, in]
//	                         matrix has dims [in, out]
//	                uint32   ggml type
//	                uint64   offset of the data from the start of the data
//	                         section, a multiple of the alignment
//	        ...   zero padding to a multiple of the alignment
//	DataOffset    data section: each tensor's data at its offset, followed
//	              by zero padding to the alignment
//
// A string is a uint64 byte length followed by that many bytes, without a
// terminating NUL. The alignment is the uint32 general.alignment entry, or
// 32 if there is none. A value is encoded according to its type:
//
//	type  name     encoding
//	0     uint8    1 byte
//	1     int8     1 byte
//	2     uint16   2 bytes
//	3     int16    2 bytes
//	4     uint32   4 bytes
//	5     int32    4 bytes
//	6     float32  4 bytes, IEEE 754
//	7     bool     1 byte, 0 or 1
//	8     string   uint64 length, bytes
//	9     array    uint32 element type, uint64 count, count encoded elements
//	               (elements may themselves be arrays)
//	10    uint64   8 bytes
//	11    int64    8 bytes
//	12    float64  8 bytes, IEEE 754
//
// A tensor of type T occupies (number of elements / T.BlockSize()) ×
// T.TypeSize() bytes; its innermost dimension must be a multiple of the
// block size (32 for Q8_0 and Q4_0, 256 for the k-quants).
//
// # Limits
//
// Parse treats the file as hostile: malformed input yields an error
// wrapping ErrFormat, ErrVersion or ErrUnsupported whose message names the
// entry and byte offset, never a panic or a hang. Counts in the file only
// bound allocations; memory is spent in proportion to the header actually
// read: about twice its size for typical metadata (dominated by vocabulary
// arrays), at most about 15 times for a header made only of tiny entries,
// and nothing for tensor data. It enforces:
//
//   - every string length and array count fits in the bytes left in the
//     file, checked before allocating;
//   - arrays nest at most MaxArrayDepth (8) deep;
//   - metadata keys and tensor names are unique;
//   - bool values are 0 or 1, and value and element types are known;
//   - general.alignment, if present, is a uint32 non-zero power of two;
//   - a tensor has at most MaxDims (4) dimensions, none of them 0, an
//     element and byte count that fit in int64, a known type (removed and
//     unknown types give ErrUnsupported), and an innermost dimension that
//     is a multiple of the type's block size;
//   - every tensor's offset is aligned, its data lies within the file, and
//     no two tensors' data overlap (gaps are allowed).
//
// The Writer enforces the same rules, and also that keys and tensor names
// are not empty, that tensor names are at most MaxTensorNameLen bytes as
// llama.cpp requires, and that tensors have at least one dimension.
//
// # Usage
//
// Reading a model:
//
//	f, err := gguf.Open("model.gguf") // memory-mapped where possible
//	if err != nil { ... }
//	defer f.Close()
//	arch := f.Architecture()                          // "llama"
//	nCtx, err := f.Uint(f.ArchKey("context_length"))  // llama.context_length
//	tokens, err := f.Strings("tokenizer.ggml.tokens")
//	t, ok := f.Tensor("token_embd.weight")            // t.Type, t.Dims
//	b, err := f.TensorData("token_embd.weight")       // slice of the mapping; valid until Close
//
// Writing one:
//
//	w := gguf.NewWriter()
//	w.AddString("general.architecture", "llama")
//	w.AddUint32("llama.context_length", 2048)
//	w.AddStrings("tokenizer.ggml.tokens", vocab)
//	w.AddTensor("token_embd.weight", []uint64{dim, nVocab}, gguf.F32, data)
//	_, err := w.WriteTo(out) // reports the first error of any Add
package gguf
