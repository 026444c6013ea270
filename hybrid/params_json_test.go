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
