package chat

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Numbers print alike in the reference (JavaScript) and in Python only in
// a range: integers up to 2^53, and floats written in fixed notation by
// both — JavaScript switches to exponents below 1e-7 and from 1e21, Python
// below 1e-4 and from 1e16. Both write the shortest digits that read back
// to the same float. Outside that range hlm refuses.

// printNumber writes a number as {{ }} and |string do.
func printNumber(n number) (string, error) {
	switch {
	case n.pyFloat:
		return "", unsupported("printing %s.0, a float of the input (@huggingface/jinja has made it the integer %s, Python prints %s.0)", formatInt(n.f), formatInt(n.f), formatInt(n.f))
	case !n.float:
		if math.Abs(n.f) > maxSafe {
			return "", unsupported("printing an integer beyond 2^53")
		}
		return formatInt(n.f), nil
	}
	if err := floatInRange(n.f); err != nil {
		return "", err
	}
	if n.f == math.Trunc(n.f) {
		if n.f == 0 && math.Signbit(n.f) {
			return "-0.0", nil
		}
		return formatInt(n.f) + ".0", nil
	}
	return strconv.FormatFloat(n.f, 'f', -1, 64), nil
}

func floatInRange(f float64) error {
	a := math.Abs(f)
	if math.IsNaN(f) || math.IsInf(f, 0) || a >= 1e16 || (a < 1e-4 && a != 0 && f != math.Trunc(f)) {
		return unsupported("the float %v (JavaScript and Python write it differently)", f)
	}
	return nil
}

func formatInt(f float64) string {
	if f == 0 {
		return "0"
	}
	return strconv.FormatFloat(f, 'f', 0, 64)
}

// jsonOptions are tojson's arguments, with transformers' defaults
// (json.dumps with ensure_ascii=False).
type jsonOptions struct {
	indent     int // 0: none
	itemSep    string
	keySep     string
	sortKeys   bool
	ensureASCI bool
}

func defaultJSON() jsonOptions { return jsonOptions{itemSep: ", ", keySep: ": "} }

// toJSON writes v as transformers' tojson filter (Python's json.dumps)
// and the reference both do, refusing what only one of them can write.
func toJSON(v value, o jsonOptions, depth int) (string, error) {
	if depth > maxNesting {
		return "", fmt.Errorf("%w: tojson of a value nested deeper than %d", ErrLimit, maxNesting)
	}
	switch v := unmark(v).(type) {
	case null:
		return "null", nil
	case undefined:
		return "", unsupported("tojson of an undefined value (Python cannot serialize it, @huggingface/jinja writes null)")
	case bool:
		if v {
			return "true", nil
		}
		return "false", nil
	case number:
		return jsonNumberText(v)
	case string:
		return jsonString(v, o.ensureASCI), nil
	case *list:
		if v.tuple {
			return "", renderErr("cannot convert a tuple to JSON (@huggingface/jinja cannot)")
		}
		if err := pyOnly(v, "tojson", pyGenerator, pyView, pyRange); err != nil {
			return "", err
		}
		parts := make([]string, len(v.items))
		for i, x := range v.items {
			s, err := toJSON(x, o, depth+1)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		if o.indent > 0 && len(parts) > 0 {
			base := "\n" + strings.Repeat(" ", o.indent*depth)
			child := base + strings.Repeat(" ", o.indent)
			return "[" + child + strings.Join(parts, o.itemSep+child) + base + "]", nil
		}
		return "[" + strings.Join(parts, o.itemSep) + "]", nil
	case *object:
		if v.kind != plainObject {
			return "", unsupported("tojson of a %s (Python cannot serialize it)", map[objectKind]string{namespaceObject: "namespace", loopObject: "loop object"}[v.kind])
		}
		keys := v.keys
		if o.sortKeys && len(keys) > 1 {
			for _, k := range keys {
				if !sortableKey.MatchString(k) {
					return "", unsupported("tojson(sort_keys=true) of the key %q (@huggingface/jinja sorts by locale, Python by code point)", k)
				}
			}
			keys = append([]string(nil), keys...)
			sort.Strings(keys)
		}
		parts := make([]string, len(keys))
		base := "\n" + strings.Repeat(" ", o.indent*depth)
		child := base + strings.Repeat(" ", o.indent)
		for i, k := range keys {
			kv, _ := v.get(k)
			s, err := toJSON(kv, o, depth+1)
			if err != nil {
				return "", err
			}
			parts[i] = jsonString(k, o.ensureASCI) + o.keySep + s
			if o.indent > 0 {
				parts[i] = child + parts[i]
			}
		}
		if o.indent > 0 && len(parts) > 0 {
			return "{" + strings.Join(parts, o.itemSep) + base + "}", nil
		}
		return "{" + strings.Join(parts, o.itemSep) + "}", nil
	}
	return "", renderErr("cannot convert a %s to JSON", typeName(v))
}

// sortableKey matches keys whose order is the same by code point (Python)
// and by the root collation of localeCompare (the reference).
var sortableKey = regexp.MustCompile(`^[a-z0-9]*$`)

func jsonNumberText(n number) (string, error) {
	switch {
	case n.pyFloat:
		return "", unsupported("tojson of %s.0, a float of the input (@huggingface/jinja writes %s, Python %s.0)", formatInt(n.f), formatInt(n.f), formatInt(n.f))
	case !n.float:
		if math.Abs(n.f) > maxSafe {
			return "", unsupported("tojson of an integer beyond 2^53")
		}
		return formatInt(n.f), nil
	}
	if err := floatInRange(n.f); err != nil {
		return "", err
	}
	if n.f == math.Trunc(n.f) {
		return "", unsupported("tojson of the float %s.0 (JavaScript writes %s, Python %s.0)", formatInt(n.f), formatInt(n.f), formatInt(n.f))
	}
	return strconv.FormatFloat(n.f, 'f', -1, 64), nil
}

// jsonString quotes s as JSON.stringify and json.dumps do: \" \\ \b \f \n
// \r \t, other control characters as \u00xx; with ascii set, everything
// from U+007F as \uxxxx (UTF-16 surrogate pairs beyond U+FFFF).
func jsonString(s string, ascii bool) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			switch {
			case r < 0x20:
				fmt.Fprintf(&b, `\u%04x`, r)
			case ascii && r >= 0x10000:
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			case ascii && r >= 0x7f:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
