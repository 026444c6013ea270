package codec

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/hlmproject/hlm/speculative"
)

// OutputDist returns the exact distribution of the token CU-HLM commits in
// one verified round with this codec, averaged over the draft (CU-HLM
// eq. 3 and eq. 17): the device draws d ~ x, sends the top k of x plus d
// (the draft's index and probability are always sent, Sec. IV-B), the
// server reconstructs x̂⁽ᵈ⁾ by eq. 15 from the quantized values and verifies
// d against the target y with speculative.Verify's rule:
//
//	P(v) = x_v·a_v + Σ_d x_d(1 − a_d)·q⁽ᵈ⁾_v,
//	a_d = min(1, y_d/x̂⁽ᵈ⁾_d),  q⁽ᵈ⁾ = norm((y − x̂⁽ᵈ⁾)⁺)  (y when that is zero).
//
// The reconstruction depends on the draft: a draft outside the top k is
// sent with its own (quantized) probability, and the uniform fill of
// eq. 15 is then spread over one token fewer. Using the top-k
// reconstruction x̂ for every token — accepting a tail token v against the
// fill instead of x_v — overstates the deviation (1.8–2.4× on the
// TinyStories-656K pair); eq. 17's Bias(x, x̂, y) accepts with the
// unquantized x and resamples from the top-k q, and equals ‖P − y‖₁ when no
// tail token can be drafted and the values are sent exactly.
//
// With a fixed K every draft sees the same k. With K == 0 (online k) each
// draft d gets k(d) of eq. 24 at the given predicted rejection probability
// beta: the smallest k with N(k) ≤ θ·den(x_d), den as in UBar, read off the
// tail-deviation curve N (equal to what EncodeWithBeta chooses up to
// rounding in the last bits of N). beta is the round's a·u + b; how u
// itself would have varied with d is not modelled (the round's u is given).
//
// Method, O(V log V). Let x̃ be the quantized values, T_k the top k, S_k =
// Σ_{T_k} x̃ and ρ = (1 − S_k − x̃_d)/(V − k − 1) the fill a tail draft d
// leaves. Its residual mass is Z_d = Σ_{T_k}(y − x̃)⁺ + (y_d − x̃_d)⁺ +
// G_k(ρ) − (y_d − ρ)⁺ with G_k(ρ) = Σ_{i∉T_k}(y_i − ρ)⁺, and its share
// c_d = x_d(1 − a_d)/Z_d of the resampled mass adds c_d(y_v − x̃_v)⁺ to the
// tokens of T_k and c_d(y_v − ρ)⁺ to the others (x̃_d − … at d itself). The
// drafts inside T_k share one reconstruction and act as one such term with
// the fill (1 − S_k)/(V − k). Both G_k(ρ) for every term and the sums
// Σ c(y_v − ρ)⁺ over the terms whose tail contains v are dominance sums,
// done offline with Fenwick trees. Reconstructions that renormalize (the
// quantized sum reaches 1, or no token is left to fill) are summed
// directly in O(k) per draft. outputDistNaive (in the tests) is the O(V²) reference.
func (c TopK) OutputDist(x, y []float64, beta float64) ([]float64, error) {
	ks, order, err := c.draftKs(x, y, beta)
	if err != nil {
		return nil, err
	}
	v := len(x)
	e := exactTopK{x: x, y: y, order: order, out: make([]float64, v), rank: make([]int, v), xq: make([]float64, v)}
	for r, id := range order {
		e.rank[id] = r
	}
	for i := range x {
		q, err := probDecode(probEncode(x[i], c.ProbBits), c.ProbBits)
		if err != nil {
			return nil, err
		}
		e.xq[i] = q
	}
	// Prefix sums in rank order, accumulated in topKRecon's order.
	e.S = make([]float64, v+1)
	e.A = make([]float64, v+1)
	e.Ytail = make([]float64, v+1)
	for r, id := range order {
		e.S[r+1] = e.S[r] + e.xq[id]
		e.A[r+1] = e.A[r] + math.Max(y[id]-e.xq[id], 0)
	}
	for r := v - 1; r >= 0; r-- {
		e.Ytail[r] = e.Ytail[r+1] + y[order[r]]
	}
	e.rangeY = make([]float64, v+1)
	if err := e.drafts(ks); err != nil {
		return nil, err
	}
	e.finish()
	return e.out, nil
}

