package tensor

import "math"

// fma32 returns a·b + c rounded once to float32: the IEEE 754
// fusedMultiplyAdd of binary32, which the FMA instructions (VFMADD231PS)
// compute. It is the portable twin of the assembly kernels.
//
// Go has no float32 FMA. a·b is exact in float64 (24 + 24 significant bits
// < 53), so the only rounding before the final one is that of the float64
// sum s = a·b + c. Rounding s to float32 gives the correctly rounded result
// unless s lies exactly halfway between two float32 values while the exact
// sum does not (then rounding twice can go the wrong way): s is rounded
// directly unless it is such a midpoint or too small for the test
// (fma32Slow handles those).
func fma32(a, b, c float32) float32 {
	p := float64(float64(a) * float64(b))
	s := float64(p + float64(c))
	bits := math.Float64bits(s)
	// Low 29 of the 52 fraction bits are what float32 drops: a midpoint has
	// exactly the top one of them set. Exponents below 897 are float32
	// subnormals (or zero), where the dropped bits are more.
	if onceRounded(bits) {
		return float32(s)
	}
	return fma32Slow(p, float64(c), s)
}

// onceRounded reports whether float32 of the float64 with these bits is
// the correctly rounded value of whatever exact sum rounded to it.
func onceRounded(bits uint64) bool {
	return bits&(1<<29-1) != 1<<28 && (bits>>52)&0x7ff >= 1023-126
}

// fma32Slow rounds p + c (p exact, s = p + c rounded to float64) to float32
// exactly: it recovers the error e of s (TwoSum) and, when e ≠ 0 and s is
// even, moves s one unit in the last place towards the exact sum. That is
// rounding to odd, and a value rounded to odd at 53 bits and then to nearest
// at 24 bits is the value rounded to nearest at 24 bits directly
// (53 ≥ 2·24 + 2; Boldo and Melquiond, "Emulation of FMA and correctly
// rounded sums: proved algorithms using rounding to odd", IEEE TC 2008).
// The explicit float64 conversions keep the compiler from fusing anything.
//
//go:noinline
func fma32Slow(p, c, s float64) float32 {
	if s-s != 0 { // ±Inf or NaN: nothing to correct
		return float32(s)
	}
	bv := float64(s - p)
	e := float64(float64(p-float64(s-bv)) + float64(c-bv))
	if bits := math.Float64bits(s); e != 0 && bits&1 == 0 {
		// s ≠ 0 here (a sum that rounds to zero is exact).
		if (e > 0) == (s > 0) {
			bits++ // away from zero
		} else {
			bits--
		}
		s = math.Float64frombits(bits)
	}
	return float32(s)
}

// reduce16 combines 16 partial sums in a fixed order: halves added lane by
// lane (l and l+8, then l and l+4, l and l+2, 0 and 1), as the vector
// kernels fold a register.
func reduce16(acc *[16]float32) float32 {
	var v [8]float32
	for l := range v {
		v[l] = acc[l] + acc[l+8]
	}
	w0, w1, w2, w3 := v[0]+v[4], v[1]+v[5], v[2]+v[6], v[3]+v[7]
	return (w0 + w2) + (w1 + w3)
}

// reduce8 combines 8 partial sums pairwise in a fixed order.
func reduce8(acc *[8]float32) float32 {
	return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
}

// dotF32 is the F32 dot product's summation order: element c goes to lane
// c mod 16, acc[lane] = fma32(a[c], b[c], acc[lane]) in increasing c, and the
// 16 lanes are combined by reduce16.
func dotF32(a, b []float32) float32 {
	b = b[:len(a)]
	var acc [16]float32
	i := chunksF32(a, b, &acc) // whole chunks in assembly where it exists (arm64)
	for ; i+16 <= len(a); i += 16 {
		aa := a[i : i+16 : i+16]
		bb := b[i : i+16 : i+16]
		for l := range acc { // fma32, inlined by hand
			p := float64(float64(aa[l]) * float64(bb[l]))
			s := float64(p + float64(acc[l]))
			if onceRounded(math.Float64bits(s)) {
				acc[l] = float32(s)
			} else {
				acc[l] = fma32Slow(p, float64(acc[l]), s)
			}
		}
	}
	for l := 0; i+l < len(a); l++ {
		acc[l] = fma32(a[i+l], b[i+l], acc[l])
	}
	return reduce16(&acc)
}
