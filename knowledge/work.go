package knowledge

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"autoapp/intent/refusal"
	"autoapp/knowledge/origin"
)

// The kinds of a run's work: what the host saw a run do to its application.
const (
	WorkEdit   = "edit"   // an edit that landed: the tool and the files
	WorkBuild  = "build"  // a build: passed, or where it failed
	WorkChecks = "checks" // a run of the acceptance examples
)

// Limits of the work a page reads.
const (
	// DefaultWorkListed is how many of each kind of a run's work, and of
	// the cases it opened and resolved, Work answers when asked for no
	// number: the newest, with the count of all.
	DefaultWorkListed = 5
	// MaxWorkListed is the most of each it answers.
	MaxWorkListed = 500
	// MaxWorkRuns is how many runs one call of Work reads.
	MaxWorkRuns = 500
)

// Work is one thing a run did to its application, as the host saw it,
// with the call it was done under and where the application stood (""
// for none, as for the owner's own build).
type Work struct {
	ID        int64
	RunID     string
	AppID     string
	CallID    string
	ReleaseID string
	Revision  string
	At        time.Time
	Kind      string
	OK        bool
	Summary   string
}

// CaseRef names a case a run opened or resolved.
type CaseRef struct {
	ID   int64
	Kind string
	// Where is a build case's stage or a check case's example.
	Where string
}

// RunWork is what one run did beside the documents it was given: its
// edits, builds and runs of the checks (each the newest few, oldest first,
// with the count of all), the cases it opened and resolved, and the
// lessons served to it with what came of them.
type RunWork struct {
	Edits, Builds, Checks             []Work
	EditCount, BuildCount, CheckCount int
	Opened, Resolved                  []CaseRef
	OpenedCount, ResolvedCount        int
	Served                            []Serving
}

