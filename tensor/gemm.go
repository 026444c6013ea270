package tensor

import (
	"sync"
	"unsafe"
)

// Matrix products are computed in tiles: a micro-kernel loads each weight
// once for up to maxT tokens and several rows at a time (block verification
// and cross-session batching are matrix–matrix products). Every output
// element is still one dot product in the fixed order of its type, so a tile
// of any shape, a thread count or a batch gives the bits a single dot
// product gives.

const (
	maxR = 8 // rows in a tile, at most
	maxT = 8 // tokens in a tile, at most
)

// f32TileFn computes out[t·ldo + r] = dotF32(row r of w, token t of x) for
// r < R and t < T; strides ldw, ldx and ldo are in bytes and cols is the
// row length.
type f32TileFn func(w *float32, ldw uintptr, x *float32, ldx uintptr, cols int, out *float32, ldo uintptr)

// f16TileFn is f32TileFn for F16 or BF16 rows (dotF16, dotBF16); ldw is
// in bytes.
type f16TileFn func(w *byte, ldw uintptr, x *float32, ldx uintptr, cols int, out *float32, ldo uintptr)

// qTileFn computes out[t·ldo + r] = dotQuant(row r of w, token t of x) for
// r < R and t < T over nb blocks; strides in bytes.
type qTileFn func(w *byte, ldw uintptr, x *actBlock, ldx uintptr, nb int, out *float32, ldo uintptr)

// pairTileFn is qTileFn over token pairs (actPair): x points at the
// first pair of block 0 and ldx is the stride from a block's pairs to the
// next block's; out[t·ldo + r] for r < R and t < T ((T+1)/2 pairs).
type pairTileFn func(w *byte, ldw uintptr, x *actPair, ldx uintptr, nb int, out *float32, ldo uintptr)

// kernelSet is one level's micro-kernels, indexed [R][T]; rows[T] is the
// tile height used for T tokens (kernels of every smaller R exist too).
type kernelSet struct {
	f32            [maxR + 1][maxT + 1]f32TileFn
	f16, bf16      [maxR + 1][maxT + 1]f16TileFn // nil: F16/BF16 rows one dot at a time
	f16Rows        [maxT + 1]int                 // their heights
	f16MaxT        int                           // the most tokens they take
	f16Whole       bool                          // they take rows of whole 32-element chunks only
	q8, q4         [maxR + 1][maxT + 1]qTileFn
	f32Rows, qRows [maxT + 1]int
	k4, k6         [maxR + 1][maxT + 1]kTileFn // Q4_K and Q6_K tiles
	kRows          [maxT + 1]int               // their heights (0: no K-quant tiles)
	kMaxT          int
	kGroupScales   bool          // the K tiles of 3 or more tokens read their group's scales from its first token (setGroupScales)
	kRowsNarrow    [maxT + 1]int // K tile heights when the inputs fit in L1 (kNarrowBytes); 0: kRows
	maxT           int           // largest T with kernels
	wsum           [5]wsumFn     // wsum[c] covers c·wsumWidth columns
	wsumWidth      int
	quant          func(dst *actBlock, x *float32, nb int, off int32) // quantizeActs, or nil
	quantK         func(dst *actBlockK, x *float32, nb int)           // quantizeActsK, or nil
	swiglu         func(gate, up *float32, n int, coef *[12]float64)  // SwiGLU over a multiple of swigluLanes
	swigluLanes    int

	// Q8_0 and Q4_0 token-pair tiles (AVX-512) for T = 2…pMaxT tokens in
	// groups of pMaxT; pRows[T] are their heights, pRows[1] = qRows[1]
	// (one token keeps q8 and q4). pMaxT = 0: none.
	q8p, q4p [maxR + 1][maxT + 1]pairTileFn
	pRows    [maxT + 1]int
	pMaxT    int

	// Tiles of 16 packed Q8_0 or Q4_0 rows (pack.go) × 1 or 2 tokens
	// (AVX-512); nil: matrices are not packed at this level.
	q8packed, q4packed [3]qTileFn
}

