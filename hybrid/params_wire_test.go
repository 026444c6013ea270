package hybrid

import (
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateSession = flag.Bool("update-session", false, "rewrite testdata/session_params.golden")

// TestSessionParamsGolden pins the bytes the device sends for the
// defaults of q-s with seed 7 (a format change must be deliberate: bump
// SessionFormat).
func TestSessionParamsGolden(t *testing.T) {
	p := DefaultParams()
	p.Method, p.Seed = QS, 7
	got := p.SessionParams()
	path := filepath.Join("testdata", "session_params.golden")
	if *updateSession {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("session parameters changed:\n got %q\nwant %q", got, want)
	}
}

// TestSessionParamsRoundTrip: random settings of every session key come
// back equal, and the server's view of them equals the device's.
func TestSessionParamsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		p := DefaultParams()
		p.Method = Methods[rng.IntN(len(Methods))]
		p.Seed = rng.Uint64()
		p.Temperature = rng.Float64() * 2
		p.TopK = rng.IntN(50)
		p.TopP = rng.Float64()
		p.Bonus = rng.IntN(2) == 0
		p.ListK = 1 + rng.IntN(MaxListK)
		p.ProbBits = []int{8, 16, 32}[rng.IntN(3)]
		p.IndexBits = rng.IntN(2) == 0
		p.K, p.SQSK, p.Ell = 1+rng.IntN(100), 1+rng.IntN(32), 1+rng.IntN(1000)
		p.Theta, p.Eta = rng.Float64()+1e-3, 1+rng.Float64()*20
		p.ConfAlpha, p.ConfEta, p.ConfBeta = 1e-4+rng.Float64()*0.1, rng.Float64()+1e-3, rng.Float64()
		if p.Method == QS && i%3 == 0 {
			p.Draft = "ddqn"
		}
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		got, err := ParseSessionParams(p.SessionParams())
		if err != nil {
			t.Fatalf("%q: %v", p.SessionParams(), err)
		}
		for _, k := range sessionKeys {
			if got.sessionValue(k) != p.sessionValue(k) {
				t.Fatalf("%s: got %s, want %s", k, got.sessionValue(k), p.sessionValue(k))
			}
		}
		if got.Temperature != p.Temperature || got.ConfBeta != p.ConfBeta || got.Seed != p.Seed {
			t.Fatal("floats or seed not exact")
		}
	}
}

// TestSessionParamsRefused: what the server refuses, with the key named.
func TestSessionParamsRefused(t *testing.T) {
	good := DefaultParams().SessionParams()
	lines := strings.Split(good, "\n")
	cases := []struct{ name, s, want string }{
		{"json of old devices", `{"Method":"hlm"}`, "format"},
		{"unknown key", good + "\ntau_slm=1", `"tau_slm"`},
		{"twice", good + "\nseed=3", `"seed" given twice`},
		{"missing", strings.Join(append(lines[:1:1], lines[2:]...), "\n"), `"method" missing`},
		{"not key=value", good + "\nfoo", "not key=value"},
		{"bad value", strings.Replace(good, "top_k=0", "top_k=x", 1), "top_k"},
		{"impossible", strings.Replace(good, "list_k=2", "list_k=99", 1), "list_k"},
		{"unknown method", strings.Replace(good, "method=hlm", "method=nope", 1), "nope"},
	}
	for _, c := range cases {
		_, err := ParseSessionParams(c.s)
		if !errors.Is(err, ErrParam) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want ErrParam mentioning %s", c.name, err, c.want)
		}
	}
}

func FuzzParseSessionParams(f *testing.F) {
	p := DefaultParams()
	f.Add(p.SessionParams())
	p.Method, p.Draft = QS, "ddqn"
	f.Add(p.SessionParams())
	f.Add(SessionFormat + "\nmethod=q-s")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseSessionParams(s)
		if err != nil {
			return
		}
		// What parses is valid and writes back to the same parameters.
		q, err := ParseSessionParams(p.SessionParams())
		if err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		if q.SessionParams() != p.SessionParams() {
			t.Fatalf("not stable:\n%q\n%q", q.SessionParams(), p.SessionParams())
		}
	})
}
