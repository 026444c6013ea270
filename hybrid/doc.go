// Package hybrid is the protocol-agnostic core of hybrid inference: the
// device (SLM, policies, codecs) and the server (LLM, verification), talking
// through wire.Upload and wire.Verdict messages, and the round driver (Run)
// that runs a generation and accounts for bits, virtual time and energy.
//
// The simulator connects a Device to a Server in one process; the networked
// system puts a network connection between them. Both run exactly this code
// with the same seeds, so they produce the same tokens and the same counts.
//
// Every method is a row of the method table (method.go; MethodByName):
// its family, whether it is lossless, its codec and upload rule, and the
// strategies that draft a round on the device (draft_*.go) and verify it on
// the server (verify.go). Params.Method names the row:
//
//	family   methods                                 per round
//	LLM      llm                                     the server samples one token (L = 0)
//	skip     slm hlm rand-hlm u-hlm cu-hlm-offline   one draft; the device may commit it locally
//	         cu-hlm-online ui-hlm i-hlm              instead of uploading (skipped tokens ride along
//	                                                 with the next upload as ids)
//	block    q-s s-q k-sqs c-sqs                     a block of L drafts verified in one LLM pass,
//	                                                 L fixed, heuristic, DDQN or filled to a bit budget
//	         coupled replica coupled-list            a block sent as token ids only: keyed-noise
//	                                                 coupling, the server's own SLM copy, or
//	                                                 list_k coupled drafts (list matching)
//	         tree-q-s tree-k-sqs                     a token tree within the bit budget, verified in
//	                                                 one pass by recursive rejection sampling
//
// A verified round of the skip family commits exactly one token, as the
// papers define it (U-HLM eq. 4, CU-HLM eq. 6, CU-HLM Algorithm 1, U+I Sec. II): the
// accepted draft, or the token resampled from the residual. Params.Bonus
// (`--set bonus=true`) adds the block family's bonus token after an
// accepted draft — more tokens per LLM pass, but not the papers' method.
//
// The device samples a draft from the distribution it sends (quantize, then
// sample: lossless by construction, Q-S Proposition 1) except where a paper
// says otherwise: CU-HLM's top-k sends the top-k of the SLM's own
// distribution plus the draft (lossy, CU-HLM eq. 17) and S-Q quantizes after
// sampling (lossy). Coupled and coupled-list are lossless by construction
// too: the server commits the winner of an exponential race over y
// (speculative.RaceDist).
//
// The simulator's deviation (Result.MeanDeviation, the oracle meter) is the
// exact L1 distance of each committed token's output distribution from the
// LLM's. For the methods lossless by construction it computes an identity —
// OutputDist(x̂, x̂, y) = y, RaceDist(y) = y — and reports 0 up to rounding
// (~1e-16): a check of the bookkeeping, not of the sampler. The chi-square
// tests on the real pair (TestLosslessOnRealPair, the first token;
// TestBlocksFollowTheLLMOnRealPair, five positions of multi-draft blocks,
// budget-cut batches, C-SQS rollbacks, coupled, replica, coupled-list and
// token trees)
// are what can fail when the code does not sample as constructed.
//
// Virtual time per round is Q-S eq. 9: L·τ_SLM + τ_up(bits) + τ_LLM + τ_down,
// with the link state drawn once per upload (block fading); a skipped token
// costs τ_SLM. With Params.MeasureTau the measured drafting and verifying
// times replace τ_SLM and τ_LLM. Result keeps the four terms summed over the
// run (SLMSeconds, UplinkSeconds, LLMSeconds, DownlinkSeconds) besides their
// total. Uplink bits are the papers' accounting (UplinkBits): ⌈log2 V⌉ per
// token id (drafts and skipped tokens) plus each codec's exact payload bits,
// and beyond the papers a replica upload's 64-bit check and a tree's parent
// indices; downlink bits are ⌈log2(L+1)⌉ + ⌈log2 V⌉ (Q-S eq. 8 prints
// ⌈log2 L⌉; the accepted count takes L+1 values: DownlinkBits), plus
// ⌈log2 K⌉ naming the winning draft of coupled-list (VerdictBits).
//
// Run is a loop over rounds. It plays each round (Device.Step, the link,
// Verifier.Verify, Device.Apply) while a clock charges its virtual time,
// then shows the finished round to the meters, each a type with one job:
// tally (rounds and the drafts' fates), ledger (bits, frame bytes, codec
// payloads), skipRate (the true skip rate from the diagnostics), and in
// the simulator oracle (the deviation from the LLM), entropyMeter (the
// committed tokens' entropy, with entropy=true) and batches (SQS's
// budget-filled batches), then draftObserver (Config.OnDraft) and tracer
// (the per-token trace); Config.meters lists them. At the end each meter
// fills its figures into the Result. A new figure is a new meter or a
// field of one, not a branch in the loop.
package hybrid