// kTileFn computes out[t·ldo + r] = the K-quant dot of row r of w with
// token t of x for r < R and t < T over nb super-blocks; strides in bytes.
type kTileFn func(w *byte, ldw uintptr, x *actBlockK, ldx uintptr, nb int, out *float32, ldo uintptr)

// wsumFn computes WeightedSum over some columns; stride in bytes.
type wsumFn func(out *float32, a *float32, v *float32, stride uintptr, n int)

// kernelSets holds the assembly kernels per level (nil: portable Go).
var kernelSets [numLevels]*kernelSet

func kernels() *kernelSet { return kernelSets[level] }

// MatVec computes out[r] = Σ_c W[r,c]·x[c] for every row r.
func MatVec(out []float32, w *Matrix, x []float32) { MatMul(out, w, x, 1) }

// MatMul computes, for each of n inputs x_t = x[t*Cols:(t+1)*Cols], the
// product out[t*Rows+r] = Σ_c W[r,c]·x_t[c]. Every output element is computed
// exactly as MatVec (and RowDot) would compute it, so evaluating a block of
// tokens gives the same numbers as evaluating them one at a time.
func MatMul(out []float32, w *Matrix, x []float32, n int) {
	MatMuls([][]float32{out}, []*Matrix{w}, x, n)
}

// MatMuls computes MatMul(outs[i], ws[i], x, n) for every i in one parallel
// pass: the products that share an input (a layer's q, k and v; its gate
// and up projections) wake the threads once and quantize the input once.
func MatMuls(outs [][]float32, ws []*Matrix, x []float32, n int) {
	if len(outs) != len(ws) {
		panic("tensor: MatMuls of mismatched lists")
	}
	var acts actCache
	defer acts.release()
	pr := new(products)
	pr.init(len(ws))
	work := 0
	for i, w := range ws {
		if len(outs[i]) < n*w.Rows || len(x) < n*w.Cols {
			panic("tensor: MatMul buffer too small")
		}
		if n <= 0 || w.Rows == 0 {
			continue
		}
		pr.add(prepare(outs[i], w, x, n, &acts), w.Rows)
		work += w.Rows * w.Cols * n
	}
	if len(pr.ps) == 0 {
		return
	}
	ParallelFor(pr.units[len(pr.units)-1], work, pr.run)
}

// products are the prepared products of one MatMuls call, which run takes
// in units of 4 rows across all of them. Up to three products (a layer's
// q, k and v) live in the struct's own arrays: one allocation per call.
type products struct {
	ps    []product
	rows  []int // rows of ps[i]
	units []int // ps[i] covers units [units[i], units[i+1]) of 4 rows

	psBuf    [3]product
	rowsBuf  [3]int
	unitsBuf [4]int
}

func (pr *products) init(n int) {
	pr.ps, pr.rows, pr.units = pr.psBuf[:0], pr.rowsBuf[:0], pr.unitsBuf[:1]
	if n > len(pr.psBuf) {
		pr.ps, pr.rows, pr.units = make([]product, 0, n), make([]int, 0, n), make([]int, 1, n+1)
	}
}

func (pr *products) add(p product, rows int) {
	pr.ps = append(pr.ps, p)
	pr.rows = append(pr.rows, rows)
	pr.units = append(pr.units, pr.units[len(pr.units)-1]+(rows+3)/4)
}

// run computes units [lo, hi).
func (pr *products) run(lo, hi int) {
	for i, p := range pr.ps {
		a, b := max(lo, pr.units[i]), min(hi, pr.units[i+1])
		if a < b {
			p(4*(a-pr.units[i]), min(pr.rows[i], 4*(b-pr.units[i])))
		}
	}
}

// product computes rows [lo, hi) of one prepared matrix product.
type product func(lo, hi int)

// actCache holds the quantized inputs of the products of one input, per
// weight type (Q8_0 and Q4_0 need different corrections), and their token
// pairs for the pair tiles.
type actCache struct {
	bufs  [2]*[]actBlock
	pairs [2]*pairBuf
	kbuf  *[]actBlockK // the K-quants' inputs
}

