package knowledge

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"autoapp/intent/refusal"
	"autoapp/migrations"
)

// The kinds of case.
const (
	CaseBuild = "build" // a build stage reported a problem
	CaseCheck = "check" // an acceptance example failed
)

// The states of a case's distillation: queued when a turn ended after it
// was resolved, asked while its question is out, done once the diagnosis
// is written, failed after too many tries.
const (
	DistillQueued = "queued"
	DistillAsked  = "asked"
	DistillDone   = "done"
	DistillFailed = "failed"
)

// Limits of cases.
const (
	// MaxCaseEdits is how many characters of edits a case keeps
	// (DESIGN.md), the cut marker included.
	MaxCaseEdits = 20_000
	// DefaultCaseLimit is how many cases List answers when asked for none
	// in particular; MaxCaseLimit is the most it answers.
	DefaultCaseLimit = 100
	MaxCaseLimit     = 1000
)

// caseCut is the last line of edits that reached MaxCaseEdits; nothing is
// appended after it.
const caseCut = "[cut]\n"

// checkPrefix begins a check case's signature, before the example's
// content hash.
const checkPrefix = "check:"

// Case is one failure the host saw, as first seen, what was edited while it
// was open, and what resolved it. A zero ResolvedAt means it is open.
type Case struct {
	ID          int64  `json:"id"`
	Kind        string `json:"kind"`
	Signature   string `json:"signature"`
	AppID       string `json:"appId"`
	Stage       string `json:"stage,omitempty"`       // build cases
	ExampleID   string `json:"exampleId,omitempty"`   // check cases
	ExampleHash string `json:"exampleHash,omitempty"` // check cases
	// Message is the problem as first seen.
	Message string `json:"message"`
	Request string `json:"request"`
	// ContextID is the contexts row of the turn that met the failure; 0
	// when none was recorded.
	ContextID      int64     `json:"contextId,omitempty"`
	RevisionBefore string    `json:"revisionBefore"`
	ReleaseBefore  string    `json:"releaseBefore"`
	Model          string    `json:"model"`
	ServerVersion  string    `json:"serverVersion"`
	OpenedAt       time.Time `json:"openedAt"`
	OpenedRunID    string    `json:"openedRunId"`
	// Edits are one line per edit made while the case was open.
	Edits            string    `json:"edits"`
	ResolvedAt       time.Time `json:"resolvedAt,omitzero"`
	ResolvedRunID    string    `json:"resolvedRunId,omitempty"`
	ResolvedRevision string    `json:"resolvedRevision,omitempty"`
	// Diagnosis is the distiller's answer, written once; empty until then.
	Diagnosis    string `json:"diagnosis,omitempty"`
	DistillState string `json:"distillState,omitempty"`
	DistillTries int    `json:"distillTries"`
	// CorpusVersion is the corpus version the turn that met the failure
	// was served from: its contexts row's, or the one in force when the
	// case opened outside a recorded turn (0 for a case opened before
	// versions were counted).
	CorpusVersion int64 `json:"corpusVersion"`
	// ExampleSteps is, for a check case, the blob holding its example's
	// steps as they were run; "" when they were not known.
	ExampleSteps string `json:"exampleSteps,omitempty"`
	// ResolvedRelease is the release the build that resolved it made, or
	// the checks that resolved it ran against; "" when none.
	ResolvedRelease string `json:"resolvedRelease,omitempty"`
}

// Resolved reports whether a build or a check has found the failure gone.
func (c Case) Resolved() bool { return !c.ResolvedAt.IsZero() }

// Cases opens, appends to and resolves cases in the knowledge store. It
// needs only the store's database, so it can be built beside the Store.
type Cases struct {
	db  *migrations.DB
	now func() time.Time
}

// NewCases keeps cases in db (the knowledge store, migrated), stamping
// them with now.
func NewCases(db *migrations.DB, now func() time.Time) *Cases {
	return &Cases{db: db, now: now}
}

