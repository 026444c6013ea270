package loadtest

import (
	"math"
	"net"
	"testing"
	"time"
)

func TestPercentileMs(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- { // 1..100 ms, unsorted
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct{ q, want float64 }{{0.5, 50}, {0.99, 99}, {1, 100}, {0.001, 1}} {
		if got := percentileMs(ds, tc.q); got != tc.want {
			t.Errorf("q %g: %g ms, want %g", tc.q, got, tc.want)
		}
	}
	if !math.IsNaN(percentileMs(nil, 0.5)) {
		t.Error("no latencies: want NaN")
	}
	if ds[0] != 100*time.Millisecond {
		t.Error("the input was reordered")
	}
}

// TestDeviceAddr: every device gets its own valid loopback address.
func TestDeviceAddr(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 70000; i++ {
		a := deviceAddr(i)
		ip := net.ParseIP(a)
		if seen[a] || ip == nil || !ip.IsLoopback() || ip.To4()[3] == 0 || ip.To4()[3] == 255 {
			t.Fatalf("device %d: address %s (used twice, invalid, not loopback, or a network/broadcast address)", i, a)
		}
		seen[a] = true
	}
}
