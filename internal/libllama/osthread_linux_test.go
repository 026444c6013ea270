package libllama

import (
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
