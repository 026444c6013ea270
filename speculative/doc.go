// Package speculative implements speculative sampling: the server-side rule that
// turns a token drafted by a small model into a token distributed as the
// large model's, and the closed forms that say exactly what comes out when
// the rule is fed something other than what the device sampled from.
//
// # The rule
//
// The device drafts d ~ x (its small model's distribution) and sends d and
// a description of x; the server reconstructs x̂ from that description and
// computes the target distribution y. Then (Leviathan et al. 2023;
// CU-HLM eq. 2–3; Q-S eq. 1–2):
//
//	accept d with probability min(1, y_d / x̂_d)
//	otherwise draw the token from the residual r = norm((y − x̂)⁺)
//
// If x̂ = x the committed token is distributed exactly as y:
//
//	P(v) = x_v·min(1, y_v/x_v) + (Σ_i (x_i − y_i)⁺)·(y_v − x_v)⁺/Σ_i (y_i − x_i)⁺
//	     = min(x_v, y_v) + (y_v − x_v)⁺ = y_v,
//
// because Σ_i (x_i − y_i)⁺ = Σ_i (y_i − x_i)⁺ = TV(x, y) when both sum to 1.
// The acceptance probability is Σ_v min(x_v, y_v) = 1 − TV(x, y).
//
// # Lossless and lossy uploads
//
// What the device uploads decides whether x̂ = x:
//
//   - Full distribution at full precision: x̂ = x, lossless.
//   - Quantize, then sample (Q-S): the device quantizes x to q̂, samples the
//     draft from q̂ and sends q̂. The server verifies against exactly the
//     distribution the draft came from, so the output is y for any
//     quantizer at any resolution (Q-S Prop. 1).
//   - Sample, then compress (S-Q; CU-HLM's top-k with uniform residual,
//     CU-HLM eq. 15): the draft came from x but is verified against x̂ ≠ x,
//     and the output deviates from y. OutputDist computes the deviation
//     exactly and Bias is CU-HLM's eq. 17 measure of it.
//
// Verify takes x̂ — whatever the server reconstructed — precisely so that
// the lossy methods are modelled by the same code path as the lossless ones.
//
// # Blocks
//
// With block drafting (Q-S, SQS) the device drafts L tokens autoregressively,
// the server computes the L+1 target distributions in one pass and
// VerifyBlock checks the drafts in order. The first rejection is replaced
// from that position's residual and ends the round; if all L are accepted a
// bonus token is drawn from the (L+1)-th target distribution. Each round
// commits between 1 and L+1 tokens and the committed sequence is distributed
// as the target model's (Q-S eq. 3). ExpectedTokens is Q-S's g(x) for the
// expected number committed.
//
// # Randomness and bad input
//
// All randomness comes from the caller's *rand.Rand; each function documents
// how many uniforms it consumes. Mismatched slice lengths are programmer
// errors and panic; an out-of-range draft id (input from the network) is not
// and is handled by rejecting it, which keeps the output distributed as y.
package speculative
