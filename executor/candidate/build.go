package candidate

import (
	"context"
	"fmt"

	"autoapp/executor/build"
	"autoapp/intent/app"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
	"autoapp/knowledge/origin"
)

// BuiltNext is what comes after a build that passed and was not followed
// by a preview or checks.
const BuiltNext = "Start the preview and run the checks."

// Build builds the workspace as it is and stops there: no change, no
// preview, no checks. The build is recorded in candidate.json as a cycle's
// is, with the failures' signatures and the next step, and a build that
// passes records its release. It is the build step of Cycle on its own.
// by says whom it is for: a turn's, or the zero value for the owner.
func (s *Service) Build(ctx context.Context, appID string, by By) (Result, error) {
	j, err := s.begin(ctx, appID, by)
	if err != nil {
		return Result{}, err
	}
	defer j.end()
	var res Result
	if res.Revision, err = j.ws.Head(ctx); err != nil {
		return Result{}, fmt.Errorf("candidate: head: %w", err)
	}
	if _, err := s.buildStep(ctx, j, &res, BuiltNext); err != nil {
		return Result{}, err
	}
	return res, nil
}

// job is one cycle or build of an application in progress: it holds the
// application's lock, its state, its manifest and its workspace until end.
type job struct {
	appID    string
	dir      string
	st       State
	manifest app.Manifest
	ws       *workspace.Workspace
	// opened says the job opened ws itself (an owner's action), and closes it.
	opened bool
	unlock func()
	// heard, when set, is told what the job is doing.
	heard func(Doing)
	// pos is the turn's position, which a passing build moves to its
	// release; nil moves nothing.
	pos *origin.Position
	// observer hears of the job's build and checks: the turn's record, or
	// the owner's.
	observer Observer
}

// By is whom a build or a cycle is for: a turn's position, workspace and
// record, or, the zero value, the owner's action.
type By struct {
	// Position is the turn's: the change's commit and a passing build's
	// release move it; nil moves nothing.
	Position *origin.Position
	// Workspace is the caller's (a run's or a chat turn's), which the job
	// keeps open; nil opens the application's for this job alone.
	Workspace *workspace.Workspace
	// Observer hears of the job's build and checks (the turn's record);
	// nil is the service's, the owner's.
	Observer Observer
}

// hear tells the job's listener what it does now.
func (j *job) hear(d Doing) {
	if j.heard != nil {
		j.heard(d)
	}
}

// begin takes the application's turn and reads what a cycle or a build
// needs; a manifest with problems builds nothing.
func (s *Service) begin(ctx context.Context, appID string, by By) (*job, error) {
	if _, err := s.apps.Get(ctx, appID); err != nil {
		return nil, err
	}
	if err := s.jail.Ready(); err != nil {
		return nil, err
	}
	unlock, err := s.lock(appID)
	if err != nil {
		return nil, err
	}
	j := &job{appID: appID, dir: s.apps.WorkspaceDir(appID), unlock: unlock, pos: by.Position, observer: by.Observer}
	if j.observer == nil {
		j.observer = s.observer
	}
	fail := func(err error) (*job, error) {
		j.end()
		return nil, err
	}
	if j.st, err = s.State(appID); err != nil {
		return fail(err)
	}
	_, manifest, problems, err := s.apps.Manifest(appID)
	if err != nil {
		return fail(err)
	}
	if len(problems) > 0 {
		return fail(&refusal.Error{Code: refusal.Invalid, Message: "The manifest has problems, so nothing was built: " + problems.Error() + "."})
	}
	j.manifest = manifest
	if by.Workspace != nil {
		j.ws = by.Workspace
		return j, nil
	}
	if j.ws, err = workspace.Open(j.dir, s.now); err != nil {
		return fail(fmt.Errorf("candidate: open workspace: %w", err))
	}
	j.opened = true
	return j, nil
}

// end closes the workspace the job opened and gives the application's
// turn back.
func (j *job) end() {
	if j.opened {
		j.ws.Close()
	}
	j.unlock()
}

// buildStep runs the manifest's build stages on res.Revision and records
// the build in the state. A failed build is recorded with its problems,
// the lines around them and whether they are the last build's, and
// reports false; a passing one records its release and next.
func (s *Service) buildStep(ctx context.Context, j *job, res *Result, next string) (bool, error) {
	st := &j.st
	var lastBuild []string
	var lastRelease *build.Release
	if st.Build != nil {
		lastBuild, lastRelease = st.Build.Failures, st.Build.Release
	}
	j.hear(Doing{Step: DoingBuild})
	var began func(stage string)
	var warming func()
	if j.heard != nil {
		began = func(stage string) { j.hear(Doing{Step: DoingBuild, Stage: stage}) }
		warming = func() { j.hear(Doing{Step: DoingBuild, SharedGo: true}) }
	}
	out := build.Runner{Jail: s.jail, GoCache: s.goCache, Now: s.now, Warming: warming}.Run(ctx, j.dir, j.manifest.Build, res.Revision, began)
	// A build cut short by a Stop says nothing about its stages.
	if j.observer != nil && ctx.Err() == nil {
		before := res.Revision
		if st.Build != nil && st.Build.Revision != "" {
			before = st.Build.Revision
		}
		j.observer.Built(ctx, j.appID, res.Revision, before, out)
	}
	rec := &BuildRecord{Revision: res.Revision, At: s.now(), OK: out.OK, StagesRun: out.StagesRun,
		NotRun: out.NotRun, Problems: out.Problems, Release: lastRelease}
	for _, p := range out.Problems {
		rec.Failures = append(rec.Failures, build.Signature(p.Stage, p.String()))
	}
	st.Build, res.Build = rec, rec
	if !out.OK {
		res.Step = StepBuildFailed
		res.SameAsLastBuild = sameFailures(lastBuild, rec.Failures)
		for _, p := range out.Problems {
			res.BuildProblems = append(res.BuildProblems, BuildProblem{Problem: p, Around: around(j.ws, p)})
		}
		res.Next = "Fix the build problems, then cycle again."
		if res.SameAsLastBuild {
			res.Next = "These are the problems the last build had: the change did not reach them. " + res.Next
		}
		return false, s.record(st, *res, rec.Failures)
	}
	id, err := s.apps.RecordRelease(ctx, app.Release{ID: out.Release.ID, AppID: j.appID,
		Revision: out.Release.Revision, BuiltAt: out.Release.BuiltAt.UnixMilli()})
	if err != nil {
		return false, err
	}
	out.Release.ID = id
	rec.Release = out.Release
	j.pos.Released(id)
	res.Step, res.Next = StepBuilt, next
	return true, s.record(st, *res, nil)
}