// addWork records one thing runID did to appID, in the caller's
// transaction, with the call, release and revision of ctx's identity.
func addWork(ctx context.Context, tx *sqlx.Tx, at time.Time, runID, appID, kind string, ok bool, summary string) error {
	id := origin.IdentityFrom(ctx)
	_, err := tx.ExecContext(ctx, `INSERT INTO run_work (run_id, app_id, at, kind, ok, summary, call_id, release_id, revision)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		runID, appID, at.UnixMilli(), kind, ok, summary, nullable(id.CallID), nullable(id.ReleaseID), nullable(id.Revision))
	if err != nil {
		return fmt.Errorf("knowledge: record the run's %s: %w", kind, err)
	}
	return nil
}

// buildSummary says in a line what a build found: "passed (vet, compile)",
// "failed at compile: main.go:3: undefined: x (and 2 more)".
func buildSummary(b BuildObserved) string {
	if b.OK {
		if len(b.StagesRun) == 0 {
			return "passed"
		}
		return "passed (" + strings.Join(b.StagesRun, ", ") + ")"
	}
	if len(b.Problems) == 0 {
		return "failed"
	}
	first := b.Problems[0]
	where := "before its first stage"
	if first.Stage != "" {
		where = "at " + first.Stage
	}
	s := "failed " + where + ": " + firstLineOf(first.Message, 160)
	if n := len(b.Problems) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more)", n)
	}
	return s
}

// checksSummary says in a line how a run of the checks went: "4 of 4
// passed", "1 of 2 failed: 0001-greet-c1".
func checksSummary(c ChecksObserved) (string, bool) {
	var failed []string
	for _, r := range c.Results {
		if !r.Passed {
			failed = append(failed, r.ID)
		}
	}
	n := len(c.Results)
	if len(failed) == 0 {
		return fmt.Sprintf("%d of %d passed", n, n), true
	}
	s := fmt.Sprintf("%d of %d failed: %s", len(failed), n, strings.Join(failed[:min(len(failed), 3)], ", "))
	if len(failed) > 3 {
		s += ", …"
	}
	return s, false
}

func firstLineOf(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Work reads what each of runIDs did (at most MaxWorkRuns of them), for a
// page of turns: of each kind of work, and of the cases each run opened and
// resolved, the newest each (DefaultWorkListed when 0, at most
// MaxWorkListed) with the count of all; and every serving of each run. It
// reads in a fixed number of indexed queries, whatever the number of runs,
// in one read transaction. A run that did nothing has no entry.
func (s *Store) Work(ctx context.Context, runIDs []string, each int) (map[string]RunWork, error) {
	switch {
	case each <= 0:
		each = DefaultWorkListed
	case each > MaxWorkListed:
		each = MaxWorkListed
	}
	runs := slices.Compact(slices.Sorted(slices.Values(slices.DeleteFunc(slices.Clone(runIDs), func(id string) bool { return id == "" }))))
	if len(runs) > MaxWorkRuns {
		return nil, refuse(refusal.Invalid, "Work is read for at most %d runs at once, not %d.", MaxWorkRuns, len(runs))
	}
	out := map[string]RunWork{}
	if len(runs) == 0 {
		return out, nil
	}
	tx, err := s.db.Read.BeginTxx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("knowledge: the runs' work: %w", err)
	}
	defer tx.Rollback()
	in := "(?" + strings.Repeat(", ?", len(runs)-1) + ")"
	args := make([]any, 0, len(runs)+1)
	for _, r := range runs {
		args = append(args, r)
	}
	args = append(args, each)

	var work []struct {
		ID        int64          `db:"id"`
		RunID     string         `db:"run_id"`
		AppID     string         `db:"app_id"`
		At        int64          `db:"at"`
		Kind      string         `db:"kind"`
		OK        bool           `db:"ok"`
		Summary   string         `db:"summary"`
		CallID    sql.NullString `db:"call_id"`
		ReleaseID sql.NullString `db:"release_id"`
		Revision  sql.NullString `db:"revision"`
		Total     int            `db:"total"`
	}
	if err := tx.SelectContext(ctx, &work,
		`SELECT id, run_id, app_id, at, kind, ok, summary, call_id, release_id, revision, total FROM (
			SELECT id, run_id, app_id, at, kind, ok, summary, call_id, release_id, revision,
				row_number() OVER (PARTITION BY run_id, kind ORDER BY id DESC) AS n,
				count(*) OVER (PARTITION BY run_id, kind) AS total
			FROM run_work WHERE run_id IN `+in+`)
		 WHERE n <= ? ORDER BY id`, args...); err != nil {
		return nil, fmt.Errorf("knowledge: the runs' work: %w", err)
	}
	for _, w := range work {
		rw := out[w.RunID]
		item := Work{ID: w.ID, RunID: w.RunID, AppID: w.AppID, CallID: w.CallID.String, ReleaseID: w.ReleaseID.String, Revision: w.Revision.String,
			At: time.UnixMilli(w.At), Kind: w.Kind, OK: w.OK, Summary: w.Summary}
		switch w.Kind {
		case WorkEdit:
			rw.Edits, rw.EditCount = append(rw.Edits, item), w.Total
		case WorkBuild:
			rw.Builds, rw.BuildCount = append(rw.Builds, item), w.Total
		case WorkChecks:
			rw.Checks, rw.CheckCount = append(rw.Checks, item), w.Total
		}
		out[w.RunID] = rw
	}

	for _, side := range []struct {
		column string
		add    func(*RunWork, CaseRef, int)
	}{
		{"opened_run_id", func(rw *RunWork, c CaseRef, n int) { rw.Opened, rw.OpenedCount = append(rw.Opened, c), n }},
		{"resolved_run_id", func(rw *RunWork, c CaseRef, n int) { rw.Resolved, rw.ResolvedCount = append(rw.Resolved, c), n }},
	} {
		var cases []struct {
			ID        int64          `db:"id"`
			Kind      string         `db:"kind"`
			Stage     sql.NullString `db:"stage"`
			ExampleID sql.NullString `db:"example_id"`
			RunID     string         `db:"run"`
			Total     int            `db:"total"`
		}
		if err := tx.SelectContext(ctx, &cases,
			`SELECT id, kind, stage, example_id, run, total FROM (
				SELECT id, kind, stage, example_id, `+side.column+` AS run,
					row_number() OVER (PARTITION BY `+side.column+` ORDER BY id DESC) AS n,
					count(*) OVER (PARTITION BY `+side.column+`) AS total
				FROM cases WHERE `+side.column+` IN `+in+`)
			 WHERE n <= ? ORDER BY id`, args...); err != nil {
			return nil, fmt.Errorf("knowledge: the runs' cases: %w", err)
		}
		for _, c := range cases {
			rw := out[c.RunID]
			where := c.Stage.String
			if c.Kind == CaseCheck {
				where = c.ExampleID.String
			}
			side.add(&rw, CaseRef{ID: c.ID, Kind: c.Kind, Where: where}, c.Total)
			out[c.RunID] = rw
		}
	}

	served, err := listServings(ctx, tx, `run_id IN `+in, args[:len(runs)]...)
	if err != nil {
		return nil, err
	}
	for _, sv := range served {
		rw := out[sv.RunID]
		rw.Served = append(rw.Served, sv)
		out[sv.RunID] = rw
	}
	if err := tx.Rollback(); err != nil && err != sql.ErrTxDone {
		return nil, fmt.Errorf("knowledge: the runs' work: %w", err)
	}
	return out, nil
}
