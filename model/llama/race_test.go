//go:build race

package llama

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = true
