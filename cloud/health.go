package cloud

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"time"
)

// Health is the server's state as a load balancer or an orchestrator sees
// it (hlm serve --health).
type Health struct {
	// Status is "ok" when the server accepts new sessions; otherwise
	// "starting" (Serve not called yet), "full" (MaxSessions sessions, all
	// with a connection),
	// "draining" (Drain was called) or "stopped" (Shutdown was called).
	Status      string `json:"status"`
	Sessions    int    `json:"sessions"`
	Connections int    `json:"connections"`
	InRound     int    `json:"in_round"` // connections whose upload is being verified
}

// Ready reports whether h.Status is "ok".
func (h Health) Ready() bool { return h.Status == "ok" }

// Health reports the server's state.
func (s *Server) Health() Health {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := Health{Status: "ok", Sessions: len(s.sessions), Connections: len(s.conns)}
	for _, st := range s.conns {
		if st.inRound {
			h.InRound++
		}
	}
	attached := 0 // detached sessions make room when needed (evictDetached)
	for _, ss := range s.sessions {
		if ss.conn != nil {
			attached++
		}
	}
	switch {
	case s.closing:
		h.Status = "stopped"
	case !s.draining.IsZero():
		h.Status = "draining"
	case !s.serving:
		h.Status = "starting"
	case attached >= s.cfg.MaxSessions:
		h.Status = "full"
	}
	return h
}

// Drain makes the health endpoint answer 503 from now on while the server
// keeps serving normally, and returns DrainDelay after the first call (or
// when ctx ends): the time a load balancer needs to notice and stop sending
// new connections. Shutdown then ends the connections at round boundaries.
// Drain is idempotent: later calls wait for the same moment.
func (s *Server) Drain(ctx context.Context) error {
	s.mu.Lock()
	if s.draining.IsZero() {
		s.draining = time.Now()
		s.cfg.Logger.Info("draining: health answers 503", "delay", s.cfg.DrainDelay)
	}
	until := s.draining.Add(s.cfg.DrainDelay)
	s.mu.Unlock()
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// HealthHandler serves the health endpoint of the server that server
// returns (nil while it is being set up, e.g. loading its model):
//
//	GET /healthz   200 and the Health as JSON when Ready, else 503 (a
//	               server not set up yet reports status "loading")
//	GET|POST /drain  Drain: 503 on /healthz from now on; answers when the
//	               drain delay has passed (for a Kubernetes preStop hook)
func HealthHandler(server func() *Server) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		h := Health{Status: "loading"}
		if s := server(); s != nil {
			h = s.Health()
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !h.Ready() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		json.NewEncoder(w).Encode(h)
	})
	drain := func(w http.ResponseWriter, r *http.Request) {
		s := server()
		if s == nil {
			http.Error(w, "not serving yet", http.StatusServiceUnavailable)
			return
		}
		if err := s.Drain(r.Context()); err != nil {
			return // the client went away
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(s.Health())
	}
	// Method patterns: other methods get 405 with an Allow header.
	mux.HandleFunc("GET /drain", drain)
	mux.HandleFunc("POST /drain", drain)
	return mux
}

// ServeUntil serves ln until ctx ends, then drains and shuts down: onDrain
// (if set) is called as the drain starts; /healthz answers 503 while the
// server keeps serving for the configured drain delay, then the listener
// closes and every connection ends at a round boundary, waiting at most
// timeout for rounds being verified. ctx does not stop Serve itself, so
// sessions keep being served through the drain.
func (s *Server) ServeUntil(ctx context.Context, ln net.Listener, timeout time.Duration, onDrain func()) error {
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(context.Background(), ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	if onDrain != nil {
		onDrain()
	}
	s.Drain(context.Background())
	s.cfg.Logger.Info("shutting down", "timeout", timeout)
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := s.Shutdown(sctx)
	<-errc
	return err
}
