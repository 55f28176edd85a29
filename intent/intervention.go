package intent

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"autoapp/intent/refusal"
)

// Interventions are what the person asks a running intent to do at its next
// safe boundary: feedback (stop, and let the engineer revise the plan with
// it) or a pause (stop, keeping everything; Run resumes). Submitting writes
// a receipt in the inbox and nothing else: it never waits for a run and
// never changes one. The executor applies the pending receipts at its
// boundaries.

// InterventionKind is feedback or pause.
type InterventionKind string

// The kinds of intervention.
const (
	InterventionFeedback InterventionKind = "feedback"
	InterventionPause    InterventionKind = "pause"
)

// Limits and sentences of interventions.
const (
	// MaxInterventionID is the longest request id, in bytes.
	MaxInterventionID = 200
	// MaxFeedback is the longest feedback, in characters.
	MaxFeedback = 20000
	// PausedByPerson is the stop reason of an applied pause.
	PausedByPerson = "Paused by the person."
	// StoppedForFeedback is the stop reason of applied feedback.
	StoppedForFeedback = "Stopped for your feedback: the engineer revises the plan with it in the next chat turn about this application."
)

// Receipt is one intervention as the inbox holds it. AppliedAt is set once
// the executor applied it; Held is the stop the intent was in already when
// it was applied (it is kept, not replaced).
type Receipt struct {
	ID            string           `json:"id"`
	IntentID      int64            `json:"intent"`
	Kind          InterventionKind `json:"kind"`
	Text          string           `json:"text"`
	Order         int64            `json:"order"`
	SubmittedAt   time.Time        `json:"submittedAt"`
	BoundaryPause bool             `json:"boundaryPauseRequested"`
	AppliedAt     *time.Time       `json:"appliedAt,omitempty"`
	Held          string           `json:"held,omitempty"`
	// ResumedAt is when the owner's Run continued the intent after the
	// receipt was applied.
	ResumedAt *time.Time `json:"resumedAt,omitempty"`
	// Via is where the submission came from: console, cli or mcp; "" for
	// one accepted before the launcher kept it.
	Via Via `json:"via"`
}

// Pending says the receipt waits for a boundary.
func (r Receipt) Pending() bool { return r.AppliedAt == nil }

// receiptRow is an interventions row joined with its application.
type receiptRow struct {
	Order         int64          `db:"ord"`
	IntentID      int64          `db:"intent_id"`
	ID            string         `db:"request_id"`
	Kind          string         `db:"kind"`
	Text          string         `db:"text"`
	SubmittedAt   int64          `db:"submitted_at"`
	BoundaryPause bool           `db:"boundary_pause"`
	AppliedAt     sql.NullInt64  `db:"applied_at"`
	Held          sql.NullString `db:"held"`
	ResumedAt     sql.NullInt64  `db:"resumed_at"`
	Via           string         `db:"via"`
}

func (r receiptRow) receipt() Receipt {
	rc := Receipt{ID: r.ID, IntentID: r.IntentID, Kind: InterventionKind(r.Kind), Text: r.Text, Order: r.Order,
		SubmittedAt: time.UnixMilli(r.SubmittedAt), BoundaryPause: r.BoundaryPause, Held: r.Held.String, Via: Via(r.Via)}
	if r.AppliedAt.Valid {
		t := time.UnixMilli(r.AppliedAt.Int64)
		rc.AppliedAt = &t
	}
	if r.ResumedAt.Valid {
		t := time.UnixMilli(r.ResumedAt.Int64)
		rc.ResumedAt = &t
	}
	return rc
}

const receiptColumns = `i.ord, i.intent_id, i.request_id, i.kind, i.text, i.submitted_at, i.boundary_pause, i.via,
	a.applied_at, a.held, a.resumed_at FROM interventions i LEFT JOIN intervention_applied a ON a.ord = i.ord`

