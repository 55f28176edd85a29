package builder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"autoapp/executor/acceptance"
	"autoapp/executor/ai"
	"autoapp/executor/candidate"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
)

// MaxSameFailures is how many cycles of one turn may end with the same
// failure: the last of them says to stop, and the next is refused.
const MaxSameFailures = 3

// Sentences of the cycle's guidance.
const (
	// StopAndAsk ends the answer of the third cycle with the same failure.
	StopAndAsk = "This is the third cycle in this turn to end with the same failure: stop here. " +
		"Tell the person what you tried and ask how to go on, with intent.ask."
	// CyclesRefused refuses a cycle after that.
	CyclesRefused = "Three cycles in this turn ended with the same failure, so no more cycles in this turn: " +
		"tell the person what you tried and ask how to go on, with intent.ask."
	// BuiltNotChecked is what comes after candidate.build passed.
	BuiltNotChecked = "Built; nothing was previewed or checked. Next: candidate.cycle with no hunks and no files, to preview it and run every check."
	// AllPassed is added when every check passed and every criterion's
	// example ran.
	AllPassed = "Every criterion's example ran and passed: the task is verified. End the turn with a short summary of what you changed."
)

// cycleAnswer is what candidate.cycle and candidate.build answer: where
// the cycle stopped and what to do next.
type cycleAnswer struct {
	Step     string                `json:"step"`
	Revision string                `json:"revision"`
	Patch    *workspace.EditResult `json:"patch,omitempty"`

	Build           *buildAnswer             `json:"build,omitempty"`
	BuildProblems   []candidate.BuildProblem `json:"buildProblems,omitempty"`
	SameAsLastBuild bool                     `json:"sameAsLastBuild,omitempty"`

	Checks          string              `json:"checks,omitempty"`
	Failed          []acceptance.Result `json:"failed,omitempty"`
	SameAsLastCheck bool                `json:"sameAsLastCheck,omitempty"`
	// Missing are the task's example ids that did not run.
	Missing []string `json:"missing,omitempty"`
	// Hints are lessons from earlier work beside a failed build, one line
	// each, and a last line saying how to read one.
	Hints []string `json:"hints,omitempty"`

	Next string `json:"next"`
}

type buildAnswer struct {
	OK        bool     `json:"ok"`
	StagesRun []string `json:"stagesRun"`
	NotRun    []string `json:"notRun,omitempty"`
	Release   string   `json:"release,omitempty"`
}

func (s *Session) candidateCycle() ai.Tool {
	type input struct {
		Path  string                 `json:"path"`
		Hunks []workspace.Hunk       `json:"hunks"`
		Files []workspace.FileChange `json:"files"`
	}
	return ai.Tool{
		Name: "candidate.cycle",
		Description: "Apply an optional change (hunks of one file with path and hunks, or whole files with files), then build, start the preview " +
			"and run every acceptance example against it. With no change it verifies the workspace as it is. The answer says where it stopped " +
			"and what to do next: each build problem with the lines around it, or which examples failed and why, and the task's examples that did not run.",
		Schema: json.RawMessage(`{"type": "object", "additionalProperties": false, "properties": {
			"path": ` + pathSchema + `, "hunks": ` + hunksSchema + `, "files": ` + filesSchema + `}}`),
		Example: json.RawMessage(`{}`),
		// A cycle may apply a change; one that lands is an edit, one
		// given no change lands none.
		Edits: true,
		Landed: func(input json.RawMessage, _ any) bool {
			var in struct {
				Hunks []json.RawMessage `json:"hunks"`
				Files []json.RawMessage `json:"files"`
			}
			return json.Unmarshal(input, &in) == nil && len(in.Hunks)+len(in.Files) > 0
		},
		Handler: handler(s, "candidate.cycle", func(ctx context.Context, meta workspace.CommitMeta, in input) (any, error) {
			if s.st.stopped {
				return nil, ai.Refuse(refusal.Problem{Message: CyclesRefused})
			}
			var ps []refusal.Problem
			switch {
			case len(in.Hunks) > 0 && len(in.Files) > 0:
				ps = append(ps, refusal.Problem{Field: "files", Message: "give hunks of one file or whole files, not both in one cycle"})
			case len(in.Hunks) > 0 && in.Path == "":
				ps = append(ps, refusal.Problem{Field: "path", Message: "give the file the hunks apply to"})
			case in.Path != "" && len(in.Hunks) == 0:
				ps = append(ps, refusal.Problem{Field: "hunks", Message: "give the hunks to apply to " + in.Path + ", or leave path out"})
			}
			if len(ps) > 0 {
				return nil, ai.Refuse(ps...)
			}
			res, err := s.cfg.Candidates.Cycle(ctx, s.cfg.AppID, candidate.Change{Path: in.Path, Hunks: in.Hunks, Files: in.Files, Meta: meta, By: s.by()})
			if err != nil {
				return nil, candidateRefusal(err)
			}
			if res.Step == candidate.StepPatchRefused {
				return nil, ai.Refuse(s.withMissNote(res.PatchProblems, in.Path, in.Hunks)...)
			}
			if res.Patch != nil {
				s.landed(ctx, "candidate.cycle", *res.Patch)
			}
			if res.Build != nil {
				s.buildRan()
			}
			s.st.lastCycle = &res
			a := s.answer(res)
			s.hint(ctx, &a, res)
			if sig := failure(res); sig != "" {
				s.st.failures[sig]++
				if s.st.failures[sig] >= MaxSameFailures {
					s.st.stopped = true
					a.Next = StopAndAsk
				}
			}
			return a, nil
		}),
	}
}

