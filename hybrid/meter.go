package hybrid

import (
	"math"
	"time"

	"github.com/hlmproject/hlm/speculative"
	"github.com/hlmproject/hlm/wire"
)

// round is one device round as the meters see it, once it is over.
type round struct {
	n    int  // round number, from 1
	step Step // what the device produced
	// committed are the tokens the round committed, the first at position
	// pos of the sequence (prompt included), at virtual time at.
	committed []int
	pos       int
	at        time.Duration
	// beyond is how many of the committed tokens lie past max_tokens or
	// the context's room (Config.outputLimit): a bonus after a block that
	// filled the room, cut from the output, so not counted as accepted or
	// bonus tokens.
	beyond int

	// A verified round (step.Upload != nil) also has:
	drafts   []drafted     // the drafts sent (the device forgets them on Apply)
	path     []drafted     // a tree round's drafts along the committed path (positions)
	unsentX  [][]float64   // the distributions of the skipped tokens that rode along
	verdict  *wire.Verdict // the server's answer
	downBits int           // VerdictBits of the verdict
	server   *Trace        // what the server saw: in the simulator only, else nil
}

func (r *round) verified() bool { return r.verdict != nil }

// positions are the drafts at the committed positions of a verified round,
// in order: the accepted drafts, then the one rejected at the next
// position (if any). For a chain that is the drafts sent; for a tree the
// path the verdict took (Device.applyTree).
func (r *round) positions() []drafted {
	if r.path != nil {
		return r.path
	}
	return r.drafts
}

// bonus tells whether a verified round ended with a bonus token: the LLM's
// token after a fully accepted block (one-token rounds without the bonus
// commit the accepted draft alone).
func (r *round) bonus() bool {
	return !r.verdict.Resampled && len(r.committed) > r.verdict.Accepted
}

// skipCheck is, for a token committed earlier without verification, the
// probability that its draft would have been accepted, min(1, y(x)/x̂(x)),
// from the diagnostics of the upload it rode along with.
type skipCheck struct {
	pos, token int
	accept     float64
}

// skipChecks are the checks of the skipped tokens a verified round carried
// (none without diagnostics).
func (r *round) skipChecks() []skipCheck {
	up := r.step.Upload
	var out []skipCheck
	for j, yd := range r.verdict.CommittedTarget {
		if sent := up.CommittedProb; j < len(sent) && sent[j] > 0 {
			out = append(out, skipCheck{pos: r.pos - len(up.Committed) + j, token: int(up.Committed[j]),
				accept: math.Min(1, float64(yd)/float64(sent[j]))})
		}
	}
	return out
}

// draftAccepts are the acceptance probabilities min(1, y(x)/x̂(x)) of a
// verified round's drafts, in order, as far as the server's distributions
// are at hand (simulator only; none for coupled drafts): the α_l of Q-S
// g(x) (Sec. IV-C), which the DDQN's reward (Q-S eq. 13–14) takes. A draft
// with x̂(x) = 0 — S-Q sends the lattice point of the x it sampled from,
// and ℓ·x(x) < ½ rounds to 0 — is accepted outright by the server, so its
// α is 1 (speculative.AcceptRatio), not the end of the list.
func (r *round) draftAccepts() []float64 {
	tr := r.server
	if tr == nil {
		return nil
	}
	var accept []float64
	pos := r.positions()
	for l := 0; l < len(pos) && l < len(tr.XHat) && l < len(tr.DraftY); l++ {
		xh, y, t := tr.XHat[l], tr.DraftY[l], pos[l].token
		if xh == nil || y == nil || t >= len(xh) || t >= len(y) {
			break
		}
		accept = append(accept, speculative.AcceptRatio(xh[t], y[t]))
	}
	return accept
}

// A meter measures something over a run: Run shows it every round, in
// order, and asks it for its figures at the end. A new figure of Result is
// a new meter (or a field of one), not a branch in the round loop.
type meter interface {
	observe(r *round) error
	// fill writes the meter's figures into res; also after an error, for
	// the rounds observed so far.
	fill(res *Result)
}

// An ender is a meter with work left once the last round is over; Run
// calls end before fill when the run completes without error.
type ender interface {
	end() error
}

// tally counts rounds, uploads and the fate of the drafts.
type tally struct {
	rounds, uploads, drafted, skipped, verified, accepted, resampled, bonus int
	overBudget, probed                                                      int
}

func (t *tally) observe(r *round) error {
	t.rounds++
	t.drafted += r.step.Drafted
	t.probed += r.step.Probed
	if !r.verified() {
		t.skipped++
		return nil
	}
	t.uploads++
	if r.step.overBudget {
		t.overBudget++
	}
	t.verified += len(r.step.Upload.Drafts)
	beyond := r.beyond
	if r.verdict.Resampled {
		t.resampled++
	} else if r.bonus() {
		if beyond > 0 {
			beyond-- // the bonus is the last token, cut
		} else {
			t.bonus++
		}
	}
	t.accepted += r.verdict.Accepted - min(beyond, r.verdict.Accepted)
	return nil
}

func (t *tally) fill(res *Result) {
	res.Rounds, res.Uploads, res.Drafted, res.Skipped = t.rounds, t.uploads, t.drafted, t.skipped
	res.Verified, res.Accepted, res.Resampled, res.Bonus = t.verified, t.accepted, t.resampled, t.bonus
	res.OverBudget, res.Probed = t.overBudget, t.probed
}

// ledger counts what crossed the link: the papers' bits (Step.UplinkBits,
// VerdictBits), the frame bytes of the messages as encoded, the codec
// payloads against full 32-bit distributions, and each draft's support.
type ledger struct {
	upBits, downBits, codecBits, fullBits int64
	upBytes, downBytes                    int64
	supports                              []int
	buf                                   []byte // scratch for encoding messages to count their bytes
}

func (l *ledger) observe(r *round) error {
	if !r.verified() {
		return nil
	}
	st := r.step
	for _, dr := range r.drafts {
		if dr.support > 0 {
			l.supports = append(l.supports, dr.support)
		}
	}
	l.upBits += int64(st.UplinkBits)
	l.codecBits += int64(st.CodecBits)
	l.fullBits += int64(st.FullBits)
	l.downBits += int64(r.downBits)
	l.buf = wire.AppendUpload(l.buf[:0], st.Upload)
	l.upBytes += int64(len(l.buf) + wire.FrameHeader)
	l.buf = wire.AppendVerdict(l.buf[:0], r.verdict)
	l.downBytes += int64(len(l.buf) + wire.FrameHeader)
	return nil
}

func (l *ledger) fill(res *Result) {
	res.UplinkBits, res.DownlinkBits, res.CodecBits = l.upBits, l.downBits, l.codecBits
	res.UplinkBytes, res.DownlinkBytes = l.upBytes, l.downBytes
	res.Supports = l.supports
	if l.fullBits > 0 {
		res.CompressionRatio = ptr(float64(l.codecBits) / float64(l.fullBits))
	}
}

// skipRate is the true skip rate: the mean acceptance probability of the
// tokens committed without verification, measured with the diagnostics
// (Params.Diagnostics).
type skipRate struct {
	sum float64
	n   int
}

func (s *skipRate) observe(r *round) error {
	if !r.verified() {
		return nil
	}
	for _, c := range r.skipChecks() {
		s.sum += c.accept
		s.n++
	}
	return nil
}

func (s *skipRate) fill(res *Result) {
	if s.n > 0 {
		res.TrueSkipRate = ptr(s.sum / float64(s.n))
	}
	res.SkipChecks = s.n
}
