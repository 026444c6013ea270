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
	kGroupScales   bool                        // the K tiles of 3 or more tokens read their group's scales from its first token (setGroupScales)
	kRowsNarrow    [maxT + 1]int               // K tile heights when the inputs fit in L1 (kNarrowBytes); 0: kRows
	kNarrow        uintptr                     // the inputs' limit for kRowsNarrow (0: kNarrowBytes)
	k4Wide         [maxR + 1][maxT + 1]kTileFn // Q4_K tiles when they do not
	k4WideRows     [maxT + 1]int               // their heights (0: k4 and kRows)
	maxT           int                         // largest T with kernels
	wsum           [5]wsumFn                   // wsum[c] covers c·wsumWidth columns
	wsumF16        [5]wsumF16Fn                // as wsum over rows of halves (WeightedSumF16)
	wsumWidth      int
	quant          func(dst *actBlock, x *float32, nb int, off int32) // quantizeActs, or nil
	quantK         func(dst *actBlockK, x *float32, nb int)           // quantizeActsK, or nil
	swiglu         func(gate, up *float32, n int, tab *expTable)      // SwiGLU over a multiple of swigluLanes
	swigluLanes    int
	geglu, gelu    func(gate, up *float32, n int, tab *expTable) // GeGLU, GELU over a multiple of 4 (gelu ignores up)

	// Q8_0 and Q4_0 token-pair tiles (AVX-512) for T = 2…pMaxT tokens in
	// groups of pMaxT; pRows[T] are their heights, pRows[1] = qRows[1]
	// (one token keeps q8 and q4). pMaxT = 0: none.
	q8p, q4p [maxR + 1][maxT + 1]pairTileFn
	pRows    [maxT + 1]int
	pMaxT    int

	// Tiles of 16 packed Q8_0, Q4_0 or Q5_0 rows (pack.go) × 1 or 2
	// tokens (AVX-512); nil: matrices are not packed at this level.
	q8packed, q4packed, q5packed [3]qTileFn

	// Tiles of K-quant rows packed in groups (pack.go, packKGroup), which the
	// Q4_K and Q6_K matrices of rows longer than kNarrowBytes of input
	// take; nil: K-quant matrices are not packed at this level.
	kPacked *packedKTiles

	// kCopy: the row-major tiles read the Q4_K and Q6_K rows of a mapped
	// file from a copy in memory of their own (pack.go, layoutRows).
	kCopy bool

	// A level whose one-token F32, F16 and BF16 tiles are stream tiles
	// (zen4.go) runs the products of one token with rows longer than
	// streamF32Cols (F32) or streamF16Cols (F16, BF16) on wide's tiles
	// instead; nil: no such limit.
	wide                         *kernelSet
	streamF32Cols, streamF16Cols int
}

// wideFor is the set that runs a product of n tokens over rows of cols
// F32 (or, with half, F16/BF16) elements: wide's beyond the stream tiles'
// row limit for one token, else k (nil: portable Go).
func (k *kernelSet) wideFor(n, cols int, half bool) *kernelSet {
	if k == nil || n != 1 || k.wide == nil {
		return k
	}
	limit := k.streamF32Cols
	if half {
		limit = k.streamF16Cols
	}
	if cols > limit {
		return k.wide
	}
	return k
}

// kTileFn computes out[t·ldo + r] = the K-quant dot of row r of w with
// token t of x for r < R and t < T over nb super-blocks; strides in bytes.
type kTileFn func(w *byte, ldw uintptr, x *actBlockK, ldx uintptr, nb int, out *float32, ldo uintptr)

// wsumFn computes WeightedSumAdd over some columns; stride in bytes.
type wsumFn func(out *float32, a *float32, v *float32, stride uintptr, n int)

