package tensor

import (
	"encoding/binary"
	"math"
)

// Integer products for K-quants. As for Q8_0 and Q4_0 (act.go), the inputs
// are quantized to 8 bits — here one scale per 256-element super-block, as
// GGML's Q8_K — and every product of codes is summed exactly in integers;
// floats enter once per super-block. The order below is the definition:
// the vector kernels compute exactly these operations, so every level gives
// the same bits.
//
// A super-block's 256 elements are four chunks of 64; lane l < 16 of chunk
// k holds the four elements 64k+4l … 64k+4l+3. For each lane, the products
// code·q of its four elements are summed and multiplied by the integer
// scale of their sub-block, and the four chunks are added:
//
//	T[l] = Σ_k sc(64k+4l) · Σ_e code(64k+4l+e)·q(64k+4l+e)      (exact int32)
//
// Q4_K (codes 0…15, 32-element sub-blocks with 6-bit scale sc_j and min
// m_j, value d·sc_j·code − dmin·m_j):
//
//	acc[l] = fma32(float32(d·dx), float32(T[l]), acc[l])            l < 16
//	acc[l] = fma32(−float32(dmin·dx), float32(m_l·S32_l), acc[l])   l < 8
//
// with S32_j the sum of the input codes of sub-block j. Q6_K (codes 0…63,
// 16-element sub-blocks with int8 scale sc_j, value d·sc_j·(code − 32)):
//
//	U[l] = T[l] − 32·sc_l·S16_l                                     (exact int32)
//	acc[l] = fma32(float32(d·dx), float32(U[l]), acc[l])
//
// with S16_j the sum of the input codes of sub-block j (U mixes two lane
// meanings; only the sum matters). The 16 lanes are combined by reduce16.
// Bounds: |T| ≤ 4·4·15·127·63 < 2^24 (Q4_K), 4·4·63·127·128 < 2^24 (Q6_K),
// |U| < 2^25: no overflow; float32(U) may round, the same way everywhere.

// actBlockK is a super-block of 256 inputs quantized to 8 bits: codes q,
// the sum of each 16 and each 32 codes, and the scale d.
type actBlockK struct {
	q    [QKK]int8
	bs16 [16]int32
	bs32 [8]int32
	d    float32
	dn   [7]float32 // the d of the next tokens of a tile's group (setGroupScales)
}

// quantizeActsK quantizes x (a whole number of super-blocks) for K-quant
// products, reusing dst's storage: per super-block d = max|x|/127 and
// q = round(x/d) to the nearest, ties to even (NaNs are ignored in the
// maximum, as quantizeBlock does).
func quantizeActsK(dst []actBlockK, x []float32) []actBlockK {
	nb := len(x) / QKK
	if cap(dst) < nb {
		dst = makeActsK(nb)
	}
	dst = dst[:nb]
	if llamaInputs.Load() { // llamainputs.go
		for b := range dst {
			quantizeBlockKLlama(&dst[b], x[b*QKK:(b+1)*QKK:(b+1)*QKK])
		}
		return dst
	}
	if ks := kernels(); ks != nil && ks.quantK != nil && nb > 0 {
		ks.quantK(&dst[0], &x[0], nb)
		return dst
	}
	for b := range dst {
		a := &dst[b]
		xs := x[b*QKK : (b+1)*QKK : (b+1)*QKK]
		var amax float32
		for _, v := range xs {
			if m := math.Float32frombits(math.Float32bits(v) &^ (1 << 31)); m > amax {
				amax = m
			}
		}
		d := amax / 127
		id := float32(0)
		if d != 0 {
			id = 1 / d
		}
		for j, v := range xs {
			a.q[j] = int8(max(-127, min(127, cvtRound(float32(v*id)))))
		}
		for j := range a.bs16 {
			var s int32
			for _, q := range a.q[16*j : 16*j+16] {
				s += int32(q)
			}
			a.bs16[j] = s
		}
		for j := range a.bs32 {
			a.bs32[j] = a.bs16[2*j] + a.bs16[2*j+1]
		}
		a.d = d
	}
	return dst
}

// makeActsK returns nb blocks in 64-byte aligned storage: each block is
// six whole cache lines, so the tiles' 64-byte loads never split.
func makeActsK(nb int) []actBlockK {
	var raw []byte
	return aligned64[actBlockK](&raw, nb)
}

// setGroupScales copies, for the tiles of AVX-512 that take tokens
// t0 … t0+7 of n (nb super-blocks each), the scales of tokens t0+1 … into
// token t0's blocks (dn; 0 past the last token): the tile reads the eight
// scales of a super-block as one vector from its first token's block.
func setGroupScales(acts []actBlockK, n, nb, t0 int) {
	for b := 0; b < nb; b++ {
		a := &acts[t0*nb+b]
		for i := range a.dn {
			a.dn[i] = 0
			if t := t0 + 1 + i; t < n {
				a.dn[i] = acts[t*nb+b].d
			}
		}
	}
}

