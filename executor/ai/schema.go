package ai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"autoapp/intent/refusal"
)

// The tools' schemas use a small part of JSON Schema, and a refusal has to
// name each field in words a model acts on ("hunks[0].find: expected a
// string, not a number"). A validator of that part is shorter than the
// mapping a general library's errors would need, so it is written here.
// A keyword outside the part is refused when the schema is compiled, never
// silently ignored: CheckExample reports it in a test.

// annotations are keywords that say something to the model and nothing to
// the validator.
var annotations = []string{"$schema", "$id", "$comment", "title", "description", "default", "examples"}

// schema is one compiled node of a JSON Schema.
type schema struct {
	types      []string
	properties map[string]*schema
	required   []string
	// closed refuses properties that are not in properties; additional,
	// when set, validates them instead.
	closed     bool
	additional *schema
	enum       []any
	items      *schema
	minLength  *int
	maxLength  *int
	minItems   *int
	maxItems   *int
	minimum    *float64
	maximum    *float64
}

func compileSchema(raw json.RawMessage) (*schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("the schema is empty")
	}
	return compileNode(raw, "")
}

func compileNode(raw json.RawMessage, at string) (*schema, error) {
	var kw map[string]json.RawMessage
	if err := json.Unmarshal(raw, &kw); err != nil {
		return nil, fmt.Errorf("%s: a schema must be a JSON object", where(at))
	}
	s := &schema{}
	keys := make([]string, 0, len(kw))
	for k := range kw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := kw[k]
		bad := func(want string) error { return fmt.Errorf("%s: %q must be %s", where(at), k, want) }
		switch k {
		case "type":
			var one string
			if json.Unmarshal(v, &one) == nil {
				s.types = []string{one}
			} else if json.Unmarshal(v, &s.types) != nil || len(s.types) == 0 {
				return nil, bad("a type name or a list of them")
			}
			for _, t := range s.types {
				if _, ok := typeNames[t]; !ok {
					return nil, fmt.Errorf("%s: type %q is not supported", where(at), t)
				}
			}
		case "properties":
			var props map[string]json.RawMessage
			if json.Unmarshal(v, &props) != nil {
				return nil, bad("an object of schemas")
			}
			s.properties = make(map[string]*schema, len(props))
			for name, p := range props {
				c, err := compileNode(p, join(at, "properties."+name))
				if err != nil {
					return nil, err
				}
				s.properties[name] = c
			}
		case "required":
			if json.Unmarshal(v, &s.required) != nil {
				return nil, bad("a list of names")
			}
		case "additionalProperties":
			var b bool
			if json.Unmarshal(v, &b) == nil {
				s.closed = !b
				continue
			}
			c, err := compileNode(v, join(at, "additionalProperties"))
			if err != nil {
				return nil, err
			}
			s.additional = c
		case "enum":
			var values []any
			if err := decodeNumbers(v, &values); err != nil || len(values) == 0 {
				return nil, bad("a list of values")
			}
			for _, e := range values {
				s.enum = append(s.enum, normalise(e))
			}
		case "items":
			c, err := compileNode(v, join(at, "items"))
			if err != nil {
				return nil, err
			}
			s.items = c
		case "minLength", "maxLength", "minItems", "maxItems":
			var n int
			if json.Unmarshal(v, &n) != nil || n < 0 {
				return nil, bad("a whole number, zero or more")
			}
			switch k {
			case "minLength":
				s.minLength = &n
			case "maxLength":
				s.maxLength = &n
			case "minItems":
				s.minItems = &n
			case "maxItems":
				s.maxItems = &n
			}
		case "minimum", "maximum":
			var f float64
			if json.Unmarshal(v, &f) != nil {
				return nil, bad("a number")
			}
			if k == "minimum" {
				s.minimum = &f
			} else {
				s.maximum = &f
			}
		default:
			if !slices.Contains(annotations, k) {
				return nil, fmt.Errorf("%s: keyword %q is not supported", where(at), k)
			}
		}
	}
	for _, name := range s.required {
		if s.closed && s.properties[name] == nil {
			return nil, fmt.Errorf("%s: %q is required but is not among the properties", where(at), name)
		}
	}
	return s, nil
}

func where(at string) string {
	if at == "" {
		return "schema"
	}
	return "schema at " + at
}

// validate checks a tool's input, given as JSON text, and names every
// problem by its field. Empty input reads as {}, as some models send it for
// a tool without fields.
func (s *schema) validate(input []byte) []refusal.Problem {
	if len(bytes.TrimSpace(input)) == 0 {
		input = []byte("{}")
	}
	var v any
	if err := decodeNumbers(input, &v); err != nil {
		return []refusal.Problem{{Message: "the input is not valid JSON: " + err.Error()}}
	}
	var ps []refusal.Problem
	s.check(v, "", &ps)
	return ps
}

