package request_test

import (
	"context"
	"errors"
	"fmt"
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

// env is a real intents store in a temporary root, the backlog over it and
// the requests over both.
type env struct {
	db      *migrations.DB
	backlog *intent.Service
	all     intent.Services
	svc     *request.Service
	clock   *timetest.Clock
	ops     int
}

// mustOpen makes a fresh root with the real migrations applied.
func mustOpen(tb testing.TB) *env {
	tb.Helper()
	root := tb.TempDir()
	db := migrationstest.IntentsIn(tb, root)
	c := timetest.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	all := intent.New(db, root, c.Now, intent.Collaborators{Journal: request.Journal{}})
	return &env{db: db, backlog: all.Backlog, all: all, svc: request.NewService(db, all.Backlog, c.Now), clock: c}
}

// op returns a fresh operation id.
func (e *env) op() string {
	e.ops++
	return fmt.Sprintf("op-%d", e.ops)
}

// app inserts an application row: requests only need it to exist.
func (e *env) app(tb testing.TB, id string) {
	tb.Helper()
	if _, err := e.db.Write.Exec(`INSERT INTO apps (id, name, origin, created_at) VALUES (?, ?, 'template:static', 0)`, id, id); err != nil {
		tb.Fatal(err)
	}
}

// create records a request for a new application.
func (e *env) create(tb testing.TB, appID, mode string) request.State {
	tb.Helper()
	e.app(tb, appID)
	st, err := e.svc.Create(context.Background(), appID, "Please change "+appID, mode, e.op())
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

// planned creates a request for a new application, opens its intent with a
// task per title, links it, submits the plan and records it.
func (e *env) planned(tb testing.TB, appID, mode string, titles ...string) (request.State, []intent.Task) {
	tb.Helper()
	ctx := context.Background()
	st := e.create(tb, appID, mode)
	in, err := e.backlog.OpenDraft(ctx, appID, st.Text, intent.Analysis{Restated: []string{"Change " + appID + "."}})
	if err != nil {
		tb.Fatal(err)
	}
	var tasks []intent.Task
	for _, title := range titles {
		t, err := e.backlog.AddTask(ctx, in.ID, task(title))
		if err != nil {
			tb.Fatal(err)
		}
		tasks = append(tasks, t)
	}
	if _, err := e.svc.Link(ctx, st.ID, in.ID); err != nil {
		tb.Fatal(err)
	}
	return e.submit(tb, st.ID), tasks
}

// submit submits the intent's plan and records it on the request.
func (e *env) submit(tb testing.TB, id int64) request.State {
	tb.Helper()
	ctx := context.Background()
	st := e.state(tb, id)
	if err := e.backlog.Submit(ctx, st.IntentID); err != nil {
		tb.Fatal(err)
	}
	st, err := e.svc.PlanSubmitted(ctx, id)
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

// approve approves the plan at the current revision.
func (e *env) approve(tb testing.TB, id int64) request.State {
	tb.Helper()
	st, err := e.svc.Approve(context.Background(), id, e.state(tb, id).Revision, e.op())
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

func (e *env) state(tb testing.TB, id int64) request.State {
	tb.Helper()
	st, err := e.svc.State(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

func (e *env) count(tb testing.TB, query string, args ...any) int {
	tb.Helper()
	var n int
	if err := e.db.Read.Get(&n, query, args...); err != nil {
		tb.Fatal(err)
	}
	return n
}

// task is a valid plan on the quick tier.
func task(title string, blockedBy ...string) plan.Task {
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

// wantRefusal returns the error as a *refusal.Error, failing the test when it
// is none or its code differs.
func wantRefusal(tb testing.TB, err error, code refusal.Code) *refusal.Error {
	tb.Helper()
	var re *refusal.Error
	if !errors.As(err, &re) {
		tb.Fatalf("want a %s refusal, got %v", code, err)
	}
	if re.Code != code {
		tb.Fatalf("want code %s, got %s: %s", code, re.Code, re.Message)
	}
	return re
}
