package intent_test

import (
	"context"
	"testing"

	"autoapp/intent"
	"autoapp/intent/request"
)

func TestTheObserversHearEachMoveOnceItCommitted(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	_, tasks := e.draft(t, "notes", "Add tags")
	id := tasks[0].ID
	type heard struct {
		move intent.TaskMoved
		// seen is the task's status as a reader saw it while being told.
		seen intent.TaskStatus
	}
	var got []heard
	// The service is built again with what hears its moves: from now on
	// every move below is made and told through it.
	e.svc = intent.NewService(e.db, e.root, e.clock.Now, intent.Collaborators{Journal: request.Journal{},
		Moved: func(ctx context.Context, m intent.TaskMoved) {
			d, err := e.svc.Task(ctx, m.TaskID)
			if err != nil {
				t.Errorf("reading the task while told: %v", err)
			}
			got = append(got, heard{m, d.Status})
		}})
	e.move(t, id, intent.TaskInQueue, "")
	e.move(t, id, intent.TaskInProgress, "r1")
	e.move(t, id, intent.TaskInQueue, "r1")
	// A refused move is told nothing.
	if err := e.svc.MoveTask(ctx, id, intent.TaskCompleted, intent.Move{RunID: "r1"}); err == nil {
		t.Fatal("in-queue moved to completed")
	}
	e.move(t, id, intent.TaskInProgress, "r2")
	e.move(t, id, intent.TaskCompleted, "r2")

	want := []intent.TaskMoved{
		{TaskID: id, From: intent.TaskProposed, To: intent.TaskInQueue},
		{TaskID: id, From: intent.TaskInQueue, To: intent.TaskInProgress, RunID: "r1"},
		{TaskID: id, From: intent.TaskInProgress, To: intent.TaskInQueue, RunID: "r1"},
		{TaskID: id, From: intent.TaskInQueue, To: intent.TaskInProgress, RunID: "r2"},
		{TaskID: id, From: intent.TaskInProgress, To: intent.TaskCompleted, RunID: "r2"},
	}
	if len(got) != len(want) {
		t.Fatalf("heard %+v", got)
	}
	var ended []string
	for i, h := range got {
		if h.move != want[i] || h.seen != want[i].To {
			t.Errorf("move %d: heard %+v with the task %s; want %+v, committed", i, h.move, h.seen, want[i])
		}
		if h.move.AttemptEnded() {
			ended = append(ended, h.move.RunID)
		}
	}
	if len(ended) != 2 || ended[0] != "r1" || ended[1] != "r2" {
		t.Errorf("attempts ended: %v", ended)
	}
}
