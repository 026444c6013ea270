// Package policy holds the small decisions the device makes every round,
// behind interfaces that the simulator and the real device both call.
//
// # Upload or skip (Uploader)
//
// After drafting a token the device knows a Token: the draft, its
// probability x_d, its uncertainty u (package uncertainty) and, if the
// engine captured it, the attention row (package importance). An Uploader
// decides whether the token goes to the server for verification:
//
//	Always                  HLM: every token verified (lossless)
//	Never                   the small model alone
//	Random{P}               Rand-HLM: upload with probability P (CU-HLM Sec. V-A, P = 0.5)
//	Threshold{UTh}          U-HLM eq. 8 / CU-HLM eq. 10: upload iff u > u_th
//	                        (0.431 in U-HLM, 0.8 in CU-HLM)
//	UncertaintyImportance   U+I eq. 7: upload iff u > θ_u and the token is important
//	ImportanceOnly          U+I's "I" baseline: upload iff important
//
// A skipped token is committed as drafted, so every policy but Always trades
// fidelity to the large model for uplink bits, LLM time and energy.
//
// # Draft length (DraftLength)
//
// With block drafting the device also chooses how many tokens to draft per
// round: Fixed{L}, or Q-S's Heuristic (grow by one after a fully accepted
// round, otherwise fall back to the accepted count).
//
// # Energy
//
// Energy is U+I's accounting of uploads, resamplings and local tokens, with
// the saving ratio η relative to HLM; its documentation explains what the
// paper's units do and do not mean.
//
// # Configuration strings
//
// Parse and ParseDraftLength read the command line's "name:key=value,…"
// form, e.g. "u+i:k=5,gamma=1" or "heuristic:initial=4,max=12"; every
// policy's String method returns that form, and parsing it returns an
// equal policy.
package policy
