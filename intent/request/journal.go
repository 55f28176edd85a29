package request

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"autoapp/intent"
	"autoapp/intent/refusal"
	"autoapp/migrations"
)

// The bodies of the journal's entries, by kind, as JSON.
type (
	requestBody struct {
		Text string `json:"text"` // byte for byte as typed
		Mode string `json:"mode"`
	}
	textBody struct {
		Text string `json:"text"`
	}
	// questionBody is a question of the engineer: of the analysis, or of
	// the builder of a task (Task).
	questionBody struct {
		Text string `json:"text"`
		Task int64  `json:"task,omitempty"`
	}
	// answerBody is an answer of the owner to the question entry at
	// revision Question, asked for task Task when a builder asked. An
	// answer from before answers were linked has neither: it answered
	// every question asked before it.
	answerBody struct {
		Text     string `json:"text"`
		Question int    `json:"question,omitempty"`
		Task     int64  `json:"task,omitempty"`
	}
	planBody struct {
		IntentID int64  `json:"intent_id"`
		Hash     string `json:"hash"`
		planSnapshot
	}
	approvalBody struct {
		Hash string `json:"hash"`
		Plan int    `json:"plan"` // the revision of the plan entry approved
		// Voided, on an entry the host writes, withdraws the last
		// approval (Hash is then ""), saying why.
		Voided string `json:"voided,omitempty"`
		// Reason, on an entry the owner writes with no Hash, is why the
		// approval was taken back: ReasonRevoked.
		Reason string `json:"reason,omitempty"`
		// Owner, when set, is the owner's own version of the plan that
		// this approval approves (the engineer's plan with the owner's
		// changes): it is a plan version of its own.
		Owner *planSnapshot `json:"owner,omitempty"`
	}
	modeBody struct {
		Mode string `json:"mode"`
		// Voided, when the switch found an approval, withdraws it,
		// saying why.
		Voided string `json:"voided,omitempty"`
	}
	runBody struct {
		Hash string `json:"hash"` // the plan hash when the run started
	}
	deliveryBody struct{}
)

// planSnapshot is the plan a version journalled: its analysis (nil on a
// version journalled before the hash covered it) and its rows.
type planSnapshot struct {
	Analysis *planAnalysis `json:"analysis,omitempty"`
	Tasks    []planRow     `json:"tasks"`
}

// snapshot is a plan as a version journals it.
func snapshot(p planContent) planSnapshot {
	return planSnapshot{Analysis: &p.Analysis, Tasks: p.Tasks}
}

// entryRow is a request_journal row as SQLite holds it.
type entryRow struct {
	Revision int    `db:"revision"`
	Kind     Kind   `db:"kind"`
	Actor    string `db:"actor"`
	At       int64  `db:"at"`
	Body     string `db:"body"`
	// Via is where an act of the owner came from (insertEntry sets it);
	// "" on the engineer's and the host's entries.
	Via string `db:"via"`
}

// journal is a request's state folded from its entries, with what the
// approval check needs besides: each plan version's rows, and which plan
// entry the last approval approved.
type journal struct {
	State
	snapshots    map[int]planSnapshot
	approvedPlan int
	// voided is why the host withdrew the last approval, if it did;
	// revoked says the owner withdrew it.
	voided  string
	revoked bool
}

