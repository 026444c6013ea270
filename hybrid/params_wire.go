package hybrid

import (
	"fmt"
	"strconv"
	"strings"
)

// SessionFormat is the first line of the session parameters a device sends
// in wire.Open: the format's name and version.
const SessionFormat = "hlm-session/1"

// sessionKeys are the parameters the server needs to verify a session, by
// their --set names, in the order they are written: what it samples and
// verifies with (method, seed, the sampling filters, the one-token rule),
// and what builds the codec that decodes the drafts. Device-only settings
// (upload rules, draft lengths, timing, energy, the channel, file paths)
// do not travel.
var sessionKeys = []string{
	"method", "seed", "temperature", "top_k", "top_p", "bonus", "sampler", "list_k",
	"prob_bits", "index_bits", "k", "theta", "eta", "sqs_k", "ell", "conf_alpha", "conf_eta", "conf_beta", "draft",
}

// sessionValue is p's value of a session key, in the text Set parses back
// to the same value (floats in the shortest form that round-trips).
func (p Params) sessionValue(key string) string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	switch key {
	case "method":
		return p.Method
	case "seed":
		return strconv.FormatUint(p.Seed, 10)
	case "temperature":
		return f(p.Temperature)
	case "top_k":
		return strconv.Itoa(p.TopK)
	case "top_p":
		return f(p.TopP)
	case "bonus":
		return strconv.FormatBool(p.Bonus)
	case "sampler":
		return p.Sampler
	case "list_k":
		return strconv.Itoa(p.ListK)
	case "prob_bits":
		return strconv.Itoa(p.ProbBits)
	case "index_bits":
		return strconv.FormatBool(p.IndexBits)
	case "k":
		return strconv.Itoa(p.K)
	case "theta":
		return f(p.Theta)
	case "eta":
		return f(p.Eta)
	case "sqs_k":
		return strconv.Itoa(p.SQSK)
	case "ell":
		return strconv.Itoa(p.Ell)
	case "conf_alpha":
		return f(p.ConfAlpha)
	case "conf_eta":
		return f(p.ConfEta)
	case "conf_beta":
		return f(p.ConfBeta)
	case "draft":
		return p.Draft
	}
	panic("hybrid: no session value for " + key)
}

// SessionParams are the parameters the server needs, as the device sends
// them: SessionFormat, then one key=value line per session key, in a fixed
// order. The same parameters always give the same bytes.
func (p Params) SessionParams() string {
	var b strings.Builder
	b.WriteString(SessionFormat)
	for _, k := range sessionKeys {
		b.WriteString("\n" + k + "=" + p.sessionValue(k))
	}
	return b.String()
}

// ParseSessionParams reads parameters written by SessionParams: the format
// line, then every session key exactly once. An unknown, repeated or
// missing key, or a value that does not parse or validate, is an error
// naming it; nothing is filled in from this build's defaults but the
// settings the server does not use.
func ParseSessionParams(s string) (Params, error) {
	p := DefaultParams()
	lines := strings.Split(s, "\n")
	if lines[0] != SessionFormat {
		return p, fmt.Errorf("%w: session parameters in format %.40q, want %q", ErrParam, lines[0], SessionFormat)
	}
	want := make(map[string]bool, len(sessionKeys))
	for _, k := range sessionKeys {
		want[k] = true
	}
	seen := make(map[string]bool, len(sessionKeys))
	for _, line := range lines[1:] {
		k, v, ok := strings.Cut(line, "=")
		switch {
		case !ok:
			return p, fmt.Errorf("%w: session parameter line %.40q is not key=value", ErrParam, line)
		case !want[k]:
			return p, fmt.Errorf("%w: unknown session parameter %.40q", ErrParam, k)
		case seen[k]:
			return p, fmt.Errorf("%w: session parameter %q given twice", ErrParam, k)
		}
		seen[k] = true
		if err := p.Set(k, v); err != nil {
			return p, err
		}
	}
	for _, k := range sessionKeys {
		if !seen[k] {
			return p, fmt.Errorf("%w: session parameter %q missing", ErrParam, k)
		}
	}
	return p, p.Validate()
}
