package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hlmproject/hlm/cloud"
	"github.com/hlmproject/hlm/internal/words"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/model/llamacpp"
	"github.com/hlmproject/hlm/tensor"
)

func init() {
	register("serve", "run the cloud verifier: the LLM for many device sessions over TCP", runServe)
}

// listFlag collects a repeated string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError{fmt.Errorf("--log-level %q: want debug, info, warn or error", level)}
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usageError{fmt.Errorf("--log-format %q: want text or json", format)}
}

// serveHelp is the --help text of hlm serve.
const serveHelp = `
Serve the LLM to device sessions (hlm edge) over the hlm protocol
(docs/protocol.md). Each session has its own KV cache; verifications from
sessions that arrive together are evaluated in one batched pass. Sessions
survive a dropped connection for --idle-timeout so devices can resume.

--health ADDR serves http://ADDR/healthz for load balancers and
orchestrators: 200 only when the model is loaded and new sessions are
accepted, else 503 (JSON body: status, sessions, connections). SIGINT or
SIGTERM first drains: /healthz answers 503 while the server keeps serving
for --drain-delay; then the listener closes, every connection ends at a
round boundary (rounds being verified get their verdict) and the process
exits. Devices reconnect through the balancer to another replica and
continue with the same tokens (docs/deploy.md: replicas behind HAProxy).
A request to http://ADDR/drain (a Kubernetes preStop hook) starts the
drain alone: /healthz answers 503 from then on, for good, and the request
returns after --drain-delay; the signal that follows closes the server.
The health and metrics endpoints have no authentication: bind them to an
address only the balancer and the orchestrator reach, never the devices'
network.`

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", "[--listen ADDR] [--llm SPEC] [--auth-token T] [--tls-cert F --tls-key F] [--metrics ADDR] [--health ADDR]", serveHelp, stdout)
	f := addServeFlags(fs)
	var replicas listFlag
	fs.Var(&replicas, "replica", "draft model spec the replica method may use (repeatable)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return usageError{err}
	}
	if (*f.certFile == "") != (*f.keyFile == "") {
		return usageError{errors.New("--tls-cert and --tls-key go together")}
	}
	// The certificate is checked before the model loads: a server that
	// every device would refuse is not started.
	var cert *tls.Certificate
	if *f.certFile != "" {
		c, err := loadServeCert(*f.certFile, *f.keyFile, time.Now())
		if err != nil {
			return err
		}
		cert = &c
	}
	if *f.token == "" {
		*f.token = os.Getenv("HLM_AUTH_TOKEN")
	}
	log, err := newLogger(stderr, *f.logFormat, *f.logLevel)
	if err != nil {
		return err
	}
	// The announcements (listening, draining, stopped) are log records too
	// when the log is JSON: a JSON-lines reader gets nothing else.
	say := stderr
	if *f.logFormat == "json" {
		say = logLines{log}
	}
	// The health and metrics endpoints come up before the model loads, so
	// an orchestrator sees "loading" (503) rather than a refused connection.
	var current atomic.Pointer[cloud.Server]
	var prom *cloud.Prometheus
	if *f.metrics != "" {
		prom = cloud.NewPrometheus()
	}
	stop, err := serveEndpoints(*f.health, *f.metrics, current.Load, prom, say)
	if err != nil {
		return err
	}
	defer stop()

	tensor.SetThreads(*f.threads)
	llm, err := openModel(ctx, "the LLM", *f.llmSpec, *f.tokPath)
	if err != nil {
		return err
	}
	reps, err := openReplicas(replicas, *f.tokPath)
	if err != nil {
		return err
	}
	cfg := cloud.Config{LLM: llm, Replicas: reps, AuthToken: *f.token, MaxSessions: *f.maxSessions, MaxFrame: *f.maxFrame,
		MaxContext: *f.maxContext, IdleTimeout: *f.idle, MaxBatch: *f.maxBatch, BatchWindow: *f.window, PrefillChunk: f.prefillChunk(), DrainDelay: *f.drainDelay, Logger: log}
	if prom != nil {
		cfg.Metrics = prom
	}
	srv, err := cloud.New(cfg)
	if err != nil {
		return err
	}
	ln, err := listenTLS("--listen", *f.listen, cert)
	if err != nil {
		return err
	}
	if cert != nil {
		log.Info("TLS enabled", "cert", *f.certFile, "expires", cert.Leaf.NotAfter.Format(time.DateOnly))
	}
	if *f.token == "" {
		log.Warn("no --auth-token: any client can open sessions")
	}
	ctxNote := fmt.Sprintf("context %d", srv.Context())
	if srv.Context() < llm.Config().SeqLen {
		ctxNote = fmt.Sprintf("context %d per session (--max-context; the model's %d)", srv.Context(), llm.Config().SeqLen)
	}
	fmt.Fprintf(say, "hlm serve: listening on %s (LLM %s, vocabulary %d, %s)\n", ln.Addr(), llm.Name(), llm.Config().Vocab, ctxNote)
	if lc, ok := llm.(*llamacpp.Model); ok {
		announceLlamaCpp(lc, prom, *f.maxSessions, log, say)
	}
	if kv, ok := llm.(kvSizer); ok {
		k, v := kv.CacheTypes()
		announceKV(kv.KVBytes(srv.Context()), srv.Context(), cacheTypes(k, v), smallerCaches(k, v, llm.Config().HeadSize()), *f.maxSessions, memTotal("/proc/meminfo"), log, say)
	}
	current.Store(srv)
	if prom != nil {
		prom.AddParked(srv.Parked)
		prom.AddKVBytes(srv.KVBytes)
	}
	servingUntilSignal.Store(true)
	err = srv.ServeUntil(ctx, ln, *f.drainTimeout, func() {
		// main restored the signals' default action with the first one.
		fmt.Fprintf(say, "hlm serve: draining (%v), then finishing open rounds (at most %v); signal again to exit at once\n", *f.drainDelay, *f.drainTimeout)
	})
	fmt.Fprintln(say, "hlm serve: stopped")
	return err
}

