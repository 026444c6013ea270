// Command capacity measures how many verified positions per second an
// LLM server gives N simulated devices, for bench/llamacpp.sh
// (docs/BENCHMARKS.md, "hlm serve on llama.cpp").
//
// Three kinds of run, one per process (so that the peak resident memory
// is the run's own), each printing one JSON line:
//
//	capacity serve --llm SPEC --devices N    hlm serve's code (cloud.Server, in this
//	                                         process, on loopback) with its LLM on hlm's
//	                                         engine or on llama.cpp (SPEC@llama.cpp), and N
//	                                         devices sending rounds of L fixed random drafts
//	                                         (the coupled method: token ids only, so the
//	                                         devices cost nothing and every round verifies
//	                                         L+1 positions whatever is accepted); with
//	                                         -chat N each device holds a conversation whose
//	                                         every turn adds N tokens and verifies -reply
//	                                         positions, continuing its session
//	                                         (-continue, edge.Parked) or opening one with
//	                                         the whole conversation
//	capacity llama-server --url URL --devices N
//	                                         the LLM-only reference: N clients each asking
//	                                         llama-server (started by the script with -np N)
//	                                         for completions, decoding one token per step
//	capacity report FILE.jsonl               the Markdown tables of docs/BENCHMARKS.md (chat
//	                                         mode's runs in a table of their own) from
//	                                         the lines of the runs, with the committed tokens
//	                                         per second each hybrid server would give at
//	                                         acceptance 0.5/0.7/0.9 and the break-even
//	                                         acceptance against LLM-only serving
//
// The same batches run by llama.cpp alone (no Go, no protocol) come from
// bench/llamacpp/rounds.cpp, which prints the same JSON line.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hlmproject/hlm/cloud"
	"github.com/hlmproject/hlm/edge"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model/engine"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/model/llamacpp"
	"github.com/hlmproject/hlm/tensor"
	"github.com/hlmproject/hlm/wire"
)

// Result is one run: what the JSON line holds.
type Result struct {
	Kind      string  `json:"kind"` // "hlm serve", "llama.cpp direct", "llama-server"
	Engine    string  `json:"engine"`
	Model     string  `json:"model"`
	Devices   int     `json:"devices"`
	L         int     `json:"l"`
	Seconds   float64 `json:"seconds"`
	Rounds    int     `json:"rounds"`    // verifications (hybrid) or decode steps per client (LLM-only)
	Positions int     `json:"positions"` // verified positions (hybrid) or decoded tokens (LLM-only)
	P50ms     float64 `json:"p50_ms"`    // round latency (hybrid) or time per decoded token (LLM-only)
	P99ms     float64 `json:"p99_ms"`
	PeakRSSMB float64 `json:"peak_rss_mb"`
	MeanBatch float64 `json:"mean_batch,omitempty"` // hlm serve: sessions per evaluation
	// Chat mode (-chat): tokens each turn adds, whether turns continue
	// their session, and the latency of the turns' first rounds (their
	// prompt's prefill), which Rounds and P50ms leave out.
	Chat       int     `json:"chat,omitempty"`
	Continue   bool    `json:"continue,omitempty"`
	FirstP50ms float64 `json:"first_p50_ms,omitempty"`
	FirstP99ms float64 `json:"first_p99_ms,omitempty"`
	Turns      int     `json:"turns,omitempty"`               // sessions whose first round was in the window
	OpenBytes  float64 `json:"open_bytes_per_turn,omitempty"` // their Open frames' mean size
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: capacity serve|llama-server|report …")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = runServe(os.Args[2:])
	case "llama-server":
		err = runLlamaServer(os.Args[2:])
	case "report":
		err = runReport(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "capacity:", err)
		os.Exit(1)
	}
}

