// Package verdict decides whether a task's turn completed it, from what the
// host observed after the turn and never from what the model said; what
// happens next (another attempt, or stop); the advice question asked when
// a task fails; and the documents a builder's turn is given. It writes
// nothing: the executor moves tasks, this package decides.
package verdict

import (
	"fmt"
	"slices"
	"strings"

	"autoapp/executor/acceptance"
	"autoapp/executor/ai"
	"autoapp/executor/candidate"
	"autoapp/intent/plan"
)

// Sentences a verdict gives, in the seed's words.
const (
	NothingBuilt       = "Nothing was built."
	WorkspaceUnchanged = "The workspace did not change since the task began."
	EditedAfterBuild   = "Something was edited after the last build."
	ChecksNotOnPreview = "The checks did not run on the preview running now."
	RanOutOfTime       = "The turn ran out of time."
	// HostBuiltNote is what a task completed on the host's build says.
	HostBuiltNote = "completed after the host built what the turn left unbuilt"
)

// maxFailuresListed is how many failed checks one reason names before it
// says how many more there were.
const maxFailuresListed = 3

// maxReasonPart clips a build problem or a check's failure inside a
// reason, so one long message cannot crowd out the rest.
const maxReasonPart = 300

// Facts are what the host knows when a task's turn has ended.
type Facts struct {
	Slug string
	// Criteria is how many acceptance criteria the task's plan has.
	Criteria int
	// RevBefore is the workspace's HEAD before the task's first turn.
	RevBefore string
	// Observed is the candidate after the turn: HEAD, the last build, the
	// last checks and the preview running now. Its Head must be set when
	// there is a build (candidate.Service.Observe sets it); an empty Head
	// reads as a workspace that did not move.
	Observed candidate.Observed
	// EditedAfterBuild says an edit landed after the last build, as the
	// turn's own record shows.
	EditedAfterBuild bool
	// CompletedExamples are the examples the application's completed
	// tasks hold: example id → the hash of its steps when its task
	// completed, "" for a task completed before hashes were kept.
	CompletedExamples map[string]string
	// Ending is how the turn ended, EndingSentence the AI layer's sentence
	// for it.
	Ending         ai.Ending
	EndingSentence string
	// NothingBuiltRefusals are the sentences of the builder's refusal
	// summary, said after "Nothing was built.".
	NothingBuiltRefusals []string
	// HostBuilt says the host built what the turn left unbuilt before the
	// verdict was taken.
	HostBuilt bool
}

// Verdict is the host's judgement of one turn of a task.
type Verdict struct {
	Completed bool
	// Reasons are one sentence per condition that did not hold; empty
	// when Completed.
	Reasons []string
	// Passed is how many of the Total criteria had their <slug>-c<n>
	// example pass in the checks of what this turn built (0 when nothing
	// was built).
	Passed, Total int
	// ExampleHashes are criterion n → the hash of its example's steps, as
	// the checks of what this turn built ran it.
	ExampleHashes map[int]string
	// HostBuilt is copied from the facts, so the executor can say the task
	// completed after the host built what the turn left unbuilt.
	HostBuilt bool
}

