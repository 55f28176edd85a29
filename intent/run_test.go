package intent_test

import (
	"context"
	"strings"
	"testing"

	"autoapp/intent"
)

func TestACompletingMoveKeepsTheVerdictsRecord(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, tasks := e.draft(t, "notes", "List notes")
	id := tasks[0].ID
	e.moveIntent(t, in.ID, intent.IntentRunning)
	e.move(t, id, intent.TaskInQueue, "")
	e.move(t, id, intent.TaskInProgress, "intent-1-0001-list-notes-a1")
	if _, err := e.db.Write.Exec(`INSERT INTO releases (id, app_id, revision, built_at) VALUES ('r1', 'notes', 'abc', 0)`); err != nil {
		t.Fatal(err)
	}
	err := e.svc.MoveTask(ctx, id, intent.TaskCompleted, intent.Move{Reason: "the verdict", Completion: &intent.Completion{
		RevAfter: "abc", ReleaseID: "r1", ActualLines: 42, ExampleHashes: map[int]string{1: "h1", 2: "h2"}}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.svc.Task(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if d.RevAfter != "abc" || d.ReleaseID != "r1" || d.ActualLines != 42 || d.ExampleHashes[1] != "h1" || d.ExampleHashes[2] != "h2" {
		t.Fatalf("completed task: rev %q release %q lines %d hashes %v", d.RevAfter, d.ReleaseID, d.ActualLines, d.ExampleHashes)
	}
	held, err := e.svc.CompletedExamples(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != 2 || held["0001-list-notes-c1"] != "h1" || held["0001-list-notes-c2"] != "h2" {
		t.Fatalf("completed examples: %v", held)
	}
}

func TestAQuestionAndItsAnswerAreKept(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, tasks := e.draft(t, "notes", "List notes")
	id := tasks[0].ID
	e.moveIntent(t, in.ID, intent.IntentRunning)
	e.move(t, id, intent.TaskInQueue, "")
	e.move(t, id, intent.TaskInProgress, "r-a1")
	if err := e.svc.MoveTask(ctx, id, intent.TaskNeedsAnswer, intent.Move{Reason: "asked"}); err == nil {
		t.Fatal("a move to needs-answer without its question was taken")
	}
	if err := e.svc.MoveTask(ctx, id, intent.TaskNeedsAnswer, intent.Move{Reason: "asked", Question: "Sort by date or title?"}); err != nil {
		t.Fatal(err)
	}
	d, _ := e.svc.Task(ctx, id)
	if d.Question != "Sort by date or title?" {
		t.Fatalf("question %q", d.Question)
	}
	if err := e.svc.MoveTask(ctx, id, intent.TaskInQueue, intent.Move{Reason: "answered"}); err == nil || !strings.Contains(err.Error(), "Write an answer") {
		t.Fatalf("an empty answer: %v", err)
	}
	if err := e.svc.MoveTask(ctx, id, intent.TaskInQueue, intent.Move{Reason: "answered", Answer: "By date."}); err != nil {
		t.Fatal(err)
	}
	d, _ = e.svc.Task(ctx, id)
	if d.Question != "" || len(d.Answers) != 1 || d.Answers[0].Question != "Sort by date or title?" || d.Answers[0].Answer != "By date." {
		t.Fatalf("after the answer: question %q answers %+v", d.Question, d.Answers)
	}
}

func TestAdviceLivesOnAFailedTaskUntilItIsRevised(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, tasks := e.draft(t, "notes", "List notes")
	id := tasks[0].ID
	if err := e.svc.SetAdvice(ctx, id, "retry"); err == nil {
		t.Fatal("advice kept on a proposed task")
	}
	e.moveIntent(t, in.ID, intent.IntentRunning)
	e.move(t, id, intent.TaskInQueue, "")
	e.move(t, id, intent.TaskInProgress, "r-a1")
	if err := e.svc.MoveTask(ctx, id, intent.TaskFailed, intent.Move{Reason: "No example named 0001-list-notes-c1 was run."}); err != nil {
		t.Fatal(err)
	}
	if note, _ := e.svc.LastAttemptNote(ctx, id); note != "No example named 0001-list-notes-c1 was run." {
		t.Fatalf("last attempt note %q", note)
	}
	if err := e.svc.SetAdvice(ctx, id, "Split it."); err != nil {
		t.Fatal(err)
	}
	if d, _ := e.svc.Task(ctx, id); d.Advice != "Split it." {
		t.Fatalf("advice %q", d.Advice)
	}
	e.move(t, id, intent.TaskProposed, "")
	if d, _ := e.svc.Task(ctx, id); d.Advice != "" {
		t.Fatalf("a revised task keeps its advice %q", d.Advice)
	}
}

func TestRecoverInterruptsAndStopsWithoutResuming(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, tasks := e.draft(t, "notes", "List notes", "Tag notes")
	e.moveIntent(t, in.ID, intent.IntentRunning)
	e.move(t, tasks[0].ID, intent.TaskInQueue, "")
	e.move(t, tasks[1].ID, intent.TaskInQueue, "")
	e.move(t, tasks[0].ID, intent.TaskInProgress, "r-a1")
	if id, ok, err := e.svc.Running(ctx); err != nil || !ok || id != in.ID {
		t.Fatalf("running: %d %v %v", id, ok, err)
	}
	nt, ni, err := e.svc.Recover(ctx)
	if err != nil || nt != 1 || ni != 1 {
		t.Fatalf("recover: %d tasks, %d intents, %v", nt, ni, err)
	}
	d, _ := e.svc.Task(ctx, tasks[0].ID)
	if d.Status != intent.TaskInterrupted || d.Attempts != 0 {
		t.Fatalf("the task in hand: %s with %d attempts", d.Status, d.Attempts)
	}
	if e.status(t, tasks[1].ID) != intent.TaskInQueue {
		t.Fatal("a queued task moved")
	}
	got, _ := e.svc.Get(ctx, in.ID)
	if got.Status != intent.IntentStopped || got.StopReason != intent.LauncherStopped {
		t.Fatalf("intent: %s %q", got.Status, got.StopReason)
	}
	if _, ok, _ := e.svc.Running(ctx); ok {
		t.Fatal("an intent still runs")
	}
	if nt, ni, _ := e.svc.Recover(ctx); nt != 0 || ni != 0 {
		t.Fatalf("a second recovery moved %d tasks and %d intents", nt, ni)
	}
}

func TestOnlyATaskThatAskedTakesAnAnswer(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, tasks := e.draft(t, "notes", "List notes")
	id := tasks[0].ID
	if err := e.svc.AnswerTask(ctx, id, "By date."); err == nil || !strings.Contains(err.Error(), "asked no question") {
		t.Fatalf("an answer to a proposed task: %v", err)
	}
	if d, _ := e.svc.Task(ctx, id); d.Status != intent.TaskProposed {
		t.Fatalf("the proposed task moved to %s", d.Status)
	}
	e.moveIntent(t, in.ID, intent.IntentRunning)
	e.move(t, id, intent.TaskInQueue, "")
	e.move(t, id, intent.TaskInProgress, "r-a1")
	if err := e.svc.MoveTask(ctx, id, intent.TaskFailed, intent.Move{Reason: "No example ran."}); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.AnswerTask(ctx, id, "By date."); err == nil {
		t.Fatal("an answer re-queued a failed task")
	}
	if d, _ := e.svc.Task(ctx, id); d.Status != intent.TaskFailed {
		t.Fatalf("the failed task moved to %s", d.Status)
	}
	e.move(t, id, intent.TaskInQueue, "")
	e.move(t, id, intent.TaskInProgress, "r-a2")
	if err := e.svc.MoveTask(ctx, id, intent.TaskNeedsAnswer, intent.Move{Reason: "asked", Question: "Sort by date or title?"}); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.AnswerTask(ctx, id, "By date."); err != nil {
		t.Fatal(err)
	}
	if d, _ := e.svc.Task(ctx, id); d.Status != intent.TaskInQueue || len(d.Answers) != 1 || d.Answers[0].Answer != "By date." {
		t.Fatalf("after the answer: %s %+v", d.Status, d.Answers)
	}
}

// TestAStoppedIntentsWaitingTaskCanBeRevised: after feedback stops a run,
// the tasks waiting for Run (queued, interrupted) may be rewritten by the
// engineer; they return to proposed.
func TestAStoppedIntentsWaitingTaskCanBeRevised(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, tasks := e.draft(t, "notes", "List notes", "Sort notes")
	if err := e.svc.Submit(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.BeginRun(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	e.move(t, tasks[0].ID, intent.TaskInProgress, "r-a1")
	e.move(t, tasks[0].ID, intent.TaskInterrupted, "r-a1")
	e.moveIntent(t, in.ID, intent.IntentStopped)
	for _, tk := range tasks {
		p := tk.Task
		p.Summary = "Revised with the person's feedback."
		if _, err := e.svc.ReplaceTask(ctx, in.ID, tk.Slug, p); err != nil {
			t.Fatalf("revising %s: %v", tk.Slug, err)
		}
		if d, _ := e.svc.Task(ctx, tk.ID); d.Status != intent.TaskProposed || d.Summary != p.Summary {
			t.Errorf("%s after the revision: %s %q", tk.Slug, d.Status, d.Summary)
		}
	}
}