func runServe(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	spec := fs.String("llm", "", "LLM model spec")
	devices := fs.Int("devices", 1, "simulated devices")
	L := fs.Int("l", 4, "drafts per round")
	dur := fs.Duration("duration", 20*time.Second, "measured time")
	prompt := fs.Int("prompt", 32, "prompt tokens per session")
	threads := fs.Int("threads", 2, "threads of hlm's engine")
	lib := fs.String("llama-lib", "", "libllama for @llama.cpp specs")
	maxCtx := fs.Int("ctx", 512, "positions a session reaches before its device opens a new one")
	window := fs.Duration("batch-window", cloud.DefaultBatchWindow, "hlm serve's --batch-window")
	chunk := fs.Int("prefill-chunk", cloud.DefaultPrefillChunk, "hlm serve's --prefill-chunk (0: the whole prompt in one pass)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the measured window to this file (go tool pprof)")
	memProfile := fs.String("memprofile", "", "write a heap profile at the end of the window to this file (go tool pprof)")
	var c chat
	fs.IntVar(&c.add, "chat", 0, "chat mode: each turn of a device's conversation adds this many tokens (0: off, every session a new prompt)")
	fs.IntVar(&c.reply, "reply", 64, "chat mode: positions each turn verifies (on average: from half to 3/2 of it)")
	fs.BoolVar(&c.keep, "continue", true, "chat mode: a turn continues the last turn's session (false: opens one with the whole conversation)")
	fs.Parse(args)
	if *lib != "" {
		llamacpp.SetLibrary(*lib)
	}
	tensor.SetThreads(*threads)
	llm, err := engine.OpenSpec(*spec, "")
	if err != nil {
		return err
	}
	bm := &batchMetrics{}
	srv, err := cloud.New(cloud.Config{LLM: llm, MaxBatch: max(*devices, 1), MaxSessions: 2 * *devices, BatchWindow: *window, PrefillChunk: cmp.Or(*chunk, -1), Metrics: bm})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go srv.Serve(context.Background(), ln)
	defer srv.Shutdown(context.Background())
	ctxLen := min(llm.Config().SeqLen, *maxCtx)
	if *prompt < 1 || *prompt+*L+1 >= ctxLen {
		return fmt.Errorf("-prompt %d with -l %d leaves no round in a context of %d (-ctx, and the model's)", *prompt, *L, ctxLen)
	}
	if c.add < 0 || (c.add > 0 && (c.reply < 2*(*L+1) || *prompt+3*c.reply+c.add >= ctxLen)) {
		return fmt.Errorf("-chat %d -reply %d: want a reply of at least 2(-l+1) positions and two turns in a context of %d", c.add, c.reply, ctxLen)
	}
	vocab := llm.Config().Vocab
	tokFP := ""
	if t := llm.Tokenizer(); t != nil {
		tokFP = t.Fingerprint()
	}
	w := startWindow(*devices, *dur, *cpuProfile)
	t := runDevices(ln.Addr().String(), tokFP, vocab, ctxLen, *prompt, *L, *devices, c, w)
	if t.err != nil {
		return t.err
	}
	<-w.profiled
	if *memProfile != "" {
		if err := writeHeapProfile(*memProfile); err != nil {
			return err
		}
	}
	engineName := "hlm"
	if _, ok := llm.(*llamacpp.Model); ok {
		engineName = "llama.cpp backend"
	}
	r := Result{Kind: "hlm serve", Engine: engineName, Model: modelName(*spec), Devices: *devices, L: *L, Seconds: dur.Seconds(),
		Rounds: t.rounds, Positions: t.rounds * (*L + 1), PeakRSSMB: peakRSS()}
	r.P50ms, r.P99ms = quantile(t.lat, 0.5), quantile(t.lat, 0.99)
	if c.add > 0 {
		r.Chat, r.Continue, r.Turns = c.add, c.keep, len(t.first)
		if r.Turns > 0 {
			r.OpenBytes = float64(t.openBytes) / float64(r.Turns)
		}
		r.FirstP50ms, r.FirstP99ms = quantile(t.first, 0.5), quantile(t.first, 0.99)
	}
	bm.mu.Lock()
	if bm.n > 0 {
		r.MeanBatch = float64(bm.sum) / float64(bm.n)
	}
	bm.mu.Unlock()
	return json.NewEncoder(os.Stdout).Encode(r)
}

