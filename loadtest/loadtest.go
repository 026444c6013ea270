// Package loadtest measures hlm serve replicas behind HAProxy under many
// devices on one machine (`hlm loadtest`): for every cell of a grid of
// replicas × devices × balance algorithm × connection-drop period it starts
// a fleet (package fleet), lets the devices generate continuously for a
// fixed time, and reports verification rounds per second, the p50/p99 of
// the round latency a device sees (upload sent to verdict received,
// reconnections included), reconnections, sessions reopened on another
// replica with the positions they re-prefilled, and errors.
//
// The devices are real: each drafts with its own SLM session in this
// process and talks the hlm protocol through HAProxy. On one machine the
// devices and the replicas share the cores, so the figures describe this
// machine, not a cluster; more replicas add isolation and failover here,
// not compute.
package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/hlmproject/hlm/edge"
	"github.com/hlmproject/hlm/fleet"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/sim"
	"github.com/hlmproject/hlm/wire"
)

// Config is a load test.
type Config struct {
	Serve []string // command running hlm serve up to its flags (fleet.Config.Serve)
	Env   []string
	Args  []string // flags of every replica: at least --llm SPEC

	SLM     model.Model   // the devices' draft model
	Params  hybrid.Params // method and parameters of every generation (seed: device i, generation g use Seed+1000·i+g)
	Prompts []string      // device i uses prompt i mod len
	Check   *sim.Models   // when set, every generation is compared with the simulator (costs CPU)

	Replicas  []int
	Devices   []int
	Balances  []string
	DropEvery []int // a device drops its connection every N rounds (0: never)
	Duration  time.Duration

	Dir      string    // working directory for the fleets (configurations, logs)
	Progress io.Writer // a line per cell (nil: none)
}

// Cell is one measured configuration.
type Cell struct {
	Replicas    int     `json:"replicas"`
	Devices     int     `json:"devices"`
	Balance     string  `json:"balance"`
	DropEvery   int     `json:"drop_every"`
	Seconds     float64 `json:"seconds"`
	Rounds      int     `json:"rounds"`
	RoundsPerS  float64 `json:"rounds_per_s"`
	TokensPerS  float64 `json:"tokens_per_s"`
	P50ms       float64 `json:"p50_ms"`
	P99ms       float64 `json:"p99_ms"`
	Generations int     `json:"generations"`
	Reconnects  int     `json:"reconnects"`
	Reopens     int     `json:"reopens"`
	Reprefill   int     `json:"reprefill_positions"`
	Errors      int     `json:"errors"`
	Mismatches  int     `json:"mismatches"` // generations whose tokens differ from the simulator (with Check)
	FirstError  string  `json:"first_error,omitempty"`
}

// Run measures every cell of the grid.
func Run(ctx context.Context, c Config) ([]Cell, error) {
	switch {
	case c.SLM == nil:
		return nil, errors.New("no draft model (SLM)")
	case len(c.Prompts) == 0:
		return nil, errors.New("no prompts")
	case c.Duration <= 0:
		return nil, fmt.Errorf("duration %v: want a positive duration", c.Duration)
	}
	var cells []Cell
	for _, b := range c.Balances {
		for _, r := range c.Replicas {
			for _, drop := range c.DropEvery {
				for _, d := range c.Devices {
					if err := ctx.Err(); err != nil {
						return cells, err
					}
					dir := filepath.Join(c.Dir, fmt.Sprintf("%s-r%d-d%d-drop%d", b, r, d, drop))
					if err := os.MkdirAll(dir, 0o755); err != nil {
						return cells, err
					}
					cell, err := c.cell(ctx, dir, r, d, b, drop)
					if err != nil {
						return cells, err
					}
					cells = append(cells, cell)
					if c.Progress != nil {
						fmt.Fprintf(c.Progress, "%s × %d replicas, %d devices, drop every %d: %.1f rounds/s, p50 %.1f ms, p99 %.1f ms, %d reconnects, %d errors\n",
							b, r, d, drop, cell.RoundsPerS, cell.P50ms, cell.P99ms, cell.Reconnects, cell.Errors)
					}
				}
			}
		}
	}
	return cells, nil
}

