// Package intent is the backlog: an intent is one request from the owner,
// analysed by the engineer into a plan of tasks, which the executor runs.
// It keeps intents and tasks in the intents store, and every change of a
// status goes through moveTask or moveIntent, in one transaction with the
// event row that records it. It knows nothing of HTTP.
package intent

import (
	"slices"
	"time"

	"autoapp/intent/plan"
	"autoapp/intent/refusal"
)

func refuse(code refusal.Code, format string, args ...any) *refusal.Error {
	return refusal.Errorf(code, format, args...)
}

// TaskStatus is one of the eight statuses a task row stores. Blocked is
// derived when a task is read and never stored.
type TaskStatus string

// The stored task statuses.
const (
	TaskProposed    TaskStatus = "proposed"
	TaskInQueue     TaskStatus = "in-queue"
	TaskInProgress  TaskStatus = "in-progress"
	TaskCompleted   TaskStatus = "completed"
	TaskFailed      TaskStatus = "failed"
	TaskInterrupted TaskStatus = "interrupted"
	TaskNeedsAnswer TaskStatus = "needs-answer"
	TaskRemoved     TaskStatus = "removed"
)

// TaskStatuses lists the stored statuses in the order a task usually meets them.
var TaskStatuses = []TaskStatus{
	TaskProposed, TaskInQueue, TaskInProgress, TaskCompleted,
	TaskFailed, TaskInterrupted, TaskNeedsAnswer, TaskRemoved,
}

func (s TaskStatus) known() bool { return slices.Contains(TaskStatuses, s) }

// IntentStatus is the status of an intent.
type IntentStatus string

// The intent statuses.
const (
	IntentDraft     IntentStatus = "draft"
	IntentRunning   IntentStatus = "running"
	IntentStopped   IntentStatus = "stopped"
	IntentDone      IntentStatus = "done"
	IntentWithdrawn IntentStatus = "withdrawn"
)

// IntentStatuses lists the intent statuses.
var IntentStatuses = []IntentStatus{IntentDraft, IntentRunning, IntentStopped, IntentDone, IntentWithdrawn}

func (s IntentStatus) known() bool { return slices.Contains(IntentStatuses, s) }

// Mode says whether a submitted plan runs when the owner presses Run
// (autonomous) or only after they approved its exact version (guided).
type Mode string

// The modes.
const (
	ModeAutonomous Mode = "autonomous"
	ModeGuided     Mode = "guided"
)

// Who moved a task, as its history names them.
const (
	ActorOwner    = "owner"
	ActorEngineer = "engineer"
	ActorExecutor = "executor"
)

// Analysis is what the engineer understood of a request: the request
// restated, what it builds on (fits), what conflicts with it, what is out
// of reach, what was assumed and the questions still open.
type Analysis struct {
	Restated    []string `json:"restated"`
	Fits        []string `json:"fits"`
	Conflicts   []string `json:"conflicts"`
	OutOfReach  []string `json:"out_of_reach"`
	Assumptions []string `json:"assumptions"`
	Questions   []string `json:"questions"`
}

