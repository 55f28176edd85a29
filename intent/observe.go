package intent

import (
	"context"
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

// toldMoved tells the service's Moved of a committed move.
func (s *Service) toldMoved(ctx context.Context, m TaskMoved) {
	if s.moved != nil {
		s.moved(context.WithoutCancel(ctx), m)
	}
}