// checkIntervention validates a submission; each refusal is a sentence.
func checkIntervention(requestID string, kind InterventionKind, text string) error {
	switch {
	case requestID == "":
		return refuse(refusal.Invalid, "The intervention carries no request id; give one, so that a retry is recognised.")
	case len(requestID) > MaxInterventionID:
		return refuse(refusal.Invalid, "The request id is longer than %d bytes.", MaxInterventionID)
	case !utf8.ValidString(requestID) || strings.ContainsFunc(requestID, unicode.IsControl):
		return refuse(refusal.Invalid, "The request id must be printable text.")
	}
	switch kind {
	case InterventionFeedback:
		if strings.TrimSpace(text) == "" {
			return refuse(refusal.Invalid, "Write the feedback first: it cannot be empty.")
		}
	case InterventionPause:
	default:
		return refuse(refusal.Invalid, "There is no intervention kind %q: use feedback or pause.", kind)
	}
	if !utf8.ValidString(text) {
		return refuse(refusal.Invalid, "The text is not valid UTF-8.")
	}
	if n := utf8.RuneCountInString(text); n > MaxFeedback {
		return refuse(refusal.Invalid, "The text has %d characters; keep it to %d.", n, MaxFeedback)
	}
	return nil
}

// SubmitIntervention writes one receipt in the running intent's inbox and
// returns it. The request id is an idempotency key over (id, kind, text):
// an identical retry returns the original receipt (replayed) and writes
// nothing, even once the intent stopped; the same id with another kind or
// text is refused as a conflict. Only a running intent takes a new one.
func (s *Interventions) SubmitIntervention(ctx context.Context, intentID int64, requestID string, kind InterventionKind, text string) (rc Receipt, replayed bool, err error) {
	if err := checkIntervention(requestID, kind, text); err != nil {
		return Receipt{}, false, err
	}
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return Receipt{}, false, fmt.Errorf("intent: intervention: %w", err)
	}
	defer tx.Rollback()
	var prior receiptRow
	err = tx.GetContext(ctx, &prior, `SELECT `+receiptColumns+` WHERE i.intent_id = ? AND i.request_id = ?`, intentID, requestID)
	switch {
	case err == nil:
		if InterventionKind(prior.Kind) != kind || prior.Text != text {
			return Receipt{}, false, refuse(refusal.Conflict,
				"Request id %q was used already for another %s on intent #%d; send this one with a new id.", requestID, prior.Kind, intentID)
		}
		return acceptance(prior.receipt()), true, nil
	case !errors.Is(err, sql.ErrNoRows):
		return Receipt{}, false, fmt.Errorf("intent: intervention: %w", err)
	}
	var status IntentStatus
	err = tx.GetContext(ctx, &status, `SELECT status FROM intents WHERE id = ?`, intentID)
	if errors.Is(err, sql.ErrNoRows) {
		return Receipt{}, false, refuse(refusal.NotFound, "There is no intent %d.", intentID)
	}
	if err != nil {
		return Receipt{}, false, fmt.Errorf("intent: intervention: %w", err)
	}
	if status != IntentRunning {
		return Receipt{}, false, refuse(refusal.Conflict,
			"Intent #%d is %s, not running: feedback and pause go to a running intent.", intentID, status)
	}
	now, via := s.now().UnixMilli(), ViaOf(ctx)
	res, err := tx.ExecContext(ctx,
		`INSERT INTO interventions (intent_id, request_id, kind, text, submitted_at, boundary_pause, via) VALUES (?, ?, ?, ?, ?, 1, ?)`,
		intentID, requestID, kind, text, now, via)
	if err != nil {
		return Receipt{}, false, fmt.Errorf("intent: intervention: %w", err)
	}
	ord, err := res.LastInsertId()
	if err != nil {
		return Receipt{}, false, fmt.Errorf("intent: intervention: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return Receipt{}, false, fmt.Errorf("intent: intervention: %w", err)
	}
	return Receipt{ID: requestID, IntentID: intentID, Kind: kind, Text: text, Order: ord,
		SubmittedAt: time.UnixMilli(now), BoundaryPause: true, Via: via}, false, nil
}

