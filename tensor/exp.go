package tensor

import "math"

// Exp kernel: e^x for x ≤ 0 in float64, about 1e-15 relative error, by
// Cody–Waite range reduction x = n·ln2 + r (|r| ≤ ln2/2) and a degree-11
// Taylor polynomial of e^r, scaled by 2^n built in the exponent bits. Every
// operation is a separate IEEE multiply or add (no FMA) in a fixed order, so
// the assembly and the portable Go code give identical bits. This file holds
// its constants and the Go code (expNeg); the vector code of every kernel
// that takes an exponential (ExpShifted's, SwiGLU's) is one generator
// function, gen_kernels.go's expNeg, which reads them from expConsts.

const (
	expLog2e = 1.4426950408889634
	expLn2Hi = 0.6931471803691238     // high bits of ln 2 (exact product with n)
	expLn2Lo = 1.9082149292705877e-10 // ln 2 − expLn2Hi
	expMin   = -708.0                 // below this e^x is 0 here (2^n stays normal)
	expBias  = 1023                   // of float64's exponent
)

// expCoef are 1/k! for k = 11 … 0 (Horner order).
var expCoef = [12]float64{
	1.0 / 39916800, 1.0 / 3628800, 1.0 / 362880, 1.0 / 40320, 1.0 / 5040, 1.0 / 720,
	1.0 / 120, 1.0 / 24, 1.0 / 6, 1.0 / 2, 1, 1,
}

// expTable is the exponential's constants as the assembly kernels read
// them (gen_kernels.go: the offsets expLog2e … expCoef there).
type expTable struct {
	log2e, ln2Hi, ln2Lo, min float64
	bias                     int64
	coef                     [12]float64
}

// expConsts is the one expTable, passed to the kernels.
var expConsts = expTable{expLog2e, expLn2Hi, expLn2Lo, expMin, expBias, expCoef}

// expNeg is the portable kernel for one value x ≤ 0.
func expNeg(x float64) float64 {
	if !(x >= expMin) { // also NaN and −Inf
		return 0
	}
	n := math.RoundToEven(float64(x * expLog2e))
	r := float64(x - float64(n*expLn2Hi))
	r = float64(r - float64(n*expLn2Lo))
	p := expCoef[0]
	for _, c := range expCoef[1:] {
		p = float64(float64(p*r) + c)
	}
	return float64(p * math.Float64frombits(uint64(int64(n)+expBias)<<52))
}

// Exp is e^x by the same kernel, for code that needs the same bits on every
// machine (math.Exp on amd64 takes an FMA path on CPUs that have FMA, so its
// last bit depends on the CPU). It returns 0 below −708 and +Inf above 708,
// where 2^n would leave the normal range, and NaN for NaN.
func Exp(x float64) float64 {
	switch {
	case x != x:
		return x
	case x > -expMin:
		return math.Inf(1)
	}
	return expNeg(x)
}

// ExpShifted writes dst[i] = e^((x[i] − shift)·scale) for every i and returns
// their sum. It assumes (x[i] − shift)·scale ≤ 0 (the softmax case: shift is
// the maximum logit, scale = 1/temperature > 0); values below −708, −Inf and
// NaN give 0. The sum is accumulated in four interleaved partials combined
// in a fixed order; results are bit-identical on every machine.
//
// From ShareMin values on, the exponentials are shared out over the
// threads in chunks (ShareChunks), and the sum is then taken over dst in index order into
// the same four partials: the same bits as one thread's pass (the kernels
// add e_i to partial i mod 4 in index order, and e_i does not depend on
// where a chunk starts). A call that finds the threads busy (a nested
// ParallelLoop) makes the one pass, without the second.
func ExpShifted(dst []float64, x []float32, shift, scale float64) float64 {
	dst = dst[:len(x)]
	var acc [4]float64
	// The length is tested first: the chunks' closure escapes, and a short
	// call (a head's attention) must not allocate it.
	if len(x) < ShareMin || !ShareChunks(len(x), 16*len(x), func(lo, hi int) {
		var discard [4]float64
		expRange(dst[lo:hi], x[lo:hi], shift, scale, &discard)
	}) {
		expRange(dst, x, shift, scale, &acc)
		return (acc[0] + acc[1]) + (acc[2] + acc[3])
	}
	i := 0
	for ; i+4 <= len(dst); i += 4 {
		d := dst[i : i+4 : i+4]
		acc[0] += d[0]
		acc[1] += d[1]
		acc[2] += d[2]
		acc[3] += d[3]
	}
	for ; i < len(dst); i++ {
		acc[i%4] += dst[i]
	}
	return (acc[0] + acc[1]) + (acc[2] + acc[3])
}

// expRange writes dst[i] = e^((x[i] − shift)·scale) and adds each to
// acc[i mod 4] in index order.
func expRange(dst []float64, x []float32, shift, scale float64, acc *[4]float64) {
	i := expChunks(dst, x, shift, scale, acc)
	for ; i < len(x); i++ {
		v := float64(float64(float64(x[i])-shift) * scale)
		e := expNeg(v)
		dst[i] = e
		acc[i%4] += e
	}
}