// dotQ4KInt is the portable integer dot product of a Q4_K row with
// quantized inputs, in the order described at the top of this file.
func dotQ4KInt(w []byte, a []actBlockK) float32 {
	var acc [16]float32
	for b := blocksK(Q4_K, w, a, &acc); b < len(a); b++ { // in assembly where it exists (arm64)
		blk := w[b*q4KBytes : (b+1)*q4KBytes : (b+1)*q4KBytes]
		x := &a[b]
		var sc, mn [8]int32
		for j := range sc {
			s, m := getScaleMinK4(j, blk[4:16])
			sc[j], mn[j] = int32(s), int32(m)
		}
		var t [16]int32
		for k := 0; k < 4; k++ {
			qs := blk[16+32*k : 16+32*k+32 : 16+32*k+32]
			xl := x.q[64*k : 64*k+32 : 64*k+32]    // elements 0…31: low nibbles
			xh := x.q[64*k+32 : 64*k+64 : 64*k+64] // 32…63: high nibbles
			s0, s1 := sc[2*k], sc[2*k+1]
			for l := 0; l < 8; l++ {
				q := qs[4*l : 4*l+4 : 4*l+4]
				a, b := xl[4*l:4*l+4:4*l+4], xh[4*l:4*l+4:4*l+4]
				t[l] += s0 * (int32(q[0]&0xF)*int32(a[0]) + int32(q[1]&0xF)*int32(a[1]) +
					int32(q[2]&0xF)*int32(a[2]) + int32(q[3]&0xF)*int32(a[3]))
				t[8+l] += s1 * (int32(q[0]>>4)*int32(b[0]) + int32(q[1]>>4)*int32(b[1]) +
					int32(q[2]>>4)*int32(b[2]) + int32(q[3]>>4)*int32(b[3]))
			}
		}
		s1 := float32(f16Table[binary.LittleEndian.Uint16(blk)] * x.d)
		s2 := -float32(f16Table[binary.LittleEndian.Uint16(blk[2:])] * x.d)
		for l := range acc {
			acc[l] = fma32(s1, float32(t[l]), acc[l])
		}
		// Lanes 8…15 would add s2·0, which changes no lane: a lane is
		// never −0 (it starts at +0, and x + y is −0 only for −0 + −0).
		for l := 0; l < 8; l++ {
			acc[l] = fma32(s2, float32(mn[l]*x.bs32[l]), acc[l])
		}
	}
	return reduce16(&acc)
}

// dotQ6KInt is the portable integer dot product of a Q6_K row with
// quantized inputs, in the order described at the top of this file.
func dotQ6KInt(w []byte, a []actBlockK) float32 {
	var acc [16]float32
	for b := blocksK(Q6_K, w, a, &acc); b < len(a); b++ { // in assembly where it exists (arm64)
		blk := w[b*q6KBytes : (b+1)*q6KBytes : (b+1)*q6KBytes]
		x := &a[b]
		var t [16]int32
		sc := blk[192:208:208]
		for k := 0; k < 4; k++ {
			// Chunk k is quarters 2(k%2) and 2(k%2)+1 of half k/2: low
			// bits from ql (low or high nibbles), high bits from qh.
			n, odd := k/2, uint(k%2)
			ql := blk[64*n : 64*n+64 : 64*n+64]
			qh := blk[128+32*n : 128+32*n+32 : 128+32*n+32]
			xl := x.q[64*k : 64*k+32 : 64*k+32]
			xh := x.q[64*k+32 : 64*k+64 : 64*k+64]
			sl, sh := 4*odd, 4*odd+2
			for l := 0; l < 8; l++ {
				lo, hi := ql[4*l:4*l+4:4*l+4], ql[32+4*l:32+4*l+4:32+4*l+4]
				h := qh[4*l : 4*l+4 : 4*l+4]
				a, b := xl[4*l:4*l+4:4*l+4], xh[4*l:4*l+4:4*l+4]
				t[l] += int32(int8(sc[4*k+l/4])) * (int32(lo[0]>>sl&0xF|(h[0]>>sl&3)<<4)*int32(a[0]) +
					int32(lo[1]>>sl&0xF|(h[1]>>sl&3)<<4)*int32(a[1]) +
					int32(lo[2]>>sl&0xF|(h[2]>>sl&3)<<4)*int32(a[2]) +
					int32(lo[3]>>sl&0xF|(h[3]>>sl&3)<<4)*int32(a[3]))
				t[8+l] += int32(int8(sc[4*k+2+l/4])) * (int32(hi[0]>>sl&0xF|(h[0]>>sh&3)<<4)*int32(b[0]) +
					int32(hi[1]>>sl&0xF|(h[1]>>sh&3)<<4)*int32(b[1]) +
					int32(hi[2]>>sl&0xF|(h[2]>>sh&3)<<4)*int32(b[2]) +
					int32(hi[3]>>sl&0xF|(h[3]>>sh&3)<<4)*int32(b[3]))
			}
		}
		for j := range t {
			t[j] -= 32 * int32(int8(blk[192+j])) * x.bs16[j]
		}
		s := float32(f16Table[binary.LittleEndian.Uint16(blk[208:])] * x.d)
		for l := range acc {
			acc[l] = fma32(s, float32(t[l]), acc[l])
		}
	}
	return reduce16(&acc)
}
