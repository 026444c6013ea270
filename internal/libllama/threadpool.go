package libllama

import (
	"encoding/binary"
	"fmt"
	"sync"
)

// struct ggml_threadpool_params at llama.cpp 0.5.0 (ggml.h): cpumask
// [GGML_MAX_N_THREADS = 512]bool, n_threads int32, prio int32, poll uint32,
// strict_cpu bool, paused bool; ggml_threadpool_params_init writes 526
// bytes of its 528.
const (
	tpNThreads = 512
	tpPrio     = 516
	tpPoll     = 520
	tpStrict   = 524
	tpPaused   = 525
	tpExtent   = 526
	tpSize     = 528
)

// threadpoolDefaults are ggml_threadpool_params_init(p, 7)'s values.
var threadpoolDefaults = []field{
	{"cpumask[0]", 0, 1, 0},
	{"cpumask[511]", 511, 1, 0},
	{"n_threads", tpNThreads, 4, 7},
	{"prio", tpPrio, 4, 0},
	{"poll", tpPoll, 4, 50},
	{"strict_cpu", tpStrict, 1, 0},
	{"paused", tpPaused, 1, 0},
}

// checkThreadpoolLayout checks ggml_threadpool_params against the layout
// above: the bytes ggml_threadpool_params_init writes and its defaults.
func (l *Lib) checkThreadpoolLayout() error {
	buf := make([]byte, 1024)
	for i := range buf {
		buf[i] = canary
	}
	l.f.tpParamsInit(&buf[0], 7)
	got := 0
	for i, b := range buf {
		if b != canary {
			got = i + 1
		}
	}
	if got != tpExtent {
		return fmt.Errorf("%w: the library's ggml_threadpool_params_init writes %d bytes, the ggml.h hlm was built for %d: hlm supports %s", ErrVersion, got, tpExtent, SupportedVersions)
	}
	return checkFields("ggml_threadpool_params", buf, threadpoolDefaults)
}

// cpuThreadpool is the CPU backend's ggml_threadpool_new and
// ggml_threadpool_free, found through its registry as llama-bench finds
// them (with backends loaded at run time they are not libllama's symbols).
type cpuThreadpool struct {
	once    sync.Once
	newPool func(params *byte) uintptr
	free    func(tp uintptr)
	err     error
}

func (l *Lib) threadpoolFuncs() (*cpuThreadpool, error) {
	t := &l.tp
	t.once.Do(func() {
		var reg uintptr
		for i := range l.f.backendDevCount() {
			if d := l.f.backendDevGet(i); l.f.backendDevType(d) == devCPU {
				reg = l.f.backendDevBackendReg(d)
				break
			}
		}
		if reg == 0 {
			t.err = fmt.Errorf("%w: llama.cpp has no CPU backend device", ErrLoad)
			return
		}
		pNew := l.f.backendRegGetProcAddress(reg, "ggml_threadpool_new")
		pFree := l.f.backendRegGetProcAddress(reg, "ggml_threadpool_free")
		if pNew == 0 || pFree == 0 {
			t.err = fmt.Errorf("%w: llama.cpp's CPU backend does not offer ggml_threadpool_new and ggml_threadpool_free", ErrVersion)
			return
		}
		registerAt(&t.newPool, pNew)
		registerAt(&t.free, pFree)
	})
	return t, t.err
}

// UseThreadpool gives the context a ggml CPU threadpool of n threads that
// wait for work at polling level poll (0: they sleep, 100: they spin;
// llama.cpp's --poll), for single tokens and batches alike, in place of
// (and freeing) the one it had. Without one, ggml makes a pool for every
// graph it computes and joins its threads at the end: on a GPU, where a
// token's CPU graph is little more than its embedding, that costs more
// than the graph (llama-bench and llama-server attach theirs).
func (c *Context) UseThreadpool(n, poll int) error {
	if n < 1 || n > 512 || poll < 0 || poll > 100 {
		return fmt.Errorf("%w: a threadpool of %d threads at poll %d (1…512 threads, poll 0…100)", ErrLoad, n, poll)
	}
	t, err := c.m.l.threadpoolFuncs()
	if err != nil {
		return err
	}
	params := make([]byte, tpSize)
	c.m.l.f.tpParamsInit(&params[0], int32(n))
	binary.LittleEndian.PutUint32(params[tpPoll:], uint32(poll))
	tp := t.newPool(&params[0])
	if tp == 0 {
		return fmt.Errorf("%w: ggml_threadpool_new(%d threads) failed", ErrLoad, n)
	}
	c.m.l.f.attachThreadpool(c.h, tp, 0)
	if c.tp != 0 {
		t.free(c.tp)
	}
	c.tp = tp
	return nil
}

// freeThreadpool frees the context's threadpool, after llama_free.
func (c *Context) freeThreadpool() {
	if c.tp == 0 {
		return
	}
	if t, err := c.m.l.threadpoolFuncs(); err == nil {
		t.free(c.tp)
	}
	c.tp = 0
}