// load reads a request and folds its journal, in the caller's transaction.
func load(ctx context.Context, tx migrations.Within, id int64) (journal, error) {
	var r struct {
		AppID     string        `db:"app_id"`
		IntentID  sql.NullInt64 `db:"intent_id"`
		CreatedAt int64         `db:"created_at"`
	}
	err := sqlx.GetContext(ctx, tx, &r, `SELECT app_id, intent_id, created_at FROM requests WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return journal{}, refuse(refusal.NotFound, "There is no request %d.", id)
	}
	if err != nil {
		return journal{}, fmt.Errorf("request: request %d: %w", id, err)
	}
	var rows []entryRow
	if err := sqlx.SelectContext(ctx, tx, &rows,
		`SELECT revision, kind, actor, at, body, via FROM request_journal WHERE request_id = ? ORDER BY revision`,
		id); err != nil {
		return journal{}, fmt.Errorf("request: journal of request %d: %w", id, err)
	}
	j := journal{
		State:     State{ID: id, AppID: r.AppID, IntentID: r.IntentID.Int64, CreatedAt: time.UnixMilli(r.CreatedAt)},
		snapshots: map[int]planSnapshot{},
	}
	for _, e := range rows {
		if err := j.apply(e); err != nil {
			return journal{}, err
		}
	}
	return j, nil
}

// apply folds one entry into the state.
func (j *journal) apply(e entryRow) error {
	decode := func(v any) error {
		if err := json.Unmarshal([]byte(e.Body), v); err != nil {
			return fmt.Errorf("request: request %d, revision %d: the %s entry is not the JSON it should be: %w",
				j.ID, e.Revision, e.Kind, err)
		}
		return nil
	}
	said := func(text string) Said {
		return Said{Revision: e.Revision, Actor: e.Actor, Text: text, At: time.UnixMilli(e.At), Via: e.Via}
	}
	j.Revision = e.Revision
	switch e.Kind {
	case KindRequest:
		var b requestBody
		if err := decode(&b); err != nil {
			return err
		}
		j.Text, j.Mode, j.Via = b.Text, b.Mode, e.Via
	case KindMessage:
		var b textBody
		if err := decode(&b); err != nil {
			return err
		}
		j.Messages = append(j.Messages, said(b.Text))
	case KindQuestion:
		var b questionBody
		if err := decode(&b); err != nil {
			return err
		}
		q := said(b.Text)
		q.Task = b.Task
		j.Questions = append(j.Questions, q)
	case KindAnswer:
		var b answerBody
		if err := decode(&b); err != nil {
			return err
		}
		a := said(b.Text)
		a.Question, a.Task = b.Question, b.Task
		j.Answers = append(j.Answers, a)
	case KindPlan:
		var b planBody
		if err := decode(&b); err != nil {
			return err
		}
		j.Plans = append(j.Plans, PlanVersion{Revision: e.Revision, Hash: b.Hash})
		j.snapshots[e.Revision] = b.planSnapshot
	case KindApproval:
		var b approvalBody
		if err := decode(&b); err != nil {
			return err
		}
		j.Approved, j.approvedPlan, j.voided = b.Hash, b.Plan, b.Voided
		j.revoked = b.Reason == ReasonRevoked
		if b.Owner != nil {
			j.Plans = append(j.Plans, PlanVersion{Revision: e.Revision, Hash: b.Hash})
			j.snapshots[e.Revision] = *b.Owner
			j.approvedPlan = e.Revision
		}
	case KindMode:
		var b modeBody
		if err := decode(&b); err != nil {
			return err
		}
		j.Mode = b.Mode
		if b.Voided != "" {
			j.Approved, j.approvedPlan, j.voided, j.revoked = "", 0, b.Voided, false
		}
	case KindRun:
		j.Ran = true
	case KindDelivery:
		j.Delivered = true
	case KindWithdrawn:
		j.Withdrawn = true
	default:
		return fmt.Errorf("request: request %d, revision %d: unknown kind %q", j.ID, e.Revision, e.Kind)
	}
	return nil
}

// approval says whether the last approval holds against the intent's plan
// now, and when it does not, what changed since.
func (j journal) approval(now planContent, current string) Approval {
	if j.Approved == "" {
		return Approval{Voided: j.voided, Revoked: j.revoked}
	}
	last, _ := j.LastPlan()
	if current == j.Approved && last.Hash == j.Approved {
		return Approval{Valid: true}
	}
	parts := changes(j.snapshots[j.approvedPlan], now)
	if last.Hash != j.Approved {
		parts = append(parts, "A new plan was submitted.")
	}
	return Approval{Voided: sentence(parts, "The plan changed since it was approved.")}
}

// insertEntry appends one entry at the given revision; UNIQUE(request_id,
// revision) makes a second writer of the same revision fail.
func insertEntry(ctx context.Context, tx migrations.Within, id int64, e *entryRow) error {
	// The owner's entries, and the run the owner's Run starts, say where
	// the act came from.
	if e.Actor == ActorOwner || e.Kind == KindRun {
		e.Via = string(intent.ViaOf(ctx))
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO request_journal (request_id, revision, kind, actor, at, body, via) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		id, e.Revision, e.Kind, e.Actor, e.At, e.Body, e.Via); err != nil {
		return fmt.Errorf("request: request %d: journal %s: %w", id, e.Kind, err)
	}
	return nil
}

// replay answers a repeated operation id with the state its first write
// answered. The id must have been used for the same kind of write on the
// same request (any request when id is 0, for Create), and, when same is
// set, with the same words: same says whether the first write's entry
// body records what this one sends. A reused id that sends something else
// is refused, and nothing is written.
//
// differs is the sentence (a format taking the id) for a body that is not
// the same; "" is otherWords.
func replay(ctx context.Context, tx *sqlx.Tx, opID string, id int64, kind Kind, same func(body string) bool, differs string) (State, bool, error) {
	var r struct {
		RequestID int64  `db:"request_id"`
		Kind      Kind   `db:"kind"`
		Body      string `db:"body"`
		Result    string `db:"result"`
	}
	err := tx.GetContext(ctx, &r,
		`SELECT o.request_id, j.kind, j.body, o.result FROM request_ops o
		 JOIN request_journal j ON j.request_id = o.request_id AND j.revision = o.revision
		 WHERE o.op_id = ?`, opID)
	if errors.Is(err, sql.ErrNoRows) {
		return State{}, false, nil
	}
	if err != nil {
		return State{}, false, fmt.Errorf("request: operation %s: %w", opID, err)
	}
	if (id != 0 && r.RequestID != id) || r.Kind != kind {
		return State{}, false, refuse(refusal.Conflict, anotherChange, opID)
	}
	if same != nil && !same(r.Body) {
		return State{}, false, refuse(refusal.Conflict, cmp.Or(differs, otherWords), opID)
	}
	var st State
	if err := json.Unmarshal([]byte(r.Result), &st); err != nil {
		return State{}, false, fmt.Errorf("request: operation %s: its result is not the JSON it should be: %w", opID, err)
	}
	return st, true, nil
}

// The refusals of an operation id sent again with something else: for
// another change, and with other words or another mode.
const (
	anotherChange = "Operation id %q was sent before for another change; nothing was written. Reload the page and try again."
	otherWords    = "Operation id %q was sent before with other words or another mode; nothing was written. Reload the page and send it again."
)

// sameBody returns a check, for replay, that an entry's body decodes into
// the same value as sent.
func sameBody[T comparable](sent T) func(body string) bool {
	return func(body string) bool {
		var first T
		return json.Unmarshal([]byte(body), &first) == nil && first == sent
	}
}

// recordOp keeps an owner's operation id with the revision its entry got
// and the state it answered.
func recordOp(ctx context.Context, tx *sqlx.Tx, opID string, id int64, revision int, st State) error {
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO request_ops (op_id, request_id, revision, result) VALUES (?, ?, ?, ?)`,
		opID, id, revision, string(mustJSON(st))); err != nil {
		return fmt.Errorf("request: operation %s: %w", opID, err)
	}
	return nil
}
