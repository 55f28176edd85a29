// Package scripted is a model for tests: an OpenAI-compatible server on
// httptest whose answers are written by the test. A test says which request
// gets which replies (tool calls, a text, usage numbers, or a fault) and
// afterwards reads every request the server got, so it can assert what a
// turn was sent.
//
// It is test support only: nothing in the server's own code imports it.
package scripted

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// RunHeader is the header in which the AI layer names the run a request
// belongs to. A Match by run id looks here as well as in the messages.
const RunHeader = "X-Autoapp-Run"

// RawDetail appears in the body of every fault this server answers, so a
// test can assert that the provider's raw text reached neither the person
// nor the model.
const RawDetail = "scripted-raw-detail-5d1c"

// Fault is a failure the server answers with instead of a completion.
type Fault int

// The faults a Reply can carry.
const (
	// NoFault answers the reply's tool calls and text.
	NoFault Fault = iota
	// Status500 answers HTTP 500 with an error body.
	Status500
	// Status401 answers HTTP 401, as for a wrong key.
	Status401
	// Status403 answers HTTP 403, as for a key without access.
	Status403
	// Status404Model answers HTTP 404, as for a model the provider does
	// not offer.
	Status404Model
	// Status429 answers HTTP 429, as for a rate limit.
	Status429
	// Timeout answers nothing: the request hangs until the client gives up.
	Timeout
	// Malformed answers HTTP 200 with a body that is not valid JSON.
	Malformed
	// ConnectionDrop closes the connection without answering.
	ConnectionDrop
	// Status503 answers HTTP 503, as an overloaded server does.
	Status503
	// ContextExceeded answers HTTP 400 saying the prompt is longer than
	// the model's context window of ContextTokens.
	ContextExceeded
)

// Call is a tool call a reply makes, or one recorded in a request's
// messages. Name is the tool's name; a dot in it is sent as an underscore,
// as on the wire. Args is the input as JSON text.
type Call struct {
	ID   string
	Name string
	Args string
}

// Usage is the token usage a reply reports. A zero Usage is not reported:
// the completion then has no usage field, like a provider that counts
// nothing.
type Usage struct {
	Input  int
	Output int
}

// Reply is one scripted answer to one chat completion request.
type Reply struct {
	ToolCalls []Call
	Text      string
	Usage     Usage
	Fault     Fault
	// Before runs as the request arrives, before anything is answered.
	// Tests use it to move an injected clock, standing for a slow model.
	Before func()

	// A request that asks to stream is answered as real servers do: the
	// role, then the text a word at a time and each tool call's arguments
	// a few characters at a time, the finish reason, the usage (when
	// asked for and given), and [DONE].
	//
	// FirstToken is how long the model reads before its first piece;
	// Every is the pause between pieces.
	FirstToken, Every time.Duration
	// DropAfter closes the connection after that many pieces (0: never).
	DropAfter int
	// TextPieces, when above 0, cuts the text into pieces of that many
	// bytes rather than word by word: a tag or a JSON value then falls
	// across pieces, as a tokenizer cuts it.
	TextPieces int
	// Reasoning is sent as reasoning_content before the answer, as
	// DeepSeek's and vLLM's reasoning models do.
	Reasoning string
	// RetryAfter is the Retry-After header of a 429 or 503.
	RetryAfter string
	// ContextTokens is the window a ContextExceeded fault names.
	ContextTokens int
}

// Match selects the requests a script answers. The zero Match selects
// nothing; use Any, Contains or RunID.
type Match struct {
	any      bool
	text     string
	runID    string
	mentions string
}

// Any matches every chat completion request.
func Any() Match { return Match{any: true} }

// Contains matches a request whose last user message, or any system
// message, contains text.
func Contains(text string) Match { return Match{text: text} }

// RunID matches a request that names the run id in the RunHeader header or
// anywhere in its messages.
func RunID(id string) Match { return Match{runID: id} }

// Mentions matches a request any of whose messages contains text: the
// documents it was given among them.
func Mentions(text string) Match { return Match{mentions: text} }

func (m Match) String() string {
	switch {
	case m.any:
		return "any request"
	case m.text != "":
		return fmt.Sprintf("a message containing %q", m.text)
	case m.runID != "":
		return fmt.Sprintf("run %q", m.runID)
	case m.mentions != "":
		return fmt.Sprintf("a request mentioning %q", m.mentions)
	}
	return "nothing"
}

