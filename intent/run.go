package intent

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"autoapp/intent/plan"
	"autoapp/intent/refusal"
)

// CompletedExamples are the acceptance examples the application's
// completed tasks are held to: example id (<slug>-c<n>) → the hash of its
// steps when its task completed.
func (s *Service) CompletedExamples(ctx context.Context, appID string) (map[string]string, error) {
	// SQLite reads the hashes out of each row's object, walking the
	// completed tasks' index; a task completed before hashes were kept
	// holds none.
	var rows []struct {
		ID   string `db:"id"`
		Hash string `db:"hash"`
	}
	if err := s.db.Read.SelectContext(ctx, &rows,
		`SELECT t.slug || '-c' || h.key AS id, h.value AS hash
		 FROM tasks t, json_each(t.example_hashes) h
		 WHERE t.app_id = ? AND t.status = 'completed' AND t.example_hashes <> '{}'
		   AND h.type = 'text' AND h.value <> '' AND h.key GLOB '[0-9]*' AND NOT h.key GLOB '*[^0-9]*'`, appID); err != nil {
		return nil, fmt.Errorf("intent: completed examples: %w", err)
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.ID] = r.Hash
	}
	return out, nil
}

// SetAdvice keeps the planning model's answer about a failed task; it is
// shown under the failure until the task completes or is revised.
func (s *Service) SetAdvice(ctx context.Context, taskID int64, advice string) error {
	res, err := s.db.Write.ExecContext(ctx, `UPDATE tasks SET advice = ? WHERE id = ? AND status = 'failed'`, advice, taskID)
	if err != nil {
		return fmt.Errorf("intent: advice: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return refuse(refusal.Conflict, "Advice is kept only on a failed task.")
	}
	return nil
}

// LastAttemptNote is why the task's newest attempt did not complete: the
// reason of its newest move from in-progress to failed, interrupted or
// in-queue. A task resumed after a stop or a restart is told the same as
// one retried inside a run. "" when it has none.
func (s *Service) LastAttemptNote(ctx context.Context, taskID int64) (string, error) {
	var reason string
	err := s.db.Read.GetContext(ctx, &reason,
		`SELECT reason FROM task_events WHERE task_id = ? AND from_status = 'in-progress'
		   AND to_status IN ('failed', 'interrupted', 'in-queue') ORDER BY id DESC LIMIT 1`, taskID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("intent: last attempt: %w", err)
	}
	return reason, nil
}

// Running is the intent that runs in this store, if any.
func (s *Service) Running(ctx context.Context) (int64, bool, error) {
	var id int64
	err := s.db.Read.GetContext(ctx, &id, `SELECT id FROM intents WHERE status = 'running' ORDER BY id LIMIT 1`)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("intent: running: %w", err)
	}
	return id, true, nil
}

// LauncherStopped is the reason a restart gives the runs it found going.
const LauncherStopped = "The launcher stopped."

// Recover is what `serve` does on start: every task left in progress is
// interrupted (its attempt given back) and every running intent stopped
// with "The launcher stopped.". Nothing is resumed: an interrupted turn may
// have left half a change, and the person decides what happens next.
func (s *Service) Recover(ctx context.Context) (tasks, intents int, err error) {
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("intent: recover: %w", err)
	}
	defer tx.Rollback()
	now := s.now()
	var taskIDs, intentIDs []int64
	if err := tx.SelectContext(ctx, &taskIDs, `SELECT id FROM tasks WHERE status = 'in-progress' ORDER BY id`); err != nil {
		return 0, 0, fmt.Errorf("intent: recover: %w", err)
	}
	for _, id := range taskIDs {
		// The interruption names the attempt it cut: the run id the task
		// went in-progress with.
		var runID string
		if err := tx.GetContext(ctx, &runID, `SELECT run_id FROM task_events
			WHERE task_id = ? AND to_status = 'in-progress' ORDER BY id DESC LIMIT 1`, id); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, 0, fmt.Errorf("intent: recover: %w", err)
		}
		if _, err := moveTask(ctx, tx, now, id, TaskInterrupted, Move{Reason: LauncherStopped, RunID: runID, Actor: ActorExecutor, Outcome: OutcomeStopped}); err != nil {
			return 0, 0, err
		}
	}
	if err := tx.SelectContext(ctx, &intentIDs, `SELECT id FROM intents WHERE status = 'running' ORDER BY id`); err != nil {
		return 0, 0, fmt.Errorf("intent: recover: %w", err)
	}
	for _, id := range intentIDs {
		if err := moveIntent(ctx, tx, now, id, IntentStopped, LauncherStopped); err != nil {
			return 0, 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, fmt.Errorf("intent: recover: %w", err)
	}
	return len(taskIDs), len(intentIDs), nil
}

