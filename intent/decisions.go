package intent

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"autoapp/intent/plan"
	"autoapp/intent/refusal"
)

// MaxOpID is the longest operation id an owner's write may carry.
const MaxOpID = 100

// once applies one of the owner's writes under an operation id: when the id
// was recorded already for the same change (kind, subject and the values
// sent) the write happened before, and nothing changes; recorded for
// another, it is refused and nothing is written; otherwise write runs and
// the id is recorded with what was sent, in the same transaction.
func (s *Service) once(ctx context.Context, opID, kind, subject, sent string, write func(tx *sqlx.Tx, now time.Time) error) error {
	switch {
	case opID == "":
		return refuse(refusal.Invalid, "The change carries no operation id; reload the page and try again.")
	case len(opID) > MaxOpID:
		return refuse(refusal.Invalid, "The operation id is longer than %d characters.", MaxOpID)
	}
	now := s.now()
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("intent: %s: %w", kind, err)
	}
	defer tx.Rollback()
	sum := sha256.Sum256([]byte(sent))
	digest := hex.EncodeToString(sum[:])
	var first struct {
		Kind    string `db:"kind"`
		Subject string `db:"subject"`
		Sent    string `db:"sent"`
	}
	err = tx.GetContext(ctx, &first, `SELECT kind, subject, sent FROM operations WHERE op_id = ?`, opID)
	switch {
	case err == nil && (first.Kind != kind || first.Subject != subject || (first.Sent != "" && first.Sent != digest)):
		return refuse(refusal.Conflict, "Operation id %q was sent before for another change; nothing was written. Reload the page and try again.", opID)
	case err == nil:
		return nil
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("intent: %s: %w", kind, err)
	}
	if err := write(tx, now); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO operations (op_id, kind, subject, sent, at) VALUES (?, ?, ?, ?, ?)`,
		opID, kind, subject, digest, now.UnixMilli()); err != nil {
		return fmt.Errorf("intent: %s: %w", kind, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("intent: %s: %w", kind, err)
	}
	return nil
}

// checkModel validates a model reference; "" is no model.
func checkModel(ref string) error {
	if ref == "" {
		return nil
	}
	// ParseModelRef answers with a sentence for the person.
	if _, _, err := plan.ParseModelRef(ref); err != nil {
		return refuse(refusal.Invalid, "%s", err.Error())
	}
	return nil
}

// SetTaskModel sets the model the owner chose for a task; "" clears it, so
// the task runs on its tier's model. A completed or removed task keeps its
// model.
func (s *Service) SetTaskModel(ctx context.Context, opID string, taskID int64, model string) error {
	model = strings.TrimSpace(model)
	if err := checkModel(model); err != nil {
		return err
	}
	return s.once(ctx, opID, "set-task-model", strconv.FormatInt(taskID, 10), model, func(tx *sqlx.Tx, now time.Time) error {
		t, err := loadTask(ctx, tx, taskID)
		if err != nil {
			return err
		}
		if t.Status == TaskCompleted || t.Status == TaskRemoved {
			return refuse(refusal.Conflict, "Task %s is %s; its model no longer changes.", t.Slug, t.Status)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE tasks SET model = ? WHERE id = ?`, model, taskID); err != nil {
			return fmt.Errorf("intent: set task model: %w", err)
		}
		return nil
	})
}

// RemoveTask removes a task at the owner's request: a proposed task of a
// draft or a stopped intent, or an in-queue task of a stopped intent. A
// task another live task is blocked by stays until that one goes.
func (s *Service) RemoveTask(ctx context.Context, opID string, taskID int64) error {
	return s.once(ctx, opID, "remove-task", strconv.FormatInt(taskID, 10), "", func(tx *sqlx.Tx, now time.Time) error {
		t, err := loadTask(ctx, tx, taskID)
		if err != nil {
			return err
		}
		in, err := loadIntent(ctx, tx, t.IntentID)
		if err != nil {
			return err
		}
		switch in.Status {
		case IntentRunning:
			return refuse(refusal.Conflict, "Task %s cannot be removed while its intent runs; stop the intent first.", t.Slug)
		case IntentDone, IntentWithdrawn:
			return refuse(refusal.Conflict, "Task %s cannot be removed: its intent is %s.", t.Slug, in.Status)
		}
		switch {
		case t.Status == TaskProposed:
		case t.Status == TaskInQueue && in.Status == IntentStopped:
		case t.Status == TaskRemoved:
			return refuse(refusal.Conflict, "Task %s is removed already.", t.Slug)
		case t.Status == TaskFailed, t.Status == TaskInterrupted, t.Status == TaskNeedsAnswer:
			return refuse(refusal.Conflict, "Task %s is %s; it is removed only by withdrawing its intent. Run again, or ask the engineer to revise it.", t.Slug, t.Status)
		default:
			return refuse(refusal.Conflict, "Task %s is %s and cannot be removed.", t.Slug, t.Status)
		}
		var waiting []string
		if err := tx.SelectContext(ctx, &waiting,
			`SELECT slug FROM tasks
			 WHERE intent_id = ? AND id <> ? AND status <> 'removed'
			   AND EXISTS (SELECT 1 FROM json_each(tasks.blocked_by) WHERE value = ?)
			 ORDER BY slug`, t.IntentID, taskID, t.Slug); err != nil {
			return fmt.Errorf("intent: remove task: %w", err)
		}
		switch len(waiting) {
		case 0:
		case 1:
			return refuse(refusal.Conflict, "Task %s is blocked by %s; remove %s first.", waiting[0], t.Slug, waiting[0])
		default:
			return refuse(refusal.Conflict, "Tasks %s are blocked by %s; remove them first.", strings.Join(waiting, ", "), t.Slug)
		}
		_, err = moveTask(ctx, tx, now, taskID, TaskRemoved, Move{Reason: "the owner removed it", Actor: ActorOwner})
		return err
	})
}

