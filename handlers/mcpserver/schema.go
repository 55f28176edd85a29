package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"autoapp/intent"
	"autoapp/intent/refusal"
)

// fields adjusts the schema inferred from a tool's input struct: what a Go
// type cannot say (an enumeration, a positive id, a text that must not be
// empty).
type fields func(props map[string]*jsonschema.Schema)

// positive says each named integer is 1 or more.
func positive(names ...string) fields {
	return func(props map[string]*jsonschema.Schema) {
		for _, n := range names {
			props[n].Minimum = new(1.0)
		}
	}
}

// nonEmpty says each named string has at least one character.
func nonEmpty(names ...string) fields {
	return func(props map[string]*jsonschema.Schema) {
		for _, n := range names {
			props[n].MinLength = new(1)
		}
	}
}

// oneOf says the named string is one of values.
func oneOf[T ~string](name string, values ...T) fields {
	return func(props map[string]*jsonschema.Schema) {
		for _, v := range values {
			props[name].Enum = append(props[name].Enum, string(v))
		}
	}
}

// atMost says the named integer is at most max.
func atMost(name string, max float64) fields {
	return func(props map[string]*jsonschema.Schema) { props[name].Maximum = &max }
}

// tool is one tool: its name and description, and its handler, which
// parses nothing itself (the input arrives checked against the schema),
// calls one service and answers what the client shows.
type tool[In, Out any] struct {
	name, about string
	readOnly    bool
	fields      []fields
	handle      func(ctx context.Context, in In) (Out, error)
}

// add registers t on s: the schema inferred from In and adjusted by its
// fields is what the client is shown and what every call is checked
// against. Input the schema refuses, and every refusal of the services,
// is a tool result with IsError set and one sentence, never a protocol
// error; the act is the owner's, from MCP.
func add[In, Out any](s *mcp.Server, log logger, t tool[In, Out]) {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: the schema of %s: %v", t.name, err))
	}
	for _, f := range t.fields {
		f(schema.Properties)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: the schema of %s: %v", t.name, err))
	}
	annotations := &mcp.ToolAnnotations{ReadOnlyHint: t.readOnly, OpenWorldHint: new(false)}
	if !t.readOnly {
		annotations.DestructiveHint = new(false)
	}
	s.AddTool(&mcp.Tool{Name: t.name, Description: t.about, InputSchema: schema, Annotations: annotations},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			raw := req.Params.Arguments
			if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
				raw = []byte("{}")
			}
			var in In
			if sentence := checked(t.name, schema, resolved, raw, &in); sentence != "" {
				return refusedWith(sentence), nil
			}
			out, err := t.handle(intent.WithVia(ctx, intent.ViaMCP), in)
			if err != nil {
				if re, ok := refusal.As(err); ok {
					return refusedWith(re.Message), nil
				}
				log.Error("an MCP tool failed", "tool", t.name, "err", err)
				return refusedWith("The launcher could not do it; the MCP server's log (its standard error) has the detail."), nil
			}
			body, err := json.Marshal(out)
			if err != nil {
				return nil, fmt.Errorf("mcpserver: %s's answer: %w", t.name, err)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}, StructuredContent: json.RawMessage(body)}, nil
		})
}

// logger is the log a tool's failure is written to.
type logger interface {
	Error(msg string, args ...any)
}

func refusedWith(sentence string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: sentence}}}
}

// checked reads raw into in once the schema accepts it, and otherwise
// says in a sentence what is wrong with it, field by field.
func checked(name string, schema *jsonschema.Schema, resolved *jsonschema.Resolved, raw json.RawMessage, in any) string {
	var value any
	if err := json.Unmarshal(raw, &value); err != nil {
		return fmt.Sprintf("The input of %s is not JSON: %v.", name, err)
	}
	if err := resolved.Validate(value); err != nil {
		if why := explain(name, schema, value); why != "" {
			return why
		}
		return fmt.Sprintf("The input of %s does not fit its schema: %v.", name, err)
	}
	if err := json.Unmarshal(raw, in); err != nil {
		return fmt.Sprintf("The input of %s could not be read: %v.", name, err)
	}
	return ""
}

// explain says what the schema of a flat object refuses in value, a
// sentence a field, in the schema's order; "" when it finds nothing.
func explain(name string, schema *jsonschema.Schema, value any) string {
	obj, ok := value.(map[string]any)
	if !ok {
		return fmt.Sprintf("The input of %s is an object of its fields (%s).", name, strings.Join(schema.PropertyOrder, ", "))
	}
	var why []string
	var unknown []string
	for k := range obj {
		if _, ok := schema.Properties[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		why = append(why, fmt.Sprintf("%s takes no field %q; its fields are %s.", name, k, strings.Join(schema.PropertyOrder, ", ")))
	}
	for _, k := range schema.PropertyOrder {
		p := schema.Properties[k]
		v, given := obj[k]
		if !given {
			if slices.Contains(schema.Required, k) {
				why = append(why, fmt.Sprintf("%s is missing: %s", k, lowerFirst(p.Description)))
			}
			continue
		}
		if s := explainField(k, p, v); s != "" {
			why = append(why, s)
		}
	}
	return strings.Join(why, " ")
}

// explainField says what p refuses in v, or "".
func explainField(k string, p *jsonschema.Schema, v any) string {
	switch p.Type {
	case "string":
		s, ok := v.(string)
		switch {
		case !ok:
			return fmt.Sprintf("%s is text, not %s.", k, shown(v))
		case len(p.Enum) > 0 && !slices.Contains(p.Enum, any(s)):
			return fmt.Sprintf("%s is one of %s, not %q.", k, enumList(p.Enum), s)
		case p.MinLength != nil && len([]rune(s)) < *p.MinLength:
			return fmt.Sprintf("%s is empty: %s", k, lowerFirst(p.Description))
		}
	case "integer":
		n, ok := v.(float64)
		switch {
		case !ok || n != math.Trunc(n):
			return fmt.Sprintf("%s is a whole number, not %s.", k, shown(v))
		case p.Minimum != nil && n < *p.Minimum:
			return fmt.Sprintf("%s is a number from %v, not %v: %s", k, *p.Minimum, n, lowerFirst(p.Description))
		case p.Maximum != nil && n > *p.Maximum:
			return fmt.Sprintf("%s is at most %v, not %v.", k, *p.Maximum, n)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Sprintf("%s is true or false, not %s.", k, shown(v))
		}
	}
	return ""
}

func shown(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the text %q", v)
	case float64:
		return fmt.Sprintf("the number %v", v)
	case bool:
		return fmt.Sprintf("%v", v)
	case []any:
		return "a list"
	}
	return "an object"
}

func enumList(values []any) string {
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = fmt.Sprint(v)
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// lowerFirst is a description as the end of a sentence.
func lowerFirst(s string) string {
	if s == "" {
		return "give it."
	}
	return strings.ToLower(s[:1]) + s[1:]
}