// CaseQuery selects cases for List. The zero value lists the newest
// DefaultCaseLimit cases of every application.
type CaseQuery struct {
	AppID string // "" for every application
	Open  *bool  // nil for both; true for open cases, false for resolved
	Limit int    // 0 for DefaultCaseLimit; at most MaxCaseLimit
}

// caseColumns are the columns caseRow reads, in the order of its fields.
const caseColumns = `id, kind, signature, app_id, stage, example_id, example_hash, message, request,
	context_id, revision_before, release_before, model, server_version, opened_at, opened_run_id,
	edits, resolved_at, resolved_run_id, resolved_revision, diagnosis, distill_state, distill_tries,
	coalesce(corpus_version, 0) AS corpus_version, coalesce(example_steps, '') AS example_steps,
	coalesce(resolved_release, '') AS resolved_release`

// caseRow is a cases row as SQLite holds it.
type caseRow struct {
	ID               int64          `db:"id"`
	Kind             string         `db:"kind"`
	Signature        string         `db:"signature"`
	AppID            string         `db:"app_id"`
	Stage            sql.NullString `db:"stage"`
	ExampleID        sql.NullString `db:"example_id"`
	ExampleHash      sql.NullString `db:"example_hash"`
	Message          string         `db:"message"`
	Request          string         `db:"request"`
	ContextID        sql.NullInt64  `db:"context_id"`
	RevisionBefore   string         `db:"revision_before"`
	ReleaseBefore    string         `db:"release_before"`
	Model            string         `db:"model"`
	ServerVersion    string         `db:"server_version"`
	OpenedAt         int64          `db:"opened_at"`
	OpenedRunID      string         `db:"opened_run_id"`
	Edits            string         `db:"edits"`
	ResolvedAt       sql.NullInt64  `db:"resolved_at"`
	ResolvedRunID    sql.NullString `db:"resolved_run_id"`
	ResolvedRevision sql.NullString `db:"resolved_revision"`
	Diagnosis        sql.NullString `db:"diagnosis"`
	DistillState     sql.NullString `db:"distill_state"`
	DistillTries     int            `db:"distill_tries"`
	CorpusVersion    int64          `db:"corpus_version"`
	ExampleSteps     string         `db:"example_steps"`
	ResolvedRelease  string         `db:"resolved_release"`
}

func (r caseRow) toCase() Case {
	c := Case{
		ID: r.ID, Kind: r.Kind, Signature: r.Signature, AppID: r.AppID,
		Stage: r.Stage.String, ExampleID: r.ExampleID.String, ExampleHash: r.ExampleHash.String,
		Message: r.Message, Request: r.Request, ContextID: r.ContextID.Int64,
		RevisionBefore: r.RevisionBefore, ReleaseBefore: r.ReleaseBefore,
		Model: r.Model, ServerVersion: r.ServerVersion,
		OpenedAt: time.UnixMilli(r.OpenedAt), OpenedRunID: r.OpenedRunID,
		Edits:         r.Edits,
		ResolvedRunID: r.ResolvedRunID.String, ResolvedRevision: r.ResolvedRevision.String,
		Diagnosis: r.Diagnosis.String, DistillState: r.DistillState.String, DistillTries: r.DistillTries,
		CorpusVersion: r.CorpusVersion, ExampleSteps: r.ExampleSteps, ResolvedRelease: r.ResolvedRelease,
	}
	if r.ResolvedAt.Valid {
		c.ResolvedAt = time.UnixMilli(r.ResolvedAt.Int64)
	}
	return c
}

func toCases(rows []caseRow) []Case {
	out := make([]Case, len(rows))
	for i, r := range rows {
		out[i] = r.toCase()
	}
	return out
}

