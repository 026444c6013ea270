package codec

import (
	"math"
	"math/big"
	"math/bits"
)

// binom holds C(n, k) exactly and moves to another (n', k') by whichever is
// cheaper: multiplying by the ratio of factorials, or recomputing. A move
// collects its factors (integers <= n) into machine words, multiplies the
// value once by their product, then divides exactly by the odd parts of the
// divisor words, four per pass over the number (four independent borrow
// chains keep the multiplier busy), and finally shifts out the power of
// two. A move costs about min(|Δn| + |Δk| + |Δ(n−k)|, 2·min(k', n'−k'))
// factors.
type binom struct {
	n, k  int
	valid bool     // v == C(n, k) with 0 <= k <= n
	v, t  *big.Int // value and multiplication scratch
	p, q  *big.Int // product of the numerator words and its scratch
	w     big.Int  // one-word multiplier
	num   []uint   // numerator words
	den   []uint   // odd divisor words
	accN  uint     // numerator word being filled
	accD  uint     // divisor word being filled
	shift uint     // power of two of the divisor
}

func newBinom() *binom {
	return &binom{v: new(big.Int), t: new(big.Int), p: new(big.Int), q: new(big.Int), accN: 1, accD: 1}
}

// value returns C(n, k) (0 outside 0 <= k <= n). Owned by b.
func (b *binom) value() *big.Int {
	if !b.valid {
		return big.NewInt(0)
	}
	return b.v
}

// moveTo sets b to C(n, k).
func (b *binom) moveTo(n, k int) {
	if k < 0 || k > n {
		b.n, b.k, b.valid = n, k, false
		return
	}
	kk := min(k, n-k)
	if b.valid && abs(n-b.n)+abs(k-b.k)+abs((n-k)-(b.n-b.k)) <= 2*kk {
		b.step(n, k)
		return
	}
	b.v.SetInt64(1)
	b.mulRange(n-kk, n)
	b.divRange(0, kk)
	b.apply()
	b.n, b.k, b.valid = n, k, true
}

// step multiplies by C(n, k)/C(b.n, b.k) =
// [n!/b.n!]·[b.k!/k!]·[(b.n−b.k)!/(n−k)!].
func (b *binom) step(n, k int) {
	m0, m1 := b.n-b.k, n-k
	if n > b.n {
		b.mulRange(b.n, n)
	} else {
		b.divRange(n, b.n)
	}
	if k < b.k {
		b.mulRange(k, b.k)
	} else {
		b.divRange(b.k, k)
	}
	if m1 < m0 {
		b.mulRange(m1, m0)
	} else {
		b.divRange(m0, m1)
	}
	b.apply()
	b.n, b.k = n, k
}

// mulRange queues multiplication by (lo+1)(lo+2)···hi.
func (b *binom) mulRange(lo, hi int) {
	acc := b.accN
	for f := uint(lo + 1); f <= uint(hi); f++ {
		if h, l := bits.Mul(acc, f); h == 0 {
			acc = l
		} else {
			b.num = append(b.num, acc)
			acc = f
		}
	}
	b.accN = acc
}

// divRange queues division by (lo+1)(lo+2)···hi.
func (b *binom) divRange(lo, hi int) {
	acc := b.accD
	for f := uint(max(lo+1, 2)); f <= uint(hi); f++ {
		z := uint(bits.TrailingZeros(f))
		b.shift += z
		o := f >> z
		if h, l := bits.Mul(acc, o); h == 0 {
			acc = l
		} else {
			b.den = append(b.den, acc)
			acc = o
		}
	}
	b.accD = acc
}

// apply performs the queued multiplications, then the exact divisions:
// the value times the numerator is a multiple of the divisor, so every
// partial quotient is an integer.
func (b *binom) apply() {
	if b.accN != 1 {
		b.num = append(b.num, b.accN)
		b.accN = 1
	}
	if b.accD != 1 {
		b.den = append(b.den, b.accD)
		b.accD = 1
	}
	switch len(b.num) {
	case 0:
	case 1:
		b.w.SetUint64(uint64(b.num[0]))
		b.t.Mul(b.v, &b.w)
		b.v, b.t = b.t, b.v
	default:
		b.p.SetUint64(uint64(b.num[0]))
		for _, f := range b.num[1:] {
			b.w.SetUint64(uint64(f))
			b.q.Mul(b.p, &b.w)
			b.p, b.q = b.q, b.p
		}
		b.t.Mul(b.v, b.p)
		b.v, b.t = b.t, b.v
	}
	b.num = b.num[:0]
	for len(b.den) > 0 {
		var d [4]uint
		n := copy(d[:], b.den)
		for i := n; i < 4; i++ {
			d[i] = 1
		}
		z := b.v.Bits()
		divExactOdd4(z, d)
		b.v.SetBits(z)
		b.den = b.den[n:]
	}
	b.den = b.den[:0]
	if b.shift > 0 {
		b.v.Rsh(b.v, b.shift)
		b.shift = 0
	}
}

// oddInverse returns d⁻¹ mod 2^W for odd d.
func oddInverse(d uint) uint {
	inv := d // correct to 3 bits: d·d ≡ 1 (mod 8) for odd d
	for i := 0; i < 5; i++ {
		inv *= 2 - d*inv // Newton: doubles the correct bits
	}
	return inv
}

// divExactOdd4 divides the little-endian number z in place by the four odd
// words d[0..3] (1 for unused), whose product must divide it. Each quotient
// digit is t·d⁻¹ mod 2^W from the low end, with the high half of q·d carried
// as a borrow (exact division, as in GMP's divexact_1). The four divisions
// run as four stages of one loop: their borrow chains are independent, so
// they overlap in the CPU.
func divExactOdd4(z []big.Word, d [4]uint) {
	i0, i1, i2, i3 := oddInverse(d[0]), oddInverse(d[1]), oddInverse(d[2]), oddInverse(d[3])
	var b0, b1, b2, b3 uint
	for i, x := range z {
		q := uint(x)
		q, b0 = divExactStep(q, b0, d[0], i0)
		q, b1 = divExactStep(q, b1, d[1], i1)
		q, b2 = divExactStep(q, b2, d[2], i2)
		q, b3 = divExactStep(q, b3, d[3], i3)
		z[i] = big.Word(q)
	}
}

// divExactStep is one digit of exact division: x − borrow = q·d (mod 2^W).
func divExactStep(x, borrow, d, inv uint) (q, next uint) {
	t := x - borrow
	q = t * inv
	hi, _ := bits.Mul(q, d)
	if x < borrow {
		hi++
	}
	return q, hi
}

func abs(a int) int {
	if a < 0 {
		return -a
	}
	return a
}

// log2Binom returns log2 C(n, k) in floating point (0 <= k <= n).
func log2Binom(n, k int) float64 {
	a, _ := math.Lgamma(float64(n) + 1)
	b, _ := math.Lgamma(float64(k) + 1)
	c, _ := math.Lgamma(float64(n-k) + 1)
	return (a - b - c) / math.Ln2
}

// lnBig returns ln(r) for r > 0.
func lnBig(r *big.Int) float64 {
	l := r.BitLen()
	if l <= 64 {
		return math.Log(float64(r.Uint64()))
	}
	top := new(big.Int).Rsh(r, uint(l-64)).Uint64()
	return math.Log(float64(top)) + float64(l-64)*math.Ln2
}
