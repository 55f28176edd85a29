package views

import "fmt"

// TierModel is one tier's model in the Backlog's settings.
type TierModel struct {
	Tier, Model string
}

// IntentRow is one intent in the Backlog's list.
type IntentRow struct {
	ID           int64
	Status       string
	BeingWritten bool
	Request      string
	Created      string
	// Counts says how many tasks there are and in which statuses.
	Counts    string
	Questions int
}

// Refusal is a sentence shown beside the thing it refused: At names it
// ("withdraw", "models", "task-12").
type Refusal struct {
	At, Sentence string
}

// BacklogList is the Backlog page: the selected application's intents,
// newest first, and its tier models.
type BacklogList struct {
	AppID, AppName string
	Intents        []IntentRow
	TierModels     []TierModel
	Refusal        Refusal
	Notice         string
	// Op is the operation id the page's forms carry.
	Op string
	// Overview is the panel at the top: what needs the person, the task
	// in hand, today's spend, each application.
	Overview *OverviewView
	// OlderHref leads to the next page of older intents, when there are
	// any; Paged says this is not the first page.
	OlderHref string
	Paged     bool
	// FirstSteps are the three steps of a first run, shown until each is
	// done; nil once they all are.
	FirstSteps []FirstStep
}

// FirstStep is one step of a first run: what to do, where, and whether it
// is done.
type FirstStep struct {
	Text, Href, Link string
	Done             bool
}

// TaskRow is one task of an intent, in run order.
type TaskRow struct {
	ID                           int64
	Slug, Title, Priority, Tier  string
	TierReasons                  string
	Model, ModelSource, OwnModel string
	Status                       string
	Blocked                      bool
	BlockedBy                    []string
	CanRemove, CanChangeModel    bool
	// CanAnswer shows the answer box under a question.
	CanAnswer                    bool
	Question, FailReason, Advice string
	// Capped says a cap cut its last turn: raising the cap, not a retry,
	// is what goes on.
	Capped bool
	// AdviceLines are the advice's diagnosis, advice and note, each named.
	AdviceLines                   []Fact
	Attempts                      int
	CriteriaPassed, CriteriaTotal int
	// Spend is what its turns used and cost; nil before its first turn.
	Spend *SpendView
}

// Fact is one row of a plan's front matter.
type Fact struct{ Name, Value string }

// IntentView is one intent opened: its request, analysis and tasks.
type IntentView struct {
	// PreviewLink is the running preview of its application, when one runs.
	PreviewLink        string
	ID                 int64
	AppID, AppName     string
	Status, Mode       string
	BeingWritten       bool
	Request            string
	Restated           string
	Fits, Conflicts    []string
	OutOfReach         []string
	Assumptions        []string
	Questions          []string
	StopReason         string
	Submitted, Created string
	Tasks              []TaskRow
	CanWithdraw        bool
	// CanRun offers Run; Running offers Stop.
	CanRun, Running bool
	// Progress is the run's progress while it goes.
	Progress *ProgressView
	// Runbook lists every task's lines for the person, on a done intent.
	Runbook []RunbookLine
	// Delivery is what a done intent handed over.
	Delivery *DeliveryView
	// Guided intents wait for the owner's approval of the exact plan.
	Guided, Approved, CanApprove bool
	// CannotApprove says why the plan cannot be approved now.
	CannotApprove string
	// Voided says what changed since the plan was approved.
	Voided          string
	RequestRevision int
	// ShownPlan is the whole hash of the plan the page shows, which
	// Approve carries: a plan changed since is not approved.
	ShownPlan string
	// ModeSwitch changes the mode of the request the intent answers; nil
	// when it answers none, or is done or withdrawn.
	ModeSwitch *ModeSwitch
	// CanWithdrawApproval offers to take the approval back before Run;
	// Revoked says the owner did.
	CanWithdrawApproval, Revoked bool
	// PlanVersion counts the plans the engineer submitted for the request,
	// the last one PlanHash (shortened); 0 before the first.
	PlanVersion int
	PlanHash    string
	// Polling is set while the draft is being written or the intent runs:
	// the live part then asks again every two seconds, and stops when not.
	Polling bool
	Refusal Refusal
	Op      string
	// Interventions are the feedback and pauses sent while it ran,
	// pending first, then applied, each in order.
	Interventions []ReceiptRow
	// Spend is what its turns used and cost, over every run.
	Spend *SpendView
	// Cap is its cap and what was spent of it; nil for a withdrawn intent.
	Cap *CapView
}

