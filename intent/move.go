package intent

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"autoapp/intent/refusal"
)

// taskMoves is the table of allowed moves, from → to.
var taskMoves = map[TaskStatus][]TaskStatus{
	// A run starts; the owner removes it or the intent is withdrawn.
	TaskProposed: {TaskInQueue, TaskRemoved},
	// The executor starts its turn; its model is no longer offered (it fails
	// without a turn); the intent is withdrawn or the owner removes it while
	// the intent is stopped; the engineer revised it while the intent is
	// stopped (after feedback, say).
	TaskInQueue: {TaskInProgress, TaskFailed, TaskRemoved, TaskProposed},
	// The verdict; another attempt; the verdict, out of attempts; Stop,
	// shutdown, restart or a provider failure; the builder asked the person.
	TaskInProgress: {TaskCompleted, TaskInQueue, TaskFailed, TaskInterrupted, TaskNeedsAnswer},
	// Run again; the engineer revised it; the intent is withdrawn.
	TaskFailed: {TaskInQueue, TaskProposed, TaskRemoved},
	// Run again; the intent is withdrawn; the engineer revised it.
	TaskInterrupted: {TaskInQueue, TaskRemoved, TaskProposed},
	// The person answered; the intent is withdrawn.
	TaskNeedsAnswer: {TaskInQueue, TaskRemoved},
}

// canMoveTask reports whether the table allows a task to move from one
// status to another.
func canMoveTask(from, to TaskStatus) bool { return slices.Contains(taskMoves[from], to) }

