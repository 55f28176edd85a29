package ai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/ai/scripted"
	"autoapp/intent/refusal"
	"autoapp/intent/timetest"
)

const testKey = "sk-test-0123456789"

// newClock is a clock the test moves by hand, standing at 1 March 2026.
func newClock() *timetest.Clock {
	return timetest.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
}

// syncBuffer is a log sink that the race detector accepts.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func endpoint(s *scripted.Server) ai.Endpoint {
	return ai.Endpoint{Provider: "scripted", BaseURL: s.URL(), APIKey: testKey, Model: "model-1"}
}

// turn is a turn against s with the test tools, the clock and a log.
func turn(s *scripted.Server, c *timetest.Clock, log *syncBuffer, tools ...ai.Tool) ai.Turn {
	return ai.Turn{
		Endpoint:     endpoint(s),
		Kind:         ai.KindBuilder,
		RunID:        "run-1",
		Instructions: "You build the task.",
		Message:      "Add a footer.",
		Tools:        tools,
		Now:          c.Now,
		Log:          slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
}

var readSchema = json.RawMessage(`{
	"type": "object",
	"properties": {"path": {"type": "string", "minLength": 1, "description": "a path in the workspace"}},
	"required": ["path"],
	"additionalProperties": false
}`)

// readTool answers the text of any path; run, when set, runs first.
func readTool(run func(ctx context.Context)) ai.Tool {
	return ai.Tool{
		Name:        "source.read",
		Description: "Read a file of the workspace.",
		Schema:      readSchema,
		Example:     json.RawMessage(`{"path":"main.go"}`),
		Handler: func(ctx context.Context, input json.RawMessage) (any, error) {
			if run != nil {
				run(ctx)
			}
			var in struct{ Path string }
			if err := json.Unmarshal(input, &in); err != nil {
				return nil, err
			}
			return map[string]string{"path": in.Path, "text": "package main"}, nil
		},
	}
}

var editSchema = json.RawMessage(`{
	"type": "object",
	"properties": {
		"path": {"type": "string", "minLength": 1},
		"find": {"type": "string", "minLength": 1},
		"replace": {"type": "string"}
	},
	"required": ["path", "find", "replace"],
	"additionalProperties": false
}`)

// editTool refuses a find of "missing" as matching nothing, and lands
// every other edit.
func editTool() ai.Tool {
	return ai.Tool{
		Name:        "source.edit",
		Description: "Replace text in a file.",
		Schema:      editSchema,
		Example:     json.RawMessage(`{"path":"main.go","find":"old","replace":"new"}`),
		Edits:       true,
		Handler: func(ctx context.Context, input json.RawMessage) (any, error) {
			var in struct{ Path, Find, Replace string }
			if err := json.Unmarshal(input, &in); err != nil {
				return nil, err
			}
			if in.Find == "missing" {
				return nil, ai.Refuse(refusal.Problem{Field: "find", Message: "matches nothing in " + in.Path})
			}
			return map[string]any{"path": in.Path, "changed": 1}, nil
		},
	}
}

var askSchema = json.RawMessage(`{
	"type": "object",
	"properties": {"question": {"type": "string", "minLength": 1, "maxLength": 500}},
	"required": ["question"],
	"additionalProperties": false
}`)

func askTool() ai.Tool {
	return ai.Tool{
		Name:        "intent.ask",
		Description: "Ask the person one question.",
		Schema:      askSchema,
		Example:     json.RawMessage(`{"question":"Which colour should the footer be?"}`),
		Handler: func(ctx context.Context, input json.RawMessage) (any, error) {
			var in struct{ Question string }
			if err := json.Unmarshal(input, &in); err != nil {
				return nil, err
			}
			return ai.Question{Text: in.Question}, nil
		},
	}
}

// answer decodes what the model read back from a tool call.
type answer struct {
	OK       bool              `json:"ok"`
	Result   json.RawMessage   `json:"result"`
	Problems []refusal.Problem `json:"problems"`
	Error    string            `json:"error"`
	Hint     string            `json:"hint"`
	Example  json.RawMessage   `json:"example"`
}

func decodeAnswer(t *testing.T, raw string) answer {
	t.Helper()
	var a answer
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		t.Fatalf("a tool answer is not JSON: %v: %s", err, raw)
	}
	return a
}

// toolAnswers are the tool messages of a request, in order.
func toolAnswers(r scripted.Request) []scripted.Message {
	var out []scripted.Message
	for _, m := range r.Messages {
		if m.Role == "tool" {
			out = append(out, m)
		}
	}
	return out
}

func call(name, args string) scripted.Reply {
	return scripted.Reply{ToolCalls: []scripted.Call{{Name: name, Args: args}}, Usage: scripted.Usage{Input: 100, Output: 10}}
}

func text(s string) scripted.Reply {
	return scripted.Reply{Text: s, Usage: scripted.Usage{Input: 100, Output: 10}}
}
