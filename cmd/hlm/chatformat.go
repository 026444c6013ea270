package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/hlmproject/hlm/chat"
	"github.com/hlmproject/hlm/tokenizer"
)

// chatFormat turns a conversation into a model's prompt: with its chat
// template (or the one --chat-template names), or with the plain
// "User:/Assistant:" format for a base model that has none.
type chatFormat struct {
	tok      *tokenizer.Tokenizer
	tmpl     *chat.Template // nil: the plain format
	bos, eos string
	vars     map[string]any
}

// newChatFormat parses the model's template, or file's when file is set.
func newChatFormat(tok *tokenizer.Tokenizer, file string, vars map[string]any) (*chatFormat, error) {
	f := &chatFormat{tok: tok, vars: vars, bos: tok.TokenText(tok.BOS()), eos: tok.TokenText(tok.EOS())}
	src := tok.ChatTemplate()
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--chat-template: %w", err)
		}
		src = string(b)
	}
	if src == "" {
		return f, nil
	}
	t, err := chat.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("the chat template: %w", err)
	}
	f.tmpl = t
	return f, nil
}

// templated reports whether the model's own template is in use.
func (f *chatFormat) templated() bool { return f.tmpl != nil }

// describe names the format for messages.
func (f *chatFormat) describe() string {
	if f.tmpl == nil {
		return "the plain User:/Assistant: format (the model has no chat template)"
	}
	return "the model's chat template"
}

// render formats msgs, ending with the start of the assistant's reply when
// addGen.
func (f *chatFormat) render(msgs []chat.Message, addGen bool) (string, error) {
	if f.tmpl == nil {
		if !addGen {
			return chat.PlainTurns(msgs), nil
		}
		return chat.Plain(msgs), nil
	}
	return f.tmpl.Render(chat.Input{Messages: msgs, AddGenerationPrompt: addGen, BOSToken: f.bos, EOSToken: f.eos, Vars: f.vars})
}

// encode tokenizes a rendered prompt: a template writes its own BOS and
// special tokens, which are parsed (as transformers'
// apply_chat_template(tokenize=True) does); the plain format gets the
// tokenizer's BOS.
func (f *chatFormat) encode(prompt string) []int {
	return f.tok.Encode(prompt, f.tmpl == nil)
}

// stop are the stop strings a reply needs: the plain format's next-turn
// marker; none with a template (its end-of-turn token ends the reply).
func (f *chatFormat) stop() []string {
	if f.tmpl == nil {
		return chat.PlainStop
	}
	return []string{}
}

// chatVars is a repeatable --chat-var KEY=VALUE flag: template variables
// such as enable_thinking=false, VALUE read as JSON when it parses, else
// as a string.
type chatVars map[string]any

func (v chatVars) String() string { return fmt.Sprint(map[string]any(v)) }

func (v chatVars) Set(s string) error {
	k, val, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	var x any
	if json.Unmarshal([]byte(val), &x) == nil {
		v[k] = json.RawMessage(val)
	} else {
		v[k] = val
	}
	return nil
}

// readMessages reads a JSON array of {role, content} messages.
func readMessages(file string) ([]chat.Message, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var msgs []chat.Message
	if err := json.Unmarshal(b, &msgs); err != nil {
		return nil, fmt.Errorf("%s: want a JSON array of {\"role\": ..., \"content\": ...} messages: %w", file, err)
	}
	if len(msgs) == 0 {
		return nil, fmt.Errorf("%s: no messages", file)
	}
	for i, m := range msgs {
		if !chatRoles[m.Role] {
			return nil, fmt.Errorf("%s: message %d has the role %q; want one of system, user, assistant, tool, developer, ipython", file, i+1, m.Role)
		}
		if _, ok := m.Extra["content"]; m.Role == "user" && m.Content == "" && !ok {
			return nil, fmt.Errorf("%s: message %d (user) has no \"content\"", file, i+1)
		}
	}
	return msgs, nil
}

// chatRoles are the roles a message may have: those of the chat templates
// in use (a typo such as "usr" would drop the message from the prompt).
var chatRoles = map[string]bool{"system": true, "user": true, "assistant": true, "tool": true, "developer": true, "ipython": true}
