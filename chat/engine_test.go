package chat

import (
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hlmproject/hlm/internal/refs"
)

// engineCase is one template rendered with vars. want is the text, or,
// with err set, the error the render must wrap (and, for ErrRaised, the
// message it must carry in want).
type engineCase struct {
	name string
	tmpl string
	vars string // a JSON object of variables
	want string
	err  error
}

var engineCases = []engineCase{
	// Whitespace: trim_blocks, lstrip_blocks, "-" control, comments, the
	// trailing newline, {% generation %}.
	{name: "text", tmpl: "Hello, world!", want: "Hello, world!"},
	{name: "trailing newline", tmpl: "a\n", want: "a"},
	{name: "two trailing newlines", tmpl: "a\n\n", want: "a\n"},
	{name: "trim blocks", tmpl: "{% if true %}\nyes\n{% endif %}\nend", want: "yes\nend"},
	{name: "lstrip blocks", tmpl: "<\n    {% if true %}\n    x\n    {% endif %}\n>", want: "<\n    x\n>"},
	{name: "no lstrip for expressions", tmpl: "a\n  {{ 'b' }}\nc", want: "a\n  b\nc"},
	{name: "dash control", tmpl: "a  \n  {%- if true -%}  \n b {{- ' c ' -}} d {%- endif %}", want: "ab c d"},
	{name: "comment", tmpl: "a {# note #} b", want: "a  b"},
	{name: "comment dash", tmpl: "a {#- note -#} b", want: "ab"},
	{name: "comment trims newline", tmpl: "a{# c #}\nb", want: "ab"},
	{name: "generation tag", tmpl: "x {% generation %}y{% endgeneration %} z", want: "x y z"},
	{name: "generation tag dashes", tmpl: "x {%- generation -%} y {%- endgeneration %} z", want: "xy z"},
	{name: "expression newline kept", tmpl: "{{ 'a' }}\nb", want: "a\nb"},

	// Literals and printing.
	{name: "strings", tmpl: `{{ 'it''s' }} {{ "a\tb\n" }} {{ 'x' "y" }} {{ '\u00e9\x41' }}`, want: "its a\tb\n xy éA"},
	{name: "integers", tmpl: "{{ 42 }} {{ -7 }} {{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 2 ** 3 ** 2 }}", want: "42 -7 7 9 64"},
	{name: "floats", tmpl: "{{ 1.5 }} {{ 7 / 2 }} {{ 4 / 2 }} {{ 0.1 + 0.2 }} {{ 2.0 }}", want: "1.5 3.5 2.0 0.30000000000000004 2.0"},
	{name: "floor div and mod", tmpl: "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ 7.5 // 2 }}", want: "3 -4 1 3.0"},
	{name: "undefined prints nothing", tmpl: "[{{ nothing }}][{{ nothing.attr is defined }}]", err: ErrUnsupported},
	{name: "undefined empty", tmpl: "[{{ nothing }}]", want: "[]"},
	{name: "concat", tmpl: "{{ 'a' ~ 1 ~ 'b' }} {{ 'a' + 'b' }}", want: "a1b ab"},
	{name: "list concat", tmpl: "{{ ([1] + [2, 3]) | length }}", want: "3"},

	// Comparisons and logic.
	{name: "compare", tmpl: "{{ 1 < 2 }}", err: ErrUnsupported}, // printing a boolean
	{name: "compare if", tmpl: "{% if 1 < 2 and 2 >= 2 and not 3 == 4 and 'a' != 'b' %}ok{% endif %}", want: "ok"},
	{name: "and or values", tmpl: "{{ '' or 'x' }} {{ 'a' and 'b' }} {{ 0 or 'z' }}", want: "x b z"},
	{name: "in", tmpl: "{% if 'b' in 'abc' and 2 in [1, 2] and 'k' in {'k': 1} and 'q' not in 'abc' %}ok{% endif %}", want: "ok"},
	{name: "in undefined", tmpl: "{% if 'a' not in nothing %}ok{% endif %}", want: "ok"},
	{name: "ternary", tmpl: "{{ 'y' if 1 else 'n' }}{{ 'y' if 0 else 'n' }}{{ 'only' if 0 }}", want: "yn"},
	{name: "ternary chain", tmpl: "{{ 'a' if x == 1 else 'b' if x == 2 else 'c' }}", vars: `{"x": 2}`, want: "b"},
	{name: "none equals undefined", tmpl: "{% if nothing == none %}x{% endif %}", err: ErrUnsupported},
	{name: "string equals number", tmpl: "{% if '1' == 1 %}x{% endif %}", err: ErrUnsupported},
	{name: "string not equal to other string", tmpl: "{% if 'a' == 'b' %}x{% else %}y{% endif %}", want: "y"},
	{name: "equal lists", tmpl: "{% if [1] == [1] %}x{% endif %}", err: ErrUnsupported},

	// Member access, indexing, slicing.
	{name: "members", tmpl: "{{ m.role }} {{ m['content'] }} {{ l[0] }} {{ l[-1] }} {{ l.1 }} [{{ l[9] }}]", vars: `{"m": {"role": "user", "content": "hi"}, "l": ["a", "b", "c"]}`, want: "user hi a c b []"},
	{name: "slices", tmpl: "{{ s[1:3] }} {{ s[::-1] }} {{ s[-2:] }} {{ (l[::2] | join(',')) }} {{ l[:-1] | length }}", vars: `{"s": "héllo", "l": [1, 2, 3, 4, 5]}`, want: "él olléh lo 1,3,5 4"},
	{name: "missing key", tmpl: "[{{ m.nope }}]", vars: `{"m": {}}`, want: "[]"},
	{name: "attribute of undefined", tmpl: "{{ nothing.attr }}", err: ErrUnsupported},
	{name: "list length attribute", tmpl: "{{ l.length }}", vars: `{"l": [1]}`, err: ErrUnsupported},
	{name: "dict method shadowed", tmpl: "{{ m.items }}", vars: `{"m": {"items": "x"}}`, err: ErrUnsupported},

	// Filters.
	{name: "trim length", tmpl: "[{{ '  a b  ' | trim }}] {{ 'abc' | length }} {{ [1, 2] | length }} {{ {'a': 1} | length }}", want: "[a b] 3 2 1"},
	{name: "upper lower title capitalize", tmpl: "{{ 'ab' | upper }} {{ 'AB' | lower }} {{ 'hello world' | title }} {{ 'hello' | capitalize }}", want: "AB ab Hello World Hello"},
	{name: "title differs", tmpl: "{{ 'hELLO' | title }}", err: ErrUnsupported},
	{name: "join", tmpl: "{{ ['a', 'b'] | join }} {{ ['a', 'b'] | join(', ') }} {{ [1, 2] | join('-') }} {{ 'abc' | join('.') }}", want: "ab a, b 1-2 a.b.c"},
	{name: "join booleans", tmpl: "{{ [true] | join }}", err: ErrUnsupported},
	{name: "default", tmpl: "{{ nothing | default('d') }} {{ '' | default('d') }} {{ '' | default('d', true) }} {{ x | default('d') }}", vars: `{"x": "v"}`, want: "d  d v"},
	{name: "first last reverse sort", tmpl: "{{ l | first }}{{ l | last }} {{ l | reverse | join }} {{ l | sort | join }} {{ ['b', 'A', 'c'] | sort | join }} {{ l | sort(reverse=true) | join }}", vars: `{"l": ["b", "a", "c"]}`, want: "bc cab abc Abc cba"},
	{name: "sort by attribute", tmpl: "{{ l | sort(attribute='n') | map(attribute='s') | join }}", vars: `{"l": [{"n": 2, "s": "b"}, {"n": 1, "s": "a"}]}`, want: "ab"},
	{name: "map selectattr rejectattr", tmpl: "{{ l | selectattr('on') | map(attribute='n') | join }} {{ l | rejectattr('on') | map(attribute='n') | join }} {{ l | selectattr('n', 'equalto', 'b') | map(attribute='n') | join }}", vars: `{"l": [{"n": "a", "on": true}, {"n": "b", "on": false}, {"n": "c"}]}`, want: "a bc b"},
	{name: "map nested attribute default", tmpl: "{{ l | map(attribute='f.n', default='?') | join(',') }}", vars: `{"l": [{"f": {"n": "x"}}, {}]}`, want: "x,?"},
	{name: "generator length", tmpl: "{{ l | selectattr('x') | length }}", vars: `{"l": [{"x": 1}]}`, err: ErrUnsupported},
	{name: "generator list length", tmpl: "{{ l | selectattr('x') | list | length }}", vars: `{"l": [{"x": 1}]}`, want: "1"},
	{name: "replace", tmpl: "{{ 'aaa' | replace('a', 'b') }} {{ 'aaa' | replace('a', 'b', 2) }} {{ 'abc'.replace('b', '') }}", want: "bbb bba ac"},
	{name: "string int float", tmpl: "{{ 3 | string }} {{ '42' | int + 1 }} {{ 'x' | int }} {{ ' 7 ' | int }} {{ '2.5' | float }} {{ 3.7 | int }}", want: "3 43 0 7 2.5 3"},
	{name: "int of partial number", tmpl: "{{ '12abc' | int }}", err: ErrUnsupported},
	{name: "items dictsort", tmpl: "{% for k, v in d | items %}{{ k }}={{ v }};{% endfor %} {% for k, v in d | dictsort %}{{ k }}{% endfor %} {% for k, v in d.items() %}{{ k }}{% endfor %}", vars: `{"d": {"b": 1, "a": 2}}`, want: "b=1;a=2; ab ba"},
	{name: "keys values", tmpl: "{{ d.keys() | join }} {{ d.values() | join }}", vars: `{"d": {"b": 1, "a": 2}}`, want: "ba 12"},
	{name: "indent", tmpl: "{{ 'a\nb\n\nc' | indent }}|{{ 'a\nb' | indent(2, true) }}|{{ 'a\n\nb' | indent(1, blank=true) }}", want: "a\n    b\n\n    c|  a\n  b|a\n \n b"},
	{name: "unique", tmpl: "{{ [1, 2, 1, 3] | unique | join }}", want: "123"},
	{name: "unique case", tmpl: "{{ ['a', 'A'] | unique | join }}", err: ErrUnsupported},
	{name: "safe", tmpl: "{{ '<b>' | safe }}", want: "<b>"},
	{name: "safe plus escapes in Python", tmpl: "{{ 'a' | safe + '<b>' }}", err: ErrUnsupported},
	{name: "abs bool", tmpl: "{{ -3 | abs }} {{ true | int }}", want: "3 1"},
	{name: "unknown filter", tmpl: "{% if true %}{{ 'a' | nosuchfilter }}{% endif %}", err: ErrRender},
	{name: "unknown filter outside an if", tmpl: "{{ 'a' | nosuchfilter if false }}{{ 'b' | nosuchfilter }}", err: ErrUnsupported},
	{name: "unknown filter not reached", tmpl: "{% if false %}{{ 'a' | nosuchfilter }}{% endif %}ok", want: "ok"},
	{name: "filter Python lacks", tmpl: "{% if true %}{{ true | bool }}{% endif %}", err: ErrUnsupported},
	{name: "filter on undefined", tmpl: "{{ nothing | trim }}", err: ErrRender},

	// tojson as transformers defines it (json.dumps, ensure_ascii=False).
	{name: "tojson", tmpl: "{{ x | tojson }}", vars: `{"x": {"a": [1, "é", null, true], "b": {}, "c": [], "d": "q\"\\\n"}}`, want: `{"a": [1, "é", null, true], "b": {}, "c": [], "d": "q\"\\\n"}`},
	{name: "tojson indent", tmpl: "{{ x | tojson(indent=2) }}", vars: `{"x": {"a": [1, 2], "b": {"c": "d"}, "e": []}}`, want: "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {\n    \"c\": \"d\"\n  },\n  \"e\": []\n}"},
	{name: "tojson separators ascii", tmpl: "{{ x | tojson(separators=(',', ':'), ensure_ascii=true) }}", vars: `{"x": {"a": "é😀", "b": 1}}`, want: `{"a":"\u00e9\ud83d\ude00","b":1}`},
	{name: "tojson sort keys", tmpl: "{{ x | tojson(sort_keys=true) }}", vars: `{"x": {"b": 1, "a": 2}}`, want: `{"a": 2, "b": 1}`},
	{name: "tojson sort mixed-case keys", tmpl: "{{ x | tojson(sort_keys=true) }}", vars: `{"x": {"b": 1, "A": 2}}`, err: ErrUnsupported},
	{name: "tojson float", tmpl: "{{ [1.5, 0.25] | tojson }}", want: "[1.5, 0.25]"},
	{name: "tojson integral float", tmpl: "{{ x | tojson }}", vars: `{"x": 1.0}`, err: ErrUnsupported},
	{name: "tojson undefined", tmpl: "{{ nothing | tojson }}", err: ErrUnsupported},
	{name: "tojson string", tmpl: "{{ 'a\u0001' | tojson }}", want: `"a\u0001"`},

	// Tests.
	{name: "tests", tmpl: "{% if x is defined and y is undefined and n is none and s is string and m is mapping and l is iterable and l is sequence and 3 is odd and 4 is even and 1 is number and 1 is integer and t is boolean and t is true and 'ab' is lower and 'AB' is upper %}ok{% endif %}", vars: `{"x": 1, "n": null, "s": "a", "m": {}, "l": [], "t": true}`, want: "ok"},
	{name: "test not", tmpl: "{% if x is not none and x is not string %}ok{% endif %}", vars: `{"x": 1}`, want: "ok"},
	{name: "mapping is iterable", tmpl: "{% if m is iterable %}x{% endif %}", vars: `{"m": {}}`, err: ErrUnsupported},
	{name: "unknown test", tmpl: "{% if 1 is prime %}x{% endif %}", err: ErrRender},
	{name: "chained tests", tmpl: "{% if x is defined is true %}x{% endif %}", err: ErrUnsupported},
	{name: "chained comparison", tmpl: "{% if 1 < 2 < 3 %}x{% endif %}", err: ErrUnsupported},
	{name: "conditional if test", tmpl: "{% if 1 if true else 0 %}x{% endif %}", err: ErrUnsupported},
	{name: "conditional if test in parentheses", tmpl: "{% if (1 if true else 0) %}x{% endif %}", want: "x"},
	{name: "plus then tilde", tmpl: "{{ 'a' + 'b' ~ 'c' }} {{ 'n=' ~ 1 + 2 }}", err: ErrUnsupported},
	{name: "plus then tilde on strings", tmpl: "{{ 'a' + 'b' ~ 'c' + 'd' }}", want: "abcd"},
	{name: "signed number member", tmpl: "{{ -1.x }}", err: ErrUnsupported},

	// String and mapping methods.
	{name: "strip", tmpl: "[{{ '  a  '.strip() }}][{{ '  a  '.lstrip() }}][{{ '  a  '.rstrip() }}][{{ '\na\n'.strip('\n') }}]", want: "[a][a  ][  a][a]"},
	{name: "strip chars differ", tmpl: "{{ 'xax'.strip('x') }}", err: ErrUnsupported},
	{name: "split", tmpl: "{{ 'a,b,,c'.split(',') | join('|') }} {{ '  a  b '.split() | join('|') }} {{ 'a,b,c'.split(',', 1) | join('|') }} {{ 'a b c'.split(none, 1) | join('|') }}", want: "a|b||c a|b a|b,c a|b c"},
	{name: "startswith endswith", tmpl: "{% if 'hello'.startswith('he') and 'hello'.endswith(('x', 'lo')) and not 'hello'.startswith('lo') %}ok{% endif %}", want: "ok"},
	{name: "get", tmpl: "{{ m.get('a') }} {{ m.get('b', 'd') }} [{{ m.get('c') is none }}]", vars: `{"m": {"a": "x"}}`, err: ErrUnsupported},
	{name: "get default", tmpl: "{{ m.get('a') }} {{ m.get('b', 'd') }}{% if m.get('c') is none %} none{% endif %}", vars: `{"m": {"a": "x"}}`, want: "x d none"},
	{name: "no append", tmpl: "{% set l = [] %}{{ l.append(1) }}", err: ErrRender},
	{name: "no format", tmpl: "{{ '{}'.format(1) }}", err: ErrRender},

	// Statements.
	{name: "for loop", tmpl: "{% for x in l %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ x }}{% if loop.first %}F{% endif %}{% if loop.last %}L{% endif %}{{ loop.length }};{% endfor %}", vars: `{"l": ["a", "b"]}`, want: "102aF2;211bL2;"},
	{name: "loop prev next", tmpl: "{% for x in [1, 2, 3] %}{{ loop.previtem | default('-') }}{{ loop.nextitem | default('-') }} {% endfor %}", want: "-2 13 2- "},
	{name: "loop depth", tmpl: "{% for x in [1] %}{{ loop.depth }}{% endfor %}", err: ErrUnsupported},
	{name: "for else", tmpl: "{% for x in [] %}x{% else %}empty{% endfor %}", want: "empty"},
	{name: "for if", tmpl: "{% for x in [1, 2, 3, 4] if x is even %}{{ x }}{{ loop.length }}{% endfor %}", want: "2242"},
	{name: "for dict", tmpl: "{% for k in {'a': 1, 'b': 2} %}{{ k }}{% endfor %}", want: "ab"},
	{name: "for unpack", tmpl: "{% for a, b in [[1, 2], [3, 4]] %}{{ a }}{{ b }}{% endfor %}", want: "1234"},
	{name: "for string", tmpl: "{% for c in 'ab' %}{{ c }}{% endfor %}", err: ErrRender},
	{name: "break continue", tmpl: "{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 4 %}{% break %}{% endif %}{{ x }}{% endfor %}", want: "013"},
	{name: "range", tmpl: "{{ range(3) | join }} {{ range(1, 4) | join }} {{ range(5, 0, -2) | join }}", want: "012 123 531"},
	{name: "set", tmpl: "{% set x = 1 %}{% set a, b = 2, 3 %}{{ x }}{{ a }}{{ b }}", want: "123"},
	{name: "set block", tmpl: "{% set x %}a{{ 1 }}b{% endset %}[{{ x }}]", want: "[a1b]"},
	{name: "set in loop does not leak", tmpl: "{% set x = 0 %}{% for i in [1, 2] %}{% set x = i %}{% endfor %}{{ x }}", want: "0"},
	{name: "set in earlier iteration", tmpl: "{% for i in [1, 2] %}{% if i == 1 %}{% set x = 'a' %}{% endif %}{{ x }}{% endfor %}", err: ErrUnsupported},
	{name: "namespace", tmpl: "{% set ns = namespace(n=0, s='') %}{% for i in [1, 2, 3] %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}", want: "6"},
	{name: "namespace from mapping", tmpl: "{% set ns = namespace({'a': 1}) %}{{ ns.a }}", want: "1"},
	{name: "macro", tmpl: "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('A') }} {{ greet('B', '?') }} {{ greet(punct='.', name='C') }}", want: "Hi A! Hi B? Hi C."},
	{name: "macro kwargs varargs", tmpl: "{% macro m(a) %}{{ a }}{{ varargs | join }}{{ kwargs | length }}{% endmacro %}{{ m(1, 2, 3, x=4) }}", want: "1231"},
	{name: "macro too many", tmpl: "{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}", err: ErrRender},
	{name: "macro caller scope", tmpl: "{% macro m() %}{{ y }}{% endmacro %}{% for y in [1] %}{{ m() }}{% endfor %}", err: ErrUnsupported},
	{name: "macro global", tmpl: "{% set y = 3 %}{% macro m() %}{{ y }}{% endmacro %}{% set y = 4 %}{{ m() }}", want: "4"},
	{name: "recursive macro", tmpl: "{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(3) }}", want: "321"},
	{name: "call block", tmpl: "{% macro box() %}[{{ caller() }}]{% endmacro %}{% call box() %}in{% endcall %}", want: "[in]"},
	{name: "call block args", tmpl: "{% macro each(l) %}{% for x in l %}{{ caller(x) }}{% endfor %}{% endmacro %}{% call(x) each([1, 2]) %}<{{ x }}>{% endcall %}", want: "<1><2>"},
	{name: "filter block", tmpl: "{% filter upper %}abc{{ 'd' }}{% endfilter %}", want: "ABCD"},
	{name: "raise", tmpl: "{{ raise_exception('System role not supported') }}", want: "System role not supported", err: ErrRaised},
	{name: "strftime", tmpl: "{{ strftime_now('%d %b %Y %H:%M %B %m %%') }}", want: "26 Jul 2024 12:34 July 07 %"},
	{name: "strftime weekday", tmpl: "{{ strftime_now('%A') }}", err: ErrUnsupported},

	// Syntax errors.
	{name: "unclosed if", tmpl: "{% if true %}x", err: ErrSyntax},
	{name: "unclosed expression", tmpl: "{{ x", err: ErrSyntax},
	{name: "unknown statement", tmpl: "{% include 'x' %}", err: ErrSyntax},
	{name: "raw", tmpl: "{% raw %}{{ x }}{% endraw %}", err: ErrSyntax},
	{name: "bad escape", tmpl: `{{ '\d' }}`, err: ErrSyntax},
	{name: "unclosed comment", tmpl: "{# x", err: ErrSyntax},
	{name: "endif alone", tmpl: "{% endif %}", err: ErrSyntax},
	{name: "integer keys", tmpl: "{{ {1: 'a'} }}", err: ErrRender},

	// Limits.
	{name: "step limit", tmpl: "{% for a in range(2000) %}{% for b in range(2000) %}{% endfor %}{% endfor %}", err: ErrLimit},
	{name: "byte limit", tmpl: "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}", err: ErrLimit},
	{name: "depth limit", tmpl: "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", err: ErrLimit},
}

