package verdict

import (
	"fmt"

	"autoapp/executor/ai"
	"autoapp/executor/candidate"
)

// Caps of the documents, in characters.
const (
	MaxOrientation = 1500
	MaxEvidence    = 4000
	MaxAttempts    = 6000
)

// maxOrientationLine keeps the eight lines within MaxOrientation.
const maxOrientationLine = (MaxOrientation - 7) / 8

// AppFacts are what the orientation says of an application beyond its
// candidate state.
type AppFacts struct {
	// Name is the manifest's name, "" for none.
	Name string
	// CurrentRelease is the release the person activated, "" for none.
	CurrentRelease string
	// EditedFiles are the files changed between the last build's revision
	// and HEAD, when HEAD moved on.
	EditedFiles []string
}

// Orientation is the digest of an application, digest:<appID>: eight
// lines — the application, the current release and the last release
// built, the last build and its revision, whether HEAD moved on since and
// the files edited, the preview, the checks and whether they are verified
// for the running preview, where the last cycle stopped, and the next
// verification step — with nothing the candidate state and the
// application's own record do not say.
func Orientation(appID string, o candidate.Observed, app AppFacts) ai.Document {
	lines := []string{
		orientApp(appID, app.Name),
		orientRelease(o, app.CurrentRelease),
		orientBuild(o),
		orientEdited(o, app.EditedFiles),
		orientPreview(o),
		orientChecks(o),
		orientCycle(o),
		"Next: " + nextStep(o),
	}
	for i, l := range lines {
		lines[i] = clip(oneLine(l), maxOrientationLine)
	}
	return ai.Document{Ref: "digest:" + appID, Title: "Orientation: " + appID, Text: joinLines(lines)}
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

func orientApp(appID, name string) string {
	if name = oneLine(name); name != "" {
		return fmt.Sprintf("Application: %s (%s)", appID, name)
	}
	return "Application: " + appID
}

func orientRelease(o candidate.Observed, current string) string {
	now := " Current release: none activated."
	if current != "" {
		now = " Current release: " + current + ", activated by the person."
	}
	if o.Build == nil || o.Build.Release == nil {
		return "Release: none; no build has passed yet." + now
	}
	r := o.Build.Release
	return fmt.Sprintf("Release: %s, the last build that passed, from revision %s.%s", r.ID, short(r.Revision), now)
}

func orientBuild(o candidate.Observed) string {
	b := o.Build
	switch {
	case b == nil:
		return "Last build: none yet."
	case b.OK:
		return fmt.Sprintf("Last build: passed, from revision %s.", short(b.Revision))
	case len(b.Problems) == 0:
		return fmt.Sprintf("Last build: failed, from revision %s.", short(b.Revision))
	}
	more := ""
	if k := len(b.Problems) - 1; k > 0 {
		more = fmt.Sprintf(" (and %d more)", k)
	}
	return fmt.Sprintf("Last build: failed, from revision %s: %s%s", short(b.Revision), clip(oneLine(b.Problems[0].String()), 80), more)
}

func orientEdited(o candidate.Observed, files []string) string {
	switch {
	case o.Build == nil:
		return "Edited since the last build: nothing has been built."
	case o.Edited && len(files) > 0:
		return fmt.Sprintf("Edited since the last build: yes, HEAD is %s: %s. %s", short(o.Head), listWithMore(files, 5), candidate.EditedSinceBuild)
	case o.Edited:
		return fmt.Sprintf("Edited since the last build: yes, HEAD is %s. %s", short(o.Head), candidate.EditedSinceBuild)
	}
	return "Edited since the last build: no."
}

func orientPreview(o candidate.Observed) string {
	switch {
	case o.PreviewRunning:
		return fmt.Sprintf("Preview: running release %s at %s.", o.Live.Release, o.Live.URL)
	case o.PreviewNote != "":
		return "Preview: not running. " + o.PreviewNote
	case o.Preview != nil && o.Preview.Problem != "":
		return "Preview: not running; it did not start: " + sentenceEnd(clip(oneLine(o.Preview.Problem), 100))
	}
	return "Preview: not running."
}

func orientChecks(o candidate.Observed) string {
	c := o.Checks
	switch {
	case c == nil:
		return "Checks: none run yet."
	case !checksVerified(o):
		return fmt.Sprintf("Checks: passed %d of %d for an earlier preview; run the checks again.", c.Passed, len(c.Results))
	}
	s := fmt.Sprintf("Checks: passed %d of %d on the running preview.", c.Passed, len(c.Results))
	var failed []string
	for _, r := range c.Results {
		if !r.Passed {
			failed = append(failed, r.ID)
		}
	}
	if len(failed) > 0 {
		s += " Failing: " + listWithMore(failed, 4) + "."
	}
	return s
}

func orientCycle(o candidate.Observed) string {
	c := o.Cycle
	if c == nil {
		return "Last cycle: none."
	}
	s := fmt.Sprintf("Last cycle: %s at revision %s", c.Step, short(c.Revision))
	switch c.Step {
	case candidate.StepChecked, candidate.StepPatchRefused, candidate.StepBuildFailed, candidate.StepPreviewFailed:
		return s + "."
	}
	return s + ", and not checked — it stopped there."
}

// nextStep is the next verification step the state calls for.
func nextStep(o candidate.Observed) string {
	b := o.Build
	switch {
	case b == nil:
		return "candidate.cycle, to build, preview and check the workspace."
	case o.Edited:
		return "candidate.cycle with no hunks, to verify the edits since the last build."
	case !b.OK:
		return "fix the build problems, then candidate.cycle."
	case !o.PreviewRunning:
		return "candidate.cycle with no hunks, to start the preview and run the checks."
	case !checksVerified(o):
		return "candidate.cycle with no hunks, to run the checks on the running preview."
	case o.Checks.Passed < len(o.Checks.Results):
		return "fix what the failing examples say, then candidate.cycle."
	case len(o.Checks.Results) == 0:
		return "write the acceptance examples, then candidate.cycle."
	}
	return "nothing to verify: every check passed on the running preview."
}

// checksVerified says the last checks ran on the preview running now: its
// release and its spawn time.
func checksVerified(o candidate.Observed) bool {
	c := o.Checks
	return c != nil && o.PreviewRunning && c.Release == o.Live.Release && c.PreviewSpawnedAt.Equal(o.Live.SpawnedAt)
}
