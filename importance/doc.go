// Package importance decides whether a drafted token is contextually
// important, from the attention it pays to the tokens before it (U+I,
// Sec. III-B and III-C).
//
// # Input
//
// The attention row of the newest position: the attention weights from the
// draft's query to every previous position, taken from the last layer and
// averaged over heads (U+I eq. 5, the vector A_i). The engine captures it
// during the forward pass that produced the draft's logits; hlm drops the
// draft's weight on itself and does not renormalise, so the row sums to a
// little less than 1 — the rule below is unchanged by a common scale.
//
// # Rule (U+I eq. 6–7)
//
// The importance threshold adapts to the row:
//
//	θ_imp = max(A) − γ·std(A)
//
// with std the population standard deviation (divide by n; the paper does
// not say, and for rows of hundreds of positions the difference is
// negligible). The token is important when at least k weights of the row
// lie strictly above θ_imp — equivalently, when the row's k-th largest
// weight exceeds θ_imp (Sec. IV: "at least k of its attention weights
// exceeding the importance threshold"). Counting is O(n) and needs no sort.
//
// # The paper's other reading
//
// Sec. III-C states the test differently: flatten and sort all L² entries
// of the attention matrix A(t) — every query's row, not only the draft's —
// and compare the k-th largest entry a_t^{(L²−k+1)} with θ_imp(t) of the
// draft's row. That is not equivalent, and it degenerates: in a causal
// matrix row j attends to j positions, so its largest weight is at least
// 1/j, and rows 1…k give k entries of at least 1/k. The k-th largest entry
// of the matrix is therefore at least 1/k, while θ_imp ≤ max(A_i): every
// draft whose row is flat enough that max(A_i) < 1/k — the attention
// collapse the test is meant to filter out — passes, whatever the row's
// shape, and long flat rows pass for every k of the paper's grid.
// ImportantMatrix implements that reading for comparison;
// TestMatrixReadingDegenerates shows a collapsed row that the row reading
// rejects and the matrix reading accepts. hlm's policies use the row
// reading.
//
// What the row test sees: θ_imp moves with the row's maximum and spread,
// so scaling or shifting the row changes nothing — only its shape counts,
// namely how many weights lie within γ standard deviations of the largest.
// A row with at least k positions standing out together near the top is
// important; a row with fewer than k outstanding positions over a flat
// rest is not, however small or large its weights. Flatness alone does
// not decide: a near-uniform row with noise has many weights within γ·std
// of its maximum and can pass. Larger k or smaller γ make the test
// stricter. The paper evaluates k ∈ {3, 5, 7, 9, 11} and
// γ ∈ {0.5, 1, 1.5}; with γ > 0 the maximum itself always clears θ_imp
// unless the row is constant, which is why k = 1 is trivial.
//
// Rows shorter than k (early positions) cannot have k weights above
// anything: they are not important. A constant row has std = 0 and nothing
// strictly above its maximum: not important.
package importance