func (m Match) matches(r Request) bool {
	switch {
	case m.any:
		return true
	case m.text != "":
		if strings.Contains(r.LastUser(), m.text) {
			return true
		}
		for _, msg := range r.Messages {
			if msg.Role == "system" && strings.Contains(msg.Content, m.text) {
				return true
			}
		}
	case m.runID != "":
		if r.Header.Get(RunHeader) == m.runID {
			return true
		}
		for _, msg := range r.Messages {
			if strings.Contains(msg.Content, m.runID) {
				return true
			}
		}
	case m.mentions != "":
		for _, msg := range r.Messages {
			if strings.Contains(msg.Content, m.mentions) {
				return true
			}
		}
	}
	return false
}

// Message is one message of a recorded request.
type Message struct {
	Role       string
	Content    string
	ToolCallID string
	ToolCalls  []Call
}

// Tool is a tool a recorded request offered the model.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Request is one request the server got, decoded.
type Request struct {
	Method string
	Path   string
	Header http.Header
	// Body is the request body as sent.
	Body           []byte
	Model          string
	Messages       []Message
	Tools          []Tool
	ResponseFormat json.RawMessage
	// Stream says the request asked for a streamed answer, IncludeUsage
	// that it asked for the usage in the stream.
	Stream, IncludeUsage bool
}

// Authorization is the request's Authorization header.
func (r Request) Authorization() string { return r.Header.Get("Authorization") }

// LastUser is the content of the request's last user message.
func (r Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// ToolNames are the names of the tools the request offered, as on the wire.
func (r Request) ToolNames() []string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Name
	}
	return names
}

type script struct {
	match   Match
	replies []Reply
	next    int
}

// Server is the scripted model. It is safe for concurrent use.
type Server struct {
	t    testing.TB
	srv  *httptest.Server
	quit chan struct{}

	mu     sync.Mutex
	models []string
	// listed and served are context windows: one the model list names
	// (context_length, as OpenRouter's), one GET /props names (n_ctx, as
	// llama.cpp's server); 0 names none.
	listed, served int
	scripts        []*script
	// always answer, each with its one reply as often as asked, what no
	// script answers.
	always   []*script
	requests []Request
	calls    int
	// sent counts the pieces each streamed answer wrote, by request
	// number (from 1), and finished the answers written to their end.
	sent     map[int]int
	finished map[int]bool

	// busy is how long chat requests took here, from their arrival to
	// their answer's end: the model's share of a run's time.
	busy atomic.Int64
}

// New starts a scripted server that is closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, quit: make(chan struct{}), sent: map[int]int{}, finished: map[int]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.listModels)
	mux.HandleFunc("GET /props", s.props)
	mux.HandleFunc("/", s.unknown)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		close(s.quit) // ends the requests a Timeout holds
		s.srv.Close()
	})
	return s
}

// URL is the server's base URL, without /v1.
func (s *Server) URL() string { return s.srv.URL }

// Models sets the models GET /v1/models lists.
func (s *Server) Models(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = slices.Clone(ids)
}

// ContextWindows sets the context window the model list names for each
// model (listed) and the one GET /props answers (served); 0 names none,
// and /props then answers 404 as servers other than llama.cpp's do.
func (s *Server) ContextWindows(listed, served int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listed, s.served = listed, served
}

func (s *Server) props(w http.ResponseWriter, r *http.Request) {
	s.record(r, nil)
	s.mu.Lock()
	n := s.served
	s.mu.Unlock()
	if n == 0 {
		writeError(w, http.StatusNotFound, "File Not Found", "not_found")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"default_generation_settings": map[string]any{"n_ctx": n}})
}

// On adds a script: the requests m selects get the replies in order, one
// each. Scripts are tried in the order they were added; one whose replies
// are used up lets the request fall through to the next.
func (s *Server) On(m Match, replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts = append(s.scripts, &script{match: m, replies: replies})
}

// Always answers every request m selects that no script answers with
// reply, as often as it comes: a question the program asks on its own
// (the distiller's) that a test does not care about.
func (s *Server) Always(m Match, reply Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.always = append(s.always, &script{match: m, replies: []Reply{reply}})
}

// Requests are the requests the server got so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Count is how many requests the server got so far, of any kind.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func (s *Server) record(r *http.Request, body []byte) Request {
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	if len(body) > 0 {
		decodeChat(body, &req)
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	return req
}