// wsumF16Fn computes WeightedSumAddF16 over some columns; stride in bytes.
type wsumF16Fn func(out *float32, a *float32, v *uint16, stride uintptr, n int)

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
// Once warm it allocates nothing: the prepared products and the quantized
// inputs live in a recycled products value.
func MatMuls(outs [][]float32, ws []*Matrix, x []float32, n int) {
	if len(outs) != len(ws) {
		panic("tensor: MatMuls of mismatched lists")
	}
	pr := productsPool.Get().(*products)
	pr.ps, pr.units = pr.ps[:0], append(pr.units[:0], 0)
	pr.acts.reset()
	work := 0
	for i, w := range ws {
		if len(outs[i]) < n*w.Rows || len(x) < n*w.Cols {
			panic("tensor: MatMul buffer too small")
		}
		if n <= 0 || w.Rows == 0 {
			continue
		}
		pr.ps = append(pr.ps, product{})
		pr.ps[len(pr.ps)-1].prepare(outs[i], w, x[:n*w.Cols], n, &pr.acts)
		pr.units = append(pr.units, pr.units[len(pr.units)-1]+(w.Rows+3)/4)
		work += w.Rows * w.Cols * n
	}
	if len(pr.ps) > 0 {
		ParallelLoop(pr.units[len(pr.units)-1], work, pr)
	}
	clear(pr.ps) // the pool holds no outputs, weights or inputs
	productsPool.Put(pr)
}

// products are the prepared products of one MatMuls call, which Run takes
// in units of 4 rows across all of them, and the storage of their quantized
// inputs; productsPool recycles them with their storage.
type products struct {
	ps    []product
	units []int // ps[i] covers units [units[i], units[i+1]) of 4 rows
	acts  actCache
}

var productsPool = sync.Pool{New: func() any { return new(products) }}

// Run computes units [lo, hi).
func (pr *products) Run(lo, hi int) {
	for i := range pr.ps {
		a, b := max(lo, pr.units[i]), min(hi, pr.units[i+1])
		if a < b {
			p := &pr.ps[i]
			p.run(4*(a-pr.units[i]), min(p.w.Rows, 4*(b-pr.units[i])))
		}
	}
}

// actCache holds the quantized inputs of the products of one input, per
// weight type (Q8_0 and Q4_0 need different corrections), their token
// pairs for the pair tiles, and the K-quants' inputs, each made on first
// use; reset forgets them and keeps the storage for the next input.
type actCache struct {
	acts  [2][]actBlock // Q8_0, Q4_0
	pairs [2]pairBuf
	k     []actBlockK
	// which of them hold the current input
	hasActs, hasPairs [2]bool
	hasK              bool
}

func (c *actCache) reset() { c.hasActs, c.hasPairs, c.hasK = [2]bool{}, [2]bool{}, false }

// actSlot is the actCache slot of weight type t (Q8_0 or Q4_0).
func actSlot(t DType) int {
	if t == Q4_0 {
		return 1
	}
	return 0
}

// get returns x quantized for products with weights of type t.
func (c *actCache) get(t DType, x []float32) []actBlock {
	i := actSlot(t)
	if !c.hasActs[i] {
		c.acts[i] = quantizeActs(c.acts[i], x, t)
		c.hasActs[i] = true
	}
	return c.acts[i]
}

// getPairs returns get(t, x) for n tokens of nb blocks laid out in pairs
// (pairActs).
func (c *actCache) getPairs(t DType, x []float32, n, nb int) []actPair {
	i := actSlot(t)
	if !c.hasPairs[i] {
		pairActs(c.pairs[i].resize(nb*((n+1)/2)), c.get(t, x), n, nb)
		c.hasPairs[i] = true
	}
	return c.pairs[i].p
}

// getK returns x (n tokens) quantized for K-quant products
// (quantizeActsK), with the group scales the tiles read (setGroupScales).
func (c *actCache) getK(x []float32, n int) []actBlockK {
	if !c.hasK {
		c.k = quantizeActsK(c.k, x)
		// Only tiles of 3 or more tokens read them: decoding skips this.
		if ks := kernels(); ks != nil && ks.kGroupScales && n >= 3 {
			nb := len(c.k) / n
			for t0 := 0; t0 < n; t0 += ks.kMaxT {
				setGroupScales(c.k, n, nb, t0)
			}
		}
		c.hasK = true
	}
	return c.k
}

