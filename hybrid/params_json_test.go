package hybrid

import (
	"encoding/json"
	"math"
	"testing"
)

func TestParamsJSONRoundTrip(t *testing.T) {
	for _, uth := range []float64{math.NaN(), 0.5} {
		p := DefaultParams()
		p.Method, p.Seed, p.UTh = UHLM, 7, uth
		if err := p.SetAll([]string{"snr_db=-5", "fading=rician", "l=3"}); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var q Params
		if err := json.Unmarshal(b, &q); err != nil {
			t.Fatal(err)
		}
		b2, _ := json.Marshal(q)
		if string(b) != string(b2) || q.UploadThreshold() != p.UploadThreshold() || q.Validate() != nil {
			t.Errorf("round trip changed the parameters:\n%s\n%s", b, b2)
		}
	}
}

// TestKeyNamesUnique: every --set key names one parameter (the run's seed
// and the link's seed once shared the name "seed", and --set seed could only
// ever reach the first).
func TestKeyNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, kv := range KeyHelp() {
		if seen[kv.Name] {
			t.Errorf("key %q is listed twice", kv.Name)
		}
		seen[kv.Name] = true
	}
	p := DefaultParams()
	if err := p.SetAll([]string{"seed=3", "link_seed=9"}); err != nil || p.Seed != 3 || p.Channel.Seed != 9 {
		t.Errorf("seed=3 link_seed=9: %v, run seed %d, link seed %d", err, p.Seed, p.Channel.Seed)
	}
}
