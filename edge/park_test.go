package edge

import (
	"context"
	"net"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/wire"
)

func TestParkedKeep(t *testing.T) {
	p := &Parked{Tokens: []int{1, 5, 6, 7}}
	for _, c := range []struct {
		prompt []int
		want   int
	}{
		{nil, 0},
		{[]int{2}, 0},
		{[]int{1, 5, 9}, 2},
		{[]int{1, 5, 6, 7, 8, 9}, 4},
		{[]int{1, 5}, 2}, // the prompt again, shorter than what the session holds
	} {
		if got := p.Keep(c.prompt); got != c.want {
			t.Errorf("Keep(%v) = %d, want %d", c.prompt, got, c.want)
		}
	}
}

// TestConversationsTake: the parked session that keeps the most is taken,
// once; one that would keep less than half of its tokens, and not all of
// its last prompt, is left alone; one without tokens is not parked.
func TestConversationsTake(t *testing.T) {
	var c Conversations
	c.Put(&Parked{ID: 1, Tokens: []int{1, 2, 3, 4}})
	c.Put(&Parked{ID: 2, Tokens: []int{1, 2, 3, 4, 5, 6}})
	c.Put(&Parked{ID: 3, Tokens: []int{1, 9, 9, 9, 9, 9, 9, 9}})
	c.Put(nil)
	c.Put(&Parked{ID: 9}) // holds no token: nothing would continue it
	if c.Len() != 3 {
		t.Fatalf("%d parked, want 3", c.Len())
	}
	if p := c.Take([]int{1, 2, 3, 4, 5, 6, 7}); p == nil || p.ID != 2 {
		t.Fatalf("took %+v, want session 2 (keeps 6)", p)
	}
	if p := c.Take([]int{1, 2, 3, 4, 5, 6, 7}); p == nil || p.ID != 1 {
		t.Fatalf("took %+v, want session 1 (2 was taken)", p)
	}
	// Session 3 shares 2 of its 8 tokens: not cut short for that.
	if p := c.Take([]int{1, 9, 0}); p != nil {
		t.Errorf("took %+v for a prompt that keeps 2 of its 8 tokens", p)
	}
	if p := c.Take([]int{1, 9, 9, 9, 0}); p == nil || p.ID != 3 {
		t.Errorf("took %+v, want session 3 (keeps 4 of 8)", p)
	}
	// A session whose last prompt was 3 tokens and its answer 7 more: a
	// new prompt that keeps the whole last prompt continues it, though it
	// keeps less than half (the answer came back otherwise); one that
	// keeps less of it does not.
	c.Put(&Parked{ID: 4, Tokens: []int{1, 7, 7, 5, 5, 5, 5, 5, 5, 5}, Prompt: 3})
	if p := c.Take([]int{1, 7, 0}); p != nil {
		t.Errorf("took %+v for a prompt that keeps 2 of the last prompt's 3 tokens", p)
	}
	if p := c.Take([]int{1, 7, 7, 5, 6, 6}); p == nil || p.ID != 4 {
		t.Errorf("took %+v, want session 4 (keeps its last prompt)", p)
	}
	c.Put(&Parked{ID: 5, Tokens: []int{1, 7, 7, 5, 5, 5, 5, 5, 5, 5}, Prompt: 3})
	if p := c.Take([]int{1, 7, 7, 6}); p == nil || p.ID != 5 {
		t.Errorf("took %+v, want session 5 (keeps exactly its last prompt)", p)
	}
	if c.Len() != 0 {
		t.Errorf("%d still parked", c.Len())
	}
}