// getK returns x (n tokens) quantized for K-quant products
// (quantizeActsK), with the group scales the tiles read (setGroupScales).
func (c *actCache) getK(x []float32, n int) []actBlockK {
	if c.kbuf == nil {
		c.kbuf = actKPool.Get().(*[]actBlockK)
		acts := quantizeActsK(*c.kbuf, x)
		// Only tiles of 3 or more tokens read them: decoding skips this.
		if ks := kernels(); ks != nil && ks.kGroupScales && n >= 3 {
			nb := len(acts) / n
			for t0 := 0; t0 < n; t0 += ks.kMaxT {
				setGroupScales(acts, n, nb, t0)
			}
		}
		*c.kbuf = acts
	}
	return *c.kbuf
}

// getPairs returns get(t, x) for n tokens of nb blocks laid out in pairs
// (pairActs).
func (c *actCache) getPairs(t DType, x []float32, n, nb int) []actPair {
	i := 0
	if t == Q4_0 {
		i = 1
	}
	if c.pairs[i] == nil {
		acts := c.get(t, x)
		buf := pairPool.Get().(*pairBuf)
		pairActs(buf.resize(nb*((n+1)/2)), acts, n, nb)
		c.pairs[i] = buf
	}
	return c.pairs[i].p
}

func (c *actCache) get(t DType, x []float32) []actBlock {
	i := 0
	if t == Q4_0 {
		i = 1
	}
	if c.bufs[i] == nil {
		buf := actPool.Get().(*[]actBlock)
		*buf = quantizeActs(*buf, x, t)
		c.bufs[i] = buf
	}
	return *c.bufs[i]
}

func (c *actCache) release() {
	for _, b := range c.bufs {
		if b != nil {
			actPool.Put(b)
		}
	}
	for _, b := range c.pairs {
		if b != nil {
			pairPool.Put(b)
		}
	}
	if c.kbuf != nil {
		actKPool.Put(c.kbuf)
	}
}

// prepare returns the row-range function of out = W·x for n inputs.
func prepare(out []float32, w *Matrix, x []float32, n int, acts *actCache) product {
	rows, cols := w.Rows, w.Cols
	switch w.Type {
	case F32:
		return productF32(out, w, x, n)
	case F16, BF16:
		if ks := kernels(); ks != nil && ks.f16Rows[1] > 0 && cols > 0 && (!ks.f16Whole || cols%32 == 0) {
			return productHalf(out, w, x, n, ks)
		}
	case Q8_0, Q4_0:
		return productQuant(out, w, x[:n*cols], n, acts)
	case Q5_0:
		return productQ5(out, w, x[:n*cols], n, acts) // q5.go
	case Q4_K, Q6_K:
		return productQuantK(out, w, acts.getK(x[:n*cols], n), n)
	}
	return func(lo, hi int) {
		for r := lo; r < hi; r++ {
			for t := 0; t < n; t++ {
				out[t*rows+r] = w.RowDot(r, x[t*cols:(t+1)*cols])
			}
		}
	}
}

// l2Rows is how many rows of rowBytes bytes a thread works through for one
// token group before the next: a block that stays in its L2 cache while the
// groups take turns.
func l2Rows(rowBytes int) int { return max(4, (256<<10)/max(1, rowBytes)) }

