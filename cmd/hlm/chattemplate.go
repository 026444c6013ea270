package main

import (
	"context"
	"fmt"
	"io"

	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/llama"
)

func init() {
	register("chat-template", "render a conversation with a model's chat template, byte for byte", runChatTemplate)
}

func runChatTemplate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("chat-template", "--messages FILE [--model SPEC] [--no-generation-prompt] [--chat-template FILE] [--chat-var KEY=VALUE ...]", `
Print the prompt a model sees for a conversation: its chat template (GGUF
tokenizer.chat_template, or tokenizer_config.json / chat_template.jinja of a
Hugging Face directory) rendered as transformers' apply_chat_template does,
to standard output exactly, with no added newline, so that it can be compared
and debugged. A model without a template gets the plain "User:/Assistant:"
format (said on standard error). --no-generation-prompt ends the prompt
after the last message, without the start of the assistant's reply (the
plain format's final "Assistant:" included). The model defaults to the
built-in stories260K. --messages is a JSON array of
{"role": ..., "content": ...} objects (content may also be a list of
{"type": "text", "text": ...} parts; other members, such as tool_calls, reach
the template as they are). A template that raises (Gemma's "System role not
supported") is an error carrying the template's message. No weights are
loaded.`, stdout)
	spec := fs.String("model", builtin.DefaultLLM, "model spec or tokenizer directory/file")
	tokPath := fs.String("tokenizer", "", "tokenizer file, instead of the model's")
	messages := fs.String("messages", "", "JSON file of the conversation (required)")
	noGen := fs.Bool("no-generation-prompt", false, "do not end with the start of the assistant's reply")
	tmplFile := fs.String("chat-template", "", "render with this Jinja template instead of the model's")
	vars := chatVars{}
	fs.Var(vars, "chat-var", "template variable KEY=VALUE, VALUE as JSON if it parses (repeatable; e.g. enable_thinking=false)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *messages == "" {
		return usageError{fmt.Errorf("--messages FILE is required: a JSON array of {\"role\": ..., \"content\": ...} objects")}
	}
	msgs, err := readMessages(*messages)
	if err != nil {
		return err
	}
	tok, err := llama.OpenTokenizer(*spec, *tokPath)
	if err != nil {
		return err
	}
	f, err := newChatFormat(tok, *tmplFile, vars)
	if err != nil {
		return err
	}
	if !f.templated() {
		fmt.Fprintf(stderr, "hlm chat-template: rendered with %s\n", f.describe())
	}
	out, err := f.render(msgs, !*noGen)
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, out)
	return err
}
