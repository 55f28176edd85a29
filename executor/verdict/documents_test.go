package verdict_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"autoapp/executor/acceptance"
	"autoapp/executor/build"
	"autoapp/executor/candidate"
	"autoapp/executor/verdict"
	"autoapp/intent/app"
	"autoapp/intent/plan"
	"autoapp/intent/workspace"
	"autoapp/migrations/migrationstest"
)

func TestOrientationIsEightLinesOfTheCandidateState(t *testing.T) {
	checked := completing().Observed
	checked.Cycle = &candidate.CycleRecord{Step: candidate.StepChecked, Revision: "rev-after"}

	stale := completing().Observed
	stale.Checks = &candidate.ChecksRecord{Release: "r1", PreviewSpawnedAt: spawned.Add(-time.Hour),
		Results: []acceptance.Result{{ID: "a", Passed: true}, {ID: "b"}}, Passed: 1}

	edited := completing().Observed
	edited.Edited, edited.Head = true, "rev-later-than-the-build"
	edited.Cycle = &candidate.CycleRecord{Step: candidate.StepBuilt, Revision: "rev-after"}

	broken := completing().Observed
	broken.Build = &candidate.BuildRecord{Revision: "rev-broken", OK: false,
		Problems: []build.Problem{{Stage: "check", File: "site/index.html", Line: 3, Message: strings.Repeat("very long problem ", 200)}},
		Release:  &build.Release{ID: "r2", Revision: "rev-after"}}
	broken.PreviewRunning = false
	broken.Live.URL = strings.Repeat("x", 3000)

	tests := []struct {
		name     string
		o        candidate.Observed
		facts    verdict.AppFacts
		contains []string
	}{
		{"never built", candidate.Observed{State: candidate.State{AppID: "site"}}, verdict.AppFacts{}, []string{
			"Application: site (Static site)", "Release: none", "Current release: none activated.", "Last build: none yet.", "Preview: not running.",
			"Checks: none run yet.", "Last cycle: none.", "Next: candidate.cycle, to build, preview and check the workspace."}},
		{"checked and passing", checked, verdict.AppFacts{CurrentRelease: "r1"}, []string{
			"Release: r2, the last build that passed, from revision rev-after. Current release: r1, activated by the person.", "Last build: passed, from revision rev-after.",
			"Edited since the last build: no.", "Preview: running release r2 at http://127.0.0.1:4100.",
			"Checks: passed 3 of 3 on the running preview.", "Last cycle: checked at revision rev-after.",
			"Next: nothing to verify: every check passed on the running preview."}},
		{"checks of an earlier preview", stale, verdict.AppFacts{}, []string{
			"Checks: passed 1 of 2 for an earlier preview; run the checks again.",
			"Next: candidate.cycle with no hunks, to run the checks on the running preview."}},
		{"edited since the build", edited, verdict.AppFacts{EditedFiles: []string{"site/index.html", "site/style.css"}}, []string{
			"Edited since the last build: yes, HEAD is rev-later-t", "site/index.html, site/style.css. Edited since this build.",
			"Last cycle: built at revision rev-after, and not checked — it stopped there.",
			"Next: candidate.cycle with no hunks, to verify the edits since the last build."}},
		{"a failed build with a long problem", broken, verdict.AppFacts{}, []string{
			"Last build: failed, from revision rev-broken: site/index.html:3: very long", "Next: fix the build problems, then candidate.cycle."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.facts.Name = "Static site"
			d := verdict.Orientation("site", tt.o, tt.facts)
			if d.Ref != "digest:site" {
				t.Errorf("ref %q", d.Ref)
			}
			if n := len(strings.Split(d.Text, "\n")); n != 8 {
				t.Errorf("%d lines, want 8:\n%s", n, d.Text)
			}
			if n := utf8.RuneCountInString(d.Text); n > verdict.MaxOrientation {
				t.Errorf("%d characters, more than %d", n, verdict.MaxOrientation)
			}
			for _, want := range tt.contains {
				if !strings.Contains(d.Text, want) {
					t.Errorf("lacks %q:\n%s", want, d.Text)
				}
			}
		})
	}
}

