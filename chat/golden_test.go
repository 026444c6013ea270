package chat

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/internal/refs"
)

// The golden renders: hlm's own templates in testdata/golden/*.jinja over
// a few conversations of testdata/conversations.json, each render pinned
// in testdata/golden/TEMPLATE.CONVERSATION.golden (the text, or "error: "
// and the error). Regenerate them with
//
//	go test ./chat -run TestGolden -update
//
// which writes hlm's renders after checking each against @huggingface/jinja
// (refusing to write when the reference is absent or disagrees).

var update = flag.Bool("update", false, "rewrite testdata/golden/*.golden from hlm's renders (checked against @huggingface/jinja)")

var goldenConversations = []string{"system-user", "multi-turn-nosystem-nogen", "unicode-newlines", "thinking", "tools", "tool-calls-string-args"}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.jinja")
	if err != nil || len(files) == 0 {
		t.Fatal("no templates in testdata/golden")
	}
	convs := map[string]conversation{}
	for _, c := range loadConversations(t) {
		convs[c.Name] = c
	}
	type render struct {
		path string
		req  refRequest
		got  string
	}
	var renders []render
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tmpl, err := Parse(string(src))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		tpl := refTemplate{name: filepath.Base(f), src: string(src), bos: "<s>", eos: "</s>"}
		for _, name := range goldenConversations {
			c, ok := convs[name]
			if !ok {
				t.Fatalf("no conversation %q", name)
			}
			got, err := tmpl.Render(c.input(tpl))
			if err != nil {
				got = "error: " + err.Error()
			}
			renders = append(renders, render{
				path: strings.TrimSuffix(f, ".jinja") + "." + name + ".golden",
				req: refRequest{Template: tpl.src, Messages: c.Messages, AddGenerationPrompt: c.AddGenerationPrompt,
					BOSToken: tpl.bos, EOSToken: tpl.eos, Vars: c.Vars, Now: refNow},
				got: got,
			})
		}
	}

	if *update {
		node := refs.Node(t)
		modules := refs.NodeModules(t)
		reqs := make([]refRequest, len(renders))
		for i, r := range renders {
			reqs[i] = r.req
		}
		res := renderAll(t, exec.Command(node, "testdata/render.mjs", modules), reqs)
		for i, r := range renders {
			ref := res[i]
			ok := (ref.Text != nil && *ref.Text == r.got) || (ref.Error != nil && strings.HasPrefix(r.got, "error: "))
			if !ok {
				t.Fatalf("%s: hlm renders %q, the reference %+v; not updating", r.path, r.got, ref)
			}
			if err := os.WriteFile(r.path, []byte(r.got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	for _, r := range renders {
		want, err := os.ReadFile(r.path)
		if err != nil {
			t.Fatalf("%v (go test ./chat -run TestGolden -update writes it)", err)
		}
		if r.got != string(want) {
			t.Errorf("%s:\n%s", r.path, firstDiff(string(want), r.got))
		}
	}
}
