package ai

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// Small local models often write a tool call into their answer's text in
// the form their chat template taught them, where the server did not turn
// it into tool_calls. A turn whose answer carries no tool_calls reads such
// a call back from the text (unless the provider's setting turns this
// off): each is then validated against the tool's schema like any call.
// Only the forms below are read, and only when what they hold parses and
// names a tool the turn offers; prose that mentions a tool is no call.

// The forms a call written as text is read from, as the log names them.
const (
	TextCallHermes  = "hermes"  // <tool_call>{"name":…,"arguments":…}</tool_call> (Hermes, Qwen)
	TextCallLlama   = "llama"   // <|python_tag|>{"name":…,"parameters":…}, or that JSON alone (Llama 3.x)
	TextCallMistral = "mistral" // [TOOL_CALLS][{"name":…,"arguments":…}] or [TOOL_CALLS]name[ARGS]{…}
	TextCallFenced  = "fenced"  // a ```json block holding a call, or a list of them
)

var (
	hermesCall  = regexp.MustCompile(`(?s)<tool_call>\s*(.*?)\s*(?:</tool_call>|$)`)
	fencedBlock = regexp.MustCompile("(?s)```(?:json|tool_call|tool)?[ \t]*\n(.*?)\n?```")
	mistralArgs = regexp.MustCompile(`(?s)\[TOOL_CALLS\]\s*([A-Za-z0-9_.\-]+)\s*\[ARGS\]\s*`)
)

// textCall is a call as a model wrote it in its text.
type textCall struct {
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Parameters json.RawMessage `json:"parameters"`
	// Function is the OpenAI shape some models copy into their text:
	// {"type":"function","function":{"name":…,"arguments":…}}.
	Function *textCall `json:"function"`
}

// recoverCalls reads the tool calls written in content, in the first form
// that holds any, keeping those whose name resolve knows (it answers the
// tool's wire name); it answers them, the text left around them, and the
// form. Nothing is recovered when any call found names no tool: a text
// that is half calls and half prose about tools is left as an answer.
func recoverCalls(content string, resolve func(name string) (string, bool)) ([]toolCall, string, string) {
	for _, form := range []struct {
		name string
		find func(string) ([]textCall, string, bool)
	}{
		{TextCallHermes, findHermes},
		{TextCallMistral, findMistral},
		{TextCallLlama, findLlama},
		{TextCallFenced, findFenced},
	} {
		found, rest, ok := form.find(content)
		if !ok || len(found) == 0 {
			continue
		}
		var calls []toolCall
		for _, f := range found {
			wire, known := resolve(f.Name)
			if !known {
				return nil, content, ""
			}
			calls = append(calls, toolCall{Name: wire, Args: f.args(), FromText: form.name})
		}
		return calls, strings.TrimSpace(rest), form.name
	}
	return nil, content, ""
}

// args is the call's arguments as a JSON text: an object written as one,
// or the string a model wrote it in, or {} when it wrote none.
func (c textCall) args() string {
	raw := c.Arguments
	if len(raw) == 0 {
		raw = c.Parameters
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "{}"
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// calls reads one JSON value as calls: an object that is a call, or a
// list of them. ok is false for anything else.
func parseCalls(text string) ([]textCall, bool) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(text))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false
	}
	v = bytes.TrimSpace(v)
	var list []textCall
	switch v[0] {
	case '{':
		var c textCall
		if json.Unmarshal(v, &c) != nil {
			return nil, false
		}
		list = []textCall{c}
	case '[':
		if json.Unmarshal(v, &list) != nil || len(list) == 0 {
			return nil, false
		}
	default:
		return nil, false
	}
	for i, c := range list {
		if c.Function != nil && c.Name == "" {
			list[i] = *c.Function
			c = list[i]
		}
		if c.Name == "" || (len(c.Arguments) == 0 && len(c.Parameters) == 0) || !argsObject(c) {
			return nil, false
		}
	}
	return list, true
}

// argsObject says the call's arguments are an object, or a string that
// holds one.
func argsObject(c textCall) bool {
	var m map[string]any
	return json.Unmarshal([]byte(c.args()), &m) == nil
}

func findHermes(content string) ([]textCall, string, bool) {
	ms := hermesCall.FindAllStringSubmatchIndex(content, -1)
	if len(ms) == 0 {
		return nil, content, false
	}
	var out []textCall
	for _, m := range ms {
		calls, ok := parseCalls(content[m[2]:m[3]])
		if !ok {
			return nil, content, false
		}
		out = append(out, calls...)
	}
	return out, hermesCall.ReplaceAllString(content, ""), true
}

func findMistral(content string) ([]textCall, string, bool) {
	i := strings.Index(content, "[TOOL_CALLS]")
	if i < 0 {
		return nil, content, false
	}
	before, after := content[:i], content[i:]
	// The newer form: [TOOL_CALLS]name[ARGS]{…}, repeated.
	if ms := mistralArgs.FindAllStringSubmatchIndex(after, -1); len(ms) > 0 && ms[0][0] == 0 {
		var out []textCall
		for k, m := range ms {
			end := len(after)
			if k+1 < len(ms) {
				end = ms[k+1][0]
			}
			args := strings.TrimSpace(after[m[1]:end])
			var obj map[string]any
			if json.Unmarshal([]byte(args), &obj) != nil {
				return nil, content, false
			}
			out = append(out, textCall{Name: after[m[2]:m[3]], Arguments: json.RawMessage(args)})
		}
		return out, before, true
	}
	calls, ok := parseCalls(strings.TrimPrefix(after, "[TOOL_CALLS]"))
	return calls, before, ok
}

func findLlama(content string) ([]textCall, string, bool) {
	text := strings.TrimSpace(content)
	before := ""
	if i := strings.Index(text, "<|python_tag|>"); i >= 0 {
		before, text = text[:i], text[i+len("<|python_tag|>"):]
	}
	text = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(text), "<|eom_id|>"), "<|eot_id|>"))
	if calls, ok := parseCalls(text); ok {
		return calls, before, true
	}
	// Several calls, one a line or separated by semicolons.
	var out []textCall
	for _, part := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == ';' }) {
		if strings.TrimSpace(part) == "" {
			continue
		}
		calls, ok := parseCalls(part)
		if !ok {
			return nil, content, false
		}
		out = append(out, calls...)
	}
	return out, before, len(out) > 0
}

func findFenced(content string) ([]textCall, string, bool) {
	ms := fencedBlock.FindAllStringSubmatchIndex(content, -1)
	var out []textCall
	rest := content
	for _, m := range ms {
		calls, ok := parseCalls(content[m[2]:m[3]])
		if !ok {
			// A block of other JSON (an example the model shows) is no call.
			continue
		}
		out = append(out, calls...)
		rest = strings.Replace(rest, content[m[0]:m[1]], "", 1)
	}
	return out, rest, len(out) > 0
}
