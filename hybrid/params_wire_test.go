package hybrid

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
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

// TestSessionParamsRoundTrip: random settings of every field the server
// uses, set on the struct directly (not through the registry), come back
// from the wire form as the same struct: each wire key's text reads back
// to its exact value, and the server's Params equal the device's once the
// device-only fields are at their defaults.
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
		p.Sampler = []Sampler{SamplerStandard, SamplerGumbel}[rng.IntN(2)]
		p.ListK = 1 + rng.IntN(MaxListK)
		p.ProbBits = []int{8, 16, 32}[rng.IntN(3)]
		p.IndexBits = rng.IntN(2) == 0
		p.K, p.SQSK, p.Ell = 1+rng.IntN(100), 1+rng.IntN(32), 1+rng.IntN(1000)
		if p.Method == QS && i%3 == 0 {
			p.Draft = DraftDDQN
		} else if i%3 == 1 {
			p.Draft = DraftHeuristic
		}
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		got, err := ParseSessionParams(p.SessionParams())
		if err != nil {
			t.Fatalf("%q: %v", p.SessionParams(), err)
		}
		p.UTh, got.UTh = 0.5, 0.5 // NaN ≠ NaN for DeepEqual; u_th does not travel
		if !reflect.DeepEqual(got, p) {
			t.Fatalf("round trip changed the parameters:\n got %+v\nwant %+v", got, p)
		}
	}
}

// TestEveryWireKeyTravels: each wire key of the registry, set alone to a
// value other than its default (drawn from its typical range, or
// unusedAlt's), reads back from the wire form with that value — a key
// added to the registry is covered without editing this test (the round
// trip above sets the struct's fields by hand).
func TestEveryWireKeyTravels(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, k := range Keys() {
		if !k.Wire {
			continue
		}
		def, alt := k.Default(), ""
		for range 100 {
			if v := k.Draw(rng); v != "" && v != def {
				alt = v
				break
			}
		}
		if v, ok := unusedAlt[k.Name]; alt == "" && ok {
			alt = v
		}
		if alt == "" {
			t.Errorf("wire key %s: no value other than its default to test it with (give it a draw or an unusedAlt entry)", k.Name)
			continue
		}
		p := DefaultParams()
		if err := p.Set(k.Name, alt); err != nil {
			t.Fatalf("%s=%s: %v", k.Name, alt, err)
		}
		want, _ := p.Get(k.Name)
		got, err := ParseSessionParams(p.SessionParams())
		if err != nil {
			t.Errorf("%s=%s: the server refuses it: %v", k.Name, alt, err)
			continue
		}
		if g, _ := got.Get(k.Name); g != want {
			t.Errorf("%s=%s: the server reads %s", k.Name, want, g)
		}
	}
}