func (s *Session) candidateBuild() ai.Tool {
	return ai.Tool{
		Name: "candidate.build",
		Description: "Build the workspace as it is, running the manifest's build stages, and stop there: no preview, no checks. " +
			"The answer gives each build problem with the lines around it. To verify a change, use candidate.cycle instead.",
		Schema:  json.RawMessage(`{"type": "object", "additionalProperties": false, "properties": {}}`),
		Example: json.RawMessage(`{}`),
		Handler: handler(s, "candidate.build", func(ctx context.Context, _ workspace.CommitMeta, _ struct{}) (any, error) {
			res, err := s.cfg.Candidates.Build(ctx, s.cfg.AppID, s.by())
			if err != nil {
				return nil, candidateRefusal(err)
			}
			if res.Build != nil {
				s.buildRan()
			}
			a := s.answer(res)
			s.hint(ctx, &a, res)
			if res.Step == candidate.StepBuilt {
				a.Next = BuiltNotChecked
			}
			return a, nil
		}),
	}
}

// answer is a cycle's result as the model reads it, with what comes next
// for this task.
func (s *Session) answer(res candidate.Result) cycleAnswer {
	a := cycleAnswer{Step: res.Step, Revision: res.Revision, Patch: res.Patch, BuildProblems: res.BuildProblems,
		SameAsLastBuild: res.SameAsLastBuild, Failed: res.Failed, SameAsLastCheck: res.SameAsLastCheck, Next: res.Next}
	if b := res.Build; b != nil {
		a.Build = &buildAnswer{OK: b.OK, StagesRun: b.StagesRun, NotRun: b.NotRun}
		if b.OK && b.Release != nil {
			a.Build.Release = b.Release.ID
		}
	}
	if c := res.Checks; c != nil && res.Step == candidate.StepChecked {
		a.Checks = fmt.Sprintf("passed %d of %d", c.Passed, len(c.Results))
		ran := map[string]bool{}
		for _, r := range c.Results {
			ran[r.ID] = true
		}
		for n := range s.cfg.Task.Criteria {
			if id := plan.ExampleID(s.cfg.Task.Slug, n+1); !ran[id] {
				a.Missing = append(a.Missing, id)
			}
		}
		switch {
		case len(a.Missing) > 0:
			a.Next += fmt.Sprintf(" No example named %s ran: write %s, then cycle again.",
				strings.Join(a.Missing, ", "), plural(len(a.Missing), "it", "them"))
		case len(res.Failed) == 0:
			a.Next += " " + AllPassed
		}
	}
	return a
}

// failure is the signature of the failure a cycle ended with, or "" when
// it did not end with one.
func failure(res candidate.Result) string {
	var kind string
	var sigs []string
	switch res.Step {
	case candidate.StepBuildFailed:
		kind = "build"
		if res.Build != nil {
			sigs = res.Build.Failures
		}
	case candidate.StepPreviewFailed:
		kind = "preview"
		if res.Preview != nil {
			sigs = []string{res.Preview.Problem}
		}
	case candidate.StepChecked:
		if res.Checks == nil || len(res.Checks.Failures) == 0 {
			return ""
		}
		kind, sigs = "check", res.Checks.Failures
	default:
		return ""
	}
	sigs = slices.Clone(sigs)
	slices.Sort(sigs)
	return kind + "\x00" + strings.Join(slices.Compact(sigs), "\x00")
}

// candidateRefusal answers a candidate's sentence (a build already
// running, a manifest with problems) as a refusal, and anything else as
// the host's failure.
func candidateRefusal(err error) error {
	var ce *refusal.Error
	if errors.As(err, &ce) {
		return ai.Refuse(refusal.Problem{Message: ce.Message})
	}
	return err
}

// by is whom the turn's builds and cycles are for: its position, its
// workspace and its record.
func (s *Session) by() candidate.By {
	return candidate.By{Position: s.cfg.Position, Workspace: s.ws, Observer: s.cfg.Observer}
}