// CapView is an intent's cap: Line says what was spent of it ("" when
// nothing caps it), Own that the owner set it (else it is the default of
// Settings), Fields the form's values; CanSet offers the form.
type CapView struct {
	Line   string
	Own    bool
	Fields CapFields
	CanSet bool
}

// ReceiptRow is one intervention: Applied is "" while it waits for a
// boundary; Held is the stop it found and kept.
type ReceiptRow struct {
	Order                    int64
	Kind, Text               string
	Submitted, Applied, Held string
	// Resumed is when Run continued the intent after it was applied.
	Resumed string
}

// EventRow is one line of a task's history.
type EventRow struct {
	At, From, To, Reason, RunID, Actor string
}

// TaskView is one task opened: its plan and history.
type TaskView struct {
	IntentID int64
	Row      TaskRow
	// Facts are the plan's front matter as a short table; PlanHTML is the
	// rest of the plan rendered (Document): the criteria a checklist with
	// a passing example ticked, the sections as headings.
	Facts    []Fact
	PlanHTML string
	Events   []EventRow
	RunIDs   []string
	// Attempts are each run's changes, newest last.
	Attempts []AttemptView
	// Turns are what each of its turns used and cost, oldest first, and
	// Spend their total.
	Turns []TurnSpendView
	Spend *SpendView
}

// TurnSpendView is one turn of a task: its run id, kind, model and spend.
type TurnSpendView struct {
	At, RunID, Kind, Model string
	Spend                  SpendView
	Partial, Live          bool
}

// ProgressView is the task in hand while a run goes.
type ProgressView struct {
	Slug, RunID, Started, Stage, LastTool, Refusal string
	Turn, Passed, Total                            int
	Tokens                                         string
	HostBuild                                      bool
	// LastEnded is why the last attempt did not complete, on a retry.
	LastEnded string
	// Model says what the model is doing now ("The model is writing: 312
	// tokens so far in this step."), or "".
	Model string
	// Limits are the limits in force: "no tool call for 8 minutes, 20
	// minutes a turn".
	Limits string
}

// RunbookLine is one line "For you to check by hand".
type RunbookLine struct {
	Slug, Line string
}

// AttemptView is one attempt of a task: its run id, how it ended, and the
// diff of the commits it made.
type AttemptView struct {
	RunID, Ended, Diff string
}

// DeliveryView is a done intent's delivery: its artifacts to download.
type DeliveryView struct {
	At, Revision, Release string
	Artifacts             []ArtifactRow
	// Problems are artifact paths that could not be exported, with why.
	Problems    []string
	ArchiveHref string
	// Moved says the workspace changed after the last verdict, and that
	// the delivery is of the judged revision; "" when it had not.
	Moved string
	// Evidence is each completed task's verdict: the revision it was
	// judged at and the examples that passed.
	Evidence []DeliveredTask
	// Needs says what a delivered page loads that the delivery lacks.
	Needs []string
	// Plan says which plan version it was built from; "" for an intent
	// that answers no request.
	Plan string
}

// DeliveredTask is one completed task in a delivery's evidence.
type DeliveredTask struct {
	Slug, Revision string
	Examples       []DeliveredExample
}

// DeliveredExample is one acceptance example a task was held to, with the
// hash of its steps when the task completed (a completed task's examples
// all passed at its verdict).
type DeliveredExample struct {
	ID, Hash string
}

// ArtifactRow is one downloadable artifact.
type ArtifactRow struct {
	Path, Size, SHA256, Media, Href string
}

// examplesPassed says how many of a delivered task's examples it was held
// to, all of which passed at its verdict.
func examplesPassed(t DeliveredTask) string {
	n := len(t.Examples)
	if n == 1 {
		return "1 acceptance example passed"
	}
	return fmt.Sprintf("%d acceptance examples passed", n)
}

// shortHash is the first 12 characters of a hash.
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// deliveredFrom says where a delivery was exported from: "revision
// 1a2b3c4 (release r…)".
func deliveredFrom(d *DeliveryView) string {
	s := "revision " + d.Revision
	if d.Release != "" {
		s += " (release " + d.Release + ")"
	}
	return s
}
