package libllama

import "runtime"

// osThread runs functions on one OS thread of its own. llama.cpp's CPU
// backend built with OpenMP (the default where the compiler has it) keeps
// a team of worker threads per OS thread that starts a parallel region;
// a goroutine calling llama_decode from whichever thread the Go scheduler
// gives it makes a team on each, more threads than cores, and OpenMP then
// lets them sleep between graphs instead of waiting briefly for the next:
// measured on a 2-core host, a 2-layer model decoded 2,100–2,700 tokens/s
// so against 12,400–13,900 from one locked thread (llama-bench: 12,900).
// A context of an OpenMP build therefore makes all its decodes here; one
// without OpenMP runs them on its ggml threadpool (UseThreadpool) from the
// caller's thread, which spares the two wake-ups of the hand-over (about
// 35 µs a call on that host).
type osThread struct {
	work chan func()
	done chan struct{}
}

func newOSThread() *osThread {
	t := &osThread{work: make(chan func()), done: make(chan struct{})}
	go func() {
		// Never unlocked: the thread ends with the goroutine (stop), and
		// OpenMP's team with it.
		runtime.LockOSThread()
		for f := range t.work {
			f()
			t.done <- struct{}{}
		}
	}()
	return t
}

// do runs f on the thread and returns when it has; a panic of f is the
// caller's, raised again in its goroutine (the thread's goroutine would
// take the process down with it).
func (t *osThread) do(f func()) {
	var p any
	t.work <- func() {
		defer func() { p = recover() }()
		f()
	}
	<-t.done
	if p != nil {
		panic(p)
	}
}

// stop ends the thread; do must not be called after.
func (t *osThread) stop() { close(t.work) }