// exactTopK is the state of one OutputDist computation.
type exactTopK struct {
	x, y    []float64
	order   []int32
	rank    []int     // rank[id] = position of id in order
	xq      []float64 // quantized x
	S, A    []float64 // prefix sums over rank: Σ x̃, Σ (y − x̃)⁺
	Ytail   []float64 // Ytail[k] = Σ_{rank ≥ k} y
	out     []float64
	terms   []fillTerm // residual shares with a uniform fill
	renorms []renormTerm
	rangeY  []float64 // rangeY[k]: weight of y_v for every v of rank ≥ k
	wY      float64   // weight of y itself (zero residuals)
}

// fillTerm is a residual share c·norm((y − x̂)⁺) of a reconstruction that is
// x̃ on the top k (and at self, when self ≥ 0) and ρ elsewhere.
type fillTerm struct {
	k     int
	rho   float64
	w     float64 // rejection weight x_d(1 − a_d); c = w/Z
	zPart float64 // Z without G_k(ρ)
	self  int32   // the appended draft (−1: none)
	c     float64
}

// renormTerm is a residual share c·norm((y − x̂)⁺) of a renormalized
// reconstruction: x̃/σ on the top k (and at self), zero elsewhere.
type renormTerm struct {
	k     int
	sigma float64
	w     float64
	zPart float64 // Z without F_k(σ)
	self  int32
	c     float64
}

// drafts adds the acceptance terms and collects the residual terms.
func (e *exactTopK) drafts(ks []int) error {
	v := len(e.x)
	inTopW := make([]float64, v+1) // per k: rejection weight of the drafts inside the top
	for d, xd := range e.x {
		if !(xd > 0) {
			continue
		}
		k := ks[d]
		if e.rank[d] < k {
			r0d := e.xq[d]
			if e.renormTop(k) {
				r0d /= e.S[k]
			}
			a := speculative.AcceptRatio(r0d, e.y[d])
			e.out[d] += xd * a
			inTopW[k] += xd * (1 - a)
			continue
		}
		sigma := e.S[k] + e.xq[d]
		if sigma >= 1 || v-k-1 == 0 {
			if err := e.renormTail(k, d, sigma); err != nil {
				return err
			}
			continue
		}
		rho := (1 - sigma) / float64(v-k-1)
		a := speculative.AcceptRatio(e.xq[d], e.y[d])
		e.out[d] += xd * a
		if w := xd * (1 - a); w > 0 {
			e.terms = append(e.terms, fillTerm{k: k, rho: rho, w: w, self: int32(d),
				zPart: e.A[k] + math.Max(e.y[d]-e.xq[d], 0) - math.Max(e.y[d]-rho, 0)})
		}
	}
	for k, w := range inTopW {
		if !(w > 0) {
			continue
		}
		if e.renormTop(k) {
			if err := e.renormShare(k, w, e.S[k], -1); err != nil {
				return err
			}
			continue
		}
		e.terms = append(e.terms, fillTerm{k: k, rho: (1 - e.S[k]) / float64(v-k), w: w, self: -1, zPart: e.A[k]})
	}
	return nil
}

// renormTop reports that the top-k reconstruction renormalizes (quantized
// sum ≥ 1 or nothing left to fill), as topKRecon does.
func (e *exactTopK) renormTop(k int) bool { return e.S[k] >= 1 || k == len(e.x) }

// renormTail handles a tail draft whose reconstruction renormalizes: x̃/σ
// on the top k and d, zero elsewhere.
func (e *exactTopK) renormTail(k, d int, sigma float64) error {
	if !(sigma > 0) {
		return fmt.Errorf("%w: all sent probabilities quantize to zero", ErrInput)
	}
	a := speculative.AcceptRatio(e.xq[d]/sigma, e.y[d])
	e.out[d] += e.x[d] * a
	if w := e.x[d] * (1 - a); w > 0 {
		return e.renormShare(k, w, sigma, d)
	}
	return nil
}

// renormShare records the share w·norm((y − x̂)⁺) for x̂ = x̃/σ on the top k
// (and at self), zero elsewhere. With F_k(σ) = Σ_{T_k}(y_v − x̃_v/σ)⁺ its
// mass is F_k(σ) + Σ_{rank ≥ k} y (less what self takes).
func (e *exactTopK) renormShare(k int, w, sigma float64, self int) error {
	if !(sigma > 0) {
		return fmt.Errorf("%w: all sent probabilities quantize to zero", ErrInput)
	}
	z := e.Ytail[k]
	if self >= 0 {
		z += math.Max(e.y[self]-e.xq[self]/sigma, 0) - e.y[self]
	}
	e.renorms = append(e.renorms, renormTerm{k: k, sigma: sigma, w: w, self: int32(self), zPart: z})
	return nil
}

