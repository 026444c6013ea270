// Package sampling turns a model's logits into tokens.
//
// It is the one place in hlm where a vector of logits becomes a probability
// distribution and a distribution becomes a token id. `hlm generate`, the
// device (which drafts tokens) and the server (which verifies them) all use
// it, so that "the distribution the device sampled from" means the same
// numbers on both sides of the link.
//
// # Conventions
//
// A distribution is a []float64 of length V indexed by token id: p[i] is the
// probability of token i. Nothing in this package sorts a distribution in
// place; orderings are computed on index slices. Logits come from the engine
// as []float32 and are converted to float64 before any arithmetic.
//
// Randomness is always a *rand.Rand (math/rand/v2) supplied by the caller, and
// every function consumes a documented number of draws, so a run is
// reproducible from its seed.
//
// # From logits to a token
//
// The pipeline of a Sampler is
//
//	logits z ──Softmax(T)──▶ x ──TopK(k)──▶ ──TopP(p)──▶ x' ──Sample──▶ token
//
// with these steps:
//
//   - Softmax computes x_v = exp((z_v − max z)/T) / Σ_i exp((z_i − max z)/T).
//     Subtracting the maximum first keeps every exponent ≤ 0, so nothing
//     overflows and the largest term is exactly 1. T = 0 is the limit T → 0⁺:
//     a one-hot distribution on the argmax (the lowest id among ties).
//   - TopK keeps the k most probable tokens, TopP (nucleus sampling) the
//     smallest set of most probable tokens whose mass reaches p; both zero
//     the rest and renormalize. Ties are broken by token id (lower id first),
//     so the filters are deterministic functions of the distribution.
//   - Sample draws one uniform u ∈ [0, 1) and returns the first token whose
//     cumulative mass exceeds u·Σp (inverse-CDF sampling). It never returns a
//     token of probability zero, even when rounding makes Σp differ from 1.
//
// Sampler.Next returns the filtered distribution x' together with the token,
// because speculative verification needs exactly the distribution the draft
// was drawn from (see package speculative).
package sampling
