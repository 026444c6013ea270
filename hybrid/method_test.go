package hybrid

import (
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/policy"
)

// TestMethodTable: every row is complete and consistent, and the package
// doc, docs/design.md and the README name every method of the table.
func TestMethodTable(t *testing.T) {
	if len(Methods) != len(methods) {
		t.Fatalf("%d names for %d methods", len(Methods), len(methods))
	}
	for _, m := range methods {
		if got, err := MethodByName(m.Name); err != nil || got != m {
			t.Errorf("MethodByName(%q) = %v, %v", m.Name, got, err)
		}
		if m.drafter == nil || m.verifier == nil || m.Summary == "" {
			t.Errorf("%s: drafter, verifier and summary are required", m.Name)
		}
		if m.Family != FamilyLLM && m.uploader == nil {
			t.Errorf("%s: no upload rule", m.Name)
		}
		p0 := DefaultParams()
		p0.Method = m.Name
		switch u := uploaderOf(p0); {
		case m.Family == FamilyBlock && u != (policy.Always{}):
			t.Errorf("%s: a block method uploads every round, not by %T", m.Name, u)
		case m.Uncertainty && !m.Attention && u != (policy.Threshold{UTh: p0.UploadThreshold()}):
			t.Errorf("%s: the uncertainty methods upload by the threshold u_th, not by %#v", m.Name, u)
		case m.Name == SLM && u != (policy.Never{}):
			t.Errorf("slm never uploads, not by %#v", u)
		}
		if m.Uncertainty && m.Family != FamilySkip || m.Controlled && m.Family != FamilyBlock {
			t.Errorf("%s: uncertainty belongs to the skip family, draft control to blocks", m.Name)
		}
		p := DefaultParams()
		p.Method = m.Name
		if err := p.Validate(); err != nil {
			t.Errorf("%s: default parameters invalid: %v", m.Name, err)
		}
	}
	if _, err := MethodByName("nope"); err == nil || !strings.Contains(err.Error(), "q-s") {
		t.Errorf("unknown method: err = %v, want one listing the methods", err)
	}
	for _, doc := range []string{"doc.go", "../docs/design.md", "../README.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, name := range Methods {
			if !strings.Contains(text, " "+name+" ") && !strings.Contains(text, "`"+name+"`") {
				t.Errorf("%s does not list method %s", doc, name)
			}
		}
	}
}

// TestWarnings: a skip rule that never consulted the LLM over a real
// output is reported, with what to change; nothing else is.
func TestWarnings(t *testing.T) {
	toks := make([]int, neverConsultedAfter)
	for _, c := range []struct {
		method  string
		uploads int
		tokens  []int
		want    string // "" : no warning
	}{
		{CUHLMOnline, 0, toks, "u_th=0.8 (the method's default"},
		{UHLM, 0, toks, "u_th=0.431"},
		{RandHLM, 0, toks, "rand_p=0.5"},
		{UIHLM, 0, toks, "importance test"},
		{UHLM, 1, toks, ""},
		{UHLM, 0, toks[:neverConsultedAfter-1], ""},
		{SLM, 0, toks, ""},
		{QS, 0, toks, ""},
	} {
		p := DefaultParams()
		p.Method = c.method
		w := Warnings(p, Result{Uploads: c.uploads, Tokens: c.tokens})
		switch {
		case c.want == "" && len(w) > 0:
			t.Errorf("%s, %d uploads, %d tokens: unexpected warning %q", c.method, c.uploads, len(c.tokens), w)
		case c.want != "" && (len(w) != 1 || !strings.Contains(w[0], c.want) || !strings.Contains(w[0], "never consulted")):
			t.Errorf("%s: warnings %q, want one naming %q", c.method, w, c.want)
		}
	}
}

// TestWarningsExplicitThreshold: a u_th the user set gets no advice to
// measure one with hlm calibrate (the default's warning does).
func TestWarningsExplicitThreshold(t *testing.T) {
	toks := make([]int, neverConsultedAfter)
	for _, uth := range []float64{math.NaN(), 0.9} {
		p := DefaultParams()
		p.Method, p.UTh = UHLM, uth
		w := Warnings(p, Result{Tokens: toks})
		if len(w) != 1 || strings.Contains(w[0], "hlm calibrate") != math.IsNaN(uth) || !strings.Contains(w[0], "set a lower u_th") {
			t.Errorf("u_th=%g: %q", uth, w)
		}
	}
}