// cell starts a fleet and runs devices against it for the duration.
func (c Config) cell(ctx context.Context, dir string, replicas, devices int, balance string, drop int) (Cell, error) {
	f, err := fleet.Start(fleet.Config{Serve: c.Serve, Env: c.Env, Args: append(slices.Clone(c.Args), "--max-sessions", fmt.Sprint(4*devices+64)),
		Replicas: replicas, Balance: balance, Dir: dir})
	if err != nil {
		return Cell{}, err
	}
	defer f.Close()
	cell := Cell{Replicas: replicas, Devices: devices, Balance: balance, DropEvery: drop}
	var (
		mu        sync.Mutex
		latencies []time.Duration
		tokens    int
		wg        sync.WaitGroup
	)
	start := time.Now()
	end := start.Add(c.Duration)
	for i := 0; i < devices; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []time.Duration
			for gen := 0; time.Now().Before(end) && ctx.Err() == nil; gen++ {
				p := c.Params
				p.Seed += uint64(1000*i + gen)
				prompt := c.Prompts[i%len(c.Prompts)]
				g, err := edge.NewGenerator(edge.Config{Addr: f.Addr, LocalAddr: deviceAddr(i), Backoff: 20 * time.Millisecond}, c.SLM, p)
				if err != nil {
					mu.Lock()
					cell.Errors++
					if cell.FirstError == "" {
						cell.FirstError = err.Error()
					}
					mu.Unlock()
					break // the rounds timed so far still count
				}
				tv := &timed{drop: drop, end: end}
				g.Wrap = func(r *edge.Remote) hybrid.Verifier { tv.r = r; return tv }
				res, st, err := g.One(ctx, p, prompt, nil)
				lat = append(lat, tv.lat...)
				mismatch := false
				if err == nil && res.Stop != hybrid.StopInterrupted && c.Check != nil { // an interrupted generation is a prefix
					want, serr := sim.One(ctx, c.Check, p, prompt, nil)
					mismatch = serr != nil || !slices.Equal(want.Tokens, res.Tokens)
				}
				mu.Lock()
				cell.Generations++
				cell.Reconnects += st.Reconnects
				cell.Reopens += st.Reopens
				cell.Reprefill += st.Reprefill
				tokens += tv.tokens
				if mismatch {
					cell.Mismatches++
				}
				if err != nil && ctx.Err() == nil {
					cell.Errors++
					if cell.FirstError == "" {
						cell.FirstError = err.Error()
					}
				}
				mu.Unlock()
			}
			mu.Lock()
			latencies = append(latencies, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	cell.Seconds = c.Duration.Seconds()
	cell.Rounds = len(latencies)
	cell.RoundsPerS = float64(cell.Rounds) / cell.Seconds
	cell.TokensPerS = float64(tokens) / cell.Seconds
	cell.P50ms, cell.P99ms = percentileMs(latencies, 0.50), percentileMs(latencies, 0.99)
	return cell, ctx.Err()
}

// deviceAddr is device i's loopback source address (127.0.0.0/8 is all
// loopback on Linux), so that HAProxy's source hashing tells devices apart
// as it would real ones.
func deviceAddr(i int) string {
	return fmt.Sprintf("127.%d.%d.%d", 1+i/(250*256), (i/250)%256, 1+i%250)
}

// timed is the verifier of one generation: it times each round that
// completes before end, counts the tokens those rounds commit, and drops
// the connection before every drop-th round.
type timed struct {
	r      *edge.Remote
	drop   int
	end    time.Time
	n      int
	lat    []time.Duration
	tokens int
}

func (t *timed) Verify(ctx context.Context, up *wire.Upload) (*wire.Verdict, error) {
	t.n++
	if t.drop > 0 && t.n%t.drop == 0 {
		t.r.Drop()
	}
	start := time.Now()
	v, err := t.r.Verify(ctx, up)
	if err == nil && start.Before(t.end) {
		t.lat = append(t.lat, time.Since(start))
		t.tokens += len(up.Committed) + v.Accepted + 1
	}
	return v, err
}

// percentileMs is the q-quantile of ds in milliseconds (nearest rank; NaN
// for none).
func percentileMs(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return math.NaN()
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	k := int(math.Ceil(q*float64(len(s)))) - 1
	return float64(s[max(k, 0)].Microseconds()) / 1000
}
