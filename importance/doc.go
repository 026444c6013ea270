// Package importance decides whether a drafted token is contextually
// important, from the attention it pays to the tokens before it (U+I,
// Sec. III-B and III-C).
//
// # Input
//
// The attention row of the newest position: the attention weights from the
// draft's query to every previous position, taken from the last layer and
// averaged over heads, a []float32 that sums to 1 (U+I eq. 5, the vector
// A_i). The engine captures it during the forward pass that produced the
// draft's logits.
//
// # Rule (U+I eq. 6–7)
//
// The importance threshold adapts to the row:
//
//	θ_imp = max(A) − γ·std(A)
//
// with std the population standard deviation (divide by n; the paper does
// not say, and for rows of hundreds of positions the difference is
// negligible). The token is important when at least k weights lie strictly
// above θ_imp — equivalently, when the k-th largest weight exceeds θ_imp,
// which is how U+I Sec. III-C states it (a_t^{(L²−k+1)} > θ_imp). Counting
// is O(n) and needs no sort.
//
// A peaked row (attention concentrated on a few positions) has a large
// std, so θ_imp sits well below the peak but only the few peaked weights
// clear it: important only if there are at least k of them. A flat row —
// attention collapse, U+I Fig. 2 — has a small std, θ_imp sits just below
// the maximum, and few weights clear it: not important. Larger k or smaller
// γ make the test stricter. The paper evaluates k ∈ {3, 5, 7, 9, 11} and
// γ ∈ {0.5, 1, 1.5}; with γ > 0 the maximum itself always clears θ_imp
// unless the row is constant, which is why k = 1 is trivial.
//
// Rows shorter than k (early positions) cannot have k weights above
// anything: they are not important. A constant row has std = 0 and nothing
// strictly above its maximum: not important.
package importance