// acceptance is a receipt as a submission answers it: what the executor
// wrote later (applied, held, resumed) is not the submitter's.
func acceptance(r Receipt) Receipt {
	r.AppliedAt, r.Held, r.ResumedAt = nil, "", nil
	return r
}

// Interventions reads an intent's receipts, pending and applied, in order.
// It writes nothing.
func (s *Interventions) Interventions(ctx context.Context, intentID int64) (pending, applied []Receipt, err error) {
	// One read says both whether the intent is there (a row) and its
	// receipts (none: the one row has no order): an intent's page asks
	// every two seconds.
	var rows []struct {
		receiptRow
		Present int64 `db:"present"`
	}
	if err := s.db.Read.SelectContext(ctx, &rows,
		`SELECT n.id AS present, coalesce(i.ord, 0) AS ord, coalesce(i.intent_id, 0) AS intent_id, coalesce(i.request_id, '') AS request_id,
		        coalesce(i.kind, '') AS kind, coalesce(i.text, '') AS text, coalesce(i.submitted_at, 0) AS submitted_at,
		        coalesce(i.boundary_pause, 0) AS boundary_pause, coalesce(i.via, '') AS via, a.applied_at, a.held, a.resumed_at
		 FROM intents n LEFT JOIN interventions i ON i.intent_id = n.id LEFT JOIN intervention_applied a ON a.ord = i.ord
		 WHERE n.id = ? ORDER BY i.ord`, intentID); err != nil {
		return nil, nil, fmt.Errorf("intent: interventions: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil, refuse(refusal.NotFound, "There is no intent %d.", intentID)
	}
	for _, r := range rows {
		if r.Order == 0 {
			continue // the intent has no receipt
		}
		pending, applied = sortReceipt(r.receipt(), pending, applied)
	}
	return pending, applied, nil
}

// intentReceipts are an intent's receipts, pending and applied, in order,
// read in the caller's transaction.
func intentReceipts(ctx context.Context, tx *sqlx.Tx, intentID int64) (pending, applied []Receipt, err error) {
	var rows []receiptRow
	if err := tx.SelectContext(ctx, &rows, `SELECT `+receiptColumns+` WHERE i.intent_id = ? ORDER BY i.ord`, intentID); err != nil {
		return nil, nil, fmt.Errorf("intent: interventions: %w", err)
	}
	for _, r := range rows {
		pending, applied = sortReceipt(r.receipt(), pending, applied)
	}
	return pending, applied, nil
}

// sortReceipt adds a receipt to the pending or to the applied ones.
func sortReceipt(rc Receipt, pending, applied []Receipt) ([]Receipt, []Receipt) {
	if rc.Pending() {
		return append(pending, rc), applied
	}
	return pending, append(applied, rc)
}

// Applied is what applying an intent's pending interventions did.
type Applied struct {
	Receipts []Receipt
	// Stopped is true when the batch stopped the running intent, with
	// Reason its stop reason.
	Stopped bool
	Reason  string
}

// ApplyInterventions is the executor's safe boundary: every pending
// receipt of the intent not yet applied is applied, in order, and then the
// inbox acknowledges them. Applying writes the applied rows and their
// effect in one transaction: a running intent stops (for feedback, or
// paused by the person) and feedback voids the guided approval; an intent
// stopped already keeps its stop, recorded as held. Acknowledging is a
// second transaction: a crash between the two leaves receipts that are
// applied but not acknowledged, and the next call only acknowledges them.
// Call it only when no turn of the intent is in flight.
func (s *Interventions) ApplyInterventions(ctx context.Context, intentID int64) (Applied, error) {
	// An empty inbox, the usual case, costs one indexed read and no write.
	var waiting int
	if err := s.db.Read.GetContext(ctx, &waiting,
		`SELECT count(*) FROM interventions WHERE intent_id = ? AND done_at IS NULL`, intentID); err != nil {
		return Applied{}, fmt.Errorf("intent: apply interventions: %w", err)
	}
	if waiting == 0 {
		return Applied{}, nil
	}
	out, err := s.applyPending(ctx, intentID)
	if err != nil {
		return Applied{}, err
	}
	if s.afterApply != nil {
		s.afterApply()
	}
	if err := s.acknowledge(ctx, intentID); err != nil {
		return out, err
	}
	return out, nil
}

func (s *Interventions) applyPending(ctx context.Context, intentID int64) (Applied, error) {
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return Applied{}, fmt.Errorf("intent: apply interventions: %w", err)
	}
	defer tx.Rollback()
	var rows []receiptRow
	if err := tx.SelectContext(ctx, &rows, `SELECT `+receiptColumns+`
		WHERE i.intent_id = ? AND i.done_at IS NULL AND a.ord IS NULL ORDER BY i.ord`, intentID); err != nil {
		return Applied{}, fmt.Errorf("intent: apply interventions: %w", err)
	}
	if len(rows) == 0 {
		return Applied{}, nil
	}
	in, err := loadIntent(ctx, tx, intentID)
	if err != nil {
		return Applied{}, err
	}
	feedback := false
	for _, r := range rows {
		feedback = feedback || r.Kind == string(InterventionFeedback)
	}
	now := s.now()
	var out Applied
	held := ""
	if in.Status == IntentRunning {
		out.Stopped, out.Reason = true, PausedByPerson
		if feedback {
			out.Reason = StoppedForFeedback
		}
		if err := moveIntent(ctx, tx, now, intentID, IntentStopped, out.Reason); err != nil {
			return Applied{}, err
		}
	} else {
		held = in.StopReason
		if held == "" {
			held = fmt.Sprintf("The intent is %s.", in.Status)
		}
	}
	for _, r := range rows {
		if _, err := tx.ExecContext(ctx, `INSERT INTO intervention_applied (ord, intent_id, applied_at, held) VALUES (?, ?, ?, ?)`,
			r.Order, intentID, now.UnixMilli(), held); err != nil {
			return Applied{}, fmt.Errorf("intent: apply interventions: %w", err)
		}
		r.AppliedAt, r.Held = sql.NullInt64{Int64: now.UnixMilli(), Valid: true}, sql.NullString{String: held, Valid: true}
		out.Receipts = append(out.Receipts, r.receipt())
	}
	if feedback {
		if err := s.journal.FeedbackApplied(ctx, tx, intentID, now); err != nil {
			return Applied{}, err
		}
	}
	if err := tx.Commit(); err != nil {
		return Applied{}, fmt.Errorf("intent: apply interventions: %w", err)
	}
	return out, nil
}

