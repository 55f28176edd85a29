// Package request keeps what the owner asked for an application: each
// request has an append-only journal (revision, kind, actor, time, body)
// and its state is read from that journal — the original text as typed,
// the mode, the questions and answers, the plan versions the engineer
// submitted, the owner's approval, the run and the delivery.
//
// Every owner write carries the revision the page showed and an operation
// id: a stale revision is refused with a sentence, a repeated operation
// id answers what the first one did and writes nothing, and one repeated
// with other words or another mode is refused and writes nothing. In
// guided mode the owner approves the exact plan: the approval is bound to
// PlanHash of the plan it was shown (the analysis and the task rows with
// their models), and any later change voids it. It knows
// nothing of HTTP.
package request

import (
	"slices"
	"time"

	"autoapp/intent/refusal"
)

func refuse(code refusal.Code, format string, args ...any) *refusal.Error {
	return refusal.Errorf(code, format, args...)
}

// The modes of a request, as the intent package names them.
const (
	ModeAutonomous = "autonomous"
	ModeGuided     = "guided"
)

// Kind is what a journal entry records.
type Kind string

// The kinds of journal entries.
const (
	KindRequest  Kind = "request"  // the original text, as typed, and the mode
	KindMessage  Kind = "message"  // a later message of the owner
	KindAnswer   Kind = "answer"   // the owner answered the engineer's questions
	KindQuestion Kind = "question" // the engineer asked
	KindPlan     Kind = "plan"     // a submitted plan version: its hash, its analysis and its rows
	KindApproval Kind = "approval" // the owner approved a plan hash
	KindMode     Kind = "mode"     // the owner changed the mode
	KindRun      Kind = "run"      // the executor started the intent
	KindDelivery Kind = "delivery" // the delivery was recorded
	// KindWithdrawn: the owner withdrew the intent that answered the
	// request; the request and its journal stay, as its history.
	KindWithdrawn Kind = "withdrawn"
)

// Who wrote a journal entry.
const (
	ActorOwner    = "owner"
	ActorEngineer = "engineer"
	ActorHost     = "host"
)

// MaxOpID is the longest operation id an owner's write may carry.
const MaxOpID = 100

// MaxText is the longest text, in bytes, a request, message, answer or
// question may hold.
const MaxText = 32 << 10

// Said is one thing someone wrote on the request: a message, a question
// or an answer, with the revision of its entry. A question's id is its
// revision.
type Said struct {
	Revision int
	Actor    string
	Text     string
	At       time.Time
	// Task is the task whose builder asked the question, or whose
	// question the answer answers; 0 for the analysis.
	Task int64
	// Question, on an answer, is the id of the question it answers; 0 on
	// an analysis answer from before answers were linked, which answered
	// every question asked before it.
	Question int
	// Via is where the owner's words came from (intent.Via); "" for the
	// engineer's, and for words journalled before the launcher kept it.
	Via string
}

// PlanVersion is one plan the engineer submitted, or the owner's own
// version of it that the owner approved (a task's model changed, a task
// removed): the revision of its entry and the hash of its plan.
type PlanVersion struct {
	Revision int
	Hash     string
}

// Approval says whether the owner's approval still holds. Voided, when it
// does not, says what changed since ("0003-x was replaced. A new plan was
// submitted.").
type Approval struct {
	Valid  bool
	Voided string
	// Revoked says the owner withdrew the last approval.
	Revoked bool
}

// ReasonRevoked is the reason an approval entry gives when the owner
// withdrew the approval.
const ReasonRevoked = "revoked"

// State is a request as its journal tells it, and whether its approval
// still matches the intent's plan.
type State struct {
	ID       int64
	AppID    string
	IntentID int64 // 0 until the engineer opens the intent
	Mode     string
	Revision int    // the revision of the last entry
	Text     string // the original request, byte for byte as typed
	// Via is where the original request came from (intent.Via), "" when
	// it was journalled before the launcher kept it.
	Via       string
	CreatedAt time.Time
	Messages  []Said // the owner's later messages
	Questions []Said
	Answers   []Said
	Plans     []PlanVersion // oldest first
	// Approved is the plan hash the owner last approved; "" when none.
	Approved string
	Approval Approval
	// Current is the hash of the intent's plan now; "" before an intent is
	// linked.
	Current   string
	Ran       bool
	Delivered bool
	// Withdrawn says the owner withdrew the intent that answered it.
	Withdrawn bool
	// Approvable says the owner may approve the last plan now; when not,
	// Unapprovable is why, the sentence Approve refuses with.
	Approvable   bool
	Unapprovable string
	// Revocable says the owner may withdraw the approval now.
	Revocable bool
}

// OpenQuestions returns the questions no answer answers yet, oldest
// first.
func (s State) OpenQuestions() []Said {
	var open []Said
	for _, q := range s.Questions {
		if !s.answered(q) {
			open = append(open, q)
		}
	}
	return open
}

// OpenAnalysisQuestions returns the open questions of the analysis, oldest
// first: the ones the Request page asks the owner; a builder's are
// answered on its task.
func (s State) OpenAnalysisQuestions() []Said {
	var open []Said
	for _, q := range s.OpenQuestions() {
		if q.Task == 0 {
			open = append(open, q)
		}
	}
	return open
}

// Asking returns the open questions of the analysis that it still asks
// (asked is the intent's analysis's questions now), oldest first: a
// question the engineer dropped when it wrote the analysis again is no
// longer put to the owner.
func (s State) Asking(asked []string) []Said {
	var open []Said
	for _, q := range s.OpenAnalysisQuestions() {
		if slices.Contains(asked, q.Text) {
			open = append(open, q)
		}
	}
	return open
}

// answeredSince says whether a question of the analysis with this text was
// answered at or after t.
func (s State) answeredSince(text string, t time.Time) bool {
	for _, q := range s.Questions {
		if q.Task != 0 || q.Text != text {
			continue
		}
		for _, a := range s.Answers {
			if (a.Question == q.Revision || (a.Question == 0 && a.Task == 0 && a.Revision > q.Revision)) && !a.At.Before(t) {
				return true
			}
		}
	}
	return false
}

// answered says whether an answer answers the question: one linked to it,
// or an unlinked one of the analysis written after it.
func (s State) answered(q Said) bool {
	for _, a := range s.Answers {
		if a.Question == q.Revision || (a.Question == 0 && a.Task == 0 && a.Revision > q.Revision) {
			return true
		}
	}
	return false
}

// AnswerTo returns the answer to the question with this id, and false
// while it is open.
func (s State) AnswerTo(question int) (Said, bool) {
	for _, a := range s.Answers {
		if a.Question == question {
			return a, true
		}
	}
	return Said{}, false
}

// LastPlan returns the last plan version submitted, and false when none was.
func (s State) LastPlan() (PlanVersion, bool) {
	if len(s.Plans) == 0 {
		return PlanVersion{}, false
	}
	return s.Plans[len(s.Plans)-1], true
}
