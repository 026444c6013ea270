package chat

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/internal/refs"
)

// TestDifferential renders random templates — expressions, filters,
// tests, methods and statements drawn from a small grammar, over fixed
// variables — with hlm and @huggingface/jinja, and classifies them as
// TestReference does: a mismatch fails. It draws 400 templates (seed 1);
// HLM_CHAT_DIFF=N draws N, HLM_CHAT_DIFF_SEED picks the seed, and with
// HLM_CHAT_PYTHON=1 every text hlm renders must also be Python's Jinja's.
func TestDifferential(t *testing.T) {
	node := refs.Node(t)
	modules := refs.NodeModules(t)
	n := 400
	if s := os.Getenv("HLM_CHAT_DIFF"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	seed := uint64(1)
	if s := os.Getenv("HLM_CHAT_DIFF_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	g := &templateGen{rng: rand.New(rand.NewPCG(seed, 0))}
	vars := map[string]json.RawMessage{}
	if err := json.Unmarshal([]byte(diffVars), &vars); err != nil {
		t.Fatal(err)
	}
	reqs := make([]refRequest, n)
	for i := range reqs {
		tmpl := g.template()
		if i%2 == 1 {
			tmpl = g.whitespace()
		}
		reqs[i] = refRequest{Template: tmpl, Messages: []Message{{Role: "user", Content: "Hi"}}, Vars: vars, Now: refNow}
	}
	js := renderAll(t, exec.Command(node, "testdata/render.mjs", modules), reqs)
	var py []refResult
	if os.Getenv("HLM_CHAT_PYTHON") != "" {
		py = renderAll(t, exec.Command("python3", "testdata/render.py"), reqs)
	}
	counts := map[outcome]int{}
	reasons := map[string]int{}
	pyDiffer := 0
	for i, r := range reqs {
		in := Input{Messages: r.Messages, Vars: map[string]any{}, Now: testNow}
		for k, v := range vars {
			in.Vars[k] = v
		}
		var got string
		tmpl, err := Parse(r.Template)
		if err == nil {
			got, err = tmpl.Render(in)
		}
		o, why := classify(got, err, js[i])
		counts[o]++
		if o == refused {
			reasons[strings.SplitN(why, " (", 2)[0]]++
		}
		if o == mismatch {
			t.Errorf("template %q: %s", r.Template, why)
		}
		if py != nil && err == nil && (py[i].Text == nil || *py[i].Text != got) {
			pyDiffer++
			_, why := classify(got, nil, py[i])
			t.Errorf("template %q: Python's Jinja differs: %s", r.Template, why)
		}
	}
	var b strings.Builder
	for k, v := range reasons {
		fmt.Fprintf(&b, "\n  %5d  %s", v, k)
	}
	t.Logf("%d random templates (seed %d): %d pass, %d both fail, %d refused, %d mismatch; Python differs on %d; refusals:%s",
		n, seed, counts[pass], counts[bothFail], counts[refused], counts[mismatch], pyDiffer, b.String())
}

const diffVars = `{"s": "Hello World", "w": "  padded\ttext \n", "e": "", "u": "héllo ünïcode", "n": 3, "k": -2,
"f": 1.5, "t": true, "z": null, "x": ["b", "a", "c"], "nums": [3, 1, 2], "m": {"a": 1, "b": "two", "c": [1, 2]},
"l": [{"role": "user", "content": "hi", "n": 2}, {"role": "assistant", "content": "yo"}, {"role": "user", "content": "bye", "n": 1}],
"j": "{\"k\": 1}"}`

// templateGen draws random templates.
type templateGen struct {
	rng *rand.Rand
}

func (g *templateGen) pick(xs ...string) string { return xs[g.rng.IntN(len(xs))] }

func (g *templateGen) template() string {
	var b strings.Builder
	for i := 0; i < 1+g.rng.IntN(3); i++ {
		if g.rng.IntN(3) == 0 {
			b.WriteString(g.pick("text ", "\n", "  line\n", "a-b "))
		}
		b.WriteString(g.statement(2))
	}
	return b.String()
}

// whitespace draws a template of text, white space and tags with every
// kind of whitespace control, nested ifs and loops, comments and a
// generation tag: the lexer's and the trim and lstrip rules' ground.
func (g *templateGen) whitespace() string {
	var b strings.Builder
	var open []string
	for i := 0; i < 4+g.rng.IntN(10); i++ {
		l, r := g.pick("", "", "-"), g.pick("", "", "-")
		switch g.rng.IntN(9) {
		case 0, 1:
			b.WriteString(g.pick(" ", "\n", "\t", "x", "  \n  ", "\r\n", " \n\n", "y ", "\u00a0", "\n   "))
		case 2:
			b.WriteString("{{" + l + " " + g.pick("'v'", "' w '", "n", "''", "'\\n'") + " " + r + "}}")
		case 3:
			b.WriteString("{#" + l + " c " + r + "#}")
		case 4:
			b.WriteString("{%" + l + " if " + g.pick("true", "false", "n") + " " + r + "%}")
			open = append(open, "endif")
		case 5:
			b.WriteString("{%" + l + " for i in range(2) " + r + "%}")
			open = append(open, "endfor")
		case 6:
			if len(open) > 0 {
				b.WriteString("{%" + l + " " + open[len(open)-1] + " " + r + "%}")
				open = open[:len(open)-1]
			}
		case 7:
			b.WriteString("{%" + l + " set q = 1 " + r + "%}")
		case 8:
			b.WriteString("{%" + l + " " + g.pick("generation", "endgeneration") + " " + r + "%}")
		}
	}
	for len(open) > 0 {
		b.WriteString(g.pick("", "\n", " ") + "{%" + g.pick("", "-") + " " + open[len(open)-1] + " " + g.pick("", "-") + "%}" + g.pick("", "\n"))
		open = open[:len(open)-1]
	}
	return b.String()
}

func (g *templateGen) statement(depth int) string {
	dash := func() string { return g.pick("", "-") }
	if depth == 0 {
		return "{{" + dash() + " " + g.expr(3) + " " + dash() + "}}"
	}
	switch g.rng.IntN(12) {
	case 6:
		return fmt.Sprintf("{%% macro box(t) %%}[{{ t }}{{ caller(%s) }}]{%% endmacro %%}{%% call(c) box(%s) %%}<{{ c }}>%s{%% endcall %%}", g.expr(1), g.expr(1), g.statement(depth-1))
	case 7:
		return fmt.Sprintf("{%% filter %s %%}%s{%% endfilter %%}", g.pick("upper", "lower", "trim", "title", "capitalize", "indent(2)", "replace('a', 'b')", "length"), g.statement(depth-1))
	case 8:
		return fmt.Sprintf("{%% for v in %s if %s %%}{{ loop.index0 }}{{ loop.revindex }}{{ loop.first }}{{ loop.previtem | default('-') }}%s{%% if loop.index > %d %%}{%% break %%}{%% endif %%}{%% else %%}E{%% endfor %%}",
			g.iterable(), g.pick("v", "v is string", "v != 1", "loop is undefined", "v is defined"), g.statement(depth-1), g.rng.IntN(3))
	case 9:
		return fmt.Sprintf("{%% set q %%}%s{%% endset %%}[{{ q }}]", g.statement(depth-1))
	case 10:
		return fmt.Sprintf("{%% set ns = namespace(a=%s, b=[]) %%}{%% for v in %s %%}{%% if %s %%}{%% set ns.a = %s %%}{%% continue %%}{%% endif %%}{%% set ns.b = ns.b + [v] %%}{%% endfor %%}{{ ns.a }}{{ ns.b | length }}",
			g.expr(1), g.iterable(), g.expr(1), g.pick("v", "ns.a ~ v", "loop.index"))
	case 11:
		return fmt.Sprintf("{{ %s | tojson }}", g.pick("{'a': [1, 'x'], 'b': {'c': none}}", "m", "l", "[s, n, f, t, z]", "l | map(attribute='content') | list", "x | sort", "{'k': f * 2}"))
	case 0:
		return fmt.Sprintf("{%%%s if %s %s%%}%s{%% else %%}%s{%% endif %%}", dash(), g.expr(2), dash(), g.statement(depth-1), g.statement(depth-1))
	case 1:
		return fmt.Sprintf("{%%%s for v in %s %s%%}{{ v }}{{ loop.index }}%s{%% endfor %%}", dash(), g.iterable(), dash(), g.statement(depth-1))
	case 2:
		return fmt.Sprintf("{%% set q = %s %%}{{ q }}", g.expr(3))
	case 3:
		return fmt.Sprintf("{%% set ns = namespace(v=%s) %%}{%% for i in nums %%}{%% set ns.v = %s %%}{%% endfor %%}{{ ns.v }}", g.expr(1), g.pick("ns.v ~ i", "i", "ns.v"))
	case 4:
		return fmt.Sprintf("{%% macro mac(p, r='d') %%}<{{ p }}|{{ r }}>{%% endmacro %%}{{ mac(%s) }}", g.pick(g.expr(2), g.expr(1)+", "+g.expr(1), "r="+g.expr(1)+", p=1"))
	}
	return "{{ " + g.expr(3) + " }}"
}

func (g *templateGen) iterable() string {
	return g.pick("x", "nums", "l", "m", "m.items()", "range(n)", "s.split(' ')", "x | reverse", "l | selectattr('n')",
		"l | map(attribute='role')", "[1, 'a', none]", "(1, 2)", "z", "s", "m | dictsort", "x[1:]", "nums | sort")
}

func (g *templateGen) expr(depth int) string {
	if depth == 0 {
		return g.atom()
	}
	d := depth - 1
	switch g.rng.IntN(10) {
	case 0, 1:
		return g.atom()
	case 2:
		return g.expr(d) + " | " + g.filter()
	case 3:
		return g.expr(d) + " " + g.pick("+", "-", "*", "/", "//", "%", "~", "==", "!=", "<", ">=", "in", "not in", "and", "or", "**") + " " + g.expr(d)
	case 4:
		return g.expr(d) + " is " + g.pick("", "not ") + g.pick("defined", "undefined", "none", "string", "number", "integer", "mapping", "iterable", "sequence", "boolean", "odd", "even", "true", "false", "lower", "upper", "callable")
	case 5:
		return g.pick("not ", "-", "") + "(" + g.expr(d) + ")"
	case 6:
		return g.expr(d) + " if " + g.expr(d) + g.pick("", " else "+g.expr(d))
	case 7:
		return g.atom() + "." + g.pick("strip()", "lstrip()", "rstrip('\\n')", "upper()", "lower()", "title()", "capitalize()",
			"split()", "split(' ', 1)", "startswith('H')", "endswith(('d', 'x'))", "replace('l', 'L')", "get('a')", "get('q', 'dflt')",
			"items()", "keys()", "values()", "a", "length", "role", "0")
	case 8:
		return g.atom() + g.pick("[0]", "[-1]", "[1:]", "[::-1]", "[:2]", "['a']", "['role']", "[5]")
	}
	return "(" + g.expr(d) + ")"
}

func (g *templateGen) atom() string {
	return g.pick("s", "w", "e", "u", "n", "k", "f", "t", "z", "x", "nums", "m", "l", "l[0]", "j", "missing",
		"'str'", "\"dq\"", "42", "0", "-1", "2.5", "0.1", "true", "false", "none", "[1, 2]", "['x', 'y']", "{'a': 1}", "(1, 'a')", "''",
		"range(3)", "messages", "messages[0].content", "namespace(a=1).a")
}

func (g *templateGen) filter() string {
	return g.pick("trim", "length", "upper", "lower", "title", "capitalize", "first", "last", "join", "join(', ')", "list",
		"reverse", "sort", "sort(reverse=true)", "unique", "string", "int", "float", "abs", "tojson", "tojson(indent=2)",
		"tojson(separators=(',', ':'))", "tojson(ensure_ascii=true)", "default('D')", "default('D', true)", "items", "dictsort",
		"indent", "indent(2, true)", "replace('o', '0')", "map(attribute='role')", "selectattr('n')", "rejectattr('n')",
		"selectattr('role', 'equalto', 'user')", "safe", "int(7)", "float(2.0)", "bool", "count", "wordcount", "center")
}
