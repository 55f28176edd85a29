package knowledge

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"autoapp/intent/refusal"
)

// BuildObserved is one build as the host saw it, with what a case it opens
// records: the request the turn worked on, its contexts row, the revision
// before the repair and the release that was current, the model and the
// server's version.
type BuildObserved struct {
	AppID    string
	RunID    string
	Revision string
	// RevisionBefore is the workspace's revision before the change this
	// build tried (the previous build's), which a case it opens records;
	// "" is Revision.
	RevisionBefore string
	ReleaseBefore  string
	// Release is the release the build made; "" when it made none.
	Release       string
	Request       string
	ContextID     int64 // 0 when the turn recorded none
	Model         string
	ServerVersion string
	// StagesRun are the stages that ran, the failing one included
	// (build.Result.StagesRun).
	StagesRun []string
	// Problems are what the failing stage reported.
	Problems []BuildProblem
	OK       bool
}

// BuildProblem is one problem a build stage reported. Message is the
// problem as the build wrote it (build.Problem.String: file:line: message).
// Signature names the failure so that the same failure seen again, at other
// lines or in other files, has the same one (build.Signature): the caller,
// which knows builds, says it; problems of one signature are one case. A
// problem with no stage is one from before the first stage (the build could
// not prepare its environment).
type BuildProblem struct {
	Stage     string
	Message   string
	Signature string
}

// ChecksObserved is one run of the acceptance examples against a preview,
// with what a case it opens records (see BuildObserved).
type ChecksObserved struct {
	AppID         string
	RunID         string
	Revision      string
	ReleaseBefore string
	// Release is the release the checks ran against, which a case they
	// resolve records.
	Release       string
	Request       string
	ContextID     int64
	Model         string
	ServerVersion string
	Results       []ExampleResult
}

// ExampleResult is how one example fared (acceptance.Result): Hash is the
// example's content hash, empty when its file could not be read.
type ExampleResult struct {
	ID      string
	Hash    string
	Passed  bool
	Failure string
	// Steps are the example's steps as it was run (JSON), which a check
	// case it opens keeps as a blob for the distiller; "" when unknown.
	Steps string
}

// CheckSignature is the signature of a check case for the example whose
// content hash is hash.
func CheckSignature(hash string) string { return checkPrefix + hash }

// Build records a build as the run's work and what it says about the
// application's build cases, in one transaction. Every open build case whose stage ran in this build and
// whose signature is not among its problems is resolved: the stage ran and
// the failure is gone, even when a later stage failed. A case of a stage
// the build never reached stays open, since "the stage never ran" also
// looks like an absent problem. Then each distinct failure opens a case,
// unless one of the same signature is open already. A problem of a stage
// that never ran (a build stopped before the stage began) opens nothing.
func (s *Cases) Build(ctx context.Context, b BuildObserved) (opened, resolved []int64, err error) {
	switch {
	case b.AppID == "":
		return nil, nil, refuse(refusal.Invalid, "A build needs the application it built.")
	case b.RunID == "":
		return nil, nil, refuse(refusal.Invalid, "A build needs the run it belongs to.")
	case b.OK && len(b.Problems) > 0:
		return nil, nil, refuse(refusal.Invalid, "A build that passed cannot report problems.")
	}
	for _, p := range b.Problems {
		if p.Signature == "" {
			return nil, nil, refuse(refusal.Invalid, "A build problem needs its signature.")
		}
	}
	// The stage "" stands for what comes before the first stage: it ran,
	// and passed, once any stage ran.
	ran := func(stage string) bool {
		if stage == "" {
			return b.OK || len(b.StagesRun) > 0
		}
		return slices.Contains(b.StagesRun, stage)
	}
	failing := map[string]BuildProblem{}
	var order []string
	for _, p := range b.Problems {
		if p.Stage != "" && !ran(p.Stage) {
			continue
		}
		sig := p.Signature
		if _, seen := failing[sig]; !seen {
			failing[sig] = p
			order = append(order, sig)
		}
	}

	before := b.RevisionBefore
	if before == "" {
		before = b.Revision
	}
	at := s.now()
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("knowledge: record a build: %w", err)
	}
	defer tx.Rollback()
	if err := addWork(ctx, tx, at, b.RunID, b.AppID, WorkBuild, b.OK, buildSummary(b)); err != nil {
		return nil, nil, err
	}

	var open []struct {
		ID        int64  `db:"id"`
		Stage     string `db:"stage"`
		Signature string `db:"signature"`
	}
	if err := tx.SelectContext(ctx, &open,
		`SELECT id, stage, signature FROM cases WHERE app_id = ? AND kind = ? AND resolved_at IS NULL ORDER BY id`,
		b.AppID, CaseBuild); err != nil {
		return nil, nil, fmt.Errorf("knowledge: record a build: %w", err)
	}
	for _, c := range open {
		if _, still := failing[c.Signature]; still || !ran(c.Stage) {
			continue
		}
		if err := resolveCase(ctx, tx, c.ID, at, b.RunID, b.Revision, b.Release); err != nil {
			return nil, nil, fmt.Errorf("knowledge: resolve case %d: %w", c.ID, err)
		}
		resolved = append(resolved, c.ID)
	}
	for _, sig := range order {
		p := failing[sig]
		id, isNew, err := openCase(ctx, tx, at, opening{
			kind: CaseBuild, signature: sig, appID: b.AppID,
			stage:   sql.NullString{String: p.Stage, Valid: true},
			message: p.Message, request: b.Request, contextID: b.ContextID,
			revision: before, release: b.ReleaseBefore,
			model: b.Model, serverVersion: b.ServerVersion, runID: b.RunID,
		})
		if err != nil {
			return nil, nil, fmt.Errorf("knowledge: open a build case: %w", err)
		}
		if isNew {
			opened = append(opened, id)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, nil, fmt.Errorf("knowledge: record a build: %w", err)
	}
	return opened, resolved, nil
}

