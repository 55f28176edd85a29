package verdict_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"autoapp/executor/acceptance"
	"autoapp/executor/ai"
	"autoapp/executor/build"
	"autoapp/executor/candidate"
	"autoapp/executor/preview"
	"autoapp/executor/verdict"
)

var spawned = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

// completing are the facts of a turn that completed task 0002-heading (two
// criteria) on an application where 0001-home-page belongs to a finished
// task: every condition holds.
func completing() verdict.Facts {
	results := []acceptance.Result{
		{ID: "0001-home-page", Title: "home", Hash: "h-home", Passed: true, Step: -1},
		{ID: "0002-heading-c1", Title: "c1", Hash: "h-c1", Passed: true, Step: -1},
		{ID: "0002-heading-c2", Title: "c2", Hash: "h-c2", Passed: true, Step: -1},
	}
	o := candidate.Observed{
		State: candidate.State{
			AppID: "site",
			Build: &candidate.BuildRecord{Revision: "rev-after", OK: true, StagesRun: []string{"check"},
				Release: &build.Release{ID: "r2", Revision: "rev-after", BuiltAt: spawned}},
			Preview: &candidate.PreviewRecord{Release: "r2", SpawnedAt: spawned, URL: "http://127.0.0.1:4100", Running: true},
			Checks:  &candidate.ChecksRecord{Release: "r2", PreviewSpawnedAt: spawned, Results: results, Passed: 3},
		},
		PreviewRunning: true,
		Live:           preview.Info{AppID: "site", Release: "r2", SpawnedAt: spawned, URL: "http://127.0.0.1:4100"},
		Head:           "rev-after",
	}
	return verdict.Facts{
		Slug: "0002-heading", Criteria: 2, RevBefore: "rev-before", Observed: o,
		CompletedExamples: map[string]string{"0001-home-page": "h-home"},
		Ending:            ai.EndAnswered, EndingSentence: ai.AnsweredSentence,
	}
}

// without takes the example id out of the checks.
func without(f *verdict.Facts, id string) {
	c := f.Observed.Checks
	c.Results = slices.DeleteFunc(slices.Clone(c.Results), func(r acceptance.Result) bool { return r.ID == id })
}

// result is the checks' result of the example id, to change it.
func result(f *verdict.Facts, id string) *acceptance.Result {
	c := f.Observed.Checks
	c.Results = slices.Clone(c.Results)
	for i := range c.Results {
		if c.Results[i].ID == id {
			return &c.Results[i]
		}
	}
	panic("no result " + id)
}

// copyChecks gives the facts checks of their own, so a case's change does
// not reach another case.
func copyChecks(f *verdict.Facts) {
	c := *f.Observed.Checks
	f.Observed.Checks = &c
	b := *f.Observed.Build
	f.Observed.Build = &b
	f.CompletedExamples = maps.Clone(f.CompletedExamples)
}

func TestAllConditionsHoldingCompletesTheTask(t *testing.T) {
	f := completing()
	f.HostBuilt = true
	v := verdict.Judge(f)
	if !v.Completed || len(v.Reasons) != 0 {
		t.Fatalf("verdict: %+v", v)
	}
	if v.Passed != 2 || v.Total != 2 {
		t.Errorf("passed %d of %d, want 2 of 2", v.Passed, v.Total)
	}
	if want := map[int]string{1: "h-c1", 2: "h-c2"}; !maps.Equal(v.ExampleHashes, want) {
		t.Errorf("hashes %v, want %v", v.ExampleHashes, want)
	}
	if !v.HostBuilt {
		t.Error("HostBuilt was not copied")
	}
}

