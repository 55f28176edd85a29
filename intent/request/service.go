package request

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"autoapp/intent"
	"autoapp/intent/refusal"
	"autoapp/migrations"
)

// Service keeps the requests of the applications in the intents store, and
// reads their intents through the backlog.
type Service struct {
	db      *migrations.DB
	backlog *intent.Service
	now     func() time.Time
}

// NewService builds the service over the intents store.
func NewService(db *migrations.DB, backlog *intent.Service, now func() time.Time) *Service {
	return &Service{db: db, backlog: backlog, now: now}
}

// write is one entry to append: by whom, and how to decide its body from
// the state. decide refuses with a sentence, or returns a nil body when
// the entry would record nothing new and nothing is written.
type write struct {
	id     int64
	actor  string
	kind   Kind
	decide func(j journal) (any, error)
	// The owner's writes only: the revision the page showed, and the
	// operation id.
	seen int
	opID string
	// sent, when set, says whether the body of the entry a repeated
	// operation id wrote records what this write sends (see replay).
	sent func(body string) bool
	// differs, when set, is the refusal (a format taking the operation
	// id) for a repeated id whose entry is not what sent checks for; ""
	// says it carried other words or another mode.
	differs string
	// then, when set, writes what else the entry starts, in its
	// transaction; a replayed operation does not call it.
	then Then
}

// entries is what a decide returns for a write of several entries of its
// kind, at consecutive revisions (the owner's answers to several
// questions).
type entries []any

// Then is what else an owner's words start, written in the transaction
// that journals them (a chat turn's row): either both hold or neither.
type Then func(ctx context.Context, w migrations.Within, requestID int64) error

// Say is the owner's words to the engineer, as the Request page sends them:
// a new request (ID 0, with its Mode), a later message, or an answer to
// the engineer's open questions.
type Say struct {
	AppID  string
	ID     int64
	Seen   int
	Op     string
	Text   string
	Mode   string
	Answer bool
	// Question is the id of the question an answer answers; 0 is the
	// oldest open question of the analysis.
	Question int
	// Answers, on an answer, are the owner's answers to several open
	// questions of the analysis at once, each by its question's id (the
	// Request page's answer box has one field a question): one entry
	// each, in one transaction; Text and Question are then unused.
	Answers []Answer
}

// Answer is the owner's answer to one question, by its id.
type Answer struct {
	Question int
	Text     string
}

// Say journals the owner's words and, in the same transaction, what they
// start (then). A repeated operation answers what the first wrote and
// starts nothing; replayed says so.
func (s *Service) Say(ctx context.Context, w Say, then Then) (st State, replayed bool, err error) {
	if done, err := s.OpDone(ctx, w.Op); err != nil || done {
		then = nil
		replayed = done
		if err != nil {
			return State{}, false, err
		}
	}
	switch {
	case w.ID == 0:
		st, err = s.create(ctx, w.AppID, w.Text, w.Mode, w.Op, then)
	case w.Answer && len(w.Answers) > 0:
		st, err = s.answers(ctx, w.ID, w.Seen, w.Op, w.Answers, then)
	case w.Answer:
		st, err = s.answer(ctx, w.ID, w.Seen, w.Op, w.Question, w.Text, then)
	default:
		st, err = s.message(ctx, w.ID, w.Seen, w.Op, w.Text, then)
	}
	return st, replayed, err
}

func checkOpID(opID string) error {
	switch {
	case opID == "":
		return refuse(refusal.Invalid, "The change carries no operation id; reload the page and try again.")
	case len(opID) > MaxOpID:
		return refuse(refusal.Invalid, "The operation id is longer than %d characters.", MaxOpID)
	}
	return nil
}

// checkText refuses an empty, invalid or overlong text; what names it in
// the sentence ("request", "message"). The text itself is kept as given.
func checkText(what, text string) error {
	switch {
	case strings.TrimSpace(text) == "":
		return refuse(refusal.Invalid, "The %s is empty; write something first.", what)
	case !utf8.ValidString(text):
		return refuse(refusal.Invalid, "The %s is not valid text.", what)
	case len(text) > MaxText:
		return refuse(refusal.Invalid, "The %s has %d bytes; it may have at most %d.", what, len(text), MaxText)
	}
	return nil
}

func checkMode(mode string) error {
	if mode == "" {
		return refuse(refusal.Invalid, "A new request needs its mode: autonomous or guided.")
	}
	if mode != ModeAutonomous && mode != ModeGuided {
		return refuse(refusal.Invalid, "There is no mode %q; a request is autonomous or guided.", mode)
	}
	return nil
}

