package chat

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestPlain(t *testing.T) {
	msgs := []Message{
		{Role: "system", Content: "You are terse."},
		{Role: "user", Content: "Hi"},
		{Role: "assistant", Content: "Hello."},
		{Role: "tool", Content: "ignored"},
		{Role: "user", Content: "Name a colour."},
	}
	turns := "You are terse.\n\nUser: Hi\nAssistant: Hello.\nUser: Name a colour.\n"
	for _, c := range []struct {
		name, got, want string
	}{
		{"Plain", Plain(msgs), turns + "Assistant:"},
		{"PlainTurns", PlainTurns(msgs), turns},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}
}

func TestMessageJSON(t *testing.T) {
	var msgs []Message
	data := `[{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
		{"role": "assistant", "content": null, "tool_calls": [{"function": {"name": "f", "arguments": {"z": 1, "a": 2}}}]},
		{"role": "tool", "tool_call_id": "c1", "content": "42"}]`
	if err := json.Unmarshal([]byte(data), &msgs); err != nil {
		t.Fatal(err)
	}
	if msgs[0].Content != "ab" {
		t.Errorf("text parts: got %q", msgs[0].Content)
	}
	out, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"role":"user","content":"ab"},{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":{"z":1,"a":2}}}]},{"role":"tool","content":"42","tool_call_id":"c1"}]`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	// The template sees the null content, and the arguments in their order.
	tmpl, err := Parse(`{% for m in messages %}{{ m.role }}:{{ m.content is none }}{% if m.tool_calls %}{{ m.tool_calls[0].function.arguments | tojson }}{% endif %};{% endfor %}`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tmpl.Render(Input{Messages: msgs})
	if !errors.Is(err, ErrUnsupported) { // printing a boolean
		t.Fatalf("got %v, want a refusal to print a boolean", err)
	}
	tmpl, _ = Parse(`{% for m in messages %}{% if m.content is none %}null{% endif %}{% if m.tool_calls %}{{ m.tool_calls[0].function.arguments | tojson }}{% endif %};{% endfor %}`)
	got, err := tmpl.Render(Input{Messages: msgs})
	if err != nil || got != `;null{"z": 1, "a": 2};;` {
		t.Fatalf("got %q, %v", got, err)
	}
	var m Message
	if err := json.Unmarshal([]byte(`{"role": "user", "content": [{"type": "image_url"}]}`), &m); err == nil {
		t.Error("an image part was accepted")
	}
}

func TestInputVariables(t *testing.T) {
	tmpl, err := Parse(`{{ bos_token }}|{{ eos_token }}|{% if tools is none %}no tools{% endif %}|{{ extra }}`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.Render(Input{BOSToken: "<s>", Vars: map[string]any{"extra": []string{"a"}[0]}})
	if err != nil || got != "<s>||no tools|a" {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := tmpl.Render(Input{Vars: map[string]any{"range": 1}}); !errors.Is(err, ErrRender) {
		t.Errorf("a variable named like a global: %v", err)
	}
	if _, err := tmpl.Render(Input{Vars: map[string]any{"messages": 1}}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("a variable named messages: %v", err)
	}
	if _, err := tmpl.Render(Input{Vars: map[string]any{"x": make(chan int)}}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("a channel: %v", err)
	}
}
