//go:build !amd64 || purego

package speculative

// raceKernel: no vector filter on this architecture; raceRange scans every
// token itself.
func raceKernel() (raceFilter, int) { return nil, 0 }

// raceLogitKernel: no vector filter; raceLogitRange bounds every token.
func raceLogitKernel() (raceLogitFilter, int) { return nil, 0 }
