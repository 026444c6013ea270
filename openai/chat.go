package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hlmproject/hlm/chat"
)

// Message is one chat message after decoding: Role is "system", "user" or
// "assistant" (OpenAI's "developer" role arrives as "system"), Content the
// concatenation of its text parts.
type Message struct {
	Role    string
	Content string
}

// DefaultChatStop ends a reply made with DefaultChatTemplate when the model
// starts to write the user's next turn (chat.PlainStop).
var DefaultChatStop = chat.PlainStop

// DefaultChatTemplate is the plain format for base models without a chat
// template (chat.Plain): each system message followed by a blank line,
// then one line per turn, "User: …" or "Assistant: …", and finally
// "Assistant:" for the reply.
//
//	You are terse.
//
//	User: Hi
//	Assistant: Hello.
//	User: Name a colour.
//	Assistant:
//
// A multi-line message keeps its line breaks. The reply's leading white
// space is trimmed by the handler.
func DefaultChatTemplate(msgs []Message) (string, error) {
	return chat.Plain(ChatMessages(msgs)), nil
}

// ChatMessages converts messages for package chat.
func ChatMessages(msgs []Message) []chat.Message {
	out := make([]chat.Message, len(msgs))
	for i, m := range msgs {
		out[i] = chat.Message{Role: m.Role, Content: m.Content}
	}
	return out
}

// chatMessage is a message as it arrives.
type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// contentPart is one element of an array content.
type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// parseMessages checks the roles and flattens the contents.
func parseMessages(in []chatMessage) ([]Message, *apiError) {
	if len(in) == 0 {
		return nil, invalidParam("messages", "'messages' must be a non-empty array")
	}
	out := make([]Message, len(in))
	for i, m := range in {
		param := fmt.Sprintf("messages[%d]", i)
		role := m.Role
		switch role {
		case "system", "user", "assistant":
		case "developer":
			role = "system"
		case "":
			return nil, invalidParam(param+".role", "message %d has no role", i)
		default:
			return nil, invalidParam(param+".role", "role %q is not supported (system, user, assistant)", m.Role)
		}
		text, err := parseContent(m.Content, role, param+".content")
		if err != nil {
			return nil, err
		}
		out[i] = Message{Role: role, Content: text}
	}
	return out, nil
}

// parseContent accepts a string, or an array of {"type":"text","text":…}
// parts, which are concatenated. null is accepted for assistant messages only.
func parseContent(raw json.RawMessage, role, param string) (string, *apiError) {
	if isNull(raw) {
		if role == "assistant" {
			return "", nil
		}
		return "", invalidParam(param, "'%s' is required", param)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return "", invalidParam(param, "'%s' must be a string or an array of text parts", param)
	}
	var b strings.Builder
	for i, raw := range parts {
		var p contentPart
		if json.Unmarshal(raw, &p) != nil {
			return "", invalidParam(param, "'%s[%d]' must be an object {\"type\":\"text\",\"text\":…}", param, i)
		}
		if p.Type != "text" {
			return "", invalidParam(param, "content part type %q is not supported (only \"text\")", p.Type)
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}
