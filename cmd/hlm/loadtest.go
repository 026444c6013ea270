package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/hlmproject/hlm/fleet"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/loadtest"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/llamacpp"
)

func init() {
	register("loadtest", "measure hlm serve replicas behind HAProxy under many devices on this machine", runLoadtest)
}

// loadtestHelp is the --help text of hlm loadtest.
const loadtestHelp = `
For every combination of the lists, start that many hlm serve replicas
(this binary) behind HAProxy on loopback (docs/deploy.md; needs haproxy on
the PATH), let that many devices generate continuously through it for
--duration, and print a Markdown table: verification rounds per second,
tokens per second, the p50 and p99 of the round latency a device sees
(upload sent to verdict received, reconnections included), generations,
reconnections, sessions reopened on another replica (and the prefix
positions they made a replica evaluate again), and errors.

--drop-every N makes each device drop its connection every N rounds (a
flaky radio link): with --balance roundrobin a reconnecting device usually
lands on another replica, which must re-prefill its session; with source
(a consistent hash of the device's address) it returns to its session.

Devices and replicas share this machine's cores: the numbers describe one
machine, not a cluster.`

func runLoadtest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p := hybrid.DefaultParams()
	p.Method = hybrid.QS
	fs := newFlags("loadtest", "[--replicas 1,2,3] [--devices 8,32] [--balance roundrobin,source] [--drop-every 0,8] [--duration 10s] [--json]", loadtestHelp, stdout)
	mf := addModelFlags(fs)
	replicas := fs.String("replicas", "1,2,3", "replica counts (comma-separated)")
	devices := fs.String("devices", "8,32", "device counts (comma-separated)")
	balances := fs.String("balance", "roundrobin", "HAProxy balance algorithms: "+strings.Join(fleet.Balances, ", "))
	drops := fs.String("drop-every", "0", "each device drops its connection every N rounds (comma-separated; 0: never)")
	duration := fs.Duration("duration", 10*time.Second, "measuring time per combination")
	method := fs.String("method", p.Method, "method of every generation")
	maxTokens := fs.Int("max-tokens", defaultMaxTokens, "new tokens per generation")
	prompt := fs.String("prompt", "Once upon a time, there was a little", "prompt of every generation")
	check := fs.Bool("check", false, "compare every generation with the simulator (costs CPU, changes the figures)")
	asJSON := fs.Bool("json", false, "print the cells as JSON instead of a table")
	dir := fs.String("dir", "", "keep the fleets' configurations and logs here (default: a temporary directory, removed)")
	var sets setFlags
	fs.Var(&sets, "set", "parameter override key=value (repeatable; see hlm sim --help)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := setsAgree(fs, sets, map[string]string{"method": "method", "max-tokens": "max_tokens"}); err != nil {
		return err
	}
	p.Method, p.MaxTokens = *method, *maxTokens
	if err := p.SetAll(sets); err != nil {
		return usageError{err}
	}
	if err := p.Validate(); err != nil {
		return usageError{err}
	}
	if *duration <= 0 {
		return usageError{fmt.Errorf("--duration %v: want a positive duration", *duration)}
	}
	cfg := loadtest.Config{Params: p, Prompts: []string{*prompt}, Duration: *duration, Balances: strings.Split(*balances, ","), Progress: stderr}
	var err error
	for _, l := range []struct {
		name string
		s    string
		out  *[]int
		min  int
	}{{"--replicas", *replicas, &cfg.Replicas, 1}, {"--devices", *devices, &cfg.Devices, 1}, {"--drop-every", *drops, &cfg.DropEvery, 0}} {
		if *l.out, err = intList(l.s, l.min); err != nil {
			return usageError{fmt.Errorf("%s: %v", l.name, err)}
		}
	}
	if cfg.Serve, cfg.Args, err = replicaCommand(mf); err != nil {
		return err
	}
	if env, ok := replicaThreadEnv(*mf.llm); ok {
		cfg.Env = append(cfg.Env, env)
		fmt.Fprintf(stderr, "loadtest: the replicas run llama.cpp beside each other and the devices on these %d CPUs: %s for them (set OMP_WAIT_POLICY to choose otherwise)\n", runtime.NumCPU(), env)
	}
	ms, err := mf.open(ctx)
	if err != nil {
		return err
	}
	cfg.SLM = ms.SLM
	if *check {
		cfg.Check = ms
	}
	if cfg.Dir = *dir; cfg.Dir == "" {
		// Short: HAProxy's runtime socket path must fit a Unix socket name.
		if cfg.Dir, err = os.MkdirTemp("", "hlm-lt"); err != nil {
			return err
		}
		defer os.RemoveAll(cfg.Dir)
	}
	started := time.Now()
	cells, err := loadtest.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(cells)
	}
	fmt.Fprintf(stdout, "hlm loadtest %s\n\n", strings.Join(args, " "))
	fmt.Fprintf(stdout, "LLM `%s`, devices' SLM `%s`, method %s, %d tokens per generation, %v per row; %d CPUs, GOMAXPROCS %d; %s.\n\n",
		*mf.llm, draftName(ms), p.Method, p.MaxTokens, *duration, runtime.NumCPU(), runtime.GOMAXPROCS(0), time.Since(started).Round(time.Second))
	writeCells(stdout, cells, cfg.Check != nil)
	return nil
}