// forTiles calls kernel(r, R, t, T) over the tiles that cover rows [lo, hi)
// and tokens [0, n): blocks of rows that fit in L2, token groups of up to
// groupT, tiles of rows[T] rows and one smaller tile for the rest.
//
// Up to interleaveGroups groups (a verification block, a batch of up to 64
// positions) run every group on a tile of rows before the next tile, so
// the rows just read are reused from L1 while the next tile's rows stream
// in and the arithmetic overlaps the memory traffic (an 8-token F32 block
// at 110M: +15–19%; 32 sessions at L = 1: +8%); longer runs take the
// groups in turn over an L2 block, so each group's inputs stay in L1. Every output is one kernel call over the whole
// row either way, so the order does not change any result.
func forTiles(lo, hi, n, rowBytes, groupT int, rows *[maxT + 1]int, kernel func(r, R, t, T int)) {
	if n > groupT && n <= interleaveGroups*groupT {
		// Only the last group may be short: the tile height fits both.
		R := min(rows[groupT], rows[(n-1)%groupT+1])
		for r := lo; r < hi; r += R {
			for t := 0; t < n; t += groupT {
				kernel(r, min(R, hi-r), t, min(groupT, n-t))
			}
		}
		return
	}
	blk := l2Rows(rowBytes)
	for b := lo; b < hi; b += blk {
		be := min(hi, b+blk)
		for t := 0; t < n; t += groupT {
			T := min(groupT, n-t)
			R := rows[T]
			r := b
			for ; r+R <= be; r += R {
				kernel(r, R, t, T)
			}
			if r < be {
				kernel(r, be-r, t, T)
			}
		}
	}
}

// interleaveGroups is the most token groups forTiles runs tile by tile.
const interleaveGroups = 16

func productF32(out []float32, w *Matrix, x []float32, n int) product {
	rows, cols := w.Rows, w.Cols
	ks := kernels()
	if ks == nil || cols == 0 {
		return func(lo, hi int) {
			for r := lo; r < hi; r++ {
				wr := w.F32[r*cols : (r+1)*cols]
				for t := 0; t < n; t++ {
					out[t*rows+r] = dotF32(wr, x[t*cols:(t+1)*cols])
				}
			}
		}
	}
	ldw, ldo := uintptr(4*cols), uintptr(4*rows)
	return func(lo, hi int) {
		forTiles(lo, hi, n, 4*cols, ks.maxT, &ks.f32Rows, func(r, R, t, T int) {
			ks.f32[R][T](&w.F32[r*cols], ldw, &x[t*cols], ldw, cols, &out[t*rows+r], ldo)
		})
	}
}

// productHalf is the product of F16 or BF16 rows over the tiles.
func productHalf(out []float32, w *Matrix, x []float32, n int, ks *kernelSet) product {
	rows, cols := w.Rows, w.Cols
	tiles := &ks.f16
	if w.Type == BF16 {
		tiles = &ks.bf16
	}
	ldw, ldx, ldo := uintptr(2*cols), uintptr(4*cols), uintptr(4*rows)
	return func(lo, hi int) {
		forTiles(lo, hi, n, 2*cols, ks.f16MaxT, &ks.f16Rows, func(r, R, t, T int) {
			tiles[R][T](&w.Data[r*2*cols], ldw, &x[t*cols], ldx, cols, &out[t*rows+r], ldo)
		})
	}
}

// kNarrowBytes is the most input bytes (all tokens' quantized blocks: the
// groups forTiles runs tile by tile) for which the K-quant products take
// the one-row tiles of kRowsNarrow.
var kNarrowBytes uintptr = 16 << 10

// actKPool recycles the K-quant products' quantized inputs.
var actKPool = sync.Pool{New: func() any { return new([]actBlockK) }}

// productQuantK is productQuant for Q4_K and Q6_K rows (kquant_int.go).
func productQuantK(out []float32, w *Matrix, acts []actBlockK, n int) product {
	rows, cols := w.Rows, w.Cols
	nb := cols / QKK
	rb := w.rowBytes
	ks := kernels()
	dot := dotQ4KInt
	var tiles *[maxR + 1][maxT + 1]kTileFn
	if w.Type == Q6_K {
		dot = dotQ6KInt
	}
	if ks != nil && ks.kRows[1] > 0 {
		tiles = &ks.k4
		if w.Type == Q6_K {
			tiles = &ks.k6
		}
	}
	if tiles == nil || nb == 0 {
		return func(lo, hi int) {
			for r := lo; r < hi; r++ {
				wr := w.Data[r*rb : (r+1)*rb]
				for t := 0; t < n; t++ {
					out[t*rows+r] = dot(wr, acts[t*nb:(t+1)*nb])
				}
			}
		}
	}
	ldw, ldx, ldo := uintptr(rb), uintptr(nb)*unsafe.Sizeof(actBlockK{}), uintptr(4*rows)
	heights := &ks.kRows
	if ks.kRowsNarrow[1] > 0 && uintptr(n)*ldx <= kNarrowBytes {
		heights = &ks.kRowsNarrow
	}
	return func(lo, hi int) {
		forTiles(lo, hi, n, rb, ks.kMaxT, heights, func(r, R, t, T int) {
			tiles[R][T](&w.Data[r*rb], ldw, &acts[t*nb], ldx, nb, &out[t*rows+r], ldo)
		})
	}
}

