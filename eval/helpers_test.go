package eval

import (
	"testing"

	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/sim"
)

// storiesPair opens the built-in stories260K against its 2-layer early exit
// and returns the model's spec too.
func storiesPair(t *testing.T) (*sim.Models, string) {
	t.Helper()
	stories := builtin.DefaultLLM
	ms, err := sim.Open(stories, stories+"@exit=2", "")
	if err != nil {
		t.Fatal(err)
	}
	return ms, stories
}