// append writes one entry at the next revision in a transaction of its
// own. For the owner it first answers a repeated operation id with its
// first result, refuses a stale revision, and records the operation id
// with the state it answered, all in the same transaction.
func (s *Service) append(ctx context.Context, w write) (State, error) {
	owner := w.actor == ActorOwner
	if owner {
		if err := checkOpID(w.opID); err != nil {
			return State{}, err
		}
	}
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return State{}, fmt.Errorf("request: %s: %w", w.kind, err)
	}
	defer tx.Rollback()
	if owner {
		if st, ok, err := replay(ctx, tx, w.opID, w.id, w.kind, w.sent, w.differs); err != nil || ok {
			return st, err
		}
	}
	j, err := load(ctx, tx, w.id)
	if err != nil {
		return State{}, err
	}
	if owner && w.seen != j.Revision {
		return State{}, refuse(refusal.Conflict, "The request changed since you looked (revision %d, you saw %d); reload and try again.", j.Revision, w.seen)
	}
	body, err := w.decide(j)
	if err != nil {
		return State{}, err
	}
	if body == nil {
		return s.settle(ctx, j)
	}
	bodies, ok := body.(entries)
	if !ok {
		bodies = entries{body}
	}
	// The operation id is kept with the first entry it wrote.
	var e, first entryRow
	for i, body := range bodies {
		e = entryRow{Revision: j.Revision + 1, Kind: w.kind, Actor: w.actor, At: s.now().UnixMilli(), Body: string(mustJSON(body))}
		if err := insertEntry(ctx, tx, w.id, &e); err != nil {
			return State{}, err
		}
		if err := j.apply(e); err != nil {
			return State{}, err
		}
		if i == 0 {
			first = e
		}
	}
	if w.kind == KindMode {
		// requests.mode and the intent's mode follow the journal.
		if _, err := tx.ExecContext(ctx, `UPDATE requests SET mode = ? WHERE id = ?`, j.Mode, w.id); err != nil {
			return State{}, fmt.Errorf("request: mode: %w", err)
		}
		if j.IntentID != 0 {
			if err := intent.TakeMode(ctx, tx, j.IntentID, intent.Mode(j.Mode)); err != nil {
				return State{}, err
			}
		}
	}
	st, err := s.settle(ctx, j)
	if err != nil {
		return State{}, err
	}
	if owner {
		if err := recordOp(ctx, tx, w.opID, w.id, first.Revision, st); err != nil {
			return State{}, err
		}
	}
	if w.then != nil {
		if err := w.then(ctx, tx, w.id); err != nil {
			return State{}, err
		}
	}
	if err := tx.Commit(); err != nil {
		return State{}, fmt.Errorf("request: %s: %w", w.kind, err)
	}
	return st, nil
}

// settle completes a folded journal with the hash of the intent's plan now
// and whether the approval still holds against them.
func (s *Service) settle(ctx context.Context, j journal) (State, error) {
	if j.IntentID == 0 {
		return withApprovable(j.State, j.approvable(intent.IntentDetail{}, planContent{})), nil
	}
	d, err := s.backlog.Get(ctx, j.IntentID)
	if err != nil {
		return State{}, err
	}
	return settled(j, d), nil
}

// settled is settle with the intent d read.
func settled(j journal, d intent.IntentDetail) State {
	st := j.State
	now := content(d)
	st.Current = hashPlan(now)
	st.Approval = j.approval(now, st.Current)
	st.Revocable = j.revocable(d) == nil
	return withApprovable(st, j.approvable(d, now))
}

// Create records a new request of the owner for an application: its text
// kept byte for byte as typed, and its mode.
func (s *Service) Create(ctx context.Context, appID, text, mode, opID string) (State, error) {
	return s.create(ctx, appID, text, mode, opID, nil)
}