// actPool recycles the quantized inputs of the products.
var actPool = sync.Pool{New: func() any { return new([]actBlock) }}

func productQuant(out []float32, w *Matrix, x []float32, n int, cache *actCache) product {
	rows, cols := w.Rows, w.Cols
	nb := cols / QK
	rb := w.rowBytes
	ks := kernels()
	acts := cache.get(w.Type, x)
	if ks == nil {
		return func(lo, hi int) {
			for r := lo; r < hi; r++ {
				wr := w.Data[r*rb : (r+1)*rb]
				for t := 0; t < n; t++ {
					out[t*rows+r] = dotQuant(w.Type, wr, acts[t*nb:(t+1)*nb])
				}
			}
		}
	}
	tiles, ptiles := &ks.q8, &ks.q8packed
	if w.Type == Q4_0 {
		tiles, ptiles = &ks.q4, &ks.q4packed
	}
	ldx, ldo := uintptr(nb)*unsafe.Sizeof(actBlock{}), uintptr(4*rows)
	if packing && ptiles[1] != nil && nb > 0 {
		if packed := w.packedRows(); packed != nil {
			var tail product
			if w.Rows%packRows != 0 {
				tail = productQuantRows(out, w, x, n, cache, ks, tiles, ldx, ldo)
			}
			return productPacked(out, packed, w, acts, n, ptiles, ldx, ldo, tail)
		}
	}
	return productQuantRows(out, w, x, n, cache, ks, tiles, ldx, ldo)
}

// productQuantRows is productQuant over the row-major tiles.
func productQuantRows(out []float32, w *Matrix, x []float32, n int, cache *actCache, ks *kernelSet, tiles *[maxR + 1][maxT + 1]qTileFn, ldx, ldo uintptr) product {
	rows, rb := w.Rows, w.rowBytes
	nb := w.Cols / QK
	ldw := uintptr(rb)
	acts := cache.get(w.Type, x)
	if ks.pMaxT > 0 && n > 1 && nb > 0 {
		// Token groups of pMaxT (even) in pairs: group t starts at pair
		// t/2. A group of one token (the last of an odd n) runs the
		// one-token tile.
		pairs := cache.getPairs(w.Type, x, n, nb)
		ptiles := &ks.q8p
		if w.Type == Q4_0 {
			ptiles = &ks.q4p
		}
		ldp := uintptr((n+1)/2) * unsafe.Sizeof(actPair{})
		return func(lo, hi int) {
			forTiles(lo, hi, n, rb, ks.pMaxT, &ks.pRows, func(r, R, t, T int) {
				if T == 1 {
					tiles[R][1](&w.Data[r*rb], ldw, &acts[t*nb], ldx, nb, &out[t*rows+r], ldo)
				} else {
					ptiles[R][T](&w.Data[r*rb], ldw, &pairs[t/2], ldp, nb, &out[t*rows+r], ldo)
				}
			})
		}
	}
	return func(lo, hi int) {
		forTiles(lo, hi, n, rb, ks.maxT, &ks.qRows, func(r, R, t, T int) {
			tiles[R][T](&w.Data[r*rb], ldw, &acts[t*nb], ldx, nb, &out[t*rows+r], ldo)
		})
	}
}

//go:generate go run gen_kernels.go
//go:generate go run gen_arm64.go