// A product is one matrix product out = W·x of n tokens made ready to
// run: the operands and how to compute a range of its rows. Computing it
// needs no allocation: run dispatches on the weight type to the tiles of
// the level (ks), or to one dot product per output (ks == nil).
type product struct {
	w   *Matrix
	out []float32
	x   []float32 // the inputs: n rows of w.Cols
	n   int
	ks  *kernelSet // the tiles; nil: the portable dot products

	acts    []actBlock                   // x quantized (Q8_0, Q4_0)
	pairs   []actPair                    // acts in token pairs (nil: the one-token tiles)
	packed  []byte                       // the rows in memory of their own (pack.go), in layout
	moving  bool                         // they are on their way (packedRows): read the groups made so far (forMade)
	layout  copyLayout                   // the layout of packed, if the product reads it (packed != nil or moving)
	actsK   []actBlockK                  // x quantized (Q4_K, Q6_K)
	kRows   *[maxT + 1]int               // the K tiles' heights
	kTiles  *[maxR + 1][maxT + 1]kTileFn // the K tiles
	kPacked *packedKTiles                // the tiles of packed (packKGroup) K rows, if packed
	q5      *q5Set                       // the Q5_0 tiles (q5.go)
}

// prepare sets p up to compute out = W·x for n inputs x, quantizing x for
// W's type (once per input: acts is shared by the products of x).
func (p *product) prepare(out []float32, w *Matrix, x []float32, n int, acts *actCache) {
	*p = product{w: w, out: out, x: x, n: n}
	cols := w.Cols
	ks := kernels()
	switch w.Type {
	case F32:
		ks = ks.wideFor(n, cols, false)
		if ks != nil && cols > 0 {
			p.ks = ks
		}
	case F16, BF16:
		ks = ks.wideFor(n, cols, true)
		if ks != nil && ks.f16Rows[1] > 0 && cols > 0 && (!ks.f16Whole || cols%32 == 0) {
			p.ks = ks
		}
	case Q8_0, Q4_0:
		p.acts = acts.get(w.Type, x)
		if ks == nil {
			return
		}
		p.ks = ks
		nb := cols / QK
		if ks.readsPacked(w.Type) && nb > 0 {
			p.readCopy(layoutBlocks)
			if p.packed != nil && w.Rows%packRows == 0 {
				return // no rows for the row-major tiles
			}
		}
		if ks.pMaxT > 0 && n > 1 && nb > 0 {
			p.pairs = acts.getPairs(w.Type, x, n, nb)
		}
	case Q5_0:
		// The inputs of a Q8_0 product, shared with the Q8_0 matrices of
		// the same input (q5.go).
		p.acts = acts.get(Q8_0, x)
		if ts := q5Sets[level]; ks != nil && ts != nil && cols/QK > 0 {
			p.ks, p.q5 = ks, ts
			if ks.readsPacked(Q5_0) {
				p.readCopy(layoutBlocks)
				if p.packed != nil && w.Rows%packRows == 0 {
					return // no rows for the row-major tiles
				}
			}
			if ts.pMaxT > 0 && n > 1 {
				p.pairs = acts.getPairs(Q8_0, x, n, cols/QK)
			}
		}
	case Q4_K, Q6_K:
		p.actsK = acts.getK(x, n)
		if ks != nil && ks.kRows[1] > 0 && cols/QKK > 0 {
			p.ks = ks
			p.kRows, p.kTiles = &ks.kRows, &ks.k4
			if w.Type == Q6_K {
				p.kTiles = &ks.k6
			}
			switch {
			case ks.kRowsNarrow[1] > 0 && uintptr(n*(cols/QKK))*unsafe.Sizeof(actBlockK{}) <= ks.narrowK():
				p.kRows = &ks.kRowsNarrow
			case w.Type == Q4_K && ks.k4WideRows[1] > 0:
				p.kRows, p.kTiles = &ks.k4WideRows, &ks.k4Wide
			}
			switch {
			case !packing:
			case ks.kPacked != nil && uintptr(cols/QKK)*unsafe.Sizeof(actBlockK{}) > kNarrowBytes:
				// Rows whose one-token input is wider than kNarrowBytes,
				// for any number of tokens, so that the matrix keeps one
				// copy.
				if p.readCopy(layoutKGroups) {
					p.kPacked = ks.kPacked
				}
			case ks.kCopy:
				p.readCopy(layoutRows)
			}
		}
	}
}

