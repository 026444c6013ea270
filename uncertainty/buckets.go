package uncertainty

import (
	"math"
	"sync"
)

// The fast path of Perturbation.Measure.
//
// For θ > 0 write δ_i = z_max − z_i ≥ 0 and e_i = exp(−δ_i/θ), so that
// softmax(z/θ)_i = e_i/Z with Z = Σ_i e_i. Inverse-CDF sampling with a
// uniform U returns the draft d exactly when
//
//	A ≤ U·Z < A + e_d,  A = Σ_{i<d} e_i,  B = Σ_{i>d} e_i,  Z = A + e_d + B,
//
// i.e. when  U·(e_d + B) ≥ (1−U)·A  and  U·B < (1−U)·(A + e_d).  Both
// conditions are monotone in A and B, so bounds A ∈ [A⁻, A⁺], B ∈ [B⁻, B⁺]
// usually settle them; only when they do not is a bound made exact.
//
// The bounds come from bucketing the logits once per token: bucket j of a
// side (ids below or above d) holds the n_j tokens with δ ∈ [j·w, (j+1)·w),
// so with r = exp(−w/θ)
//
//	n_j·r^{j+1} < Σ_{i ∈ bucket j} e_i ≤ n_j·r^j,
//
// one exponential per temperature and one multiplication per bucket. If the
// decision is open, the bucket with the widest bound is summed exactly
// (exp of its members, stored contiguously) and the test repeated; with
// every bucket exact the test is the exact one. The decision is therefore
// the one a full softmax would make; the bounds only decide how much of the
// softmax has to be computed. Bounds of unrefined buckets are widened by a
// relative 1e-10 to cover the rounding of r^j and of the bucket index.
//
// Buckets cover δ ∈ [0, D) with D = min(δ_max, 40·θmax); tokens beyond D
// (weight below e^{−40} of the argmax's at every θ ≤ θmax) share one last
// bucket per side, bounded by [0, n·r^nb].

const widen = 1e-10

type buckets struct {
	nb     int     // buckets per side covering [0, D); index nb is the overflow bucket
	w      float64 // bucket width in δ
	top    float64 // z_max
	deltaD float64 // δ of the draft
	draft  int
	argmax int

	// Groups g = side·(nb+1) + j: side 0 holds ids < draft, side 1 ids > draft.
	cnt      []int32   // tokens per group
	start    []int32   // members of g are member[start[g]:start[g+1]]
	member   []float32 // logits grouped by g
	key      []uint16  // group of each token (scratch)
	nonempty []int32   // groups with cnt > 0, in increasing order
	nA       int       // nonempty[:nA] are on side A (ids < draft)
	jj       []int32   // bucket index j of each nonempty group
	cntF     []float64 // its token count
	overflow []int     // indices k of the overflow groups (j = nb)

	// member is filled lazily by scatter, on the first exact bucket sum.
	logits    []float32
	scattered bool

	// Per-temperature state, indexed like nonempty.
	pows    []float64
	lo, hi  []float64
	refined []bool
}

var bucketPool = sync.Pool{New: func() any { return new(buckets) }}

func getBuckets() *buckets { return bucketPool.Get().(*buckets) }
func putBuckets(b *buckets) {
	b.logits = nil // do not keep the caller's logits alive
	bucketPool.Put(b)
}

// nbFor is the number of buckets per side for a vocabulary of v tokens.
func nbFor(v int) int {
	return min(256, max(8, v/128))
}

