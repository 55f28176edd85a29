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
