package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"autoapp/executor/ai/provider"
	"autoapp/executor/ai/scripted"
	"autoapp/executor/build"
	"autoapp/executor/replay"
	"autoapp/intent/workspace"
	"autoapp/knowledge"
)

// emptyPageFailure is what the static template's check stage says of an
// empty site/index.html.
const emptyPageFailure = "stage check exited with status 1 and printed nothing"

// replayLesson is the lesson replayRoot's case taught.
const replayLesson = "Keep the home page whole: the check stage fails when the page is empty."

// replayRoot is backlogRoot with the scripted model as the Settings model,
// a build case of notes that the task's run met when it emptied the home
// page (at the workspace's first revision), the lesson it taught, and a
// second case whose lesson was never replayed.
func replayRoot(t *testing.T) (root string, model *scripted.Server, caseID, lessonID, unreplayed int64) {
	t.Helper()
	root, _ = backlogRoot(t)
	st, err := open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	model = scripted.New(t)
	model.Models("builder")
	if err := st.Providers.Save(provider.Provider{Name: "scripted", BaseURL: model.URL(), On: true}, false); err != nil {
		t.Fatal(err)
	}
	if err := st.Providers.SetDefaultModel("scripted:builder"); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(st.Apps.WorkspaceDir("notes"), clock)
	if err != nil {
		t.Fatal(err)
	}
	head, err := ws.Head(ctx)
	ws.Close()
	if err != nil {
		t.Fatal(err)
	}
	open := func(stage, message string) int64 {
		opened, _, err := st.Cases.Build(ctx, knowledge.BuildObserved{AppID: "notes", RunID: "intent-1-0001-add-tags-a1", Revision: head,
			Request: "0001-add-tags: Add tags", Model: "scripted:builder", ServerVersion: "test", StagesRun: []string{stage},
			Problems: []knowledge.BuildProblem{{Stage: stage, Message: message, Signature: build.Signature(stage, message)}}})
		if err != nil || len(opened) != 1 {
			t.Fatalf("a failed build opened %v, %v", opened, err)
		}
		return opened[0]
	}
	caseID = open("check", emptyPageFailure)
	if lessonID, err = st.Lessons.Add(ctx, knowledge.Lesson{CaseID: caseID, Text: replayLesson, Applies: knowledge.Applies{Stage: "check"}}); err != nil {
		t.Fatal(err)
	}
	other := open("lint", "index.html:3: a heading is missing")
	if unreplayed, err = st.Lessons.Add(ctx, knowledge.Lesson{CaseID: other, Text: "Give every page one heading."}); err != nil {
		t.Fatal(err)
	}
	return root, model, caseID, lessonID, unreplayed
}

// scriptReplays scripts n replays of one run an arm: given the lesson, the
// run keeps the page whole; without it, it empties the page.
func scriptReplays(model *scripted.Server, n int) {
	page := func(content string) scripted.Reply {
		args, _ := json.Marshal(map[string]any{"files": []map[string]string{{"path": "site/index.html", "action": "overwrite", "content": content}}})
		return scripted.Reply{ToolCalls: []scripted.Call{{Name: "source_change", Args: string(args)}}}
	}
	cycle := scripted.Reply{ToolCalls: []scripted.Call{{Name: "candidate_cycle", Args: `{}`}}}
	done := scripted.Reply{Text: "Done."}
	var with, without []scripted.Reply
	for range n {
		with = append(with, page("<h1>Notes</h1>\n<p>Tags soon.</p>\n"), cycle, done)
		without = append(without, page(""), cycle, done)
	}
	model.On(scripted.Mentions(replayLesson), with...)
	model.On(scripted.Any(), without...)
}

