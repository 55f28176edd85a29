package intent

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"autoapp/migrations"
)

// NoticeKind is why a notice tells the owner: what a run needs of them.
type NoticeKind string

// The kinds of notice.
const (
	NoticeQuestion NoticeKind = "question"
	NoticeFailed   NoticeKind = "failed"
	NoticeApproval NoticeKind = "approval"
	NoticeDone     NoticeKind = "done"
	NoticeCap      NoticeKind = "cap"
	NoticeProvider NoticeKind = "provider"
)

// NoticeKinds are every kind, in the order Settings lists them.
var NoticeKinds = []NoticeKind{NoticeQuestion, NoticeFailed, NoticeApproval, NoticeDone, NoticeCap, NoticeProvider}

// Title is the kind as a notification's title says it.
func (k NoticeKind) Title() string {
	switch k {
	case NoticeQuestion:
		return "A builder asks you"
	case NoticeFailed:
		return "A task failed"
	case NoticeApproval:
		return "A plan waits for your approval"
	case NoticeDone:
		return "An intent is done"
	case NoticeCap:
		return "A cap stopped a run"
	case NoticeProvider:
		return "The AI provider stopped a run"
	}
	return string(k)
}

// Notice is one moment a run needed the owner, as the notices table keeps
// it: written in the transaction of the move that made it.
type Notice struct {
	ID       int64      `db:"id" json:"id"`
	At       time.Time  `db:"-" json:"at"`
	Kind     NoticeKind `db:"kind" json:"kind"`
	AppID    string     `db:"app_id" json:"app"`
	IntentID int64      `db:"intent_id" json:"intent"`
	TaskID   int64      `db:"-" json:"task,omitempty"`
	Sentence string     `db:"sentence" json:"sentence"`
	// Link is the page to act on, from the console's root ("/backlog/…").
	Link string `db:"link" json:"link"`
}

// EventID is the notice's id as a receiver sees it, to drop a repeat.
func (n Notice) EventID() string { return fmt.Sprintf("autoapp-notice-%d", n.ID) }

// notify writes a notice in the caller's transaction.
func notify(ctx context.Context, tx *sqlx.Tx, now time.Time, n Notice) error {
	task := sql.NullInt64{Int64: n.TaskID, Valid: n.TaskID != 0}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO notices (at, kind, app_id, intent_id, task_id, sentence, link, next_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		now.UnixMilli(), n.Kind, n.AppID, n.IntentID, task, n.Sentence, n.Link, now.UnixMilli()); err != nil {
		return fmt.Errorf("intent: notice: %w", err)
	}
	return nil
}

// taskNotice is the notice a task's move makes, if any: a question it asked,
// or its failure.
func taskNotice(ctx context.Context, tx *sqlx.Tx, now time.Time, taskID int64, to TaskStatus, ev Move) error {
	if to != TaskNeedsAnswer && to != TaskFailed {
		return nil
	}
	var t struct {
		Slug     string `db:"slug"`
		IntentID int64  `db:"intent_id"`
		AppID    string `db:"app_id"`
	}
	if err := tx.GetContext(ctx, &t, `SELECT slug, intent_id, app_id FROM tasks WHERE id = ?`, taskID); err != nil {
		return fmt.Errorf("intent: notice: %w", err)
	}
	n := Notice{AppID: t.AppID, IntentID: t.IntentID, TaskID: taskID, Link: fmt.Sprintf("/backlog/intents/%d#needs-%s", t.IntentID, t.Slug)}
	if to == TaskNeedsAnswer {
		n.Kind, n.Sentence = NoticeQuestion, fmt.Sprintf("%s (%s) asks: %s", t.Slug, t.AppID, ev.Question)
	} else {
		n.Kind, n.Sentence = NoticeFailed, fmt.Sprintf("%s (%s) failed: %s", t.Slug, t.AppID, strings.TrimSpace(ev.Reason))
	}
	return notify(ctx, tx, now, n)
}

// intentNotice is the notice an intent's move makes, if any: done, or
// stopped by a cap or by the AI provider. A stop the owner made, a pause
// and a restart tell nobody anything new; a task's question or failure
// told already.
func intentNotice(ctx context.Context, tx *sqlx.Tx, now time.Time, intentID int64, to IntentStatus, reason string) error {
	var kind NoticeKind
	var sentence string
	switch {
	case to == IntentDone:
		kind, sentence = NoticeDone, "Intent #%d (%s) is done: its delivery is ready."
	case to == IntentStopped && CapReached(reason):
		kind, sentence = NoticeCap, reason
	case to == IntentStopped && ProviderStopped(reason):
		kind, sentence = NoticeProvider, reason
	default:
		return nil
	}
	var appID string
	if err := tx.GetContext(ctx, &appID, `SELECT app_id FROM intents WHERE id = ?`, intentID); err != nil {
		return fmt.Errorf("intent: notice: %w", err)
	}
	if kind == NoticeDone {
		sentence = fmt.Sprintf(sentence, intentID, appID)
	}
	return notify(ctx, tx, now, Notice{Kind: kind, AppID: appID, IntentID: intentID, Sentence: sentence, Link: fmt.Sprintf("/backlog/intents/%d", intentID)})
}

