package candidate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"autoapp/executor/acceptance"
	"autoapp/executor/build"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
	"autoapp/knowledge/origin"
)

// Change is what a cycle applies before it builds: hunks of one file, or
// whole files. An empty change verifies the workspace as it is.
type Change struct {
	Path  string
	Hunks []workspace.Hunk
	Files []workspace.FileChange
	Meta  workspace.CommitMeta
	// By is whom the cycle is for: a turn's position, workspace and
	// record; the zero value is the owner's action.
	By
}

func (c Change) empty() bool { return len(c.Hunks) == 0 && len(c.Files) == 0 && c.Path == "" }

// BuildProblem is a build problem with the lines around the place it names.
type BuildProblem struct {
	build.Problem
	// Around is the numbered source lines around Line, when the file could be read.
	Around string `json:"around,omitempty"`
}

// Result is what a cycle saw and what to do next.
type Result struct {
	Step     string `json:"step"`
	Revision string `json:"revision"`
	// Patch is the commit the change made, when there was a change.
	Patch *workspace.EditResult `json:"patch,omitempty"`
	// PatchProblems name what was wrong with a refused change.
	PatchProblems refusal.Problems `json:"patchProblems,omitempty"`

	Build           *BuildRecord   `json:"build,omitempty"`
	BuildProblems   []BuildProblem `json:"buildProblems,omitempty"`
	SameAsLastBuild bool           `json:"sameAsLastBuild"`

	Preview *PreviewRecord `json:"preview,omitempty"`

	Checks          *ChecksRecord       `json:"checks,omitempty"`
	Failed          []acceptance.Result `json:"failed,omitempty"`
	SameAsLastCheck bool                `json:"sameAsLastCheck"`

	Next string `json:"next"`
}

// Cycle applies the change, builds, starts the preview and runs every
// acceptance example, recording each step in candidate.json with the next
// step, and returns what to do next.
func (s *Service) Cycle(ctx context.Context, appID string, change Change) (Result, error) {
	j, err := s.begin(ctx, appID, change.By)
	if err != nil {
		return Result{}, err
	}
	defer j.end()
	return s.cycle(ctx, j, change)
}

// cycle is Cycle within the job's turn.
func (s *Service) cycle(ctx context.Context, j *job, change Change) (Result, error) {
	st, ws, manifest, appID := &j.st, j.ws, j.manifest, j.appID

	var res Result
	var err error
	if !change.empty() {
		var edit workspace.EditResult
		if len(change.Hunks) > 0 {
			edit, err = ws.Edit(ctx, change.Path, change.Hunks, change.Meta)
		} else {
			edit, err = ws.Change(ctx, change.Files, change.Meta)
		}
		if ps, ok := workspace.AsProblems(err); ok {
			res.Step, res.PatchProblems = StepPatchRefused, ps
			res.Revision, _ = ws.Head(ctx)
			res.Next = "Fix the change: " + ps.Error() + "; nothing was applied."
			return res, s.record(st, res, nil)
		}
		if err != nil {
			return Result{}, err
		}
		res.Patch = &edit
		res.Step, res.Revision = StepPatched, edit.Revision
		change.Position.Committed(edit.Revision)
		res.Next = "Build the change."
		if err := s.record(st, res, nil); err != nil {
			return Result{}, err
		}
	}
	if res.Revision == "" {
		if res.Revision, err = ws.Head(ctx); err != nil {
			return Result{}, fmt.Errorf("candidate: head: %w", err)
		}
	}

	// Build, under its own request id (<callId>.build), as the build tool's
	// own call would be.
	if built, err := s.buildStep(step(ctx, "build"), j, &res, "Start the preview."); err != nil || !built {
		return res, err
	}

	// Preview, under <callId>.preview.
	j.hear(Doing{Step: DoingPreview})
	info, err := s.launchPreview(step(ctx, "preview"), st)
	res.Preview = st.Preview
	if err != nil {
		var ce *refusal.Error
		if !errors.As(err, &ce) {
			return Result{}, err
		}
		res.Step, res.Next = StepPreviewFailed, "Make the preview start: "+ce.Message
		return res, s.record(st, res, nil)
	}
	res.Step, res.Next = StepPreviewed, "Run the checks."
	if err := s.record(st, res, nil); err != nil {
		return Result{}, err
	}

	// Checks.
	var lastChecks []string
	if st.Checks != nil {
		lastChecks = st.Checks.Failures
	}
	j.hear(Doing{Step: DoingChecks})
	examples, err := acceptance.Load(ws.FS(), manifest.AcceptanceDir())
	if err != nil {
		return Result{}, fmt.Errorf("candidate: read the examples: %w", err)
	}
	results := acceptance.Run(ctx, info.URL, examples, nil)
	if j.observer != nil && ctx.Err() == nil {
		j.observer.Checked(ctx, appID, res.Revision, results)
	}
	checks := &ChecksRecord{Release: info.Release, PreviewSpawnedAt: info.SpawnedAt, At: s.now(), Results: results}
	for _, r := range results {
		if r.Passed {
			checks.Passed++
			continue
		}
		res.Failed = append(res.Failed, r)
		checks.Failures = append(checks.Failures, build.Signature("check "+r.Hash, r.Failure))
	}
	st.Checks, res.Checks = checks, checks
	res.Step = StepChecked
	switch {
	case len(results) == 0:
		res.Next = "There are no acceptance examples in " + manifest.AcceptanceDir() + "/: write one for each criterion."
	case len(res.Failed) == 0:
		res.Next = fmt.Sprintf("Every check passed (%d of %d) on release %s.", checks.Passed, len(results), info.Release)
	default:
		res.SameAsLastCheck = sameFailures(lastChecks, checks.Failures)
		res.Next = fmt.Sprintf("Passed %d of %d. Fix what the failing examples say, then cycle again.", checks.Passed, len(results))
		if res.SameAsLastCheck {
			res.Next = "These are the failures the last check had: the change did not reach them. " + res.Next
		}
	}
	return res, s.record(st, res, checks.Failures)
}

// step is ctx for one step of a cycle: its rows carry the request id
// <callId>.<name> of the call the cycle runs under; with no call, ctx as
// it is.
func step(ctx context.Context, name string) context.Context {
	call := origin.IdentityFrom(ctx).CallID
	if call == "" {
		return ctx
	}
	return origin.WithCall(ctx, call+"."+name)
}

// record writes the cycle's step into the state and saves it.
func (s *Service) record(st *State, res Result, failures []string) error {
	c := &CycleRecord{Step: res.Step, Revision: res.Revision, Failures: failures, Next: res.Next, At: s.now()}
	if st.Build != nil && st.Build.Release != nil {
		c.Release = st.Build.Release.ID
	}
	st.Cycle = c
	return s.save(st)
}

func sameFailures(last, now []string) bool {
	if len(last) == 0 || len(now) == 0 {
		return false
	}
	a, b := slices.Clone(last), slices.Clone(now)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// around reads the lines near a problem's place, when it names one.
func around(ws *workspace.Workspace, p build.Problem) string {
	if p.File == "" || p.Line <= 0 {
		return ""
	}
	r, err := ws.Read(p.File, max(1, p.Line-3), p.Line+3)
	if err != nil {
		return ""
	}
	return strings.TrimRight(r.Text, "\n")
}
