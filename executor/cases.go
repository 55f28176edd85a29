package executor

import (
	"context"
	"log/slog"
	"sync/atomic"

	"autoapp/executor/acceptance"
	"autoapp/executor/build"
	"autoapp/executor/candidate"
	"autoapp/knowledge"
	"autoapp/knowledge/origin"
)

// OwnerRun is the run id of builds and checks the owner asked for from an
// application's page, outside any turn.
const OwnerRun = "owner"

// CaseRecorder opens and resolves the knowledge's cases from every build
// and run of the checks, and tells the servings of the turn's run what
// each found: it is the candidate's observer.
type CaseRecorder struct {
	Cases *knowledge.Cases
	// Servings, when set, hears every build and run of the checks of a
	// turn; the owner's (OwnerRun) serve no lessons and are not told.
	Servings *knowledge.Servings
	Version  string
	Log      *slog.Logger
	// Candidates, when set, gives the revision the application's previous
	// build built: a case opened by a build records it as the revision
	// before the repair. Unset, the built revision stands for it.
	Candidates CandidateStates
}

// CandidateStates reads an application's candidate.json
// (*candidate.Service).
type CandidateStates interface {
	State(appID string) (candidate.State, error)
}

// caseTurn is what the executor knows of the turn a build or a check
// belongs to, for the cases it opens: the request the turn works on, the
// model it runs on, and its contexts row once written (0 until then).
type caseTurn struct {
	request   string
	model     string
	contextID int64
	// delivered, when set, holds the contexts row written as the turn's
	// documents were delivered (KeepContextAtDelivery); it stands for
	// contextID while that is 0.
	delivered *atomic.Int64
}

type caseTurnKey struct{}

// withCaseTurn returns ctx carrying what a case opened under it records of
// its turn.
func withCaseTurn(ctx context.Context, t caseTurn) context.Context {
	return context.WithValue(ctx, caseTurnKey{}, t)
}

func caseTurnFrom(ctx context.Context) caseTurn {
	t, _ := ctx.Value(caseTurnKey{}).(caseTurn)
	if t.contextID == 0 && t.delivered != nil {
		t.contextID = t.delivered.Load()
	}
	return t
}

// revisionBefore is the revision appID's previous build built, or revision
// when none is known. The observer hears of a build before candidate.json
// records it, so the state still holds the previous one.
func (c CaseRecorder) revisionBefore(appID, revision string) string {
	if c.Candidates == nil {
		return revision
	}
	st, err := c.Candidates.State(appID)
	if err != nil || st.Build == nil || st.Build.Revision == "" {
		return revision
	}
	return st.Build.Revision
}

func (c CaseRecorder) runOf(ctx context.Context) origin.Identity {
	id := origin.IdentityFrom(ctx)
	if id.RunID == "" {
		id.RunID = OwnerRun
	}
	return id
}

// Built opens a case per distinct failure and resolves the cases of the
// stages that ran clean.
func (c CaseRecorder) Built(ctx context.Context, appID, revision string, out build.Result) {
	id, turn := c.runOf(ctx), caseTurnFrom(ctx)
	obs := knowledge.BuildObserved{AppID: appID, RunID: id.RunID, Revision: revision, ServerVersion: c.Version,
		StagesRun: out.StagesRun, OK: out.OK, Request: turn.request, Model: turn.model, ContextID: turn.contextID}
	if !out.OK {
		obs.RevisionBefore = c.revisionBefore(appID, revision)
	}
	for _, p := range out.Problems {
		obs.Problems = append(obs.Problems, knowledge.BuildProblem{Stage: p.Stage, Message: p.String(),
			Signature: build.Signature(p.Stage, p.String())})
	}
	if _, _, err := c.Cases.Build(context.WithoutCancel(ctx), obs); err != nil && c.Log != nil {
		c.Log.ErrorContext(ctx, "the build's cases could not be kept", "app", appID, "run", id.RunID, "err", err)
	}
	c.closeServings(ctx, appID, id.RunID, knowledge.BuildObservation(obs))
}

// Checked opens a case per failed example and resolves those whose same
// content passed.
func (c CaseRecorder) Checked(ctx context.Context, appID, revision string, results []acceptance.Result) {
	id, turn := c.runOf(ctx), caseTurnFrom(ctx)
	obs := knowledge.ChecksObserved{AppID: appID, RunID: id.RunID, Revision: revision, ServerVersion: c.Version,
		Request: turn.request, Model: turn.model, ContextID: turn.contextID}
	for _, r := range results {
		obs.Results = append(obs.Results, knowledge.ExampleResult{ID: r.ID, Hash: r.Hash, Passed: r.Passed, Failure: r.Failure})
	}
	if _, _, err := c.Cases.Checks(context.WithoutCancel(ctx), obs); err != nil && c.Log != nil {
		c.Log.ErrorContext(ctx, "the checks' cases could not be kept", "app", appID, "run", id.RunID, "err", err)
	}
	c.closeServings(ctx, appID, id.RunID, knowledge.ChecksObservation(obs))
}

// closeServings tells the run's servings what a build or the checks found.
func (c CaseRecorder) closeServings(ctx context.Context, appID, runID string, o knowledge.Observation) {
	if c.Servings == nil || runID == OwnerRun {
		return
	}
	if err := c.Servings.Close(context.WithoutCancel(ctx), appID, runID, o); err != nil && c.Log != nil {
		c.Log.ErrorContext(ctx, "the run's servings could not be closed", "app", appID, "run", runID, "err", err)
	}
}
