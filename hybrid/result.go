package hybrid

// Result is the summary of a run; `hlm sim --json` and `hlm edge --json`
// print it.
type Result struct {
	Method string `json:"method"`
	Seed   uint64 `json:"seed"`
	Tokens []int  `json:"tokens"`
	Text   string `json:"text"`
	Stop   Stop   `json:"stop_reason"`
	// PromptTokens are the prompt tokens the models saw (after fitting,
	// with Params.FitPrompt), BOS included.
	PromptTokens int `json:"prompt_tokens"`
	// Warnings are what a user should know about the run's settings
	// (Warnings): a rule that never consulted the LLM, say.
	Warnings []string `json:"warnings,omitempty"`

	Rounds  int `json:"rounds"`  // device rounds (uploads + local commits)
	Uploads int `json:"uploads"` // rounds that went to the server
	Drafted int `json:"drafted"` // SLM draft tokens
	// Probed counts SLM passes whose draft was not sent (Step.Probed:
	// C-SQS's test of the draft that ends a budget-filled batch); the
	// virtual clock and the energy model charge them as drafts.
	Probed  int `json:"probed,omitempty"`
	Skipped int `json:"skipped"` // drafts committed without verification
	// SkipChecks is how many skipped drafts TrueSkipRate averages over:
	// those whose acceptance probability became known (a later upload's
	// verdict); the last skips of a run may never be checked.
	SkipChecks int `json:"skip_checks,omitempty"`
	Verified   int `json:"verified"`  // drafts sent for verification
	Accepted   int `json:"accepted"`  // drafts accepted by the server
	Resampled  int `json:"resampled"` // rejections (a token resampled from the residual)
	Bonus      int `json:"bonus"`     // bonus tokens after fully accepted blocks (incl. LLM-only steps)
	// Tree (tree methods) is what the run's token trees were: their nodes,
	// depths, SLM passes and how their bits split.
	Tree *TreeReport `json:"tree,omitempty"`
	// OverBudget counts the uploads whose first draft alone cost more than
	// budget_bits (k-sqs, c-sqs, the tree methods): a round always sends
	// one.
	OverBudget int `json:"over_budget_uploads,omitempty"`

	TransmissionRate float64  `json:"transmission_rate"` // uploads / rounds
	TrueSkipRate     *float64 `json:"true_skip_rate"`    // mean acceptance probability of skipped tokens (null: none measured)
	RejectionRate    *float64 `json:"rejection_rate"`    // resampled / drafts examined (accepted + resampled)
	ResamplingRate   float64  `json:"resampling_rate"`   // resampled / uploads (SQS: N_rej per batch)
	AcceptedPerRound float64  `json:"accepted_per_round"`

	UplinkBits       int64    `json:"uplink_bits"`   // papers' accounting: token ids + codec payloads
	DownlinkBits     int64    `json:"downlink_bits"` // ⌈log2(L+1)⌉ + ⌈log2 V⌉ per verdict
	CodecBits        int64    `json:"codec_bits"`    // the distribution payloads alone
	UplinkBytes      int64    `json:"uplink_bytes"`  // message frames as sent (bodies + frame headers)
	DownlinkBytes    int64    `json:"downlink_bytes"`
	BitsPerToken     float64  `json:"uplink_bits_per_token"`
	CompressionRatio *float64 `json:"compression_ratio"` // codec bits / full 32-bit distributions for the same drafts

	VirtualSeconds float64 `json:"virtual_seconds"`
	// The virtual time by what it was spent on, the terms of Q-S eq. 9
	// summed over the rounds: the SLM drafting (τ_SLM per drafted token, or
	// the measured time with MeasureTau), the uplink transfers, the LLM
	// verifications (τ_LLM per upload, or measured) and the downlink
	// transfers. They add up to VirtualSeconds (up to float rounding).
	SLMSeconds      float64 `json:"slm_seconds"`
	UplinkSeconds   float64 `json:"uplink_seconds"`
	LLMSeconds      float64 `json:"llm_seconds"`
	DownlinkSeconds float64 `json:"downlink_seconds"`
	ThroughputTPS   float64 `json:"throughput_tps"` // tokens per virtual second
	WallSeconds     float64 `json:"wall_seconds"`
	WallTPS         float64 `json:"wall_throughput_tps"`
	Energy          float64 `json:"energy"` // U+I energy model (policy.Energy): Σ uplink Mbit·ε_u + resampled·ε_r + drafted·ε_s, in the paper's unit
	// Supports are the probability entries each uploaded draft carried (k
	// of top-k, K, V), in order: the online k's distribution (CU-HLM
	// Sec. V-C: range and mean of k).
	Supports []int `json:"-"`
	// Batches (simulator, k-sqs and c-sqs) are the run's batches with
	// their L^t, support sizes, dropped masses and the terms of SQS
	// Theorem 1 (Batch); Aggregate does not merge them.
	Batches []Batch `json:"-"`

	// MeanEntropy (simulator, with Params.Entropy) is the mean Shannon
	// entropy in nats of the exact distribution each committed token
	// followed, over EntropyTokens tokens.
	MeanEntropy   *float64 `json:"mean_entropy,omitempty"`
	EntropyTokens int      `json:"entropy_tokens,omitempty"`

	MeanDeviation *float64 `json:"mean_deviation"` // simulator only: mean L1 distance of each committed token's exact output distribution from the LLM's (CU-HLM eq. 17's Bias(t), averaged over the draft)
}

// SetRates fills the rates that follow from r's counts, its tokens and its
// times: throughput, wall tokens/s, transmission, resampling and rejection
// rates, accepted drafts per round and uplink bits per token.
func (r *Result) SetRates() {
	n := float64(len(r.Tokens))
	if r.VirtualSeconds > 0 {
		r.ThroughputTPS = n / r.VirtualSeconds
	}
	if r.WallSeconds > 0 {
		r.WallTPS = n / r.WallSeconds
	}
	if r.Rounds > 0 {
		r.TransmissionRate = float64(r.Uploads) / float64(r.Rounds)
	}
	if r.Uploads > 0 {
		r.ResamplingRate = float64(r.Resampled) / float64(r.Uploads)
		r.AcceptedPerRound = float64(r.Accepted) / float64(r.Uploads)
	}
	if m := r.Accepted + r.Resampled; m > 0 {
		r.RejectionRate = ptr(float64(r.Resampled) / float64(m))
	}
	if n > 0 {
		r.BitsPerToken = float64(r.UplinkBits) / n
	}
}

func ptr(x float64) *float64 { return &x }
