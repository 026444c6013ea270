package edge

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hlmproject/hlm/wire"
)

// heldDeadlines is a net.Conn whose SetDeadline to the past (a cancelled
// context's, in roundTrip) waits until release is closed, and records when
// it took effect.
type heldDeadlines struct {
	net.Conn
	entered chan struct{}
	release chan struct{}
	applied atomic.Bool
}

func (c *heldDeadlines) SetDeadline(t time.Time) error {
	if t.Before(time.Unix(2, 0)) {
		close(c.entered)
		<-c.release
		defer c.applied.Store(true)
	}
	return c.Conn.SetDeadline(t)
}

// TestRoundTripCancelLandsBeforeReturn: when the context of a round trip
// is cancelled as its answer arrives, the deadline its cancellation moves
// to the past is in place before roundTrip returns. roundTrip stopped the
// context's callback without waiting for it: the callback could move the
// deadline later, ending the next write on the connection — the Close
// frame of an interrupted generation (Remote.Close), whose session then
// stayed on the server until its idle timeout.
func TestRoundTripCancelLandsBeforeReturn(t *testing.T) {
	dev, srv := net.Pipe()
	defer dev.Close()
	defer srv.Close()
	c := &heldDeadlines{Conn: dev, entered: make(chan struct{}), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if _, _, err := wire.ReadFrame(srv, wire.DefaultMaxFrame); err != nil {
			t.Error(err)
			return
		}
		cancel()    // the generation is interrupted as its verdict is sent
		<-c.entered // the cancellation's SetDeadline has begun (and waits)
		if err := wire.WriteFrame(srv, wire.FrameWelcome, []byte("x")); err != nil {
			t.Error(err)
		}
		time.AfterFunc(100*time.Millisecond, func() { close(c.release) })
	}()
	r := &Remote{cfg: Config{MaxFrame: wire.DefaultMaxFrame, IOTimeout: time.Minute}}
	r.roundTrip(ctx, c, wire.FrameHello, []byte("hello"), wire.FrameWelcome)
	if !c.applied.Load() {
		t.Fatal("roundTrip returned before its cancellation's deadline took effect: it can end the connection's next write")
	}
}