// writeHeapProfile writes the live heap (after a collection) to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// window is the measured time of a capacity run. Its clock starts when
// every device has opened its session and had its first round (the
// prompt's prefill, which 32 devices' prompts make long on two cores)
// verified.
type window struct {
	ready           sync.WaitGroup // a device's first round
	open            chan struct{}  // closed when the clock starts
	start, deadline time.Time      // set before open is closed
	profiled        chan struct{}  // closed after the profile (if any) is written
}

// startWindow starts the window of devices' runs, dur long, with a CPU
// profile of it written to profile (none: "").
func startWindow(devices int, dur time.Duration, profile string) *window {
	w := &window{open: make(chan struct{}), profiled: make(chan struct{})}
	w.ready.Add(devices)
	go func() {
		defer close(w.profiled)
		w.ready.Wait()
		if profile != "" {
			if f, err := os.Create(profile); err == nil {
				if pprof.StartCPUProfile(f) == nil {
					defer f.Close()
					defer pprof.StopCPUProfile()
				}
			}
		}
		w.start = time.Now()
		w.deadline = w.start.Add(dur)
		close(w.open)
		if profile != "" {
			time.Sleep(dur) // the measured window, profiled
		}
	}()
	return w
}

// wait blocks until the clock starts and returns the window.
func (w *window) wait() (time.Time, time.Time) {
	<-w.open
	return w.start, w.deadline
}

// tally is what the devices measured in the window.
type tally struct {
	mu        sync.Mutex
	rounds    int
	lat       []float64 // per round, in milliseconds
	first     []float64 // per session's first round (chat mode), in milliseconds
	openBytes int64     // Open frames sent in the window (chat mode)
	err       error     // the first device's error
}

// chat is the chat mode of a capacity run (-chat, -reply, -continue).
type chat struct {
	add, reply int
	keep       bool
}

// runDevices runs devices simulated devices against the server at addr
// until w's deadline, each opening a new session when its context is
// full — or, in chat mode, at each turn of its conversation.
func runDevices(addr, tokFP string, vocab, ctxLen, promptLen, L, devices int, c chat, w *window) *tally {
	t := &tally{}
	var wg sync.WaitGroup
	for d := range devices {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(d), 17))
			first := true
			var conv []int
			var cont *edge.Parked
			for {
				if conv == nil {
					n := promptLen
					if c.add > 0 && first {
						// The devices' first conversations start at
						// random lengths, so that they are not all long
						// at once (each turn of one lengthens it by the
						// same amount).
						n += rng.IntN(max(1, ctxLen-promptLen-c.add-3*c.reply))
					}
					conv, cont = randomTokens(rng, vocab, n), nil
				}
				ses := sessionRun{prompt: conv, cont: cont, upto: ctxLen}
				another := false // the conversation has a turn after this one
				if c.add > 0 {
					// Replies of R/2 to 3R/2 positions, so that the
					// devices' turns do not all begin in the same batch.
					ses.upto = min(ctxLen, len(conv)+c.reply/2+rng.IntN(c.reply+1))
					// A turn follows when it fits (the session is
					// parked for it).
					another = ses.upto+c.add+3*c.reply/2 < ctxLen
					ses.park = c.keep && another
				}
				out, err := device(addr, tokFP, rng, vocab, L, ses, func() (time.Time, time.Time) {
					if first {
						first = false
						w.ready.Done()
					}
					return w.wait()
				})
				t.mu.Lock()
				t.rounds += out.rounds
				t.lat = append(t.lat, out.lat...)
				if out.first > 0 {
					t.first = append(t.first, out.first)
					t.openBytes += out.openBytes
				}
				if err != nil && t.err == nil {
					t.err = err
				}
				t.mu.Unlock()
				if err != nil {
					if first {
						w.ready.Done()
					}
					return
				}
				if _, deadline := w.wait(); !time.Now().Before(deadline) {
					return
				}
				conv, cont = nil, nil
				if another {
					conv = append(out.seq, randomTokens(rng, vocab, c.add)...)
					cont = out.parked
				}
			}
		}()
	}
	wg.Wait()
	return t
}

