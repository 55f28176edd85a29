package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"autoapp/executor/ai/scripted"
	"autoapp/executor/chat"
	"autoapp/executor/planner"
	"autoapp/intent"
	"autoapp/intent/request"
)

// runningIntent is the intent the launcher's executor runs, or 0.
func (h *host) runningIntent() int64 {
	if r := h.runs.Running(); len(r) > 0 {
		return r[0].IntentID
	}
	return 0
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
	const guided = "Approve the plan before Run: this request is guided."
	for _, c := range []struct {
		name    string
		approve bool
		// guided links the plan to a guided request not approved: the
		// executor's Start refuses it.
		guided bool
		// started says the run started; line is the call's line.
		started bool
		line    string
	}{
		{"approved", true, false, true, "intent.start: intent %d started with 2 tasks"},
		{"denied", false, false, false, "intent.start: refused: " + chat.DeclinedStart},
		{"refused by Start", true, true, false, "intent.start: refused: " + guided},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			h := newHost(t)
			id := h.plan(t)
			if h.runningIntent() != 0 {
				t.Fatal("planning started a run")
			}
			if c.guided {
				st, err := h.launcher.Requests.Create(ctx, appID, "a pomodoro timer page", request.ModeGuided, "op-request")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := h.launcher.Requests.Link(ctx, st.ID, id); err != nil {
					t.Fatal(err)
				}
			}
			// A run that starts asks the model for its first task; the
			// model holds that turn until the test ends.
			builder := scripted.NewGate(t)
			h.model.On(scripted.RunID(fmt.Sprintf("intent-%d-0001-show-the-work-timer-a1", id)), scripted.Reply{Before: builder.Hold, Fault: scripted.Status500})

			h.model.On(scripted.RunID("chat-site-2"), calls(call("intent.start", map[string]any{})), scripted.Reply{Text: "Done asking."})
			sent := h.send(t, "go ahead")
			h.decide(t, fmt.Sprintf("Run intent #%d now: 2 tasks, one at a time?", id), c.approve)
			turn := h.wait(t, sent.ID)

			if c.started {
				builder.Wait(t)
			}
			if got := h.runningIntent(); c.started != (got == id) || !c.started && got != 0 {
				t.Fatalf("the executor runs intent %d", got)
			}
			if d, err := h.backlog.Get(ctx, id); err != nil || c.started != (d.Status == intent.IntentRunning) {
				t.Fatalf("the intent is %s (%v)", d.Status, err)
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
	h := newHost(t)
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
	if h.gate.Waiting() || h.runningIntent() != 0 {
		t.Fatal("a start with nothing to run was asked or started")
	}
	for i, r := range h.chats()[1:] {
		if a := answers(t, r); len(a) != 1 || a[0].OK || len(a[0].Problems) != 1 {
			t.Fatalf("answer %d: %+v", i, a)
		}
	}
}

func TestGoAheadWhileThePlanIsBeingWrittenAsksNothing(t *testing.T) {
	h := newHost(t)
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
	if turn.Lines[len(turn.Lines)-1] != want || h.gate.Waiting() || h.runningIntent() != 0 {
		t.Fatalf("lines: %q", turn.Lines)
	}
}
