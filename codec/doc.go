// Package codec is what crosses the uplink: each draft distribution the
// device sends, as exact bytes, with a bit count that is the bytes sent.
//
// A distribution is a []float64 of length V indexed by token id. A Codec
// turns one into an Encoded{Payload, Bits, Recon, Support}:
// len(Payload) == (Bits+7)/8, and Recon is bit for bit the distribution
// Decode(Payload, V) returns on the server, a dense length-V vector summing
// to 1 (within 1e-12). The device verifies and samples against Recon, so
// device and server never disagree about a probability.
//
// Papers: CU-HLM (Oh et al., top-k compression, eq. 15–24, Prop. 1–2),
// SQS (Bhattacharjee et al., K-SQS and C-SQS, eq. 1–9, Algorithms 1–2,
// Theorem 2), Q-S (Zhang et al., lattice quantize-then-sample, eq. 5–6).
//
// # Conventions
//
// Bits are written MSB-first (BitWriter, BitReader): the first field starts
// at the most significant bit of byte 0 and the last byte is padded with
// zero bits. No codec has a header beyond what is listed below: V and the
// codec parameters are agreed at session open. Decoders are strict: the
// payload must be exactly (Bits+7)/8 bytes with zero padding, every id
// below V and sent once, every index below its count, every value code a
// finite non-negative number. Hostile payloads return errors wrapping
// ErrFormat; V outside [1, MaxVocab = 2^22] returns ErrParam; index
// arithmetic is bounded by MaxRankWork (ErrLimit).
//
// Rank order: "the k largest" always means the first k tokens by
// descending probability, ties by ascending id.
//
// Probability values (ProbBits) are IEEE binary32, IEEE binary16, or E5M3,
// an unsigned 8-bit minifloat for probabilities (5 exponent bits, bias 31,
// 3 mantissa bits, subnormals, range 2^-33 to 1.875, no Inf/NaN; relative
// rounding error at most 1/16 above 2^-30). Rounding is to nearest, ties to even,
// except that a positive probability never becomes 0 (it becomes the
// smallest subnormal), so a sampled draft never has reconstructed
// probability 0. TestE5M3Exhaustive and TestBinary16Exhaustive check every
// code.
//
// # Full (U-HLM; CU-HLM eq. 4)
//
//	IndexBits false: value[b]·V in id order                       Bits = V·b
//	IndexBits true:  (id[⌈log2 V⌉] value[b])·V in rank order       Bits = V(⌈log2 V⌉ + b)
//
// With IndexBits the pairs are sorted by descending value code, ties by
// ascending id. Recon = decoded values / their sum. V = 32,000 at b = 8 with
// ids is 736,000 bits = 92,000 bytes, the 92 kB of CU-HLM Sec. I.
//
// # TopK (CU-HLM eq. 15)
//
// Entries (id[⌈log2 V⌉] value[b]): the top k in rank order, then the draft
// token if it is not among them (the draft is always sent, Sec. IV-B).
//
//	fixed k (K > 0):        appended[1] · entries     Bits = 1 + n(⌈log2 V⌉ + b)
//	per-message k (K == 0): n−1[⌈log2 V⌉] · entries   Bits = ⌈log2 V⌉ + n(⌈log2 V⌉ + b)
//
// with n = k or k+1. The header (1 bit, or ⌈log2 V⌉ bits when k varies)
// and the appended draft are the only bits beyond the paper's
// k(b_prob + b_index). Recon keeps the sent values and spreads
// 1 − Σsent uniformly over the V − n others (eq. 15); if quantization made
// Σsent >= 1, or n = V, the sent values are renormalized instead.
//
// k is fixed, offline or online. OfflineK is eq. 21: the smallest k with
// mean_t U_TV(k, t) <= θ, where UTV is eq. 20,
// U_TV(k) = Σ_{i>k}|x_i − x̂_i| / D_TV(x, y), a bound on the TV distance
// between the true and the top-k resampling distributions (Prop. 1).
// OnlineK is eq. 24: the smallest k with UBar(k) <= θ, where UBar is eq. 23,
// Ū_TV(k) = Σ_{i>k}|x_i − x̂_i| / ((1 − x_d)ℓ(−1) + x_d ℓ(−β)), with
// ℓ(z) = ln(1 + e^{ηz})/η (Softplus) and β = a·u + b the predicted
// rejection probability of the draft. The paper does not give η;
// DefaultEta is 10 (see its documentation for why). The shared numerator is non-increasing in k (proof in ksel.go), so
// both searches are thresholds. TestPropositions checks Prop. 1 and 2 on
// thousands of random pairs at every k.
//
// # Lattice (Q-S eq. 5–6)
//
// Quantize maps a probability vector of dimension K to counts b_i >= 0 with
// Σb = ℓ by Reznik's algorithm (SQS Algorithm 2, lines 6–17; ties to the
// lowest index); TV(q, b/ℓ) <= K/(4ℓ). The point b is sent as its
// lexicographic rank among the C(ℓ+K−1, K−1) compositions of ℓ into K parts
// ((0,…,0,ℓ) first), in ⌈log2 C(ℓ+K−1, K−1)⌉ bits; CompositionRank and
// CompositionUnrank compute it (worked example: ℓ = 2, K = 3 in
// TestCompositionRankWorkedExample). Lattice{L} does this over the whole
// vocabulary (K = V):
//
//	composition index[⌈log2 C(ℓ+V−1, V−1)⌉]                   Recon_i = b_i/ℓ
//
// The device samples its draft from Recon (Encode with draft = −1); then
// speculative sampling is lossless for any ℓ (Q-S Prop. 1).
//
// # Sparse lattice: KSQS and CSQS (SQS)
//
// The support X (a K-subset of the vocabulary) is sent as its
// combinatorial-number-system rank Σ_m C(c_m, m) (c_1 < … < c_K) in
// ⌈log2 C(V, K)⌉ bits (SQS eq. 5); the K kept probabilities, renormalized,
// are lattice-quantized and sent as a composition index (parts in
// ascending id order). The two ceilings are counted separately (SQS eq. 1,
// 2, 5), at most one bit more than a joint index.
//
//	KSQS{K, L}: subset[⌈log2 C(V,K)⌉] · composition[⌈log2 C(ℓ+K−1,K−1)⌉]      X = top K
//	CSQS:       K−1[⌈log2 V⌉] · subset[⌈log2 C(V,K)⌉] · composition[…]      X = X(β)
//
// CSQS embeds a Conformal threshold: X(β) = {x : q(x) >= β} (eq. 6, never
// empty), updated after each drafted token by β ← β − η(Σ_{x∉X} q(x) − α)
// (eq. 8). BeginBatch checkpoints β; EndBatch(T) for T accepted of L
// restores β to its value after min(T+1, L) updates (Algorithm 1: the T
// accepted tokens and the rejected (T+1)-th, whose distribution the device
// holds). Theorem 2 (eq. 9) bounds the average dropped mass over the kept
// updates by α + (|β_1| + 1 + ηα)/(ηT); TestTheorem2 checks it at every T.
// Defaults (SQS Sec. 4's experiments): η = 0.001, α = 0.0005, ℓ = 100
// (NewCSQS); β_1 = 0, which the paper leaves open.
//
// FitsBudget is SQS Sec. 4's batch rule L = max{L : Σ b_n <= B}, applied
// sequentially (DefaultBudget = 5000 bits).
//
// # Arithmetic
//
// Ranks are exact (math/big). Both indices are sums of binomials
// Σ_m C(c_m, m): a lattice point is mapped by stars and bars to the
// ℓ-subset of distances of its ones from the end of 1^{b_1}0…01^{b_K}, so
// only non-empty parts produce terms. Consecutive binomials are reached by
// multiplying by word-batched factor products and dividing exactly
// (modular inverses, four divisors per pass), or recomputed when that is
// cheaper; unranking estimates each c_m with lgamma and corrects it
// exactly. Costs at V = 32,000 are in bench_test.go.
package codec
