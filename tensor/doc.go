// Package tensor holds the numeric kernels of hlm's inference engine: weight
// matrices in the storage types the model files use (F32, F16, BF16, Q8_0,
// Q4_0), the matrix–vector and matrix–matrix products over them, and the small
// element-wise operations of a Llama block (RMSNorm, softmax, SiLU, rotary
// embeddings).
//
// Every fast path has a plain reference next to it (the functions whose names
// end in Ref) and is tested against it. Products are parallel over output
// rows only: each output element is one dot product computed in a fixed order,
// so results are bit-identical whatever the number of threads. The server-side
// draft replica relies on this.
//
// Storage conventions: a Matrix is row-major with Rows rows of Cols elements.
// A PyTorch weight of shape [out, in] (GGUF dims [in, out]) is a Matrix with
// Rows = out and Cols = in, and y = W·x is MatVec.
package tensor
