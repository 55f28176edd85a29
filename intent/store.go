package intent

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/mattn/go-sqlite3"

	"autoapp/intent/plan"
	"autoapp/intent/refusal"
)

// intentRow is an intents row as SQLite holds it.
type intentRow struct {
	ID          int64         `db:"id"`
	AppID       string        `db:"app_id"`
	Status      IntentStatus  `db:"status"`
	Mode        Mode          `db:"mode"`
	Request     string        `db:"request"`
	Restated    string        `db:"restated"`
	Fits        string        `db:"fits"`
	Conflicts   string        `db:"conflicts"`
	OutOfReach  string        `db:"out_of_reach"`
	Assumptions string        `db:"assumptions"`
	Questions   string        `db:"questions"`
	SubmittedAt sql.NullInt64 `db:"submitted_at"`
	StopReason  string        `db:"stop_reason"`
	CreatedAt   int64         `db:"created_at"`
	UpdatedAt   int64         `db:"updated_at"`
}

func (r intentRow) intent() (Intent, error) {
	in := Intent{
		ID: r.ID, AppID: r.AppID, Status: r.Status, Mode: r.Mode, Request: r.Request,
		SubmittedAt: timeOf(r.SubmittedAt), StopReason: r.StopReason,
		CreatedAt: time.UnixMilli(r.CreatedAt), UpdatedAt: time.UnixMilli(r.UpdatedAt),
	}
	err := errors.Join(
		decode("restated", r.Restated, &in.Restated),
		decode("fits", r.Fits, &in.Fits),
		decode("conflicts", r.Conflicts, &in.Conflicts),
		decode("out_of_reach", r.OutOfReach, &in.OutOfReach),
		decode("assumptions", r.Assumptions, &in.Assumptions),
		decode("questions", r.Questions, &in.Questions),
	)
	if err != nil {
		return in, fmt.Errorf("intent: intent %d: %w", r.ID, err)
	}
	return in, nil
}

// taskRow is a tasks row as SQLite holds it.
type taskRow struct {
	ID             int64          `db:"id"`
	IntentID       int64          `db:"intent_id"`
	AppID          string         `db:"app_id"`
	Slug           string         `db:"slug"`
	Title          string         `db:"title"`
	Priority       string         `db:"priority"`
	Labels         string         `db:"labels"`
	BlockedBy      string         `db:"blocked_by"`
	EstimatedLines int            `db:"estimated_lines"`
	Locks          string         `db:"locks"`
	Risk           string         `db:"risk"`
	Stub           bool           `db:"stub"`
	RepaidBy       string         `db:"repaid_by"`
	Reasoning      string         `db:"reasoning"`
	Summary        string         `db:"summary"`
	Criteria       string         `db:"criteria"`
	NoFailurePath  string         `db:"no_failure_path"`
	NonFunctional  string         `db:"non_functional"`
	TestNotes      string         `db:"test_notes"`
	Runbook        string         `db:"runbook"`
	Model          string         `db:"model"`
	Status         TaskStatus     `db:"status"`
	Question       string         `db:"question"`
	Answers        string         `db:"answers"`
	StartedAt      sql.NullInt64  `db:"started_at"`
	EndedAt        sql.NullInt64  `db:"ended_at"`
	Attempts       int            `db:"attempts"`
	RunIDs         string         `db:"run_ids"`
	RevBefore      string         `db:"rev_before"`
	RevAfter       string         `db:"rev_after"`
	ReleaseID      sql.NullString `db:"release_id"`
	ActualLines    sql.NullInt64  `db:"actual_lines"`
	ExampleHashes  string         `db:"example_hashes"`
	Advice         string         `db:"advice"`
	CreatedAt      int64          `db:"created_at"`
}

