package chat

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Errors. Every error a template produces wraps exactly one of these.
var (
	// ErrSyntax: the template does not parse (the reference fails too).
	ErrSyntax = errors.New("chat: template syntax error")
	// ErrRender: the template fails while rendering — an unknown filter,
	// an operation on the wrong type — where the reference fails too.
	ErrRender = errors.New("chat: template error")
	// ErrRaised: the template called raise_exception; the error's text
	// ends with the template's message.
	ErrRaised = errors.New("chat: template raised an exception")
	// ErrUnsupported: hlm refuses a construct whose result it cannot
	// guarantee to be Hugging Face's (the error names the construct).
	ErrUnsupported = errors.New("chat: unsupported")
	// ErrLimit: the render went beyond its Limits.
	ErrLimit = errors.New("chat: template exceeded its limits")
)

// Template is a parsed chat template, safe for concurrent renders.
type Template struct {
	src  string
	body []node
}

// Parse parses a chat template (a Jinja source as found in GGUF's
// tokenizer.chat_template or Hugging Face's tokenizer_config.json).
func Parse(src string) (*Template, error) {
	toks, err := lex(preprocess(src))
	if err != nil {
		return nil, err
	}
	body, err := parse(toks)
	if err != nil {
		return nil, err
	}
	if err := pyWhitespace(src); err != nil {
		return nil, err
	}
	// The reference drops {% generation %} and {% endgeneration %} from
	// the text; transformers parses them as a block, which must nest.
	if dropGenerationTags(src) != src {
		toks, err := lex(whitespaceRules(src))
		if err == nil {
			p := &parser{toks: toks, generation: true}
			for p.pos < len(p.toks) && err == nil {
				_, err = p.any()
			}
		}
		if err != nil {
			return nil, unsupported("{%% generation %%} tags that do not nest as a block (Python's Jinja parses them so): %v", err)
		}
		if generationSpacing(src) {
			return nil, unsupported("white space around a {%% generation %%} tag without \"-\" next to a tag that strips it (@huggingface/jinja drops the tag first and strips across it)")
		}
	}
	return &Template{src: src, body: body}, nil
}

// pyWhitespace refuses white space that Python's Jinja treats otherwise
// than the reference: a carriage return (Python turns \r\n into \n),
// characters only one of them counts as white space where a "-" strips
// it, and white space other than spaces and tabs before a tag at the
// start of a line (lstrip_blocks: Python strips any, the reference spaces
// and tabs only).
func pyWhitespace(src string) error {
	if i := strings.IndexFunc(src, func(r rune) bool { return r == '\r' || isSpace(r) != isPySpace(r) }); i >= 0 {
		return unsupported("the character %U in the template (Python's Jinja and @huggingface/jinja treat it differently as white space)", []rune(src[i:])[0])
	}
	for i := 0; i+1 < len(src); i++ {
		if src[i] != '{' || (src[i+1] != '%' && src[i+1] != '#') {
			continue
		}
		line := src[strings.LastIndexByte(src[:i], '\n')+1 : i]
		if line != "" && strings.TrimFunc(line, isPySpace) == "" && strings.Trim(line, " \t") != "" {
			return unsupported("white space other than spaces and tabs before a tag at the start of a line (lstrip_blocks: Python's Jinja strips it, @huggingface/jinja does not)")
		}
	}
	return nil
}

// Source is the template's text.
func (t *Template) Source() string { return t.src }

// Input is what a chat template renders: the conversation and the
// variables transformers passes to it.
type Input struct {
	Messages []Message
	// AddGenerationPrompt asks the template to end with the start of an
	// assistant turn.
	AddGenerationPrompt bool
	// BOSToken and EOSToken are the tokenizer's special tokens; an empty
	// one is not passed (as transformers does).
	BOSToken, EOSToken string
	// Vars are further variables: tools and documents (none when absent),
	// enable_thinking, reasoning_effort, other special tokens, …. Values
	// are nil, bool, numbers, strings, slices and string-keyed maps (maps
	// in key order), or json.RawMessage (objects keep their member order).
	Vars map[string]any
	// Now is strftime_now's clock (in its time's location); nil means
	// time.Now.
	Now func() time.Time
	// Limits bound the render; zero fields take DefaultLimits'.
	Limits Limits
}

// Render renders the template with in, as transformers'
// apply_chat_template(messages, tokenize=False, …) does. Its errors wrap
// the package's errors above, but for a value of in that cannot be passed
// (a json.RawMessage that is no JSON; ErrUnsupported for a Go type).
func (t *Template) Render(in Input) (string, error) {
	ev := &evaluator{limits: in.Limits, now: in.Now}
	if ev.limits.Steps <= 0 {
		ev.limits.Steps = DefaultLimits.Steps
	}
	if ev.limits.Bytes <= 0 {
		ev.limits.Bytes = DefaultLimits.Bytes
	}
	if ev.limits.Depth <= 0 {
		ev.limits.Depth = DefaultLimits.Depth
	}
	if ev.now == nil {
		ev.now = time.Now
	}
	env, err := context(in)
	if err != nil {
		return "", err
	}
	out, err := ev.block(t.body, env)
	switch {
	case errors.Is(err, errBreak), errors.Is(err, errContinue):
		return "", renderErr("%v", err)
	case err != nil:
		return "", err
	}
	return out, nil
}

// context is the top scope of a render: the globals, then the variables
// transformers.js passes (messages, add_generation_prompt, tools,
// documents, the special tokens, the other variables). A variable may not
// redefine a global, as in the reference.
func context(in Input) (*scope, error) {
	env := globals()
	declare := func(name string, v value) error {
		if _, ok := env.vars[name]; ok || name == "namespace" {
			return renderErr("variable already declared: %s", name)
		}
		env.set(name, v)
		return nil
	}
	msgs, err := toValue(in.Messages)
	if err != nil {
		return nil, err
	}
	if err := declare("messages", msgs); err != nil {
		return nil, err
	}
	if err := declare("add_generation_prompt", in.AddGenerationPrompt); err != nil {
		return nil, err
	}
	vars := map[string]any{}
	for k, v := range in.Vars {
		switch k {
		case "messages", "add_generation_prompt":
			return nil, unsupported("a variable named %q (it is an argument of apply_chat_template)", k)
		}
		vars[k] = v
	}
	for _, k := range []string{"tools", "documents"} {
		if _, ok := vars[k]; !ok {
			vars[k] = nil
		}
	}
	if _, ok := vars["bos_token"]; !ok && in.BOSToken != "" {
		vars["bos_token"] = in.BOSToken
	}
	if _, ok := vars["eos_token"]; !ok && in.EOSToken != "" {
		vars["eos_token"] = in.EOSToken
	}
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v, err := toValue(vars[k])
		if err != nil {
			return nil, fmt.Errorf("chat: variable %s: %w", k, err)
		}
		if err := declare(k, v); err != nil {
			return nil, err
		}
	}
	return env, nil
}
