//go:build !amd64 || purego

package speculative

// raceSkip: no vector code on this architecture; raceRange scans every
// token itself.
func raceSkip(p []float64, key, pmix uint64, tok0 int, s float64) (int, int) { return 0, 0 }
