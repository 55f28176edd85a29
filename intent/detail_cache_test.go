package intent_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"autoapp/intent"
)

// A running intent's page asks for it every two seconds and may be
// answered from the last read, but never with anything the store no
// longer says: each kind of change shows on the next read.
func TestAnIntentReadAgainShowsEveryChangeSinceTheLast(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, tasks := e.draft(t, "notes", "Add tags", "Filter by tag")
	read := func() intent.IntentDetail {
		t.Helper()
		d, err := e.svc.Get(ctx, in.ID)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	task := func(d intent.IntentDetail, id int64) intent.BacklogTask {
		t.Helper()
		for _, bt := range d.Tasks {
			if bt.ID == id {
				return bt
			}
		}
		t.Fatalf("task %d is not in the read", id)
		return intent.BacklogTask{}
	}
	if d := read(); d.Status != intent.IntentDraft || len(d.Tasks) != 2 {
		t.Fatalf("first read: %+v", d)
	}
	read() // the second read may be the kept one

	if err := e.svc.Submit(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if d := read(); d.SubmittedAt.IsZero() {
		t.Fatal("the read after Submit does not say it was submitted")
	}
	e.moveIntent(t, in.ID, intent.IntentRunning)
	e.move(t, tasks[0].ID, intent.TaskInQueue, "")
	e.move(t, tasks[0].ID, intent.TaskInProgress, "run-1")
	if got := task(read(), tasks[0].ID).Status; got != intent.TaskInProgress {
		t.Fatalf("after a move the read says %s", got)
	}
	if err := e.svc.MoveTask(ctx, tasks[0].ID, intent.TaskFailed, intent.Move{Reason: "The build failed.", RunID: "run-1", Actor: intent.ActorExecutor}); err != nil {
		t.Fatal(err)
	}
	if got := task(read(), tasks[0].ID); got.Status != intent.TaskFailed || got.Reason != "The build failed." {
		t.Fatalf("after failing the read says %s, %q", got.Status, got.Reason)
	}
	if err := e.svc.SetAdvice(ctx, tasks[0].ID, "Split it."); err != nil {
		t.Fatal(err)
	}
	if got := task(read(), tasks[0].ID).Advice; got != "Split it." {
		t.Fatalf("after the advice the read says %q", got)
	}
	// A change written by hand, outside the service, shows too.
	if _, err := e.db.Write.Exec(`UPDATE tasks SET title = 'Add coloured tags' WHERE id = ?`, tasks[1].ID); err != nil {
		t.Fatal(err)
	}
	if got := task(read(), tasks[1].ID).Title; got != "Add coloured tags" {
		t.Fatalf("after a change by hand the read says %q", got)
	}
	// The tier models are read with it.
	if err := e.svc.SetTierModels(ctx, "op-tiers", map[string]string{"quick": "ollama:qwen3", "standard": "ollama:qwen3", "deep": "ollama:qwen3"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := task(read(), tasks[1].ID).RunsOn; got != "ollama:qwen3" {
		t.Fatalf("after choosing tier models the task runs on %q", got)
	}
	// What one reader changes in its read is not in the next.
	d := read()
	d.Tasks[0].RunsOn = "changed by a reader"
	if got := read().Tasks[0].RunsOn; got == "changed by a reader" {
		t.Fatal("a reader's change reached the next read")
	}
}

// The examples the finished tasks hold are read from each completed
// task's hashes: a task still going, or one completed before hashes were
// kept, holds none.
func TestCompletedExamplesAreTheFinishedTasksHashes(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, tasks := e.draft(t, "notes", "Add tags", "Filter by tag", "Colour the tags")
	if err := e.svc.Submit(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	e.moveIntent(t, in.ID, intent.IntentRunning)
	for i, task := range tasks {
		e.move(t, task.ID, intent.TaskInQueue, "")
		e.move(t, task.ID, intent.TaskInProgress, "run-"+task.Slug)
		hashes := map[int]string{}
		switch i {
		case 0:
			hashes = map[int]string{1: "h-tags-1", 2: "h-tags-2"}
		case 2:
			continue // still in progress
		}
		if err := e.svc.MoveTask(ctx, task.ID, intent.TaskCompleted, intent.Move{Reason: "completed", RunID: "run-" + task.Slug,
			Actor: intent.ActorExecutor, Completion: &intent.Completion{ExampleHashes: hashes}}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := e.svc.CompletedExamples(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{tasks[0].Slug + "-c1": "h-tags-1", tasks[0].Slug + "-c2": "h-tags-2"}
	if !maps.Equal(got, want) {
		t.Fatalf("CompletedExamples = %v, want %v", got, want)
	}
}

// The interventions sent to an intent are read with it for its page, and
// each change to them shows on the next read: a submission, its
// application (here on an intent stopped already, which writes nothing
// else), and what a Run writes on it later.
func TestAnIntentsInterventionsReadAgainShowEveryChangeSinceTheLast(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, _ := e.running(t, "notes", "Add tags")
	read := func() (pending, applied []intent.Receipt) {
		t.Helper()
		d, pending, applied, err := e.svc.GetWithInterventions(ctx, in.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.ID != in.ID || d.Status != e.intentStatus(t, in.ID) {
			t.Fatalf("the read is of intent %d, %s", d.ID, d.Status)
		}
		return pending, applied
	}
	if p, a := read(); len(p)+len(a) != 0 {
		t.Fatalf("a new intent has receipts: %+v %+v", p, a)
	}
	read() // the second read may be the kept one

	if _, _, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, "f-1", intent.InterventionFeedback, "Tags should be lowercase."); err != nil {
		t.Fatal(err)
	}
	if p, a := read(); len(p) != 1 || p[0].Text != "Tags should be lowercase." || len(a) != 0 {
		t.Fatalf("after the feedback was sent the read says pending %+v, applied %+v", p, a)
	}
	const reason = "0001-add-tags failed."
	if err := e.svc.MoveIntent(ctx, in.ID, intent.IntentStopped, reason); err != nil {
		t.Fatal(err)
	}
	read()
	// The read between applying and acknowledging sees it applied.
	seen := false
	intent.SetAfterApply(e.all.Interventions, func() {
		p, a := read()
		seen = len(p) == 0 && len(a) == 1 && a[0].ID == "f-1" && a[0].Held == reason
		if !seen {
			t.Errorf("once the feedback was applied the read says pending %+v, applied %+v", p, a)
		}
	})
	if _, err := e.all.Interventions.ApplyInterventions(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	intent.SetAfterApply(e.all.Interventions, nil)
	if !seen {
		t.Fatal("the read after applying was not made")
	}
	if _, a := read(); len(a) != 1 || a[0].ResumedAt != nil {
		t.Fatalf("after acknowledging the read says applied %+v", a)
	}
	// A change written by hand, outside the service, shows too.
	resumed := e.clock.Now().Add(time.Minute)
	if _, err := e.db.Write.Exec(`UPDATE intervention_applied SET resumed_at = ?`, resumed.UnixMilli()); err != nil {
		t.Fatal(err)
	}
	if _, a := read(); len(a) != 1 || a[0].ResumedAt == nil || !a[0].ResumedAt.Equal(resumed) {
		t.Fatalf("after it was resumed the read says applied %+v", a)
	}
	// What one reader changes in its read is not in the next.
	_, a := read()
	a[0].Text = "changed by a reader"
	if _, a := read(); a[0].Text == "changed by a reader" {
		t.Fatal("a reader's change reached the next read")
	}
}