// testNow is the clock of the tests, as render.mjs's "now".
func testNow() time.Time { return time.UnixMilli(refNow).UTC() }

func renderCase(c engineCase) (string, error) {
	t, err := Parse(c.tmpl)
	if err != nil {
		return "", err
	}
	var vars map[string]any
	if c.vars != "" {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.vars), &raw); err != nil {
			return "", err
		}
		vars = map[string]any{}
		for k, v := range raw {
			vars[k] = v
		}
	}
	return t.Render(Input{Vars: vars, Now: testNow})
}

func TestEngine(t *testing.T) {
	for _, c := range engineCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := renderCase(c)
			switch {
			case c.err == nil && err != nil:
				t.Fatalf("error %v, want %q", err, c.want)
			case c.err == nil && got != c.want:
				t.Fatalf("got %q, want %q", got, c.want)
			case c.err != nil && !errors.Is(err, c.err):
				t.Fatalf("got %q, %v; want an error wrapping %v", got, err, c.err)
			case c.err == ErrRaised && !strings.HasSuffix(err.Error(), ": "+c.want):
				t.Fatalf("error %q does not carry the message %q", err, c.want)
			}
		})
	}
}

// TestEngineAgainstReference checks the expectations of TestEngine with
// @huggingface/jinja: a text must be the reference's, a syntax, render or
// raised error an error there too, and a refusal or limit something the
// reference renders (or fails at; it is the Python side hlm guards).
func TestEngineAgainstReference(t *testing.T) {
	node := refs.Node(t)
	modules := refs.NodeModules(t)
	var reqs []refRequest
	for _, c := range engineCases {
		if c.err == ErrLimit {
			c.tmpl = ""
		}
		var vars map[string]json.RawMessage
		if c.vars != "" {
			if err := json.Unmarshal([]byte(c.vars), &vars); err != nil {
				t.Fatal(err)
			}
		}
		reqs = append(reqs, refRequest{Template: c.tmpl, Messages: []Message{}, Vars: vars, Now: refNow})
	}
	res := renderAll(t, exec.Command(node, "testdata/render.mjs", modules), reqs)
	for i, c := range engineCases {
		r := res[i]
		switch {
		case c.err == ErrLimit:
			// hlm's limits, not the reference's: its renders may take long.
		case c.err == nil:
			if r.Text == nil || *r.Text != c.want {
				t.Errorf("%s: the reference gives %+v, the test wants %q", c.name, r, c.want)
			}
		case c.err == ErrSyntax || c.err == ErrRender:
			if r.Error == nil {
				t.Errorf("%s: the reference renders %q where hlm must fail", c.name, *r.Text)
			}
		case c.err == ErrRaised:
			if r.Error == nil || *r.Error != c.want {
				t.Errorf("%s: the reference gives %+v, want the error %q", c.name, r, c.want)
			}
		}
	}
}