// ProviderStopped says reason is the executor's for a run the AI provider
// stopped: it failed a turn, or could not be reached.
func ProviderStopped(reason string) bool {
	return strings.HasPrefix(reason, "The AI provider returned an error") || strings.HasSuffix(reason, "Run again once the provider answers.")
}

// Notices reads the notices and keeps the webhook's outbox.
type Notices struct {
	db  *migrations.DB
	now func() time.Time
}

// NewNotices is the notices of the intents store.
func NewNotices(db *migrations.DB, now func() time.Time) *Notices {
	return &Notices{db: db, now: now}
}

type noticeRow struct {
	Notice
	AtMs int64         `db:"at"`
	Task sql.NullInt64 `db:"task_id"`
}

func (r noticeRow) notice() Notice {
	n := r.Notice
	n.At, n.TaskID = time.UnixMilli(r.AtMs), r.Task.Int64
	return n
}

const noticeColumns = `id, at, kind, app_id, intent_id, task_id, sentence, link`

// After are the notices after id, oldest first, at most limit.
func (s *Notices) After(ctx context.Context, id int64, limit int) ([]Notice, error) {
	var rows []noticeRow
	if err := s.db.Read.SelectContext(ctx, &rows,
		`SELECT `+noticeColumns+` FROM notices WHERE id > ? ORDER BY id LIMIT ?`, id, limit); err != nil {
		return nil, fmt.Errorf("intent: notices: %w", err)
	}
	out := make([]Notice, len(rows))
	for i, r := range rows {
		out[i] = r.notice()
	}
	return out, nil
}

// Last is the newest notice's id, 0 with none.
func (s *Notices) Last(ctx context.Context) (int64, error) {
	var id int64
	if err := s.db.Read.GetContext(ctx, &id, `SELECT coalesce(max(id), 0) FROM notices`); err != nil {
		return 0, fmt.Errorf("intent: notices: %w", err)
	}
	return id, nil
}

// Pending is a notice the webhook owes, with how often it was tried.
type Pending struct {
	Notice
	Attempts int
}

// Due are the notices whose sending is due now, oldest first.
func (s *Notices) Due(ctx context.Context, limit int) ([]Pending, error) {
	var rows []struct {
		noticeRow
		Attempts int `db:"attempts"`
	}
	if err := s.db.Read.SelectContext(ctx, &rows,
		`SELECT `+noticeColumns+`, attempts FROM notices WHERE send_state = 'pending' AND next_at <= ? ORDER BY id LIMIT ?`,
		s.now().UnixMilli(), limit); err != nil {
		return nil, fmt.Errorf("intent: notices due: %w", err)
	}
	out := make([]Pending, len(rows))
	for i, r := range rows {
		out[i] = Pending{Notice: r.notice(), Attempts: r.Attempts}
	}
	return out, nil
}

// The states of a notice's sending.
const (
	SendSent    = "sent"
	SendSkipped = "skipped"
	SendGivenUp = "given-up"
)

// Sent records that notice id was sent, or skipped: no webhook wanted it.
func (s *Notices) Sent(ctx context.Context, id int64, state string) error {
	tried := 0
	if state == SendSent {
		tried = 1
	}
	if _, err := s.db.Write.ExecContext(ctx,
		`UPDATE notices SET send_state = ?, sent_at = ?, attempts = attempts + ? WHERE id = ? AND send_state = 'pending'`,
		state, s.now().UnixMilli(), tried, id); err != nil {
		return fmt.Errorf("intent: notice %d sent: %w", id, err)
	}
	return nil
}

// Failed records a failed send of notice id, to be tried again at next,
// or given up when next is zero.
func (s *Notices) Failed(ctx context.Context, id int64, sentence string, next time.Time) error {
	state, nextAt := "pending", next.UnixMilli()
	if next.IsZero() {
		state, nextAt = SendGivenUp, s.now().UnixMilli()
	}
	if _, err := s.db.Write.ExecContext(ctx,
		`UPDATE notices SET send_state = ?, attempts = attempts + 1, next_at = ?, last_error = ? WHERE id = ? AND send_state = 'pending'`,
		state, nextAt, sentence, id); err != nil {
		return fmt.Errorf("intent: notice %d failed: %w", id, err)
	}
	return nil
}

// Outbox is how the webhook's sending stands, for Settings: how many
// notices wait and were given up, and the last failure.
type Outbox struct {
	Pending, GivenUp int
	LastError        string
}

// Outbox reads how the sending stands.
func (s *Notices) Outbox(ctx context.Context) (Outbox, error) {
	var o Outbox
	if err := s.db.Read.GetContext(ctx, &o.Pending, `SELECT count(*) FROM notices WHERE send_state = 'pending'`); err != nil {
		return o, fmt.Errorf("intent: outbox: %w", err)
	}
	if err := s.db.Read.GetContext(ctx, &o.GivenUp, `SELECT count(*) FROM notices WHERE send_state = 'given-up'`); err != nil {
		return o, fmt.Errorf("intent: outbox: %w", err)
	}
	err := s.db.Read.GetContext(ctx, &o.LastError,
		`SELECT last_error FROM notices WHERE last_error <> '' AND send_state IN ('pending', 'given-up') ORDER BY id DESC LIMIT 1`)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return o, fmt.Errorf("intent: outbox: %w", err)
	}
	return o, nil
}
