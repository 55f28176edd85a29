package request

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"autoapp/intent"
)

// Latest is the application's newest request, and false when it has none.
func (s *Service) Latest(ctx context.Context, appID string) (State, bool, error) {
	var id int64
	err := s.db.Read.GetContext(ctx, &id, `SELECT id FROM requests WHERE app_id = ? ORDER BY id DESC LIMIT 1`, appID)
	if errors.Is(err, sql.ErrNoRows) {
		return State{}, false, nil
	}
	if err != nil {
		return State{}, false, fmt.Errorf("request: latest: %w", err)
	}
	st, err := s.State(ctx, id)
	return st, err == nil, err
}

// Sync brings the journal up to what the engineer did in a chat turn: it
// links the draft the engineer opened for this request, records the
// questions the analysis asks, and records a newly submitted plan. It is
// called when a chat turn ends; calling it again changes nothing.
func (s *Service) Sync(ctx context.Context, id int64) (State, error) {
	st, err := s.State(ctx, id)
	if err != nil {
		return State{}, err
	}
	if st.IntentID == 0 {
		var intentID int64
		err := s.db.Read.GetContext(ctx, &intentID,
			`SELECT i.id FROM intents i WHERE i.app_id = ? AND i.status = 'draft' AND i.created_at >= ?
			   AND NOT EXISTS (SELECT 1 FROM requests r WHERE r.intent_id = i.id)
			 ORDER BY i.id DESC LIMIT 1`, st.AppID, st.CreatedAt.UnixMilli())
		if errors.Is(err, sql.ErrNoRows) {
			return st, nil
		}
		if err != nil {
			return State{}, fmt.Errorf("request: sync: %w", err)
		}
		if st, err = s.Link(ctx, id, intentID); err != nil {
			return State{}, err
		}
	}
	d, err := s.backlog.Get(ctx, st.IntentID)
	if err != nil {
		return State{}, err
	}
	// The analysis's questions; a builder's (Task) are journaled as asked.
	// One the owner answered since the engineer last wrote the analysis is
	// not asked again: the analysis lists it still only because it was
	// not written since.
	open := st.OpenQuestions()
	for _, q := range d.Questions {
		if slices.ContainsFunc(open, func(o Said) bool { return o.Task == 0 && o.Text == q }) {
			continue
		}
		if st.answeredSince(q, d.UpdatedAt) {
			continue
		}
		if st, err = s.Question(ctx, id, q); err != nil {
			return State{}, err
		}
		open = st.OpenQuestions()
	}
	// A submitted draft, or a stopped intent whose revised plan was
	// submitted since its last change, is a plan to record.
	resubmitted := d.Status == intent.IntentStopped && !d.SubmittedAt.Before(d.UpdatedAt)
	if !d.SubmittedAt.IsZero() && (d.Status == intent.IntentDraft || resubmitted) {
		if st, err = s.PlanSubmitted(ctx, id); err != nil {
			return State{}, err
		}
	}
	return st, nil
}

// OpDone says whether an owner write with this operation id was taken
// already: a repeated submit must not start a second chat turn either.
func (s *Service) OpDone(ctx context.Context, opID string) (bool, error) {
	var n int
	if err := s.db.Read.GetContext(ctx, &n, `SELECT count(*) FROM request_ops WHERE op_id = ?`, opID); err != nil {
		return false, fmt.Errorf("request: op: %w", err)
	}
	return n > 0, nil
}