// openReplicas opens the --replica drafts, on hlm's engine (the replica
// method recomputes the device's draft bit for bit).
func openReplicas(specs []string, tokPath string) ([]model.Model, error) {
	var reps []model.Model
	for _, r := range specs {
		if sp, err := model.ParseSpec(r); err == nil && sp.Backend != "" {
			return nil, usageError{fmt.Errorf("--replica %s: the replica method recomputes the device's draft distributions bit for bit, which needs hlm's engine on both sides: drop @%s", r, sp.Backend)}
		}
		m, err := llama.OpenSpec(r, tokPath)
		if err != nil {
			return nil, fmt.Errorf("replica %s: %w", r, err)
		}
		reps = append(reps, m)
	}
	return reps, nil
}

// announceLlamaCpp says where the LLM on llama.cpp runs and how many
// sessions its KV cache holds, warns of np above --max-sessions, and adds
// its slots to the metrics.
func announceLlamaCpp(lc *llamacpp.Model, prom *cloud.Prometheus, maxSessions int, log *slog.Logger, say io.Writer) {
	if prom != nil {
		prom.AddSlots(func() cloud.SlotStats {
			st := lc.Stats()
			used, total := lc.Sequences()
			return cloud.SlotStats{Used: used, Total: total, Decodes: st.Decodes, Evictions: st.Evictions, Restores: st.Restores, Recomputes: st.Recomputes}
		})
	}
	on := "the CPU"
	if acc := lc.Accelerators(); len(acc) > 0 {
		on = strings.Join(acc, "; ") + fmt.Sprintf(" and the CPU (ngl=%d)", lc.Spec().LlamaCpp.GPULayers)
	}
	if lc.Slots() > maxSessions {
		log.Warn(fmt.Sprintf("np=%d holds KV cache for more sessions than --max-sessions %d lets in: lower np, or raise --max-sessions", lc.Slots(), maxSessions))
	}
	fmt.Fprintf(say, "hlm serve: LLM on llama.cpp %s (%s), on %s: %s in its KV cache at once (np); more take turns, each evicted one %s\n", lc.Library().Version(), lc.Describe(), on, words.Plural(lc.Slots(), "session"), lc.Evicted())
}

// kvSizer is an LLM that says what a session's KV cache takes, and in
// which types (hlm's engine; llama.cpp allocates its cache at load and
// states it itself).
type kvSizer interface {
	KVBytes(positions int) int64
	CacheTypes() (k, v string)
}

// cacheTypes says how a cache holds its keys (k) and values (v): "f32",
// "f16", "keys in f16, values in f32".
func cacheTypes(k, v string) string {
	if k == v {
		return k
	}
	return fmt.Sprintf("keys in %s, values in %s", k, v)
}

// smallerCaches offers the spec options that hold a cache of keys in k and
// values in v in less memory on hlm's engine, for heads of headSize (Q8_0
// blocks need a multiple of 32): "@ctk=f16@ctv=f16 (2 bytes a value) or
// @ctk=q8_0@ctv=q8_0 (34 bytes per 32 values)"; "" when none does.
func smallerCaches(k, v string, headSize int) string {
	var offer []string
	if k == "f32" || v == "f32" {
		offer = append(offer, "@ctk=f16@ctv=f16 (2 bytes a value)")
	}
	if headSize%tensor.QK == 0 && (k != "q8_0" || v != "q8_0") {
		offer = append(offer, "@ctk=q8_0@ctv=q8_0 (34 bytes per 32 values)")
	}
	return strings.Join(offer, " or ")
}

