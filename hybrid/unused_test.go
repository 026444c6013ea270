package hybrid

import (
	"encoding/json"
	"strings"
	"testing"
)

// unusedAlt is a value other than the default for each method-specific
// key, valid with the defaults of the others.
var unusedAlt = map[string]string{
	"sampler": "gumbel", "rand_p": "0.3", "prob_bits": "16", "index_bits": "false", "bonus": "true",
	"m": "3", "theta_max": "0.5", "u_th": "0.2", "k": "3", "theta": "0.3", "eta": "3",
	"calib_a": "0.3", "calib_b": "0.2", "imp_k": "5", "gamma": "0.2", "sqs_k": "3", "ell": "20",
	"budget_bits": "300", "batch_max": "2", "conf_alpha": "0.05", "conf_eta": "0.05", "conf_beta": "0.02",
	"l": "2", "draft": "heuristic", "l_min": "2", "l_max": "3", "ddqn_model": "absent.json",
	"list_k": "3", "tree_nodes": "5", "tree_depth": "2", "tree_shape": "2,1",
}

// TestUnusedKeysHaveNoEffect: every key Params.Unused calls unused for a
// method leaves that method's run byte-identical (wall clock aside) when
// set to another value — the warning it feeds never says "no effect" of
// a key that has one. And the keys the method lists are not called
// unused.
func TestUnusedKeysHaveNoEffect(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("Once upon a time", true)
	for k := range methodSpecific {
		alt, ok := unusedAlt[k]
		if !ok {
			t.Fatalf("no alternative value for method key %s", k)
		}
		p := DefaultParams()
		def, _ := p.Get(k)
		if err := p.Set(k, alt); err != nil {
			t.Fatalf("%s=%s: %v", k, alt, err)
		}
		if got, _ := p.Get(k); got == def {
			t.Errorf("unusedAlt's %s=%s is the default: setting it tests nothing", k, alt)
		}
	}
	run := func(p Params) string {
		r := runOnce(t, p, llm, slm, prompt)
		r.WallSeconds, r.WallTPS = 0, 0
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, m := range methods {
		base := DefaultParams()
		base.Method, base.MaxTokens, base.Seed = m.Name, 12, 5
		want := run(base)
		unused := 0
		for k := range methodSpecific {
			p := base
			why := p.Unused(k)
			listed := strings.Contains(","+strings.Join(m.Keys, ",")+",", ","+k+",")
			switch {
			case listed && strings.HasPrefix(why, "method "):
				t.Errorf("%s lists %s, and Unused says %q", m.Name, k, why)
			case why == "":
				continue
			}
			unused++
			if err := p.Set(k, unusedAlt[k]); err != nil {
				t.Fatal(err)
			}
			if err := p.Validate(); err != nil {
				continue // refused outright: no silent no-op to warn of
			}
			if got := run(p); got != want {
				t.Errorf("%s: %s=%s changed the run, yet Unused says %q", m.Name, k, unusedAlt[k], why)
			}
		}
		if unused == 0 {
			t.Errorf("%s: no method key is unused", m.Name)
		}
	}
	p := DefaultParams()
	if why := p.Unused("rate_bps"); !strings.Contains(why, "channel=") {
		t.Errorf("rate_bps on the default link: Unused = %q", why)
	}
	if why := p.Unused("temperature"); why != "" {
		t.Errorf("temperature: Unused = %q", why)
	}
}
