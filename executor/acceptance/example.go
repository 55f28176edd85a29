// Package acceptance reads an application's acceptance examples and runs
// them against its running preview. An example is one JSON file of HTTP
// steps; the host, never the engineer, decides whether it passed.
package acceptance

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/textproto"
	"net/url"
	"path"
	"slices"
	"strings"

	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
)

// Limits of an example.
const (
	MaxFileSize = 64 << 10 // bytes in one example file
	MaxSteps    = 50
	MaxTitle    = 200  // characters
	MaxPath     = 2048 // characters
	MaxID       = 100  // characters
)

// Any, as a string anywhere in expect.json, matches any value that is
// present: ids and timestamps a step cannot know.
const Any = "{{any}}"

// Methods a step may use.
var Methods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}

// Headers the host sets itself; a step may not.
var hostHeaders = []string{"Host", "Content-Length", "Transfer-Encoding", "Connection"}

// Example is one acceptance example: a title and HTTP steps run in order.
type Example struct {
	// ID is the file name without ".json", e.g. "0007-add-tags-c2".
	ID    string `json:"id"`
	Title string `json:"title"`
	Steps []Step `json:"steps"`
	// Hash is the SHA-256 of the steps in canonical form; the title, the
	// formatting and the order of keys do not change it. Empty when the
	// example has problems.
	Hash string `json:"hash,omitempty"`
	// Problems are what is wrong with the file; an example with problems
	// is never run and always fails.
	Problems refusal.Problems `json:"problems,omitempty"`
}

// Step is one request and what its answer must show.
type Step struct {
	Method string `json:"method"`
	// Path is a path on the preview's origin with an optional query,
	// never a scheme or a host.
	Path string `json:"path"`
	// Headers have canonical names ("Content-Type").
	Headers map[string]string `json:"headers,omitempty"`
	// Body is nil for none; a string is sent as text/plain, any other
	// JSON value as application/json. Numbers are json.Number.
	Body   any    `json:"body,omitempty"`
	Expect Expect `json:"expect"`
	// Fails means the route must refuse the request with a 4xx.
	Fails bool `json:"fails,omitempty"`
}

// Expect is what a step's answer must show.
type Expect struct {
	// Status is the exact status; 0 means any 2xx (any 4xx when the step fails).
	Status int `json:"status,omitempty"`
	// Contains are texts the body must hold, Absent texts it must not.
	Contains []string `json:"contains,omitempty"`
	Absent   []string `json:"absent,omitempty"`
	// JSON, when not nil, must be a subset of the JSON body: objects
	// match on the keys listed, arrays element by element with the same
	// length, and the string Any matches any present value.
	JSON any `json:"json,omitempty"`
}

