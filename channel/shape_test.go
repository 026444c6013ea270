package channel

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// fakeClock advances only when slept on, and records every sleep.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.slept = append(c.slept, d)
	return nil
}

// take returns and clears the recorded sleeps.
func (c *fakeClock) take() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.slept
	c.slept = nil
	return s
}

// scripted returns its states in order and records when each round began.
type scripted struct {
	states []State
	nows   []time.Duration
}

func (s *scripted) Round(now time.Duration) State {
	st := s.states[len(s.nows)%len(s.states)]
	s.nows = append(s.nows, now)
	return st
}

func sum(ds []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t
}

// pipe returns the shaped device end and the raw server end of a net.Pipe.
func pipe(t *testing.T, link Link, clock Clock) (device net.Conn, server net.Conn) {
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	return Shape(a, link, clock), b
}

func TestShapeExactDelays(t *testing.T) {
	link := NewFixed(State{UpRate: 1e6, DownRate: 2e6, SNR: math.NaN(),
		UpOverhead: time.Millisecond, DownOverhead: 3 * time.Millisecond})
	clk := &fakeClock{}
	dev, srv := pipe(t, link, clk)

	msg := make([]byte, 1000)
	go func() {
		buf := make([]byte, 1000)
		if _, err := io.ReadFull(srv, buf); err != nil {
			t.Error(err)
			return
		}
		srv.Write(buf[:500])
		srv.Write(buf[:250])
	}()
	if n, err := dev.Write(msg); n != 1000 || err != nil {
		t.Fatalf("Write: %d, %v", n, err)
	}
	// 1 ms overhead + 8000 bits / 1 Mbit/s.
	if got := clk.take(); len(got) != 1 || got[0] != 9*time.Millisecond {
		t.Errorf("uplink sleeps %v, want [9ms]", got)
	}
	buf := make([]byte, 750)
	if _, err := io.ReadFull(dev, buf); err != nil {
		t.Fatal(err)
	}
	// One round's downlink: 3 ms overhead once + 6000 bits / 2 Mbit/s.
	if got := sum(clk.take()); got != 6*time.Millisecond {
		t.Errorf("downlink delay %v, want 6ms", got)
	}
}