func (s *Service) create(ctx context.Context, appID, text, mode, opID string, then Then) (State, error) {
	if err := checkOpID(opID); err != nil {
		return State{}, err
	}
	if err := checkText("request", text); err != nil {
		return State{}, err
	}
	if err := checkMode(mode); err != nil {
		return State{}, err
	}
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return State{}, fmt.Errorf("request: create: %w", err)
	}
	defer tx.Rollback()
	if st, ok, err := replay(ctx, tx, opID, 0, KindRequest, sameBody(requestBody{Text: text, Mode: mode}), ""); err != nil || ok {
		return st, err
	}
	var n int
	if err := tx.GetContext(ctx, &n, `SELECT count(*) FROM apps WHERE id = ?`, appID); err != nil {
		return State{}, fmt.Errorf("request: create: %w", err)
	}
	if n == 0 {
		return State{}, refuse(refusal.NotFound, "There is no application %q.", appID)
	}
	now := s.now().UnixMilli()
	res, err := tx.ExecContext(ctx, `INSERT INTO requests (app_id, mode, created_at) VALUES (?, ?, ?)`, appID, mode, now)
	if err != nil {
		return State{}, fmt.Errorf("request: create: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return State{}, fmt.Errorf("request: create: %w", err)
	}
	e := entryRow{Revision: 1, Kind: KindRequest, Actor: ActorOwner, At: now, Body: string(mustJSON(requestBody{Text: text, Mode: mode}))}
	if err := insertEntry(ctx, tx, id, &e); err != nil {
		return State{}, err
	}
	j, err := load(ctx, tx, id)
	if err != nil {
		return State{}, err
	}
	// No intent is linked yet, so there is nothing to settle.
	if err := recordOp(ctx, tx, opID, id, e.Revision, j.State); err != nil {
		return State{}, err
	}
	if then != nil {
		if err := then(ctx, tx, id); err != nil {
			return State{}, err
		}
	}
	if err := tx.Commit(); err != nil {
		return State{}, fmt.Errorf("request: create: %w", err)
	}
	return j.State, nil
}

// Message records a later message of the owner.
func (s *Service) Message(ctx context.Context, id int64, seen int, opID, text string) (State, error) {
	return s.message(ctx, id, seen, opID, text, nil)
}

func (s *Service) message(ctx context.Context, id int64, seen int, opID, text string, then Then) (State, error) {
	if err := checkText("message", text); err != nil {
		return State{}, err
	}
	return s.append(ctx, write{id: id, seen: seen, opID: opID, actor: ActorOwner, kind: KindMessage, then: then,
		sent:   sameBody(textBody{Text: text}),
		decide: func(journal) (any, error) { return textBody{Text: text}, nil }})
}

// Answer records the owner's answer to the oldest open question of the
// analysis.
func (s *Service) Answer(ctx context.Context, id int64, seen int, opID, text string) (State, error) {
	return s.answer(ctx, id, seen, opID, 0, text, nil)
}

// AnswerQuestion records the owner's answer to one question of the
// analysis, by its id (the revision of its entry); 0 is the oldest open
// one. The answer closes that question only.
func (s *Service) AnswerQuestion(ctx context.Context, id int64, seen int, opID string, question int, text string) (State, error) {
	return s.answer(ctx, id, seen, opID, question, text, nil)
}

func (s *Service) answer(ctx context.Context, id int64, seen int, opID string, question int, text string, then Then) (State, error) {
	if err := checkText("answer", text); err != nil {
		return State{}, err
	}
	return s.append(ctx, write{id: id, seen: seen, opID: opID, actor: ActorOwner, kind: KindAnswer, then: then,
		sent: func(body string) bool {
			var first answerBody
			return json.Unmarshal([]byte(body), &first) == nil && first.Text == text && (question == 0 || first.Question == question)
		},
		decide: func(j journal) (any, error) {
			q, err := analysisQuestion(j.State, question)
			if err != nil {
				return nil, err
			}
			return answerBody{Text: text, Question: q.Revision}, nil
		}})
}

// answers records the owner's answers to open questions of the analysis,
// one entry each, linked to its question, in one transaction; a question
// left blank stays open. Every answer is checked before anything is
// written.
func (s *Service) answers(ctx context.Context, id int64, seen int, opID string, answers []Answer, then Then) (State, error) {
	var given []Answer
	for _, a := range answers {
		if strings.TrimSpace(a.Text) == "" {
			continue
		}
		if err := checkText("answer", a.Text); err != nil {
			return State{}, err
		}
		if slices.ContainsFunc(given, func(g Answer) bool { return g.Question == a.Question }) {
			return State{}, refuse(refusal.Invalid, "Question %d is answered twice in one send.", a.Question)
		}
		given = append(given, a)
	}
	if len(given) == 0 {
		return State{}, refuse(refusal.Invalid, "The answers are empty; answer at least one question first.")
	}
	first := given[0]
	return s.append(ctx, write{id: id, seen: seen, opID: opID, actor: ActorOwner, kind: KindAnswer, then: then,
		sent: func(body string) bool {
			var b answerBody
			return json.Unmarshal([]byte(body), &b) == nil && b.Text == first.Text && b.Question == first.Question
		},
		decide: func(j journal) (any, error) {
			var bodies entries
			for _, a := range given {
				if a.Question == 0 {
					return nil, refuse(refusal.Invalid, "An answer names no question; reload the page and try again.")
				}
				q, err := analysisQuestion(j.State, a.Question)
				if err != nil {
					return nil, err
				}
				bodies = append(bodies, answerBody{Text: a.Text, Question: q.Revision})
			}
			return bodies, nil
		}})
}