// ValidID reports whether id is usable as an example id: lowercase
// letters, digits and dashes, starting with a letter or digit.
func ValidID(id string) bool {
	if id == "" || len(id) > MaxID || id[0] == '-' {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// Parse reads and validates one example file; id is its file name without
// ".json". Every problem is named by its field (steps[1].path). The
// problems are also kept on the example, so Run reports it as failed.
func Parse(id string, b []byte) (Example, refusal.Problems) {
	ex := Example{ID: id}
	var p parser
	if !ValidID(id) {
		p.add("id", "%q must be lowercase letters, digits and dashes, at most %d characters", id, MaxID)
	}
	if len(b) > MaxFileSize {
		p.add("", "the file is larger than %d KiB", MaxFileSize>>10)
		ex.Problems = p.ps
		return ex, p.ps
	}
	if err := syntaxProblem(b); err != "" {
		p.add("", "the file is not valid JSON: %s", err)
		ex.Problems = p.ps
		return ex, p.ps
	}
	top := p.object(b, "", "an example", "title", "steps")
	if top != nil {
		ex.Title = p.title(top["title"])
		ex.Steps = p.steps(top["steps"])
	}
	if len(p.ps) > 0 {
		ex.Problems = p.ps
		return ex, p.ps
	}
	ex.Hash = Hash(ex.Steps)
	return ex, nil
}

// Hash is the SHA-256 hex of steps in canonical form: fields in a fixed
// order, map keys sorted, headers with canonical names, bodies and JSON
// re-encoded compactly. Parse fills Example.Hash with it.
func Hash(steps []Step) string {
	b, err := json.Marshal(steps)
	if err != nil {
		// Steps from Parse hold only JSON-decoded values, which always encode.
		panic(fmt.Sprintf("acceptance: steps do not encode: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Load reads every "*.json" file in folder of fsys, in name order. A file
// that does not parse comes back with its Problems; a missing folder holds
// no examples. A folder the workspace will not read (a link, say: see
// workspace.FS) is one failed example, named after it, that says why. The
// error is for a folder that cannot be read.
func Load(fsys fs.FS, folder string) ([]Example, error) {
	folder = path.Clean(folder)
	entries, err := fs.ReadDir(fsys, folder)
	var refused *workspace.ReadError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return []Example{}, nil
	case errors.As(err, &refused):
		return []Example{failed(path.Base(folder), "", "%s", refused.Error())}, nil
	case err != nil:
		return nil, fmt.Errorf("acceptance: read %s: %w", folder, err)
	}
	examples := []Example{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() {
			continue
		}
		if !e.Type().IsRegular() {
			examples = append(examples, failed(name, "", "%s is not a regular file", e.Name()))
			continue
		}
		b, err := readCapped(fsys, path.Join(folder, e.Name()))
		switch {
		case errors.As(err, &refused):
			examples = append(examples, failed(name, "", "%s", refused.Error()))
			continue
		case err != nil:
			examples = append(examples, failed(name, "", "%s cannot be read: %v", e.Name(), err))
			continue
		}
		ex, _ := Parse(name, b)
		examples = append(examples, ex)
	}
	return examples, nil
}

func failed(id, field, format string, args ...any) Example {
	return Example{ID: id, Problems: refusal.Problems{{Field: field, Message: fmt.Sprintf(format, args...)}}}
}

// readCapped reads at most one byte more than MaxFileSize, enough for Parse
// to say the file is too large without reading all of it.
func readCapped(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxFileSize+1))
}

// syntaxProblem says where b stops being JSON, or "" when it is JSON.
func syntaxProblem(b []byte) string {
	var v any
	err := json.Unmarshal(b, &v)
	if err == nil {
		return ""
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := position(b, se.Offset)
		return fmt.Sprintf("%s (line %d, column %d)", strings.TrimPrefix(se.Error(), "json: "), line, col)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func position(b []byte, offset int64) (line, col int) {
	if offset > int64(len(b)) {
		offset = int64(len(b))
	}
	before := b[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, max(col, 1)
}

// parser decodes an example field by field so each problem can be named.
type parser struct{ ps refusal.Problems }

func (p *parser) add(field, format string, args ...any) {
	p.ps = append(p.ps, refusal.Problem{Field: field, Message: fmt.Sprintf(format, args...)})
}

// object decodes raw as an object whose keys are among known; unknown keys
// are named as problems. It returns nil when raw is not an object.
func (p *parser) object(raw json.RawMessage, field, what string, known ...string) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		if field == "" {
			p.add(field, "the file should hold one JSON object with a title and steps")
		} else {
			p.add(field, "should be an object")
		}
		return nil
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		p.add(join(field, k), "is not a field of %s; the fields are %s", what, strings.Join(known, ", "))
	}
	return m
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func (p *parser) title(raw json.RawMessage) string {
	var s string
	switch {
	case raw == nil:
		p.add("title", "give the example a title: what a person would see work")
	case json.Unmarshal(raw, &s) != nil:
		p.add("title", "should be a string")
	case strings.TrimSpace(s) == "":
		p.add("title", "give the example a title: what a person would see work")
	case len([]rune(s)) > MaxTitle:
		p.add("title", "at most %d characters", MaxTitle)
	}
	return s
}

func (p *parser) steps(raw json.RawMessage) []Step {
	var raws []json.RawMessage
	switch {
	case raw == nil:
		p.add("steps", "give at least one step")
		return nil
	case json.Unmarshal(raw, &raws) != nil || raws == nil:
		p.add("steps", "should be a list of steps")
		return nil
	case len(raws) == 0:
		p.add("steps", "give at least one step")
		return nil
	case len(raws) > MaxSteps:
		p.add("steps", "at most %d steps", MaxSteps)
		return nil
	}
	steps := make([]Step, len(raws))
	for i, r := range raws {
		steps[i] = p.step(r, fmt.Sprintf("steps[%d]", i))
	}
	return steps
}

func (p *parser) step(raw json.RawMessage, field string) Step {
	var s Step
	m := p.object(raw, field, "a step", "method", "path", "headers", "body", "expect", "fails")
	if m == nil {
		return s
	}
	s.Method = p.method(m["method"], field+".method")
	s.Path = p.path(m["path"], field+".path")
	s.Headers = p.headers(m["headers"], field+".headers")
	s.Body = p.value(m["body"], field+".body")
	if m["fails"] != nil && json.Unmarshal(m["fails"], &s.Fails) != nil {
		p.add(field+".fails", "should be true or false")
	}
	if m["expect"] != nil {
		s.Expect = p.expect(m["expect"], field+".expect", s)
	}
	if s.Fails && s.Expect.Status != 0 && !is4xx(s.Expect.Status) {
		p.add(field+".expect.status", "a step that fails expects a 4xx status, not %d", s.Expect.Status)
	}
	return s
}

func (p *parser) method(raw json.RawMessage, field string) string {
	var s string
	switch {
	case raw == nil:
		p.add(field, "give one of %s", strings.Join(Methods, ", "))
	case json.Unmarshal(raw, &s) != nil:
		p.add(field, "should be a string, one of %s", strings.Join(Methods, ", "))
	case !slices.Contains(Methods, s):
		p.add(field, "%q is not one of %s", s, strings.Join(Methods, ", "))
	}
	return s
}

func (p *parser) path(raw json.RawMessage, field string) string {
	var s string
	switch {
	case raw == nil:
		p.add(field, "give a path such as \"/notes\"")
	case json.Unmarshal(raw, &s) != nil:
		p.add(field, "should be a string such as \"/notes\"")
	default:
		if msg := pathProblem(s); msg != "" {
			p.add(field, "%s", msg)
		}
	}
	return s
}

// pathProblem says why s is not a path on the preview's own origin, or ""
// when it is one.
func pathProblem(s string) string {
	switch {
	case len(s) > MaxPath:
		return fmt.Sprintf("at most %d characters", MaxPath)
	case !strings.HasPrefix(s, "/"):
		return fmt.Sprintf("%q must be a path starting with /, without a scheme or host", s)
	case strings.HasPrefix(s, "//"):
		return fmt.Sprintf("%q names a host; give a path on the preview such as \"/notes\"", s)
	case strings.ContainsAny(s, "\\#"):
		return fmt.Sprintf("%q may not hold a backslash or a #fragment", s)
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Sprintf("%q is not a usable path", s)
	}
	if u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return fmt.Sprintf("%q names a host; give a path on the preview such as \"/notes\"", s)
	}
	return ""
}

func (p *parser) headers(raw json.RawMessage, field string) map[string]string {
	if raw == nil {
		return nil
	}
	var in map[string]string
	if err := json.Unmarshal(raw, &in); err != nil || in == nil {
		p.add(field, "should be an object of header names to text values")
		return nil
	}
	names := make([]string, 0, len(in))
	for k := range in {
		names = append(names, k)
	}
	slices.Sort(names)
	out := make(map[string]string, len(in))
	for _, k := range names {
		f := fmt.Sprintf("%s[%q]", field, k)
		v := in[k]
		canon := textproto.CanonicalMIMEHeaderKey(k)
		switch {
		case !isToken(k):
			p.add(f, "%q is not a header name", k)
		case slices.Contains(hostHeaders, canon):
			p.add(f, "the host sets %s itself", canon)
		case strings.ContainsAny(v, "\r\n\x00"):
			p.add(f, "a header value is one line of text")
		default:
			if _, dup := out[canon]; dup {
				p.add(f, "%s is given twice", canon)
			}
			out[canon] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r > 0x7e || r <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return true
}

// value decodes any JSON value keeping numbers exact; null is nil.
func (p *parser) value(raw json.RawMessage, field string) any {
	if raw == nil {
		return nil
	}
	v, err := decodeJSON(raw)
	if err != nil {
		p.add(field, "is not JSON: %v", err)
	}
	return v
}

// decodeJSON decodes exactly one JSON value with numbers as json.Number.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

func (p *parser) expect(raw json.RawMessage, field string, s Step) Expect {
	var e Expect
	m := p.object(raw, field, "expect", "status", "contains", "absent", "json")
	if m == nil {
		return e
	}
	if r := m["status"]; r != nil {
		if json.Unmarshal(r, &e.Status) != nil || e.Status < 100 || e.Status > 599 {
			p.add(field+".status", "give a status between 100 and 599, such as 200")
			e.Status = 0
		}
	}
	e.Contains = p.texts(m["contains"], field+".contains")
	e.Absent = p.texts(m["absent"], field+".absent")
	e.JSON = p.value(m["json"], field+".json")
	if s.Method == "HEAD" {
		for _, k := range []string{"contains", "absent", "json"} {
			if m[k] != nil {
				p.add(field+"."+k, "a HEAD answer has no body to check")
			}
		}
	}
	return e
}

func (p *parser) texts(raw json.RawMessage, field string) []string {
	if raw == nil {
		return nil
	}
	var ss []string
	if err := json.Unmarshal(raw, &ss); err != nil {
		p.add(field, "should be a list of texts")
		return nil
	}
	for i, s := range ss {
		if s == "" {
			p.add(fmt.Sprintf("%s[%d]", field, i), "give a text; an empty one always matches")
		}
	}
	if len(ss) == 0 {
		return nil
	}
	return ss
}

func is4xx(status int) bool { return status >= 400 && status <= 499 }