func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	s.record(r, nil)
	s.mu.Lock()
	data := make([]map[string]any, len(s.models))
	for i, id := range s.models {
		data[i] = map[string]any{"id": id, "object": "model", "created": 0, "owned_by": "scripted"}
		if s.listed > 0 {
			data[i]["context_length"] = s.listed
		}
		if s.served > 0 {
			data[i]["owned_by"] = "llamacpp" // as llama.cpp's server names itself
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (s *Server) unknown(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.record(r, body)
	s.t.Errorf("scripted: no route for %s %s", r.Method, r.URL.Path)
	writeError(w, http.StatusNotFound, "scripted: no route for "+r.Method+" "+r.URL.Path, "not_found")
}

// Busy is how long the server spent answering chat requests, all told,
// from each request's arrival to its answer's last byte: what a run's
// time owes to the model rather than to the host.
func (s *Server) Busy() time.Duration { return time.Duration(s.busy.Load()) }

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	began := time.Now()
	defer func() { s.busy.Add(int64(time.Since(began))) }()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req := s.record(r, body)

	s.mu.Lock()
	var reply *Reply
	for _, sc := range s.scripts {
		if sc.next < len(sc.replies) && sc.match.matches(req) {
			reply = &sc.replies[sc.next]
			sc.next++
			break
		}
	}
	for _, sc := range s.always {
		if reply == nil && sc.match.matches(req) {
			reply = &sc.replies[0]
		}
	}
	s.calls++
	n := s.calls
	s.mu.Unlock()

	if reply == nil {
		s.t.Errorf("scripted: no script answers request %d (last user message %q)", n, clip(req.LastUser(), 200))
		writeError(w, http.StatusInternalServerError,
			fmt.Sprintf("scripted: no script answers this request (last user message %q)", clip(req.LastUser(), 200)), "unscripted")
		return
	}
	if reply.Before != nil {
		reply.Before()
	}

	switch reply.Fault {
	case Status500:
		writeError(w, http.StatusInternalServerError, "internal failure "+RawDetail, "server_error")
		return
	case Status401:
		writeError(w, http.StatusUnauthorized, "Incorrect API key provided "+RawDetail, "invalid_api_key")
		return
	case Status403:
		writeError(w, http.StatusForbidden, "key lacks access "+RawDetail, "forbidden")
		return
	case Status404Model:
		writeError(w, http.StatusNotFound, fmt.Sprintf("model %q not found %s", req.Model, RawDetail), "model_not_found")
		return
	case Status429:
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		writeError(w, http.StatusTooManyRequests, "Rate limit reached "+RawDetail, "rate_limit_exceeded")
		return
	case Status503:
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		writeError(w, http.StatusServiceUnavailable, "The server is overloaded "+RawDetail, "overloaded")
		return
	case ContextExceeded:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. %s",
			reply.ContextTokens, reply.ContextTokens+1000, RawDetail), "context_length_exceeded")
		return
	case Timeout:
		select {
		case <-r.Context().Done():
		case <-s.quit:
		}
		return
	case Malformed:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"id": "chatcmpl-broken", "choices": [ `+RawDetail)
		return
	case ConnectionDrop:
		hj, ok := w.(http.Hijacker)
		if !ok {
			s.t.Errorf("scripted: the connection cannot be hijacked")
			return
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return
	}
	if req.Stream {
		s.stream(w, r, n, req, *reply)
		return
	}
	writeJSON(w, http.StatusOK, completion(n, req.Model, *reply))
}

// Streamed says how many pieces the answer to the n-th chat request (from
// 1) streamed, and whether it was written to its end: an answer the client
// cut off is not.
func (s *Server) Streamed(n int) (pieces int, finished bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent[n], s.finished[n]
}

// stream answers a streaming request with server-sent events.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, n int, req Request, reply Reply) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		s.t.Errorf("scripted: the answer cannot be streamed")
		return
	}
	pause := func(d time.Duration) bool {
		if d <= 0 {
			return true
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-r.Context().Done():
		case <-s.quit:
		}
		return false
	}
	id := fmt.Sprintf("chatcmpl-%d", n)
	event := func(choices []map[string]any, usage map[string]any) {
		chunk := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 0, "model": req.Model, "choices": choices}
		if usage != nil {
			chunk["usage"] = usage
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		flusher.Flush()
	}
	delta := func(d map[string]any) []map[string]any {
		return []map[string]any{{"index": 0, "delta": d, "finish_reason": nil}}
	}

	var pieces []map[string]any
	for _, word := range splitKeep(reply.Reasoning, " ") {
		pieces = append(pieces, map[string]any{"reasoning_content": word})
	}
	words := splitKeep(reply.Text, " ")
	if reply.TextPieces > 0 {
		words = chunks(reply.Text, reply.TextPieces)
	}
	for _, word := range words {
		pieces = append(pieces, map[string]any{"content": word})
	}
	for i, c := range reply.ToolCalls {
		callID := c.ID
		if callID == "" {
			callID = fmt.Sprintf("call_%d_%d", n, i)
		}
		pieces = append(pieces, map[string]any{"tool_calls": []map[string]any{{"index": i, "id": callID, "type": "function",
			"function": map[string]any{"name": strings.ReplaceAll(c.Name, ".", "_"), "arguments": ""}}}})
		for _, part := range chunks(c.Args, 12) {
			pieces = append(pieces, map[string]any{"tool_calls": []map[string]any{{"index": i, "function": map[string]any{"arguments": part}}}})
		}
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	if !pause(reply.FirstToken) {
		return
	}
	event(delta(map[string]any{"role": "assistant", "content": ""}), nil)
	for i, p := range pieces {
		if reply.DropAfter > 0 && i == reply.DropAfter {
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					_ = conn.Close()
				}
			}
			return
		}
		if i > 0 && !pause(reply.Every) {
			return
		}
		event(delta(p), nil)
		s.mu.Lock()
		s.sent[n]++
		s.mu.Unlock()
	}
	finish := "stop"
	if len(reply.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	event([]map[string]any{{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}, nil)
	if reply.Usage != (Usage{}) && req.IncludeUsage {
		event([]map[string]any{}, map[string]any{"prompt_tokens": reply.Usage.Input, "completion_tokens": reply.Usage.Output,
			"total_tokens": reply.Usage.Input + reply.Usage.Output})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	flusher.Flush()
	s.mu.Lock()
	s.finished[n] = true
	s.mu.Unlock()
}

// splitKeep splits s after each sep, keeping it, so the pieces join back.
func splitKeep(s, sep string) []string {
	if s == "" {
		return nil
	}
	return strings.SplitAfter(s, sep)
}

// chunks cuts s into pieces of at most n bytes.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func completion(n int, model string, reply Reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": nil}
	if reply.Text != "" {
		msg["content"] = reply.Text
	}
	finish := "stop"
	if len(reply.ToolCalls) > 0 {
		finish = "tool_calls"
		calls := make([]map[string]any, len(reply.ToolCalls))
		for i, c := range reply.ToolCalls {
			id := c.ID
			if id == "" {
				id = fmt.Sprintf("call_%d_%d", n, i)
			}
			calls[i] = map[string]any{
				"id":   id,
				"type": "function",
				"function": map[string]any{
					"name":      strings.ReplaceAll(c.Name, ".", "_"),
					"arguments": c.Args,
				},
			}
		}
		msg["tool_calls"] = calls
	}
	out := map[string]any{
		"id":      fmt.Sprintf("chatcmpl-%d", n),
		"object":  "chat.completion",
		"created": 0,
		"model":   model,
		"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
	}
	if reply.Usage != (Usage{}) {
		out["usage"] = map[string]any{
			"prompt_tokens":     reply.Usage.Input,
			"completion_tokens": reply.Usage.Output,
			"total_tokens":      reply.Usage.Input + reply.Usage.Output,
		}
	}
	return out
}

// decodeChat fills req from a chat completion request body. What does not
// decode is left empty; the body itself is kept.
func decodeChat(body []byte, req *Request) {
	var in struct {
		Model    string `json:"model"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
		ResponseFormat json.RawMessage `json:"response_format"`
		Stream         bool            `json:"stream"`
		StreamOptions  struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if json.Unmarshal(body, &in) != nil {
		return
	}
	req.Model = in.Model
	req.Stream, req.IncludeUsage = in.Stream, in.StreamOptions.IncludeUsage
	req.ResponseFormat = in.ResponseFormat
	for _, m := range in.Messages {
		msg := Message{Role: m.Role, Content: contentText(m.Content), ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, Call{ID: c.ID, Name: c.Function.Name, Args: c.Function.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
}

// contentText reads a message's content, a string or an array of text parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		texts := make([]string, len(parts))
		for i, p := range parts {
			texts[i] = p.Text
		}
		return strings.Join(texts, "")
	}
	return ""
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, message, code string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{
		"message": message, "type": "scripted_error", "code": code, "param": nil,
	}})
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// Gate holds a scripted reply until the test lets it go: Hold is the
// reply's Before; Wait returns once the held request has arrived. It is
// opened when the test ends at the latest, so no request is left hanging:
// make it after the server, so that it opens before the server closes.
type Gate struct {
	entered, release chan struct{}
	in, out          sync.Once
}

// NewGate is a closed gate.
func NewGate(t testing.TB) *Gate {
	g := &Gate{entered: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(g.Open)
	return g
}

// Hold blocks the request until Open.
func (g *Gate) Hold() {
	g.in.Do(func() { close(g.entered) })
	<-g.release
}

// Open lets every held request go, now and later.
func (g *Gate) Open() { g.out.Do(func() { close(g.release) }) }

// Wait waits until a held request has arrived, for a minute at most.
func (g *Gate) Wait(t testing.TB) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(60 * time.Second):
		t.Fatal("the held request never reached the scripted model")
	}
}