// AnswersText is the owner's answers as the engineer's turn reads them:
// each question it answers, then the answer.
func (s State) AnswersText(answers []Answer) string {
	var b strings.Builder
	for _, a := range answers {
		if strings.TrimSpace(a.Text) == "" {
			continue
		}
		for _, q := range s.Questions {
			if q.Revision == a.Question {
				fmt.Fprintf(&b, "You asked: %s\n", q.Text)
			}
		}
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(a.Text))
	}
	return strings.TrimSpace(b.String())
}

// analysisQuestion is the open question of the analysis the owner's
// answer answers: the one with this id, or the oldest open one for 0.
func analysisQuestion(st State, id int) (Said, error) {
	for _, q := range st.Questions {
		if id != 0 && q.Revision != id {
			continue
		}
		switch {
		case q.Task != 0 && id != 0:
			return Said{}, refuse(refusal.Conflict, "Question %d was asked by the builder of a task; answer it on the task.", id)
		case q.Task != 0:
			continue
		case st.answered(q) && id != 0:
			return Said{}, refuse(refusal.Conflict, "Question %d of request %d is answered already.", id, st.ID)
		case st.answered(q):
			continue
		}
		return q, nil
	}
	if id != 0 {
		return Said{}, refuse(refusal.NotFound, "Request %d has no question %d.", st.ID, id)
	}
	return Said{}, refuse(refusal.Conflict, "The engineer has no open question on request %d; send this as a message instead.", st.ID)
}

// SetMode changes the mode of the request, and of the intent that answers
// it, in one entry: a switch voids an approval the owner gave, so a guided
// plan is approved again in the mode it runs in. A delivered request keeps
// its mode, and a running intent the mode it started in.
func (s *Service) SetMode(ctx context.Context, id int64, seen int, opID, mode string) (State, error) {
	if err := checkMode(mode); err != nil {
		return State{}, err
	}
	return s.append(ctx, write{id: id, seen: seen, opID: opID, actor: ActorOwner, kind: KindMode,
		// The same switch sent again is the same, whether or not it voided
		// an approval the first time.
		sent: func(body string) bool {
			var first modeBody
			return json.Unmarshal([]byte(body), &first) == nil && first.Mode == mode
		},
		decide: func(j journal) (any, error) {
			switch {
			case j.Mode == mode:
				return nil, refuse(refusal.Conflict, "Request %d is %s already.", id, mode)
			case j.Delivered:
				return nil, refuse(refusal.Conflict, "Request %d is delivered; its mode can no longer change.", id)
			case j.Withdrawn:
				return nil, refuse(refusal.Conflict, "Request %d was withdrawn; its mode can no longer change.", id)
			}
			if j.IntentID != 0 {
				// A run keeps the mode it started in.
				d, err := s.backlog.Get(ctx, j.IntentID)
				if err != nil {
					return nil, err
				}
				if d.Status == intent.IntentRunning {
					return nil, refuse(refusal.Conflict, "Intent #%d is running; stop it before changing its mode.", d.ID)
				}
			}
			b := modeBody{Mode: mode}
			if j.Approved != "" {
				b.Voided = fmt.Sprintf("Switching the request to %s voided the approval.", mode)
			}
			return b, nil
		}})
}

// SetIntentMode is SetMode for the request the intent answers, as the
// intent's page sends it.
func (s *Service) SetIntentMode(ctx context.Context, intentID int64, seen int, opID, mode string) (State, error) {
	id, err := s.requestOf(ctx, intentID)
	if err != nil {
		return State{}, err
	}
	return s.SetMode(ctx, id, seen, opID, mode)
}

// Approve approves the last plan the engineer submitted, bound to its
// hash, when the rule allows it (see approvable: a guided request, a plan
// submitted and unchanged since, an intent planned or stopped); otherwise
// it refuses with the rule's sentence.
func (s *Service) Approve(ctx context.Context, id int64, seen int, opID string) (State, error) {
	return s.ApproveShown(ctx, id, seen, opID, "")
}