// TestTreeSettingsWarned: a fixed tree_shape that tree_depth or tree_nodes
// cut, and uploads whose first draft alone exceeded budget_bits, are
// reported with what was cut; shapes that fit and budgets that held are not.
func TestTreeSettingsWarned(t *testing.T) {
	for _, c := range []struct {
		method, shape string
		depth, nodes  int
		over          int
		want          []string // substrings, one warning each; nil: none
	}{
		{TreeQS, "3,2,1", 8, 32, 0, nil},
		{TreeQS, "dynamic", 8, 32, 0, nil},
		{TreeQS, "4,4", 8, 20, 0, nil}, // 4 + 16 nodes: exactly full
		{TreeQS, "4,4", 8, 19, 0, []string{"level 2 is cut after 15 of its 16 nodes"}},
		{TreeQS, "64,64,64", 8, 32, 0, []string{"level 1 is cut after 32 of its 64 nodes"}},
		{TreeKSQS, "1,1,1,1,1,1,1,1,1,1,1,1", 8, 32, 0, []string{"12 levels but tree_depth=8: levels 9… never grow; set tree_depth=12"}},
		{TreeQS, "2,2,2", 2, 4, 0, []string{"3 levels but tree_depth=2", "level 2 is cut after 2 of its 4"}},
		{QS, "64,64,64", 1, 1, 0, nil}, // not a tree method
		{TreeQS, "dynamic", 8, 32, 3, []string{"budget_bits=100 is below what one draft costs in 3 of 5 uploads"}},
		{KSQS, "dynamic", 8, 32, 5, []string{"in 5 of 5 uploads"}},
	} {
		p := DefaultParams()
		p.Method, p.TreeShape, p.TreeDepth, p.TreeNodes, p.Budget = c.method, c.shape, c.depth, c.nodes, 100
		w := Warnings(p, Result{Uploads: 5, OverBudget: c.over, UplinkBits: 500})
		ok := len(w) == len(c.want)
		for i := 0; ok && i < len(w); i++ {
			ok = strings.Contains(w[i], c.want[i])
		}
		if !ok {
			t.Errorf("%s tree_shape=%s depth %d nodes %d, %d over budget: warnings %q, want %q", c.method, c.shape, c.depth, c.nodes, c.over, w, c.want)
		}
	}
}

// TestTreeSampleFromSLMRefused: a tree's candidates must come from what is
// sent (the server checks each against that support), so sample_from=slm
// with a tree method is refused before any round; chains keep it.
func TestTreeSampleFromSLMRefused(t *testing.T) {
	for _, m := range []string{TreeQS, TreeKSQS, QS, KSQS} {
		p := DefaultParams()
		p.Method, p.SampleFrom = m, SampleSLM
		err := p.Validate()
		tree := m == TreeQS || m == TreeKSQS
		if tree != (err != nil) || tree && (!errors.Is(err, ErrParam) || !strings.Contains(err.Error(), "sample_from=slm with "+m)) {
			t.Errorf("%s with sample_from=slm: %v", m, err)
		}
	}
}

// pathsOnly hides a model's tree attention: its sessions are plain
// model.Sessions, so a tree is verified path by path.
type pathsOnly struct{ model.Model }

func (m pathsOnly) NewSession() model.Session {
	return struct{ model.Session }{m.Model.NewSession()}
}

// TestTreeOnePassEqualsPathByPath: the tree methods commit the same
// tokens whether the server evaluates the tree in one pass (hlm's engine
// has tree attention, model.TreeSession) or the nodes the walk reaches path
// by path (an engine without it): the one pass is bit-identical to the
// paths, and the cache after KeepPath serves the next rounds the same
// logits.
func TestTreeOnePassEqualsPathByPath(t *testing.T) {
	llm, slm := openPair(t, builtin.Prefix+"stories260K-draft")
	if _, ok := llm.NewSession().(model.TreeSession); !ok {
		t.Fatal("hlm's engine has no tree attention")
	}
	prompt := llm.Tokenizer().Encode("Once upon a time, there was a little", true)
	for _, m := range []string{TreeQS, TreeKSQS} {
		for seed := range uint64(6) {
			p := DefaultParams()
			p.Method, p.Seed, p.MaxTokens = m, seed, 60
			p.TreeShape = []string{"dynamic", "3,2,2"}[seed%2]
			one := runOnce(t, p, llm, slm, prompt)
			paths := runOnce(t, p, pathsOnly{llm}, slm, prompt)
			if fmt.Sprint(one.Tokens) != fmt.Sprint(paths.Tokens) || one.UplinkBits != paths.UplinkBits {
				t.Errorf("%s seed %d: one pass %v, path by path %v", m, seed, one.Tokens, paths.Tokens)
			}
		}
	}
}