// readCopy sets p to read its matrix's rows from their copy in layout l
// (packedRows) if they are copied so, and reports whether they are.
func (p *product) readCopy(l copyLayout) bool {
	if p.packed, p.moving = p.w.packedRows(l); p.packed != nil || p.moving {
		p.layout = l
		return true
	}
	return false
}

// run computes rows [lo, hi).
func (p *product) run(lo, hi int) {
	switch {
	case p.ks == nil:
		p.dots(lo, hi)
	case p.layout == layoutKGroups:
		p.runPackedK(lo, hi)
	case p.layout == layoutBlocks:
		p.runPacked(lo, hi)
	case p.layout == layoutRows:
		p.runCopiedK(lo, hi)
	default:
		p.tiles(lo, hi)
	}
}

// dots computes rows [lo, hi) one dot product per output: the portable
// code (on arm64 the dot products are in assembly), and the types without
// tiles at this level.
func (p *product) dots(lo, hi int) {
	w, x, out, n := p.w, p.x, p.out, p.n
	rows, cols := w.Rows, w.Cols
	switch w.Type {
	case F32:
		for r := lo; r < hi; r++ {
			wr := w.F32[r*cols : (r+1)*cols]
			for t := 0; t < n; t++ {
				out[t*rows+r] = dotF32(wr, x[t*cols:(t+1)*cols])
			}
		}
	case Q8_0, Q4_0:
		nb := cols / QK
		for r := lo; r < hi; r++ {
			wr := w.row(r)
			for t := 0; t < n; t++ {
				out[t*rows+r] = dotQuant(w.Type, wr, p.acts[t*nb:(t+1)*nb])
			}
		}
	case Q5_0:
		nb := cols / QK
		for r := lo; r < hi; r++ {
			wr := w.row(r)
			for t := 0; t < n; t++ {
				out[t*rows+r] = dotQ5(wr, p.acts[t*nb:(t+1)*nb])
			}
		}
	case Q4_K, Q6_K:
		nb := cols / QKK
		dot := dotQ4KInt
		if w.Type == Q6_K {
			dot = dotQ6KInt
		}
		for r := lo; r < hi; r++ {
			wr := w.row(r)
			for t := 0; t < n; t++ {
				out[t*rows+r] = dot(wr, p.actsK[t*nb:(t+1)*nb])
			}
		}
	default:
		for r := lo; r < hi; r++ {
			for t := 0; t < n; t++ {
				out[t*rows+r] = w.RowDot(r, x[t*cols:(t+1)*cols])
			}
		}
	}
}

// tiles computes rows [lo, hi) with the level's tiles (forTiles).
func (p *product) tiles(lo, hi int) {
	w, x, out, n, ks := p.w, p.x, p.out, p.n, p.ks
	rows, cols, rb := w.Rows, w.Cols, w.rowBytes
	ldo := uintptr(4 * rows)
	switch w.Type {
	case F32:
		ldw := uintptr(4 * cols)
		forTiles(lo, hi, n, 4*cols, ks.maxT, &ks.f32Rows, func(r, R, t, T int) {
			ks.f32[R][T](&w.F32[r*cols], ldw, &x[t*cols], ldw, cols, &out[t*rows+r], ldo)
		})
	case F16, BF16:
		tiles := &ks.f16
		if w.Type == BF16 {
			tiles = &ks.bf16
		}
		ldw, ldx := uintptr(2*cols), uintptr(4*cols)
		forTiles(lo, hi, n, 2*cols, ks.f16MaxT, &ks.f16Rows, func(r, R, t, T int) {
			tiles[R][T](&w.Data[r*2*cols], ldw, &x[t*cols], ldx, cols, &out[t*rows+r], ldo)
		})
	case Q8_0, Q4_0:
		nb, acts := cols/QK, p.acts
		tiles := &ks.q8
		if w.Type == Q4_0 {
			tiles = &ks.q4
		}
		ldw, ldx := uintptr(rb), uintptr(nb)*unsafe.Sizeof(actBlock{})
		if p.pairs != nil {
			ptiles := &ks.q8p
			if w.Type == Q4_0 {
				ptiles = &ks.q4p
			}
			p.pairTiles(lo, hi, tiles, ptiles, ks.pMaxT, &ks.pRows)
			return
		}
		forTiles(lo, hi, n, rb, ks.maxT, &ks.qRows, func(r, R, t, T int) {
			tiles[R][T](&w.Data[r*rb], ldw, &acts[t*nb], ldx, nb, &out[t*rows+r], ldo)
		})
	case Q5_0:
		nb, acts, ts := cols/QK, p.acts, p.q5
		ldw, ldx := uintptr(rb), uintptr(nb)*unsafe.Sizeof(actBlock{})
		if p.pairs != nil {
			p.pairTiles(lo, hi, &ts.tiles, &ts.pairs, ts.pMaxT, &ts.pRows)
			return
		}
		forTiles(lo, hi, n, rb, ts.maxT, &ts.rows, func(r, R, t, T int) {
			ts.tiles[R][T](&w.Data[r*rb], ldw, &acts[t*nb], ldx, nb, &out[t*rows+r], ldo)
		})
	case Q4_K, Q6_K:
		p.kTilesAt(w.Data[lo*rb:], lo, hi)
	}
}

