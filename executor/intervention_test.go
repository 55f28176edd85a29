package executor_test

import (
	"context"
	"testing"

	"autoapp/executor/ai/scripted"
	"autoapp/intent"
	"autoapp/migrations"
)

// submitDuring is a scripted reply's Before: it sends an intervention while
// the model call is in flight, and records what the run looked like then.
type submitDuring struct {
	h      *host
	t      *testing.T
	id     int64
	kind   intent.InterventionKind
	text   string
	status intent.IntentStatus
	err    error
}

func (s *submitDuring) send() {
	ctx := context.Background()
	_, _, s.err = s.h.launcher.Interventions.SubmitIntervention(ctx, s.id, "during-the-turn", s.kind, s.text)
	d, _ := s.h.backlog.Get(ctx, s.id)
	s.status = d.Status
}

// pendingWhile records whether the receipt still waited during a later
// call of the same turn.
func pendingWhile(h *host, id int64, pending *int) func() {
	return func() {
		p, _, _ := h.launcher.Interventions.Interventions(context.Background(), id)
		*pending = len(p)
	}
}

func TestFeedbackSentMidTurnIsAppliedOnlyAfterTheTurnsVerdict(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading(), about())
	sub := &submitDuring{h: h, t: t, id: id, kind: intent.InterventionFeedback, text: "Greet readers by name."}
	laterPending := -1
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{Before: sub.send, ToolCalls: []scripted.Call{addLine("Hello notes")}},
		scripted.Reply{Before: pendingWhile(h, id, &laterPending), ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	d := h.run(t, id)
	if sub.err != nil {
		t.Fatal(sub.err)
	}
	if sub.status != intent.IntentRunning || laterPending != 1 {
		t.Fatalf("during the turn the intent was %s with %d pending; want running with the receipt waiting", sub.status, laterPending)
	}
	wantStopped(t, d, intent.StoppedForFeedback)
	// The turn ran to its end and was judged: the feedback did not cut it.
	heading := h.task(t, id, headingSlug)
	wantTask(t, heading, intent.TaskCompleted, 1)
	wantUntouched(t, h, h.task(t, id, aboutSlug))
	pending, applied, err := h.launcher.Interventions.Interventions(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 0 || len(applied) != 1 || applied[0].Text != "Greet readers by name." {
		t.Fatalf("pending %+v, applied %+v", pending, applied)
	}
	if applied[0].AppliedAt.Before(heading.Events[len(heading.Events)-1].At) {
		t.Fatalf("applied at %s, before the verdict at %s", applied[0].AppliedAt, heading.Events[len(heading.Events)-1].At)
	}
}

func TestAPauseStopsAfterTheTaskInHandAndRunFinishes(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading(), about())
	sub := &submitDuring{h: h, t: t, id: id, kind: intent.InterventionPause}
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
		scripted.Reply{Before: sub.send, ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{addLine("Hello notes")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	d := h.run(t, id)
	if sub.err != nil {
		t.Fatal(sub.err)
	}
	wantStopped(t, d, intent.PausedByPerson)
	wantTask(t, h.task(t, id, headingSlug), intent.TaskCompleted, 1)
	wantUntouched(t, h, h.task(t, id, aboutSlug))

	h.model.On(scripted.RunID(runID(id, aboutSlug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{
			change("acceptance/0002-add-an-about-page-c1.json", example("The about page says About notes", "/about.html", "About notes")),
			change("site/about.html", "<!DOCTYPE html><title>About</title><h1>About notes</h1>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	if d := h.run(t, id); d.Status != intent.IntentDone {
		t.Fatalf("Run after the pause: %s (%s)", d.Status, d.StopReason)
	}
}

// TestAPauseDuringTheLastTasksTurnStillFinishesTheIntent: every task
// completed, so the boundary finishes the intent (done, delivered) and the
// pause is kept as applied to a finished run; feedback sent so is still
// given to the next chat turn.
func TestAPauseDuringTheLastTasksTurnStillFinishesTheIntent(t *testing.T) {
	for _, kind := range []intent.InterventionKind{intent.InterventionPause, intent.InterventionFeedback} {
		t.Run(string(kind), func(t *testing.T) {
			h := newHost(t)
			id := h.plan(t, heading())
			sub := &submitDuring{h: h, t: t, id: id, kind: kind}
			if kind == intent.InterventionFeedback {
				sub.text = "Greet readers by name next."
			}
			h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
				scripted.Reply{Before: sub.send, ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes"))}},
				scripted.Reply{ToolCalls: []scripted.Call{addLine("Hello notes")}},
				scripted.Reply{ToolCalls: []scripted.Call{cycle}},
				scripted.Reply{Text: "Done."})
			d := h.run(t, id)
			if sub.err != nil {
				t.Fatal(sub.err)
			}
			if d.Status != intent.IntentDone {
				t.Fatalf("the intent is %s (%q), want done: every task completed", d.Status, d.StopReason)
			}
			wantTask(t, h.task(t, id, headingSlug), intent.TaskCompleted, 1)
			pending, applied, err := h.launcher.Interventions.Interventions(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if len(pending) != 0 || len(applied) != 1 {
				t.Fatalf("pending %+v, applied %+v; want it applied", pending, applied)
			}
			if kind == intent.InterventionFeedback {
				fb, err := h.launcher.Interventions.FeedbackForChat(context.Background(), d.AppID)
				if err != nil || len(fb) != 1 || fb[0].Text != sub.text {
					t.Fatalf("FeedbackForChat = %+v, %v; want the feedback for the next chat turn", fb, err)
				}
			}
		})
	}
}

// TestAPauseStopsTheRunEvenWhenItsAcknowledgementFails: the pause is
// applied (the intent stops) but the second transaction, the
// acknowledgement, fails; the run still stops there, before a second
// attempt, and a later boundary acknowledges the receipt.
func TestAPauseStopsTheRunEvenWhenItsAcknowledgementFails(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	db, err := migrations.Open(h.db, migrations.Intents)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// Every acknowledgement fails, as on a full disk.
	if _, err := db.Write.Exec(`CREATE TRIGGER test_ack_fails BEFORE UPDATE OF done_at ON interventions
		BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`); err != nil {
		t.Fatal(err)
	}
	sub := &submitDuring{h: h, t: t, id: id, kind: intent.InterventionPause}
	// The first attempt writes no example, so its verdict asks for another.
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
		scripted.Reply{Before: sub.send, ToolCalls: []scripted.Call{addLine("Hello notes")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	h.model.On(scripted.RunID(runID(id, headingSlug, 2)),
		scripted.Reply{ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	d := h.run(t, id)
	if sub.err != nil {
		t.Fatal(sub.err)
	}
	wantStopped(t, d, intent.PausedByPerson)
	if n := len(turnRequests(h, runID(id, headingSlug, 2))); n != 0 {
		t.Fatalf("a second attempt ran on the paused intent (%d requests)", n)
	}
	// Once writes work again, the next boundary acknowledges the receipt.
	if _, err := db.Write.Exec(`DROP TRIGGER test_ack_fails`); err != nil {
		t.Fatal(err)
	}
	if _, err := h.launcher.Interventions.ApplyInterventions(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	pending, applied, err := h.launcher.Interventions.Interventions(context.Background(), id)
	if err != nil || len(pending) != 0 || len(applied) != 1 {
		t.Fatalf("pending %+v, applied %+v, %v; want it applied and acknowledged", pending, applied, err)
	}
}

// TestAStopReasonIsASentenceOfOursNeverAStoresText: the store refuses to
// start the task with a raw error; the intent stops with our sentence and
// the raw text goes to the log only.
func TestAStopReasonIsASentenceOfOursNeverAStoresText(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	db, err := migrations.Open(h.db, migrations.Intents)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Write.Exec(`CREATE TRIGGER test_no_start BEFORE UPDATE OF status ON tasks WHEN NEW.status = 'in-progress'
		BEGIN SELECT RAISE(ABORT, 'raw-store-detail-7f3 constraint failed'); END`); err != nil {
		t.Fatal(err)
	}
	d := h.run(t, id)
	wantStopped(t, d, "The run could not start "+headingSlug+"; the launcher's log has the detail.")
}
