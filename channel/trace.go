package channel

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Trace is a piecewise-constant uplink rate read from a file of
// "time_seconds rate_bps" lines. The rate at time t is the rate of the last
// line at or before t (the first line's rate before its time).
type Trace struct {
	times []time.Duration // strictly increasing, ≥ 0
	rates []float64       // bit/s, positive and finite
}

// maxTraceLine bounds the length of one trace line.
const maxTraceLine = 4096

// ParseTrace reads a trace: one "time_seconds rate_bps" pair per line,
// separated by spaces or tabs; '#' starts a comment; blank lines are
// ignored. Times are seconds (≥ 0, strictly increasing, rounded to the
// nanosecond); rates are bit/s (positive, finite). An outage must be written
// as a small positive rate. Errors name the line.
func ParseTrace(r io.Reader) (*Trace, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), maxTraceLine)
	tr := &Trace{}
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("%w: line %d: want 2 fields \"time_seconds rate_bps\", got %d", ErrTrace, line, len(fields))
		}
		sec, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: time %q is not a number", ErrTrace, line, fields[0])
		}
		if !(sec >= 0) || sec*1e9 >= math.MaxInt64 {
			return nil, fmt.Errorf("%w: line %d: time %s s is not in [0, %.4g)", ErrTrace, line, fields[0], math.MaxInt64/1e9)
		}
		rate, err := strconv.ParseFloat(fields[1], 64)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: rate %q is not a number", ErrTrace, line, fields[1])
		}
		if !(rate > 0) || math.IsInf(rate, 0) {
			return nil, fmt.Errorf("%w: line %d: rate %s bit/s must be positive and finite", ErrTrace, line, fields[1])
		}
		t := time.Duration(math.Round(sec * 1e9))
		if n := len(tr.times); n > 0 && t <= tr.times[n-1] {
			return nil, fmt.Errorf("%w: line %d: time %s s is not after the previous time %g s", ErrTrace, line, fields[0], tr.times[n-1].Seconds())
		}
		tr.times = append(tr.times, t)
		tr.rates = append(tr.rates, rate)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: line %d: %v", ErrTrace, line+1, err)
	}
	if len(tr.times) == 0 {
		return nil, fmt.Errorf("%w: no \"time_seconds rate_bps\" lines", ErrTrace)
	}
	return tr, nil
}

// ReadTraceFile parses the trace in the named file. A file that cannot be
// opened gives the *fs.PathError of os.Open; a malformed one ErrTrace
// prefixed with the path.
func ReadTraceFile(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr, err := ParseTrace(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return tr, nil
}

// Len is the number of lines (rate changes) in the trace.
func (tr *Trace) Len() int { return len(tr.times) }

// Period is the time of the last line: the period of a looped trace. The
// last line thus marks the end of a looped trace and its rate is never used
// when looping (except for a one-line trace, which is constant).
func (tr *Trace) Period() time.Duration { return tr.times[len(tr.times)-1] }

// RateAt is the rate at time t. When loop is set the trace repeats with
// period Period, i.e. the rate at t is the rate at t mod Period.
func (tr *Trace) RateAt(t time.Duration, loop bool) float64 {
	if p := tr.Period(); loop && p > 0 {
		t %= p
		if t < 0 {
			t += p
		}
	}
	// i is the first line after t; the one before it is in force.
	i := sort.Search(len(tr.times), func(i int) bool { return tr.times[i] > t })
	if i == 0 {
		return tr.rates[0]
	}
	return tr.rates[i-1]
}

// TraceLink is the link of a rate trace (channel=trace): the uplink rate of
// the round starting at now is the trace's rate at now, held for the round.
type TraceLink struct {
	common
	trace *Trace
	loop  bool
}

var _ Link = (*TraceLink)(nil)

// Round returns the trace's rate at now.
func (l *TraceLink) Round(now time.Duration) State {
	return l.state(l.trace.RateAt(now, l.loop), math.NaN())
}
