package channel

import (
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"sync"
	"time"
)

// Clock is the time source of Shape: real time in production, a fake clock
// in tests.
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx is done, whichever is first, and returns
	// ctx.Err() in the second case.
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock is the wall clock.
type RealClock struct{}

var _ Clock = RealClock{}

// Now is time.Now.
func (RealClock) Now() time.Time { return time.Now() }

// Sleep waits on a timer, or until ctx is done.
func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shape makes conn behave like the device's end of link: every Write is one
// uplink message and starts a new round (one link.Round call at the time
// elapsed since Shape), and is delayed by that round's UpTime(8·len(p)),
// i.e. overhead + 8b/rate, before its bytes are passed on; write each
// message with one Write call (e.g. a bufio.Writer flushed per message).
// Every Read is delayed by 8n/DownRate for the n bytes it returns, plus the
// round's DownOverhead on the first Read after a Write (a round's downlink
// message); a Read before any Write starts a round of its own. Writes are
// serialised with each other, as are Reads. Deadlines bound the delays
// as they bound the connection's own waits: a Write whose deadline passes
// during its delay returns os.ErrDeadlineExceeded without passing its
// bytes on (and its round's downlink overhead is not charged), and a Read
// whose deadline passes during its delay returns no bytes and that error,
// keeping the bytes and the rest of their delay for the next Read, as a
// link would still be carrying them (a deadline moved, e.g. into the past
// to cancel, takes effect at once; deadlines are read on clock). Close
// interrupts pending delays. A nil clock is RealClock. The link must not be used by anything else while conn is in
// use (links are not safe for concurrent use).
func Shape(conn net.Conn, link Link, clock Clock) net.Conn {
	if clock == nil {
		clock = RealClock{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &shapedConn{Conn: conn, link: link, clock: clock, start: clock.Now(), ctx: ctx, cancel: cancel}
}

var _ net.Conn = (*shapedConn)(nil)

type shapedConn struct {
	net.Conn
	link   Link
	clock  Clock
	start  time.Time
	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc

	wmu, rmu sync.Mutex // serialise Writes; serialise Reads

	mu      sync.Mutex // guards link and the fields below
	cur     State      // state of the current round
	started bool       // a round has started
	downDue bool       // the current round's downlink overhead is still to be paid
	// The deadlines, and the wake-ups of a Write and of a Read that wait
	// out their delays (nil when none waits): setting a deadline wakes the
	// waiter, which looks at it again.
	rdl, wdl     time.Time
	rwake, wwake context.CancelFunc

	// held are bytes a Read took from the connection whose delay a read
	// deadline cut short, and heldLeft what is left of it; heldErr is the
	// error that Read had after them. Only Reads (rmu) touch them.
	held     []byte
	heldLeft time.Duration
	heldErr  error
}

// newRound starts a round and returns its state.
func (c *shapedConn) newRound() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur = c.link.Round(c.clock.Now().Sub(c.start))
	c.started, c.downDue = true, true
	return c.cur
}

// downlink returns the current round's state (starting one if none) and
// whether its downlink overhead is due now.
func (c *shapedConn) downlink() (State, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started {
		c.cur = c.link.Round(c.clock.Now().Sub(c.start))
		c.started, c.downDue = true, true
	}
	due := c.downDue
	c.downDue = false
	return c.cur, due
}

func (c *shapedConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if len(p) == 0 {
		return c.Conn.Write(p)
	}
	s := c.newRound()
	if d := s.UpTime(8 * len(p)); d > 0 {
		if _, err := c.delay(d, true); err != nil {
			c.mu.Lock()
			c.downDue = false // no message went up: none comes down for it
			c.mu.Unlock()
			return 0, err
		}
	}
	return c.Conn.Write(p)
}

func (c *shapedConn) Read(p []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.held != nil {
		return c.readHeld(p)
	}
	n, err := c.Conn.Read(p)
	if n == 0 {
		return n, err
	}
	s, due := c.downlink()
	var overhead time.Duration
	if due {
		overhead = s.DownOverhead
	}
	d := transferTime(8*n, s.DownRate, overhead)
	if d > 0 {
		left, derr := c.delay(d, false)
		if errors.Is(derr, os.ErrDeadlineExceeded) {
			c.held, c.heldLeft, c.heldErr = slices.Clone(p[:n]), left, err
			return 0, derr
		}
		if derr != nil && err == nil {
			err = derr
		}
	}
	return n, err
}

// readHeld is Read when bytes are held (the deadline of the Read that
// took them passed during their delay): the rest of their delay, then
// them.
func (c *shapedConn) readHeld(p []byte) (int, error) {
	if c.heldLeft > 0 {
		left, err := c.delay(c.heldLeft, false)
		if err != nil {
			c.heldLeft = left
			return 0, err
		}
		c.heldLeft = 0
	}
	n := copy(p, c.held)
	if c.held = c.held[n:]; len(c.held) > 0 {
		return n, nil
	}
	err := c.heldErr
	c.held, c.heldErr = nil, nil
	return n, err
}

// delay waits d on the clock for a Write (write) or a Read: net.ErrClosed
// when Close interrupts it, os.ErrDeadlineExceeded when the deadline of
// its direction passes first, with what is left of d.
func (c *shapedConn) delay(d time.Duration, write bool) (time.Duration, error) {
	end, wait := c.clock.Now().Add(d), d
	for {
		ctx, wake := context.WithCancel(c.ctx)
		dl := c.waiting(write, wake)
		atDeadline := false
		if now := c.clock.Now(); !dl.IsZero() && dl.Sub(now) < wait {
			wait, atDeadline = dl.Sub(now), true
		}
		var woken error
		if wait > 0 {
			woken = c.clock.Sleep(ctx, wait)
		}
		c.waiting(write, nil)
		wake()
		switch {
		case c.ctx.Err() != nil:
			return 0, net.ErrClosed
		case woken != nil: // a deadline was set: look at it again, for what is left
			wait = end.Sub(c.clock.Now())
		case atDeadline:
			return max(end.Sub(c.clock.Now()), 0), os.ErrDeadlineExceeded
		default:
			return 0, nil
		}
	}
}

// waiting registers the wake-up of a delay for a Write (write) or a Read
// (nil: none waits) and returns that direction's deadline.
func (c *shapedConn) waiting(write bool, wake context.CancelFunc) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if write {
		c.wwake = wake
		return c.wdl
	}
	c.rwake = wake
	return c.rdl
}

// SetDeadline sets both deadlines (SetReadDeadline, SetWriteDeadline).
func (c *shapedConn) SetDeadline(t time.Time) error {
	c.setDeadline(t, true, true)
	return c.Conn.SetDeadline(t)
}

// SetReadDeadline bounds Reads, their delays included.
func (c *shapedConn) SetReadDeadline(t time.Time) error {
	c.setDeadline(t, true, false)
	return c.Conn.SetReadDeadline(t)
}

// SetWriteDeadline bounds Writes, their delays included.
func (c *shapedConn) SetWriteDeadline(t time.Time) error {
	c.setDeadline(t, false, true)
	return c.Conn.SetWriteDeadline(t)
}

// setDeadline records t for reads and/or writes and wakes their delays.
func (c *shapedConn) setDeadline(t time.Time, read, write bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if read {
		c.rdl = t
		if c.rwake != nil {
			c.rwake()
		}
	}
	if write {
		c.wdl = t
		if c.wwake != nil {
			c.wwake()
		}
	}
}

// Close closes conn and interrupts pending delays.
func (c *shapedConn) Close() error {
	c.cancel()
	return c.Conn.Close()
}
