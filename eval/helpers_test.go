package eval

import (
	"testing"

	"github.com/hlmproject/hlm/internal/sharedtest"
	"github.com/hlmproject/hlm/sim"
)

// storiesPair opens stories260K against its 2-layer early exit (skipping the
// test when the shared model is absent) and returns the model's path too.
func storiesPair(t *testing.T) (*sim.Models, string) {
	t.Helper()
	stories := sharedtest.Path(t, "models/stories260K/stories260K.bin")
	ms, err := sim.Open(stories, stories+"@exit=2", "")
	if err != nil {
		t.Fatal(err)
	}
	return ms, stories
}
