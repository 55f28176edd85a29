package intent

import (
	"context"
	"time"

	"autoapp/migrations"
)

// Journal is the journal of the request an intent answers, as the
// intent's own writes keep it. Each method writes, through w and inside
// the intent's transaction, the entry that write makes on the request,
// and writes nothing for an intent that answers no request; an error it
// returns undoes the whole write. The requests implement it
// (request.Journal); NewService is given it once.
type Journal interface {
	// RunStarting is the guided gate and the run's entry, as the run of d
	// starts: a refusal refuses the run.
	RunStarting(ctx context.Context, w migrations.Within, d IntentDetail, at time.Time) error
	// Asked journals a builder's question (q.Answer "") or the owner's
	// answer to it, as the task's move records it.
	Asked(ctx context.Context, w migrations.Within, q TaskQuestion) error
	// FeedbackApplied withdraws the guided approval that applied feedback
	// voids.
	FeedbackApplied(ctx context.Context, w migrations.Within, intentID int64, at time.Time) error
	// Delivered journals the delivery, as the intent is marked done.
	Delivered(ctx context.Context, w migrations.Within, intentID int64, at time.Time) error
	// Withdrawn journals the owner's withdrawal of the intent.
	Withdrawn(ctx context.Context, w migrations.Within, intentID int64, at time.Time) error
}

// Collaborators are what the service's writes write beside their own rows,
// and who hears of them, given once to NewService: reading a method shows
// each call it makes to them.
type Collaborators struct {
	// Journal keeps the request each intent answers, in the intent's
	// transactions. Required.
	Journal Journal
	// Moved, when set, hears each task move MoveTask and AnswerTask
	// commit, once committed, in the mover's goroutine before the method
	// returns: the relationship index takes in an ended attempt's rows.
	Moved func(ctx context.Context, m TaskMoved)
}

// TaskQuestion is a builder's question (Answer "") or the person's answer
// to it, as the task's move records it.
type TaskQuestion struct {
	IntentID int64
	TaskID   int64
	Question string
	Answer   string
	At       time.Time
}
