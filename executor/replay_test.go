package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"autoapp/executor/ai/scripted"
	"autoapp/executor/replay"
	"autoapp/intent"
	"autoapp/knowledge"
)

// replayLesson is what the distiller learns from the heading task's empty
// page, and what the replay's with arm is given.
const replayLesson = "Keep the home page whole: the check stage fails when the page is empty."

// goodPage and emptyPage are what a replay's run leaves of site/index.html.
var (
	goodPage  = scripted.Reply{ToolCalls: []scripted.Call{overwrite("<h1>A new site</h1>\n<p>Hello notes, and welcome</p>\n")}}
	emptyPage = scripted.Reply{ToolCalls: []scripted.Call{overwrite("")}}
)

// buildCase runs the heading task through a build that fails on an empty
// page and a repair, and the distiller learns replayLesson from the build
// case it resolved. It answers the case and the lesson.
func buildCase(t *testing.T, h *host) (knowledge.Case, knowledge.Lesson) {
	t.Helper()
	ctx := context.Background()
	h.model.On(scripted.Contains("a build failure at stage check"), scripted.Reply{Text: fmt.Sprintf(
		`{"explanation":"The page was emptied, and the check stage refuses an empty page.","knowable":"lesson","lesson":%q,"same_as":0}`, replayLesson)})
	id := h.plan(t, heading())
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes")),
			edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p>Hello notes</p>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		emptyPage,
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{ToolCalls: []scripted.Call{overwrite("<h1>A new site</h1>\n<p>Hello notes</p>\n")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	if err := h.exec.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	if d := h.wait(t, id); d.Status != intent.IntentDone {
		t.Fatalf("intent %s (%s)", d.Status, d.StopReason)
	}
	all, err := h.launcher.Cases.List(ctx, knowledge.CaseQuery{AppID: "site"})
	if err != nil || len(all) != 1 || all[0].Kind != knowledge.CaseBuild || !all[0].Resolved() {
		t.Fatalf("want one resolved build case: %+v %v", all, err)
	}
	lessons, err := h.launcher.Lessons.List(ctx, knowledge.LessonQuery{})
	if err != nil || len(lessons) != 1 || lessons[0].CaseID != all[0].ID || lessons[0].Text != replayLesson {
		t.Fatalf("want the lesson distilled from case %d: %+v %v", all[0].ID, lessons, err)
	}
	return all[0], lessons[0]
}

// scriptArms scripts n runs of each arm: given the lesson, a run keeps the
// page whole; without it, a run empties it again.
func scriptArms(h *host, n int, with ...scripted.Reply) {
	var withReplies, withoutReplies []scripted.Reply
	for range n {
		withReplies = append(withReplies, goodPage, scripted.Reply{ToolCalls: []scripted.Call{cycle}}, scripted.Reply{Text: "Done."})
		withoutReplies = append(withoutReplies, emptyPage, scripted.Reply{ToolCalls: []scripted.Call{cycle}}, scripted.Reply{Text: "Done."})
	}
	h.model.On(scripted.Mentions(replayLesson), append(withReplies, with...)...)
	h.model.On(scripted.Any(), withoutReplies...)
}

// rowCounts counts the launcher's own servings, cases, contexts and blobs.
func rowCounts(t *testing.T, h *host) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"servings", "cases", "contexts", "blobs", "replays", "events"} {
		var n int
		if err := h.launcher.Knowledge.DB().Read.Get(&n, `SELECT count(*) FROM `+table); err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	return out
}

func TestAReplayOfABuildCaseTellsTheLessonHelped(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	c, lesson := buildCase(t, h)
	scriptArms(h, 3)
	before := rowCounts(t, h)
	rel, err := h.apps.Releases(ctx, "site", 100)
	if err != nil {
		t.Fatal(err)
	}
	releases := len(rel)

	var lines []replay.Progress
	res, err := h.launcher.Replays.Replay(ctx, c.ID, replay.Options{}, func(p replay.Progress) { lines = append(lines, p) })
	if err != nil {
		t.Fatal(err)
	}

	t.Run("the table", func(t *testing.T) {
		want := []replay.Arm{{Arm: knowledge.ArmWith, Runs: 3, Passed: 3}, {Arm: knowledge.ArmWithout, Runs: 3, Passed: 0}}
		if !slices.Equal(res.Arms, want) || res.Verdict.Outcome != replay.Helped || res.Stopped {
			t.Fatalf("arms %+v, verdict %+v, stopped %v", res.Arms, res.Verdict, res.Stopped)
		}
		if res.Verdict.Sentence != "The lesson helped: with it 3 of 3 runs passed, without it 0 of 3." {
			t.Fatalf("verdict %q", res.Verdict.Sentence)
		}
		var arms []string
		for _, r := range res.Runs {
			arms = append(arms, r.Arm)
			if r.Arm == knowledge.ArmWithout && !strings.Contains(r.Judgement, "failed again with the case's failure") {
				t.Errorf("a without run is judged %q", r.Judgement)
			}
			if r.Arm == knowledge.ArmWith && !strings.Contains(r.Judgement, "ran stage check and no problem carries the case's signature") {
				t.Errorf("a with run is judged %q", r.Judgement)
			}
		}
		if !slices.Equal(arms, []string{"with", "without", "with", "without", "with", "without"}) {
			t.Fatalf("the arms ran in the order %v, want them interleaved", arms)
		}
		if len(res.Regression) != 0 || len(res.Manifest.Regression) != 0 {
			t.Fatalf("no other case has a confirmed lesson, yet the regression set is %+v", res.Manifest.Regression)
		}
		if len(lines) != 12 || !lines[11].Done || lines[11].Index != 6 || lines[11].Total != 6 {
			t.Fatalf("progress: %+v", lines)
		}
	})

	t.Run("the manifest is on every row", func(t *testing.T) {
		text, err := h.launcher.Knowledge.Blob(ctx, res.ManifestHash)
		if err != nil {
			t.Fatal(err)
		}
		var m replay.Manifest
		if err := json.Unmarshal([]byte(text), &m); err != nil {
			t.Fatal(err)
		}
		if m.Case.ID != c.ID || m.Case.Revision != c.RevisionBefore || m.Case.ResolvedRevision != c.ResolvedRevision ||
			m.Lesson == nil || m.Lesson.ID != lesson.ID || m.Runs != 3 || m.StepCap != 60 || m.TurnMinutes != 20 ||
			m.Model.Ref != "scripted:builder" || m.Case.Files["autoapp.json"] == "" || m.Case.Request != c.Request ||
			!strings.Contains(m.Case.Message, "Build this one task, 0001-change-the-heading") ||
			m.Instructions.Hash == "" || m.Case.CaseInstructions == "" {
			t.Fatalf("manifest:\n%s", text)
		}
		runs, err := knowledge.NewReplays(h.launcher.Knowledge.DB(), time.Now).Runs(ctx, res.ManifestHash)
		if err != nil || len(runs) != 6 {
			t.Fatalf("rows %+v %v", runs, err)
		}
		for _, r := range runs {
			if r.Manifest != res.ManifestHash || r.LessonID != lesson.ID || r.OfCaseID != c.ID {
				t.Fatalf("row %+v", r)
			}
		}
		latest, ok, err := h.launcher.Replays.Latest(ctx, lesson.ID)
		if err != nil || !ok || latest.ManifestHash != res.ManifestHash || !slices.Equal(latest.Arms, res.Arms) || latest.Stopped {
			t.Fatalf("the latest replay of lesson %d: %+v %v %v", lesson.ID, latest, ok, err)
		}
	})

	t.Run("the launcher's store gains only the manifest and the rows", func(t *testing.T) {
		after := rowCounts(t, h)
		for table, n := range before {
			want := n
			switch table {
			case "blobs":
				want = n + 1
			case "replays":
				want = n + 6
			}
			if after[table] != want {
				t.Errorf("%s: %d rows, was %d, want %d", table, after[table], n, want)
			}
		}
	})

	t.Run("each run writes to the case's own store", func(t *testing.T) {
		ks, err := knowledge.Open(filepath.Join(h.root, "replay", strconv.FormatInt(c.ID, 10), "knowledge.sqlite"), time.Now)
		if err != nil {
			t.Fatal(err)
		}
		defer ks.Close()
		turns, err := ks.Turns(ctx, knowledge.TurnQuery{})
		if err != nil || len(turns) != 6 {
			t.Fatalf("the case's store keeps %d turns, want 6: %v", len(turns), err)
		}
		var cases, distilled, servings, sourced int
		db := ks.DB().Read
		if err := db.Get(&cases, `SELECT count(*) FROM cases`); err != nil {
			t.Fatal(err)
		}
		if err := db.Get(&distilled, `SELECT count(*) FROM cases WHERE distill_state IS NOT NULL OR diagnosis IS NOT NULL`); err != nil {
			t.Fatal(err)
		}
		if err := db.Get(&servings, `SELECT count(*) FROM servings`); err != nil {
			t.Fatal(err)
		}
		if err := db.Get(&sourced, `SELECT count(*) FROM events WHERE json_extract(attrs, '$.source') = 'replay'`); err != nil {
			t.Fatal(err)
		}
		var other int
		if err := db.Get(&other, `SELECT count(*) FROM events WHERE json_extract(attrs, '$.source') IS NOT 'replay'`); err != nil {
			t.Fatal(err)
		}
		// The without arm's failed builds opened a case there.
		if cases == 0 || distilled != 0 || servings != 0 || sourced == 0 || other != 0 {
			t.Fatalf("the case's store: %d cases (%d distilled), %d servings, %d events from a replay and %d from elsewhere",
				cases, distilled, servings, sourced, other)
		}
		for _, r := range res.Runs {
			dir := filepath.Join(h.root, "replay", strconv.FormatInt(c.ID, 10), r.Arm, strconv.Itoa(r.N), "workspace")
			if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
				t.Fatalf("run %s has no clone of its own: %v", r.RunID, err)
			}
		}
	})

	t.Run("only the with arm is given the lesson", func(t *testing.T) {
		for _, r := range res.Runs {
			reqs := turnRequests(h, r.RunID)
			if len(reqs) == 0 {
				t.Fatalf("the model heard nothing of %s", r.RunID)
			}
			given := strings.Contains(documentsOf(t, h, r.RunID), replayLesson)
			if given != (r.Arm == knowledge.ArmWith) {
				t.Errorf("%s was given the lesson: %v", r.RunID, given)
			}
		}
	})

	t.Run("the task and the application are as they were", func(t *testing.T) {
		d, err := h.backlog.Get(ctx, 1)
		if err != nil || d.Tasks[0].Status != intent.TaskCompleted || len(d.Tasks[0].RunIDs) != 1 {
			t.Fatalf("the task: %+v %v", d.Tasks, err)
		}
		rel, err := h.apps.Releases(ctx, "site", 100)
		if err != nil || len(rel) != releases {
			t.Fatalf("the launcher keeps %d releases of site, was %d: %v", len(rel), releases, err)
		}
	})
}