// ApproveShown is Approve from a page that showed the plan whose hash is
// shown (State.Current as the page read it): a plan that changed since,
// even by the owner's own change in another tab, is refused with a
// sentence, so the approval is of what the owner saw. "" checks nothing.
func (s *Service) ApproveShown(ctx context.Context, id int64, seen int, opID, shown string) (State, error) {
	return s.append(ctx, write{id: id, seen: seen, opID: opID, actor: ActorOwner, kind: KindApproval,
		sent: approving(true), differs: anotherChange,
		decide: func(j journal) (any, error) {
			var d intent.IntentDetail
			if j.IntentID != 0 {
				var err error
				if d, err = s.backlog.Get(ctx, j.IntentID); err != nil {
					return nil, err
				}
			}
			now := content(d)
			if err := j.approvable(d, now); err != nil {
				return nil, err
			}
			if shown != "" && hashPlan(now) != shown {
				return nil, refuse(refusal.Conflict, "The plan changed since you looked; reload the page and approve the plan it shows.")
			}
			last, _ := j.LastPlan()
			if h := hashPlan(now); h != last.Hash {
				// The owner's own change (a model, a removed task): the
				// approval is of that version, which it journals.
				own := snapshot(now)
				return approvalBody{Hash: h, Owner: &own}, nil
			}
			return approvalBody{Hash: last.Hash, Plan: last.Revision}, nil
		}})
}

// WithdrawApproval takes back the owner's approval of the plan of the
// request intent intentID answers, before Run: an approval entry with the
// reason "revoked". Run is then refused as for a plan never approved,
// until the owner approves again. It refuses by the rule of revocable.
func (s *Service) WithdrawApproval(ctx context.Context, intentID int64, seen int, opID string) (State, error) {
	id, err := s.requestOf(ctx, intentID)
	if err != nil {
		return State{}, err
	}
	return s.append(ctx, write{id: id, seen: seen, opID: opID, actor: ActorOwner, kind: KindApproval,
		sent: approving(false), differs: anotherChange,
		decide: func(j journal) (any, error) {
			d, err := s.backlog.Get(ctx, intentID)
			if err != nil {
				return nil, err
			}
			if err := j.revocable(d); err != nil {
				return nil, err
			}
			return approvalBody{Reason: ReasonRevoked}, nil
		}})
}

// approving is the replay check of an approval entry: approving and
// withdrawing both write one, and an operation id sent for one is refused
// for the other.
func approving(approve bool) func(body string) bool {
	return func(body string) bool {
		var first approvalBody
		return json.Unmarshal([]byte(body), &first) == nil && (first.Hash != "") == approve
	}
}

// requestOf is the id of the request an intent answers; the link, once
// made, never changes.
func (s *Service) requestOf(ctx context.Context, intentID int64) (int64, error) {
	var id int64
	err := s.db.Read.GetContext(ctx, &id, `SELECT id FROM requests WHERE intent_id = ?`, intentID)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, refuse(refusal.NotFound, "No request is answered by intent %d.", intentID)
	}
	if err != nil {
		return 0, fmt.Errorf("request: request of intent %d: %w", intentID, err)
	}
	return id, nil
}

// Link records the intent the engineer opened for the request. Linking the
// same intent again changes nothing; an intent answers one request of its
// own application.
func (s *Service) Link(ctx context.Context, id, intentID int64) (State, error) {
	d, err := s.backlog.Get(ctx, intentID)
	if err != nil {
		return State{}, err
	}
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return State{}, fmt.Errorf("request: link: %w", err)
	}
	defer tx.Rollback()
	j, err := load(ctx, tx, id)
	if err != nil {
		return State{}, err
	}
	switch {
	case j.IntentID == intentID:
		return s.settle(ctx, j)
	case j.IntentID != 0:
		return State{}, refuse(refusal.Conflict, "Request %d is answered by intent %d already.", id, j.IntentID)
	case d.AppID != j.AppID:
		return State{}, refuse(refusal.Invalid, "Intent %d belongs to %s, not to %s; it cannot answer request %d.", intentID, d.AppID, j.AppID, id)
	}
	var other int64
	err = tx.GetContext(ctx, &other, `SELECT id FROM requests WHERE intent_id = ?`, intentID)
	switch {
	case err == nil:
		return State{}, refuse(refusal.Conflict, "Intent %d answers request %d already.", intentID, other)
	case !errors.Is(err, sql.ErrNoRows):
		return State{}, fmt.Errorf("request: link: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE requests SET intent_id = ? WHERE id = ? AND intent_id IS NULL`, intentID, id); err != nil {
		return State{}, fmt.Errorf("request: link: %w", err)
	}
	if err := intent.TakeRequest(ctx, tx, intentID, intent.Mode(j.Mode), j.Text); err != nil {
		return State{}, err
	}
	j.IntentID = intentID
	st, err := s.settle(ctx, j)
	if err != nil {
		return State{}, err
	}
	if err := tx.Commit(); err != nil {
		return State{}, fmt.Errorf("request: link: %w", err)
	}
	return st, nil
}