// Withdraw withdraws a draft or a stopped intent: every task it has not
// completed is removed, and the intent is withdrawn, all at once.
func (s *Service) Withdraw(ctx context.Context, opID string, intentID int64) error {
	return s.once(ctx, opID, "withdraw", strconv.FormatInt(intentID, 10), "", func(tx *sqlx.Tx, now time.Time) error {
		in, err := loadIntent(ctx, tx, intentID)
		if err != nil {
			return err
		}
		if in.Status != IntentDraft && in.Status != IntentStopped {
			return refuse(refusal.Conflict, "Only a draft or a stopped intent can be withdrawn; this one is %s.", in.Status)
		}
		var ids []int64
		if err := tx.SelectContext(ctx, &ids,
			`SELECT id FROM tasks WHERE intent_id = ? AND status NOT IN ('completed', 'removed') ORDER BY id`,
			intentID); err != nil {
			return fmt.Errorf("intent: withdraw: %w", err)
		}
		for _, id := range ids {
			// A failed, interrupted or waiting task goes straight to removed:
			// the table allows it, so its history shows one event.
			if _, err := moveTask(ctx, tx, now, id, TaskRemoved, Move{Reason: "the intent was withdrawn", Actor: ActorOwner}); err != nil {
				return err
			}
		}
		if err := moveIntent(ctx, tx, now, intentID, IntentWithdrawn, "the owner withdrew it"); err != nil {
			return err
		}
		return s.journal.Withdrawn(ctx, tx, intentID, now)
	})
}

// Withdrawable says whether the owner may withdraw the intent now.
func (i Intent) Withdrawable() bool {
	return i.Status == IntentDraft || i.Status == IntentStopped
}

// Removable says whether the owner may remove the task as things stand:
// a proposed task of a draft or stopped intent, or a queued task of a
// stopped one. RemoveTask decides; this only spares the page a button
// that could never work.
func (d IntentDetail) Removable(t BacklogTask) bool {
	switch {
	case d.Status != IntentDraft && d.Status != IntentStopped:
		return false
	case t.Status == TaskProposed:
		return true
	case t.Status == TaskInQueue:
		return d.Status == IntentStopped
	}
	return false
}

// RunsOnWith is the model the task runs on when settings is the model
// chosen in Settings, and where it came from: its own ("task"), else its
// tier's ("tier quick"), else the Settings model ("settings"). Both are ""
// when none is set up. The page shows it and the executor runs on it.
func (t BacklogTask) RunsOnWith(settings string) (model, from string) {
	if t.RunsOn != "" {
		return t.RunsOn, t.RunsOnFrom
	}
	return plan.ModelFor("", t.Tier, nil, settings)
}

// ModelChangeable says whether the task's model can still be changed.
func (t BacklogTask) ModelChangeable() bool {
	return t.Status != TaskCompleted && t.Status != TaskRemoved
}

// Runnable says whether Run may be offered: a submitted draft without open
// questions, or a stopped intent, with something left to run and no task
// waiting for an answer. BeginRun decides; this only spares the page a
// button that could never work.
func (d IntentDetail) Runnable() bool {
	switch {
	case d.Status == IntentDraft && (d.SubmittedAt.IsZero() || len(d.Questions) > 0):
		return false
	case d.Status != IntentDraft && d.Status != IntentStopped:
		return false
	}
	left, completed := false, false
	for _, t := range d.Tasks {
		switch t.Status {
		case TaskNeedsAnswer:
			return false
		case TaskProposed, TaskInQueue, TaskFailed, TaskInterrupted:
			left = true
		case TaskCompleted:
			completed = true
		}
	}
	// A stopped intent whose every task completed runs to be finished and
	// delivered, as BeginRun allows.
	return left || (d.Status == IntentStopped && completed)
}
