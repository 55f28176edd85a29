package knowledge

import (
	"context"
	"fmt"
	"strings"
	"time"

	"autoapp/intent/refusal"
	"autoapp/migrations"
)

// Score is one model's row of a comparison: what the host saw of that
// model's turns on the comparison's tasks, all under one condition.
type Score struct {
	ID int64 `json:"id"`
	// Model is the reference the turns were sent to, provider:model.
	Model string `json:"model"`
	// Stamp names the comparison, whose runs are kept under
	// <root>/evaluate/<stamp>/; Condition is what every turn was given.
	Stamp      string    `json:"stamp"`
	Condition  string    `json:"condition"`
	MeasuredAt time.Time `json:"measuredAt"`
	// Tasks is how many tasks the model ran; WorkingCode and Workflow how
	// many of them ended with working code and with the workflow completed.
	Tasks       int `json:"tasks"`
	WorkingCode int `json:"workingCode"`
	Workflow    int `json:"workflowCompleted"`
	// Attempts are the turns the tasks took together, at least one each.
	Attempts int `json:"attempts"`
	// FirstEditCalls is the calls up to each task's first edit that
	// landed, summed over the FirstEditTasks that made one.
	FirstEditCalls int `json:"firstEditCalls"`
	FirstEditTasks int `json:"firstEditTasks"`
	// FromText counts the tool calls the host read from the model's text;
	// InvalidInputs those it refused against the tool's schema.
	FromText      int `json:"fromText"`
	InvalidInputs int `json:"invalidInputs"`
	// Tokens is what every turn reported; TokensReported says every step
	// of every turn did, so it is the whole use rather than a floor.
	Tokens         int   `json:"tokens"`
	TokensReported bool  `json:"tokensReported"`
	WallMS         int64 `json:"wallMs"`
}

// AttemptsPerTask is the mean number of turns a task took.
func (s Score) AttemptsPerTask() float64 {
	if s.Tasks == 0 {
		return 0
	}
	return float64(s.Attempts) / float64(s.Tasks)
}

// FirstEdit is the mean number of calls to a task's first edit that
// landed, over the tasks that made one; false when none did.
func (s Score) FirstEdit() (float64, bool) {
	if s.FirstEditTasks == 0 {
		return 0, false
	}
	return float64(s.FirstEditCalls) / float64(s.FirstEditTasks), true
}

// Better says s ranks ahead of o: more working code, then more workflows
// completed, then fewer attempts per task, then fewer tokens.
func (s Score) Better(o Score) bool {
	sw, ow := s.WorkingCode*o.Tasks, o.WorkingCode*s.Tasks // the shares, compared without division
	if sw != ow {
		return sw > ow
	}
	sf, of := s.Workflow*o.Tasks, o.Workflow*s.Tasks
	if sf != of {
		return sf > of
	}
	sa, oa := s.Attempts*o.Tasks, o.Attempts*s.Tasks
	if sa != oa {
		return sa < oa
	}
	return s.Tokens < o.Tokens
}

// Scorecards keeps the comparisons' rows in the launcher's store: one a
// model a comparison, never changed.
type Scorecards struct {
	db *migrations.DB
}

// NewScorecards keeps scorecards in db, the knowledge store, migrated.
func NewScorecards(db *migrations.DB) *Scorecards { return &Scorecards{db: db} }

// scoreRow is a scorecards row as SQLite holds it.
type scoreRow struct {
	ID             int64  `db:"id"`
	Model          string `db:"model"`
	Stamp          string `db:"stamp"`
	Condition      string `db:"condition"`
	MeasuredAt     int64  `db:"measured_at"`
	Tasks          int    `db:"tasks"`
	WorkingCode    int    `db:"working_code"`
	Workflow       int    `db:"workflow"`
	Attempts       int    `db:"attempts"`
	FirstEditCalls int    `db:"first_edit_calls"`
	FirstEditTasks int    `db:"first_edit_tasks"`
	FromText       int    `db:"from_text"`
	InvalidInputs  int    `db:"invalid_inputs"`
	Tokens         int    `db:"tokens"`
	TokensReported bool   `db:"tokens_reported"`
	WallMS         int64  `db:"wall_ms"`
}

func (r scoreRow) score() Score {
	return Score{ID: r.ID, Model: r.Model, Stamp: r.Stamp, Condition: r.Condition, MeasuredAt: time.UnixMilli(r.MeasuredAt),
		Tasks: r.Tasks, WorkingCode: r.WorkingCode, Workflow: r.Workflow, Attempts: r.Attempts, FirstEditCalls: r.FirstEditCalls,
		FirstEditTasks: r.FirstEditTasks, FromText: r.FromText, InvalidInputs: r.InvalidInputs, Tokens: r.Tokens,
		TokensReported: r.TokensReported, WallMS: r.WallMS}
}

const scoreColumns = `id, model, stamp, condition, measured_at, tasks, working_code, workflow, attempts, first_edit_calls,
	first_edit_tasks, from_text, invalid_inputs, tokens, tokens_reported, wall_ms`

// Record writes one model's row of a comparison that finished every task
// on it, and answers its id.
func (s *Scorecards) Record(ctx context.Context, sc Score) (int64, error) {
	switch {
	case strings.TrimSpace(sc.Model) == "" || sc.Stamp == "" || sc.Condition == "":
		return 0, refuse(refusal.Invalid, "A scorecard needs its model, its comparison and its condition.")
	case sc.Tasks < 1 || sc.Attempts < sc.Tasks:
		return 0, refuse(refusal.Invalid, "A scorecard needs at least one task, and an attempt for each.")
	}
	res, err := s.db.Write.ExecContext(ctx, `INSERT INTO scorecards (model, stamp, condition, measured_at, tasks, working_code, workflow,
			attempts, first_edit_calls, first_edit_tasks, from_text, invalid_inputs, tokens, tokens_reported, wall_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		sc.Model, sc.Stamp, sc.Condition, sc.MeasuredAt.UnixMilli(), sc.Tasks, sc.WorkingCode, sc.Workflow, sc.Attempts,
		sc.FirstEditCalls, sc.FirstEditTasks, sc.FromText, sc.InvalidInputs, max(sc.Tokens, 0), sc.TokensReported, max(sc.WallMS, 0))
	if err != nil {
		return 0, fmt.Errorf("knowledge: record a scorecard: %w", err)
	}
	return res.LastInsertId()
}

// Latest is each model's newest row, by model.
func (s *Scorecards) Latest(ctx context.Context) (map[string]Score, error) {
	var rows []scoreRow
	if err := s.db.Read.SelectContext(ctx, &rows, `SELECT `+scoreColumns+` FROM scorecards
		WHERE id IN (SELECT max(id) FROM scorecards GROUP BY model)`); err != nil {
		return nil, fmt.Errorf("knowledge: the latest scorecards: %w", err)
	}
	out := make(map[string]Score, len(rows))
	for _, r := range rows {
		out[r.Model] = r.score()
	}
	return out, nil
}