// prepare buckets the logits for draft. It reports false when the fast path
// does not apply (non-finite maximum or draft logit).
func (b *buckets) prepare(logits []float32, draft int, thetaMax float64) bool {
	v := len(logits)
	ninf := float32(math.Inf(-1))
	// Pass 1: maximum (lowest index among ties, NaN skipped, as in
	// sampling.Argmax) and smallest finite logit.
	am := 0
	zmax := ninf
	zmin := float32(math.Inf(1))
	for i, z := range logits {
		if z > zmax {
			am, zmax = i, z
		}
		if z < zmin && z > ninf {
			zmin = z
		}
	}
	zd := logits[draft]
	if math.IsInf(float64(zmax), 0) || math.IsNaN(float64(zd)) || math.IsInf(float64(zd), 0) {
		return false
	}
	b.draft, b.argmax = draft, am
	top := float64(zmax)
	b.top = top
	b.deltaD = top - float64(zd)

	nb := nbFor(v)
	d := min(top-float64(zmin), 40*thetaMax)
	if !(d > 0) {
		d = 1
	}
	b.nb, b.w = nb, d/float64(nb)
	inv := float64(nb) / d
	groups := 2 * (nb + 1)
	b.cnt = resize(b.cnt, groups)
	clear(b.cnt)
	b.start = resize(b.start, groups+1)
	b.key = resize(b.key, v)

	// Pass 2: the group of every token. −Inf and NaN logits have weight 0
	// at every θ > 0 and are left out, as is the draft (its weight is
	// computed exactly); they get the sentinel key.
	sentinel := uint16(groups)
	b.key[draft] = sentinel
	b.keys(logits[:draft], b.key[:draft], 0, inv, d, sentinel)
	b.keys(logits[draft+1:], b.key[draft+1:], nb+1, inv, d, sentinel)

	off := int32(0)
	b.nonempty = b.nonempty[:0]
	for g := range groups {
		b.start[g] = off
		off += b.cnt[g]
		if b.cnt[g] > 0 {
			b.nonempty = append(b.nonempty, int32(g))
		}
	}
	b.start[groups] = off
	b.logits, b.scattered = logits, false
	k := len(b.nonempty)
	b.jj = resize(b.jj, k)
	b.cntF = resize(b.cntF, k)
	b.nA = 0
	b.overflow = b.overflow[:0]
	maxJ := 0
	for i, g32 := range b.nonempty {
		g := int(g32)
		j := g
		if g > nb {
			j = g - nb - 1
		} else {
			b.nA++
		}
		b.jj[i] = int32(j)
		b.cntF[i] = float64(b.cnt[g])
		if j == nb {
			b.overflow = append(b.overflow, i)
		}
		maxJ = max(maxJ, j)
	}
	b.member = resize(b.member, int(off))
	b.pows = resize(b.pows, maxJ+1)
	b.lo = resize(b.lo, k)
	b.hi = resize(b.hi, k)
	b.refined = resize(b.refined, k)
	return true
}

// keys assigns the groups of one side (offset 0 or nb+1) and counts them.
func (b *buckets) keys(logits []float32, key []uint16, offset int, inv, d float64, sentinel uint16) {
	nb, top := b.nb, b.top
	ninf := float32(math.Inf(-1))
	for i, z := range logits {
		if !(z > ninf) {
			key[i] = sentinel
			continue
		}
		delta := top - float64(z)
		j := int(delta * inv)
		if j >= nb {
			j = nb - 1
			if delta > d {
				j = nb
			}
		}
		g := j + offset
		key[i] = uint16(g)
		b.cnt[g]++
	}
}