// Checks records a run of the acceptance examples as the run's work and
// what it says about the application's check cases, in one transaction. A
// failed example opens a
// case identified by its content hash, unless one is open already; a
// passed example resolves the open case of the same content hash only, so
// an example whose steps were changed and then passed resolves nothing.
// An example whose file could not be read has no content hash and opens
// nothing.
func (s *Cases) Checks(ctx context.Context, c ChecksObserved) (opened, resolved []int64, err error) {
	switch {
	case c.AppID == "":
		return nil, nil, refuse(refusal.Invalid, "A run of the checks needs the application it checked.")
	case c.RunID == "":
		return nil, nil, refuse(refusal.Invalid, "A run of the checks needs the run it belongs to.")
	}
	failed := map[string]bool{}
	for _, r := range c.Results {
		if !r.Passed && r.Hash != "" {
			failed[r.Hash] = true
		}
	}

	at := s.now()
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("knowledge: record the checks: %w", err)
	}
	defer tx.Rollback()
	summary, passed := checksSummary(c)
	if err := addWork(ctx, tx, at, c.RunID, c.AppID, WorkChecks, passed, summary); err != nil {
		return nil, nil, err
	}

	for _, r := range c.Results {
		// The same content failing under another name keeps its case open.
		if !r.Passed || r.Hash == "" || failed[r.Hash] {
			continue
		}
		var ids []int64
		if err := tx.SelectContext(ctx, &ids,
			`SELECT id FROM cases WHERE app_id = ? AND kind = ? AND signature = ? AND resolved_at IS NULL`,
			c.AppID, CaseCheck, CheckSignature(r.Hash)); err != nil {
			return nil, nil, fmt.Errorf("knowledge: record the checks: %w", err)
		}
		for _, id := range ids {
			if err := resolveCase(ctx, tx, id, at, c.RunID, c.Revision, c.Release); err != nil {
				return nil, nil, fmt.Errorf("knowledge: resolve case %d: %w", id, err)
			}
			resolved = append(resolved, id)
		}
	}
	for _, r := range c.Results {
		if r.Passed || r.Hash == "" {
			continue
		}
		steps := sql.NullString{}
		if strings.TrimSpace(r.Steps) != "" {
			hash, err := putBlob(ctx, tx, r.Steps, at)
			if err != nil {
				return nil, nil, err
			}
			steps = sql.NullString{String: hash, Valid: true}
		}
		id, isNew, err := openCase(ctx, tx, at, opening{
			kind: CaseCheck, signature: CheckSignature(r.Hash), appID: c.AppID, exampleSteps: steps,
			exampleID:   sql.NullString{String: r.ID, Valid: true},
			exampleHash: sql.NullString{String: r.Hash, Valid: true},
			message:     r.Failure, request: c.Request, contextID: c.ContextID,
			revision: c.Revision, release: c.ReleaseBefore,
			model: c.Model, serverVersion: c.ServerVersion, runID: c.RunID,
		})
		if err != nil {
			return nil, nil, fmt.Errorf("knowledge: open a check case: %w", err)
		}
		if isNew {
			opened = append(opened, id)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, nil, fmt.Errorf("knowledge: record the checks: %w", err)
	}
	return opened, resolved, nil
}
