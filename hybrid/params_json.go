package hybrid

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/hlmproject/hlm/channel"
)

// MarshalJSON writes the parameters as one flat object keyed by the names
// --set takes (the registry's keys, then the link's), each value in the
// text Set parses back (Get), so that a file of parameters reads like the
// command line that made it: {"method":"u-hlm","max_tokens":"24",…}. The
// action key channel_preset is not written (the link's own keys are).
func (p Params) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	field := func(name, value string) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(name)
		v, _ := json.Marshal(value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	for i := range registry {
		if k := &registry[i]; !k.Action {
			field(k.Name, k.get(&p))
		}
	}
	for _, k := range channel.Keys() {
		v, err := p.Channel.Get(k.Name)
		if err != nil {
			return nil, err
		}
		field(k.Name, v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an object of --set names: it starts from
// DefaultParams, applies channel_preset first when given, then every
// other key as Set would (registry order, then the link's keys), and
// refuses an unknown key or a value Set refuses. Values may be JSON
// strings, numbers or booleans ({"max_tokens": 5} and {"max_tokens": "5"}
// are the same); a key left out keeps its default.
func (p *Params) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("%w: parameters: %v", ErrParam, err)
	}
	vals := make(map[string]string, len(m))
	for name, raw := range m {
		v, err := jsonScalar(raw)
		if err != nil {
			return fmt.Errorf("%w: parameter %q: %v", ErrParam, name, err)
		}
		vals[name] = v
	}
	q := DefaultParams()
	var order []string
	if _, ok := vals["channel_preset"]; ok {
		order = append(order, "channel_preset")
	}
	for i := range registry {
		if !registry[i].Action {
			order = append(order, registry[i].Name)
		}
	}
	for _, k := range channel.Keys() {
		order = append(order, k.Name)
	}
	for _, name := range order {
		v, ok := vals[name]
		if !ok {
			continue
		}
		delete(vals, name)
		if err := q.Set(name, v); err != nil {
			return err
		}
	}
	if len(vals) > 0 { // keys no registry has; the first by name, for a deterministic error
		name := slices.Min(slices.Collect(maps.Keys(vals)))
		if _, err := q.Get(name); err != nil {
			return err
		}
		return fmt.Errorf("%w: parameter %q was not applied", ErrParam, name)
	}
	*p = q
	return nil
}

// jsonScalar is the text of a JSON string, number or boolean.
func jsonScalar(raw json.RawMessage) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return string(bytes.TrimSpace(raw)), nil // the number as written: no rounding through float64
	}
	return "", fmt.Errorf("value %s is not a string, number or boolean", raw)
}
