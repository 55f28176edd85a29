package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"autoapp/intent"
	"autoapp/intent/plan"
)

// runningRoot is a data folder with one running intent (as Run leaves
// it) and one draft of another application.
func runningRoot(t *testing.T) (root string, running, draft int64) {
	t.Helper()
	root = t.TempDir()
	st, err := open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	l := st
	open := func(appID string) int64 {
		if _, err := l.Apps.CreateFromTemplate(ctx, appID, appID, "static"); err != nil {
			t.Fatal(err)
		}
		in, err := l.Backlog.OpenDraft(ctx, appID, "Add tags.", intent.Analysis{Restated: []string{"Tags."}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Backlog.AddTask(ctx, in.ID, plan.Task{Title: "Add tags", Priority: "high", Labels: []string{"views"},
			EstimatedLines: 30, Risk: "normal", Reasoning: "low", Summary: "A change.",
			Criteria: []plan.Criterion{{Text: "The tags show"}}, NoFailurePath: "nothing to refuse"}); err != nil {
			t.Fatal(err)
		}
		if err := l.Backlog.Submit(ctx, in.ID); err != nil {
			t.Fatal(err)
		}
		return in.ID
	}
	running, draft = open("notes"), open("todo")
	if err := l.Backlog.BeginRun(ctx, running); err != nil {
		t.Fatal(err)
	}
	return root, running, draft
}

// cliError is what `intervention … --json` prints on a refusal.
func cliError(t *testing.T, out string) (code, message string) {
	t.Helper()
	var e interventionError
	if err := json.Unmarshal([]byte(out), &e); err != nil || e.OK || e.Error.Message == "" {
		t.Fatalf("not a JSON error: %q (%v)", out, err)
	}
	return e.Error.Code, e.Error.Message
}

type submitted struct {
	OK       bool           `json:"ok"`
	Replayed bool           `json:"replayed"`
	Receipt  intent.Receipt `json:"receipt"`
}

type inspected struct {
	OK           bool             `json:"ok"`
	PendingCount int              `json:"pendingCount"`
	Pending      []intent.Receipt `json:"pending"`
}

func TestInterventionSubmitAndInspectFromTheTerminal(t *testing.T) {
	root, id, _ := runningRoot(t)
	n := strconv.FormatInt(id, 10)
	submit := func(args ...string) (int, string, string) {
		return runCLI(t, "", append([]string{"intervention", "submit", "--root", root, "--intent", n, "--json"}, args...)...)
	}

	code, out, errOut := submit("--request-id", "request-123", "--kind", "feedback", "--text", "Keep the partial implementation")
	var first submitted
	if code != 0 || json.Unmarshal([]byte(out), &first) != nil || !first.OK || first.Replayed {
		t.Fatalf("submit: exit %d\n%s%s", code, out, errOut)
	}
	if first.Receipt.ID != "request-123" || first.Receipt.Kind != intent.InterventionFeedback ||
		first.Receipt.Text != "Keep the partial implementation" || first.Receipt.Order <= 0 || !first.Receipt.BoundaryPause {
		t.Fatalf("the receipt: %+v", first.Receipt)
	}
	code, out, _ = submit("--request-id", "request-123", "--kind", "feedback", "--text", "Keep the partial implementation")
	var again submitted
	if code != 0 || json.Unmarshal([]byte(out), &again) != nil || !again.Replayed || again.Receipt.Order != first.Receipt.Order {
		t.Fatalf("an identical retry: exit %d\n%s", code, out)
	}
	code, out, _ = submit("--request-id", "request-123", "--kind", "feedback", "--text", "Something else")
	if c, _ := cliError(t, out); code != 2 || c != "conflict" {
		t.Fatalf("changed text: exit %d code %s", code, c)
	}
	code, out, _ = submit("--request-id", "pause-124", "--kind", "pause")
	var pause submitted
	if code != 0 || json.Unmarshal([]byte(out), &pause) != nil || pause.Receipt.Order <= first.Receipt.Order {
		t.Fatalf("a pause: exit %d\n%s", code, out)
	}

	code, out, _ = runCLI(t, "", "intervention", "inspect", "--root", root, "--intent", n, "--json")
	var ins inspected
	if code != 0 || json.Unmarshal([]byte(out), &ins) != nil || ins.PendingCount != 2 || len(ins.Pending) != 2 ||
		ins.Pending[0].ID != "request-123" || ins.Pending[1].ID != "pause-124" {
		t.Fatalf("inspect: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", "intervention", "inspect", "--root", root, "--intent", n)
	if code != 0 || !strings.Contains(out, "request-123") || !strings.Contains(out, "pause-124") {
		t.Fatalf("inspect as text: exit %d\n%s", code, out)
	}
}

func TestInterventionRefusesBadInputWithJSONAndExit2(t *testing.T) {
	root, id, draft := runningRoot(t)
	n := strconv.FormatInt(id, 10)
	cases := []struct {
		name string
		args []string
		code string
	}{
		{"empty feedback", []string{"--root", root, "--intent", n, "--request-id", "a", "--kind", "feedback", "--text", " "}, "invalid"},
		{"unknown kind", []string{"--root", root, "--intent", n, "--request-id", "b", "--kind", "resume"}, "invalid"},
		{"no request id", []string{"--root", root, "--intent", n, "--kind", "pause"}, "invalid"},
		{"no intent", []string{"--root", root, "--request-id", "c", "--kind", "pause"}, "invalid"},
		{"an intent that is not live", []string{"--root", root, "--intent", strconv.FormatInt(draft, 10), "--request-id", "d", "--kind", "pause"}, "conflict"},
		{"no such intent", []string{"--root", root, "--intent", "99", "--request-id", "e", "--kind", "pause"}, "not_found"},
	}
	for _, c := range cases {
		code, out, _ := runCLI(t, "", append([]string{"intervention", "submit", "--json"}, c.args...)...)
		got, msg := cliError(t, out)
		if code != 2 || got != c.code {
			t.Errorf("%s: exit %d, code %s (%s); want exit 2, %s", c.name, code, got, msg, c.code)
		}
	}
	code, out, _ := runCLI(t, "", "intervention", "inspect", "--root", root, "--intent", n, "--json")
	var ins inspected
	if code != 0 || json.Unmarshal([]byte(out), &ins) != nil || ins.PendingCount != 0 {
		t.Fatalf("refused submissions left receipts: %s", out)
	}

	// A folder with no launcher data is refused, and nothing is created in it.
	empty := filepath.Join(t.TempDir(), "nothing")
	code, out, _ = runCLI(t, "", "intervention", "inspect", "--root", empty, "--intent", "1", "--json")
	if c, _ := cliError(t, out); code != 2 || c != "unavailable" {
		t.Fatalf("no data: exit %d code %s", code, c)
	}
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Fatalf("inspect created %s", empty)
	}
	// An inbox that cannot be read is a JSON error too, never a receipt.
	bad := t.TempDir()
	os.MkdirAll(filepath.Join(bad, "launcher"), 0o700)
	os.WriteFile(filepath.Join(bad, "launcher", "intents.sqlite"), []byte("not a database"), 0o600)
	code, out, _ = runCLI(t, "", "intervention", "submit", "--root", bad, "--intent", "1", "--request-id", "x", "--kind", "pause", "--json")
	if c, _ := cliError(t, out); code != 2 || c != "unavailable" {
		t.Fatalf("a corrupt inbox: exit %d code %s", code, c)
	}
}

func TestInterventionInspectShowsAppliedReceiptsWithWhenTheyWereAppliedAndResumed(t *testing.T) {
	root, id, _ := runningRoot(t)
	n := strconv.FormatInt(id, 10)
	if code, out, _ := runCLI(t, "", "intervention", "submit", "--root", root, "--intent", n, "--request-id", "p-9", "--kind", "pause", "--json"); code != 0 {
		t.Fatalf("submit: exit %d\n%s", code, out)
	}
	// The run's boundary applies it, then the owner's Run continues.
	st, err := open(root)
	if err != nil {
		t.Fatal(err)
	}
	l := st
	ctx := context.Background()
	if _, err := l.Interventions.ApplyInterventions(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := l.Backlog.BeginRun(ctx, id); err != nil {
		t.Fatal(err)
	}
	st.Close()

	code, out, _ := runCLI(t, "", "intervention", "inspect", "--root", root, "--intent", n, "--json")
	var ins struct {
		OK      bool             `json:"ok"`
		Pending []intent.Receipt `json:"pending"`
		Applied []intent.Receipt `json:"applied"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &ins) != nil || len(ins.Pending) != 0 || len(ins.Applied) != 1 ||
		ins.Applied[0].ID != "p-9" || ins.Applied[0].AppliedAt == nil || ins.Applied[0].ResumedAt == nil {
		t.Fatalf("inspect: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", "intervention", "inspect", "--root", root, "--intent", n)
	if code != 0 || !strings.Contains(out, "p-9") || !strings.Contains(out, "RESUMED") {
		t.Fatalf("inspect as text: exit %d\n%s", code, out)
	}
}
