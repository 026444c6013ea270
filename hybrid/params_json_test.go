package hybrid

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/channel"
)

func TestParamsJSONRoundTrip(t *testing.T) {
	for _, uth := range []float64{math.NaN(), 0.5} {
		p := DefaultParams()
		p.Method, p.Seed, p.UTh = UHLM, 7, uth
		if err := p.SetAll([]string{"snr_db=-5", "fading=rician", "l=3"}); err != nil {
			t.Fatal(err)
		}
		q := jsonRoundTrip(t, p)
		if q.UploadThreshold() != p.UploadThreshold() || q.Validate() != nil {
			t.Errorf("round trip changed u_th: %v, want %v", q.UploadThreshold(), p.UploadThreshold())
		}
	}
}

// jsonRoundTrip is p written as JSON and read back, which must write the
// same JSON again.
func jsonRoundTrip(t *testing.T, p Params) Params {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q Params
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if b2, _ := json.Marshal(q); string(b2) != string(b) {
		t.Fatalf("round trip changed the parameters:\n%s\n%s", b, b2)
	}
	return q
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

// TestUnknownKeySuggestion: a mistyped --set key is refused with the
// nearest key (a session key, a link key, the same name in other case),
// and with none when nothing is near.
func TestUnknownKeySuggestion(t *testing.T) {
	for _, c := range []struct{ key, want string }{
		{"u_thr", "did you mean u_th?"},
		{"bandwith_hz", "did you mean bandwidth_hz?"},
		{"L", "did you mean l?"},
		{"max_token", "did you mean max_tokens?"},
		{"zzzzzzzz", `unknown key "zzzzzzzz" (hlm sim --help lists them)`},
	} {
		p := DefaultParams()
		err := p.Set(c.key, "1")
		if err == nil || !errors.Is(err, ErrParam) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Set(%q): %v, want ErrParam saying %q", c.key, err, c.want)
		}
	}
}

// TestParamsJSONKeys: the JSON form is the --set names with Get's text,
// every registry and link key drawn at random comes back exactly, a
// partial object starts from the defaults (numbers and booleans accepted
// as well as strings), channel_preset applies before the link's own keys
// whatever the object's order, and an unknown key or a refused value is
// an error naming it (the old form, Go field names, dropped unknown keys
// silently).
func TestParamsJSONKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		p := DefaultParams()
		for _, k := range Keys() {
			if v := k.Draw(rng); v != "" {
				_ = p.Set(k.Name, v) // a draw the others' values refuse is left out
			}
		}
		link := []string{
			"channel_preset=" + channel.PresetNames()[rng.IntN(len(channel.PresetNames()))],
			fmt.Sprintf("snr_db=%g", rng.Float64()*30-5),
			fmt.Sprintf("link_seed=%d", rng.Uint64()),
			fmt.Sprintf("bandwidth_hz=%g", 1e5+rng.Float64()*1e7),
		}
		if err := p.SetAll(link); err != nil {
			t.Fatal(err)
		}
		q := jsonRoundTrip(t, p)
		if math.IsNaN(p.UTh) != math.IsNaN(q.UTh) {
			t.Fatalf("u_th %v came back %v", p.UTh, q.UTh)
		}
		p.UTh, q.UTh = 0, 0
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip changed the parameters:\n got %+v\nwant %+v", q, p)
		}
	}

	var m map[string]string
	b, _ := json.Marshal(DefaultParams())
	if err := json.Unmarshal(b, &m); err != nil || m["method"] != DefaultParams().Method || m["max_tokens"] == "" || m["snr_db"] == "" {
		t.Errorf("DefaultParams as JSON: %s (%v)", b, err)
	}
	if _, ok := m["channel_preset"]; ok {
		t.Error("the action key channel_preset was written")
	}

	var q Params
	if err := json.Unmarshal([]byte(`{"method":"q-s","max_tokens":5,"bonus":true,"temperature":"0.7"}`), &q); err != nil {
		t.Fatal(err)
	}
	want := DefaultParams()
	want.Method, want.MaxTokens, want.Bonus, want.Temperature = QS, 5, true, 0.7
	want.UTh, q.UTh = 0, 0
	if !reflect.DeepEqual(q, want) {
		t.Errorf("partial object:\n got %+v\nwant %+v", q, want)
	}

	// channel_preset comes first even when written last.
	if err := json.Unmarshal([]byte(`{"snr_db":"3","channel_preset":"uhlm"}`), &q); err != nil {
		t.Fatal(err)
	}
	ref := DefaultParams()
	if err := ref.SetAll([]string{"channel_preset=uhlm", "snr_db=3"}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(q.Channel, ref.Channel) {
		t.Errorf("channel_preset after snr_db: got %+v, want %+v", q.Channel, ref.Channel)
	}

	for _, tc := range []struct{ in, want string }{
		{`{"MaxTokens":5}`, `unknown key "MaxTokens"`},
		{`{"max_tokens":0}`, `max_tokens="0"`},
		{`{"method":"nope"}`, `method="nope"`},
		{`{"max_tokens":[5]}`, `parameter "max_tokens"`},
		{`[1]`, "parameters:"},
	} {
		err := json.Unmarshal([]byte(tc.in), &q)
		if !errors.Is(err, ErrParam) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrParam with %q", tc.in, err, tc.want)
		}
	}
}

// TestValidateZeroParams: a Params built as a literal, not from
// DefaultParams, is refused with a pointer to DefaultParams.
func TestValidateZeroParams(t *testing.T) {
	err := Params{Method: QS, MaxTokens: 8}.Validate()
	if !errors.Is(err, ErrParam) || !strings.Contains(err.Error(), "DefaultParams()") {
		t.Errorf("err = %v", err)
	}
	if err := DefaultParams().Validate(); err != nil {
		t.Error(err)
	}
}

// FuzzParamsJSON: any input is either refused with ErrParam or read into
// parameters that validate and come back the same through their JSON.
func FuzzParamsJSON(f *testing.F) {
	b, _ := json.Marshal(DefaultParams())
	f.Add(b)
	f.Add([]byte(`{"method":"q-s","max_tokens":5,"bonus":true}`))
	f.Add([]byte(`{"snr_db":"3","channel_preset":"uhlm"}`))
	f.Add([]byte(`{"MaxTokens":5}`))
	f.Add([]byte(`[1]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var p Params
		if err := json.Unmarshal(in, &p); err != nil {
			var se *json.SyntaxError
			if !errors.Is(err, ErrParam) && !errors.As(err, &se) {
				t.Fatalf("%q: %v, want ErrParam or a syntax error", in, err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("%q read into parameters that do not validate: %v", in, err)
		}
		jsonRoundTrip(t, p)
	})
}