func TestEachConditionFailingAloneGivesItsSentence(t *testing.T) {
	tests := []struct {
		name   string
		change func(f *verdict.Facts)
		want   string
	}{
		{"the workspace did not move", func(f *verdict.Facts) { f.RevBefore = "rev-after" },
			"The workspace did not change since the task began."},
		{"the last build failed", func(f *verdict.Facts) {
			f.Observed.Build.OK = false
			f.Observed.Build.Problems = []build.Problem{
				{Stage: "check", File: "site/index.html", Line: 3, Message: "unclosed tag"},
				{Stage: "check", Message: "second problem"},
			}
		}, "The last build failed: site/index.html:3: unclosed tag."},
		{"an edit after the build, as the turn recorded it", func(f *verdict.Facts) { f.EditedAfterBuild = true },
			"Something was edited after the last build."},
		{"HEAD moved on from the build", func(f *verdict.Facts) { f.Observed.Edited, f.Observed.Head = true, "rev-later" },
			"Something was edited after the last build."},
		{"the checks ran on an earlier preview", func(f *verdict.Facts) { f.Observed.Checks.PreviewSpawnedAt = spawned.Add(-time.Minute) },
			"The checks did not run on the preview running now."},
		{"no preview runs", func(f *verdict.Facts) { f.Observed.PreviewRunning, f.Observed.Live = false, preview.Info{} },
			"The checks did not run on the preview running now."},
		{"the preview runs an older release than the build", func(f *verdict.Facts) {
			f.Observed.Live.Release, f.Observed.Checks.Release = "r1", "r1"
		}, "The checks did not run on the preview running now."},
		{"a check failed", func(f *verdict.Facts) {
			r := result(f, "0001-home-page")
			r.Passed, r.Step, r.Failure = false, 0, "expected status 200, got 404 on GET /."
		}, "1 of 3 checks failed: 0001-home-page: expected status 200, got 404 on GET /."},
		{"a finished task's example is gone", func(f *verdict.Facts) { without(f, "0001-home-page") },
			"The example 0001-home-page, from a finished task, is gone."},
		{"a finished task's example was changed", func(f *verdict.Facts) { result(f, "0001-home-page").Hash = "h-other" },
			"The example 0001-home-page, from a finished task, was changed."},
		{"a criterion's example did not run", func(f *verdict.Facts) { without(f, "0002-heading-c2") },
			"No example named 0002-heading-c2 was run."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := completing()
			copyChecks(&f)
			tt.change(&f)
			v := verdict.Judge(f)
			if v.Completed {
				t.Fatal("completed")
			}
			if want := []string{tt.want}; !slices.Equal(v.Reasons, want) {
				t.Errorf("reasons\n got %q\nwant %q", v.Reasons, want)
			}
		})
	}
}

func TestFinishedTasksExamplesRemovedAndChangedAreBothNamed(t *testing.T) {
	f := completing()
	copyChecks(&f)
	f.Observed.Checks.Results = append(slices.Clone(f.Observed.Checks.Results),
		acceptance.Result{ID: "0003-list-c1", Hash: "h-list-new", Passed: true})
	f.CompletedExamples["0003-list-c1"] = "h-list-old"
	f.CompletedExamples["0000-gone-c1"] = "h-gone"
	// An example of a task completed before hashes were kept is held by its id.
	f.CompletedExamples["0002-heading-c1"] = ""
	v := verdict.Judge(f)
	want := []string{
		"The example 0000-gone-c1, from a finished task, is gone.",
		"The example 0003-list-c1, from a finished task, was changed.",
	}
	if v.Completed || !slices.Equal(v.Reasons, want) {
		t.Errorf("reasons\n got %q\nwant %q", v.Reasons, want)
	}
}

func TestFailedChecksAreListedUpToACap(t *testing.T) {
	f := completing()
	copyChecks(&f)
	f.Criteria = 5
	var results []acceptance.Result
	for n := 1; n <= 5; n++ {
		results = append(results, acceptance.Result{ID: fmt.Sprintf("0002-heading-c%d", n), Hash: "h",
			Failure: fmt.Sprintf("expected status 200, got 500 on GET /%d", n)})
	}
	results = append(results, acceptance.Result{ID: "0001-home-page", Hash: "h-home", Passed: true})
	f.Observed.Checks.Results = results
	v := verdict.Judge(f)
	want := "5 of 6 checks failed: 0002-heading-c1: expected status 200, got 500 on GET /1; " +
		"0002-heading-c2: expected status 200, got 500 on GET /2; 0002-heading-c3: expected status 200, got 500 on GET /3; and 2 more."
	if !slices.Equal(v.Reasons, []string{want}) {
		t.Errorf("reasons\n got %q\nwant %q", v.Reasons, want)
	}
	if v.Passed != 0 || v.Total != 5 {
		t.Errorf("passed %d of %d", v.Passed, v.Total)
	}
}