// randomTokens are n token ids drawn from a vocabulary of vocab.
func randomTokens(rng *rand.Rand, vocab, n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = rng.IntN(vocab)
	}
	return ids
}

// batchMetrics records the sizes of the server's batches.
type batchMetrics struct {
	cloud.NopMetrics
	mu     sync.Mutex
	n, sum int
}

func (m *batchMetrics) Batch(size int) { m.mu.Lock(); m.n++; m.sum += size; m.mu.Unlock() }

// sessionRun is one session of a simulated device: its prompt, the parked
// session it continues (chat mode; nil: a new one), the positions at which
// it ends, and whether it parks its session at the end for the next turn.
type sessionRun struct {
	prompt []int
	cont   *edge.Parked
	upto   int
	park   bool
}

// sessionOut is what a session measured: its rounds inside the window
// (its first round left out) and their latencies in milliseconds, its
// first round's latency when inside the window (0 otherwise) and the
// bytes of its Open then, its sequence at the end, and its parked session.
type sessionOut struct {
	rounds    int
	lat       []float64
	first     float64
	openBytes int64
	seq       []int
	parked    *edge.Parked
}

// device runs one session until it reaches ses.upto positions or the
// deadline: rounds of L random drafts (coupled). After its first round
// (the prompt's prefill) it calls window, which returns the measured
// window once every device is ready.
func device(addr, tokFP string, rng *rand.Rand, vocab, L int, ses sessionRun, window func() (time.Time, time.Time)) (sessionOut, error) {
	p := hybrid.DefaultParams()
	p.Method, p.Seed = hybrid.Coupled, rng.Uint64()
	seq := slices.Clone(ses.prompt)
	var out sessionOut
	rem, err := edge.Connect(context.Background(), edge.Config{Addr: addr}, edge.Session{Params: p, Tokenizer: tokFP, Prefix: func() []int { return seq }, Continue: ses.cont})
	if err != nil {
		return out, err
	}
	defer rem.Close()
	var start, deadline time.Time
	for r := 1; len(seq)+L+1 < ses.upto; r++ {
		up := &wire.Upload{Round: uint32(r)}
		for range L {
			up.Drafts = append(up.Drafts, wire.Draft{Token: int32(rng.IntN(vocab))})
		}
		t0 := time.Now()
		v, err := rem.Verify(context.Background(), up)
		if err != nil {
			return out, err
		}
		t1 := time.Now()
		for _, d := range up.Drafts[:v.Accepted] {
			seq = append(seq, int(d.Token))
		}
		seq = append(seq, int(v.Token))
		if r == 1 {
			start, deadline = window()
			if !t0.Before(start) && t1.Before(deadline) {
				out.first = float64(t1.Sub(t0).Microseconds()) / 1000
				out.openBytes = rem.Stats.OpenBytes
			}
			continue
		}
		if !t1.Before(deadline) {
			break
		}
		if !t0.Before(start) {
			out.rounds++
			out.lat = append(out.lat, float64(t1.Sub(t0).Microseconds())/1000)
		}
	}
	out.seq = seq
	if ses.park {
		out.parked = rem.Park(seq)
	}
	return out, nil
}