// acknowledge marks done every receipt of the intent that is applied.
func (s *Interventions) acknowledge(ctx context.Context, intentID int64) error {
	if _, err := s.db.Write.ExecContext(ctx, `UPDATE interventions SET done_at = ?
		WHERE intent_id = ? AND done_at IS NULL AND ord IN (SELECT ord FROM intervention_applied WHERE intent_id = ?)`,
		s.now().UnixMilli(), intentID, intentID); err != nil {
		return fmt.Errorf("intent: acknowledge interventions: %w", err)
	}
	return nil
}

// ApplyAllInterventions is recovery's boundary: the pending receipts of
// every intent are applied (a running intent stops; a stopped one keeps
// its stop as held), and receipts applied before a crash are only
// acknowledged. It answers how many receipts it applied.
func (s *Interventions) ApplyAllInterventions(ctx context.Context) (int, error) {
	var ids []int64
	if err := s.db.Read.SelectContext(ctx, &ids,
		`SELECT DISTINCT intent_id FROM interventions WHERE done_at IS NULL ORDER BY intent_id`); err != nil {
		return 0, fmt.Errorf("intent: apply interventions: %w", err)
	}
	n := 0
	for _, id := range ids {
		a, err := s.ApplyInterventions(ctx, id)
		if err != nil {
			return n, err
		}
		n += len(a.Receipts)
	}
	return n, nil
}

