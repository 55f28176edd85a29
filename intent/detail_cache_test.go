package intent_test

import (
	"context"
	"maps"
	"testing"

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
	if err := e.svc.SetTierModels(ctx, "op-tiers", map[string]string{"quick": "ollama:qwen3", "standard": "ollama:qwen3", "deep": "ollama:qwen3"}); err != nil {
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
