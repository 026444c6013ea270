package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string // "system", "user", "assistant", "tool", …
	Content string
	// Extra holds the message's other members — tool_calls, tool_call_id,
	// name, reasoning_content, … — which templates read as they are
	// (values as in Input.Vars; json.RawMessage keeps JSON's order). An
	// Extra "content" replaces Content: it passes a null content
	// (json.RawMessage("null") or nil) or a list of parts.
	Extra map[string]any
}

// object is the mapping a template sees: role, content, then the extra
// members in key order.
func (m Message) object() (*object, error) {
	o := newObject(plainObject)
	o.set("role", m.Role)
	o.set("content", m.Content)
	keys := make([]string, 0, len(m.Extra))
	for k := range m.Extra {
		if k == "role" {
			return nil, fmt.Errorf("chat: a message's Extra cannot hold the role")
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, err := toValue(m.Extra[k])
		if err != nil {
			return nil, fmt.Errorf("chat: message member %s: %w", k, err)
		}
		o.set(k, v)
	}
	return o, nil
}

// UnmarshalJSON reads a message as OpenAI-style clients send it: content
// is a string, null, or a list of {"type": "text", "text": …} parts, which
// are concatenated; the other members go to Extra.
func (m *Message) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*m = Message{}
	for k, v := range raw {
		switch k {
		case "role":
			if err := json.Unmarshal(v, &m.Role); err != nil {
				return fmt.Errorf("chat: message role: %w", err)
			}
		case "content":
			if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
				m.setExtra("content", json.RawMessage("null"))
				continue
			}
			if json.Unmarshal(v, &m.Content) == nil {
				continue
			}
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if err := json.Unmarshal(v, &parts); err != nil {
				return fmt.Errorf("chat: message content must be a string, null or a list of text parts")
			}
			var b strings.Builder
			for _, p := range parts {
				if p.Type != "text" {
					return fmt.Errorf("chat: content part type %q is not supported (only \"text\")", p.Type)
				}
				b.WriteString(p.Text)
			}
			m.Content = b.String()
		default:
			m.setExtra(k, append(json.RawMessage(nil), v...))
		}
	}
	return nil
}

func (m *Message) setExtra(k string, v any) {
	if m.Extra == nil {
		m.Extra = map[string]any{}
	}
	m.Extra[k] = v
}

// MarshalJSON writes the message as the template sees it: role, content
// (or Extra's content), then the extra members in key order.
func (m Message) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"role":`)
	role, _ := json.Marshal(m.Role)
	b.Write(role)
	keys := []string{"content"}
	for k := range m.Extra {
		if k != "content" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys[1:])
	for _, k := range keys {
		var v any = m.Content
		if x, ok := m.Extra[k]; ok || k != "content" {
			v = x
		}
		data, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("chat: message member %s: %w", k, err)
		}
		kb, _ := json.Marshal(k)
		b.WriteByte(',')
		b.Write(kb)
		b.WriteByte(':')
		b.Write(data)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// PlainStop ends a reply made with Plain when the model starts to write the
// user's next turn.
var PlainStop = []string{"\nUser:"}

// Plain formats a conversation for a base model without a chat template:
// each system message followed by a blank line, then one line per turn,
// "User: …" or "Assistant: …", and finally "Assistant:" for the reply.
// Messages of other roles are left out.
//
//	You are terse.
//
//	User: Hi
//	Assistant: Hello.
//	User: Name a colour.
//	Assistant:
func Plain(msgs []Message) string { return PlainTurns(msgs) + "Assistant:" }

// PlainTurns is Plain without the generation prompt: the conversation as
// it stands, each turn ending with a newline (what a template renders with
// add_generation_prompt false).
func PlainTurns(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		switch m.Role {
		case "system":
			b.WriteString(m.Content)
			b.WriteString("\n\n")
		case "user":
			b.WriteString("User: ")
			b.WriteString(m.Content)
			b.WriteString("\n")
		case "assistant":
			b.WriteString("Assistant: ")
			b.WriteString(m.Content)
			b.WriteString("\n")
		}
	}
	return b.String()
}
