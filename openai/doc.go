// Package openai serves an OpenAI-compatible completions API in front of a
// text generator, so that ordinary clients (curl, the OpenAI SDKs, chat UIs)
// can use the hybrid model: `hlm edge --openai ADDR` serves NewHandler with
// the device's generator as the Backend.
//
// # Endpoints
//
//	POST /v1/completions       {"prompt": "…", …}              → text_completion
//	POST /v1/chat/completions  {"messages": [{role, content}]} → chat.completion
//	GET  /v1/models            the one model (Options.ModelName or Backend.Model)
//	GET  /v1/models/{id}
//	GET  /healthz              {"status":"ok"}, never needs the API key; 503
//	                           {"status":"unavailable","error":…} when
//	                           Options.Ready fails
//
// (HEAD too, wherever GET is.)
//
// Request fields understood by both generation endpoints: model (any value;
// the response names the served model), max_tokens (default
// Options.DefaultMaxTokens; chat also takes max_completion_tokens),
// temperature (0–2), top_p (0–1), seed (any 64-bit integer), stop (a string
// or up to 4), stream, stream_options.include_usage, n (1 only). The
// completions prompt is a string or an array of one string; echo, suffix,
// best_of > 1, logprobs and a non-empty logit_bias are refused with 400, as
// are chat tools and a response_format other than text. top_k (an extension llama-server and
// vLLM take; 0 is off) applies. frequency_penalty, presence_penalty, user
// and other unknown fields (other servers' extensions, such as min_p) are
// ignored — except a field that is none of OpenAI's but within two edits of
// one ("max_token", "temprature"), which is refused with 400 and the field
// it resembles, as OpenAI refuses every field it does not know. The
// Content-Type of requests is not checked, so `curl -d` works without -H.
//
// # Chat
//
// Messages have role system, user or assistant ("developer" counts as
// system) and a content that is a string or an array of
// {"type":"text","text":…} parts (concatenated). Options.ChatTemplate turns
// them into one prompt; DefaultChatTemplate writes the system text, then
// "User: …" and "Assistant: …" lines, and ends with "Assistant:", and
// DefaultChatStop ("\nUser:") ends the reply when the model starts the next
// user turn. The reply's leading white space is trimmed.
//
// # Stop sequences
//
// The handler applies the stop strings itself: the output ends just before
// the stop string that is completed first in the generated text, whichever
// way the Backend split that text into pieces. While streaming, the text that
// could be the beginning of a stop string is held back until it is known not
// to be; once a stop string is found the handler cancels the Backend's
// context and finishes with finish_reason "stop".
//
// # Streaming
//
// With "stream": true the response is Server-Sent Events, as OpenAI sends
// them: Content-Type text/event-stream, one "data: {json}\n\n" per chunk,
// flushed at once. Completions chunks are text_completion objects with the
// new text in choices[0].text; chat chunks are chat.completion.chunk objects
// whose first delta is {"role":"assistant","content":""} and the next ones
// {"content":"…"}. A chunk with an empty text (or delta {}) carries the
// finish_reason; with stream_options.include_usage a last chunk has the
// usage (prompt_tokens_details.cached_tokens too when the Backend kept
// some of the prompt from an earlier request: Result.CachedTokens) and no choices (and the others "usage": null). Then comes
// "data: [DONE]\n\n". The stream opens with the first text, so an error
// before it still gets its status code; an error after it is sent as a
// last event {"error":{…}} without [DONE]. A client that disconnects
// cancels the generation, and so does one that stops reading: a write
// (an event, a whole response) that waits 30 s for the client fails.
//
// Do not give the http.Server a WriteTimeout shorter than the longest
// generation: it would cut streams off.
//
// # Errors
//
// Errors have OpenAI's shape, {"error":{"message","type","param","code"}}:
// 400 for bad JSON or fields (param names the field), 401 without the
// bearer token when Options.APIKey is set, 404 for unknown paths, 405 for a
// wrong method (with Allow), 408 for a body that does not arrive within
// 30 s, 413 beyond Options.MaxBodyBytes, 429 with Retry-After when
// Options.MaxConcurrent generations are running, 500 when the Backend fails
// (400 if its error wraps ErrInvalidRequest — naming the field if it is a
// ParamError —, 503 with Retry-After if it wraps ErrUnavailable).
//
// # Example
//
//	$ hlm edge --server 127.0.0.1:7140 --openai 127.0.0.1:8080 --openai-key s3cret &
//	$ curl -s http://127.0.0.1:8080/v1/completions -H 'Authorization: Bearer s3cret' \
//	    -d '{"prompt": "Once upon a time", "max_tokens": 32, "stop": ["\n"]}'
//	{"id":"cmpl-…","object":"text_completion","created":1767225600,"model":"…",
//	 "choices":[{"text":" there was a …","index":0,"logprobs":null,"finish_reason":"stop"}],
//	 "usage":{"prompt_tokens":5,"completion_tokens":12,"total_tokens":17}}
//	$ curl -sN http://127.0.0.1:8080/v1/chat/completions -H 'Authorization: Bearer s3cret' \
//	    -d '{"messages":[{"role":"user","content":"Hi"}],"stream":true}'
//	data: {"id":"chatcmpl-…","object":"chat.completion.chunk",…,"choices":[{"index":0,"delta":{"role":"assistant","content":""},…}]}
//	data: {…,"choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}]}
//	…
//	data: {…,"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}
//	data: [DONE]
//
// The OpenAI SDKs work with base URL http://127.0.0.1:8080/v1 and any API
// key (or the one given with --openai-key); testdata/curl_test.sh BASE_URL
// [KEY] checks a running server with curl.
package openai
