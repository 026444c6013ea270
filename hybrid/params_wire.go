package hybrid

import (
	"fmt"
	"strings"
)

// SessionFormat is the first line of the session parameters a device sends
// in wire.Open: the format's name and version.
const SessionFormat = "hlm-session/2"

// The session keys are the registry's keys marked Wire (keys.go), in its
// order: what the server samples and verifies with (method, seed, the
// sampling filters, the one-token rule) and what builds the codec that
// decodes the drafts. Device-only settings (upload rules, draft lengths,
// timing, energy, the channel, file paths) do not travel.
func sessionKeys() []*Key {
	var out []*Key
	for i := range registry {
		if registry[i].Wire {
			out = append(out, &registry[i])
		}
	}
	return out
}

// SessionParams are the parameters the server needs, as the device sends
// them: SessionFormat, then one key=value line per session key, in a fixed
// order. The same parameters always give the same bytes.
func (p Params) SessionParams() string {
	var b strings.Builder
	b.WriteString(SessionFormat)
	for _, k := range sessionKeys() {
		b.WriteString("\n" + k.Name + "=" + k.get(&p))
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
	keys := sessionKeys()
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k.Name] = true
	}
	seen := make(map[string]bool, len(keys))
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
	for _, k := range keys {
		if !seen[k.Name] {
			return p, fmt.Errorf("%w: session parameter %q missing", ErrParam, k.Name)
		}
	}
	return p, p.Validate()
}