// TestShapeRoundPerWrite: every Write starts a round at the virtual time
// elapsed since Shape and pays that round's rate.
func TestShapeRoundPerWrite(t *testing.T) {
	inf := math.Inf(1)
	link := &scripted{states: []State{{UpRate: 1e6, DownRate: inf}, {UpRate: 2e6, DownRate: inf}, {UpRate: 4e6, DownRate: inf}}}
	clk := &fakeClock{now: time.Unix(1e9, 0)}
	dev, srv := pipe(t, link, clk)
	go io.Copy(io.Discard, srv)

	for range 3 {
		if _, err := dev.Write(make([]byte, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	want := []time.Duration{8 * time.Millisecond, 4 * time.Millisecond, 2 * time.Millisecond}
	if got := clk.take(); len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("sleeps %v, want %v", got, want)
	}
	wantNow := []time.Duration{0, 8 * time.Millisecond, 12 * time.Millisecond}
	if len(link.nows) != 3 || link.nows[0] != wantNow[0] || link.nows[1] != wantNow[1] || link.nows[2] != wantNow[2] {
		t.Errorf("rounds started at %v, want %v", link.nows, wantNow)
	}
	if n, err := dev.Write(nil); n != 0 || err != nil || len(link.nows) != 3 {
		t.Errorf("empty Write: %d, %v, %d rounds (want no new round)", n, err, len(link.nows))
	}
}

// TestShapeReadFirst: a Read before any Write starts a round, and pays its
// overhead once.
func TestShapeReadFirst(t *testing.T) {
	link := &scripted{states: []State{{UpRate: 1e6, DownRate: 8e6, DownOverhead: time.Millisecond}}}
	clk := &fakeClock{}
	dev, srv := pipe(t, link, clk)
	go func() {
		srv.Write(make([]byte, 100))
		srv.Write(make([]byte, 100))
	}()
	buf := make([]byte, 200)
	if _, err := io.ReadFull(dev, buf); err != nil {
		t.Fatal(err)
	}
	if got := sum(clk.take()); got != time.Millisecond+200*time.Microsecond || len(link.nows) != 1 {
		t.Errorf("delay %v over %d rounds, want 1.2ms over 1", got, len(link.nows))
	}
}

// signalClock is the real clock, telling on entered when a Sleep begins
// and recording how long each took.
type signalClock struct {
	RealClock
	entered chan time.Duration // receives each Sleep's d as it begins (if set)

	mu    sync.Mutex
	asked []time.Duration // d of every Sleep
	took  []time.Duration // wall time of every Sleep
}

func (c *signalClock) Sleep(ctx context.Context, d time.Duration) error {
	if c.entered != nil {
		c.entered <- d
	}
	start := time.Now()
	err := c.RealClock.Sleep(ctx, d)
	c.mu.Lock()
	c.asked = append(c.asked, d)
	c.took = append(c.took, time.Since(start))
	c.mu.Unlock()
	return err
}

// TestShapeInterrupts: Close, and a deadline moved into the past (how a
// device cancels a round), end a Write that is waiting out its delay on
// the real clock (8000 s) at once, with net.ErrClosed and
// os.ErrDeadlineExceeded.
func TestShapeInterrupts(t *testing.T) {
	for _, c := range []struct {
		name      string
		interrupt func(net.Conn)
		want      error
	}{
		{"close", func(c net.Conn) { c.Close() }, net.ErrClosed},
		{"deadline", func(c net.Conn) { c.SetDeadline(time.Unix(1, 0)) }, os.ErrDeadlineExceeded},
	} {
		t.Run(c.name, func(t *testing.T) {
			link := NewFixed(State{UpRate: 1, DownRate: math.Inf(1)}) // 8000 s for 1000 bytes
			clk := &signalClock{entered: make(chan time.Duration, 1)}
			dev, _ := pipe(t, link, clk)
			done := make(chan error, 1)
			go func() {
				_, err := dev.Write(make([]byte, 1000))
				done <- err
			}()
			select {
			case d := <-clk.entered: // the Write is in its delay (or about to wait)
				if d != 8000*time.Second {
					t.Errorf("the Write waits %v, want 8000s", d)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the Write did not begin its delay within 10 s")
			}
			c.interrupt(dev)
			select {
			case err := <-done:
				if !errors.Is(err, c.want) {
					t.Errorf("Write: %v, want %v", err, c.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the Write's delay was not interrupted within 10 s")
			}
		})
	}
}

// TestShapeRealTime: on the real clock, 64 KiB at 4 Mbit/s is one delay
// of exactly 524288/4e6 s = 131.072 ms, and the Write waits at least that
// long (timers never fire early) and returns (within a bound of 10 s that
// only a stuck timer exceeds; how much later than 131 ms a loaded machine
// wakes the Write is its scheduler's business, not checked).
func TestShapeRealTime(t *testing.T) {
	link := NewFixed(State{UpRate: 4e6, DownRate: math.Inf(1)})
	clk := &signalClock{}
	dev, srv := pipe(t, link, clk)
	go io.Copy(io.Discard, srv)
	want := 131072 * time.Microsecond
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := dev.Write(make([]byte, 64<<10))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(want + 10*time.Second):
		t.Fatalf("64 KiB at 4 Mbit/s (%v) still not written after %v", want, want+10*time.Second)
	}
	got := time.Since(start)
	clk.mu.Lock()
	defer clk.mu.Unlock()
	if len(clk.asked) != 1 || clk.asked[0] != want {
		t.Errorf("delays %v, want [%v]", clk.asked, want)
	}
	if len(clk.took) != 1 || clk.took[0] < want || got < want {
		t.Errorf("the delay of %v took %v (the Write %v): the clock woke early", want, clk.took, got)
	}
	t.Logf("64 KiB at 4 Mbit/s: %v (ideal %v)", got, want)
}

// TestShapeConcurrent: Writes and Reads from different goroutines share the
// link safely (run with -race).
func TestShapeConcurrent(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DownlinkBps = 1e9
	link, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dev, srv := pipe(t, link, &fakeClock{})
	go io.Copy(srv, srv) // echo
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range 100 {
			dev.Write(make([]byte, 10))
		}
	}()
	go func() {
		defer wg.Done()
		io.ReadFull(dev, make([]byte, 1000))
	}()
	wg.Wait()
}

// TestShapeWriteDeadline: a Write whose deadline passes during its delay
// (8000 s at 1 bit/s, deadline 2 s) returns os.ErrDeadlineExceeded after
// 2 s on the clock without passing a byte on; with the deadline cleared,
// the next Write waits out its whole delay and arrives.
func TestShapeWriteDeadline(t *testing.T) {
	link := NewFixed(State{UpRate: 1, DownRate: math.Inf(1)})
	clk := &fakeClock{now: time.Now()}
	dev, srv := pipe(t, link, clk)
	dev.SetWriteDeadline(clk.Now().Add(2 * time.Second))
	if n, err := dev.Write(make([]byte, 1000)); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Write past its deadline: %d, %v; want 0, os.ErrDeadlineExceeded", n, err)
	}
	if got := clk.take(); len(got) != 1 || got[0] != 2*time.Second {
		t.Errorf("sleeps %v, want [2s]", got)
	}
	if n, err := dev.Write([]byte{1}); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Write after its deadline: %d, %v; want 0, os.ErrDeadlineExceeded", n, err)
	}
	if got := clk.take(); len(got) != 0 {
		t.Errorf("a Write after its deadline slept %v", got)
	}
	dev.SetWriteDeadline(time.Time{})
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, 1)
		io.ReadFull(srv, b)
		got <- b
	}()
	if n, err := dev.Write([]byte{7}); n != 1 || err != nil {
		t.Fatalf("Write without a deadline: %d, %v", n, err)
	}
	if b := <-got; b[0] != 7 {
		t.Errorf("the server read %v, want [7] (the refused Write's bytes must not arrive)", b)
	}
	if got := clk.take(); len(got) != 1 || got[0] != 8*time.Second {
		t.Errorf("sleeps %v, want [8s]", got)
	}
}

