package libllama

import (
	"slices"
	"sync"
	"syscall"
	"testing"
)

// TestOSThread: whatever goroutine asks, the functions run on one OS
// thread, in turn, and do returns after its function has run.
func TestOSThread(t *testing.T) {
	th := newOSThread()
	defer th.stop()
	var (
		mu   sync.Mutex
		tids = map[int]bool{}
		runs int
	)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				ran := false
				th.do(func() {
					mu.Lock()
					tids[syscall.Gettid()] = true
					runs++
					mu.Unlock()
					ran = true
				})
				if !ran {
					t.Error("do returned before its function ran")
				}
			}
		}()
	}
	wg.Wait()
	if len(tids) != 1 || runs != 400 {
		t.Fatalf("%d runs on %d OS threads, want 400 on one", runs, len(tids))
	}
	if tids[syscall.Gettid()] {
		t.Fatal("the functions ran on the test's own thread")
	}
}

// TestInline: Inline runs f on the decoding thread of an OpenMP build's
// context (on the caller's otherwise), and f's decodes are made there
// without a hand-over (which would wait for ever: the thread is busy with
// f), with the logits of decodes handed over.
func TestInline(t *testing.T) {
	l := testLib(t)
	m := loadTestModel(t, l)
	defer m.Free()
	c := newTestContext(t, l, m)
	defer c.Free()
	var threadTID, inlineTID int
	if c.thread != nil {
		c.thread.do(func() { threadTID = syscall.Gettid() })
	}
	var inline []float32
	c.Inline(func() {
		inlineTID = syscall.Gettid()
		inline = decodeFour(t, c)
	})
	if c.thread != nil && inlineTID != threadTID {
		t.Fatalf("Inline ran f on thread %d, the decoding thread is %d", inlineTID, threadTID)
	}
	c2 := newTestContext(t, l, m)
	defer c2.Free()
	if want := decodeFour(t, c2); !slices.Equal(inline, want) {
		t.Fatal("the logits decoded inline differ from those handed over")
	}
}

// TestOSThreadPanic: a panic of a function run on the thread reaches the
// goroutine that asked, and the thread goes on serving.
func TestOSThreadPanic(t *testing.T) {
	th := newOSThread()
	defer th.stop()
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v, want the function's panic", r)
			}
		}()
		th.do(func() { panic("boom") })
	}()
	ran := false
	th.do(func() { ran = true })
	if !ran {
		t.Fatal("the thread stopped serving after a panic")
	}
}
