package knowledge

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"autoapp/intent/refusal"
	"autoapp/migrations"
)

// The arms of a replay: the runs given the lesson under test, the runs
// given no lesson, and the regression set's runs (another case given the
// new lesson).
const (
	ArmWith       = "with"
	ArmWithout    = "without"
	ArmRegression = "regression"
)

// ReplayRun is one finished run of a replay, as its replays row keeps it.
type ReplayRun struct {
	ID int64 `json:"id"`
	// Manifest is the hash of the replay's manifest, kept as a blob before
	// anything ran; every run of one replay names the same one.
	Manifest string `json:"manifest"`
	// OfCaseID is the case the replay was started for; CaseID the case
	// this run replayed (another one in the regression arm).
	OfCaseID int64 `json:"ofCaseId"`
	CaseID   int64 `json:"caseId"`
	// LessonID is the lesson under test, 0 when the case had none. The
	// with and regression arms were given it, the without arm nothing.
	LessonID int64  `json:"lessonId,omitempty"`
	Arm      string `json:"arm"`
	// N numbers the run's folder under its arm: <root>/replay/<case>/<arm>/<n>/.
	N     int    `json:"n"`
	RunID string `json:"runId"`
	// Passed is the judgement, from what the run left; Judgement says why
	// in a sentence.
	Passed    bool   `json:"passed"`
	Judgement string `json:"judgement"`
	// Ended is how the turn ended (answered, steps, wall, idle, refusals).
	Ended string `json:"ended"`
	// Calls are the tool calls the turn made.
	Calls        int       `json:"calls"`
	InputTokens  int       `json:"inputTokens"`
	OutputTokens int       `json:"outputTokens"`
	StartedAt    time.Time `json:"startedAt"`
	FinishedAt   time.Time `json:"finishedAt"`
}

// Replays keeps the replays' manifests and runs in the launcher's store,
// and finds what a replay needs: the lesson a case taught and the
// regression set. Nothing here writes a serving, a case or a context: a
// replay is never what a learning query learns from.
type Replays struct {
	db  *migrations.DB
	now func() time.Time
}

// NewReplays keeps replays in db (the knowledge store, migrated), stamping
// the manifests with now.
func NewReplays(db *migrations.DB, now func() time.Time) *Replays {
	return &Replays{db: db, now: now}
}

// KeepManifest keeps a replay's manifest as a blob and answers its hash. It
// is written before anything runs.
func (r *Replays) KeepManifest(ctx context.Context, text string) (string, error) {
	if strings.TrimSpace(text) == "" {
		return "", refuse(refusal.Invalid, "A replay needs its manifest.")
	}
	tx, err := r.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("knowledge: keep a replay's manifest: %w", err)
	}
	defer tx.Rollback()
	hash, err := putBlob(ctx, tx, text, r.now())
	if err != nil {
		return "", err
	}
	if err := tx.Commit(); err != nil {
		return "", fmt.Errorf("knowledge: keep a replay's manifest: %w", err)
	}
	return hash, nil
}

// Manifest is the text of the manifest kept under hash.
func (r *Replays) Manifest(ctx context.Context, hash string) (string, error) {
	var text string
	err := r.db.Read.GetContext(ctx, &text, `SELECT text FROM blobs WHERE hash = ?`, hash)
	if errors.Is(err, sql.ErrNoRows) {
		return "", refuse(refusal.NotFound, "No replay's manifest is kept under %s.", hash)
	}
	if err != nil {
		return "", fmt.Errorf("knowledge: a replay's manifest: %w", err)
	}
	return text, nil
}

// replayRow is a replays row as SQLite holds it.
type replayRow struct {
	ID           int64         `db:"id"`
	Manifest     string        `db:"manifest_hash"`
	OfCaseID     int64         `db:"of_case_id"`
	CaseID       int64         `db:"case_id"`
	LessonID     sql.NullInt64 `db:"lesson_id"`
	Arm          string        `db:"arm"`
	N            int           `db:"n"`
	RunID        string        `db:"run_id"`
	StartedAt    int64         `db:"started_at"`
	FinishedAt   int64         `db:"finished_at"`
	Passed       bool          `db:"passed"`
	Judgement    string        `db:"judgement"`
	Ended        string        `db:"ended"`
	Calls        int           `db:"calls"`
	InputTokens  int           `db:"input_tokens"`
	OutputTokens int           `db:"output_tokens"`
}

const replayColumns = `id, manifest_hash, of_case_id, case_id, lesson_id, arm, n, run_id, started_at, finished_at,
	passed, judgement, ended, calls, input_tokens, output_tokens`