// Get reads one case.
func (s *Cases) Get(ctx context.Context, id int64) (Case, error) {
	var r caseRow
	err := s.db.Read.GetContext(ctx, &r, `SELECT `+caseColumns+` FROM cases WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Case{}, refuse(refusal.NotFound, "There is no case %d.", id)
	}
	if err != nil {
		return Case{}, fmt.Errorf("knowledge: case %d: %w", id, err)
	}
	return r.toCase(), nil
}

// List answers the cases q selects, newest first.
func (s *Cases) List(ctx context.Context, q CaseQuery) ([]Case, error) {
	switch {
	case q.Limit < 0:
		return nil, refuse(refusal.Invalid, "A limit cannot be negative.")
	case q.Limit == 0:
		q.Limit = DefaultCaseLimit
	case q.Limit > MaxCaseLimit:
		q.Limit = MaxCaseLimit
	}
	var where []string
	var args []any
	if q.AppID != "" {
		where = append(where, "app_id = ?")
		args = append(args, q.AppID)
	}
	if q.Open != nil {
		if *q.Open {
			where = append(where, "resolved_at IS NULL")
		} else {
			where = append(where, "resolved_at IS NOT NULL")
		}
	}
	query := `SELECT ` + caseColumns + ` FROM cases`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	query += ` ORDER BY id DESC LIMIT ?`
	args = append(args, q.Limit)
	var rows []caseRow
	if err := s.db.Read.SelectContext(ctx, &rows, query, args...); err != nil {
		return nil, fmt.Errorf("knowledge: cases: %w", err)
	}
	return toCases(rows), nil
}

// HunksMark separates, in an edit's summary, the tool and the files from
// how each hunk of the edit matched.
const HunksMark = "|"

// AppendEdit records that runID edited appID (summary says what: the tool
// and the files, then, after HunksMark, how each hunk matched), in one
// transaction: as the run's work (when it names a
// run), and as one line on every open case of appID. A case's edits stop
// at MaxCaseEdits characters: the line that would pass it is replaced by a
// single "[cut]" line, and nothing is appended after that.
func (s *Cases) AppendEdit(ctx context.Context, appID, runID, summary string) error {
	if appID == "" {
		return refuse(refusal.Invalid, "An edit needs the application it was made in.")
	}
	summary = strings.Join(strings.Fields(summary), " ")
	// The run's work names the tool and the files; the case keeps how
	// each hunk matched too.
	work, _, _ := strings.Cut(summary, " "+HunksMark+" ")
	if summary == "" {
		return refuse(refusal.Invalid, "An edit needs a summary of what changed.")
	}
	now := s.now()
	line := now.UTC().Format(time.RFC3339)
	if runID != "" {
		line += " " + runID
	}
	line += " " + summary + "\n"

	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("knowledge: append an edit: %w", err)
	}
	defer tx.Rollback()
	if runID != "" {
		if err := addWork(ctx, tx, now, runID, appID, WorkEdit, true, work); err != nil {
			return err
		}
	}
	var open []struct {
		ID    int64  `db:"id"`
		Edits string `db:"edits"`
	}
	if err := tx.SelectContext(ctx, &open,
		`SELECT id, edits FROM cases WHERE app_id = ? AND resolved_at IS NULL ORDER BY id`, appID); err != nil {
		return fmt.Errorf("knowledge: append an edit: %w", err)
	}
	for _, c := range open {
		next, changed := appendEdit(c.Edits, line)
		if !changed {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE cases SET edits = ? WHERE id = ?`, next, c.ID); err != nil {
			return fmt.Errorf("knowledge: append an edit to case %d: %w", c.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("knowledge: append an edit: %w", err)
	}
	return nil
}

// appendEdit is edits with line appended, or with the cut marker when the
// line would leave no room for it; changed is false once edits were cut.
// Lengths are in characters, as SQLite's length() counts them.
func appendEdit(edits, line string) (next string, changed bool) {
	// Every other line begins with its time, so a line that is exactly
	// the marker is the marker.
	if edits == caseCut || strings.HasSuffix(edits, "\n"+caseCut) {
		return edits, false
	}
	have := utf8.RuneCountInString(edits)
	if have+utf8.RuneCountInString(line) <= MaxCaseEdits-utf8.RuneCountInString(caseCut) {
		return edits + line, true
	}
	return edits + caseCut, true
}

// Diagnose writes the distiller's diagnosis of case id. A diagnosis is
// written once: a second one is refused with refusal.Conflict.
func (s *Cases) Diagnose(ctx context.Context, id int64, text string) error {
	if strings.TrimSpace(text) == "" {
		return refuse(refusal.Invalid, "A diagnosis cannot be empty.")
	}
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("knowledge: diagnose case %d: %w", id, err)
	}
	defer tx.Rollback()
	var diagnosed bool
	err = tx.GetContext(ctx, &diagnosed, `SELECT diagnosis IS NOT NULL FROM cases WHERE id = ?`, id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return refuse(refusal.NotFound, "There is no case %d.", id)
	case err != nil:
		return fmt.Errorf("knowledge: diagnose case %d: %w", id, err)
	case diagnosed:
		return refuse(refusal.Conflict, "Case %d has a diagnosis already; a diagnosis is written once.", id)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE cases SET diagnosis = ? WHERE id = ?`, text, id); err != nil {
		return fmt.Errorf("knowledge: diagnose case %d: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("knowledge: diagnose case %d: %w", id, err)
	}
	return nil
}

// QueueResolved marks every resolved case that was never queued for
// distillation as queued and answers them, oldest first.
func (s *Cases) QueueResolved(ctx context.Context) ([]Case, error) {
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("knowledge: queue resolved cases: %w", err)
	}
	defer tx.Rollback()
	// The transaction holds the write lock, so the rows read are the rows
	// the update marks.
	var rows []caseRow
	if err := tx.SelectContext(ctx, &rows,
		`SELECT `+caseColumns+` FROM cases WHERE resolved_at IS NOT NULL AND distill_state IS NULL ORDER BY id`); err != nil {
		return nil, fmt.Errorf("knowledge: queue resolved cases: %w", err)
	}
	for _, r := range rows {
		if err := moveDistill(ctx, tx, r.ID, DistillQueued, keepTries); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("knowledge: queue resolved cases: %w", err)
	}
	queued := toCases(rows)
	for i := range queued {
		queued[i].DistillState = DistillQueued
	}
	return queued, nil
}

// MarkDistill records where case id's distillation stands and how many
// questions it has taken.
func (s *Cases) MarkDistill(ctx context.Context, id int64, state string, tries int) error {
	switch state {
	case DistillQueued, DistillAsked, DistillDone, DistillFailed:
	default:
		return refuse(refusal.Invalid, "%q is not a state of distillation.", state)
	}
	if tries < 0 {
		return refuse(refusal.Invalid, "Tries cannot be negative.")
	}
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("knowledge: mark case %d's distillation: %w", id, err)
	}
	defer tx.Rollback()
	if err := moveDistill(ctx, tx, id, state, tries); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("knowledge: mark case %d's distillation: %w", id, err)
	}
	return nil
}

// settleDiagnosed marks case id's distillation done, with tries, when it
// has a diagnosis already (written by a person, or by a distillation that
// answered first), so nothing needed asking; one done already stays as it
// is.
func (s *Cases) settleDiagnosed(ctx context.Context, id int64, tries int) error {
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("knowledge: settle case %d's distillation: %w", id, err)
	}
	defer tx.Rollback()
	var state sql.NullString
	if err := tx.GetContext(ctx, &state, `SELECT distill_state FROM cases WHERE id = ?`, id); errors.Is(err, sql.ErrNoRows) {
		return refuse(refusal.NotFound, "There is no case %d.", id)
	} else if err != nil {
		return fmt.Errorf("knowledge: settle case %d's distillation: %w", id, err)
	}
	if state.String == DistillDone {
		return nil
	}
	if err := moveDistill(ctx, tx, id, DistillDone, tries); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("knowledge: settle case %d's distillation: %w", id, err)
	}
	return nil
}

// distillMoves is the table of a case's distillation, from → to; "" is a
// case never queued. A resolved case is queued, or distilled at once; a
// queued one is asked about; an asked one is asked again (a launcher that
// stopped left it asked), queued again after its question failed, failed
// once out of tries; either is done once its diagnosis is written. Done
// and failed are where it ends.
var distillMoves = map[string][]string{
	"":            {DistillQueued, DistillDone},
	DistillQueued: {DistillAsked, DistillDone},
	DistillAsked:  {DistillAsked, DistillQueued, DistillFailed, DistillDone},
}

// keepTries is moveDistill's tries for a move that leaves the count as it is.
const keepTries = -1

// moveDistill is the only writer of cases.distill_state, and of
// distill_tries with it (tries, unless keepTries), in the caller's
// transaction. It refuses a move the table does not allow, and a case that
// moved meanwhile.
func moveDistill(ctx context.Context, tx *sqlx.Tx, id int64, to string, tries int) error {
	var cur struct {
		State sql.NullString `db:"distill_state"`
		Tries int            `db:"distill_tries"`
	}
	err := tx.GetContext(ctx, &cur, `SELECT distill_state, distill_tries FROM cases WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return refuse(refusal.NotFound, "There is no case %d.", id)
	}
	if err != nil {
		return fmt.Errorf("knowledge: move case %d's distillation: %w", id, err)
	}
	from := cur.State.String
	if !slices.Contains(distillMoves[from], to) {
		return refuse(refusal.Conflict, "Case %d's distillation cannot move from %s to %s.", id, cmp.Or(from, "never queued"), to)
	}
	if tries == keepTries {
		tries = cur.Tries
	}
	res, err := tx.ExecContext(ctx,
		`UPDATE cases SET distill_state = ?, distill_tries = ? WHERE id = ? AND distill_state IS ?`, to, tries, id, cur.State)
	if err != nil {
		return fmt.Errorf("knowledge: move case %d's distillation: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("knowledge: move case %d's distillation: %w", id, err)
	} else if n == 0 {
		return refuse(refusal.Conflict, "Case %d's distillation moved meanwhile: it is no longer %s.", id, cmp.Or(from, "never queued"))
	}
	return nil
}

// opening is what a case records when it opens.
type opening struct {
	kind, signature, appID        string
	stage, exampleID, exampleHash sql.NullString
	exampleSteps                  sql.NullString
	message, request              string
	contextID                     int64
	revision, release             string
	model, serverVersion          string
	runID                         string
}

// openCase inserts the case unless one of the same failure is open;
// opened is false when one was.
func openCase(ctx context.Context, tx *sqlx.Tx, at time.Time, o opening) (id int64, opened bool, err error) {
	contextID := sql.NullInt64{Int64: o.contextID, Valid: o.contextID != 0}
	res, err := tx.ExecContext(ctx,
		`INSERT INTO cases (kind, signature, app_id, stage, example_id, example_hash, message, request,
			context_id, revision_before, release_before, model, server_version, opened_at, opened_run_id, example_steps, corpus_version)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
		         coalesce((SELECT corpus_version FROM contexts WHERE id = ?9), `+currentVersion+`))
		 ON CONFLICT (app_id, kind, signature) WHERE resolved_at IS NULL DO NOTHING`,
		o.kind, o.signature, o.appID, o.stage, o.exampleID, o.exampleHash, o.message, o.request,
		contextID, o.revision, o.release, o.model, o.serverVersion, at.UnixMilli(), o.runID, o.exampleSteps)
	if err != nil {
		return 0, false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return 0, false, err
	}
	id, err = res.LastInsertId()
	return id, err == nil, err
}

// resolveCase writes case id's resolution, if it is still open.
func resolveCase(ctx context.Context, tx *sqlx.Tx, id int64, at time.Time, runID, revision, release string) error {
	_, err := tx.ExecContext(ctx,
		`UPDATE cases SET resolved_at = ?, resolved_run_id = ?, resolved_revision = ?, resolved_release = ?
		 WHERE id = ? AND resolved_at IS NULL`, at.UnixMilli(), runID, revision, nullable(release), id)
	return err
}
