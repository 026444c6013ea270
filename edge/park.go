package edge

import (
	"slices"
	"sync"
	"time"
)

// Conversations keeps the sessions of finished generations parked on the
// server (Remote.Park), so that a later generation whose prompt begins
// with one's tokens — a chat's next turn: the conversation so far and a
// new message — continues it and sends only the tokens after them, and
// the server evaluates only those. Safe for concurrent use; the zero value
// is ready, with the defaults below.
//
// A parked session is continued only when the new prompt keeps all of
// the prompt its last generation had (Parked.Prompt: the conversation up
// to its last message), or at least half of its tokens: a prompt that
// shares only a system message with another conversation does not cut
// that conversation short, while the next turn of a conversation whose
// last answer comes back re-tokenized otherwise (a client that trims it,
// a tokenization the model did not choose) still continues it. Each parked
// session is continued once (the continuation parks the longer one
// again). The server drops a parked session after its idle timeout
// (hlm serve --idle-timeout, 5 minutes by default) or to make room for a
// new one; continuing a session it dropped costs one refused Open, after
// which the whole prompt is sent.
type Conversations struct {
	// Max is the most sessions kept parked (default 16); parking one
	// more forgets the oldest.
	Max int
	// MaxAge is how long a parked session is tried (default 4 minutes,
	// inside the server's default idle timeout).
	MaxAge time.Duration
	// MaxDrafts is how many of the newest parked sessions keep the
	// device's draft-model session too (Parked.Draft), so that the next
	// turn does not evaluate the conversation on the device again either
	// (default 2; negative: none). Each holds the draft model's KV cache
	// for its tokens — for Qwen3-0.6B, 224 KiB per token at hlm's F32
	// cache — which the others give back.
	MaxDrafts int

	mu     sync.Mutex
	parked []parked // oldest first
	closed bool     // Close was called: park nothing more
	now    func() time.Time
}

type parked struct {
	p  *Parked
	at time.Time
}

func (c *Conversations) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// Take removes and returns the parked session that a generation with this
// prompt should continue (nil: none keeps its last prompt or half of its
// tokens): the one that keeps the most.
func (c *Conversations) Take(prompt []int) *Parked {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire()
	best, bestKeep := -1, 0
	for i, e := range c.parked {
		if k := e.p.Keep(prompt); k > bestKeep && (2*k >= len(e.p.Tokens) || (e.p.Prompt > 0 && k >= e.p.Prompt)) {
			best, bestKeep = i, k
		}
	}
	if best < 0 {
		return nil
	}
	p := c.parked[best].p
	c.parked = slices.Delete(c.parked, best, best+1)
	return p
}

// Put parks p (nil is ignored), forgetting the oldest beyond Max.
func (c *Conversations) Put(p *Parked) {
	if p == nil || len(p.Tokens) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.parked = append(c.parked, parked{p, c.clock()})
	if max := c.max(); len(c.parked) > max {
		c.parked = slices.Delete(c.parked, 0, len(c.parked)-max)
	}
	drafts := c.MaxDrafts
	if drafts == 0 {
		drafts = 2
	}
	for i := len(c.parked) - 1; i >= 0; i-- {
		if c.parked[i].p.Draft == nil {
			continue
		}
		if drafts > 0 {
			drafts--
		} else {
			c.parked[i].p.Draft = nil
		}
	}
}

// Close stops parking: the generations that end afterwards close their
// sessions on the server, as without Conversations (a program that is
// about to exit: nobody would continue them, and the server would keep
// them until its idle timeout). What is parked already stays.
func (c *Conversations) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
}

// parking reports whether a generation that ends now parks its session
// (Close was not called).
func (c *Conversations) parking() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.closed
}

// Len is the number of sessions parked.
func (c *Conversations) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire()
	return len(c.parked)
}

func (c *Conversations) max() int {
	if c.Max > 0 {
		return c.Max
	}
	return 16
}

// expire forgets the sessions parked longer than MaxAge. Called with c.mu
// held.
func (c *Conversations) expire() {
	age := c.MaxAge
	if age <= 0 {
		age = 4 * time.Minute
	}
	now := c.clock()
	i := 0
	for i < len(c.parked) && now.Sub(c.parked[i].at) > age {
		i++
	}
	// slices.Delete clears the places it vacates: the sessions it drops
	// (their draft sessions) are not held by the slice's array.
	c.parked = slices.Delete(c.parked, 0, i)
}