// moveTask is the only writer of tasks.status and of the columns a move
// stamps, and it writes the task_events row in the same transaction: the
// caller's. It refuses a move the table does not allow, a run id that
// started a task already, and a task that moved meanwhile; it answers the
// status the task moved from. The task is read once; a start appends its
// run id to run_ids in SQL, and the task_runs primary key is what refuses a
// run id used before.
func moveTask(ctx context.Context, tx *sqlx.Tx, now time.Time, taskID int64, to TaskStatus, ev Move) (TaskStatus, error) {
	if !to.known() {
		return "", refuse(refusal.Invalid, "There is no task status %q.", to)
	}
	var cur struct {
		Status    TaskStatus    `db:"status"`
		Attempts  int           `db:"attempts"`
		StartedAt sql.NullInt64 `db:"started_at"`
		EndedAt   sql.NullInt64 `db:"ended_at"`
	}
	err := tx.GetContext(ctx, &cur, `SELECT status, attempts, started_at, ended_at FROM tasks WHERE id = ?`, taskID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", refuse(refusal.NotFound, "There is no task %d.", taskID)
	}
	if err != nil {
		return "", fmt.Errorf("intent: move task %d: %w", taskID, err)
	}
	from := cur.Status
	if from == to {
		return "", refuse(refusal.Conflict, "A task cannot move from %s to %s: it is %s already.", from, to, to)
	}
	if !canMoveTask(from, to) {
		return "", refuse(refusal.Conflict, "A task cannot move from %s to %s.", from, to)
	}
	if ev.Outcome != OutcomeNone && from != TaskInProgress {
		return "", refuse(refusal.Invalid, "Only a move that ends an attempt has an outcome; this one moves from %s.", from)
	}

	at := sql.NullInt64{Int64: now.UnixMilli(), Valid: true}
	started, ended, attempts := cur.StartedAt, cur.EndedAt, cur.Attempts
	var newRun sql.NullString // the run id run_ids takes; NULL leaves it as it is
	switch {
	case to == TaskInProgress:
		if ev.RunID == "" {
			return "", refuse(refusal.Invalid, "A task moves to in-progress only with the id of the run that starts it.")
		}
		started, ended, attempts = at, sql.NullInt64{}, attempts+1
		newRun = sql.NullString{String: ev.RunID, Valid: true}
		if _, err := tx.ExecContext(ctx, `INSERT INTO task_runs (run_id, task_id, attempt) VALUES (?, ?, ?)`,
			ev.RunID, taskID, attempts); isUniqueViolation(err) {
			return "", refuse(refusal.Conflict, "The run %s has started a task already; each attempt has its own run id.", ev.RunID)
		} else if err != nil {
			return "", fmt.Errorf("intent: move task %d: %w", taskID, err)
		}
	case to == TaskCompleted, to == TaskFailed:
		ended = at
	case to == TaskInQueue && from == TaskInProgress: // another attempt
		ended = at
	case to == TaskInterrupted, to == TaskNeedsAnswer:
		// Neither was the builder's failure, so the attempt does not count.
		ended, attempts = at, max(attempts-1, 0)
	}

	res, err := tx.ExecContext(ctx,
		`UPDATE tasks SET status = ?, started_at = ?, ended_at = ?, attempts = ?,
		        run_ids = CASE WHEN ? IS NULL THEN run_ids ELSE json_insert(run_ids, '$[#]', ?) END
		 WHERE id = ? AND status = ?`,
		to, started, ended, attempts, newRun, newRun, taskID, from)
	if err != nil {
		return "", fmt.Errorf("intent: move task %d: %w", taskID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return "", fmt.Errorf("intent: move task %d: %w", taskID, err)
	} else if n == 0 {
		return "", refuse(refusal.Conflict, "The task moved meanwhile: it is no longer %s.", from)
	}
	if err := stampMove(ctx, tx, now, taskID, from, to, ev); err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO task_events (task_id, at, from_status, to_status, reason, run_id, actor, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		taskID, at.Int64, from, to, ev.Reason, ev.RunID, ev.Actor, ev.Outcome); err != nil {
		return "", fmt.Errorf("intent: move task %d: %w", taskID, err)
	}
	// A question or a failure tells the owner, in the same transaction.
	if err := taskNotice(ctx, tx, now, taskID, to, ev); err != nil {
		return "", err
	}
	return from, nil
}

// intentMoves is the table of allowed moves of an intent, from → to.
var intentMoves = map[IntentStatus][]IntentStatus{
	IntentDraft:   {IntentRunning, IntentWithdrawn},
	IntentRunning: {IntentStopped, IntentDone},
	IntentStopped: {IntentRunning, IntentWithdrawn, IntentDone},
}

// canMoveIntent reports whether the table allows an intent to move from one
// status to another.
func canMoveIntent(from, to IntentStatus) bool { return slices.Contains(intentMoves[from], to) }

// moveIntent is the only writer of intents.status and stop_reason, and it
// writes the intent_events row in the caller's transaction. A move to
// stopped keeps the reason; running again clears it.
func moveIntent(ctx context.Context, tx *sqlx.Tx, now time.Time, intentID int64, to IntentStatus, reason string) error {
	if !to.known() {
		return refuse(refusal.Invalid, "There is no intent status %q.", to)
	}
	var cur struct {
		Status     IntentStatus `db:"status"`
		StopReason string       `db:"stop_reason"`
	}
	err := tx.GetContext(ctx, &cur, `SELECT status, stop_reason FROM intents WHERE id = ?`, intentID)
	if errors.Is(err, sql.ErrNoRows) {
		return refuse(refusal.NotFound, "There is no intent %d.", intentID)
	}
	if err != nil {
		return fmt.Errorf("intent: move intent %d: %w", intentID, err)
	}
	from := cur.Status
	if from == to {
		return refuse(refusal.Conflict, "An intent cannot move from %s to %s: it is %s already.", from, to, to)
	}
	if !canMoveIntent(from, to) {
		return refuse(refusal.Conflict, "An intent cannot move from %s to %s.", from, to)
	}
	stopReason := cur.StopReason
	switch to {
	case IntentStopped:
		stopReason = reason
	case IntentRunning:
		stopReason = ""
	}
	at := now.UnixMilli()
	res, err := tx.ExecContext(ctx,
		`UPDATE intents SET status = ?, stop_reason = ?, updated_at = ? WHERE id = ? AND status = ?`,
		to, stopReason, at, intentID, from)
	if err != nil {
		return fmt.Errorf("intent: move intent %d: %w", intentID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("intent: move intent %d: %w", intentID, err)
	} else if n == 0 {
		return refuse(refusal.Conflict, "The intent moved meanwhile: it is no longer %s.", from)
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO intent_events (intent_id, at, from_status, to_status, reason) VALUES (?, ?, ?, ?, ?)`,
		intentID, at, from, to, reason); err != nil {
		return fmt.Errorf("intent: move intent %d: %w", intentID, err)
	}
	// Done, or stopped by a cap or the provider, tells the owner.
	return intentNotice(ctx, tx, now, intentID, to, reason)
}

// stampMove writes what a move carries besides its status: the completing
// verdict's record, the builder's question, the person's answer, and the
// planning model's advice, which goes when the task completes or is revised.
func stampMove(ctx context.Context, tx *sqlx.Tx, now time.Time, taskID int64, from, to TaskStatus, ev Move) error {
	exec := func(query string, args ...any) error {
		if _, err := tx.ExecContext(ctx, query, args...); err != nil {
			return fmt.Errorf("intent: move task %d: %w", taskID, err)
		}
		return nil
	}
	switch {
	case to == TaskCompleted:
		c := ev.Completion
		if c == nil {
			c = &Completion{}
		}
		hashes := map[string]string{}
		for n, h := range c.ExampleHashes {
			hashes[strconv.Itoa(n)] = h
		}
		var release any
		if c.ReleaseID != "" {
			release = c.ReleaseID
		}
		return exec(`UPDATE tasks SET rev_after = ?, release_id = ?, actual_lines = ?, example_hashes = ?, advice = '', question = ''
			WHERE id = ?`, c.RevAfter, release, c.ActualLines, jsonText(hashes), taskID)
	case to == TaskInProgress && ev.RevBefore != "":
		return exec(`UPDATE tasks SET rev_before = ? WHERE id = ? AND rev_before = ''`, ev.RevBefore, taskID)
	case to == TaskNeedsAnswer:
		if strings.TrimSpace(ev.Question) == "" {
			return refuse(refusal.Invalid, "A task moves to needs-answer only with its question.")
		}
		return exec(`UPDATE tasks SET question = ? WHERE id = ?`, ev.Question, taskID)
	case from == TaskNeedsAnswer && to == TaskInQueue:
		if strings.TrimSpace(ev.Answer) == "" {
			return refuse(refusal.Invalid, "Write an answer to the question first.")
		}
		return exec(`UPDATE tasks SET answers = json_insert(answers, '$[#]', json_object('question', question, 'answer', ?, 'at', ?)),
			question = '' WHERE id = ?`, ev.Answer, now.UTC().Format(time.RFC3339Nano), taskID)
	case from == TaskFailed && to == TaskProposed:
		return exec(`UPDATE tasks SET advice = '' WHERE id = ?`, taskID)
	}
	return nil
}