// kTilesAt computes rows [lo, hi) of a Q4_K or Q6_K product with the
// row-major tiles, reading row r at data[(r-lo)·rowBytes:]: from Data, or
// from the copy of its rows (runCopiedK).
func (p *product) kTilesAt(data []byte, lo, hi int) {
	w, out, n, acts, tiles := p.w, p.out, p.n, p.actsK, p.kTiles
	rows, rb, nb := w.Rows, w.rowBytes, w.Cols/QKK
	ldw, ldx, ldo := uintptr(rb), uintptr(nb)*unsafe.Sizeof(actBlockK{}), uintptr(4*rows)
	forTiles(lo, hi, n, rb, p.ks.kMaxT, p.kRows, func(r, R, t, T int) {
		tiles[R][T](&data[(r-lo)*rb], ldw, &acts[t*nb], ldx, nb, &out[t*rows+r], ldo)
	})
}

// pairTiles computes rows [lo, hi) of a Q8_0, Q4_0 or Q5_0 product over
// its inputs in token pairs: token groups of pMaxT (even), group t starting
// at pair t/2, with the pair tiles ptiles; a group of one token (the last
// of an odd n) runs the one-token tile of tiles.
func (p *product) pairTiles(lo, hi int, tiles *[maxR + 1][maxT + 1]qTileFn, ptiles *[maxR + 1][maxT + 1]pairTileFn, pMaxT int, pRows *[maxT + 1]int) {
	w, out, n, acts, pairs := p.w, p.out, p.n, p.acts, p.pairs
	rows, rb, nb := w.Rows, w.rowBytes, w.Cols/QK
	ldw, ldx, ldo := uintptr(rb), uintptr(nb)*unsafe.Sizeof(actBlock{}), uintptr(4*rows)
	ldp := uintptr((n+1)/2) * unsafe.Sizeof(actPair{})
	forTiles(lo, hi, n, rb, pMaxT, pRows, func(r, R, t, T int) {
		if T == 1 {
			tiles[R][1](&w.Data[r*rb], ldw, &acts[t*nb], ldx, nb, &out[t*rows+r], ldo)
		} else {
			ptiles[R][T](&w.Data[r*rb], ldw, &pairs[t/2], ldp, nb, &out[t*rows+r], ldo)
		}
	})
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

// kNarrowBytes is the most input bytes (all tokens' quantized blocks: the
// groups forTiles runs tile by tile) for which the K-quant products take
// the one-row tiles of kRowsNarrow, unless the level sets its own
// (kernelSet.kNarrow); and the one-token input beyond which avx512-zen4
// packs K-quant rows (pack.go, packKGroup).
var kNarrowBytes uintptr = 16 << 10

// narrowK is the inputs' limit for the one-row K tiles of kRowsNarrow.
func (ks *kernelSet) narrowK() uintptr {
	if ks.kNarrow > 0 {
		return ks.kNarrow
	}
	return kNarrowBytes
}

//go:generate go run gen_kernels.go
//go:generate go run gen_arm64.go