// finish resolves Z of the fill terms and adds their residual shares.
func (e *exactTopK) finish() {
	e.finishRenorm()
	v := len(e.x)
	order, y := e.order, e.y
	// G_k(ρ) = Σ_{rank ≥ k} (y − ρ)⁺: insert tokens by decreasing rank into
	// a Fenwick tree over the y order; answer terms by decreasing k.
	ySorted := make([]int32, v)
	for i := range ySorted {
		ySorted[i] = int32(i)
	}
	slices.SortFunc(ySorted, func(a, b int32) int { return cmpFloat(y[a], y[b], a, b) })
	yPos := make([]int, v)
	yv := make([]float64, v)
	for p, id := range ySorted {
		yPos[id] = p
		yv[p] = y[id]
	}
	byK := make([]int, len(e.terms))
	for i := range byK {
		byK[i] = i
	}
	slices.SortFunc(byK, func(a, b int) int { return e.terms[b].k - e.terms[a].k })
	cnt, sum := newFenwick(v), newFenwick(v)
	r := v
	for _, ti := range byK {
		t := &e.terms[ti]
		for r > t.k {
			r--
			p := yPos[order[r]]
			cnt.add(p, 1)
			sum.add(p, y[order[r]])
		}
		first := sort.Search(v, func(i int) bool { return yv[i] > t.rho }) // y > ρ
		g := (sum.total() - sum.prefix(first)) - (cnt.total()-cnt.prefix(first))*t.rho
		if z := t.zPart + g; z > 0 {
			t.c = t.w / z
		} else {
			e.wY += t.w
		}
	}
	// Shares: c(y_v − x̃_v)⁺ where v is in the term's top (rank < k), c(y_v − ρ)⁺
	// where it is not. Terms enter the second tree once rank ≥ k.
	ctop := make([]float64, v+2) // ctop[k] = Σ c of terms with that k
	for _, t := range e.terms {
		ctop[t.k] += t.c
		if t.self >= 0 { // x̃ at the appended draft, not ρ
			d := t.self
			e.out[d] += t.c * (math.Max(y[d]-e.xq[d], 0) - math.Max(y[d]-t.rho, 0))
		}
	}
	for k := v; k >= 0; k-- { // suffix: Σ c of terms with k' > rank
		ctop[k] += ctop[k+1]
	}
	slices.SortFunc(byK, func(a, b int) int { return e.terms[a].k - e.terms[b].k })
	rhos := make([]float64, 0, len(e.terms))
	for _, t := range e.terms {
		rhos = append(rhos, t.rho)
	}
	slices.Sort(rhos)
	rhos = slices.Compact(rhos)
	cs, crs := newFenwick(len(rhos)), newFenwick(len(rhos))
	next := 0
	ry := 0.0
	for rk, id := range order {
		for next < len(byK) && e.terms[byK[next]].k <= rk {
			t := e.terms[byK[next]]
			p, _ := slices.BinarySearch(rhos, t.rho)
			cs.add(p, t.c)
			crs.add(p, t.c*t.rho)
			next++
		}
		ry += e.rangeY[rk]
		yi := y[id]
		out := ctop[rk+1]*math.Max(yi-e.xq[id], 0) + (ry+e.wY)*yi
		if j := sort.SearchFloat64s(rhos, yi); j > 0 { // terms with ρ < y
			out += yi*cs.prefix(j) - crs.prefix(j)
		}
		e.out[id] += out
	}
}

