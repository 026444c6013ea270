package hybrid

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/hlmproject/hlm/ddqn"
)

// Action is one (L, ℓ) choice of a learned controller.
type Action struct{ L, Ell int }

// DefaultActions is the action grid of hlm's DDQN policies: L ∈ {1, 2, 3,
// 4, 6, 8} × ℓ ∈ {20, 50, 100, 200}.
func DefaultActions() []Action {
	var out []Action
	for _, l := range []int{1, 2, 3, 4, 6, 8} {
		for _, e := range []int{20, 50, 100, 200} {
			out = append(out, Action{l, e})
		}
	}
	return out
}

// FormatActions writes an action table as "L:ℓ,L:ℓ,…" (stored in the
// policy file's metadata under "actions").
func FormatActions(a []Action) string {
	parts := make([]string, len(a))
	for i, x := range a {
		parts[i] = fmt.Sprintf("%d:%d", x.L, x.Ell)
	}
	return strings.Join(parts, ",")
}

// ParseActions reads an action table.
func ParseActions(s string) ([]Action, error) {
	var out []Action
	for _, p := range strings.Split(s, ",") {
		l, e, ok := strings.Cut(p, ":")
		L, err1 := strconv.Atoi(l)
		E, err2 := strconv.Atoi(e)
		if !ok || err1 != nil || err2 != nil || L < 1 || L > 64 || E < 1 || E > 1<<14 {
			return nil, fmt.Errorf("%w: bad action %q in the policy's action table", ErrParam, p)
		}
		out = append(out, Action{L, E})
	}
	return out, nil
}

// ControlFeatures is the number of inputs of a controller policy
// (ControlState.Features): f̄, ConfWindow confidences, the rate, Δt.
const ControlFeatures = ConfWindow + 3

// ControlNormalization is the fixed input scaling of controller policies:
// confidences around 0.5, log2 of rates between ~16 (65 kbit/s) and ~24
// (16 Mbit/s), up to a few hundred tokens.
func ControlNormalization() (mean, std []float64) {
	for range ConfWindow + 1 {
		mean, std = append(mean, 0.5), append(std, 0.3)
	}
	return append(mean, 20, 1), append(std, 3, 1)
}

// PolicyController drives a device with a trained policy (greedy).
type PolicyController struct {
	Policy  *ddqn.Policy
	Actions []Action
}

// Choose returns the greedy action for the state.
func (c *PolicyController) Choose(s ControlState) (int, int) {
	a := c.Actions[c.Policy.Greedy(s.Features())]
	return a.L, a.Ell
}

var policyCache sync.Map // path → *PolicyController

// LoadController reads a policy file written by `hlm train-ddqn` (cached
// per path: a policy is read-only and safe to share).
func LoadController(path string) (*PolicyController, error) {
	if c, ok := policyCache.Load(path); ok {
		return c.(*PolicyController), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pol, err := ddqn.Load(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	acts, err := ParseActions(pol.Metadata()["actions"])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if pol.Inputs() != ControlFeatures || pol.Actions() != len(acts) {
		return nil, fmt.Errorf("%w: %s has %d inputs and %d actions, want %d inputs and its %d-entry action table", ErrParam, path, pol.Inputs(), pol.Actions(), ControlFeatures, len(acts))
	}
	c := &PolicyController{Policy: pol, Actions: acts}
	policyCache.Store(path, c)
	return c, nil
}
