package chat

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// toValue converts a Go value from the caller (Input.Vars, Message.Extra)
// into a template value. Maps are ordered by key; json.RawMessage keeps the
// order of its JSON object members, as the reference does with parsed JSON.
func toValue(x any) (value, error) {
	switch x := x.(type) {
	case nil:
		return null{}, nil
	case undefined, null, number, *list, *object, *function:
		return x, nil
	case markup:
		return string(x), nil
	case bool:
		return x, nil
	case string:
		return x, nil
	case json.RawMessage:
		return decodeJSON(x)
	case json.Number:
		return jsonNumber(x)
	case float64:
		return floatInput(x), nil
	case float32:
		return floatInput(float64(x)), nil
	case int:
		return intNum(x), nil
	case int64:
		return number{f: float64(x)}, nil
	case int32:
		return number{f: float64(x)}, nil
	case uint:
		return number{f: float64(x)}, nil
	case uint64:
		return number{f: float64(x)}, nil
	case []any:
		l := &list{items: make([]value, len(x))}
		for i, e := range x {
			v, err := toValue(e)
			if err != nil {
				return nil, err
			}
			l.items[i] = v
		}
		return l, nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sortKeysJS(keys)
		o := newObject(plainObject)
		for _, k := range keys {
			v, err := toValue(x[k])
			if err != nil {
				return nil, err
			}
			o.set(k, v)
		}
		return o, nil
	case []Message:
		l := &list{}
		for _, m := range x {
			o, err := m.object()
			if err != nil {
				return nil, err
			}
			l.items = append(l.items, o)
		}
		return l, nil
	}
	// Other slices and maps (e.g. []string, map[string]string) by reflection.
	rv := reflect.ValueOf(x)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		l := &list{items: make([]value, rv.Len())}
		for i := range l.items {
			v, err := toValue(rv.Index(i).Interface())
			if err != nil {
				return nil, err
			}
			l.items[i] = v
		}
		return l, nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		m := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			m[it.Key().String()] = it.Value().Interface()
		}
		return toValue(m)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return toValue(int64(rv.Convert(reflect.TypeOf(int64(0))).Int()))
	}
	return nil, fmt.Errorf("%w: a %T cannot be passed to a template", ErrUnsupported, x)
}

// floatInput is a float from the caller: the reference (JSON.parse, then
// Number.isInteger) makes an integral one an IntegerValue; Python keeps a
// float.
func floatInput(f float64) number {
	if f == math.Trunc(f) && !math.IsInf(f, 0) {
		return number{f: f, pyFloat: true}
	}
	return number{f: f, float: true}
}

func jsonNumber(n json.Number) (value, error) {
	s := string(n)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: number %s: %v", ErrUnsupported, s, err)
	}
	if strings.ContainsAny(s, ".eE") {
		return floatInput(f), nil
	}
	return number{f: f}, nil
}

// decodeJSON parses JSON into values, keeping the order of object members.
func decodeJSON(data []byte) (value, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	v, err := decodeJSONValue(dec)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("invalid JSON: data after the value")
	}
	return v, nil
}

func decodeJSONValue(dec *json.Decoder) (value, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '[':
			l := &list{}
			for dec.More() {
				v, err := decodeJSONValue(dec)
				if err != nil {
					return nil, err
				}
				l.items = append(l.items, v)
			}
			_, err := dec.Token() // ]
			return l, err
		case '{':
			var keys []string
			vals := map[string]value{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := decodeJSONValue(dec)
				if err != nil {
					return nil, err
				}
				if _, dup := vals[k]; !dup {
					keys = append(keys, k)
				}
				vals[k] = v
			}
			if _, err := dec.Token(); err != nil { // }
				return nil, err
			}
			// Object.entries lists integer-like keys first, ascending.
			sortKeysJS(keys)
			o := newObject(plainObject)
			for _, k := range keys {
				o.set(k, vals[k])
			}
			return o, nil
		}
	case nil:
		return null{}, nil
	case bool:
		return t, nil
	case string:
		return t, nil
	case json.Number:
		return jsonNumber(t)
	}
	return nil, fmt.Errorf("unexpected JSON token %v", t)
}

// sortKeysJS orders object keys as JavaScript enumerates them: array-index
// keys ("0", "17") first in numeric order, then the others in their given
// order. The sort is stable, so plain keys keep the order they came in.
func sortKeysJS(keys []string) {
	sort.SliceStable(keys, func(i, j int) bool {
		a, aok := arrayIndex(keys[i])
		b, bok := arrayIndex(keys[j])
		if aok && bok {
			return a < b
		}
		return aok && !bok
	})
}

// arrayIndex reports whether k is a canonical array index (0 … 2^32−2).
func arrayIndex(k string) (uint64, bool) {
	if k == "" || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(k, 10, 64)
	if err != nil || n >= 1<<32-1 {
		return 0, false
	}
	return n, true
}

// fromValue converts a template value back to Go (for tests and callers of
// the values the engine produces).
func fromValue(v value) any {
	switch v := v.(type) {
	case null, undefined:
		return nil
	case bool:
		return v
	case number:
		if !v.float && v.f == math.Trunc(v.f) && math.Abs(v.f) < 1<<53 {
			return int64(v.f)
		}
		return v.f
	case string:
		return v
	case markup:
		return string(v)
	case *list:
		out := make([]any, len(v.items))
		for i, e := range v.items {
			out[i] = fromValue(e)
		}
		return out
	case *object:
		out := make(map[string]any, v.len())
		for i, k := range v.keys {
			out[k] = fromValue(v.vals[i])
		}
		return out
	}
	return nil
}