// finishRenorm resolves the renormalized shares. With t_v = x̃_v/y_v,
// (y_v − x̃_v/σ)⁺ > 0 iff t_v < σ, so F_k(σ) = Σ y_v − (1/σ)Σ x̃_v over the
// tokens of rank < k with t_v < σ: tokens enter a Fenwick tree over t by
// increasing rank, terms are answered by increasing k. The shares of the
// top entries, Σ c(y_v − x̃_v/σ) over the terms with k > rank(v) and σ > t_v,
// come from a second tree over σ filled by decreasing k.
func (e *exactTopK) finishRenorm() {
	if len(e.renorms) == 0 {
		return
	}
	v := len(e.x)
	order, y, xq := e.order, e.y, e.xq
	ratio := func(id int32) float64 {
		if y[id] > 0 {
			return xq[id] / y[id]
		}
		return math.Inf(1)
	}
	ts := make([]float64, v)
	for i := range ts {
		ts[i] = ratio(int32(i))
	}
	tSorted := slices.Clone(ts)
	slices.Sort(tSorted)
	tSorted = slices.Compact(tSorted)
	ys, xs := newFenwick(len(tSorted)), newFenwick(len(tSorted))
	byK := make([]int, len(e.renorms))
	for i := range byK {
		byK[i] = i
	}
	slices.SortFunc(byK, func(a, b int) int { return e.renorms[a].k - e.renorms[b].k })
	r := 0
	for _, ti := range byK {
		t := &e.renorms[ti]
		for r < t.k {
			id := order[r]
			p, _ := slices.BinarySearch(tSorted, ts[id])
			ys.add(p, y[id])
			xs.add(p, xq[id])
			r++
		}
		j := sort.SearchFloat64s(tSorted, t.sigma) // t < σ
		f := ys.prefix(j) - xs.prefix(j)/t.sigma
		if z := t.zPart + max(f, 0); z > 0 {
			t.c = t.w / z
		} else {
			e.wY += t.w
		}
	}
	sigmas := make([]float64, 0, len(e.renorms))
	for _, t := range e.renorms {
		sigmas = append(sigmas, t.sigma)
		e.rangeY[t.k] += t.c     // y_v for every v of rank ≥ k …
		if d := t.self; d >= 0 { // … but x̃/σ at the appended draft
			e.out[d] += t.c * (math.Max(y[d]-xq[d]/t.sigma, 0) - y[d])
		}
	}
	slices.Sort(sigmas)
	sigmas = slices.Compact(sigmas)
	cs, cis := newFenwick(len(sigmas)), newFenwick(len(sigmas))
	next := len(byK) - 1
	for rk := v - 1; rk >= 0; rk-- {
		for next >= 0 && e.renorms[byK[next]].k > rk {
			t := e.renorms[byK[next]]
			p, _ := slices.BinarySearch(sigmas, t.sigma)
			cs.add(p, t.c)
			cis.add(p, t.c/t.sigma)
			next--
		}
		id := order[rk]
		j := sort.Search(len(sigmas), func(i int) bool { return sigmas[i] > ts[id] }) // σ > t_v
		if c := cs.total() - cs.prefix(j); c != 0 {
			e.out[id] += c*y[id] - (cis.total()-cis.prefix(j))*xq[id]
		}
	}
}

// cmpFloat orders by value, then id.
func cmpFloat(a, b float64, i, j int32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return int(i - j)
}

// fenwick is a binary indexed tree of float64 sums.
type fenwick struct {
	t   []float64
	all float64
}

func newFenwick(n int) *fenwick { return &fenwick{t: make([]float64, n+1)} }

func (f *fenwick) add(i int, v float64) {
	f.all += v
	for i++; i < len(f.t); i += i & -i {
		f.t[i] += v
	}
}

// prefix is the sum of entries [0, i).
func (f *fenwick) prefix(i int) float64 {
	s := 0.0
	for ; i > 0; i -= i & -i {
		s += f.t[i]
	}
	return s
}

func (f *fenwick) total() float64 { return f.all }

// draftKs validates the inputs and returns k(d) for every token and the
// rank order of x.
func (c TopK) draftKs(x, y []float64, beta float64) ([]int, []int32, error) {
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	if _, err := checkDist(x, -1); err != nil {
		return nil, nil, fmt.Errorf("x: %w", err)
	}
	if _, err := checkDist(y, -1); err != nil || len(y) != len(x) {
		return nil, nil, fmt.Errorf("%w: y is not a distribution over %d tokens (%v)", ErrInput, len(x), err)
	}
	v := len(x)
	order := rankOrder(x)
	ks := make([]int, v)
	if c.K > 0 {
		for d := range ks {
			ks[d] = min(c.K, v)
		}
		return ks, order, nil
	}
	beta, _, err := checkOnline(x, 0, beta, c.eta())
	if err != nil {
		return nil, nil, err
	}
	n := tailDeviation(sorted(x, order), v)                   // non-increasing, n[v] = 0
	l1, lb := Softplus(-1, c.eta()), Softplus(-beta, c.eta()) // onlineDenominator's terms
	for d := range ks {
		lim := c.Theta * ((1-x[d])*l1 + x[d]*lb)
		ks[d] = 1 + sort.Search(v, func(i int) bool { return n[i+1] <= lim })
	}
	return ks, order, nil
}