// sampleIsDraft reports whether inverse-CDF sampling from softmax(z/θ) with
// uniform u returns the draft.
func (b *buckets) sampleIsDraft(theta, u float64) bool {
	if theta == 0 {
		return b.argmax == b.draft // greedy, as sampling.Softmax at T = 0
	}
	inv := 1 / theta
	ed := math.Exp(-b.deltaD * inv)
	// Sums over the unrefined buckets (bounds, widened at use) and over the
	// refined ones (exact), for side A (ids < d) and side B (ids > d).
	aLo, aHi, bLo, bHi, open := b.bound(inv)
	var aEx, bEx float64
	const lw, hw = 1 - widen, 1 + widen
	uc := 1 - u
	for open > 0 {
		al, ah := aLo*lw+aEx, aHi*hw+aEx
		bl, bh := bLo*lw+bEx, bHi*hw+bEx
		// cond1: U·(e_d + B) ≥ (1−U)·A;  cond2: U·B < (1−U)·(A + e_d).
		if u*(ed+bh) < uc*al || u*bl >= uc*(ah+ed) {
			return false // one condition surely fails
		}
		if u*(ed+bl) >= uc*ah && u*bh < uc*(al+ed) {
			return true // both surely hold
		}
		// Refine the widest open bucket.
		best, gap := -1, -1.0
		for k := range b.nonempty {
			if !b.refined[k] && b.hi[k]-b.lo[k] > gap {
				best, gap = k, b.hi[k]-b.lo[k]
			}
		}
		s := b.exact(best, inv)
		if b.hi[best] > 0 {
			open--
		}
		b.lo[best], b.hi[best] = s, s
		b.refined[best] = true
		// Recompute the sums rather than update them, so that rounding in
		// a long run of refinements cannot push a bound past the truth.
		aLo, aHi, bLo, bHi, aEx, bEx = 0, 0, 0, 0, 0, 0
		for k := range b.nonempty {
			switch {
			case k < b.nA && b.refined[k]:
				aEx += b.lo[k]
			case k < b.nA:
				aLo += b.lo[k]
				aHi += b.hi[k]
			case b.refined[k]:
				bEx += b.lo[k]
			default:
				bLo += b.lo[k]
				bHi += b.hi[k]
			}
		}
	}
	// Every bucket with nonzero weight is exact (buckets whose bound
	// underflowed to 0 weigh below 1e-300): the exact test.
	return u*(ed+bEx) >= uc*aEx && u*bEx < uc*(aEx+ed)
}

// bound sets the bounds lo[k] ≤ Σ_{i ∈ group k} e_i ≤ hi[k] of every
// nonempty group at temperature 1/inv (before widening), marks them
// unrefined, and returns the side sums A⁻, A⁺, B⁻, B⁺ and the number of
// groups with hi > 0.
func (b *buckets) bound(inv float64) (aLo, aHi, bLo, bHi float64, open int) {
	r := math.Exp(-b.w * inv)
	pows := b.pows
	pw := 1.0
	for j := range pows {
		pows[j] = pw
		pw *= r
	}
	clear(b.refined)
	lo, hi := b.lo, b.hi
	for k, j := range b.jj {
		h := b.cntF[k] * pows[j]
		hi[k], lo[k] = h, h*r
	}
	// The overflow buckets (j = nb, at most the last group of each side)
	// have no upper end in δ: their lower bound is 0.
	for _, k := range b.overflow {
		lo[k] = 0
	}
	for k := range b.nA {
		aLo += lo[k]
		aHi += hi[k]
	}
	for k := b.nA; k < len(hi); k++ {
		bLo += lo[k]
		bHi += hi[k]
	}
	for _, h := range hi {
		if h > 0 {
			open++
		}
	}
	return aLo, aHi, bLo, bHi, open
}

// exact returns Σ_{i ∈ group k} e_i at temperature 1/inv, computed as
// sampling.Softmax computes its numerators: exp((z_i − z_max)·inv).
func (b *buckets) exact(k int, inv float64) float64 {
	if !b.scattered {
		b.scatter()
	}
	g := int(b.nonempty[k])
	s := 0.0
	for _, z := range b.member[b.start[g]:b.start[g+1]] {
		s += math.Exp((float64(z) - b.top) * inv)
	}
	return s
}

// scatter is pass 3, run the first time a bucket has to be summed exactly:
// it copies the logits into member, grouped by bucket.
func (b *buckets) scatter() {
	groups := 2 * (b.nb + 1)
	sentinel := uint16(groups)
	cur := b.cnt // reuse the counts as write cursors (prepare clears them)
	for g := range groups {
		cur[g] = b.start[g]
	}
	for i, g := range b.key[:len(b.logits)] {
		if g != sentinel {
			b.member[cur[g]] = b.logits[i]
			cur[g]++
		}
	}
	b.scattered = true
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
