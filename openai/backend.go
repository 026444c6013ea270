package openai

import (
	"context"
	"errors"
	"fmt"
)

// Backend generates text. onText is called with each new piece of text as it
// is committed (for streaming); the concatenation of all pieces equals
// Result.Text.
//
// The handler's expectations, beyond the signature:
//   - onText is called from the goroutine that runs Generate, never after
//     Generate returns. It may block while a slow client reads the stream.
//   - Pieces may split a multi-byte UTF-8 character; the handler joins them.
//   - A backend that does not stream may skip onText and return only
//     Result.Text; stop sequences still apply, but nothing streams early.
//   - When ctx is cancelled (a stop sequence was found or the client went
//     away) Generate should return promptly. After a stop sequence the
//     handler ignores the error and reports the token counts of the Result
//     returned with it.
//   - An error wrapping ErrInvalidRequest (say, a prompt longer than the
//     context) is reported to the client as 400; any other error as 500.
type Backend interface {
	Generate(ctx context.Context, req Request, onText func(piece string)) (Result, error)
	Model() string // the model id to report
}

// Request is one generation as the handler passes it to the Backend. Stop
// holds the client's stop strings (then Options.ChatStop for chat) for
// information: the handler cuts the text and cancels the context itself.
type Request struct {
	Prompt string
	// Chat marks a chat completion: Prompt is Options.ChatTemplate's
	// rendering of the messages (with the model's template, its special
	// tokens are in the text).
	Chat        bool
	MaxTokens   int      // 0 → the server default (the handler always fills it in)
	Temperature *float64 // nil → default; the handler checks 0 ≤ t ≤ 2
	TopP        *float64 // nil → default; the handler checks 0 ≤ p ≤ 1
	TopK        *int     // nil → default; the handler checks k ≥ 0 (0: off)
	Seed        *uint64  // a negative JSON seed arrives as its two's complement
	Stop        []string // the handler applies stop sequences itself (see below)
}

// Result is what a generation produced.
type Result struct {
	Text             string
	PromptTokens     int
	CompletionTokens int
	// CachedTokens are the prompt tokens the backend did not send and
	// evaluate again (kept from an earlier request of the conversation):
	// usage.prompt_tokens_details.cached_tokens, as OpenAI reports its
	// prompt caching (omitted when 0).
	CachedTokens int
	FinishReason string // "stop" or "length"
}

// Finish reasons.
const (
	FinishStop   = "stop"   // end of text or a stop sequence
	FinishLength = "length" // MaxTokens or the context was reached
)

// ErrInvalidRequest, wrapped in a Backend's error, makes the handler answer
// 400 with the error's text instead of 500.
var ErrInvalidRequest = errors.New("openai: invalid request")

// ParamError, returned or wrapped by a Backend, is a request refused for
// one of its fields: 400 naming Param (OpenAI's "param"), as the handler's
// own checks answer. It wraps ErrInvalidRequest.
type ParamError struct {
	Param string // the request's field: "top_k", "temperature", …
	Err   error
}

func (e *ParamError) Error() string   { return e.Err.Error() }
func (e *ParamError) Unwrap() []error { return []error{ErrInvalidRequest, e.Err} }

// ErrUnavailable, wrapped in a Backend's error, is a backend that cannot
// serve now but may later (a verifier that cannot be reached): 503 with
// Retry-After instead of 500, so that clients and balancers retry.
var ErrUnavailable = errors.New("openai: backend unavailable")

// ErrContextLength, wrapped in a Backend's error, is a request whose prompt
// does not fit the model's context: 400 with OpenAI's code
// "context_length_exceeded". (A prompt that fits but leaves less room
// than max_tokens is no error: the generation stops when the context is
// full, with finish_reason "length", as llama-server's does.)
var ErrContextLength = fmt.Errorf("%w: context length exceeded", ErrInvalidRequest)
