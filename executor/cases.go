package executor

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"autoapp/executor/acceptance"
	"autoapp/executor/build"
	"autoapp/executor/candidate"
	"autoapp/knowledge"
	"autoapp/knowledge/origin"
)

// OwnerRun is the run id of builds and checks outside any turn that no
// click named, and the prefix of each click's own run (ownerClick).
const OwnerRun = "owner"

// CaseRecorder opens and resolves the knowledge's cases from every build
// and run of the checks, and tells the servings of the turn's run what
// each found: the candidate's observer of the owner's builds and checks,
// and of each turn's through its TurnRecord.
type CaseRecorder struct {
	Cases *knowledge.Cases
	// Servings, when set, hears every build and run of the checks of a
	// turn; the owner's (OwnerRun) serve no lessons and are not told.
	Servings *knowledge.Servings
	Version  string
	Log      *slog.Logger
}

// CandidateStates reads an application's candidate.json
// (*candidate.Service).
type CandidateStates interface {
	State(appID string) (candidate.State, error)
}

// caseTurn is what the executor knows of the turn a build or a check
// belongs to, for the cases it opens: the request the turn works on, the
// model it runs on, and its contexts row once written (0 until then).
// The owner's builds and checks belong to none.
type caseTurn struct {
	request   string
	model     string
	contextID int64
}

func (c CaseRecorder) runOf(ctx context.Context) origin.Identity {
	id := origin.IdentityFrom(ctx)
	if id.RunID == "" {
		id.RunID = OwnerRun
	}
	return id
}

// Built opens a case per distinct failure of a build the owner made (the
// candidate's Observer outside a turn) and resolves the cases of the
// stages that ran clean; a turn's builds are its TurnRecord's.
func (c CaseRecorder) Built(ctx context.Context, appID, revision, before string, out build.Result) {
	if err := c.built(ctx, caseTurn{}, appID, revision, before, out); err != nil && c.Log != nil {
		c.Log.ErrorContext(ctx, "the build's cases could not be kept", "app", appID, "run", c.runOf(ctx).RunID, "err", err)
	}
}

// Checked opens a case per failed example of the owner's checks and
// resolves those whose same content passed.
func (c CaseRecorder) Checked(ctx context.Context, appID, revision string, results []acceptance.Result) {
	if err := c.checked(ctx, caseTurn{}, appID, revision, results); err != nil && c.Log != nil {
		c.Log.ErrorContext(ctx, "the checks' cases could not be kept", "app", appID, "run", c.runOf(ctx).RunID, "err", err)
	}
}

// built opens a case per distinct failure and resolves the cases of the
// stages that ran clean, for the turn; before is the revision the
// application's previous build built.
func (c CaseRecorder) built(ctx context.Context, turn caseTurn, appID, revision, before string, out build.Result) error {
	id := c.runOf(ctx)
	obs := knowledge.BuildObserved{AppID: appID, RunID: id.RunID, Revision: revision, ServerVersion: c.Version,
		StagesRun: out.StagesRun, OK: out.OK, Request: turn.request, Model: turn.model, ContextID: turn.contextID,
		ReleaseBefore: id.ReleaseID}
	if out.Release != nil {
		obs.Release = out.Release.ID
	}
	if !out.OK {
		obs.RevisionBefore = before
	}
	for _, p := range out.Problems {
		obs.Problems = append(obs.Problems, knowledge.BuildProblem{Stage: p.Stage, Message: p.String(),
			Signature: build.Signature(p.Stage, p.String())})
	}
	_, _, err := c.Cases.Build(context.WithoutCancel(ctx), obs)
	return errors.Join(err, c.closeServings(ctx, appID, id.RunID, knowledge.BuildObservation(obs)))
}

// checked opens a case per failed example and resolves those whose same
// content passed, for the turn.
func (c CaseRecorder) checked(ctx context.Context, turn caseTurn, appID, revision string, results []acceptance.Result) error {
	id := c.runOf(ctx)
	obs := knowledge.ChecksObserved{AppID: appID, RunID: id.RunID, Revision: revision, ServerVersion: c.Version,
		Request: turn.request, Model: turn.model, ContextID: turn.contextID, ReleaseBefore: id.ReleaseID, Release: id.ReleaseID}
	for _, r := range results {
		steps := ""
		if len(r.Steps) > 0 {
			if b, err := json.MarshalIndent(r.Steps, "", "  "); err == nil {
				steps = string(b)
			}
		}
		obs.Results = append(obs.Results, knowledge.ExampleResult{ID: r.ID, Hash: r.Hash, Passed: r.Passed, Failure: r.Failure, Steps: steps})
	}
	_, _, err := c.Cases.Checks(context.WithoutCancel(ctx), obs)
	return errors.Join(err, c.closeServings(ctx, appID, id.RunID, knowledge.ChecksObservation(obs)))
}

// closeServings tells the run's servings what a build or the checks found.
func (c CaseRecorder) closeServings(ctx context.Context, appID, runID string, o knowledge.Observation) error {
	if c.Servings == nil || IsOwnerRun(runID) {
		return nil
	}
	return c.Servings.Close(context.WithoutCancel(ctx), appID, runID, o)
}
