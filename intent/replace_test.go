package intent_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"autoapp/intent"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
)

func TestReplaceTaskRewritesAProposedTaskAndKeepsItsSlug(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, tasks := e.draft(t, "notes", "Add tags", "Show tags")
	if err := e.svc.SetTaskModel(ctx, "op-model", tasks[0].ID, "ollama:qwen3"); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Submit(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	before := e.state(t, tasks[0].ID)

	revised := planned("Add tags and colours")
	revised.Labels = []string{"views", "theme"}
	revised.EstimatedLines = 90
	revised.Runbook = []string{"Open a note and give it a red tag."}
	got, err := e.svc.ReplaceTask(ctx, in.ID, tasks[0].Slug, revised)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != tasks[0].ID || got.Slug != tasks[0].Slug || got.Status != intent.TaskProposed {
		t.Fatalf("replaced: id %d slug %s status %s", got.ID, got.Slug, got.Status)
	}
	if got.Title != "Add tags and colours" || !slices.Equal(got.Labels, []string{"views", "theme"}) || got.EstimatedLines != 90 ||
		!slices.Equal(got.Runbook, revised.Runbook) {
		t.Fatalf("the plan was not rewritten: %+v", got.Task)
	}
	after := e.state(t, tasks[0].ID)
	if after.Events != before.Events || after.Model != "ollama:qwen3" {
		t.Fatalf("a proposed task stays proposed without an event and keeps its model: before %+v after %+v", before, after)
	}
	if d, _ := e.svc.Get(ctx, in.ID); !d.BeingWritten() {
		t.Fatal("a revised task leaves the plan submitted")
	}
}

func TestReplaceTaskReturnsAFailedTaskToProposed(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, byStatus := stoppedWithEveryStatus(t, e, "notes")
	failed := byStatus[intent.TaskFailed]
	if err := e.svc.SetAdvice(ctx, failed.ID, "Split the task."); err != nil {
		t.Fatal(err)
	}
	at := e.clock.Set(time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC))
	got, err := e.svc.ReplaceTask(ctx, in.ID, failed.Slug, planned("Fail no more"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != intent.TaskProposed || got.Slug != failed.Slug || got.Title != "Fail no more" || got.Advice != "" {
		t.Fatalf("replaced: %+v", got)
	}
	ev := e.lastEvent(t, failed.ID)
	if ev.From != intent.TaskFailed || ev.To != intent.TaskProposed || ev.Reason != intent.RevisedReason ||
		ev.Actor != intent.ActorEngineer || ev.At != at.UnixMilli() {
		t.Fatalf("event %+v", ev)
	}
	if e.intentStatus(t, in.ID) != intent.IntentStopped {
		t.Fatal("revising a task moved the intent")
	}
}

func TestReplaceTaskRefusesAPlanWithProblemsAndStoresNothing(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, tasks := e.draft(t, "notes", "Add tags", "Show tags")

	for _, c := range []struct {
		name   string
		edit   func(p *plan.Task)
		fields []string
	}{
		{"its own fields", func(p *plan.Task) {
			p.Priority = "urgent"
			p.Criteria = []plan.Criterion{{Text: "Checked after activation, not in a preview"}}
		}, []string{"priority", "criteria[0].text", "criteria"}},
		{"the graph", func(p *plan.Task) { p.BlockedBy = []string{"0009-nothing-here"} }, []string{tasks[0].Slug + ".blocked_by[0]"}},
		{"a cycle", func(p *plan.Task) { p.BlockedBy = []string{tasks[1].Slug} }, []string{"blocked_by"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "a cycle" {
				// Show tags waits on Add tags; Add tags waiting on Show tags closes a cycle.
				if _, err := e.svc.ReplaceTask(ctx, in.ID, tasks[1].Slug, planned("Show tags", tasks[0].Slug)); err != nil {
					t.Fatal(err)
				}
			}
			before := e.state(t, tasks[0].ID)
			p := planned("Add tags")
			c.edit(&p)
			_, err := e.svc.ReplaceTask(ctx, in.ID, tasks[0].Slug, p)
			ie := wantRefusal(t, err, refusal.Invalid)
			var fields []string
			for _, pr := range ie.Problems {
				fields = append(fields, pr.Field)
			}
			for _, f := range c.fields {
				if !slices.Contains(fields, f) {
					t.Errorf("no problem names %s: %v", f, ie.Problems)
				}
			}
			if !strings.HasPrefix(ie.Message, "The task was not revised: ") {
				t.Errorf("message %q", ie.Message)
			}
			var title string
			if err := e.db.Read.Get(&title, `SELECT title FROM tasks WHERE id = ?`, tasks[0].ID); err != nil {
				t.Fatal(err)
			}
			if after := e.state(t, tasks[0].ID); after != before || title != "Add tags" {
				t.Fatalf("something was stored: %q, %+v", title, after)
			}
		})
	}
}

func TestReplaceTaskRefusesOtherStatusesWithASentence(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, byStatus := stoppedWithEveryStatus(t, e, "notes")
	// Queued and interrupted tasks of a stopped intent can be revised
	// (TestAStoppedIntentsWaitingTaskCanBeRevised); these cannot.
	for _, s := range []intent.TaskStatus{intent.TaskCompleted, intent.TaskNeedsAnswer} {
		t.Run(string(s), func(t *testing.T) {
			task := byStatus[s]
			before := e.state(t, task.ID)
			_, err := e.svc.ReplaceTask(ctx, in.ID, task.Slug, planned("Something else"))
			ie := wantRefusal(t, err, refusal.Conflict)
			if want := "Task " + task.Slug + " is " + string(s) + "; only a proposed, failed, or (in a stopped intent) queued or interrupted task can be revised."; ie.Message != want {
				t.Fatalf("message %q, want %q", ie.Message, want)
			}
			if after := e.state(t, task.ID); after != before {
				t.Fatalf("the task changed: %+v", after)
			}
		})
	}

	t.Run("removed", func(t *testing.T) {
		d, tasks := e.draft(t, "shop", "Add a cart", "Add a till")
		if err := e.svc.RemoveTask(ctx, "op-remove", tasks[1].ID); err != nil {
			t.Fatal(err)
		}
		_, err := e.svc.ReplaceTask(ctx, d.ID, tasks[1].Slug, planned("Add a till"))
		wantRefusal(t, err, refusal.Conflict)
	})

	t.Run("no such task", func(t *testing.T) {
		_, err := e.svc.ReplaceTask(ctx, in.ID, "0099-nothing", planned("Something"))
		wantRefusal(t, err, refusal.NotFound)
	})

	t.Run("a running intent", func(t *testing.T) {
		d, tasks := e.draft(t, "blog", "Add posts")
		e.moveIntent(t, d.ID, intent.IntentRunning)
		_, err := e.svc.ReplaceTask(ctx, d.ID, tasks[0].Slug, planned("Add posts"))
		if ie := wantRefusal(t, err, refusal.Conflict); !strings.Contains(ie.Message, "is running") {
			t.Fatalf("message %q", ie.Message)
		}
	})

	t.Run("open questions", func(t *testing.T) {
		d, tasks := e.draft(t, "wiki", "Add pages")
		if _, err := e.svc.OpenDraft(ctx, "wiki", "", intent.Analysis{Questions: []string{"Markdown or HTML?"}}); err != nil {
			t.Fatal(err)
		}
		_, err := e.svc.ReplaceTask(ctx, d.ID, tasks[0].Slug, planned("Add pages"))
		wantRefusal(t, err, refusal.Conflict)
	})
}
