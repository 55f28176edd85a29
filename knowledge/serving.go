package knowledge

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"autoapp/intent/refusal"
	"autoapp/migrations"
)

// The outcomes of a serving (the seed's "Outcomes"). An outcome is a fact
// about one attempt; nothing promotes, retires or ranks a lesson by it.
const (
	// OutcomeResolved: the lesson's stage ran and its failure was not
	// there (the same rule that resolves a build case), or the example
	// it is about passed.
	OutcomeResolved = "resolved"
	// OutcomeRecurred: the lesson's failure happened again.
	OutcomeRecurred = "recurred"
	// OutcomeBlocked: the build stopped before the lesson's stage.
	OutcomeBlocked = "blocked"
	// OutcomeInconclusive: what ran said nothing about the lesson.
	OutcomeInconclusive = "inconclusive"
	// OutcomeUnrelated: a different failure.
	OutcomeUnrelated = "unrelated"
	// OutcomeNone: the turn ended with nothing that could say anything.
	OutcomeNone = "none"
)

// forgetAfter is how long the first observations of a run that never
// ended are kept in memory.
const forgetAfter = 24 * time.Hour

// Serving is one lesson a turn was going to give, and what came of it. An
// empty Outcome means it is open; one not Included stays so for good.
type Serving struct {
	ID        int64     `json:"id"`
	LessonID  int64     `json:"lessonId"`
	RunID     string    `json:"runId"`
	ContextID int64     `json:"contextId,omitempty"`
	ServedAt  time.Time `json:"servedAt"`
	// Reason is pinned, related, words or hint; RelatedFile is the file
	// a related serving shares with the turn.
	Reason      string `json:"reason"`
	RelatedFile string `json:"relatedFile,omitempty"`
	// Included says the lesson's whole line reached the model; a lesson
	// the budget cut is not included and is never scored.
	Included    bool      `json:"included"`
	Outcome     string    `json:"outcome,omitempty"`
	ClosedAt    time.Time `json:"closedAt,omitzero"`
	ClosedByRun string    `json:"closedByRun,omitempty"`
}

// Observation is one build or one run of the checks, as a serving's
// outcome reads it. Build it with BuildObservation or ChecksObservation.
type Observation struct {
	// Kind is CaseBuild or CaseCheck.
	Kind string
	// A build's stages that ran, whether it passed, and its problems.
	StagesRun []string
	OK        bool
	Problems  []BuildProblem
	// A run of the checks: how each example fared.
	Results []ExampleResult
}

// BuildObservation is what b says to the servings.
func BuildObservation(b BuildObserved) Observation {
	return Observation{Kind: CaseBuild, StagesRun: b.StagesRun, OK: b.OK, Problems: b.Problems}
}

// ChecksObservation is what c says to the servings.
func ChecksObservation(c ChecksObserved) Observation {
	return Observation{Kind: CaseCheck, Results: c.Results}
}

// Servings records which lessons each turn was going to give, each
// included or cut by the budget, and closes each included serving once
// with what came of it; one not included is never closed.
//
// A turn reports what it delivered only when it ends, while its builds and
// checks happen during it; so Close both closes the run's open servings
// and keeps, in memory, the run's first build and first run of the checks,
// which Record applies to the servings it writes. End closes what is left
// when the turn is over. A serving is closed by the first observation of
// its run that could say something about it:
//
//   - A build says something about a lesson that names a build stage or a
//     build signature, and about a lesson that names neither; a run of the
//     checks about a lesson whose signature is a check's ("check:<hash>"),
//     and about one that names neither. A build never closes a check
//     serving.
//   - A lesson naming neither is inconclusive at the first build or check.
//   - A build lesson: recurred when its signature is among the build's
//     failures; blocked when its stage never ran; unrelated when its stage
//     failed with another problem, or (naming no stage) the build failed
//     elsewhere; resolved otherwise (its stage ran clean, or the build
//     passed).
//   - A check lesson: recurred when its example's content failed;
//     resolved when it passed; unrelated when only other examples failed;
//     inconclusive when its example did not run.
//   - At End, a serving still open is inconclusive when the run built or
//     checked anything, and none when it did neither.
type Servings struct {
	db  *migrations.DB
	now func() time.Time

	// mu serialises the writes and guards first.
	mu    sync.Mutex
	first map[string]*firstSeen // by run id
}

// firstSeen is a run's first build and first run of the checks, in the
// order they came.
type firstSeen struct {
	at   time.Time
	seen []Observation
}

// NewServings keeps servings in db (the knowledge store, migrated),
// stamping them with now.
func NewServings(db *migrations.DB, now func() time.Time) *Servings {
	return &Servings{db: db, now: now, first: map[string]*firstSeen{}}
}

