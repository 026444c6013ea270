// Package uncertainty measures how unsure the device's small model is about
// a drafted token, and turns a calibration log into the upload threshold
// of U-HLM / CU-HLM.
//
// # Temperature perturbation (U-HLM eq. 6–8, CU-HLM eq. 8–10)
//
// After the small model drafts d from its logits z, the device draws M
// temperatures θ_m uniformly from [0, θmax], samples one token d_m from
// softmax(z/θ_m) for each (θ = 0: the argmax) and reports
//
//	u = (1/M)·Σ_m 1(d_m ≠ d).
//
// A confident model returns its draft at every temperature (u = 0); an
// unsure one scatters (u → 1). The papers found u linear in the draft's
// rejection probability β = max(1 − y_d/x_d, 0) (U-HLM Remark 1: a = 0.82,
// b = −0.06; CU-HLM eq. 7: a = 0.815, b = −0.066, R² = 0.977), and upload
// only tokens with u > u_th. No extra model pass is needed: everything comes
// from the one logit vector.
//
// # Computing u fast, exactly
//
// Done literally, u costs M softmaxes over the vocabulary: 20 × 32,000
// exponentials, milliseconds per token. Perturbation.MeasureNaive does
// that and is the reference. Perturbation.Measure returns the same value
// for the same random stream at a fraction of the cost, because only the
// event d_m = d matters: with e_i = exp(−(z_max − z_i)/θ), inverse-CDF
// sampling with uniform U returns d exactly when
//
//	A ≤ U·(A + e_d + B) < A + e_d,   A = Σ_{i<d} e_i,  B = Σ_{i>d} e_i.
//
// The logits are bucketed once per token by δ = z_max − z (O(V), no
// exponentials). For each θ, one exponential r = exp(−w/θ) bounds every
// bucket of width w between n_j·r^{j+1} and n_j·r^j, which brackets A and B;
// the test above is monotone in A and B, so the brackets usually decide it.
// When they do not, the widest bucket is summed exactly and the test
// repeated — with every bucket exact it is the exact test. So the decision
// is never approximate; the bounds only save work.
//
// At V = 32,000 and M = 20 this costs two passes over the logits (a third,
// lazily, groups them by bucket when a bucket must be summed), two
// exponentials per temperature for the bounds, and between 0 and about
// 2,500 exponentials per token for refinements on Llama-like logits —
// instead of 640,000 (BenchmarkMeasure, BenchmarkMeasureNaive). Tests check
// the fast path against the naive one pathwise (same seed, same u),
// statistically (per-θ frequencies and the binomial law of M·u), and check
// the bucket bounds deterministically.
//
// # Calibration and Theorem 1 (U-HLM Sec. III-C, CU-HLM Sec. III-C)
//
// From a log of (u, x_d, y_d) per token, Calibrate fits β = a·u + b by least
// squares, estimates Δ = P(y_d < x_d) — the probability that a draft is not
// accepted outright — and derives
//
//	risk-prone threshold  u_th = (Δ − b)/a        (U-HLM eq. 11, CU-HLM eq. 12)
//	risk-averse threshold        −b/a              (U-HLM eq. 14)
//	rejection risk        R = ∫_{−b/a}^{(Δ−b)/a} (a·u + b) f(u) du     (eq. 12)
//	Hölder bound          R ≤ Δ^{3/2}/sqrt(3a) · sqrt(∫ f(u)² du)       (eq. 13)
//
// with f the density of u, estimated by a Gaussian kernel density estimate
// with Silverman's bandwidth (as CU-HLM's Fig. 4b) or by the histogram of
// the M+1 values u can take (as U-HLM's Fig. 5). The integrals use the
// composite Simpson rule split at the histogram's bin edges (exact for a
// histogram) with a Richardson error estimate; the first factor of the
// bound is the closed form, since a·u + b runs from 0 to Δ over the
// interval. EmpiricalRisk is the measured R: the mean over the log of β for
// the tokens between the two thresholds.
//
// Reading of the papers: U-HLM's printed thresholds 0.431 and 0.073 do not
// follow jointly from its printed a = 0.82, b = −0.06, Δ = 0.301 (which give
// 0.440 and 0.073); see TestPaperNumbers. CU-HLM's numbers reproduce.
package uncertainty