// TestSessionKeysAreTheServers: the keys that travel are the registry's
// Wire keys, and a device-only key set to a non-default value does not
// reach the server.
func TestSessionKeysAreTheServers(t *testing.T) {
	p := DefaultParams()
	p.MaxTokens, p.L, p.TauSLM = 7, 3, 0.5
	got, err := ParseSessionParams(p.SessionParams())
	if err != nil {
		t.Fatal(err)
	}
	d := DefaultParams()
	if got.MaxTokens != d.MaxTokens || got.L != d.L || got.TauSLM != d.TauSLM {
		t.Errorf("device-only keys travelled: max_tokens %d, l %d, tau_slm %g", got.MaxTokens, got.L, got.TauSLM)
	}
	lines := strings.Split(p.SessionParams(), "\n")[1:]
	var wire []string
	for _, k := range Keys() {
		if k.Wire {
			wire = append(wire, k.Name)
		}
	}
	if len(lines) != len(wire) {
		t.Fatalf("%d lines for %d wire keys", len(lines), len(wire))
	}
	for i, l := range lines {
		if k, _, _ := strings.Cut(l, "="); k != wire[i] {
			t.Errorf("line %d is %q, want key %s", i+1, l, wire[i])
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
	p.Method, p.Draft = QS, DraftDDQN
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

// withDefault is p's session parameters with key's line set to the
// default value: what a server that never received the key would hold.
func withDefault(p Params, key string) (Params, error) {
	k, _ := LookupKey(key)
	var lines []string
	for _, l := range strings.Split(p.SessionParams(), "\n") {
		if name, _, _ := strings.Cut(l, "="); name == key {
			l = key + "=" + k.Default()
		}
		lines = append(lines, l)
	}
	return ParseSessionParams(strings.Join(lines, "\n"))
}

// TestEveryWireKeyMatters: for each session key, some parameter set drawn
// from the registry's ranges makes the server verify differently (other
// committed tokens or uplink bits) when the key does not reach it and the
// server holds its default instead. So every key that travels is needed,
// and a comparison of the device's intent with what the server did (cloud's
// TestSimMatchesNetworkRandomParams compares the simulator with a server
// given the device's own Params) sees any one of them dropped.
func TestEveryWireKeyMatters(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a few hundred short generations")
	}
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("Once upon a time, there was a little", true)
	rng := rand.New(rand.NewPCG(30, 1))
	run := func(dev, srv Params) (Result, error) {
		d, err := NewDevice(dev, slm, llm.Config().Vocab, prompt)
		if err != nil {
			return Result{}, err
		}
		if dev.Draft == DraftDDQN {
			d.SetController(&fixedCtl{})
		}
		s, err := NewReplicaServer(srv, llm, slm, prompt)
		if err != nil {
			return Result{}, err
		}
		link, err := NewLink(dev)
		if err != nil {
			return Result{}, err
		}
		l := &Local{Server: s}
		return Run(context.Background(), Config{Device: d, Verifier: l, Link: link, Context: llm.Config().SeqLen})
	}
	for _, k := range sessionKeys() {
		found := false
		for try := 0; try < 300 && !found; try++ {
			p := DefaultParams()
			p.Method = Methods[rng.IntN(len(Methods))]
			for _, key := range registry {
				if v := key.Draw(rng); v != "" && key.Name != "method" && (key.Wire || key.Name == "l") {
					if err := p.Set(key.Name, v); err != nil {
						t.Fatal(err)
					}
				}
			}
			if k.Name == "method" {
				p.Method = Methods[1+rng.IntN(len(Methods)-1)]
			}
			if m, _ := MethodByName(p.Method); m.Controlled && rng.IntN(3) == 0 {
				p.Draft = DraftDDQN // drawn by hand: the registry's draws need no policy file
			}
			p.MaxTokens = 12
			if p.Validate() != nil || k.get(&p) == k.Default() {
				continue
			}
			srv, err := withDefault(p, k.Name)
			if err != nil {
				continue // the default is impossible with the rest (draft=ddqn's method): refused, so noticed
			}
			want, err := run(p, p)
			if err != nil {
				continue
			}
			got, err := run(p, srv)
			found = err != nil || fmt.Sprint(got.Tokens) != fmt.Sprint(want.Tokens) || got.UplinkBits != want.UplinkBits
		}
		if !found {
			t.Errorf("session key %s: no parameter set of 300 verifies differently without it: the server does not need it", k.Name)
		}
	}
}

// sessionKeysDoc is docs/protocol.md's generated block: the session
// parameters of the golden, and a table of every key that travels.
func sessionKeysDoc() string {
	p := DefaultParams()
	p.Method, p.Seed = QS, 7
	var b strings.Builder
	b.WriteString("```\n" + p.SessionParams() + "\n```\n\n")
	b.WriteString("| key | accepts | default | meaning |\n|---|---|---|---|\n")
	for _, k := range sessionKeys() {
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s |\n", k.Name, k.Accepts, k.Default(), strings.ReplaceAll(k.Help, "|", "\\|"))
	}
	return b.String()
}

// TestProtocolDoc: docs/protocol.md's session parameters are the
// registry's (rewritten with -update-session).
func TestProtocolDoc(t *testing.T) {
	const begin, end = "<!-- session-keys: generated from hybrid/keys.go -->\n", "<!-- end session-keys -->"
	path := filepath.Join("..", "docs", "protocol.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated block (%q … %q)", path, begin, end)
	}
	want := sessionKeysDoc()
	if got := doc[i+len(begin) : j]; got != want {
		if *updateSession {
			if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s's session parameters are stale: run go test ./hybrid -run TestProtocolDoc -update-session", path)
	}
	// The format's name, wherever the docs give it, is SessionFormat.
	for _, f := range []string{"protocol.md", "design.md"} {
		b, err := os.ReadFile(filepath.Join("..", "docs", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range sessionFormatName.FindAllString(string(b), -1) {
			if m != SessionFormat {
				t.Errorf("docs/%s names the session format %s; it is %s", f, m, SessionFormat)
			}
		}
	}
}

var sessionFormatName = regexp.MustCompile(`hlm-session/[0-9]+`)

// sessionFormats are the wire keys of each session format, in order. A
// change of the keys that travel is a change of the format: bump
// SessionFormat (hybrid/params_wire.go), add its keys here, rewrite the
// golden file and docs/protocol.md (-update-session) and the format's
// name in the docs (TestProtocolDoc checks them).
var sessionFormats = map[string]string{
	"hlm-session/2": "method,seed,temperature,top_k,top_p,bonus,sampler,list_k,prob_bits,index_bits,k,sqs_k,ell,draft",
}

// TestSessionFormatVersioned: the keys that travel are those recorded
// for SessionFormat, so a new wire key cannot reach old servers under
// the old format's name.
func TestSessionFormatVersioned(t *testing.T) {
	var names []string
	for _, k := range sessionKeys() {
		names = append(names, k.Name)
	}
	got := strings.Join(names, ",")
	want, ok := sessionFormats[SessionFormat]
	switch {
	case !ok:
		t.Errorf("format %s has no entry in sessionFormats; its keys are %s", SessionFormat, got)
	case got != want:
		t.Errorf("the wire keys changed under format %s:\n got %s\nwant %s\nbump SessionFormat and record the new keys in sessionFormats", SessionFormat, got, want)
	}
}
