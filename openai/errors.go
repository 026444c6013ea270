package openai

import (
	"fmt"
	"net/http"
)

// apiError is an error in OpenAI's shape:
//
//	{"error":{"message":"…","type":"invalid_request_error","param":"n","code":null}}
//
// with the HTTP status it is sent with.
type apiError struct {
	status  int
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func (e *apiError) Error() string { return e.Message }

// Error types, as OpenAI names them.
const (
	typeInvalidRequest = "invalid_request_error"
	typeRateLimit      = "rate_limit_error"
	typeServer         = "server_error"
)

func newAPIError(status int, typ, code, param, format string, args ...any) *apiError {
	e := &apiError{status: status, Message: fmt.Sprintf(format, args...), Type: typ}
	if code != "" {
		e.Code = &code
	}
	if param != "" {
		e.Param = &param
	}
	return e
}

// invalidParam is a 400 about one request field.
func invalidParam(param, format string, args ...any) *apiError {
	return newAPIError(http.StatusBadRequest, typeInvalidRequest, "", param, format, args...)
}

// writeError sends e as the whole response.
func writeError(w http.ResponseWriter, e *apiError) {
	if e.status == http.StatusTooManyRequests || e.status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", defaultRetryAfterSecond)
	}
	writeJSON(w, e.status, errorBody{e})
}

type errorBody struct {
	Error *apiError `json:"error"`
}
