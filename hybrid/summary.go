package hybrid

import "slices"

// Summary aggregates the runs of several prompts.
type Summary struct {
	Result
	Runs []Result `json:"runs,omitempty"`
}

// StopAggregate is the Stop of a Summary over several runs; a Summary
// whose last run was interrupted (Ctrl-C before every prompt ran) has
// StopInterrupted instead, so that it is not read as one over them all.
const StopAggregate Stop = "aggregate"

// Aggregate sums runs: counts, bits, bytes, energy and times (the virtual
// time and its parts) add up, rates are recomputed from the sums, the true
// skip rate and deviation are weighted by what they were measured on.
func Aggregate(runs []Result) Summary {
	var s Summary
	if len(runs) == 1 {
		s.Result = runs[0]
		return s
	}
	s.Runs = runs
	a := &s.Result
	var tsr, tsrW, dev, devW, ent, fullRatioNum, fullRatioDen float64
	for i, r := range runs {
		if i == 0 {
			a.Method, a.Seed = r.Method, r.Seed
		}
		for _, w := range r.Warnings {
			if !slices.Contains(a.Warnings, w) {
				a.Warnings = append(a.Warnings, w)
			}
		}
		a.Tokens = append(a.Tokens, r.Tokens...)
		a.Supports = append(a.Supports, r.Supports...)
		if i > 0 {
			a.Text += "\n\n"
		}
		a.Text += r.Text
		a.PromptTokens += r.PromptTokens
		a.Rounds += r.Rounds
		a.Uploads += r.Uploads
		a.Drafted += r.Drafted
		a.Probed += r.Probed
		a.Skipped += r.Skipped
		a.Verified += r.Verified
		a.Accepted += r.Accepted
		a.Resampled += r.Resampled
		a.Bonus += r.Bonus
		a.OverBudget += r.OverBudget
		if r.Tree != nil {
			if a.Tree == nil {
				a.Tree = &TreeReport{}
			}
			a.Tree.Add(*r.Tree)
		}
		a.UplinkBits += r.UplinkBits
		a.DownlinkBits += r.DownlinkBits
		a.CodecBits += r.CodecBits
		a.UplinkBytes += r.UplinkBytes
		a.DownlinkBytes += r.DownlinkBytes
		a.VirtualSeconds += r.VirtualSeconds
		a.SLMSeconds += r.SLMSeconds
		a.UplinkSeconds += r.UplinkSeconds
		a.LLMSeconds += r.LLMSeconds
		a.DownlinkSeconds += r.DownlinkSeconds
		a.WallSeconds += r.WallSeconds
		a.Energy += r.Energy
		a.SkipChecks += r.SkipChecks
		if r.TrueSkipRate != nil { // each run's mean is over its checked skips
			tsr += *r.TrueSkipRate * float64(r.SkipChecks)
			tsrW += float64(r.SkipChecks)
		}
		if r.MeanDeviation != nil {
			dev += *r.MeanDeviation * float64(r.Drafted)
			devW += float64(r.Drafted)
		}
		if r.MeanEntropy != nil {
			ent += *r.MeanEntropy * float64(r.EntropyTokens)
			a.EntropyTokens += r.EntropyTokens
		}
		if r.CompressionRatio != nil && *r.CompressionRatio > 0 {
			fullRatioNum += float64(r.CodecBits)
			fullRatioDen += float64(r.CodecBits) / *r.CompressionRatio
		}
	}
	a.Stop = StopAggregate
	if runs[len(runs)-1].Stop == StopInterrupted {
		a.Stop = StopInterrupted
	}
	a.SetRates()
	if tsrW > 0 {
		x := tsr / tsrW
		a.TrueSkipRate = &x
	}
	if devW > 0 {
		x := dev / devW
		a.MeanDeviation = &x
	}
	if a.EntropyTokens > 0 {
		x := ent / float64(a.EntropyTokens)
		a.MeanEntropy = &x
	}
	if fullRatioDen > 0 {
		x := fullRatioNum / fullRatioDen
		a.CompressionRatio = &x
	}
	return s
}