func runLlamaServer(args []string) error {
	fs := flag.NewFlagSet("llama-server", flag.ExitOnError)
	url := fs.String("url", "http://127.0.0.1:8080", "llama-server's address")
	devices := fs.Int("devices", 1, "concurrent clients")
	dur := fs.Duration("duration", 20*time.Second, "measured time")
	prompt := fs.Int("prompt", 32, "prompt tokens per request")
	predict := fs.Int("predict", 32, "tokens per request")
	vocabFrom := fs.String("vocab-from", "", "the GGUF file whose vocabulary the token ids are drawn from")
	model := fs.String("model", "", "model name for the report")
	pid := fs.Int("pid", 0, "llama-server's pid, for its peak memory")
	fs.Parse(args)
	tok, err := llama.LoadTokenizer(*vocabFrom, 0)
	if err != nil {
		return err
	}
	vocab := tok.VocabSize()
	var mu sync.Mutex
	var perToken []float64
	tokens := 0
	var firstErr error
	// Every client keeps a request in flight until the duration has passed,
	// and the last ones finish: the decoded tokens of all requests over the
	// time from the first request to the last answer (their prompts' 32
	// tokens, batched by llama-server, inside it).
	start := time.Now()
	deadline := start.Add(*dur)
	var wg sync.WaitGroup
	for d := range *devices {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(d), 23))
			for time.Now().Before(deadline) {
				ids := make([]int, *prompt)
				for i := range ids {
					ids[i] = 1 + rng.IntN(vocab-1)
				}
				body, _ := json.Marshal(map[string]any{"prompt": ids, "n_predict": *predict, "ignore_eos": true,
					"temperature": 1.0, "cache_prompt": false, "seed": rng.IntN(1 << 30)})
				resp, err := http.Post(*url+"/completion", "application/json", bytes.NewReader(body))
				if err != nil {
					mu.Lock()
					firstErr = cmpErr(firstErr, err)
					mu.Unlock()
					return
				}
				var out struct {
					Timings struct {
						PredictedN  int     `json:"predicted_n"`
						PredictedMS float64 `json:"predicted_ms"`
					} `json:"timings"`
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != 200 {
					mu.Lock()
					firstErr = cmpErr(firstErr, fmt.Errorf("llama-server: %s: %s", resp.Status, b))
					mu.Unlock()
					return
				}
				mu.Lock()
				tokens += out.Timings.PredictedN
				if out.Timings.PredictedN > 0 {
					perToken = append(perToken, out.Timings.PredictedMS/float64(out.Timings.PredictedN))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	r := Result{Kind: "llama-server", Engine: "llama.cpp", Model: *model, Devices: *devices, Seconds: time.Since(start).Seconds(),
		Rounds: tokens / max(*devices, 1), Positions: tokens, PeakRSSMB: procPeakRSS(*pid)}
	r.P50ms, r.P99ms = quantile(perToken, 0.5), quantile(perToken, 0.99)
	return json.NewEncoder(os.Stdout).Encode(r)
}

func cmpErr(old, err error) error {
	if old != nil {
		return old
	}
	return err
}

func modelName(spec string) string {
	base := spec[strings.LastIndexByte(spec, '/')+1:]
	name, _, _ := strings.Cut(base, "@")
	return strings.TrimSuffix(name, ".gguf")
}

// quantile is the q-quantile of x (0 when x is empty: JSON has no NaN).
func quantile(x []float64, q float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := slices.Clone(x)
	sort.Float64s(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// peakRSS is this process's peak resident memory in MB.
func peakRSS() float64 { return procPeakRSS(os.Getpid()) }

// procPeakRSS reads VmHWM of a process (0 when it cannot).
func procPeakRSS(pid int) float64 {
	if pid <= 0 {
		return 0
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}

// runReport prints the tables from the JSON lines of the runs.
func runReport(args []string) error {
	if len(args) != 1 {
		return errors.New("report FILE.jsonl")
	}
	b, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	var rs []Result
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return fmt.Errorf("%q: %w", line, err)
		}
		rs = append(rs, r)
	}
	var chats []Result
	rs = slices.DeleteFunc(rs, func(r Result) bool {
		if r.Chat > 0 {
			chats = append(chats, r)
		}
		return r.Chat > 0
	})
	chatTable(chats)
	models := []string{}
	for _, r := range rs {
		if !slices.Contains(models, r.Model) {
			models = append(models, r.Model)
		}
	}
	for _, m := range models {
		fmt.Printf("\n**%s** (L = 4: every round verifies 5 positions)\n\n", m)
		fmt.Println("| server | N | positions/s | rounds/s | p50 ms | p99 ms | peak RSS MB |")
		fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
		for _, r := range rs {
			if r.Model != m {
				continue
			}
			name := r.Kind
			if r.Kind == "hlm serve" {
				name += " (" + r.Engine + ")"
			}
			rounds := float64(r.Rounds) / r.Seconds
			if r.Kind == "llama-server" {
				rounds = float64(r.Positions) / r.Seconds / float64(r.Devices) // decode steps per client
				name += " (LLM-only, tokens decoded)"
			}
			fmt.Printf("| %s | %d | %.1f | %.1f | %.1f | %.1f | %.0f |\n", name, r.Devices, float64(r.Positions)/r.Seconds, rounds, r.P50ms, r.P99ms, r.PeakRSSMB)
		}
		fmt.Println()
		fmt.Println("| N | hybrid server | committed tokens/s at acceptance 0.5 / 0.7 / 0.9 | llama-server -np N decoded tokens/s | break-even acceptance |")
		fmt.Println("|---:|---|---|---:|---:|")
		for _, r := range rs {
			if r.Model != m || r.Kind != "hlm serve" {
				continue
			}
			var ref *Result
			for i := range rs {
				if rs[i].Model == m && rs[i].Kind == "llama-server" && rs[i].Devices == r.Devices {
					ref = &rs[i]
				}
			}
			rps := float64(r.Rounds) / r.Seconds
			var cells []string
			for _, a := range []float64{0.5, 0.7, 0.9} {
				cells = append(cells, fmt.Sprintf("%.1f", rps*perRound(a, r.L)))
			}
			refTS, be := "— (not run)", "—"
			if ref != nil {
				ts := float64(ref.Positions) / ref.Seconds
				refTS, be = fmt.Sprintf("%.1f", ts), breakEven(rps, ts, r.L)
			}
			fmt.Printf("| %d | %s | %s | %s | %s |\n", r.Devices, r.Engine, strings.Join(cells, " / "), refTS, be)
		}
	}
	return nil
}

// chatTable prints the runs of chat mode (-chat), a row each, in the
// order they ran.
func chatTable(rs []Result) {
	if len(rs) == 0 {
		return
	}
	fmt.Println("| model | turn | N | positions/s | turns | Open bytes per turn | first round p50 / p99 ms | round p50 / p99 ms | peak RSS MB |")
	fmt.Println("|---|---|---:|---:|---:|---:|---|---|---:|")
	for _, r := range rs {
		turn := "new session with the whole conversation"
		if r.Continue {
			turn = "continued"
		}
		fmt.Printf("| %s | %s | %d | %.1f | %d | %.0f | %.0f / %.0f | %.0f / %.0f | %.0f |\n", r.Model, turn, r.Devices, float64(r.Positions)/r.Seconds,
			r.Turns, r.OpenBytes, r.FirstP50ms, r.FirstP99ms, r.P50ms, r.P99ms, r.PeakRSSMB)
	}
	fmt.Println()
}

// perRound is the expected tokens one round of L drafts commits when each
// draft is accepted with probability a: Σ_{i=0..L} a^i.
func perRound(a float64, L int) float64 {
	s, p := 0.0, 1.0
	for range L + 1 {
		s += p
		p *= a
	}
	return s
}

// breakEven is the acceptance at which rounds/s × perRound equals the
// LLM-only tokens/s, or why there is none.
func breakEven(rps, ref float64, L int) string {
	if rps*perRound(1, L) < ref {
		return fmt.Sprintf("none (even at 1: %.1f < %.1f)", rps*perRound(1, L), ref)
	}
	if rps*perRound(0, L) >= ref {
		return "0 (ahead at any acceptance)"
	}
	lo, hi := 0.0, 1.0
	for range 60 {
		mid := (lo + hi) / 2
		if rps*perRound(mid, L) < ref {
			lo = mid
		} else {
			hi = mid
		}
	}
	return fmt.Sprintf("%.2f", hi)
}
