package ddqn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// goldenModel pins the file format: 2 inputs normalised by (mean, std),
// one hidden ReLU unit, 2 actions, and metadata with characters that JSON
// could escape. Save must reproduce it byte for byte.
const goldenModel = `{"format":"hlm-ddqn","version":1,"inputs":2,"actions":2,"hidden":[1],` +
	`"weights":[[0.5,-0.25],[2,-1]],"biases":[[0.125],[0,1]],` +
	`"mean":[1000000,0],"std":[200000,1],` +
	`"metadata":{"actions":"[{\"L\":2,\"l\":4},{\"L\":8,\"l\":16}]","note":"<&> é"}}` + "\n"

func TestFormatGolden(t *testing.T) {
	p, err := Load(strings.NewReader(goldenModel))
	if err != nil {
		t.Fatal(err)
	}
	// State (1.2e6, 3) → x = (1, 3): h = ReLU(0.5 − 0.75 + 0.125) = 0, Q = (0, 1).
	// State (1.4e6, 0) → x = (2, 0): h = 1.125, Q = (2.25, −0.125).
	for _, c := range []struct {
		s    []float64
		q    [2]float64
		best int
	}{
		{[]float64{1.2e6, 3}, [2]float64{0, 1}, 1},
		{[]float64{1.4e6, 0}, [2]float64{2.25, -0.125}, 0},
	} {
		q := p.Q(c.s, nil)
		if q[0] != c.q[0] || q[1] != c.q[1] || p.Greedy(c.s) != c.best {
			t.Errorf("state %v: Q = %v, greedy %d; want %v, %d", c.s, q, p.Greedy(c.s), c.q, c.best)
		}
	}
	if p.Inputs() != 2 || p.Actions() != 2 || p.Metadata()["note"] != "<&> é" {
		t.Errorf("Inputs %d, Actions %d, Metadata %v", p.Inputs(), p.Actions(), p.Metadata())
	}
	var out bytes.Buffer
	if err := p.Save(&out); err != nil {
		t.Fatal(err)
	}
	if out.String() != goldenModel {
		t.Errorf("Save wrote\n%s\nwant\n%s", out.String(), goldenModel)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	a, _ := runScript(t, 3)
	var buf bytes.Buffer
	if err := a.Save(&buf); err != nil {
		t.Fatal(err)
	}
	saved := buf.String()
	p, err := Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	snap := a.Policy()
	rng := rand.New(rand.NewPCG(4, 4))
	agree := 0
	for range 2000 {
		s := []float64{rng.NormFloat64(), 1e6 + 3e5*rng.NormFloat64(), rng.Float64()}
		want := a.Q(s, nil)
		for _, got := range [][]float64{p.Q(s, nil), snap.Q(s, nil)} {
			for k := range want {
				if got[k] != want[k] {
					t.Fatalf("state %v: loaded Q %v, agent Q %v", s, got, want)
				}
			}
		}
		if g := a.Greedy(s); g == p.Greedy(s) && g == snap.Greedy(s) {
			agree++
		}
	}
	if agree != 2000 {
		t.Errorf("Greedy agrees on %d of 2000 states", agree)
	}
	if m := p.Metadata(); len(m) != 1 || m["actions"] != `[{"L":2,"l":4}]` {
		t.Errorf("Metadata = %v", m)
	}
	p.Metadata()["x"] = "y" // a copy: must not change p
	for _, q := range []*Policy{p, snap} {
		var again bytes.Buffer
		if err := q.Save(&again); err != nil {
			t.Fatal(err)
		}
		if again.String() != saved {
			t.Error("Policy.Save differs from Agent.Save")
		}
	}
}

// hostile returns model files that Load must reject, each with the error
// it must wrap.
func hostile() map[string]struct {
	doc  string
	want error
} {
	ok := func(edit string) string { return strings.Replace(goldenModel, `"hidden":[1]`, edit, 1) }
	return map[string]struct {
		doc  string
		want error
	}{
		"empty":           {"", ErrFormat},
		"not json":        {"hello", ErrFormat},
		"array":           {"[]", ErrFormat},
		"null":            {"null", ErrFormat},
		"format":          {strings.Replace(goldenModel, "hlm-ddqn", "onnx", 1), ErrFormat},
		"version":         {strings.Replace(goldenModel, `"version":1`, `"version":2`, 1), ErrFormat},
		"unknown field":   {ok(`"hidden":[1],"extra":0`), ErrFormat},
		"trailing":        {goldenModel + "{}", ErrFormat},
		"inputs 0":        {strings.Replace(goldenModel, `"inputs":2`, `"inputs":0`, 1), ErrFormat},
		"inputs huge":     {strings.Replace(goldenModel, `"inputs":2`, `"inputs":4097`, 1), ErrLimit},
		"inputs overflow": {strings.Replace(goldenModel, `"inputs":2`, `"inputs":99999999999999999999`, 1), ErrFormat},
		"inputs float":    {strings.Replace(goldenModel, `"inputs":2`, `"inputs":2.5`, 1), ErrFormat},
		"actions -1":      {strings.Replace(goldenModel, `"actions":2`, `"actions":-1`, 1), ErrFormat},
		"hidden 0":        {ok(`"hidden":[0]`), ErrFormat},
		"hidden deep":     {ok(`"hidden":[1,1,1,1,1,1,1,1,1]`), ErrLimit},
		"params":          {ok(`"hidden":[4096,4096]`), ErrLimit},
		"declared big":    {ok(`"hidden":[4096]`), ErrFormat}, // sizes fine, arrays far too short
		"hidden null":     {ok(`"hidden":null`), ErrFormat},   // then the weights do not fit
		"weights short":   {strings.Replace(goldenModel, `[0.5,-0.25]`, `[0.5]`, 1), ErrFormat},
		"weights layers":  {strings.Replace(goldenModel, `,[2,-1]]`, `]`, 1), ErrFormat},
		"biases short":    {strings.Replace(goldenModel, `[0,1]]`, `[0]]`, 1), ErrFormat},
		"weights null":    {strings.Replace(goldenModel, `[[0.5,-0.25],[2,-1]]`, `null`, 1), ErrFormat},
		"weight string":   {strings.Replace(goldenModel, `0.5,`, `"0.5",`, 1), ErrFormat},
		"weight 1e999":    {strings.Replace(goldenModel, `0.5,`, `1e999,`, 1), ErrFormat},
		"weight NaN":      {strings.Replace(goldenModel, `0.5,`, `NaN,`, 1), ErrFormat},
		"std 0":           {strings.Replace(goldenModel, `[200000,1]`, `[200000,0]`, 1), ErrFormat},
		"std negative":    {strings.Replace(goldenModel, `[200000,1]`, `[-1,1]`, 1), ErrFormat},
		"std missing":     {strings.Replace(goldenModel, `"std":[200000,1],`, ``, 1), ErrFormat},
		"mean short":      {strings.Replace(goldenModel, `[1000000,0]`, `[1000000]`, 1), ErrFormat},
		"mean empty":      {strings.Replace(goldenModel, `[1000000,0]`, `[]`, 1), ErrFormat},
		"metadata type":   {strings.Replace(goldenModel, `"note":"<&> é"`, `"note":5`, 1), ErrFormat},
		"metadata count":  {strings.Replace(goldenModel, `"note":"<&> é"`, manyKeys(MaxMetadataEntries+1), 1), ErrLimit},
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for k := range n {
		if k > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":""`, k)
	}
	return b.String()
}

func TestLoadRejects(t *testing.T) {
	for name, c := range hostile() {
		p, err := Load(strings.NewReader(c.doc))
		if !errors.Is(err, c.want) {
			t.Errorf("%s: Load = %v, %v; want an error wrapping %v", name, p, err, c.want)
		}
	}
}

// endless is an unbounded stream of spaces.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for k := range p {
		p[k] = ' '
	}
	return len(p), nil
}

func TestLoadSizeLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("reads MaxModelBytes")
	}
	if _, err := Load(io.LimitReader(endless{}, MaxModelBytes+1)); !errors.Is(err, ErrLimit) {
		t.Fatalf("oversized file: %v", err)
	}
	if _, err := Load(endless{}); !errors.Is(err, ErrLimit) {
		t.Fatalf("endless stream: %v", err)
	}
}

// FuzzLoad feeds Load arbitrary bytes: it must never panic, and whatever it
// accepts must answer Greedy and survive Save → Load unchanged.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(goldenModel))
	for _, c := range hostile() {
		f.Add([]byte(c.doc))
	}
	cfg := DefaultConfig()
	cfg.Hidden = []int{3, 2}
	a, _ := NewAgent(2, 3, cfg)
	var buf bytes.Buffer
	if err := a.Save(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Load(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrLimit) {
				t.Fatalf("error %v wraps neither ErrFormat nor ErrLimit", err)
			}
			return
		}
		if g := p.Greedy(make([]float64, p.Inputs())); g < 0 || g >= p.Actions() {
			t.Fatalf("Greedy = %d of %d actions", g, p.Actions())
		}
		var once, twice bytes.Buffer
		if err := p.Save(&once); err != nil {
			t.Fatalf("Save of a loaded policy: %v", err)
		}
		q, err := Load(bytes.NewReader(once.Bytes()))
		if err != nil {
			t.Fatalf("reloading a saved policy: %v", err)
		}
		if err := q.Save(&twice); err != nil || !bytes.Equal(once.Bytes(), twice.Bytes()) {
			t.Fatalf("Save → Load → Save is not stable (%v)", err)
		}
	})
}