// TestShapeReadDeadline: a Read whose deadline passes during its delay
// (100 bytes at 8 bit/s: 100 s; deadline 1 s) returns no bytes and
// os.ErrDeadlineExceeded after 1 s on the clock — so a frame read with
// io.ReadFull fails, as on a link still carrying it — and the next Read,
// without a deadline, gets the bytes after the other 99 s.
func TestShapeReadDeadline(t *testing.T) {
	link := NewFixed(State{UpRate: math.Inf(1), DownRate: 8})
	clk := &fakeClock{now: time.Now()}
	dev, srv := pipe(t, link, clk)
	sent := make([]byte, 100)
	for i := range sent {
		sent[i] = byte(i)
	}
	go srv.Write(sent)
	dev.SetReadDeadline(clk.Now().Add(time.Second))
	buf := make([]byte, 100)
	if n, err := io.ReadFull(dev, buf); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("ReadFull past its deadline: %d bytes, %v; want 0 and os.ErrDeadlineExceeded", n, err)
	}
	if got := clk.take(); len(got) != 1 || got[0] != time.Second {
		t.Errorf("sleeps %v, want [1s]", got)
	}
	dev.SetReadDeadline(time.Time{})
	if _, err := io.ReadFull(dev, buf); err != nil || !bytes.Equal(buf, sent) {
		t.Fatalf("ReadFull without a deadline: %v, %v; want the bytes sent", err, buf[:8])
	}
	if got := clk.take(); len(got) != 1 || got[0] != 99*time.Second {
		t.Errorf("sleeps %v, want [99s]: the rest of the held bytes' delay", got)
	}
}

// TestShapeWriteDeadlineNoDownlink: a Write that fails at its deadline
// sent no message, so the next Read pays no round's downlink overhead.
func TestShapeWriteDeadlineNoDownlink(t *testing.T) {
	link := NewFixed(State{UpRate: 1, DownRate: math.Inf(1), DownOverhead: time.Second})
	clk := &fakeClock{now: time.Now()}
	dev, srv := pipe(t, link, clk)
	dev.SetWriteDeadline(clk.Now().Add(time.Second))
	if _, err := dev.Write(make([]byte, 10)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Write: %v, want os.ErrDeadlineExceeded", err)
	}
	clk.take()
	go srv.Write([]byte{1})
	if _, err := io.ReadFull(dev, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if got := clk.take(); len(got) != 0 {
		t.Errorf("the Read slept %v for a round whose message never went up", got)
	}
}

// manualClock's Sleep waits for the test: it sends its duration on
// sleeps and returns when the test sends on wake (the clock advancing by
// it) or its context ends (not advancing).
type manualClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps chan time.Duration
	wake   chan struct{}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Sleep(ctx context.Context, d time.Duration) error {
	c.sleeps <- d
	select {
	case <-c.wake:
		c.mu.Lock()
		c.now = c.now.Add(d)
		c.mu.Unlock()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestShapeDeadlineCleared: a Write waits for its deadline (0.5 s of its
// 1 s delay); the deadline cleared while it waits, it waits out the whole
// delay (the clock did not move) and passes its bytes on.
func TestShapeDeadlineCleared(t *testing.T) {
	link := NewFixed(State{UpRate: 8000, DownRate: math.Inf(1)}) // 1000 bytes: 1 s
	clk := &manualClock{now: time.Now(), sleeps: make(chan time.Duration), wake: make(chan struct{})}
	dev, srv := pipe(t, link, clk)
	go io.Copy(io.Discard, srv)
	dev.SetWriteDeadline(clk.Now().Add(500 * time.Millisecond))
	done := make(chan error, 1)
	go func() {
		_, err := dev.Write(make([]byte, 1000))
		done <- err
	}()
	if d := <-clk.sleeps; d != 500*time.Millisecond {
		t.Fatalf("the Write waits %v first, want 500ms (its deadline)", d)
	}
	dev.SetWriteDeadline(time.Time{})
	if d := <-clk.sleeps; d != time.Second {
		t.Fatalf("after the deadline was cleared the Write waits %v, want 1s", d)
	}
	clk.wake <- struct{}{}
	if err := <-done; err != nil {
		t.Fatalf("Write with its deadline cleared: %v", err)
	}
}