// Question records a question of the engineer.
func (s *Service) Question(ctx context.Context, id int64, text string) (State, error) {
	if err := checkText("question", text); err != nil {
		return State{}, err
	}
	return s.append(ctx, write{id: id, actor: ActorEngineer, kind: KindQuestion,
		decide: func(journal) (any, error) { return questionBody{Text: text}, nil }})
}

// PlanSubmitted records the plan of the linked intent as a new version,
// with its hash, its analysis and its rows, once the intent is submitted. A plan the
// same as the last version is not recorded again.
func (s *Service) PlanSubmitted(ctx context.Context, id int64) (State, error) {
	return s.append(ctx, write{id: id, actor: ActorEngineer, kind: KindPlan,
		decide: func(j journal) (any, error) {
			if j.IntentID == 0 {
				return nil, refuse(refusal.Conflict, "Request %d has no intent yet; its plan is recorded once the engineer opens one.", id)
			}
			d, err := s.backlog.Get(ctx, j.IntentID)
			if err != nil {
				return nil, err
			}
			if d.SubmittedAt.IsZero() {
				return nil, refuse(refusal.Conflict, "The plan of intent %d is not submitted; it is recorded once it is.", j.IntentID)
			}
			p := content(d)
			h := hashPlan(p)
			if last, ok := j.LastPlan(); ok && last.Hash == h {
				return nil, nil
			}
			return planBody{IntentID: j.IntentID, Hash: h, planSnapshot: snapshot(p)}, nil
		}})
}

// Delivered records the delivery of the request, once: recording it again
// changes nothing.
func (s *Service) Delivered(ctx context.Context, id int64) (State, error) {
	return s.append(ctx, write{id: id, actor: ActorHost, kind: KindDelivery,
		decide: func(j journal) (any, error) {
			if j.Delivered {
				return nil, nil
			}
			return deliveryBody{}, nil
		}})
}

// State reads a request from its journal, with whether its approval still
// holds against the intent's plan.
func (s *Service) State(ctx context.Context, id int64) (State, error) {
	tx, err := s.db.Read.BeginTxx(ctx, nil)
	if err != nil {
		return State{}, fmt.Errorf("request: request %d: %w", id, err)
	}
	defer tx.Rollback()
	j, err := load(ctx, tx, id)
	if err != nil {
		return State{}, err
	}
	return s.settle(ctx, j)
}

// ForIntent reads the request an intent answers.
func (s *Service) ForIntent(ctx context.Context, intentID int64) (State, error) {
	id, err := s.requestOf(ctx, intentID)
	if err != nil {
		return State{}, err
	}
	return s.State(ctx, id)
}

// CanRun is the guided gate: a guided request runs only once the owner
// approved its plan and the approval still holds; an autonomous one is
// not held here.
func (s *Service) CanRun(ctx context.Context, id int64) error {
	st, err := s.State(ctx, id)
	if err != nil {
		return err
	}
	return guidedGate(st)
}

// guidedGate refuses a guided request whose plan is not approved, or whose
// approval no longer holds.
func guidedGate(st State) error {
	switch {
	case st.Mode != ModeGuided:
		return nil
	case st.Approved == "" && st.Approval.Voided != "":
		return refuse(refusal.Conflict, "%s Approve the plan again before Run: this request is guided.", st.Approval.Voided)
	case st.Approved == "":
		return refuse(refusal.Conflict, "Approve the plan before Run: this request is guided.")
	case !st.Approval.Valid:
		return refuse(refusal.Conflict, "%s Approve the plan again before Run: this request is guided.", st.Approval.Voided)
	}
	return nil
}

// FeedbackVoided is why applied feedback withdrew a guided approval.
const FeedbackVoided = "Your feedback voided the approval: the engineer revises the plan with it."