// announceKV states what the sessions' KV caches may take — per, a
// session's at the full context ctx, in types (cacheTypes) — and warns
// when maxSessions of them would take more than the machine's memory, ram
// (0: unknown), offering smaller, the cache types that take less
// (smallerCaches).
func announceKV(per int64, ctx int, types, smaller string, maxSessions int, ram int64, log *slog.Logger, say io.Writer) {
	all := per * int64(maxSessions)
	fmt.Fprintf(say, "hlm serve: a session's KV cache takes up to %s (%d positions in %s), %s up to %s (--max-sessions)\n",
		words.Bytes(per), ctx, types, words.Plural(maxSessions, "session"), words.Bytes(all))
	if ram > 0 && all > ram {
		hint := "lower --max-sessions or --max-context"
		if smaller != "" {
			hint += ", or shrink the cache with the LLM spec's " + smaller
		}
		log.Warn(fmt.Sprintf("%s at context %d may hold %s of KV cache, more than this machine's %s of memory: %s",
			words.Plural(maxSessions, "session"), ctx, words.Bytes(all), words.Bytes(ram), hint))
	}
}

// memTotal is the machine's memory as the kernel states it in path
// (/proc/meminfo: "MemTotal: N kB"), 0 where it cannot be read.
func memTotal(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				if n, err := strconv.ParseInt(f[0], 10, 64); err == nil && n > 0 {
					return n << 10
				}
			}
			return 0
		}
	}
	return 0
}

// serveEndpoints serves the health endpoint (/healthz, /drain) and the
// Prometheus metrics on their addresses (one listener when they share
// one); stop closes them.
func serveEndpoints(health, metrics string, current func() *cloud.Server, prom *cloud.Prometheus, stderr io.Writer) (stop func(), err error) {
	endpoints := map[string]*http.ServeMux{}
	mux := func(addr string) *http.ServeMux {
		if endpoints[addr] == nil {
			endpoints[addr] = http.NewServeMux()
		}
		return endpoints[addr]
	}
	if prom != nil {
		mux(metrics).Handle("/metrics", prom.Handler())
	}
	if health != "" {
		h := cloud.HealthHandler(current)
		mux(health).Handle("/healthz", h)
		mux(health).Handle("/drain", h)
	}
	var servers []*http.Server
	stop = func() {
		for _, s := range servers {
			s.Close()
		}
	}
	for addr, m := range endpoints {
		flag := "--health"
		if addr != health {
			flag = "--metrics"
		}
		hln, err := listen(flag, addr)
		if err != nil {
			stop()
			return nil, err
		}
		hsrv := &http.Server{Handler: m, ReadHeaderTimeout: 5 * time.Second}
		go hsrv.Serve(hln)
		servers = append(servers, hsrv)
		var what []string
		if addr == health {
			what = append(what, "health on http://"+hln.Addr().String()+"/healthz")
		}
		if addr == metrics {
			what = append(what, "metrics on http://"+hln.Addr().String()+"/metrics")
		}
		fmt.Fprintf(stderr, "hlm serve: %s\n", strings.Join(what, ", "))
	}
	return stop, nil
}

// listenTLS listens on addr, with TLS when a certificate is given.
func listenTLS(flag, addr string, cert *tls.Certificate) (net.Listener, error) {
	ln, err := listen(flag, addr)
	if err != nil || cert == nil {
		return ln, err
	}
	return tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12}), nil
}

// loadServeCert loads --tls-cert and --tls-key and refuses a certificate
// that is not valid at now (expired, or not yet valid): devices would
// refuse every handshake. Its Leaf is set.
func loadServeCert(certFile, keyFile string, now time.Time) (tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return cert, fmt.Errorf("--tls-cert %s with --tls-key %s: %w", certFile, keyFile, err)
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return cert, fmt.Errorf("--tls-cert %s: %w", certFile, err)
		}
	}
	const stamp = time.DateTime + " MST"
	nb, na := cert.Leaf.NotBefore.UTC().Format(stamp), cert.Leaf.NotAfter.UTC().Format(stamp)
	switch {
	case now.After(cert.Leaf.NotAfter):
		return cert, fmt.Errorf("--tls-cert %s expired on %s (valid from %s): devices would refuse it; make a new one with hlm tls-cert (and give it to the devices' --tls-ca)", certFile, na, nb)
	case now.Before(cert.Leaf.NotBefore):
		return cert, fmt.Errorf("--tls-cert %s is not valid before %s (until %s) and it is %s here: check this machine's clock, or make a new certificate with hlm tls-cert", certFile, nb, na, now.UTC().Format(stamp))
	}
	return cert, nil
}

