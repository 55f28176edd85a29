package intent_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"autoapp/intent"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
	"autoapp/intent/timetest"
	"autoapp/migrations"
	"autoapp/migrations/migrationstest"
)

// env is a real intents store in a temporary root and the service over it.
type env struct {
	svc *intent.Service
	// all are the backlog's services, svc among them.
	all   intent.Services
	db    *migrations.DB
	root  string
	clock *timetest.Clock
}

// mustOpen makes a fresh root with the real migrations applied.
func mustOpen(tb testing.TB) *env {
	tb.Helper()
	root := tb.TempDir()
	db := migrationstest.IntentsIn(tb, root)
	c := timetest.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	all := intent.New(db, root, c.Now, intent.Collaborators{Journal: request.Journal{}})
	return &env{svc: all.Backlog, all: all, db: db, root: root, clock: c}
}

// app inserts an application row: intents only need it to exist.
func (e *env) app(tb testing.TB, id string) {
	tb.Helper()
	if _, err := e.db.Write.Exec(`INSERT INTO apps (id, name, origin, created_at) VALUES (?, ?, 'template:static', 0)`, id, id); err != nil {
		tb.Fatal(err)
	}
}

// draft opens a draft for a new application and adds a task per title.
func (e *env) draft(tb testing.TB, appID string, titles ...string) (intent.Intent, []intent.Task) {
	tb.Helper()
	e.app(tb, appID)
	return e.openWith(tb, appID, titles...)
}

// openWith opens a draft for an existing application and adds a task per title.
func (e *env) openWith(tb testing.TB, appID string, titles ...string) (intent.Intent, []intent.Task) {
	tb.Helper()
	ctx := context.Background()
	in, err := e.svc.OpenDraft(ctx, appID, "Please change "+appID, intent.Analysis{Restated: []string{"Change " + appID + "."}})
	if err != nil {
		tb.Fatal(err)
	}
	var tasks []intent.Task
	for _, title := range titles {
		t, err := e.svc.AddTask(ctx, in.ID, planned(title))
		if err != nil {
			tb.Fatal(err)
		}
		tasks = append(tasks, t)
	}
	return in, tasks
}

// planned is a valid plan on the quick tier.
func planned(title string, blockedBy ...string) plan.Task {
	return plan.Task{
		Title:          title,
		Priority:       "medium",
		Labels:         []string{"views"},
		BlockedBy:      blockedBy,
		EstimatedLines: 40,
		Risk:           "normal",
		Reasoning:      "low",
		Summary:        "A change the tests make.",
		Criteria: []plan.Criterion{
			{Text: "The page lists the notes."},
			{Text: "An empty note is refused with a sentence.", Failure: true},
		},
	}
}

// move moves a task or fails the test.
func (e *env) move(tb testing.TB, taskID int64, to intent.TaskStatus, runID string) {
	tb.Helper()
	// A question goes with a move to needs-answer, an answer with the move back.
	if err := e.svc.MoveTask(context.Background(), taskID, to, intent.Move{Reason: "test", RunID: runID, Actor: intent.ActorExecutor,
		Question: "Which tag is the default?", Answer: "None."}); err != nil {
		tb.Fatalf("move task %d to %s: %v", taskID, to, err)
	}
}

// moveIntent moves an intent or fails the test.
func (e *env) moveIntent(tb testing.TB, intentID int64, to ...intent.IntentStatus) {
	tb.Helper()
	for _, s := range to {
		if err := e.svc.MoveIntent(context.Background(), intentID, s, "test"); err != nil {
			tb.Fatalf("move intent %d to %s: %v", intentID, s, err)
		}
	}
}

func (e *env) count(tb testing.TB, query string, args ...any) int {
	tb.Helper()
	var n int
	if err := e.db.Read.Get(&n, query, args...); err != nil {
		tb.Fatal(err)
	}
	return n
}

func (e *env) status(tb testing.TB, taskID int64) intent.TaskStatus {
	tb.Helper()
	var s intent.TaskStatus
	if err := e.db.Read.Get(&s, `SELECT status FROM tasks WHERE id = ?`, taskID); err != nil {
		tb.Fatal(err)
	}
	return s
}

func (e *env) intentStatus(tb testing.TB, intentID int64) intent.IntentStatus {
	tb.Helper()
	var s intent.IntentStatus
	if err := e.db.Read.Get(&s, `SELECT status FROM intents WHERE id = ?`, intentID); err != nil {
		tb.Fatal(err)
	}
	return s
}

// wantRefusal returns the error as a *refusal.Error, failing the test when it
// is none or its code differs.
func wantRefusal(tb testing.TB, err error, code refusal.Code) *refusal.Error {
	tb.Helper()
	var ie *refusal.Error
	if !errors.As(err, &ie) {
		tb.Fatalf("want a %s refusal, got %v", code, err)
	}
	if ie.Code != code {
		tb.Fatalf("want code %s, got %s: %s", code, ie.Code, ie.Message)
	}
	return ie
}
