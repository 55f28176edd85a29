package request

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"autoapp/intent"
	"autoapp/migrations"
)

// Journal is the requests' side of the intents' own writes (an
// intent.Journal): each method writes, inside the intent's transaction,
// the entry that write makes on the request the intent answers, and
// writes nothing for an intent that answers none. It holds nothing: what
// it reads, it reads in the transaction it is given.
type Journal struct{}

var _ intent.Journal = Journal{}

// Asked journals a builder's question (actor engineer) or the owner's
// answer to it (actor owner), linked to the question it answers, in the
// transaction of the task's move.
func (Journal) Asked(ctx context.Context, w migrations.Within, q intent.TaskQuestion) error {
	j, ok, err := intentJournal(ctx, w, q.IntentID)
	if err != nil || !ok {
		return err
	}
	e := entryRow{Revision: j.Revision + 1, Kind: KindQuestion, Actor: ActorEngineer, At: q.At.UnixMilli(),
		Body: string(mustJSON(questionBody{Text: q.Question, Task: q.TaskID}))}
	if q.Answer != "" {
		// The task's last open question; none when it was asked before
		// the journal took builders' questions.
		b := answerBody{Text: q.Answer, Task: q.TaskID}
		for _, o := range j.OpenQuestions() {
			if o.Task == q.TaskID {
				b.Question = o.Revision
			}
		}
		e.Kind, e.Actor, e.Body = KindAnswer, ActorOwner, string(mustJSON(b))
	}
	return insertEntry(ctx, w, j.ID, &e)
}

// RunStarting is the guided gate and the journal's run entry, in the
// transaction that starts the run of d: a guided request runs only once
// the owner approved its plan and the approval still holds against d, and
// the entry records the plan that runs.
func (Journal) RunStarting(ctx context.Context, w migrations.Within, d intent.IntentDetail, at time.Time) error {
	j, ok, err := intentJournal(ctx, w, d.ID)
	if err != nil || !ok {
		return err
	}
	if err := guidedGate(settled(j, d)); err != nil {
		return err
	}
	return insertEntry(ctx, w, j.ID, &entryRow{Revision: j.Revision + 1, Kind: KindRun, Actor: ActorHost,
		At: at.UnixMilli(), Body: string(mustJSON(runBody{Hash: PlanHash(d)}))})
}

// Delivered writes the delivery entry, in the transaction that marks the
// intent done; a journal that has it already takes nothing.
func (Journal) Delivered(ctx context.Context, w migrations.Within, intentID int64, at time.Time) error {
	j, ok, err := intentJournal(ctx, w, intentID)
	if err != nil || !ok {
		return err
	}
	if j.Delivered {
		return nil
	}
	return insertEntry(ctx, w, j.ID, &entryRow{Revision: j.Revision + 1, Kind: KindDelivery, Actor: ActorHost,
		At: at.UnixMilli(), Body: string(mustJSON(deliveryBody{}))})
}

// Withdrawn writes the withdrawal entry (actor owner), in the transaction
// of the intent's withdrawal.
func (Journal) Withdrawn(ctx context.Context, w migrations.Within, intentID int64, at time.Time) error {
	j, ok, err := intentJournal(ctx, w, intentID)
	if err != nil || !ok || j.Withdrawn {
		return err
	}
	return insertEntry(ctx, w, j.ID, &entryRow{Revision: j.Revision + 1, Kind: KindWithdrawn, Actor: ActorOwner,
		At: at.UnixMilli(), Body: "{}"})
}

// FeedbackApplied withdraws the approval of the request, in the
// transaction that applies the owner's feedback: the engineer revises the
// plan with it. A request with no approval is left as it is.
func (Journal) FeedbackApplied(ctx context.Context, w migrations.Within, intentID int64, at time.Time) error {
	j, ok, err := intentJournal(ctx, w, intentID)
	if err != nil || !ok {
		return err
	}
	if j.Approved == "" {
		return nil
	}
	return insertEntry(ctx, w, j.ID, &entryRow{Revision: j.Revision + 1, Kind: KindApproval, Actor: ActorHost,
		At: at.UnixMilli(), Body: string(mustJSON(approvalBody{Voided: FeedbackVoided}))})
}

// intentJournal is the journal of the request the intent answers, read in
// the caller's transaction, and false when it answers none.
func intentJournal(ctx context.Context, w migrations.Within, intentID int64) (journal, bool, error) {
	var id int64
	err := sqlx.GetContext(ctx, w, &id, `SELECT id FROM requests WHERE intent_id = ?`, intentID)
	if errors.Is(err, sql.ErrNoRows) {
		return journal{}, false, nil
	}
	if err != nil {
		return journal{}, false, fmt.Errorf("request: the request of intent %d: %w", intentID, err)
	}
	j, err := load(ctx, w, id)
	if err != nil {
		return journal{}, false, err
	}
	return j, true, nil
}