func TestAReplayKeepsTwentyRunFoldersACase(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	c, _ := buildCase(t, h)
	scriptArms(h, 1)
	// Twenty-five folders of earlier replays, the first five the oldest.
	without := filepath.Join(h.root, "replay", strconv.FormatInt(c.ID, 10), knowledge.ArmWithout)
	long := time.Now().Add(-48 * time.Hour)
	for n := 1; n <= 25; n++ {
		dir := filepath.Join(without, strconv.Itoa(n))
		if err := os.MkdirAll(filepath.Join(dir, "workspace"), 0o700); err != nil {
			t.Fatal(err)
		}
		at := long.Add(time.Duration(n) * time.Minute)
		if err := os.Chtimes(dir, at, at); err != nil {
			t.Fatal(err)
		}
	}
	res, err := h.launcher.Replays.Replay(ctx, c.ID, replay.Options{Runs: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Runs[1].Arm != knowledge.ArmWithout || res.Runs[1].N != 26 {
		t.Fatalf("the without run took folder %d, want 26 after the 25 there", res.Runs[1].N)
	}
	for n := 1; n <= 26; n++ {
		_, err := os.Stat(filepath.Join(without, strconv.Itoa(n)))
		if kept := err == nil; kept != (n > 5) {
			t.Errorf("without/%d kept %v, want the five oldest removed", n, kept)
		}
	}
	if _, err := os.Stat(filepath.Join(without, "..", knowledge.ArmWith, "1", "workspace")); err != nil {
		t.Errorf("the with run's folder: %v", err)
	}
}

func TestAReplayStoppedHalfWayKeepsTheRunsThatFinished(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newHost(t)
	c, lesson := buildCase(t, h)
	// The second with run is stopped while its model thinks.
	scriptArms(h, 1, scripted.Reply{Before: cancel, Text: "Thinking."})
	res, err := h.launcher.Replays.Replay(ctx, c.ID, replay.Options{Runs: 2}, nil)
	if !errors.Is(err, replay.ErrStopped) || !res.Stopped {
		t.Fatalf("err %v, stopped %v", err, res.Stopped)
	}
	rows, err := knowledge.NewReplays(h.launcher.Knowledge.DB(), time.Now).Runs(context.Background(), res.ManifestHash)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.RunID)
		if r.Manifest != res.ManifestHash || r.Judgement == "" {
			t.Errorf("row %+v", r)
		}
	}
	id := strconv.FormatInt(c.ID, 10)
	if want := []string{"replay-" + id + "-with-1", "replay-" + id + "-without-1"}; !slices.Equal(got, want) {
		t.Fatalf("rows %v, want the two finished runs only", got)
	}
	if len(turnRequests(h, "replay-"+id+"-with-2")) == 0 {
		t.Fatal("the second with run never began: the stop did not fall half-way")
	}
	latest, ok, err := h.launcher.Replays.Latest(context.Background(), lesson.ID)
	if err != nil || !ok || !latest.Stopped || latest.Verdict.Outcome != replay.Helped || len(latest.Runs) != 2 {
		t.Fatalf("the latest replay: %+v %v %v", latest, ok, err)
	}
}

