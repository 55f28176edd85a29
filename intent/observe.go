package intent

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// TaskMoved is one change of a task's status that MoveTask committed.
type TaskMoved struct {
	TaskID   int64
	From, To TaskStatus
	// RunID is the run the move names: the attempt that started or ended.
	RunID string
}

// AttemptEnded reports whether the move ended an attempt: the task left
// in-progress (completed, failed, queued again, interrupted, or waiting
// for an answer).
func (m TaskMoved) AttemptEnded() bool { return m.From == TaskInProgress }

// OnTaskMoved adds f to what hears every move MoveTask makes, once its
// transaction has committed, so f reads the task as it now is; f runs in
// the mover's goroutine, before MoveTask returns. Add every observer while
// the launcher is wired, before the service moves anything.
func (s *Service) OnTaskMoved(f func(ctx context.Context, m TaskMoved)) {
	s.taskMoved = append(s.taskMoved, f)
}

// toldMoved tells the observers of a committed move.
func (s *Service) toldMoved(ctx context.Context, m TaskMoved) {
	for _, f := range s.taskMoved {
		f(context.WithoutCancel(ctx), m)
	}
}

// taskStatus is the task's status as tx sees it.
func taskStatus(ctx context.Context, tx *sqlx.Tx, taskID int64) (TaskStatus, error) {
	var st TaskStatus
	err := tx.GetContext(ctx, &st, `SELECT status FROM tasks WHERE id = ?`, taskID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", refuse(ENotFound, "There is no task %d.", taskID)
	}
	if err != nil {
		return "", fmt.Errorf("intent: move task %d: %w", taskID, err)
	}
	return st, nil
}
