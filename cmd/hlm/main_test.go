package main

import (
	"os"
	"testing"
)

// TestMain lets tests run this test binary as the hlm command: with
// HLM_TEST_MAIN=1 in its environment it runs main() on its arguments, so a
// test can start real `hlm serve` processes (and signal or kill them)
// without building hlm first.
func TestMain(m *testing.M) {
	if os.Getenv("HLM_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}