// BeginRun starts a run of the intent, as Run in the Backlog asks: it must
// be a submitted draft with no open questions, or a stopped intent whose
// live tasks form a valid graph; no task may wait for an answer; something
// must be left to run, or a stopped intent's every task completed (its run
// then only finishes it). Proposed, failed and interrupted tasks are queued and
// the intent is running, all in one transaction. The caller (the executor)
// checks what only it knows: no other run, a model set up.
func (s *Service) BeginRun(ctx context.Context, intentID int64) error {
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("intent: begin run: %w", err)
	}
	defer tx.Rollback()
	in, err := loadIntent(ctx, tx, intentID)
	if err != nil {
		return err
	}
	switch {
	// Questions first: a draft with open questions is never submitted, and
	// it waits on the person, not on the engineer.
	case in.Status == IntentDraft && len(in.Questions) > 0:
		return refuse(refusal.Conflict, "The engineer's questions need answers before the plan can run.")
	case in.Status == IntentDraft && in.SubmittedAt.IsZero():
		return refuse(refusal.Conflict, "The plan is still being written; it can run once the engineer submits it.")
	case in.Status == IntentRunning:
		return refuse(refusal.Conflict, "Intent #%d is running already.", in.ID)
	case in.Status != IntentDraft && in.Status != IntentStopped:
		return refuse(refusal.Conflict, "Only a submitted draft or a stopped intent can run; this one is %s.", in.Status)
	}
	if err := pendingFeedback(ctx, tx, intentID); err != nil {
		return err
	}
	tasks, err := intentTasks(ctx, tx, intentID)
	if err != nil {
		return err
	}
	var live []plan.Task
	var queue []Task
	for _, t := range tasks {
		switch t.Status {
		case TaskRemoved, TaskCompleted:
		case TaskNeedsAnswer:
			return refuse(refusal.Conflict, "%s waits for an answer; answer its question first.", t.Slug)
		case TaskProposed, TaskFailed, TaskInterrupted, TaskInQueue:
			queue = append(queue, t)
		}
		if t.Status != TaskRemoved {
			live = append(live, t.Task)
		}
	}
	// A stopped intent whose every task completed runs only to be
	// finished and delivered, and only when that is why it stopped: its
	// finish could not be written. Any other stop with nothing left (a
	// pause whose waiting task the owner then removed) has nothing to run.
	if len(queue) == 0 && (in.Status != IntentStopped || len(live) == 0 || !Undelivered(in.StopReason, in.ID)) {
		return refuse(refusal.Conflict, "Nothing is left to run in intent #%d.", in.ID)
	}
	if ps := plan.ValidateGraph(live); len(ps) > 0 {
		return &refusal.Error{Code: refusal.Invalid, Problems: ps, Message: "The plan cannot run: " + ps.Error() + "."}
	}
	now := s.now()
	for _, t := range queue {
		if t.Status == TaskInQueue {
			continue
		}
		if _, err := moveTask(ctx, tx, now, t.ID, TaskInQueue, Move{Reason: "a run starts", Actor: ActorOwner}); err != nil {
			return err
		}
	}
	if err := moveIntent(ctx, tx, now, intentID, IntentRunning, "the owner pressed Run"); err != nil {
		return err
	}
	// The plan the gate weighs is the one committed before this run's
	// moves: what the owner was shown and approved.
	d, err := s.Get(ctx, intentID)
	if err != nil {
		return err
	}
	if err := s.journal.RunStarting(ctx, tx, d, now); err != nil {
		return err
	}
	// Run is the explicit continuation after whatever was applied.
	if _, err := tx.ExecContext(ctx, `UPDATE intervention_applied SET resumed_at = ? WHERE intent_id = ? AND resumed_at IS NULL`,
		now.UnixMilli(), intentID); err != nil {
		return fmt.Errorf("intent: begin run: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("intent: begin run: %w", err)
	}
	return nil
}

// UndeliveredReason is why an intent stops when every task completed but
// its finish and delivery could not be written: Run then delivers it.
func UndeliveredReason(intentID int64) string {
	return fmt.Sprintf("Every task completed, but intent #%d could not be delivered; the launcher's log has the detail. Run again to deliver it.", intentID)
}

// Undelivered says reason is the stop UndeliveredReason gives intentID.
func Undelivered(reason string, intentID int64) bool {
	return reason == UndeliveredReason(intentID)
}