// TestUploadersParse: every upload rule the method table builds, with the
// defaults and with each uncertainty rule's key moved, prints a form
// (String) that policy.Parse reads back as an equal rule — the promise of
// package policy's doc, kept for the rules the methods actually use.
func TestUploadersParse(t *testing.T) {
	for _, m := range methods {
		if m.uploader == nil {
			continue
		}
		for _, sets := range [][]string{nil, {"u_th=0.2", "imp_k=5", "gamma=0.2", "rand_p=0.3"}} {
			p := DefaultParams()
			p.Method = m.Name
			if err := p.SetAll(sets); err != nil {
				t.Fatal(err)
			}
			up := m.uploader(p)
			s := fmt.Sprint(up)
			back, err := policy.Parse(s)
			if err != nil {
				t.Errorf("%s: its upload rule %q does not parse: %v", m.Name, s, err)
				continue
			}
			if !reflect.DeepEqual(back, up) {
				t.Errorf("%s: %q parses to %#v, want %#v", m.Name, s, back, up)
			}
		}
	}
}

// TestMethodHelp: --help's method list has a line for every method,
// fits its width, and names the keys each method reads.
func TestMethodHelp(t *testing.T) {
	h := MethodHelp(80)
	for _, l := range strings.Split(strings.TrimSuffix(h, "\n"), "\n") {
		if len(l) > 80 {
			t.Errorf("line of %d columns: %q", len(l), l)
		}
	}
	flat := strings.Join(strings.Fields(h), " ")
	for _, m := range methods {
		if !strings.Contains(h, "\n  "+m.Name+" ") && !strings.HasPrefix(h, "  "+m.Name+" ") {
			t.Errorf("no line for %s", m.Name)
		}
		if len(m.Keys) > 0 && !strings.Contains(flat, "reads "+strings.Join(m.Keys, ", ")) {
			t.Errorf("%s: its keys %v are not listed", m.Name, m.Keys)
		}
	}
}

// TestOneTokenMethodsDocumented: docs/protocol.md's list of the methods
// whose rounds commit one token without the bonus is the skip family's
// methods that upload (cu-hlm-* standing for both CU-HLM variants).
func TestOneTokenMethodsDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Skipf("docs/protocol.md: %v", err)
	}
	const lead = "one-token round without the bonus ("
	doc := strings.Join(strings.Fields(string(b)), " ")
	i := strings.Index(doc, lead)
	if i < 0 {
		t.Fatalf("docs/protocol.md has no %q", lead)
	}
	list, _, _ := strings.Cut(doc[i+len(lead):], ")")
	list = strings.TrimSuffix(list, " by default")
	got := map[string]bool{}
	for _, n := range strings.Split(list, ", ") {
		if n == "cu-hlm-*" {
			got[CUHLMOffline], got[CUHLMOnline] = true, true
			continue
		}
		got[n] = true
	}
	for _, m := range methods {
		want := m.Family == FamilySkip && m.Name != SLM
		if got[m.Name] != want {
			t.Errorf("%s: in docs/protocol.md's one-token list: %v, want %v", m.Name, got[m.Name], want)
		}
		delete(got, m.Name)
	}
	for n := range got {
		t.Errorf("docs/protocol.md's one-token list names %q, which is no method", n)
	}
}

// TestCodecOfMethod: hybrid.Codec gives every distribution-sending method
// its codec, nil for the token-id methods the doc names, and an error for
// an unknown method (which the unexported lookup silently read as hlm).
func TestCodecOfMethod(t *testing.T) {
	idsOnly := []string{LLM, SLM, Coupled, Replica, CoupledList}
	for _, m := range Methods {
		p := DefaultParams()
		p.Method = m
		c, err := Codec(p)
		if err != nil {
			t.Errorf("%s: %v", m, err)
			continue
		}
		if (c == nil) != slices.Contains(idsOnly, m) {
			t.Errorf("%s: codec %v, token ids only: %v", m, c, slices.Contains(idsOnly, m))
		}
	}
	p := DefaultParams()
	p.Method = "nope"
	if c, err := Codec(p); err == nil {
		t.Errorf("unknown method: codec %v, no error", c)
	}
	p = DefaultParams()
	p.Method, p.Ell = QS, 0
	if _, err := Codec(p); !errors.Is(err, ErrParam) {
		t.Errorf("q-s with ell=0: err = %v", err)
	}
}