// taskColumns lists the columns taskRow scans, for the queries that read tasks.
const taskColumns = `id, intent_id, app_id, slug, title, priority, labels, blocked_by, estimated_lines,
	locks, risk, stub, repaid_by, reasoning, summary, criteria, no_failure_path, non_functional,
	test_notes, runbook, model, status, question, answers, started_at, ended_at, attempts, run_ids,
	rev_before, rev_after, release_id, actual_lines, example_hashes, advice, created_at`

func (r taskRow) task() (Task, error) {
	t := Task{
		Task: plan.Task{
			Slug: r.Slug, Title: r.Title, Priority: r.Priority, EstimatedLines: r.EstimatedLines,
			Risk: r.Risk, Stub: r.Stub, RepaidBy: r.RepaidBy, Reasoning: r.Reasoning,
			Summary: r.Summary, NoFailurePath: r.NoFailurePath,
		},
		ID: r.ID, IntentID: r.IntentID, AppID: r.AppID, Model: r.Model, Status: r.Status,
		Question: r.Question, StartedAt: timeOf(r.StartedAt), EndedAt: timeOf(r.EndedAt),
		Attempts: r.Attempts, RevBefore: r.RevBefore, RevAfter: r.RevAfter, ReleaseID: r.ReleaseID.String,
		ActualLines: int(r.ActualLines.Int64), Advice: r.Advice, CreatedAt: time.UnixMilli(r.CreatedAt),
	}
	err := errors.Join(
		decode("labels", r.Labels, &t.Labels),
		decode("blocked_by", r.BlockedBy, &t.BlockedBy),
		decode("locks", r.Locks, &t.Locks),
		decode("criteria", r.Criteria, &t.Criteria),
		decode("non_functional", r.NonFunctional, &t.NonFunctional),
		decode("test_notes", r.TestNotes, &t.TestNotes),
		decode("runbook", r.Runbook, &t.Runbook),
		decode("answers", r.Answers, &t.Answers),
		decode("run_ids", r.RunIDs, &t.RunIDs),
		decode("example_hashes", r.ExampleHashes, &t.ExampleHashes),
	)
	if err != nil {
		return t, fmt.Errorf("intent: task %s: %w", r.Slug, err)
	}
	return t, nil
}

// isUniqueViolation reports whether err is SQLite refusing a row that a
// primary key or UNIQUE index already holds: the one place this package
// reads the driver's errors.
func isUniqueViolation(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) &&
		(se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey || se.ExtendedCode == sqlite3.ErrConstraintUnique)
}

func decode(column, text string, v any) error {
	if err := json.Unmarshal([]byte(text), v); err != nil {
		return fmt.Errorf("%s is not the JSON it should be: %w", column, err)
	}
	return nil
}

// jsonText is v as the JSON text a column holds. Callers pass non-nil
// slices, so an empty list is [] and never null.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// Only our own slices, maps and structs of strings come here.
		panic(fmt.Sprintf("intent: cannot encode %T: %v", v, err))
	}
	return string(b)
}

// list is s, or an empty list for nil.
func list[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func timeOf(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64)
}

func loadIntent(ctx context.Context, tx *sqlx.Tx, id int64) (Intent, error) {
	var r intentRow
	err := tx.GetContext(ctx, &r,
		`SELECT id, app_id, status, mode, request, restated, fits, conflicts, out_of_reach, assumptions,
		        questions, submitted_at, stop_reason, created_at, updated_at
		 FROM intents WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Intent{}, refuse(refusal.NotFound, "There is no intent %d.", id)
	}
	if err != nil {
		return Intent{}, fmt.Errorf("intent: intent %d: %w", id, err)
	}
	return r.intent()
}

func loadTask(ctx context.Context, tx *sqlx.Tx, id int64) (Task, error) {
	var r taskRow
	err := tx.GetContext(ctx, &r, `SELECT `+taskColumns+` FROM tasks WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, refuse(refusal.NotFound, "There is no task %d.", id)
	}
	if err != nil {
		return Task{}, fmt.Errorf("intent: task %d: %w", id, err)
	}
	return r.task()
}