// pendingFeedback refuses a run while feedback sent to the intent waits to
// be applied, or, applied, waits for a chat turn to revise the plan with
// it, in the caller's transaction.
func pendingFeedback(ctx context.Context, tx *sqlx.Tx, intentID int64) error {
	var n int
	if err := tx.GetContext(ctx, &n, `SELECT count(*) FROM interventions i LEFT JOIN intervention_applied a ON a.ord = i.ord
		WHERE i.intent_id = ? AND i.kind = 'feedback' AND i.done_at IS NULL AND a.ord IS NULL`, intentID); err != nil {
		return fmt.Errorf("intent: pending feedback: %w", err)
	}
	if n > 0 {
		return refuse(refusal.Conflict, "Feedback you sent to intent #%d has not been applied yet; it is applied at the run's next boundary or when the launcher starts again.", intentID)
	}
	// Applied feedback is for the engineer to revise the plan with: the
	// run waits until a chat turn has been given it.
	if err := tx.GetContext(ctx, &n, `SELECT count(*) FROM intervention_applied a JOIN interventions i ON i.ord = a.ord
		WHERE a.intent_id = ? AND i.kind = 'feedback' AND a.given_run = ''`, intentID); err != nil {
		return fmt.Errorf("intent: pending feedback: %w", err)
	}
	if n > 0 {
		return refuse(refusal.Conflict, "Your feedback on intent #%d waits for the engineer: send it a message on the Request page, and it revises the plan with your feedback; then Run.", intentID)
	}
	return nil
}

// Feedback is applied feedback a chat turn has not been given yet.
type Feedback struct {
	Order    int64  `db:"ord"`
	IntentID int64  `db:"intent_id"`
	Text     string `db:"text"`
}

// FeedbackForChat is the applied feedback on the application's intents
// that no chat turn has been given yet, oldest first; the answer is kept
// while the backlog does not change.
func (s *Interventions) FeedbackForChat(ctx context.Context, appID string) ([]Feedback, error) {
	return KeptRead(ctx, s.kept, "feedback for the chat "+appID, slices.Clone[[]Feedback], func(ctx context.Context) ([]Feedback, error) {
		return s.feedbackForChat(ctx, appID)
	})
}

func (s *Interventions) feedbackForChat(ctx context.Context, appID string) ([]Feedback, error) {
	var out []Feedback
	if err := s.db.Read.SelectContext(ctx, &out, `SELECT i.ord, i.intent_id, i.text
		FROM intervention_applied a JOIN interventions i ON i.ord = a.ord JOIN intents n ON n.id = i.intent_id
		WHERE n.app_id = ? AND i.kind = 'feedback' AND a.given_run = '' ORDER BY i.ord`, appID); err != nil {
		return nil, fmt.Errorf("intent: feedback for the chat: %w", err)
	}
	return out, nil
}

// FeedbackWaiting counts the intents whose applied feedback waits for
// the next chat turn about their application, for the rail's mark; the
// count is kept while the backlog does not change.
func (s *Interventions) FeedbackWaiting(ctx context.Context) (int, error) {
	return KeptRead(ctx, s.kept, "feedback waiting", same[int], s.feedbackWaiting)
}

func (s *Interventions) feedbackWaiting(ctx context.Context) (int, error) {
	var n int
	if err := s.db.Read.GetContext(ctx, &n, `SELECT COUNT(DISTINCT i.intent_id)
		FROM intervention_applied a JOIN interventions i ON i.ord = a.ord
		WHERE i.kind = 'feedback' AND a.given_run = ''`); err != nil {
		return 0, fmt.Errorf("intent: feedback waiting: %w", err)
	}
	return n, nil
}

// FeedbackGiven records that a chat turn was given the feedback; feedback
// given once is not given again.
func (s *Interventions) FeedbackGiven(ctx context.Context, orders []int64, runID string) error {
	for _, o := range orders {
		if _, err := s.db.Write.ExecContext(ctx,
			`UPDATE intervention_applied SET given_run = ? WHERE ord = ? AND given_run = ''`, runID, o); err != nil {
			return fmt.Errorf("intent: feedback given: %w", err)
		}
	}
	return nil
}