// writeCells prints the cells as a Markdown table.
func writeCells(w io.Writer, cells []loadtest.Cell, checked bool) {
	head := "| replicas | devices | balance | drop every | rounds/s | tokens/s | p50 ms | p99 ms | generations | reconnects | reopened (re-prefilled positions) | errors |"
	if checked {
		head += " ≠ simulator |"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, strings.Repeat("|---", strings.Count(head, "|")-1)+"|")
	for _, c := range cells {
		drop := "never"
		if c.DropEvery > 0 {
			drop = fmt.Sprintf("%d rounds", c.DropEvery)
		}
		fmt.Fprintf(w, "| %d | %d | %s | %s | %.1f | %.1f | %.1f | %.1f | %d | %d | %d (%d) | %d |", c.Replicas, c.Devices, c.Balance, drop,
			c.RoundsPerS, c.TokensPerS, c.P50ms, c.P99ms, c.Generations, c.Reconnects, c.Reopens, c.Reprefill, c.Errors)
		if checked {
			fmt.Fprintf(w, " %d |", c.Mismatches)
		}
		fmt.Fprintln(w)
	}
	for _, c := range cells {
		if c.FirstError != "" {
			fmt.Fprintf(w, "\nfirst error (%d replicas, %d devices, %s): %s\n", c.Replicas, c.Devices, c.Balance, c.FirstError)
		}
	}
}

// intList parses "1,2,3" into numbers ≥ min.
func intList(s string, min int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", f)
		}
		if n < min {
			return nil, fmt.Errorf("%d < %d", n, min)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("empty list")
	}
	return out, nil
}

// replicaCommand is the command that starts a replica: this binary's hlm
// serve with the LLM (and tokenizer) of the flags, paths made absolute.
func replicaCommand(mf *modelFlags) (serve, args []string, err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	llm, err := absSpec(*mf.llm)
	if err != nil {
		return nil, nil, err
	}
	args = []string{"--llm", llm, "--log-level", "warn"}
	if lib, named := llamacpp.LibraryFlag(); named {
		if lib, err = filepath.Abs(lib); err != nil {
			return nil, nil, err
		}
		args = append(args, "--llama-lib", lib)
	}
	if *mf.tok != "" {
		tok, err := absSpec(*mf.tok)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, "--tokenizer", tok)
	}
	return []string{exe, "serve"}, args, nil
}

// absSpec makes a model path absolute for the replicas, which run in their
// own directories; a built-in model's name (builtin:NAME) is not a path and
// stays as it is.
func absSpec(spec string) (string, error) {
	if builtin.IsBuiltin(spec) {
		return spec, nil
	}
	return filepath.Abs(spec)
}

// replicaThreadEnv is the OpenMP setting the replicas get when their LLM
// runs on llama.cpp and OMP_WAIT_POLICY is not set: the replicas and the
// devices share this machine's cores, and llama.cpp's OpenMP threads that
// spin while they wait then take the cores from each other (on 2 cores,
// 2 replicas of stories260K, 4 devices: 594 rounds/s sleeping, 359 with
// OMP_WAIT_POLICY=ACTIVE).
func replicaThreadEnv(llmSpec string) (string, bool) {
	sp, err := model.ParseSpec(llmSpec)
	if err != nil || sp.Backend != model.BackendLlamaCpp || os.Getenv("OMP_WAIT_POLICY") != "" {
		return "", false
	}
	return "OMP_WAIT_POLICY=PASSIVE", true
}