// Record writes one serving per lesson the turn of runID was going to
// give, with its contexts row (0 for none), once the turn reported what it
// delivered: included are the lessons whose whole line reached the model,
// cut those the budget cut or dropped. A cut one is kept not included and
// is never scored. The run's builds and checks seen so far close the new
// included servings at once.
func (s *Servings) Record(ctx context.Context, runID string, contextID int64, included, cut []Served) error {
	runID = strings.TrimSpace(runID)
	if runID == "" {
		return refuse(refusal.Invalid, "A serving needs the run it was given to.")
	}
	type row struct {
		lessonID     int64
		reason, file string
		included     bool
	}
	rows := make([]row, 0, len(included)+len(cut))
	for n, sv := range slices.Concat(included, cut) {
		reason, file, _ := strings.Cut(sv.Reason, ":")
		switch {
		case sv.Lesson.ID <= 0:
			return refuse(refusal.Invalid, "A serving needs the lesson it served.")
		case !slices.Contains([]string{ReasonPinned, ReasonRelated, ReasonWords, ReasonHint}, reason):
			return refuse(refusal.Invalid, "%q is not a reason a lesson is served for.", sv.Reason)
		}
		rows = append(rows, row{sv.Lesson.ID, reason, file, n < len(included)})
	}
	if len(rows) == 0 {
		return nil
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.now()
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("knowledge: record the servings of %s: %w", runID, err)
	}
	defer tx.Rollback()
	ctxRow := sql.NullInt64{Int64: contextID, Valid: contextID > 0}
	for _, r := range rows {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO servings (lesson_id, run_id, context_id, served_at, reason, related_file, included)
			 VALUES (?, ?, ?, ?, ?, ?, ?)`, r.lessonID, runID, ctxRow, at.UnixMilli(), r.reason, r.file, r.included); err != nil {
			return fmt.Errorf("knowledge: record the serving of lesson %d to %s: %w", r.lessonID, runID, err)
		}
	}
	if f := s.first[runID]; f != nil {
		for _, o := range f.seen {
			if err := closeOpen(ctx, tx, runID, at, func(l servedLesson) (string, bool) { return judge(l, o) }); err != nil {
				return err
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("knowledge: record the servings of %s: %w", runID, err)
	}
	return nil
}

// Close tells the servings of runID what a build or a run of the checks of
// appID found: each open serving it can say something about is closed
// with its outcome, and the run remembers it as its first of its kind for
// the servings Record writes later.
func (s *Servings) Close(ctx context.Context, appID, runID string, o Observation) error {
	switch {
	case strings.TrimSpace(appID) == "":
		return refuse(refusal.Invalid, "An observation needs the application it was made of.")
	case strings.TrimSpace(runID) == "":
		return refuse(refusal.Invalid, "An observation needs the run it belongs to.")
	case o.Kind != CaseBuild && o.Kind != CaseCheck:
		return refuse(refusal.Invalid, "An observation is of a build or of the checks, not %q.", o.Kind)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.now()
	s.remember(runID, at, o)
	return s.closeRun(ctx, runID, at, func(l servedLesson) (string, bool) { return judge(l, o) })
}

// End closes every included serving of runID still open, as its turn is over:
// inconclusive when the run built or checked anything, none when it did
// neither. It forgets what the run observed.
func (s *Servings) End(ctx context.Context, runID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	outcome := OutcomeNone
	if f := s.first[runID]; f != nil && len(f.seen) > 0 {
		outcome = OutcomeInconclusive
	}
	delete(s.first, runID)
	return s.closeRun(ctx, runID, s.now(), func(servedLesson) (string, bool) { return outcome, true })
}

// ForRun reads the servings of one run, in the order they were written.
func (s *Servings) ForRun(ctx context.Context, runID string) ([]Serving, error) {
	return listServings(ctx, s.db.Read, `run_id = ?`, runID)
}

// ForLesson reads every serving of one lesson, oldest first.
func (s *Servings) ForLesson(ctx context.Context, lessonID int64) ([]Serving, error) {
	return listServings(ctx, s.db.Read, `lesson_id = ?`, lessonID)
}

// listServings reads the servings where selects, in the order they were
// written.
func listServings(ctx context.Context, q sqlx.QueryerContext, where string, args ...any) ([]Serving, error) {
	var rows []struct {
		ID          int64          `db:"id"`
		LessonID    int64          `db:"lesson_id"`
		RunID       string         `db:"run_id"`
		ContextID   sql.NullInt64  `db:"context_id"`
		ServedAt    int64          `db:"served_at"`
		Reason      string         `db:"reason"`
		RelatedFile string         `db:"related_file"`
		Included    bool           `db:"included"`
		Outcome     sql.NullString `db:"outcome"`
		ClosedAt    sql.NullInt64  `db:"closed_at"`
		ClosedByRun sql.NullString `db:"closed_by_run"`
	}
	if err := sqlx.SelectContext(ctx, q, &rows,
		`SELECT id, lesson_id, run_id, context_id, served_at, reason, related_file, included, outcome, closed_at, closed_by_run
		 FROM servings WHERE `+where+` ORDER BY id`, args...); err != nil {
		return nil, fmt.Errorf("knowledge: servings: %w", err)
	}
	out := make([]Serving, len(rows))
	for i, r := range rows {
		out[i] = Serving{ID: r.ID, LessonID: r.LessonID, RunID: r.RunID, ContextID: r.ContextID.Int64,
			ServedAt: time.UnixMilli(r.ServedAt), Reason: r.Reason, RelatedFile: r.RelatedFile, Included: r.Included,
			Outcome: r.Outcome.String, ClosedByRun: r.ClosedByRun.String}
		if r.ClosedAt.Valid {
			out[i].ClosedAt = time.UnixMilli(r.ClosedAt.Int64)
		}
	}
	return out, nil
}

// remember keeps o as runID's first of its kind, and forgets the runs
// that have not ended in forgetAfter (a turn that never reached End).
func (s *Servings) remember(runID string, at time.Time, o Observation) {
	for id, f := range s.first {
		if at.Sub(f.at) > forgetAfter {
			delete(s.first, id)
		}
	}
	f := s.first[runID]
	if f == nil {
		f = &firstSeen{at: at}
		s.first[runID] = f
	}
	if !slices.ContainsFunc(f.seen, func(seen Observation) bool { return seen.Kind == o.Kind }) {
		f.seen = append(f.seen, o)
	}
}

// closeRun closes runID's open servings that decide answers for, in one
// transaction.
func (s *Servings) closeRun(ctx context.Context, runID string, at time.Time, decide func(servedLesson) (string, bool)) error {
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("knowledge: close the servings of %s: %w", runID, err)
	}
	defer tx.Rollback()
	if err := closeOpen(ctx, tx, runID, at, decide); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("knowledge: close the servings of %s: %w", runID, err)
	}
	return nil
}

// servedLesson is an open serving with where its lesson applies.
type servedLesson struct {
	ID        int64  `db:"id"`
	Stage     string `db:"applies_stage"`
	Signature string `db:"applies_signature"`
}

// closeOpen closes, in tx, each open serving of runID that decide has an
// outcome for. A serving not included is never closed: it was not read.
func closeOpen(ctx context.Context, tx *sqlx.Tx, runID string, at time.Time, decide func(servedLesson) (string, bool)) error {
	var open []servedLesson
	if err := tx.SelectContext(ctx, &open,
		`SELECT s.id, l.applies_stage, l.applies_signature FROM servings s JOIN lessons l ON l.id = s.lesson_id
		 WHERE s.run_id = ? AND s.outcome IS NULL AND s.included = 1 ORDER BY s.id`, runID); err != nil {
		return fmt.Errorf("knowledge: close the servings of %s: %w", runID, err)
	}
	for _, l := range open {
		outcome, ok := decide(l)
		if !ok {
			continue
		}
		if _, err := tx.ExecContext(ctx,
			`UPDATE servings SET outcome = ?, closed_at = ?, closed_by_run = ? WHERE id = ? AND outcome IS NULL`,
			outcome, at.UnixMilli(), runID, l.ID); err != nil {
			return fmt.Errorf("knowledge: close serving %d: %w", l.ID, err)
		}
	}
	return nil
}

// judge answers the outcome o gives the serving of l, and false when o
// can say nothing about it (the rules are on Servings).
func judge(l servedLesson, o Observation) (string, bool) {
	isCheck := strings.HasPrefix(l.Signature, checkPrefix)
	isBuild := !isCheck && (l.Stage != "" || l.Signature != "")
	if !isCheck && !isBuild {
		return OutcomeInconclusive, true
	}
	if o.Kind == CaseCheck {
		if !isCheck {
			return "", false
		}
		hash := strings.TrimPrefix(l.Signature, checkPrefix)
		passed, otherFailed := false, false
		for _, r := range o.Results {
			switch {
			case r.Hash == hash && !r.Passed:
				return OutcomeRecurred, true
			case r.Hash == hash:
				passed = true
			case !r.Passed:
				otherFailed = true
			}
		}
		switch {
		case passed:
			return OutcomeResolved, true
		case otherFailed:
			return OutcomeUnrelated, true
		}
		return OutcomeInconclusive, true
	}
	if isCheck {
		return "", false
	}
	failedAtStage := false
	for _, p := range o.Problems {
		if l.Signature != "" && p.Signature == l.Signature {
			return OutcomeRecurred, true
		}
		failedAtStage = failedAtStage || (l.Stage != "" && p.Stage == l.Stage)
	}
	switch {
	case l.Stage != "" && !o.OK && !slices.Contains(o.StagesRun, l.Stage):
		return OutcomeBlocked, true
	case failedAtStage:
		return OutcomeUnrelated, true
	case l.Stage == "" && !o.OK:
		return OutcomeUnrelated, true
	}
	return OutcomeResolved, true
}
