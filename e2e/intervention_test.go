package e2e

import (
	"encoding/json"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"autoapp/executor/ai/scripted"
	"autoapp/intent/plan"
)

// held is a scripted reply's Before that waits until release is called, or
// the test ends: a failing test never leaves the model's request hanging.
func held(t *testing.T) (hold, release func()) {
	ch := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	t.Cleanup(release)
	return func() { <-ch }, release
}

// TestPauseARunningIntentFromItsPage pauses a running two-task intent while
// the first task's turn is in flight: the turn runs to its verdict, the
// intent stops after that task with "Paused by the person.", the second
// task waits untouched, and Run again finishes it.
func TestPauseARunningIntentFromItsPage(t *testing.T) {
	s, model, page := signedInWithModel(t, "builder")
	in := twoTaskPlan(t, s)

	hold, release := held(t)
	run1 := "intent-" + strconv.FormatInt(in.ID, 10) + "-0001-change-the-heading-a1"
	run2 := "intent-" + strconv.FormatInt(in.ID, 10) + "-0002-add-an-about-page-a1"
	model.On(scripted.RunID(run1),
		scripted.Reply{ToolCalls: []scripted.Call{change("acceptance/0001-change-the-heading-c1.json",
			example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{Before: hold, ToolCalls: []scripted.Call{edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p>Hello notes</p>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})

	runFromPage(t, page, s, in.ID)
	must(t, expect.Locator(page.GetByTestId("last-tool")).ToHaveText("source.change"))

	// What is typed in the feedback box survives the live part's refresh.
	must(t, page.GetByTestId("feedback-text").Fill("A draft of feedback"))
	for range 2 {
		_, err := page.ExpectResponse("**/live", func() error { return nil })
		must(t, err)
	}
	must(t, expect.Locator(page.GetByTestId("feedback-text")).ToHaveValue("A draft of feedback"))

	// The pause is queued while the model call is in flight: the run goes on.
	must(t, page.GetByTestId("pause").Click())
	must(t, expect.Locator(page.GetByTestId("intervention-pending")).ToBeVisible())
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("running"))
	must(t, expect.Locator(page.GetByTestId("progress")).ToContainText("0001-change-the-heading"))
	release()

	// After the first task's verdict the run stops, paused.
	long := playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(60000)}
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("stopped", long))
	must(t, expect.Locator(page.GetByTestId("stop-reason")).ToHaveText("Paused by the person."))
	must(t, expect.Locator(page.GetByTestId("intervention-applied")).ToBeVisible())
	must(t, expect.Locator(page.GetByTestId("intervene")).ToHaveCount(0))
	must(t, expect.Locator(page.GetByTestId("task-0001-change-the-heading").GetByTestId("status")).ToHaveText("completed"))
	must(t, expect.Locator(page.GetByTestId("task-0002-add-an-about-page").GetByTestId("status")).ToHaveText("in-queue"))
	for _, r := range model.Requests() {
		if r.Header.Get(scripted.RunHeader) == run2 {
			t.Fatal("the paused run started the second task")
		}
	}

	// Run again: the second task runs and the intent is done.
	model.On(scripted.RunID(run2),
		scripted.Reply{ToolCalls: []scripted.Call{
			change("acceptance/0002-add-an-about-page-c1.json", example("The about page says About notes", "/about.html", "About notes")),
			change("site/about.html", "<!DOCTYPE html><title>About</title><h1>About notes</h1>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	_, err := page.Reload()
	must(t, err)
	must(t, page.GetByTestId("run").Locator("summary").Click())
	must(t, page.GetByTestId("run-confirm").Click())
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("done", long))
	must(t, expect.Locator(page.GetByTestId("task-0002-add-an-about-page").GetByTestId("status")).ToHaveText("completed"))
}

// TestEmptyFeedbackIsRefusedInThePage sends empty feedback to a running
// intent: the page answers with a sentence and no receipt is written.
func TestEmptyFeedbackIsRefusedInThePage(t *testing.T) {
	s, model, page := signedInWithModel(t, "builder")
	in := twoTaskPlan(t, s)
	hold, _ := held(t)
	run1 := "intent-" + strconv.FormatInt(in.ID, 10) + "-0001-change-the-heading-a1"
	model.On(scripted.RunID(run1), scripted.Reply{Before: hold, Text: "Nothing."})
	runFromPage(t, page, s, in.ID)
	must(t, expect.Locator(page.GetByTestId("progress")).ToBeVisible())
	must(t, page.GetByTestId("feedback-send").Click())
	must(t, expect.Locator(page.GetByTestId("intervene")).ToContainText("Write the feedback first: it cannot be empty."))
	must(t, expect.Locator(page.GetByTestId("interventions")).ToHaveCount(0))
	// Stop the run while its turn is held: the model is asked nothing more.
	must(t, page.GetByTestId("stop").Locator("summary").Click())
	must(t, page.GetByTestId("stop-confirm").Click())
	must(t, expect.Locator(page.GetByTestId("stop-reason")).ToHaveText("Stopped by the person."))
}

// TestFeedbackFromTheTerminalIsAppliedOnceAfterAKill queues feedback with
// the real `autoapp intervention submit` while a turn is in flight, kills
// the launcher before any boundary, and starts it again: recovery applies
// the feedback once, keeping the stop it found, and nothing stays pending.
func TestFeedbackFromTheTerminalIsAppliedOnceAfterAKill(t *testing.T) {
	root := t.TempDir()
	model := scripted.New(t)
	model.Models("builder")
	first := startServerAt(t, root)
	page := newPage(t)
	createOwner(t, page, first)
	connectModel(t, page, first, model, "scripted:builder")
	in := planFor(t, first, "Greet notes readers.", plan.Task{Title: "Change the heading", Priority: "high", Labels: []string{"copy"},
		EstimatedLines: 5, Risk: "normal", Reasoning: "low", Summary: "A greeting.",
		Criteria: []plan.Criterion{{Text: "The home page says Hello notes"}}, NoFailurePath: "a static page refuses nothing"})
	id := strconv.FormatInt(in.ID, 10)

	inTurn := make(chan struct{})
	hold, _ := held(t)
	model.On(scripted.RunID("intent-"+id+"-0001-change-the-heading-a1"),
		scripted.Reply{ToolCalls: []scripted.Call{{Name: "spec_read", Args: `{}`}}},
		scripted.Reply{Before: func() { close(inTurn); hold() }, Text: "never seen"})
	runFromPage(t, page, first, in.ID)
	select {
	case <-inTurn:
	case <-time.After(30 * time.Second):
		t.Fatal("the builder's turn did not start")
	}

	cli := func(args ...string) (map[string]any, int) {
		t.Helper()
		cmd := exec.Command(binary, append([]string{"intervention"}, args...)...)
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("autoapp intervention %v printed no JSON: %q", args, out)
		}
		return m, code
	}
	submit := []string{"submit", "--root", root, "--intent", id, "--request-id", "f-1", "--kind", "feedback", "--text", "Say hello to readers by name.", "--json"}
	sent, code := cli(submit...)
	if code != 0 || sent["ok"] != true {
		t.Fatalf("submit: exit %d %v", code, sent)
	}
	if m, _ := cli("inspect", "--root", root, "--intent", id, "--json"); m["pendingCount"] != float64(1) {
		t.Fatalf("inspect while the turn runs: %v", m)
	}

	_, err := page.Goto("about:blank")
	must(t, err)
	first.kill(t)
	second := startServerAt(t, root)

	if m, _ := cli("inspect", "--root", root, "--intent", id, "--json"); m["pendingCount"] != float64(0) {
		t.Fatalf("inspect after the restart: %v", m)
	}
	// A retry of the same submission answers the first receipt, applied or not.
	again, code := cli(submit...)
	if code != 0 || again["replayed"] != true || again["receipt"].(map[string]any)["order"] != sent["receipt"].(map[string]any)["order"] {
		t.Fatalf("a retry after the restart: exit %d %v", code, again)
	}
	_, err = page.Goto(second.URL + "/backlog/intents/" + id)
	must(t, err)
	must(t, expect.Locator(page.GetByTestId("stop-reason")).ToHaveText("The launcher stopped."))
	must(t, expect.Locator(page.GetByTestId("intervention")).ToHaveCount(1))
	must(t, expect.Locator(page.GetByTestId("intervention")).ToContainText("kept its stop: The launcher stopped."))
	must(t, expect.Locator(page.GetByTestId("intervention-applied")).ToBeVisible())
}
