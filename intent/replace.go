package intent

import (
	"context"
	"fmt"
	"slices"

	"autoapp/intent/plan"
	"autoapp/intent/refusal"
)

// RevisedReason is the history's reason when the engineer revises a
// failed task, which returns to proposed.
const RevisedReason = "the engineer revised it"

// ReplaceTask rewrites the plan of one task of an intent and keeps its
// slug: a task still proposed, or a failed one, which returns to proposed
// (the engineer revised it after a run stopped). The intent is a draft
// whose questions are all answered, or a stopped intent. A plan with
// problems is refused with each field named (in refusal.Error.Problems) and
// nothing is stored; any other status of the task is refused with a
// sentence. The task keeps the owner's model, its history and its
// attempts.
func (s *Service) ReplaceTask(ctx context.Context, intentID int64, slug string, t plan.Task) (Task, error) {
	now := s.now()
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return Task{}, fmt.Errorf("intent: replace task %s: %w", slug, err)
	}
	defer tx.Rollback()
	in, err := loadIntent(ctx, tx, intentID)
	if err != nil {
		return Task{}, err
	}
	switch {
	case in.Status != IntentDraft && in.Status != IntentStopped:
		return Task{}, refuse(refusal.Conflict, "Tasks are revised only in a draft or a stopped intent; intent %d is %s.", intentID, in.Status)
	case len(in.Questions) > 0:
		return Task{}, refuse(refusal.Conflict, "Intent %d has open questions. Answer them, and open the intent again without questions, before revising tasks.", intentID)
	}
	tasks, err := intentTasks(ctx, tx, intentID)
	if err != nil {
		return Task{}, err
	}
	i := slices.IndexFunc(tasks, func(x Task) bool { return x.Slug == slug })
	if i < 0 {
		return Task{}, refuse(refusal.NotFound, "Intent %d has no task %s.", intentID, slug)
	}
	old := tasks[i]
	// A stopped intent's queued or interrupted task waits for Run: the
	// engineer may revise it too (after the person's feedback, say).
	waiting := in.Status == IntentStopped && (old.Status == TaskInQueue || old.Status == TaskInterrupted)
	if old.Status != TaskProposed && old.Status != TaskFailed && !waiting {
		return Task{}, refuse(refusal.Conflict, "Task %s is %s; only a proposed, failed, or (in a stopped intent) queued or interrupted task can be revised.", slug, old.Status)
	}

	t.Slug = slug
	if ps := plan.ValidateTask(t); len(ps) > 0 {
		return Task{}, &refusal.Error{Code: refusal.Invalid, Problems: ps, Message: "The task was not revised: " + ps.Error() + "."}
	}
	graph := plans(live(tasks))
	for j := range graph {
		if graph[j].Slug == slug {
			graph[j] = t
		}
	}
	if ps := plan.ValidateGraph(graph); len(ps) > 0 {
		return Task{}, &refusal.Error{Code: refusal.Invalid, Problems: ps, Message: "The task was not revised: " + ps.Error() + "."}
	}

	// The plan's columns only: the status and what a move stamps are
	// moveTask's, below.
	res, err := tx.ExecContext(ctx,
		`UPDATE tasks SET title = ?, priority = ?, labels = ?, blocked_by = ?, estimated_lines = ?, locks = ?, risk = ?,
		        stub = ?, repaid_by = ?, reasoning = ?, summary = ?, criteria = ?, no_failure_path = ?,
		        non_functional = ?, test_notes = ?, runbook = ?
		 WHERE id = ? AND status = ?`,
		t.Title, t.Priority, jsonText(list(t.Labels)), jsonText(list(t.BlockedBy)), t.EstimatedLines,
		jsonText(list(t.Locks)), t.Risk, t.Stub, t.RepaidBy, t.Reasoning, t.Summary, jsonText(list(t.Criteria)),
		t.NoFailurePath, jsonText(list(t.NonFunctional)), jsonText(list(t.TestNotes)), jsonText(list(t.Runbook)),
		old.ID, old.Status)
	if err != nil {
		return Task{}, fmt.Errorf("intent: replace task %s: %w", slug, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return Task{}, fmt.Errorf("intent: replace task %s: %w", slug, err)
	} else if n == 0 {
		return Task{}, refuse(refusal.Conflict, "Task %s moved meanwhile: it is no longer %s.", slug, old.Status)
	}
	if old.Status != TaskProposed {
		if _, err := moveTask(ctx, tx, now, old.ID, TaskProposed, Move{Reason: RevisedReason, Actor: ActorEngineer}); err != nil {
			return Task{}, err
		}
	}
	// A draft's plan changed, so it is being written again until it is
	// submitted.
	if _, err := tx.ExecContext(ctx,
		`UPDATE intents SET submitted_at = CASE WHEN status = 'draft' THEN NULL ELSE submitted_at END, updated_at = ?
		 WHERE id = ?`, now.UnixMilli(), intentID); err != nil {
		return Task{}, fmt.Errorf("intent: replace task %s: %w", slug, err)
	}
	replaced, err := loadTask(ctx, tx, old.ID)
	if err != nil {
		return Task{}, err
	}
	if err := tx.Commit(); err != nil {
		return Task{}, fmt.Errorf("intent: replace task %s: %w", slug, err)
	}
	return replaced, nil
}
