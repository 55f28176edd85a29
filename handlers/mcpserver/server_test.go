package mcpserver_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"autoapp/handlers/mcpserver"
	"autoapp/intent"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
)

// server is the services as the tools meet them: it records what reached
// it, and refuses or fails as told.
type server struct {
	mcpserver.Deps
	said    []request.Say
	saidVia []intent.Via
	answer  error
}

func (s *server) Say(ctx context.Context, appID string, w request.Say) (request.State, error) {
	s.said, s.saidVia = append(s.said, w), append(s.saidVia, intent.ViaOf(ctx))
	return request.State{ID: 3, AppID: appID, Revision: 1, Mode: w.Mode}, nil
}

func (s *server) Start(context.Context, int64) error { return nil }

func (s *server) AnswerTask(context.Context, int64, string) error { return s.answer }

// session is a client connected to the tools over d, in memory.
func session(t *testing.T, s *server, o mcpserver.Options) *mcp.ClientSession {
	t.Helper()
	s.Deps.Server, s.Deps.Answers = s, s
	s.Deps.Failures = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := mcpserver.New(s.Deps, o)
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestAnInputTheSchemaRefusesIsOneSentenceAndReachesNoService walks the
// ways an input can be wrong: each is a tool result with IsError and a
// sentence naming the field, and nothing reaches the services.
func TestAnInputTheSchemaRefusesIsOneSentenceAndReachesNoService(t *testing.T) {
	s := &server{}
	cs := session(t, s, mcpserver.Options{})
	cases := []struct {
		name string
		tool string
		args any
		want string
	}{
		{"a field missing", "send_request", map[string]any{"app": "notes", "op": "o"},
			"text is missing: what you ask of the engineer, as you would type it on the Request page."},
		{"several fields missing", "queue_intervention", map[string]any{},
			"intent is missing: the intent's number, as list_intents shows it. kind is missing: feedback (the engineer revises the plan with it) or pause (the run stops at its next safe boundary). op is missing:"},
		{"a mode that is not one", "send_request", map[string]any{"app": "notes", "text": "x", "op": "o", "mode": "fast"},
			`mode is one of autonomous or guided, not "fast".`},
		{"an empty text", "send_request", map[string]any{"app": "notes", "text": "", "op": "o"}, "text is empty: what you ask"},
		{"an id of 0", "show_intent", map[string]any{"intent": 0}, "intent is a number from 1, not 0: the intent's number"},
		{"a negative id", "answer_question", map[string]any{"task": -4, "answer": "yes"}, "task is a number from 1, not -4"},
		{"a fraction", "show_intent", map[string]any{"intent": 1.5}, "intent is a whole number, not the number 1.5."},
		{"text for a number", "show_intent", map[string]any{"intent": "7"}, `intent is a whole number, not the text "7".`},
		{"null for a text", "send_request", map[string]any{"app": nil, "text": "x", "op": "o"}, "app is text, not null."},
		{"a field it does not take", "show_intent", map[string]any{"intent": 1, "verbose": true},
			`show_intent takes no field "verbose"; its fields are intent.`},
		{"a limit too large", "read_run_log", map[string]any{"run": "r", "limit": 5000}, "limit is at most 1000, not 5000."},
		{"not an object", "show_intent", []any{1}, "The input of show_intent is an object of its fields (intent)."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			if err != nil {
				t.Fatalf("a protocol error: %v", err)
			}
			if got := text(res); !res.IsError || !strings.HasPrefix(got, c.want) || strings.Contains(got, "\n") {
				t.Fatalf("answered %q (IsError %v), want a refusal starting %q", got, res.IsError, c.want)
			}
		})
	}
	if len(s.said) != 0 {
		t.Fatalf("a refused input reached the server: %+v", s.said)
	}
}

// TestAServiceRefusalIsItsSentenceAndAFailureIsNotItsText: the tools
// answer a refusal with the service's sentence, a failure with a sentence
// that does not carry its text; a good input reaches the service as the
// owner's act from MCP.
func TestAServiceRefusalIsItsSentenceAndAFailureIsNotItsText(t *testing.T) {
	s := &server{}
	cs := session(t, s, mcpserver.Options{})
	ctx := context.Background()
	call := func(tool string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	s.answer = refusal.Errorf(refusal.Conflict, "0001-add-tags asked no question, so it takes no answer; it is in-queue.")
	if res := call("answer_question", map[string]any{"task": 1, "answer": "yes"}); !res.IsError || text(res) != s.answer.Error() {
		t.Errorf("a refusal answered %q", text(res))
	}
	s.answer = errors.New("database is locked (5) at /secret/path")
	if res := call("answer_question", map[string]any{"task": 1, "answer": "yes"}); !res.IsError || strings.Contains(text(res), "secret") || !strings.Contains(text(res), "log") {
		t.Errorf("a failure answered %q", text(res))
	}
	res := call("send_request", map[string]any{"app": "notes", "text": "Add tags", "mode": "guided", "op": "o-1"})
	if res.IsError || !strings.Contains(text(res), `"request":3`) {
		t.Fatalf("send_request answered %q", text(res))
	}
	if len(s.said) != 1 || s.said[0].Mode != "guided" || s.said[0].Op != "o-1" || s.said[0].Answer || s.saidVia[0] != intent.ViaMCP {
		t.Errorf("the server heard %+v via %v", s.said, s.saidVia)
	}
	// An answer to the engineer's question is an answer.
	call("send_request", map[string]any{"app": "notes", "text": "Lowercase.", "op": "o-2", "request": 3, "seen": 4, "question": 2})
	if w := s.said[1]; !w.Answer || w.Question != 2 || w.ID != 3 || w.Seen != 4 {
		t.Errorf("the answer reached the server as %+v", w)
	}
}
