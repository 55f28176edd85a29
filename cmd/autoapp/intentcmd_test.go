package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"autoapp/intent"
	"autoapp/intent/plan"
)

// backlogRoot is a data folder with the application notes and one stopped
// intent whose first task failed and whose second waits on it.
func backlogRoot(t *testing.T) (string, int64) {
	t.Helper()
	root := t.TempDir()
	st, err := open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	l := st
	if _, err := l.Apps.CreateFromTemplate(ctx, "notes", "Notes", "static"); err != nil {
		t.Fatal(err)
	}
	in, err := l.Backlog.OpenDraft(ctx, "notes", "Add tags to notes.", intent.Analysis{Restated: []string{"Tags on notes."}})
	if err != nil {
		t.Fatal(err)
	}
	task := func(title string, blockedBy ...string) plan.Task {
		return plan.Task{Title: title, Priority: "high", Labels: []string{"views"}, BlockedBy: blockedBy,
			EstimatedLines: 30, Risk: "normal", Reasoning: "low", Summary: "A change.",
			Criteria: []plan.Criterion{{Text: "The tags show"}}, NoFailurePath: "nothing to refuse"}
	}
	first, err := l.Backlog.AddTask(ctx, in.ID, task("Add tags"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := l.Backlog.AddTask(ctx, in.ID, task("Filter by tag", first.Slug))
	if err != nil {
		t.Fatal(err)
	}
	steps := []error{
		l.Backlog.Submit(ctx, in.ID),
		l.Backlog.MoveIntent(ctx, in.ID, intent.IntentRunning, "run"),
		l.Backlog.MoveTask(ctx, first.ID, intent.TaskInQueue, intent.Move{Reason: "a run starts"}),
		l.Backlog.MoveTask(ctx, second.ID, intent.TaskInQueue, intent.Move{Reason: "a run starts"}),
		l.Backlog.MoveTask(ctx, first.ID, intent.TaskInProgress, intent.Move{Reason: "its turn", RunID: "intent-1-0001-add-tags-a1"}),
		l.Backlog.MoveTask(ctx, first.ID, intent.TaskFailed, intent.Move{Reason: "expected status 200, got 404 on GET /tags"}),
		l.Backlog.MoveIntent(ctx, in.ID, intent.IntentStopped, "0001-add-tags failed"),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	return root, in.ID
}

func TestIntentListAndShowPrintTheBacklog(t *testing.T) {
	root, id := backlogRoot(t)
	n := strconv.FormatInt(id, 10)

	// With no application named, every application's intents, grouped.
	code, out, errOut := runCLI(t, "", "intent", "list", "--root", root)
	if code != 0 || !strings.HasPrefix(out, "notes\nID") || !strings.Contains(out, "Add tags to notes.") {
		t.Fatalf("list of every application: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, _ := runCLI(t, "", "intent", "list", "-h"); code != 0 {
		t.Fatalf("intent list -h: exit %d, want usage and 0", code)
	}
	code, out, errOut = runCLI(t, "", "intent", "list", "--root", root, "--app", "notes")
	if code != 0 || !strings.Contains(out, "stopped") || !strings.Contains(out, "Add tags to notes.") || !strings.Contains(out, "1 in-queue, 1 failed") {
		t.Fatalf("list: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "", "intent", "list", "--root", root, "--app", "notes", "--json")
	var list []intentJSON
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 || list[0].Counts["failed"] != 1 {
		t.Fatalf("list --json: exit %d\n%s", code, out)
	}

	code, out, _ = runCLI(t, "", "intent", "show", n, "--root", root)
	for _, want := range []string{"Intent " + n + " of notes: stopped", "Stopped: 0001-add-tags failed",
		"0001-add-tags", "failed", "expected status 200, got 404 on GET /tags", "0002-filter-by-tag", "blocked"} {
		if !strings.Contains(out, want) {
			t.Errorf("show does not print %q:\n%s", want, out)
		}
	}
	if code != 0 {
		t.Fatalf("show: exit %d", code)
	}
	code, out, _ = runCLI(t, "", "intent", "show", "--root", root, "--json", n)
	var shown intentJSON
	if code != 0 || json.Unmarshal([]byte(out), &shown) != nil {
		t.Fatalf("show --json: exit %d\n%s", code, out)
	}
	if len(shown.Tasks) != 2 || shown.Tasks[0].Slug != "0001-add-tags" || shown.Tasks[1].Status != "blocked" ||
		shown.Tasks[0].Reason != "expected status 200, got 404 on GET /tags" || shown.Analysis == nil {
		t.Fatalf("show --json: %+v", shown)
	}

	code, _, errOut = runCLI(t, "", "intent", "show", "99", "--root", root)
	if code != 2 || strings.Contains(errOut, "\n\n") || errOut == "" {
		t.Fatalf("an unknown intent: exit %d %q", code, errOut)
	}
	oneSentence(t, errOut)
	code, _, errOut = runCLI(t, "", "intent", "show", "x", "--root", root)
	if code != 2 || !strings.Contains(errOut, "give the intent's number") {
		t.Fatalf("not a number: exit %d %q", code, errOut)
	}
}