func TestACheckCaseIsJudgedByItsOwnExampleNotTheWorkspacesCopy(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	const lessonText = "Read the example before the page: the page must say what the example expects."
	h.model.On(scripted.Contains("a check failure of example "+headingSlug+"-c1"), scripted.Reply{Text: fmt.Sprintf(
		`{"explanation":"The page did not say what the example expects.","knowable":"lesson","lesson":%q,"same_as":0}`, lessonText)})
	id := h.plan(t, heading())
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{ToolCalls: []scripted.Call{edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p>Hello notes</p>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	if err := h.exec.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	if d := h.wait(t, id); d.Status != intent.IntentDone {
		t.Fatalf("intent %s (%s)", d.Status, d.StopReason)
	}
	all, err := h.launcher.Cases.List(ctx, knowledge.CaseQuery{AppID: "site"})
	if err != nil || len(all) != 1 || all[0].Kind != knowledge.CaseCheck {
		t.Fatalf("want one check case: %+v %v", all, err)
	}
	c := all[0]
	// Given the lesson, the run makes the page say it; without it, the run
	// rewrites the example to expect what the page says already, and every
	// check of the workspace passes.
	h.model.On(scripted.Mentions(lessonText),
		scripted.Reply{ToolCalls: []scripted.Call{edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p>Hello notes</p>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	h.model.On(scripted.Any(),
		scripted.Reply{ToolCalls: []scripted.Call{ask("Should the page or the example change?")}},
		scripted.Reply{ToolCalls: []scripted.Call{whole(headingC1, "overwrite", example("The home page says A new site", "/", "A new site"))}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	res, err := h.launcher.Replays.Replay(ctx, c.ID, replay.Options{Runs: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2 || !res.Runs[0].Passed || res.Runs[1].Passed || res.Verdict.Outcome != replay.Helped {
		t.Fatalf("runs %+v, verdict %+v", res.Runs, res.Verdict)
	}
	if !strings.Contains(res.Runs[1].Judgement, "The case's own example "+headingSlug+"-c1 failed") {
		t.Fatalf("the without run is judged %q", res.Runs[1].Judgement)
	}
	if res.Manifest.Case.Example == nil || res.Manifest.Case.Example.Hash != c.ExampleHash || !strings.Contains(res.Manifest.Case.Example.Text, "Hello notes") {
		t.Fatalf("the manifest's example: %+v", res.Manifest.Case.Example)
	}
	// The run answered the builder's question itself, and the turn went on.
	reqs := turnRequests(h, res.Runs[1].RunID)
	if len(reqs) != 4 {
		t.Fatalf("the without run made %d requests, want 4: its question ended it", len(reqs))
	}
	if answer := reqs[1].Messages[len(reqs[1].Messages)-1]; !strings.Contains(answer.Content, replay.NoOneAnswers) {
		t.Fatalf("the answer to its question: %+v", answer)
	}
}

func TestTheRegressionSetReplaysTheConfirmedCasesOnceWithTheNewLesson(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	first, old := buildCase(t, h)
	if err := h.launcher.Lessons.Confirm(ctx, old.ID, "Ada"); err != nil {
		t.Fatal(err)
	}
	// A second task meets a check failure and teaches another lesson.
	const newLesson = "Say goodbye under the heading: the example reads the page as a whole."
	h.model.On(scripted.Contains("a check failure of example 0002-change-the-heading-c1"), scripted.Reply{Text: fmt.Sprintf(
		`{"explanation":"The page did not say goodbye.","knowable":"lesson","lesson":%q,"same_as":0}`, newLesson)})
	task := heading()
	task.Criteria[0].Text = "The home page says Goodbye notes"
	id := h.plan(t, task)
	const slug, c1 = "0002-change-the-heading", "acceptance/0002-change-the-heading-c1.json"
	sayGoodbye := scripted.Reply{ToolCalls: []scripted.Call{edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n<p>Goodbye notes</p>")}}
	h.model.On(scripted.RunID(runID(id, slug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{change(c1, example("The home page says Goodbye notes", "/", "Goodbye notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		sayGoodbye,
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	if err := h.exec.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	if d := h.wait(t, id); d.Status != intent.IntentDone {
		t.Fatalf("intent %s (%s)", d.Status, d.StopReason)
	}
	all, err := h.launcher.Cases.List(ctx, knowledge.CaseQuery{AppID: "site"})
	if err != nil || len(all) != 2 || all[0].Kind != knowledge.CaseCheck {
		t.Fatalf("want the build case and a newer check case: %+v %v", all, err)
	}
	second, ok, err := knowledge.NewReplays(h.launcher.Knowledge.DB(), time.Now).LessonOfCase(ctx, all[0].ID)
	if err != nil || !ok || second.Text != newLesson {
		t.Fatalf("the second case's lesson: %+v %v %v", second, ok, err)
	}

	// The regression run is given both lessons, the new one and the first
	// case's own; the with arm the new one only.
	h.model.On(scripted.Mentions(old.Text), goodPage, scripted.Reply{ToolCalls: []scripted.Call{cycle}}, scripted.Reply{Text: "Done."})
	h.model.On(scripted.Mentions(newLesson), sayGoodbye, scripted.Reply{ToolCalls: []scripted.Call{cycle}}, scripted.Reply{Text: "Done."})
	h.model.On(scripted.Any(), scripted.Reply{Text: "Nothing to do."})
	res, err := h.launcher.Replays.Replay(ctx, second.CaseID, replay.Options{Runs: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Manifest.Regression) != 1 || res.Manifest.Regression[0].ID != first.ID ||
		!slices.Equal(res.Manifest.Regression[0].Given, []int64{second.ID, old.ID}) {
		t.Fatalf("the regression set: %+v", res.Manifest.Regression)
	}
	if len(res.Regression) != 1 {
		t.Fatalf("regression runs %+v", res.Regression)
	}
	r := res.Regression[0]
	if r.CaseID != first.ID || r.OfCaseID != second.CaseID || r.LessonID != second.ID || !r.Passed || r.N != 1 ||
		r.RunID != fmt.Sprintf("replay-%d-regression-1", first.ID) || r.Manifest != res.ManifestHash {
		t.Fatalf("the regression run: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(h.root, "replay", strconv.FormatInt(first.ID, 10), "regression", "1", "workspace")); err != nil {
		t.Fatalf("the regression run's folder: %v", err)
	}
	// The without arm did nothing, and the page never says goodbye.
	if !slices.Equal(res.Arms, []replay.Arm{{Arm: "with", Runs: 1, Passed: 1}, {Arm: "without", Runs: 1, Passed: 0}}) {
		t.Fatalf("arms %+v", res.Arms)
	}
}

// TestAReplayFromThePageHoldsTheExecutorUntilShutdownStopsIt starts a
// replay as the Knowledge page does: it goes on in the background, no run
// and no second replay can start while it goes, and a shutdown stops it
// with the runs that finished kept.
func TestAReplayFromThePageHoldsTheExecutorUntilShutdownStopsIt(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	_, lesson := buildCase(t, h)
	other := h.plan(t, heading())
	// The second with run, the third of the replay, waits on the model.
	g := scripted.NewGate(t)
	scriptArms(h, 1, scripted.Reply{Before: g.Hold, Text: "Thinking."})
	page := h.launcher.LessonReplays
	if err := page.Start(ctx, lesson.ID); err != nil {
		t.Fatal(err)
	}
	g.Wait(t)

	going := fmt.Sprintf("A replay of lesson %d is going", lesson.ID)
	if err := h.exec.Start(ctx, other); err == nil || err.Error() != going+"; an intent can run once it ends." {
		t.Fatalf("a run while the replay goes: %v", err)
	}
	if err := page.Start(ctx, lesson.ID); err == nil || err.Error() != going+"; one replay or comparison of models runs at a time, so wait for it to end." {
		t.Fatalf("a second replay: %v", err)
	}
	p, err := page.Lesson(ctx, lesson.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Going == nil || !p.Going.Going() || p.Going.Total != 6 || len(p.Going.Judged) != 2 || p.Going.Now == nil || p.Going.Now.Index != 3 {
		t.Fatalf("the replay going: %+v", p.Going)
	}
	if p.Plan.Turns() != 6 || p.Plan.Cannot != "" {
		t.Fatalf("the plan: %+v", p.Plan)
	}

	stopped := make(chan struct{})
	go func() {
		h.exec.Shutdown()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("the shutdown waited on the replay's model")
	}
	p, err = page.Lesson(ctx, lesson.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Going == nil || p.Going.Going() || p.Going.Problem != "The launcher stopped during the replay; the 2 runs that finished are kept, the one cut short left nothing." {
		t.Fatalf("the replay after the shutdown: %+v", p.Going)
	}
	if p.Latest == nil || !p.Latest.Stopped || len(p.Latest.Runs) != 2 || p.Latest.Verdict.Outcome != replay.Helped {
		t.Fatalf("the latest replay: %+v", p.Latest)
	}
}
