package openai

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Defaults used for the zero fields of Options.
const (
	DefaultMaxBodyBytes     = 1 << 20 // 1 MiB
	DefaultMaxTokens        = 128
	maxClientStops          = 4 // as OpenAI
	maxStopBytes            = 1024
	defaultRetryAfterSecond = "1"
)

// bodyTimeout is how long a request's body may take to arrive (30 s): a
// client that sends a large body a byte at a time holds a connection and
// its buffer only this long. A variable for the tests.
var bodyTimeout = 30 * time.Second

// writeTimeout is how long one write of a response (a stream's event, a
// whole response) may wait for the client to take it (30 s): a client that
// stops reading holds its generation slot, and its session on hlm serve,
// only this long. A variable for the tests.
var writeTimeout = 30 * time.Second

// ErrInvalidOptions is wrapped by the errors of Options.Validate.
var ErrInvalidOptions = errors.New("openai: invalid options")

// Options configure the handler. The zero value is usable: no
// authentication, 1 MiB bodies, no concurrency limit, 128 tokens by default,
// the Backend's model name and DefaultChatTemplate.
type Options struct {
	// APIKey, when set, is required as "Authorization: Bearer <key>" on every
	// path but /healthz; other requests get 401.
	APIKey string
	// MaxBodyBytes caps request bodies (413 beyond); 0 means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxConcurrent caps the generations in progress; one more gets 429 with
	// Retry-After. 0 means no limit.
	MaxConcurrent int
	// DefaultMaxTokens is used when a request gives no max_tokens; 0 means
	// DefaultMaxTokens.
	DefaultMaxTokens int
	// Ready, when set, is asked by /healthz: an error makes it answer 503
	// with the error, so that a balancer stops sending requests that would
	// fail (a verifier that cannot be reached). nil: always ready.
	Ready func(context.Context) error
	// MaxTokens is the most a request's max_tokens may ask (400 naming the
	// parameter beyond); 0 means no limit here (the Backend's own).
	MaxTokens int
	// ModelName overrides Backend.Model() in responses and /v1/models.
	ModelName string
	// ChatTemplate turns chat messages into one prompt (the model's own
	// chat template, see package chat); nil means DefaultChatTemplate. An
	// error (a template that raises, say "System role not supported") is
	// answered with 400 and its text.
	ChatTemplate func([]Message) (string, error)
	// ChatStop are stop sequences added to every chat completion, after the
	// client's, so that a base model does not write the user's next turn.
	// nil means DefaultChatStop with the default template and none with a
	// custom one; an empty non-nil slice means none.
	ChatStop []string
	// Logger receives one record per generation and every server error; nil
	// discards.
	Logger *slog.Logger
	// Now is the clock for the "created" fields; nil means time.Now.
	Now func() time.Time
}

// Validate reports impossible settings.
func (o Options) Validate() error {
	switch {
	case o.MaxBodyBytes < 0:
		return fmt.Errorf("%w: MaxBodyBytes %d < 0", ErrInvalidOptions, o.MaxBodyBytes)
	case o.MaxConcurrent < 0:
		return fmt.Errorf("%w: MaxConcurrent %d < 0", ErrInvalidOptions, o.MaxConcurrent)
	case o.DefaultMaxTokens < 0:
		return fmt.Errorf("%w: DefaultMaxTokens %d < 0", ErrInvalidOptions, o.DefaultMaxTokens)
	}
	for _, s := range o.ChatStop {
		if s == "" {
			return fmt.Errorf("%w: empty string in ChatStop", ErrInvalidOptions)
		}
	}
	return nil
}

// withDefaults fills in the zero fields.
func (o Options) withDefaults() Options {
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.DefaultMaxTokens == 0 {
		o.DefaultMaxTokens = DefaultMaxTokens
	}
	if o.ChatTemplate == nil {
		o.ChatTemplate = DefaultChatTemplate
		if o.ChatStop == nil {
			o.ChatStop = DefaultChatStop
		}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