// TestConversationsBounds: at most Max sessions stay parked (the oldest
// go), none past MaxAge, and only the MaxDrafts newest keep their draft
// sessions (none when MaxDrafts is negative).
func TestConversationsBounds(t *testing.T) {
	now := time.Unix(1000, 0)
	c := Conversations{Max: 3, MaxAge: time.Minute, MaxDrafts: 1, now: func() time.Time { return now }}
	for id := uint64(1); id <= 5; id++ {
		c.Put(&Parked{ID: id, Tokens: []int{int(id)}, Draft: &hybrid.DraftSession{}})
		now = now.Add(20 * time.Second)
	}
	if c.Len() != 3 {
		t.Fatalf("%d parked, want Max = 3", c.Len())
	}
	if p := c.Take([]int{1}); p != nil {
		t.Errorf("the oldest session (1) is still parked")
	}
	if p := c.Take([]int{4}); p == nil || p.Draft != nil {
		t.Errorf("session 4: %+v; want it parked without its draft session (MaxDrafts 1)", p)
	}
	if p := c.Take([]int{5}); p == nil || p.Draft == nil {
		t.Errorf("session 5: %+v; want it parked with its draft session", p)
	}
	now = now.Add(2 * time.Minute)
	if c.Len() != 0 {
		t.Errorf("%d parked past MaxAge", c.Len())
	}
	none := Conversations{MaxDrafts: -1}
	none.Put(&Parked{ID: 6, Tokens: []int{6}, Draft: &hybrid.DraftSession{}})
	if p := none.Take([]int{6}); p == nil || p.Draft != nil {
		t.Errorf("session 6: %+v; want it parked without its draft session (MaxDrafts -1: none)", p)
	}
}

// TestConversationsLetGo: a parked session that expired, or that was
// taken, is not held by the Conversations any longer (its draft session
// can be a draft model's KV cache for a whole conversation).
func TestConversationsLetGo(t *testing.T) {
	now := time.Unix(1000, 0)
	c := Conversations{MaxAge: time.Minute, now: func() time.Time { return now }}
	var gone []weak.Pointer[Parked]
	for id := uint64(1); id <= 4; id++ {
		p := &Parked{ID: id, Tokens: []int{int(id)}, Draft: &hybrid.DraftSession{}}
		gone = append(gone, weak.Make(p))
		c.Put(p)
	}
	if p := c.Take([]int{4}); p == nil {
		t.Fatal("session 4 not parked")
	}
	now = now.Add(2 * time.Minute)
	if c.Len() != 0 {
		t.Fatalf("%d parked past MaxAge", c.Len())
	}
	runtime.GC()
	runtime.GC()
	for i, w := range gone {
		if w.Value() != nil {
			t.Errorf("session %d is still held after it expired or was taken", i+1)
		}
	}
	runtime.KeepAlive(&c)
}

// TestContinuingAfterFailedOpen: an Open that fails without the server's
// refusal (the connection lost after the handshake) leaves the parked
// session to try again (Remote.Continuing, which Generator parks again);
// one the server refuses does not.
func TestContinuingAfterFailedOpen(t *testing.T) {
	welcome := func(c net.Conn) bool {
		if _, _, err := wire.ReadFrame(c, wire.MaxHello); err != nil {
			return false
		}
		return wire.WriteFrame(c, wire.FrameWelcome, wire.AppendWelcome(nil, &wire.Welcome{Version: wire.ProtocolVersion, MaxFrame: 1 << 20, Vocab: 512, Context: 512})) == nil
	}
	for _, c := range []struct {
		name   string
		answer func(net.Conn)
		kept   bool
	}{
		{"connection lost", func(c net.Conn) {
			if welcome(c) {
				wire.ReadFrame(c, 1<<20)
			}
			c.Close()
		}, true},
		{"refused", func(c net.Conn) {
			if welcome(c) {
				wire.ReadFrame(c, 1<<20)
				wire.WriteFrame(c, wire.FrameError, wire.AppendError(nil, &wire.Error{Code: wire.ErrCodeNoSession, Message: "gone"}))
			}
			c.Close()
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := peer(t, c.answer)
			pk := &Parked{ID: 7, Tokens: []int{1, 2, 3}, Prompt: 2}
			p := hybrid.DefaultParams()
			r, err := Dial(context.Background(), Config{Addr: addr, Retries: 1, Backoff: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Drop()
			err = r.Open(context.Background(), Session{Params: p, Prefix: func() []int { return []int{1, 2, 3, 4} }, Continue: pk})
			if err == nil {
				t.Fatal("Open succeeded against a peer that never opens")
			}
			if got := r.Continuing(); (got == pk) != c.kept {
				t.Errorf("Continuing() = %v after %v; want the parked session kept: %v", got, err, c.kept)
			}
		})
	}
}