// serveFlags are hlm serve's flags.
type serveFlags struct {
	listen, llmSpec, tokPath, token, certFile, keyFile, metrics, health, logFormat, logLevel *string
	drainDelay, drainTimeout, idle, window                                                   *time.Duration
	maxSessions, maxFrame, maxContext, maxBatch, chunk, threads                              *int
}

// prefillChunk is --prefill-chunk as cloud.Config.PrefillChunk (whose 0
// is the default, and negative the whole prompt).
func (f *serveFlags) prefillChunk() int {
	if *f.chunk == 0 {
		return -1
	}
	return *f.chunk
}

// check refuses the limits that mean nothing (cloud.Config would put its
// defaults in their place, unlike what was asked).
func (f *serveFlags) check() error {
	for _, c := range []struct {
		name   string
		v, min int
	}{{"max-sessions", *f.maxSessions, 1}, {"max-batch", *f.maxBatch, 1}, {"max-frame", *f.maxFrame, 1 << 10}, {"max-context", *f.maxContext, 0}, {"prefill-chunk", *f.chunk, 0}} {
		if c.v < c.min {
			return fmt.Errorf("--%s %d: want at least %d", c.name, c.v, c.min)
		}
	}
	if *f.chunk == 1 {
		return errors.New("--prefill-chunk 1: want 0 (whole prompts) or at least 2")
	}
	for _, c := range []struct {
		name string
		v    time.Duration
		zero bool // 0 allowed
	}{{"idle-timeout", *f.idle, false}, {"drain-delay", *f.drainDelay, true}, {"drain-timeout", *f.drainTimeout, true}} {
		if c.v < 0 || c.v == 0 && !c.zero {
			return fmt.Errorf("--%s %v: want a positive duration", c.name, c.v)
		}
	}
	return nil
}

// addServeFlags declares them.
func addServeFlags(fs *flag.FlagSet) *serveFlags {
	addLlamaLibFlag(fs)
	return &serveFlags{
		listen:       fs.String("listen", "127.0.0.1:7140", "address to listen on"),
		llmSpec:      fs.String("llm", builtin.DefaultLLM, "LLM model spec"),
		tokPath:      fs.String("tokenizer", "", "tokenizer file, when not found with the model"),
		token:        fs.String("auth-token", "", "token devices must present (default: $HLM_AUTH_TOKEN; empty: none)"),
		certFile:     fs.String("tls-cert", "", "TLS certificate (PEM); with --tls-key enables TLS (see hlm tls-cert)"),
		keyFile:      fs.String("tls-key", "", "TLS private key (PEM)"),
		metrics:      fs.String("metrics", "", "serve Prometheus metrics on this address (e.g. 127.0.0.1:9140); the same address as --health shares its port"),
		health:       fs.String("health", "", "serve the health endpoint (/healthz, /drain) on this address (e.g. 0.0.0.0:9141)"),
		drainDelay:   fs.Duration("drain-delay", 0, "on SIGTERM, keep serving this long with /healthz answering 503 before closing (at least the balancer's check interval × fall)"),
		drainTimeout: fs.Duration("drain-timeout", 30*time.Second, "on shutdown, wait this long for rounds being verified before closing connections abruptly"),
		maxSessions:  fs.Int("max-sessions", 64, "concurrent sessions (when full, a new session evicts the least recently used one that has no connection)"),
		maxFrame:     fs.Int("max-frame", 4<<20, "largest frame accepted, bytes"),
		maxContext:   fs.Int("max-context", 0, "positions per session (0: the model's context length; on llama.cpp that is c=, which also sizes the KV cache: lower c= to save memory, --max-context only caps sessions)"),
		idle:         fs.Duration("idle-timeout", 5*time.Minute, "drop a session after this long without traffic"),
		maxBatch:     fs.Int("max-batch", 32, "sessions evaluated in one LLM pass (1 disables batching)"),
		chunk:        fs.Int("prefill-chunk", cloud.DefaultPrefillChunk, "most tokens of a session's prompt evaluated in one LLM pass: a longer prompt takes a pass per chunk, and the other sessions' rounds go on in between (0: the whole prompt in one pass; else at least 2)"),
		window:       fs.Duration("batch-window", cloud.DefaultBatchWindow, "longest a batch waits for the other connected devices' uploads (ends as soon as all have joined; a lone device never waits; negative: never wait)"),
		threads:      threadsFlag(fs, "worker threads for the model (0: all cores; a @llama.cpp model takes them unless its spec says t=N)"),
		logFormat:    fs.String("log-format", "text", "log format: text or json"),
		logLevel:     fs.String("log-level", "info", "log level: debug, info, warn, error"),
	}
}

// logLines logs each line written to it (hlm serve's announcements) as an
// Info record, without the "hlm serve: " prefix.
type logLines struct{ log *slog.Logger }

func (l logLines) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		l.log.Info(strings.TrimPrefix(line, "hlm serve: "))
	}
	return len(p), nil
}