// Judge takes the verdict. The task is completed only when all of these
// hold: the workspace moved since RevBefore; the last build has no
// problems; nothing was edited after it; its checks ran on the preview
// running now; every check passed; every example of a completed task is
// still among the checks with the hash it had; and an example named
// <slug>-c<n> ran for every criterion. Each one that did not hold is one
// sentence, in that order, followed by how the turn ended when it did not
// end on its own. When nothing was built, the reasons are "Nothing was
// built." and what the tools refused instead of the build's and the
// checks' conditions, which would describe a build that is not this
// task's.
func Judge(f Facts) Verdict {
	o := f.Observed
	v := Verdict{Total: f.Criteria, HostBuilt: f.HostBuilt, ExampleHashes: map[int]string{}}
	edited := f.EditedAfterBuild || o.Edited
	nothingBuilt := o.Build == nil || (o.Build.Revision == f.RevBefore && edited)

	var reasons []string
	if nothingBuilt {
		reasons = append(reasons, NothingBuilt)
		for _, r := range f.NothingBuiltRefusals {
			if r = oneLine(r); r != "" {
				reasons = append(reasons, clip(r, maxReasonPart))
			}
		}
		if o.Head != "" && o.Head == f.RevBefore {
			reasons = append(reasons, WorkspaceUnchanged)
		}
		return v.withReasons(reasons, f)
	}

	results := map[string]acceptance.Result{}
	if o.Checks != nil {
		for _, r := range o.Checks.Results {
			if _, seen := results[r.ID]; !seen {
				results[r.ID] = r
			}
		}
	}

	if o.Head == "" || o.Head == f.RevBefore {
		reasons = append(reasons, WorkspaceUnchanged)
	}
	if !o.Build.OK {
		reasons = append(reasons, buildFailed(o.Build))
	}
	if edited {
		reasons = append(reasons, EditedAfterBuild)
	}
	if !checksOnLivePreview(o) {
		reasons = append(reasons, ChecksNotOnPreview)
	}
	if o.Checks != nil {
		if r := checksFailed(o.Checks.Results); r != "" {
			reasons = append(reasons, r)
		}
		ids := make([]string, 0, len(f.CompletedExamples))
		for id := range f.CompletedExamples {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			r, ok := results[id]
			switch held := f.CompletedExamples[id]; {
			case !ok:
				reasons = append(reasons, fmt.Sprintf("The example %s, from a finished task, is gone.", id))
			case held != "" && r.Hash != held:
				reasons = append(reasons, fmt.Sprintf("The example %s, from a finished task, was changed.", id))
			}
		}
	}
	for n := 1; n <= f.Criteria; n++ {
		id := plan.ExampleID(f.Slug, n)
		r, ok := results[id]
		if !ok {
			reasons = append(reasons, fmt.Sprintf("No example named %s was run.", id))
			continue
		}
		if r.Hash != "" {
			v.ExampleHashes[n] = r.Hash
		}
		if r.Passed {
			v.Passed++
		}
	}
	return v.withReasons(reasons, f)
}

// withReasons completes the verdict: no reason is a completed task, and
// a task not completed also says how its turn ended when it did not end
// on its own.
func (v Verdict) withReasons(reasons []string, f Facts) Verdict {
	if len(reasons) == 0 {
		v.Completed = true
		return v
	}
	if s := endingSentence(f.Ending, f.EndingSentence); s != "" {
		reasons = append(reasons, s)
	}
	v.Reasons = reasons
	return v
}

// endingSentence is the sentence for a turn that did not end on its own.
func endingSentence(e ai.Ending, sentence string) string {
	sentence = clip(oneLine(sentence), maxReasonPart)
	switch e {
	case ai.EndWall:
		return RanOutOfTime
	case ai.EndIdle, ai.EndRefusals, ai.EndSteps, ai.EndProvider:
		return sentence
	case ai.EndAborted:
		if sentence == "" {
			return ai.StoppedSentence
		}
		return sentence
	}
	return ""
}

func buildFailed(b *candidate.BuildRecord) string {
	if len(b.Problems) == 0 {
		return "The last build failed."
	}
	return "The last build failed: " + sentenceEnd(clip(oneLine(b.Problems[0].String()), maxReasonPart))
}

// checksOnLivePreview says the checks ran on the preview running now, and
// that preview is of the last build when the last build passed.
func checksOnLivePreview(o candidate.Observed) bool {
	if !checksVerified(o) {
		return false
	}
	if b := o.Build; b != nil && b.OK && b.Release != nil && b.Release.ID != o.Live.Release {
		return false
	}
	return true
}

// checksFailed is "<k> of <m> checks failed: <id>: <failure>; …", or ""
// when every check passed.
func checksFailed(results []acceptance.Result) string {
	var parts []string
	k := 0
	for _, r := range results {
		if r.Passed {
			continue
		}
		k++
		if k > maxFailuresListed {
			continue
		}
		part := r.ID
		if why := strings.TrimSuffix(clip(oneLine(r.Failure), maxReasonPart), "."); why != "" {
			part += ": " + why
		}
		parts = append(parts, part)
	}
	if k == 0 {
		return ""
	}
	if more := k - maxFailuresListed; more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return fmt.Sprintf("%d of %d checks failed: %s.", k, len(results), strings.Join(parts, "; "))
}