func TestTheEndingIsSaidWhenTheTurnDidNotEndOnItsOwn(t *testing.T) {
	missing := "No example named 0002-heading-c2 was run."
	refusals := ai.RefusalsSentence(4, "candidate.cycle: create: expected an array")
	tests := []struct {
		name     string
		ending   ai.Ending
		sentence string
		want     []string
	}{
		{"answered", ai.EndAnswered, ai.AnsweredSentence, []string{missing}},
		{"out of time", ai.EndWall, ai.WallSentence(20 * time.Minute), []string{missing, "The turn ran out of time."}},
		{"idle", ai.EndIdle, ai.IdleSentence(8 * time.Minute), []string{missing, "The turn made no tool call for 8 minutes."}},
		{"refusals", ai.EndRefusals, refusals, []string{missing, "The turn was refused 4 times for the same reason: candidate.cycle: create: expected an array."}},
		{"steps", ai.EndSteps, ai.StepsSentence(60), []string{missing, "The turn reached its limit of 60 steps."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := completing()
			copyChecks(&f)
			without(&f, "0002-heading-c2")
			f.Ending, f.EndingSentence = tt.ending, tt.sentence
			if v := verdict.Judge(f); !slices.Equal(v.Reasons, tt.want) {
				t.Errorf("reasons\n got %q\nwant %q", v.Reasons, tt.want)
			}
		})
	}
	t.Run("a completed turn that ran out of time is still completed", func(t *testing.T) {
		f := completing()
		f.Ending, f.EndingSentence = ai.EndWall, ai.WallSentence(20*time.Minute)
		if v := verdict.Judge(f); !v.Completed || len(v.Reasons) != 0 {
			t.Errorf("verdict: %+v", v)
		}
	})
}

func TestNothingBuiltSaysWhatTheToolsRefused(t *testing.T) {
	refused := []string{
		"candidate.cycle was refused 3 times: create: expected an array.",
		"2 edits were refused; most often: hunks[0].find: expected a string.",
	}
	tests := []struct {
		name   string
		change func(f *verdict.Facts)
		want   []string
	}{
		{"no build at all", func(f *verdict.Facts) {
			f.Observed = candidate.Observed{State: candidate.State{AppID: "site"}}
		}, append([]string{"Nothing was built."}, refused...)},
		{"the last build is from before the task, and edits followed", func(f *verdict.Facts) {
			f.Observed.Build.Revision = "rev-before"
			f.Observed.Edited, f.Observed.Head = true, "rev-after"
		}, append([]string{"Nothing was built."}, refused...)},
		{"out of time as well", func(f *verdict.Facts) {
			f.Observed = candidate.Observed{State: candidate.State{AppID: "site"}}
			f.Ending, f.EndingSentence = ai.EndWall, ai.WallSentence(20*time.Minute)
		}, append(append([]string{"Nothing was built."}, refused...), "The turn ran out of time.")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := completing()
			copyChecks(&f)
			f.NothingBuiltRefusals = refused
			tt.change(&f)
			v := verdict.Judge(f)
			if v.Completed {
				t.Fatal("completed")
			}
			if !slices.Equal(v.Reasons, tt.want) {
				t.Errorf("reasons\n got %q\nwant %q", v.Reasons, tt.want)
			}
			if v.Passed != 0 {
				t.Errorf("passed %d, want 0: nothing this turn built was checked", v.Passed)
			}
		})
	}
}

func TestACompletedVerdictNeverMentionsRefusals(t *testing.T) {
	f := completing()
	f.NothingBuiltRefusals = []string{"candidate.cycle was refused 3 times: create: expected an array."}
	v := verdict.Judge(f)
	if !v.Completed || len(v.Reasons) != 0 {
		t.Fatalf("verdict: %+v", v)
	}
	if s := fmt.Sprint(v); strings.Contains(s, "refused") {
		t.Errorf("the verdict mentions a refusal: %s", s)
	}
}