func TestKnowledgeReplayPrintsTheArmsAndConfirmShowsThemFirst(t *testing.T) {
	root, model, caseID, lessonID, unreplayed := replayRoot(t)
	scriptReplays(model, 2)
	c, l := strconv.FormatInt(caseID, 10), strconv.FormatInt(lessonID, 10)

	code, out, errOut := runCLI(t, "", "knowledge", "replay", c, "--root", root, "--runs", "1")
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"Replay of case " + c + ": a build failure of notes at stage check",
		"Lesson under test: " + l + " (provisional): " + replayLesson,
		"with     1     1       Verdict: The lesson helped: with it 1 of 1 runs passed, without it 0 of 1.",
		"without  1     0",
		"The verdict is not applied",
		"replay-" + c + "-with-1",
		"replay-" + c + "-without-1",
		"failed again with the case's failure: " + emptyPageFailure,
		"Regression: no other resolved case of notes has a confirmed lesson.",
		"the runs are kept under " + root + "/replay/" + c + "/",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("replay prints no %q:\n%s", want, out)
		}
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "run 1 of 2, with: replay-"+c+"-with-1 started in "+root+"/replay/"+c+"/with/1") ||
		!strings.HasPrefix(lines[1], "run 1 of 2, with: passed: ") || !strings.HasPrefix(lines[3], "run 2 of 2, without: failed: ") {
		t.Fatalf("progress on stderr:\n%s", errOut)
	}

	code, out, errOut = runCLI(t, "", "knowledge", "replay", c, "--root", root, "--runs", "1", "--json")
	var res replay.Result
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("replay --json: exit %d\n%s%s", code, out, errOut)
	}
	if res.Verdict.Outcome != replay.Helped || len(res.Arms) != 2 || res.Arms[0].Passed != 1 || res.Arms[1].Passed != 0 ||
		res.ManifestHash == "" || res.Manifest.Lesson == nil || res.Manifest.Lesson.ID != lessonID || res.Runs[1].RunID != "replay-"+c+"-without-2" {
		t.Fatalf("replay --json: %s", out)
	}

	t.Run("show prints the latest replay", func(t *testing.T) {
		code, out, errOut := runCLI(t, "", "knowledge", "show", l, "--root", root)
		if code != 0 || !strings.Contains(out, "Lesson "+l+": provisional") || !strings.Contains(out, "Replay of case "+c+": a build failure of notes") ||
			!strings.Contains(out, "Verdict: The lesson helped") || !strings.Contains(out, "replay-"+c+"-with-2") ||
			strings.Contains(out, "replay-"+c+"-with-1") || !strings.Contains(out, "Regression: no other resolved case") {
			t.Fatalf("show: exit %d\n%s%s", code, out, errOut)
		}
		code, out, errOut = runCLI(t, "", "knowledge", "show", l, "--root", root, "--json")
		var d struct {
			ID     int64          `json:"id"`
			Replay *replay.Result `json:"replay"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &d) != nil || d.ID != lessonID || d.Replay == nil ||
			d.Replay.Verdict.Outcome != replay.Helped || d.Replay.ManifestHash != res.ManifestHash {
			t.Fatalf("show --json: exit %d\n%s%s", code, out, errOut)
		}
	})

	t.Run("confirm shows the latest replay and asks", func(t *testing.T) {
		code, out, _ := runCLI(t, "n\n", "knowledge", "confirm", l, "--root", root)
		if code != 1 || !strings.Contains(out, "replay-"+c+"-with-2") || strings.Contains(out, "replay-"+c+"-with-1") ||
			!strings.Contains(out, "Verdict: The lesson helped") || !strings.Contains(out, "Regression: no other resolved case") ||
			!strings.Contains(out, "Confirm lesson "+l+"? [y/N]") || !strings.Contains(out, "Lesson "+l+" is not confirmed.") {
			t.Fatalf("confirm answered no: exit %d\n%s", code, out)
		}
		if got := lessonNow(t, root, lessonID); got.Status != knowledge.LessonProvisional {
			t.Fatalf("a lesson answered no is %s", got.Status)
		}
		code, out, _ = runCLI(t, "y\n", "knowledge", "confirm", l, "--root", root, "--by", "Grace")
		if code != 0 || !strings.Contains(out, "Lesson "+l+" is confirmed by Grace.") {
			t.Fatalf("confirm answered yes: exit %d\n%s", code, out)
		}
		if got := lessonNow(t, root, lessonID); got.Status != knowledge.LessonConfirmed || got.ConfirmedBy != "Grace" {
			t.Fatalf("a lesson answered yes: %+v", got)
		}
	})

	t.Run("with no replay it says so and confirms", func(t *testing.T) {
		code, out, _ := runCLI(t, "", "knowledge", "show", strconv.FormatInt(unreplayed, 10), "--root", root)
		if other := lessonNow(t, root, unreplayed).CaseID; code != 0 || !strings.HasSuffix(out, fmt.Sprintf("\nNo replay has been run; knowledge replay %d first.\n", other)) {
			t.Fatalf("show of a lesson never replayed: exit %d\n%s", code, out)
		}
		code, out, errOut := runCLI(t, "", "knowledge", "confirm", strconv.FormatInt(unreplayed, 10), "--root", root)
		other := lessonNow(t, root, unreplayed).CaseID
		if code != 0 || !strings.HasPrefix(out, fmt.Sprintf("no replay has been run; knowledge replay %d first\n", other)) ||
			strings.Contains(out, "[y/N]") || !strings.Contains(out, "is confirmed by the owner") {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"replay", "999"}, "There is no case 999."},
			{[]string{"replay", "tags"}, "give the case's id"},
			{[]string{"replay", c, "--runs", "11"}, "give --runs between 1 and 10"},
			{[]string{"replay", c, "--with", "999"}, "There is no lesson 999."},
		} {
			code, _, errOut := runCLI(t, "", append(append([]string{"knowledge"}, tc.args...), "--root", root)...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
			}
			oneSentence(t, errOut)
		}
	})
}