// intentTasks returns every task of an intent, removed ones included, in
// the order they were added.
func intentTasks(ctx context.Context, tx *sqlx.Tx, intentID int64) ([]Task, error) {
	var rows []taskRow
	if err := tx.SelectContext(ctx, &rows,
		`SELECT `+taskColumns+` FROM tasks WHERE intent_id = ? ORDER BY id`, intentID); err != nil {
		return nil, fmt.Errorf("intent: tasks of intent %d: %w", intentID, err)
	}
	tasks := make([]Task, 0, len(rows))
	for _, r := range rows {
		t, err := r.task()
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, t)
	}
	return tasks, nil
}

// appSlugs returns every slug the application's tasks hold, across its intents.
func appSlugs(ctx context.Context, tx *sqlx.Tx, appID string) ([]string, error) {
	slugs := []string{}
	if err := tx.SelectContext(ctx, &slugs, `SELECT slug FROM tasks WHERE app_id = ? ORDER BY slug`, appID); err != nil {
		return nil, fmt.Errorf("intent: slugs of %s: %w", appID, err)
	}
	return slugs, nil
}

// nextTaskNumber is the number the application's next task takes: one past
// the highest any of its tasks holds, as task_numbers keeps it (its trigger
// raises it when the task is inserted).
func nextTaskNumber(ctx context.Context, tx *sqlx.Tx, appID string) (int, error) {
	var n int
	if err := tx.GetContext(ctx, &n,
		`SELECT coalesce((SELECT last FROM task_numbers WHERE app_id = ?), 0) + 1`, appID); err != nil {
		return 0, fmt.Errorf("intent: the next task number of %s: %w", appID, err)
	}
	return n, nil
}

func checkApp(ctx context.Context, tx *sqlx.Tx, appID string) error {
	var n int
	if err := tx.GetContext(ctx, &n, `SELECT count(*) FROM apps WHERE id = ?`, appID); err != nil {
		return fmt.Errorf("intent: application %s: %w", appID, err)
	}
	if n == 0 {
		return refuse(refusal.NotFound, "There is no application %q.", appID)
	}
	return nil
}

func taskEvents(ctx context.Context, tx *sqlx.Tx, taskID int64) ([]TaskEvent, error) {
	var rows []struct {
		ID      int64      `db:"id"`
		TaskID  int64      `db:"task_id"`
		At      int64      `db:"at"`
		From    TaskStatus `db:"from_status"`
		To      TaskStatus `db:"to_status"`
		Reason  string     `db:"reason"`
		RunID   string     `db:"run_id"`
		Actor   string     `db:"actor"`
		Outcome Outcome    `db:"outcome"`
	}
	if err := tx.SelectContext(ctx, &rows,
		`SELECT id, task_id, at, from_status, to_status, reason, run_id, actor, outcome
		 FROM task_events WHERE task_id = ? ORDER BY id`, taskID); err != nil {
		return nil, fmt.Errorf("intent: history of task %d: %w", taskID, err)
	}
	events := make([]TaskEvent, 0, len(rows))
	for _, r := range rows {
		events = append(events, TaskEvent{ID: r.ID, TaskID: r.TaskID, At: time.UnixMilli(r.At),
			From: r.From, To: r.To, Reason: r.Reason, RunID: r.RunID, Actor: r.Actor, Outcome: r.Outcome})
	}
	return events, nil
}

// plans returns the plans of tasks.
func plans(tasks []Task) []plan.Task {
	out := make([]plan.Task, len(tasks))
	for i, t := range tasks {
		out[i] = t.Task
	}
	return out
}

// live returns the tasks that are not removed.
func live(tasks []Task) []Task {
	var out []Task
	for _, t := range tasks {
		if t.Status != TaskRemoved {
			out = append(out, t)
		}
	}
	return out
}
