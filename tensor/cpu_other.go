//go:build !(amd64 || arm64) || purego

package tensor

const cpuLevel = levelPortable

// defaultLevel is the level this CPU runs unless told otherwise.
const defaultLevel = cpuLevel

// tunedLevel is max: no level here is tuned for a kind of CPU.
func tunedLevel(max int) int { return max }

var archLevels = []int{levelPortable}

func cpuFeatures() string { return "portable code only" }

func chunksF32(a, b []float32, acc *[16]float32) int { return 0 }

func blocksQuant(t DType, w []byte, a []actBlock, acc *[8]float32) int { return 0 }

func blocksK(t DType, w []byte, a []actBlockK, acc *[16]float32) int { return 0 }

func chunksF16(w []byte, x []float32, acc *[32]float32) int { return 0 }

func chunksBF16(w []byte, x []float32, acc *[32]float32) int { return 0 }

// putF16Chunks converts nothing here: PutF16 converts every value in Go.
func putF16Chunks(dst []uint16, src []float32) int { return 0 }

// quantizeQ8Chunks encodes nothing here: QuantizeQ8_0 runs in Go.
func quantizeQ8Chunks(dst []byte, src []float32) int { return 0 }

// wsumQ8Chunks sums nothing here: WeightedSumAddQ8_0 widens rows in Go.
func wsumQ8Chunks(out, a []float32, v []byte, stride int) int { return 0 }
