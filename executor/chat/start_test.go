package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"autoapp/executor/ai/scripted"
	"autoapp/executor/chat"
	"autoapp/executor/planner"
	"autoapp/intent/request"
)

// starts stands for the executor's Start: it keeps the intents it was
// asked to run and refuses with refusal when set.
type starts struct {
	mu      sync.Mutex
	ids     []int64
	refusal error
}

func (s *starts) start(_ context.Context, intentID int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refusal != nil {
		return s.refusal
	}
	s.ids = append(s.ids, intentID)
	return nil
}

func (s *starts) started() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ids)
}

// withStart offers intent.start over s.
func withStart(s *starts) func(h *host, d *chat.Deps) {
	return func(h *host, d *chat.Deps) {
		d.Start, d.Gate = s.start, h.gate
	}
}

// plan is a first turn that submits a plan of two tasks; it returns the
// intent's id.
func (h *host) plan(t *testing.T) int64 {
	t.Helper()
	h.model.On(scripted.RunID("chat-site-1"),
		calls(call("intent.open", map[string]any{"restated": "A pomodoro timer page."})),
		calls(task("Show the work timer", nil)),
		calls(task("Add start pause and reset", func(m map[string]any) { m["blocked_by"] = []string{"0001-show-the-work-timer"} })),
		calls(call("intent.submit", map[string]any{})),
		scripted.Reply{Text: "The plan is in the Backlog for you to review."})
	turn := h.wait(t, h.send(t, "a pomodoro timer page").ID)
	list, err := h.backlog.List(context.Background(), appID)
	if err != nil || len(list) != 1 || list[0].SubmittedAt.IsZero() {
		t.Fatalf("the plan was not submitted: %+v %v (lines %q)", list, err, turn.Lines)
	}
	return list[0].ID
}

func TestGoAheadRunsTheIntentOnceThePersonApproves(t *testing.T) {
	guided := &request.Error{Code: request.EConflict, Message: "Approve the plan before Run: this request is guided."}
	for _, c := range []struct {
		name    string
		approve bool
		refusal error
		// started says Start was called; line is the call's line.
		started bool
		line    string
	}{
		{"approved", true, nil, true, "intent.start: intent %d started with 2 tasks"},
		{"denied", false, nil, false, "intent.start: refused: " + chat.DeclinedStart},
		{"refused by Start", true, guided, false, "intent.start: refused: " + guided.Message},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &starts{refusal: c.refusal}
			h := newHost(t, withStart(s))
			id := h.plan(t)
			if len(s.started()) != 0 {
				t.Fatal("planning started a run")
			}

			h.model.On(scripted.RunID("chat-site-2"), calls(call("intent.start", map[string]any{})), scripted.Reply{Text: "Done asking."})
			sent := h.send(t, "go ahead")
			h.decide(t, fmt.Sprintf("Run intent #%d now: 2 tasks, one at a time?", id), c.approve)
			turn := h.wait(t, sent.ID)

			if got := s.started(); c.started != slices.Equal(got, []int64{id}) || !c.started && len(got) > 0 {
				t.Fatalf("Start was called with %v", got)
			}
			line := c.line
			if c.started {
				line = fmt.Sprintf(c.line, id)
			}
			if !slices.Equal(turn.Lines, []string{line}) {
				t.Fatalf("lines: %q, want %q", turn.Lines, line)
			}
			reqs := h.chats()
			a := answers(t, reqs[len(reqs)-1])
			if len(a) != 1 || a[0].OK != c.started {
				t.Fatalf("the answer: %+v", a)
			}
			if c.started {
				var got planner.StartAnswer
				if err := json.Unmarshal(a[0].Result, &got); err != nil || got.Intent != id || got.Tasks != 2 || got.Next != chat.StartedNext {
					t.Fatalf("the answer's result: %s", a[0].Result)
				}
			}
		})
	}
}

func TestGoAheadWithNothingToRunAsksNothing(t *testing.T) {
	s := &starts{}
	h := newHost(t, withStart(s))
	h.model.On(scripted.RunID("chat-site-1"),
		calls(call("intent.start", map[string]any{})),
		calls(call("intent.start", map[string]any{"intent": 7})),
		scripted.Reply{Text: "There is nothing to run yet."})
	turn := h.wait(t, h.send(t, "go ahead").ID)

	want := []string{
		"intent.start: refused: There is no submitted plan or stopped intent of site to run.",
		"intent.start: refused: intent: there is no intent #7 of site",
	}
	if !slices.Equal(turn.Lines, want) {
		t.Fatalf("lines:\n%q\nwant\n%q", turn.Lines, want)
	}
	if h.gate.Waiting() || len(s.started()) != 0 {
		t.Fatal("a start with nothing to run was asked or started")
	}
	for i, r := range h.chats()[1:] {
		if a := answers(t, r); len(a) != 1 || a[0].OK || len(a[0].Problems) != 1 {
			t.Fatalf("answer %d: %+v", i, a)
		}
	}
}

func TestGoAheadWhileThePlanIsBeingWrittenAsksNothing(t *testing.T) {
	s := &starts{}
	h := newHost(t, withStart(s))
	h.model.On(scripted.RunID("chat-site-1"),
		calls(call("intent.open", map[string]any{"restated": "A timer page."})),
		calls(call("intent.start", map[string]any{})),
		scripted.Reply{Text: "The plan is not ready."})
	turn := h.wait(t, h.send(t, "a timer page, and go ahead").ID)
	list, _ := h.backlog.List(context.Background(), appID)
	if len(list) != 1 {
		t.Fatalf("intents: %+v", list)
	}
	want := fmt.Sprintf("intent.start: refused: The plan of intent #%d is still being written: submit it with intent.submit first.", list[0].ID)
	if turn.Lines[len(turn.Lines)-1] != want || h.gate.Waiting() || len(s.started()) != 0 {
		t.Fatalf("lines: %q", turn.Lines)
	}
}
