package openai

import (
	"crypto/subtle"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// handler serves the API; see the package documentation.
type handler struct {
	b       Backend
	o       Options       // with defaults
	sem     chan struct{} // generation slots; nil: no limit
	created int64         // reported as the model's creation time
}

// NewHandler returns the API served by b. It panics if b is nil or opts
// does not Validate: check the options first.
func NewHandler(b Backend, opts Options) http.Handler {
	if b == nil {
		panic("openai: NewHandler with a nil Backend")
	}
	if err := opts.Validate(); err != nil {
		panic(err)
	}
	h := &handler{b: b, o: opts.withDefaults()}
	if h.o.MaxConcurrent > 0 {
		h.sem = make(chan struct{}, h.o.MaxConcurrent)
	}
	h.created = h.o.Now().Unix()
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if p == "/healthz" {
		if allow(w, r, http.MethodGet, http.MethodHead) {
			if h.o.Ready != nil {
				if err := h.o.Ready(r.Context()); err != nil {
					w.Header().Set("Retry-After", defaultRetryAfterSecond)
					writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "error": err.Error()})
					return
				}
			}
			writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		}
		return
	}
	if !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="hlm"`)
		writeError(w, newAPIError(http.StatusUnauthorized, typeInvalidRequest, "invalid_api_key", "",
			"missing or incorrect API key: send \"Authorization: Bearer <key>\""))
		return
	}
	switch {
	case p == "/v1/completions":
		h.complete(w, r, parseCompletion)
	case p == "/v1/chat/completions":
		h.complete(w, r, parseChat)
	case p == "/v1/models":
		if allow(w, r, http.MethodGet, http.MethodHead) {
			writeJSON(w, http.StatusOK, modelList{Object: "list", Data: []modelObject{h.model()}})
		}
	case strings.HasPrefix(p, "/v1/models/"):
		if !allow(w, r, http.MethodGet, http.MethodHead) {
			return
		}
		if m := h.model(); strings.TrimPrefix(p, "/v1/models/") == m.ID {
			writeJSON(w, http.StatusOK, m)
			return
		}
		writeError(w, newAPIError(http.StatusNotFound, typeInvalidRequest, "model_not_found", "model",
			"the model %q does not exist; this server has %q", strings.TrimPrefix(p, "/v1/models/"), h.model().ID))
	default:
		writeError(w, newAPIError(http.StatusNotFound, typeInvalidRequest, "", "",
			"invalid URL (%s %s)", r.Method, p))
	}
}

// complete serves both generation endpoints.
func (h *handler) complete(w http.ResponseWriter, r *http.Request, parse func([]byte, *Options) (genRequest, *apiError)) {
	if !allow(w, r, http.MethodPost) {
		return
	}
	body, aerr := h.readBody(w, r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	req, aerr := parse(body, &h.o)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	if h.sem != nil {
		select {
		case h.sem <- struct{}{}:
			defer func() { <-h.sem }()
		default:
			writeError(w, newAPIError(http.StatusTooManyRequests, typeRateLimit, "rate_limit_exceeded", "",
				"too many concurrent requests (limit %d): retry later", h.o.MaxConcurrent))
			return
		}
	}
	h.generate(w, r, req)
}

// readBody reads at most MaxBodyBytes.
func (h *handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	tooLarge := newAPIError(http.StatusRequestEntityTooLarge, typeInvalidRequest, "request_too_large", "",
		"the request body is larger than %d bytes", h.o.MaxBodyBytes)
	if r.ContentLength > h.o.MaxBodyBytes {
		return nil, tooLarge
	}
	// The body must arrive within bodyTimeout; the deadline is lifted
	// after it, so that a long generation's connection stays open (a
	// ResponseWriter that cannot set deadlines, as in tests, is read as is).
	// A body that failed keeps it, and the connection closes after the
	// error: lifted, the server would wait for the rest of the body.
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(bodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.o.MaxBodyBytes))
	if err == nil {
		rc.SetReadDeadline(time.Time{})
	} else {
		w.Header().Set("Connection", "close")
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, tooLarge
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, newAPIError(http.StatusRequestTimeout, typeInvalidRequest, "", "", "the request body did not arrive within %v", bodyTimeout)
	case err != nil:
		return nil, newAPIError(http.StatusBadRequest, typeInvalidRequest, "", "", "reading the request body: %v", err)
	}
	return body, nil
}

// authorized checks the bearer token when an API key is set.
func (h *handler) authorized(r *http.Request) bool {
	if h.o.APIKey == "" {
		return true
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(h.o.APIKey)) == 1
}

// model is the one model this server has.
func (h *handler) model() modelObject {
	id := h.o.ModelName
	if id == "" {
		id = h.b.Model()
	}
	return modelObject{ID: id, Object: "model", Created: h.created, OwnedBy: "hlm"}
}

// allow answers 405 unless r uses one of methods.
func allow(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	writeError(w, newAPIError(http.StatusMethodNotAllowed, typeInvalidRequest, "method_not_allowed", "",
		"%s is not allowed on %s (use %s)", r.Method, r.URL.Path, strings.Join(methods, " or ")))
	return false
}