// decodeNumbers decodes JSON keeping numbers as json.Number, so that an
// integer is told from a number, and refuses anything after the value.
func decodeNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("something follows the JSON value")
	}
	return nil
}

var typeNames = map[string]string{
	"object":  "an object",
	"array":   "an array",
	"string":  "a string",
	"integer": "an integer",
	"number":  "a number",
	"boolean": "true or false",
	"null":    "null",
}

func (s *schema) check(v any, field string, ps *[]refusal.Problem) {
	add := func(format string, args ...any) {
		*ps = append(*ps, refusal.Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if len(s.types) > 0 && !slices.ContainsFunc(s.types, func(t string) bool { return isType(v, t) }) {
		if field == "" && slices.Equal(s.types, []string{"object"}) {
			add("the input must be a JSON object, not %s", kindOf(v))
			return
		}
		add("expected %s, not %s", s.expected(), kindOf(v))
		return
	}
	if len(s.enum) > 0 {
		n := normalise(v)
		if !slices.ContainsFunc(s.enum, func(e any) bool { return reflect.DeepEqual(e, n) }) {
			add("must be one of %s", s.enumList())
			return
		}
	}
	switch v := v.(type) {
	case map[string]any:
		for _, name := range s.required {
			if _, ok := v[name]; !ok {
				msg := "is required"
				if p := s.properties[name]; p != nil && len(p.types) > 0 {
					msg += " (" + p.expected() + ")"
				}
				*ps = append(*ps, refusal.Problem{Field: join(field, name), Message: msg})
			}
		}
		names := make([]string, 0, len(v))
		for name := range v {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			switch p := s.properties[name]; {
			case p != nil:
				p.check(v[name], join(field, name), ps)
			case s.additional != nil:
				s.additional.check(v[name], join(field, name), ps)
			case s.closed:
				*ps = append(*ps, refusal.Problem{Field: join(field, name), Message: "is not a field here; the fields are " + s.fieldList()})
			}
		}
	case []any:
		if s.minItems != nil && len(v) < *s.minItems {
			add("give at least %d %s", *s.minItems, plural(*s.minItems, "item", "items"))
		}
		if s.maxItems != nil && len(v) > *s.maxItems {
			add("give at most %d %s, not %d", *s.maxItems, plural(*s.maxItems, "item", "items"), len(v))
		}
		if s.items != nil {
			for i, e := range v {
				s.items.check(e, fmt.Sprintf("%s[%d]", field, i), ps)
			}
		}
	case string:
		n := utf8.RuneCountInString(v)
		if s.minLength != nil && n < *s.minLength {
			if *s.minLength == 1 {
				add("must not be empty")
			} else {
				add("must be at least %d characters", *s.minLength)
			}
		}
		if s.maxLength != nil && n > *s.maxLength {
			add("must be at most %d characters, not %d", *s.maxLength, n)
		}
	case json.Number:
		f, _ := v.Float64()
		if s.minimum != nil && f < *s.minimum {
			add("must be at least %s", formatNumber(*s.minimum))
		}
		if s.maximum != nil && f > *s.maximum {
			add("must be at most %s", formatNumber(*s.maximum))
		}
	}
}

func join(field, name string) string {
	if field == "" {
		return name
	}
	return field + "." + name
}

func isType(v any, t string) bool {
	switch v := v.(type) {
	case map[string]any:
		return t == "object"
	case []any:
		return t == "array"
	case string:
		return t == "string"
	case bool:
		return t == "boolean"
	case nil:
		return t == "null"
	case json.Number:
		if t == "number" {
			return true
		}
		if t == "integer" {
			f, err := v.Float64()
			return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
		}
	}
	return false
}

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "true or false"
	case nil:
		return "null"
	case json.Number:
		return "a number"
	}
	return "something else"
}

func (s *schema) expected() string {
	names := make([]string, len(s.types))
	for i, t := range s.types {
		names[i] = typeNames[t]
	}
	return strings.Join(names, " or ")
}

func (s *schema) enumList() string {
	out := make([]string, len(s.enum))
	for i, e := range s.enum {
		b, _ := json.Marshal(e)
		out[i] = string(b)
	}
	return strings.Join(out, ", ")
}

func (s *schema) fieldList() string {
	names := make([]string, 0, len(s.properties))
	for name := range s.properties {
		names = append(names, name)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// normalise turns numbers into float64 so that 2 and 2.0 compare equal.
func normalise(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, _ := v.Float64()
		return f
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normalise(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = normalise(e)
		}
		return out
	}
	return v
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