func TestAttemptsSaysWhatEachAttemptDidAndWhatCameBack(t *testing.T) {
	problem := "site/index.html:3: unclosed tag <h1>"
	earlier := []verdict.AttemptRecord{
		{RunID: "intent-1-0002-heading-a1", Ended: "Nothing was built. The turn ran out of time.",
			Reads:   []string{"a.html", "b.html", "c.html", "d.html", "e.html", "f.html", "g.html", "h.html"},
			Refused: []string{"candidate.cycle: create: expected an array", "source.edit: hunks: expected an array", "candidate.cycle: create: expected an array", "x: one", "y: two"}},
		{RunID: "intent-1-0002-heading-a2", Ended: "The last build failed: " + problem + ".",
			Changed: []string{"site/index.html"}, StillWrong: []string{problem}, Reads: []string{"not shown when it changed something"}},
		{RunID: "intent-1-0002-heading-a3", Ended: "The last build failed: " + problem + ".",
			Changed: []string{"site/index.html", "site/style.css"}, StillWrong: []string{problem, "0002-heading-c1: expected status 200, got 404 on GET /"},
			Diagnosis: "The builder kept the tag unclosed."},
		{RunID: "intent-1-0002-heading-a4", Interrupted: true, Changed: []string{"site/style.css"}, StillWrong: []string{"not shown: it was interrupted"}},
	}
	d := verdict.Attempts("0002-heading", earlier)
	if d.Ref != "attempts:0002-heading" || d.Title != "Earlier attempts at 0002-heading" {
		t.Errorf("ref %q, title %q", d.Ref, d.Title)
	}
	for _, want := range []string{
		"Attempt 1 (run intent-1-0002-heading-a1)\nChanged: nothing.\nEnded with: Nothing was built. The turn ran out of time.\n" +
			"Read, changing nothing: a.html, b.html, c.html, d.html, e.html, f.html, and 2 more.\n" +
			"Refused: candidate.cycle: create: expected an array (2 times)\nRefused: source.edit: hunks: expected an array\nRefused: x: one\nRefused: 1 more in 1 other groups.",
		"Attempt 2 (run intent-1-0002-heading-a2)\nChanged: site/index.html.\nEnded with: The last build failed: " + problem + ".\nStill wrong at the end: " + problem,
		"Still wrong at the end: 0002-heading-c1: expected status 200, got 404 on GET /",
		"Attempt 4 (run intent-1-0002-heading-a4)\nChanged: site/style.css.\nEnded with: it stopped before it finished.",
		"Came back: " + problem + " (attempts 2 and 3)",
		"How the planning model read it: The builder kept the tag unclosed.",
	} {
		if !strings.Contains(d.Text, want) {
			t.Errorf("lacks %q:\n%s", want, d.Text)
		}
	}
	for _, never := range []string{"not shown", "Came back: 0002-heading-c1"} {
		if strings.Contains(d.Text, never) {
			t.Errorf("has %q:\n%s", never, d.Text)
		}
	}
	if d := verdict.Attempts("0002-heading", nil); d.Text != "" {
		t.Errorf("no earlier attempt should give an empty document: %q", d.Text)
	}
}

func TestAttemptsCutsTheOldestAttemptsFirst(t *testing.T) {
	var earlier []verdict.AttemptRecord
	for n := 1; n <= 6; n++ {
		a := verdict.AttemptRecord{RunID: fmt.Sprintf("intent-1-0002-heading-a%d", n), Ended: "The last build failed.",
			Changed: []string{"site/index.html"}}
		for k := 1; k <= 8; k++ {
			a.StillWrong = append(a.StillWrong, fmt.Sprintf("attempt %d problem %d: %s", n, k, strings.Repeat("long ", 40)))
		}
		earlier = append(earlier, a)
	}
	d := verdict.Attempts("0002-heading", earlier)
	if n := utf8.RuneCountInString(d.Text); n > verdict.MaxAttempts {
		t.Fatalf("%d characters, more than %d", n, verdict.MaxAttempts)
	}
	lines := strings.Split(d.Text, "\n")
	if !slices.Contains(lines, "Attempt 1: left out to fit.") {
		t.Errorf("the oldest attempt was not left out:\n%s", d.Text)
	}
	for k := 1; k <= 8; k++ {
		if !strings.Contains(d.Text, fmt.Sprintf("attempt 6 problem %d:", k)) {
			t.Errorf("the newest attempt was cut (problem %d):\n%s", k, d.Text)
		}
	}
	// Lines go whole: every Still wrong line that is there is all there.
	for _, l := range lines {
		if strings.HasPrefix(l, "Still wrong") && !strings.HasSuffix(l, "long") && !strings.HasSuffix(l, "…") {
			t.Errorf("a line was cut in the middle: %q", l)
		}
	}
}

