// Package live serves a live web view of generations (`hlm sim --ui ADDR`,
// `hlm edge --ui ADDR`): a small page, embedded in the binary (plain HTML,
// JavaScript and CSS; no framework, nothing fetched from elsewhere), that
// streams each generation as it happens. Every token is coloured by its
// fate — skipped (committed by the device without verification), accepted
// draft, resampled after a rejection, bonus, or sampled by the LLM alone —
// and hovering it shows its uncertainty, importance, the bits of its upload
// and its acceptance probability. Running totals (transmission rate, uplink
// bits per token, tokens per virtual and per wall second) and a chart of
// throughput along the generation sit above the text.
//
// The source is the per-token trace of hybrid.Run (JSON lines, the same as
// --trace writes): Begin a Run, hand it to hybrid.Config.Trace (it is an
// io.Writer), End it with the result. The page receives events through
// Server-Sent Events on /events; a page opened late gets the whole history
// first, so nothing is missed.
//
// A Run can pace the generation: with Pace > 0 a token is not committed
// before its virtual time divided by Pace has passed on the wall clock, so
// a simulated generation unfolds at the speed of its link model.
package live

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"sync"
	"time"

	"github.com/hlmproject/hlm/hybrid"
)

//go:embed static
var static embed.FS

// View holds the generations' events and serves the page.
type View struct {
	mu      sync.Mutex
	events  [][]byte // every event so far, JSON
	subs    map[chan struct{}]bool
	nextRun int
}

// New makes an empty view.
func New() *View { return &View{subs: map[chan struct{}]bool{}} }

// RunInfo describes a generation.
type RunInfo struct {
	Title  string `json:"title"` // e.g. "hlm sim" or "hlm edge → server:7140"
	Method string `json:"method"`
	Seed   uint64 `json:"seed"`
	Prompt string `json:"prompt"`
	// Index and Total place the run among the command's prompts.
	Index int `json:"index"`
	Total int `json:"total"`
	// Text gives a token's text as it appears in the output, in order
	// (e.g. a tokenizer.StreamDecoder primed with the prompt); IsEnd
	// reports the ids that end a generation, shown as a mark (nil: none).
	Text  func(id int) string `json:"-"`
	IsEnd func(id int) bool   `json:"-"`
	// Pace > 0 holds each token until its virtual time / Pace has passed.
	Pace float64 `json:"pace"`
	// Done, when closed, ends the holding at once (the run's context, so
	// that an interrupted run does not wait out its tokens' virtual times;
	// nil: never).
	Done <-chan struct{} `json:"-"`
}

// Run is one generation being streamed; it is the trace writer.
type Run struct {
	v     *View
	id    int
	info  RunInfo
	start time.Time
	buf   []byte // an incomplete trace line
}

// Begin announces a generation and returns its trace writer.
func (v *View) Begin(info RunInfo) *Run {
	v.mu.Lock()
	v.nextRun++
	r := &Run{v: v, id: v.nextRun, info: info, start: time.Now()}
	v.mu.Unlock()
	v.publish(struct {
		Type string `json:"type"`
		Run  int    `json:"run"`
		RunInfo
	}{"run", r.id, info})
	return r
}

// token is a trace line as the page receives it.
type token struct {
	Type string `json:"type"` // "token" or "check"
	Run  int    `json:"run"`
	// The trace line's fields (hybrid.Run's trace).
	Round   int      `json:"round"`
	Pos     int      `json:"pos"`
	Token   int      `json:"token"`
	Kind    string   `json:"kind"`
	Time    float64  `json:"t"`
	U       *float64 `json:"u,omitempty"`
	Imp     *int     `json:"imp,omitempty"`
	Bits    int      `json:"bits,omitempty"`
	Support int      `json:"support,omitempty"`
	UpBits  int      `json:"up_bits,omitempty"`
	Accept  *float64 `json:"accept,omitempty"`
	// Added here.
	Text string  `json:"text,omitempty"`
	Wall float64 `json:"wall"` // wall seconds since Begin
}

// Write takes trace lines (JSON, one per line) and publishes each as an
// event. It never fails on content: a line it cannot read is skipped.
func (r *Run) Write(p []byte) (int, error) {
	r.buf = append(r.buf, p...)
	for {
		i := bytes.IndexByte(r.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := r.buf[:i]
		r.buf = r.buf[i+1:]
		var ev token
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		ev.Run, ev.Type = r.id, "token"
		if ev.Kind == "check" {
			ev.Type = "check"
		} else {
			r.pace(ev.Time)
			switch {
			case r.info.IsEnd != nil && r.info.IsEnd(ev.Token):
				ev.Text = "⏎" // the end of the sequence
			case r.info.Text != nil:
				ev.Text = r.info.Text(ev.Token)
			}
		}
		ev.Wall = time.Since(r.start).Seconds()
		r.v.publish(ev)
	}
}

// pace sleeps until virtual time t / Pace has passed since Begin, or
// until Done is closed.
func (r *Run) pace(t float64) {
	if !(r.info.Pace > 0) {
		return
	}
	d := time.Until(r.start.Add(time.Duration(t / r.info.Pace * 1e9)))
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-r.info.Done:
	}
}

// End publishes the run's summary (or its error).
func (r *Run) End(res hybrid.Result, err error) {
	res.Tokens, res.Text = nil, ""
	ev := struct {
		Type    string        `json:"type"`
		Run     int           `json:"run"`
		Summary hybrid.Result `json:"summary"`
		Error   string        `json:"error,omitempty"`
		Wall    float64       `json:"wall"`
	}{Type: "end", Run: r.id, Summary: res, Wall: time.Since(r.start).Seconds()}
	if err != nil {
		ev.Error = err.Error()
	}
	r.v.publish(ev)
}

// publish appends an event to the history and wakes the subscribers.
func (v *View) publish(ev any) {
	b, err := json.Marshal(ev)
	if err != nil {
		panic(fmt.Sprintf("live: event does not marshal: %v", err)) // programmer error: fixed types
	}
	v.mu.Lock()
	v.events = append(v.events, b)
	for c := range v.subs {
		select {
		case c <- struct{}{}:
		default: // already woken
		}
	}
	v.mu.Unlock()
}

// Handler serves the page (/), its script and style, and the event stream
// (/events).
func (v *View) Handler() http.Handler {
	mux := http.NewServeMux()
	files, _ := fs.Sub(static, "static")
	mux.Handle("/", http.FileServerFS(files))
	mux.HandleFunc("/events", v.serveEvents)
	return mux
}

// serveEvents streams every event so far, then new ones, as Server-Sent
// Events (one "data:" line of JSON each) until the client goes away.
func (v *View) serveEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	wake := make(chan struct{}, 1)
	v.mu.Lock()
	v.subs[wake] = true
	v.mu.Unlock()
	defer func() {
		v.mu.Lock()
		delete(v.subs, wake)
		v.mu.Unlock()
	}()
	sent := 0
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		v.mu.Lock()
		pending := v.events[sent:]
		v.mu.Unlock()
		for _, ev := range pending {
			if _, err := fmt.Fprintf(w, "data: %s\n\n", ev); err != nil {
				return
			}
		}
		sent += len(pending)
		fl.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-wake:
		case <-keepAlive.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
		}
	}
}
