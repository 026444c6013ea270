package openai

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// The response bodies, field for field as OpenAI sends them. A nil
// *struct{} marshals as null, for OpenAI's always-null "logprobs".

type usage struct {
	PromptTokens        int            `json:"prompt_tokens"`
	CompletionTokens    int            `json:"completion_tokens"`
	TotalTokens         int            `json:"total_tokens"`
	PromptTokensDetails *promptDetails `json:"prompt_tokens_details,omitempty"`
}

// promptDetails is usage.prompt_tokens_details: the prompt tokens that
// were cached (Result.CachedTokens).
type promptDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// envelope is a text_completion response or stream chunk (choices C =
// completionChoice) or a chat.completion.chunk stream event (C =
// chatChunkChoice); a usage-only chunk has no choices.
type envelope[C any] struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"` // "text_completion" or "chat.completion.chunk"
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Choices []C             `json:"choices"`
	Usage   json.RawMessage `json:"usage,omitempty"` // see usageField
}

type completionChoice struct {
	Text         string    `json:"text"`
	Index        int       `json:"index"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

// chatCompletion is a chat.completion response.
type chatCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"` // "chat.completion"
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   usage        `json:"usage"`
}

type chatChoice struct {
	Index        int       `json:"index"`
	Message      chatReply `json:"message"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason string    `json:"finish_reason"`
}

type chatReply struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatChunkChoice struct {
	Index        int       `json:"index"`
	Delta        chatDelta `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

// chatDelta is {"role":"assistant","content":""} in the first chunk,
// {"content":"…"} in the next ones and {} in the last.
type chatDelta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

// usageField is a stream chunk's "usage": absent unless the client asked
// for include_usage; then null in every chunk but the last.
func usageField(include bool, u *usage) json.RawMessage {
	switch {
	case !include:
		return nil
	case u == nil:
		return json.RawMessage("null")
	}
	b, _ := json.Marshal(u) // cannot fail: three ints
	return b
}

type modelList struct {
	Object string        `json:"object"` // "list"
	Data   []modelObject `json:"data"`
}

type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // "model"
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// marshal encodes v without HTML escaping (so "<" stays "<" for curl users)
// and without the trailing newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// writeJSON sends v as the whole response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := marshal(v)
	if err != nil { // our own types: cannot happen
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"message":"encoding the response failed","type":"server_error","param":null,"code":null}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	// The length even when the response is flushed (sendJSON), which
	// would otherwise send it chunked.
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