// staticWorkspace is an application made from the static template, as
// the Applications page makes it, opened as a workspace.
func staticWorkspace(t *testing.T) *workspace.Workspace {
	t.Helper()
	root := t.TempDir()
	db := migrationstest.IntentsIn(t, root)
	apps := app.NewService(db, root, time.Now, workspace.Repositories{Now: time.Now})
	if _, err := apps.CreateFromTemplate(context.Background(), "site", "Site", "static"); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(apps.WorkspaceDir("site"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

func TestEvidenceFindsTheLinesATaskIsAbout(t *testing.T) {
	ws := staticWorkspace(t)
	if _, err := ws.Change(t.Context(), []workspace.FileChange{{Path: "site/heading.js", Action: workspace.Create,
		Content: "// The page's title.\nexport function heading() { return document.querySelector('h1'); }\n"}}, workspace.CommitMeta{}); err != nil {
		t.Fatal(err)
	}
	task := plan.Task{Slug: "0002-heading", Title: "Change the heading",
		Criteria: []plan.Criterion{{Text: "The h1 heading of the home page says Welcome"}}}
	if got, want := verdict.Words(task), []string{"change", "heading", "h1", "home", "welcome"}; !slices.Equal(got, want) {
		t.Errorf("words %q, want %q", got, want)
	}
	d, err := verdict.Evidence(ws, task, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d.Ref != "evidence:0002-heading" {
		t.Errorf("ref %q", d.Ref)
	}
	for _, want := range []string{
		"Words searched: change, heading, h1, home, welcome.",
		"Acceptance examples:\nacceptance/0001-home-page.json:2: \"title\": \"The home page shows its heading\",",
		"Symbols:\nsite/heading.js:2: export function heading() { return document.querySelector('h1'); }",
		"Other lines:\nsite/index.html:12: <p>This page was made from Autoapp's static template. Ask the engineer to change it.</p>",
	} {
		if !strings.Contains(d.Text, want) {
			t.Errorf("lacks %q:\n%s", want, d.Text)
		}
	}
	if n := utf8.RuneCountInString(d.Text); n > verdict.MaxEvidence {
		t.Errorf("%d characters, more than %d", n, verdict.MaxEvidence)
	}

	small, err := verdict.Evidence(ws, task, 200)
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(small.Text); n > 200 || !strings.Contains(small.Text, "more lines left out to fit]") {
		t.Errorf("cut to 200 (%d characters):\n%s", n, small.Text)
	}
}

func TestEvidenceWithNoMatchListsTheMainFiles(t *testing.T) {
	ws := staticWorkspace(t)
	d, err := verdict.Evidence(ws, plan.Task{Slug: "0003-zebra", Title: "Zebras everywhere"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Nothing in the workspace matches these words.", "The workspace's main files:", "autoapp.json (", "site/index.html ("} {
		if !strings.Contains(d.Text, want) {
			t.Errorf("lacks %q:\n%s", want, d.Text)
		}
	}
}

func TestRunChangesReadsTheRunsCommits(t *testing.T) {
	ws := staticWorkspace(t)
	if _, err := ws.Edit(t.Context(), "site/index.html", []workspace.Hunk{{Find: "<h1>A new site</h1>", Replace: "<h1>Welcome</h1>"}},
		workspace.CommitMeta{RunID: "intent-1-0002-heading-a1", CallID: "call-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Change(t.Context(), []workspace.FileChange{{Path: "acceptance/0002-heading-c1.json", Action: workspace.Create, Content: "{}\n"}},
		workspace.CommitMeta{RunID: "intent-1-0002-heading-a10"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Edit(t.Context(), "site/style.css", []workspace.Hunk{{Find: "body", Replace: "body "}},
		workspace.CommitMeta{RunID: "intent-1-0002-heading-a1"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		run  string
		want []string
	}{
		{"intent-1-0002-heading-a1", []string{"site/index.html", "site/style.css"}},
		{"intent-1-0002-heading-a10", []string{"acceptance/0002-heading-c1.json"}},
		{"intent-1-0002-heading-a2", nil},
	}
	for _, tt := range tests {
		t.Run(tt.run, func(t *testing.T) {
			got, err := verdict.RunChanges(t.Context(), ws, tt.run)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("changed %q, want %q", got, tt.want)
			}
		})
	}
}

// A failure that came back at another line is the same failure: "Came
// back:" compares the failures' signatures, not their text, and names the
// failure as the latest attempt met it.
func TestAFailureThatMovedLinesCameBack(t *testing.T) {
	at8 := "lint: src/notes.ts:8:3: 'unused' is declared but never used"
	at9 := "lint: src/notes.ts:9:3: 'unused' is declared but never used"
	other := "lint: src/notes.ts:12:1: missing semicolon"
	d := verdict.Attempts("0003-lint", []verdict.AttemptRecord{
		{RunID: "intent-1-0003-lint-a1", StillWrong: []string{at8}},
		{RunID: "intent-1-0003-lint-a2", StillWrong: []string{at9, other}},
	})
	if want := "Came back: " + at9 + " (attempts 1 and 2)"; !strings.Contains(d.Text, want) {
		t.Errorf("lacks %q:\n%s", want, d.Text)
	}
	if strings.Contains(d.Text, "Came back: "+other) || strings.Count(d.Text, "Came back:") != 1 {
		t.Errorf("another failure, or the same one twice, came back:\n%s", d.Text)
	}
}
