package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hlmproject/hlm/internal/words"
)

// genRequest is a checked request of either endpoint.
type genRequest struct {
	Request
	stream       bool
	includeUsage bool
}

// commonFields are the request fields both endpoints share. Fields that would
// change the output and are not implemented (n > 1, logprobs, logit_bias, …)
// are rejected; the penalties and "user" are ignored, as is any field not
// listed here but a typo of a request field (checkTypos).
type commonFields struct {
	Model         string          `json:"model"` // any value is accepted
	MaxTokens     *int            `json:"max_tokens"`
	Temperature   *float64        `json:"temperature"`
	TopP          *float64        `json:"top_p"`
	TopK          *int            `json:"top_k"` // an extension (llama-server, vLLM): 0 is off
	Seed          json.RawMessage `json:"seed"`  // any 64-bit integer: parseSeed
	Stop          json.RawMessage `json:"stop"`
	Stream        bool            `json:"stream"`
	StreamOptions *streamOptions  `json:"stream_options"`
	N             *int            `json:"n"`
	Logprobs      json.RawMessage `json:"logprobs"`
	LogitBias     map[string]any  `json:"logit_bias"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// completionBody is a POST /v1/completions body.
type completionBody struct {
	commonFields
	Prompt json.RawMessage `json:"prompt"`
	Echo   bool            `json:"echo"`
	BestOf *int            `json:"best_of"`
	Suffix *string         `json:"suffix"`
}

// chatBody is a POST /v1/chat/completions body.
type chatBody struct {
	commonFields
	Messages            []chatMessage   `json:"messages"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Tools               json.RawMessage `json:"tools"`
	Functions           json.RawMessage `json:"functions"`
	ResponseFormat      *struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

// parseCompletion decodes and checks a completions request.
func parseCompletion(body []byte, o *Options) (genRequest, *apiError) {
	var b completionBody
	if err := decodeBody(body, &b); err != nil {
		return genRequest{}, err
	}
	g, err := b.commonFields.check(o)
	if err != nil {
		return genRequest{}, err
	}
	switch {
	case b.Echo:
		return genRequest{}, invalidParam("echo", "'echo' is not supported")
	case b.BestOf != nil && *b.BestOf != 1:
		return genRequest{}, invalidParam("best_of", "'best_of' must be 1")
	case b.Suffix != nil && *b.Suffix != "":
		return genRequest{}, invalidParam("suffix", "'suffix' is not supported")
	}
	if g.Prompt, err = parsePrompt(b.Prompt); err != nil {
		return genRequest{}, err
	}
	return g, nil
}

// parseChat decodes and checks a chat request and applies the template.
func parseChat(body []byte, o *Options) (genRequest, *apiError) {
	var b chatBody
	if err := decodeBody(body, &b); err != nil {
		return genRequest{}, err
	}
	if b.MaxCompletionTokens != nil { // the newer name wins
		if *b.MaxCompletionTokens < 1 {
			return genRequest{}, invalidParam("max_completion_tokens", "'max_completion_tokens' must be at least 1")
		}
		b.MaxTokens = b.MaxCompletionTokens
	}
	g, err := b.commonFields.check(o)
	if err != nil {
		return genRequest{}, err
	}
	switch {
	case !isEmpty(b.Tools):
		return genRequest{}, invalidParam("tools", "'tools' are not supported")
	case !isEmpty(b.Functions):
		return genRequest{}, invalidParam("functions", "'functions' are not supported")
	case b.ResponseFormat != nil && b.ResponseFormat.Type != "" && b.ResponseFormat.Type != "text":
		return genRequest{}, invalidParam("response_format", "response_format %q is not supported (only \"text\")", b.ResponseFormat.Type)
	}
	msgs, err := parseMessages(b.Messages)
	if err != nil {
		return genRequest{}, err
	}
	g.Chat = true
	prompt, terr := o.ChatTemplate(msgs)
	if terr != nil {
		return genRequest{}, invalidParam("messages", "the model's chat template: %v", terr)
	}
	g.Prompt = prompt
	g.Stop = append(g.Stop, o.ChatStop...)
	return g, nil
}

// check validates the shared fields and fills in the defaults.
func (c *commonFields) check(o *Options) (genRequest, *apiError) {
	g := genRequest{stream: c.Stream}
	g.MaxTokens = o.DefaultMaxTokens
	if c.MaxTokens != nil {
		if *c.MaxTokens < 1 {
			return g, invalidParam("max_tokens", "'max_tokens' must be at least 1")
		}
		if o.MaxTokens > 0 && *c.MaxTokens > o.MaxTokens {
			return g, invalidParam("max_tokens", "'max_tokens' must be at most %d", o.MaxTokens)
		}
		g.MaxTokens = *c.MaxTokens
	}
	if t := c.Temperature; t != nil && (*t < 0 || *t > 2) {
		return g, invalidParam("temperature", "'temperature' must be between 0 and 2")
	}
	if p := c.TopP; p != nil && (*p < 0 || *p > 1) {
		return g, invalidParam("top_p", "'top_p' must be between 0 and 1")
	}
	if k := c.TopK; k != nil && *k < 0 {
		return g, invalidParam("top_k", "'top_k' must be 0 (off) or more")
	}
	g.Temperature, g.TopP, g.TopK = c.Temperature, c.TopP, c.TopK
	if !isNull(c.Seed) {
		s, err := parseSeed(string(bytes.TrimSpace(c.Seed)))
		if err != nil {
			return g, err
		}
		g.Seed = &s
	}
	var err *apiError
	if g.Stop, err = parseStop(c.Stop); err != nil {
		return g, err
	}
	if c.N != nil && *c.N != 1 {
		return g, invalidParam("n", "'n' must be 1: one choice per request is supported")
	}
	if !isNull(c.Logprobs) && string(c.Logprobs) != "false" {
		return g, invalidParam("logprobs", "'logprobs' are not supported")
	}
	if len(c.LogitBias) > 0 {
		return g, invalidParam("logit_bias", "'logit_bias' is not supported")
	}
	if c.StreamOptions != nil {
		if !c.Stream {
			return g, invalidParam("stream_options", "'stream_options' is only allowed when 'stream' is true")
		}
		g.includeUsage = c.StreamOptions.IncludeUsage
	}
	return g, nil
}

// parsePrompt accepts a string or an array of one string.
func parsePrompt(raw json.RawMessage) (string, *apiError) {
	if isNull(raw) {
		return "", invalidParam("prompt", "'prompt' is required")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var arr []json.RawMessage
	if json.Unmarshal(raw, &arr) != nil {
		return "", invalidParam("prompt", "'prompt' must be a string")
	}
	var ids []int64
	if len(arr) > 0 && json.Unmarshal(raw, &ids) == nil {
		return "", invalidParam("prompt", "'prompt' must be a string (token-id prompts are not supported)")
	}
	if len(arr) != 1 {
		return "", invalidParam("prompt", "'prompt' must be one string: got an array of %d; send one request per prompt", len(arr))
	}
	if json.Unmarshal(arr[0], &s) != nil {
		return "", invalidParam("prompt", "'prompt' must be a string (token-id prompts are not supported)")
	}
	return s, nil
}

// parseStop accepts null, a string or an array of up to 4 strings; empty
// strings are dropped.
func parseStop(raw json.RawMessage) ([]string, *apiError) {
	if isNull(raw) {
		return nil, nil
	}
	var many []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		many = []string{one}
	} else if json.Unmarshal(raw, &many) != nil {
		return nil, invalidParam("stop", "'stop' must be a string or an array of up to %d strings", maxClientStops)
	}
	if len(many) > maxClientStops {
		return nil, invalidParam("stop", "'stop' has %d strings; at most %d are allowed", len(many), maxClientStops)
	}
	var out []string
	for _, s := range many {
		if len(s) > maxStopBytes {
			return nil, invalidParam("stop", "a stop string is %d bytes; at most %d are allowed", len(s), maxStopBytes)
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// parseSeed accepts any integer that fits 64 bits (a JSON number, not a
// string); negative seeds wrap.
func parseSeed(s string) (uint64, *apiError) {
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return u, nil
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return uint64(i), nil
	}
	return 0, invalidParam("seed", "'seed' must be a 64-bit integer")
}

// decodeBody unmarshals a JSON object, turning decoding errors into 400s
// that name the field at fault.
func decodeBody(body []byte, v any) *apiError {
	if len(bytes.TrimSpace(body)) == 0 {
		return invalidParam("", "the request body is empty: send a JSON object")
	}
	err := json.Unmarshal(body, v)
	if err == nil {
		return checkTypos(body)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return invalidParam("", "the request body must be a JSON object")
		}
		field := strings.TrimPrefix(te.Field, "commonFields.") // embedded: not a JSON name
		if outOfRange(te) {
			return invalidParam(field, "'%s' is out of range: %s", field, strings.TrimPrefix(te.Value, "number "))
		}
		return invalidParam(field, "invalid type for '%s': got %s, want %s", field, te.Value, kindName(te.Type))
	}
	return newAPIError(http.StatusBadRequest, typeInvalidRequest, "", "",
		"the request body is not valid JSON: %v", err)
}

// outOfRange reports whether te is a number that has the field's type but
// not its range: any number for a float, an integer (no fraction, no
// exponent) for an integer.
func outOfRange(te *json.UnmarshalTypeError) bool {
	n, ok := strings.CutPrefix(te.Value, "number ")
	if !ok || te.Type == nil {
		return false
	}
	switch te.Type.Kind() {
	case reflect.Float32, reflect.Float64:
		return true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return !strings.ContainsAny(n, ".eE")
	}
	return false
}

// kindName names a Go type the way a JSON user would.
func kindName(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Pointer:
		return kindName(t.Elem())
	}
	return t.String()
}

// isNull reports whether a raw field was absent or null.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// isEmpty reports whether a raw field was absent, null or an empty array.
func isEmpty(raw json.RawMessage) bool {
	var arr []json.RawMessage
	return isNull(raw) || json.Unmarshal(raw, &arr) == nil && len(arr) == 0
}

// requestFields are the request fields of OpenAI's completions and chat
// completions endpoints, and top_k, which hlm applies.
var requestFields = []string{
	"audio", "best_of", "echo", "frequency_penalty", "function_call", "functions",
	"logit_bias", "logprobs", "max_completion_tokens", "max_tokens", "messages",
	"metadata", "modalities", "model", "n", "parallel_tool_calls", "prediction",
	"presence_penalty", "prompt", "prompt_cache_key", "reasoning_effort",
	"response_format", "safety_identifier", "seed", "service_tier", "stop", "store",
	"stream", "stream_options", "suffix", "temperature", "tool_choice", "tools",
	"top_k", "top_logprobs", "top_p", "user", "verbosity", "web_search_options",
}

// extensionFields are other servers' sampling fields that clients written
// for them send; hlm ignores them, as it ignores any field it does not know.
var extensionFields = map[string]bool{
	"min_p": true, "typical_p": true, "tfs_z": true, "top_a": true, "repeat_penalty": true,
	"repetition_penalty": true, "repeat_last_n": true, "mirostat": true, "mirostat_tau": true,
	"mirostat_eta": true, "ignore_eos": true, "min_tokens": true, "n_predict": true,
	"cache_prompt": true, "skip_special_tokens": true, "add_generation_prompt": true,
	"chat_template": true, "chat_template_kwargs": true, "length_penalty": true,
	"use_beam_search": true, "dry_multiplier": true, "xtc_probability": true,
}

// checkTypos refuses a field that is no request field but within two edits
// of one ("max_token", "temprature"), as OpenAI refuses every field it does
// not know: silently ignored, it would leave the request's intent undone.
// So is one that differs from a request field only in case ("MAX_TOKENS"),
// which encoding/json, matching names case-insensitively, would apply.
// Other unknown fields are ignored (extensions of other servers).
func checkTypos(body []byte) *apiError {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if extensionFields[k] || slices.Contains(requestFields, k) {
			continue
		}
		near := words.Closest(k, requestFields)
		for _, f := range requestFields {
			if strings.EqualFold(k, f) { // encoding/json would apply it as f
				near = f
			}
		}
		if near != "" {
			return invalidParam(k, "unrecognized request argument supplied: %s; did you mean '%s'?", k, near)
		}
	}
	return nil
}
