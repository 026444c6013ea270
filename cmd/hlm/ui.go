package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/live"
	"github.com/hlmproject/hlm/tokenizer"
)

// uiFlags are the live view's flags of hlm sim and hlm edge.
type uiFlags struct {
	addr *string
	pace *float64 // nil: the command has no pacing (edge runs in real time)
}

func addUIFlags(fs *flag.FlagSet, pacing bool) *uiFlags {
	u := &uiFlags{addr: fs.String("ui", "", "serve a live view of the generation on this address (e.g. 127.0.0.1:8080; open it in a browser); the command keeps serving it after the run until interrupted")}
	if pacing {
		u.pace = fs.Float64("ui-pace", 1, "with --ui, play the generation at this multiple of its virtual clock (0: as fast as it computes)")
	}
	return u
}

// ui is a running live view.
type ui struct {
	view  *live.View
	url   string
	srv   *http.Server
	title string
	pace  float64
}

// start serves the view when --ui was given (nil otherwise).
func (u *uiFlags) start(title string, stderr io.Writer) (*ui, error) {
	if *u.addr == "" {
		return nil, nil
	}
	if u.pace != nil && !(*u.pace >= 0) {
		return nil, usageError{fmt.Errorf("--ui-pace %g: want a number ≥ 0", *u.pace)}
	}
	ln, err := listen("--ui", *u.addr)
	if err != nil {
		return nil, err
	}
	v := live.New()
	s := &ui{view: v, url: "http://" + browsable(ln.Addr()) + "/", srv: &http.Server{Handler: v.Handler(), ReadHeaderTimeout: 5 * time.Second}, title: title}
	if u.pace != nil {
		s.pace = *u.pace
	}
	go s.srv.Serve(ln)
	fmt.Fprintf(stderr, "%s: live view at %s\n", title, s.url)
	return s, nil
}

// browsable is addr with an unspecified host replaced by localhost.
func browsable(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

// begin announces prompt i's generation; its trace goes to the returned
// writer (and to trace, when set). Its pacing ends when ctx does.
func (s *ui) begin(ctx context.Context, p hybrid.Params, prompt string, i, n int, tok *tokenizer.Tokenizer, trace io.Writer) (*live.Run, io.Writer) {
	dec := tok.NewStreamDecoder()
	for _, id := range tok.Encode(prompt, true) {
		dec.Push(id)
	}
	run := s.view.Begin(live.RunInfo{Title: s.title, Method: p.Method, Seed: p.Seed, Prompt: prompt, Index: i, Total: n,
		Text: dec.Push, IsEnd: tok.IsEOG, Pace: s.pace, Done: ctx.Done()})
	if trace == nil {
		return run, run
	}
	return run, io.MultiWriter(trace, run)
}

// keep serves the view until ctx ends, then stops it.
func (s *ui) keep(ctx context.Context, stderr io.Writer) {
	fmt.Fprintf(stderr, "%s: done; the live view stays at %s until interrupted (Ctrl-C)\n", s.title, s.url)
	servingUntilSignal.Store(true)
	<-ctx.Done()
	s.srv.Close()
}
