package tensor

import "fmt"

// DType is the storage type of a Matrix.
type DType uint8

// Storage types. Q8_0 and Q4_0 are the block formats of GGML: 32 elements per
// block sharing one float16 scale.
const (
	F32 DType = iota
	F16
	BF16
	Q8_0
	Q4_0
	Q4_K // read only: GGML K-quant, 256-element super-blocks (kquant.go)
	Q6_K // read only
	Q5_0 // GGML's 5-bit block of 32 (q5.go)
)

// QK is the number of elements in one Q8_0, Q4_0 or Q5_0 block.
const QK = 32

var dtypeNames = [...]string{F32: "F32", F16: "F16", BF16: "BF16", Q8_0: "Q8_0", Q4_0: "Q4_0", Q4_K: "Q4_K", Q6_K: "Q6_K", Q5_0: "Q5_0"}

func (t DType) String() string {
	if int(t) < len(dtypeNames) {
		return dtypeNames[t]
	}
	return fmt.Sprintf("DType(%d)", t)
}

// BlockSize is the number of elements that share one storage block.
func (t DType) BlockSize() int {
	switch t {
	case Q8_0, Q4_0, Q5_0:
		return QK
	case Q4_K, Q6_K:
		return QKK
	}
	return 1
}

// BlockBytes is the size in bytes of one storage block.
func (t DType) BlockBytes() int {
	switch t {
	case F32:
		return 4
	case F16, BF16:
		return 2
	case Q8_0:
		return 2 + QK
	case Q4_0:
		return 2 + QK/2
	case Q5_0:
		return q5Bytes
	case Q4_K:
		return q4KBytes
	case Q6_K:
		return q6KBytes
	}
	return 0
}

// RowBytes is the size in bytes of a row of n elements, or an error when n is
// not a whole number of blocks.
func (t DType) RowBytes(n int) (int, error) {
	bs := t.BlockSize()
	if t.BlockBytes() == 0 {
		return 0, fmt.Errorf("tensor: unknown dtype %v", t)
	}
	if n < 0 || n%bs != 0 {
		return 0, fmt.Errorf("tensor: row of %d elements is not a multiple of the %v block size %d", n, t, bs)
	}
	return n / bs * t.BlockBytes(), nil
}