// Intent is one request, analysed.
type Intent struct {
	ID      int64
	AppID   string
	Status  IntentStatus
	Mode    Mode
	Request string // as the person typed it
	Analysis
	SubmittedAt time.Time // zero until the engineer submits the plan
	StopReason  string    // why it last stopped
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// BeingWritten reports a draft whose plan the engineer has not submitted.
func (i Intent) BeingWritten() bool { return i.Status == IntentDraft && i.SubmittedAt.IsZero() }

// Answer is one question a builder asked the person, and their answer.
type Answer struct {
	Question string    `json:"question"`
	Answer   string    `json:"answer"`
	At       time.Time `json:"at"`
}

// Task is a task row: its plan and what happened to it.
type Task struct {
	plan.Task
	ID       int64
	IntentID int64
	AppID    string
	Model    string // the owner's choice of model; "" = none
	Status   TaskStatus
	Question string   // what the builder asked, while it needs an answer
	Answers  []Answer // every question so far and its answer
	// StartedAt and EndedAt are stamped by moveTask; zero when unset.
	StartedAt time.Time
	EndedAt   time.Time
	Attempts  int
	RunIDs    []string // every run that started the task, oldest first
	RevBefore string   // the workspace revision before its first turn
	RevAfter  string   // the workspace revision after it completed
	ReleaseID string
	// ActualLines is the changed lines measured when it completed; 0 until then.
	ActualLines int
	// ExampleHashes maps a criterion's number (1 for c1) to the hash of the
	// steps of its acceptance example when the task completed.
	ExampleHashes map[int]string
	Advice        string // the planning model's advice after a failure
	CreatedAt     time.Time
}

// Passed says, for each criterion from c1, whether its acceptance example
// passed: the host recorded the hash of its steps at the task's verdict.
func (t Task) Passed() []bool {
	passed := make([]bool, len(t.Criteria))
	for n := range passed {
		passed[n] = t.ExampleHashes[n+1] != ""
	}
	return passed
}

// BacklogTask is a task as the Backlog shows it: the row and what the host
// derives from it.
type BacklogTask struct {
	Task
	Tier        string
	TierReasons []string
	// WaitingOn names the blockers that are not completed.
	WaitingOn []string
	// Blocked is an in-queue task with a blocker that is not completed.
	Blocked bool
	// RunsOn is the model the task would run on now: its own, else its
	// tier's; "" leaves it to the model chosen in Settings.
	RunsOn string
	// RunsOnFrom says where RunsOn came from: "task", "tier <tier>", or "".
	RunsOnFrom string
	// Reason is why a failed or interrupted task ended there: the reason
	// of the event that moved it.
	Reason string
}

// IntentSummary is one line of the list of an application's intents.
type IntentSummary struct {
	Intent
	// Counts holds how many of its tasks are in each status.
	Counts map[TaskStatus]int
	// Live is how many of its tasks are not removed.
	Live int
	// QuestionCount is how many questions the engineer asked in it; a
	// page of the list reads the count, not the questions.
	QuestionCount int
}

// IntentDetail is an intent with its tasks in run order: the live ones in
// plan.RunOrder, then the removed ones by slug.
type IntentDetail struct {
	Intent
	Tasks []BacklogTask
}

// TaskDetail is one task with its history, oldest first.
type TaskDetail struct {
	BacklogTask
	Events []TaskEvent
}

// TaskEvent is one row of a task's history. From is empty on the event
// that records the task being proposed.
type TaskEvent struct {
	ID     int64
	TaskID int64
	At     time.Time
	From   TaskStatus
	To     TaskStatus
	Reason string
	RunID  string
	Actor  string
	// Outcome is how the attempt this move ended came out; "" when it
	// ended none.
	Outcome Outcome
}

// Outcome is how an attempt came out, as the host decided it: the move
// that ends the attempt records it beside the reason a person reads.
type Outcome string

// The outcomes of an attempt.
const (
	OutcomeNone      Outcome = ""
	OutcomeCompleted Outcome = "completed" // the verdict completed the task
	OutcomeRetry     Outcome = "retry"     // it counted; another attempt follows
	OutcomeFurther   Outcome = "further"   // it got further than every earlier one: not counted
	OutcomeFailed    Outcome = "failed"    // the policy failed the task
	OutcomeAsked     Outcome = "asked"     // the builder asked the person
	OutcomeStopped   Outcome = "stopped"   // Stop, or the launcher's stop, cut it
	// OutcomeNotAnAttempt is a turn the provider killed, one that could
	// not start, or one that ended before the model did anything: counted
	// nowhere, and left out of the attempts document.
	OutcomeNotAnAttempt Outcome = "not-an-attempt"
)

// Move says why a task moves: the reason the history shows, the run it
// belongs to (required to start one), and who moved it.
type Move struct {
	Reason string
	RunID  string
	Actor  string
	// Completion is what a completing verdict records; only on a move to
	// completed.
	Completion *Completion
	// Question is the builder's question; only on a move to needs-answer.
	Question string
	// Answer is the person's answer; only on a move from needs-answer to
	// in-queue, which appends it to the task's answers.
	Answer string
	// RevBefore is the workspace revision as a turn starts; only on a move
	// to in-progress, and kept only by the task's first.
	RevBefore string
	// Outcome is how the attempt came out; only on a move from
	// in-progress.
	Outcome Outcome
}

// Completion is what a task keeps of the verdict that completed it.
type Completion struct {
	RevAfter    string
	ReleaseID   string
	ActualLines int
	// ExampleHashes maps criterion n (from 1) to its example's hash.
	ExampleHashes map[int]string
}
