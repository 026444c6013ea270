// Package channel models the wireless link between the device (small model)
// and the server (large model): how long an uplink message of B bits and a
// downlink message take in each round, and a net.Conn wrapper that imposes
// those times on real bytes.
//
// # Rounds, block fading and time
//
// A round is one device→server→device exchange: the device uploads a draft
// (one token in U-HLM/CU-HLM/U+I, L tokens in Q-S), the server verifies,
// the device receives the result. All papers assume block fading: "channel
// gains are constant over one round and may change over different rounds"
// (U-HLM Sec. II-B, CU-HLM Sec. II-B). A [Link] therefore yields one [State]
// per round, from [Link.Round], and the caller prices every message of the
// round with it:
//
//	τ_up   = UpOverhead   + B_up/UpRate       (U-HLM eq. 3, CU-HLM eq. 5, Q-S eq. 7)
//	τ_down = DownOverhead + B_down/DownRate   (Q-S eq. 8)
//
// and a Q-S round takes L·τ_SLM + τ_up + τ_LLM + τ_down (Q-S eq. 9); the
// HLM family has L = 1 and no downlink cost (U-HLM eq. 4, CU-HLM eq. 6:
// throughput 1/(τ_SLM + τ_up + τ_LLM)). Q-S eq. 7 counts
// L·(⌈log2 V⌉ + b) uplink bits and eq. 8 ⌈log2 L⌉ + ⌈log2 V⌉ downlink bits
// (hlm counts ⌈log2(L+1)⌉ for the accepted count, which takes L+1 values:
// hybrid.DownlinkBits);
// CU-HLM eq. 4 counts |V|·(b_prob + ⌈log2 |V|⌉) for a full distribution
// (32,000 × (8 + 15) = 736,000 bits = 92 kB). The overheads are the
// preambles Q-S mentions after eq. 8 and then neglects; they default to 0,
// and the downlink rate defaults to +Inf (no delay), as all five papers
// assume.
//
// Time is virtual: a time.Duration since the start of the run, both for the
// now passed to Round and for the transfer times, which are rounded to the
// nanosecond and saturate at the largest Duration (about 292 years) instead
// of overflowing when a rate is tiny. Only [Shape] uses real time, through
// an injectable [Clock].
//
// # Shannon link (channel=shannon)
//
// The rate of a round is the Shannon capacity of the uplink,
//
//	C(t) = W·log2(1 + SNR(t)),   SNR(t) = h(t)·p·d^−α / N
//
// (U-HLM eq. 3, CU-HLM eq. 5, U+I eq. 2 with ρ(t) = h(t)·p·d^−α/σ²), where W
// is the bandwidth in Hz, p the transmit power and N the noise power, both
// converted from dBm to watts (10^(x/10) mW, [DBmToWatts]), d the distance
// in metres (no reference distance: the papers' d^−α with d = 2500), α the
// path-loss exponent and h the power gain of the round's fading, with
// E[h] = 1 so that SNR̄ = p·d^−α/N is the mean SNR ([MeanSNR]). Alternatively
// snr_db gives SNR̄ directly ("average SNR" on the axis of CU-HLM Fig. 10
// and U-HLM Fig. 6).
//
// Worked numbers. U-HLM/U+I (W = 1 MHz, p = 23 dBm, N = −104 dBm,
// d = 2.5 km, α = 4): SNR̄ = 23 − 40·log10(2500) + 104 = −8.92 dB = 0.1283,
// so C = 10^6·log2(1.1283) ≈ 174 kbit/s and a full 32-bit distribution
// (1,024,000 bits) takes about 5.9 s. CU-HLM (W = 10 MHz, 10 dB): C =
// 10^7·log2 11 ≈ 34.6 Mbit/s, and 736,000 bits take 21.3 ms, so
// 1/(25.6 + 21.3 + 104.6 ms) ≈ 6.6 tokens/s without fading.
//
// Fading (the "fading" key):
//
//   - none: h = 1.
//   - rayleigh: h ~ Exp(1), P(h > x) = e^−x (U+I Sec. II-B: h(t) ~ exp(1)):
//     the power of a unit-power circularly symmetric Gaussian amplitude.
//   - rician: h = |√(K/(K+1)) + g|² with g ~ CN(0, 1/(K+1)), K the K-factor
//     (rician_k_db, linear K = 10^(K_dB/10)): a fixed line-of-sight amplitude
//     of power K/(K+1) plus scattered power 1/(K+1), so E[h] = 1 and
//     E[h²] = (K² + 4K + 2)/(K+1)². K → 0 is Rayleigh; K → ∞ is no fading.
//     CU-HLM Fig. 10b uses K = 10 dB.
//
// Averages under fading need care. With Rayleigh fading the mean uplink time
// E[B/(W·log2(1 + SNR̄·h))] is infinite, because near h = 0 the integrand
// behaves like B·ln 2/(W·SNR̄·h) against a density e^−h → 1. The total time
// of n rounds is finite, but it is dominated by the deepest fade drawn and
// grows like log n, so a "long-run throughput" depends on the horizon and
// the seed: for CU-HLM's HLM setting (736,000 bits, 10 MHz, 10 dB) and
// 10^5 rounds we measure 4.4–4.6 tokens/s against 6.6 without fading (see
// TestCUHLMArithmetic). Report such numbers with their n and seeds, or use
// medians.
//
// # Markov link (channel=markov)
//
// Q-S Sec. V-A models a time-varying uplink as a discrete-time two-state
// Markov chain: a low-rate and a high-rate state, with transition
// probabilities p_low→high and p_high→low. Here the chain makes one step per
// round (the first round is the initial state). Its stationary distribution
// is
//
//	π_high = p_lh/(p_lh + p_hl),   π_low = p_hl/(p_lh + p_hl),
//
// the mean stay in a state is 1/p_lh (low) and 1/p_hl (high) rounds, and the
// correlation between rounds k apart is (1 − p_lh − p_hl)^k. The initial
// state is drawn from π (markov_init=stationary) or fixed (low, high). Q-S
// reports a low-rate regime of 350 kbit/s and a high-rate regime of 4 Mbit/s
// "on average" but gives no per-state rates or transition probabilities;
// [QSConfig] uses states of 350 kbit/s and 4 Mbit/s with p_lh = p_hl = 0.1.
// The downlink is delay-free in Q-S.
//
// # Fixed and trace links
//
// channel=fixed has the constant rate rate_bps. channel=trace reads
// trace_file, lines of
//
//	# comment
//	time_seconds rate_bps   # trailing comments too
//
// with strictly increasing times ≥ 0 and positive finite rates (write an
// outage as a small rate). The rate is piecewise constant: at time t it is
// the rate of the last line at or before t (the first line's rate before
// it), and it holds for the whole round that starts at t. Without
// trace_loop the last rate holds forever; with it the trace repeats with
// period equal to the time of the last line, which therefore marks the end
// of the trace (its rate is not used when looping). Parse errors name the
// line; see [ParseTrace].
//
// # Configuration
//
// [Config] has flat keys for "hlm sim --set key=value" ([Config.Set],
// [Keys]). [DefaultConfig] is the U-HLM/U+I setting; [CUHLMConfig] and
// [QSConfig] are the other papers' ([Preset] by name). [New] validates a
// config and builds its link. Each link owns a math/rand/v2 PCG source
// seeded from seed: the same config gives the same sequence of states.
// Links are not safe for concurrent use.
//
// # Shaping real connections
//
// [Shape] wraps the device's end of a net.Conn so that each Write (one
// uplink message) starts a round and is delayed by that round's UpTime
// before its bytes go out, and Reads are delayed by the downlink time of the
// bytes they return; a 1 Mbit/s Rayleigh link then behaves like one over
// loopback. The delays use a [Clock] (real by default, fake in tests).
package channel
