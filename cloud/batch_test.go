package cloud

import (
	"sync"
	"testing"
	"time"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/llama"
)

// batchSizes records the size of every batch the server evaluates.
type batchSizes struct {
	NopMetrics
	mu    sync.Mutex
	sizes []int
}

func (m *batchSizes) Batch(n int) {
	m.mu.Lock()
	m.sizes = append(m.sizes, n)
	m.mu.Unlock()
}

// tinyLLM is a random model with the 32,000-token vocabulary fakeDevice
// drafts from, small enough that a pass takes well under a millisecond.
func tinyLLM(t testing.TB) model.Model {
	t.Helper()
	w, err := llama.RandomWeights(model.Config{Dim: 32, Hidden: 64, Layers: 1, Heads: 2, KVHeads: 2, Vocab: 32000, SeqLen: 64}, 3)
	if err != nil {
		t.Fatal(err)
	}
	m, err := llama.New(w, nil, "tiny")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestBatchWindowGathersConnectedDevices: devices that answer each verdict
// with their next upload are verified together — the batcher waits for
// every connected device instead of running a pass for whoever came first,
// which fragmented the batches. The window is twice waitLimit: the wait
// must end when the last connected device joins (devices that finish early
// close their connections), never by the window, or the devices would not
// finish within waitLimit.
func TestBatchWindowGathersConnectedDevices(t *testing.T) {
	const devices, rounds = 8, 6
	m := &batchSizes{}
	_, addr := start(t, Config{LLM: tinyLLM(t), MaxBatch: 32, BatchWindow: 2 * waitLimit, Metrics: m})
	var wg sync.WaitGroup
	for d := 0; d < devices; d++ {
		wg.Add(1)
		go func(d int) {
			defer wg.Done()
			if _, err := fakeDevice(addr, uint64(d), rounds, 1); err != nil {
				t.Error(err)
			}
		}(d)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatalf("%d devices × %d rounds not done after %v: batches waited for the window (%v)", devices, rounds, waitLimit, 2*waitLimit)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// All devices' rounds are verified, in few passes: devices that connect
	// late run out of phase with the first ones for a while (and those end
	// first), so not every pass is full, but on average at least half the
	// devices share one (without the wait, most passes held one or two).
	total := 0
	for _, n := range m.sizes {
		total += n
	}
	if total != devices*rounds {
		t.Fatalf("batches %v hold %d verifications, want %d", m.sizes, total, devices*rounds)
	}
	if mean := float64(total) / float64(len(m.sizes)); mean < devices/2 {
		t.Errorf("batch sizes %v: mean %.1f, want at least %d", m.sizes, mean, devices/2)
	}
}

// TestBatchWindowLoneDeviceDoesNotWait: with one device connected, a round
// is verified at once, however long the window (twice waitLimit: 5 rounds
// that waited for it would not end within waitLimit).
func TestBatchWindowLoneDeviceDoesNotWait(t *testing.T) {
	_, addr := start(t, Config{LLM: tinyLLM(t), MaxBatch: 32, BatchWindow: 2 * waitLimit})
	done := make(chan error, 1)
	go func() {
		_, err := fakeDevice(addr, 1, 5, 2)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitLimit):
		t.Fatalf("5 rounds of a lone device not done after %v: the batcher waited for devices that are not there", waitLimit)
	}
}