// Record writes the row of one run that finished and was judged, and
// answers its id. The manifest it names must be kept already.
func (r *Replays) Record(ctx context.Context, run ReplayRun) (int64, error) {
	switch {
	case run.Manifest == "":
		return 0, refuse(refusal.Invalid, "A replay's run needs the manifest it ran under.")
	case !slices.Contains([]string{ArmWith, ArmWithout, ArmRegression}, run.Arm):
		return 0, refuse(refusal.Invalid, "A replay's arm is with, without or regression, not %q.", run.Arm)
	case run.Arm != ArmWithout && run.LessonID == 0:
		return 0, refuse(refusal.Invalid, "The %s arm of a replay needs the lesson it was given.", run.Arm)
	case run.CaseID <= 0 || run.OfCaseID <= 0 || run.N < 1 || run.RunID == "":
		return 0, refuse(refusal.Invalid, "A replay's run needs its case, its number and its run id.")
	case strings.TrimSpace(run.Judgement) == "":
		return 0, refuse(refusal.Invalid, "A replay's run needs the sentence it was judged with.")
	}
	lesson := sql.NullInt64{Int64: run.LessonID, Valid: run.LessonID != 0}
	res, err := r.db.Write.ExecContext(ctx, `INSERT INTO replays (manifest_hash, of_case_id, case_id, lesson_id, arm, n, run_id,
			started_at, finished_at, passed, judgement, ended, calls, input_tokens, output_tokens)
		SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM blobs WHERE hash = ?)`,
		run.Manifest, run.OfCaseID, run.CaseID, lesson, run.Arm, run.N, run.RunID,
		run.StartedAt.UnixMilli(), run.FinishedAt.UnixMilli(), run.Passed, run.Judgement, run.Ended,
		max(run.Calls, 0), max(run.InputTokens, 0), max(run.OutputTokens, 0), run.Manifest)
	if err != nil {
		return 0, fmt.Errorf("knowledge: record a replay's run: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return 0, fmt.Errorf("knowledge: record a replay's run: %w", err)
	} else if n == 0 {
		return 0, refuse(refusal.NotFound, "No replay's manifest is kept under %s.", run.Manifest)
	}
	return res.LastInsertId()
}

// Runs are the runs of the replay whose manifest is hash, in the order
// they finished.
func (r *Replays) Runs(ctx context.Context, hash string) ([]ReplayRun, error) {
	var rows []replayRow
	if err := r.db.Read.SelectContext(ctx, &rows,
		`SELECT `+replayColumns+` FROM replays WHERE manifest_hash = ? ORDER BY id`, hash); err != nil {
		return nil, fmt.Errorf("knowledge: a replay's runs: %w", err)
	}
	out := make([]ReplayRun, len(rows))
	for i, row := range rows {
		out[i] = ReplayRun{ID: row.ID, Manifest: row.Manifest, OfCaseID: row.OfCaseID, CaseID: row.CaseID,
			LessonID: row.LessonID.Int64, Arm: row.Arm, N: row.N, RunID: row.RunID, Passed: row.Passed,
			Judgement: row.Judgement, Ended: row.Ended, Calls: row.Calls, InputTokens: row.InputTokens,
			OutputTokens: row.OutputTokens, StartedAt: time.UnixMilli(row.StartedAt), FinishedAt: time.UnixMilli(row.FinishedAt)}
	}
	return out, nil
}

// LatestForLesson is the manifest of the newest replay that tested lesson
// id, and false when none did. A replay stopped before any run finished
// has no row, and is not found.
func (r *Replays) LatestForLesson(ctx context.Context, lessonID int64) (string, bool, error) {
	var hash string
	err := r.db.Read.GetContext(ctx, &hash,
		`SELECT manifest_hash FROM replays WHERE lesson_id = ? AND arm <> 'regression' ORDER BY id DESC LIMIT 1`, lessonID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("knowledge: the latest replay of lesson %d: %w", lessonID, err)
	}
	return hash, true, nil
}

// LastRun is the highest folder number a finished run of case's arm was
// given, 0 when none finished.
func (r *Replays) LastRun(ctx context.Context, caseID int64, arm string) (int, error) {
	var n int
	if err := r.db.Read.GetContext(ctx, &n,
		`SELECT coalesce(max(n), 0) FROM replays WHERE case_id = ? AND arm = ?`, caseID, arm); err != nil {
		return 0, fmt.Errorf("knowledge: the runs of case %d: %w", caseID, err)
	}
	return n, nil
}

// LessonOfCase is the newest provisional or confirmed lesson distilled
// from case id, and false when it taught none that is served.
func (r *Replays) LessonOfCase(ctx context.Context, caseID int64) (Lesson, bool, error) {
	var id int64
	err := r.db.Read.GetContext(ctx, &id, `SELECT id FROM lessons WHERE case_id = ? AND status IN ('provisional', 'confirmed')
		ORDER BY id DESC LIMIT 1`, caseID)
	if errors.Is(err, sql.ErrNoRows) {
		return Lesson{}, false, nil
	}
	if err != nil {
		return Lesson{}, false, fmt.Errorf("knowledge: the lesson of case %d: %w", caseID, err)
	}
	l, err := getLesson(ctx, r.db.Read, id)
	return l, err == nil, err
}

// RegressionCase is a resolved case and the confirmed lesson it taught.
type RegressionCase struct {
	Case   Case
	Lesson Lesson
}

// RegressionSet are the resolved cases of appID other than except whose
// lesson a person confirmed, oldest first, each with its newest confirmed
// lesson.
func (r *Replays) RegressionSet(ctx context.Context, appID string, except int64) ([]RegressionCase, error) {
	var pairs []struct {
		CaseID   int64 `db:"case_id"`
		LessonID int64 `db:"lesson_id"`
	}
	if err := r.db.Read.SelectContext(ctx, &pairs, `SELECT c.id AS case_id, max(l.id) AS lesson_id
		FROM cases c JOIN lessons l ON l.case_id = c.id
		WHERE c.app_id = ? AND c.id <> ? AND c.resolved_at IS NOT NULL AND l.status = 'confirmed'
		GROUP BY c.id ORDER BY c.id`, appID, except); err != nil {
		return nil, fmt.Errorf("knowledge: the regression set of %s: %w", appID, err)
	}
	cases := NewCases(r.db, r.now)
	out := make([]RegressionCase, 0, len(pairs))
	for _, p := range pairs {
		c, err := cases.Get(ctx, p.CaseID)
		if err != nil {
			return nil, err
		}
		l, err := getLesson(ctx, r.db.Read, p.LessonID)
		if err != nil {
			return nil, err
		}
		out = append(out, RegressionCase{Case: c, Lesson: l})
	}
	return out, nil
}

// ServeAs is lesson l as a turn is given it for reason, labelled as Match
// labels it: what a replay's frozen corpus serves.
func ServeAs(l Lesson, reason string) Served { return serve(l, reason) }
