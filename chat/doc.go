// Package chat turns a conversation into the prompt text a model expects:
// with the model's own chat template for instruct models, or with Plain
// ("User: …" / "Assistant: …") for base models that have none.
//
// # Use
//
//	tok := m.Tokenizer()                 // reads the template: GGUF tokenizer.chat_template,
//	                                     // tokenizer_config.json, chat_template.jinja
//	tmpl, err := chat.Parse(tok.ChatTemplate()) // once per model
//	prompt, err := tmpl.Render(chat.Input{
//		Messages:            msgs,       // []chat.Message (JSON: OpenAI-style)
//		AddGenerationPrompt: true,
//		BOSToken:            tok.TokenText(tok.BOS()),
//		EOSToken:            tok.TokenText(tok.EOS()),
//		Vars:                map[string]any{"enable_thinking": false},
//	})
//
// Render gives what Hugging Face transformers' apply_chat_template(messages,
// tokenize=False, add_generation_prompt=…, **vars) gives, byte for byte, or
// an error. A template's raise_exception (Gemma's "System role not
// supported") is ErrRaised with the template's message; a template that
// does not parse is ErrSyntax; one that fails while rendering (an unknown
// filter, an operation on the wrong type, where Hugging Face fails too) is
// ErrRender; one that loops or grows without end stops at its Limits with
// ErrLimit. ErrUnsupported is a refusal: hlm will not render a construct
// whose result it cannot guarantee (see below), and the error names it.
//
// # The context
//
// As transformers passes it: messages (each a mapping: role, content,
// then Message.Extra), add_generation_prompt, tools and documents (none
// unless Vars has them), bos_token and eos_token (when not empty), the
// other Vars; and the globals raise_exception, strftime_now (reading
// Input.Now, a clock tests fix), range, namespace, true/false/none (also
// True/False/None). transformers sets trim_blocks and lstrip_blocks and
// drops its {% generation %} tags; so does hlm.
//
// # The engine, and why this one
//
// Templates are Jinja as Python's jinja2 runs it inside transformers. hlm
// renders them with its own engine, which follows Hugging Face's
// JavaScript port, @huggingface/jinja 0.5.11 (the engine of
// transformers.js), construct by construct: the same lexer and
// whitespace rules, grammar and precedence, values, filters, tests and
// methods, the same failures. That port is the reference the tests compare
// with (internal/refs fetches it): every chat template of llama.cpp's
// models/templates and of four npm tokenizer packages (Llama 3, Qwen 3,
// Gemma 3, DeepSeek V3) — 74 templates — over 19 conversations (system and
// none, multi-turn, generation prompt on and off, Unicode and newlines,
// thinking, tools and tool calls with object and string arguments, null
// and list contents, documents, …): 1406 renders, of which hlm renders
// 1163 identically, fails on 208 where the reference fails too, and
// refuses 35; none differ. Random templates agree too (TestDifferential:
// 72,000 drawn with 18 seeds, none differ from the reference, and none of
// the texts hlm renders from Python's Jinja).
//
// Where the JavaScript port and Python's Jinja part ways, hlm refuses
// rather than pick one: printing none, booleans, lists and mappings
// (Python writes None, True and reprs); ~, + and join of booleans,
// integral floats and containers; == and `in` where JavaScript coerces
// (1 == "1", none == undefined) or compares lists by identity; strip with
// an argument (the port ignores it), title and capitalize where the rules
// differ, case changes with multi-character mappings (ß); UTF-16 lengths
// and indices of strings beyond U+FFFF; a variable set in an earlier loop
// iteration, or a macro reading its caller's variables (Python scopes
// both otherwise); generators and dict views used as lists (|length of a
// selectattr, tojson of a map); attributes of undefined values (Python
// raises); Python-only parse rules (chained comparisons and tests, a
// conditional as an if test, ~ binding tighter than +, a filter or test
// Python lacks outside an if, which fails its compilation); |safe with +
// (Python escapes the other operand); tojson of values json.dumps cannot
// write or writes otherwise (undefined, 1.0, sort_keys by locale); and a
// few more, each named by its error. With python3 and jinja2 installed,
// HLM_CHAT_PYTHON=1 checks the renders against Python's Jinja as well
// (testdata/render.py sets it up as transformers does): of the 1163 texts
// hlm renders, none differ. A filter block whose filter gives no string,
// carriage returns in the template, and {% generation %} tags that do not
// nest or whose removal lets a "-" strip across them are refused too.
//
// The constructs the port lacks fail as there: {% raw %}, include,
// extends, block, with, recursive loops, list.append, str.format, dict(),
// and filters such as count, min, batch or groupby.
//
// A Message's Content is a string: its JSON form joins the text parts of
// an OpenAI-style list content. Extra["content"] passes another content
// (null, a list of parts) to the template as it is.
//
// The Go library github.com/ardanlabs/jinja, made for chat templates,
// was measured first (v1.8.0, on the same 1406 renders): it renders 1176
// identically, but 22 differently without an error (lists printed as
// Python reprs, where the reference writes JSON) and 157 where the
// reference fails (110 where Python's Jinja fails as well: it iterates
// none, for one); of its 1355 texts, 118 differ from Python's. Its
// go.mod also requires Go 1.26, which would raise this module's go
// directive from 1.24 and upgrade golang.org/x/sys. A library that can
// be silently wrong in ways one cannot detect from outside does not earn
// its place; hence this engine.
//
// # Files
//
//	lex.go         whitespace rules, tokens
//	parse.go       statements; parse_expr.go expressions; ast.go the tree
//	exec.go        blocks, set, for loops; macro.go macros and call blocks
//	eval.go        expressions and operators; member.go attributes, indices, slices
//	scope.go       scopes, limits, the evaluator
//	filters.go     filters; lists.go list filters; tests.go is-tests
//	strings.go     string methods; builtins.go globals and mapping methods
//	value.go       values; convert.go Go and JSON values in; equal.go == and in
//	json.go        tojson and numbers
//	template.go    Parse, Render, Input, errors; message.go Message, Plain
//	config.go      tokenizer_config.json, model directories
package chat
