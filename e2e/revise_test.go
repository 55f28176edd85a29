package e2e

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"

	"autoapp/executor/ai/scripted"
)

// TestARevisedGuidedTaskIsApprovedAgainAndRuns: a guided request's plan is
// approved and run; its task fails twice; the person asks the engineer to
// revise it; the engineer rewrites the task and submits the plan again; the
// person approves the revised plan, and Run completes it.
func TestARevisedGuidedTaskIsApprovedAgainAndRuns(t *testing.T) {
	s, model, page := signedInWithModel(t, "engineer")
	must(t, page.GetByTestId("rail-request").Click())
	must(t, page.GetByLabel("Id").Fill("timer"))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Create the application"}).Click())
	must(t, expect.Page(page).ToHaveURL(s.URL+"/request"))

	const slug = "0001-show-the-timer"
	taskArgs := func(summary, criterion string) map[string]any {
		return map[string]any{"title": "Show the timer", "priority": "high", "labels": []string{"views"}, "blocked_by": []string{},
			"estimated_lines": 20, "locks": []string{}, "risk": "normal", "stub": false, "reasoning": "low", "summary": summary,
			"criteria": []map[string]any{{"text": criterion}}, "no_failure_path": "a static page refuses nothing"}
	}
	model.On(scripted.RunID("chat-timer-1"),
		scripted.Reply{ToolCalls: []scripted.Call{call("intent_open", map[string]any{"restated": "A timer on the home page.", "questions": []string{}})}},
		scripted.Reply{ToolCalls: []scripted.Call{call("intent_task", taskArgs("The home page shows a timer.", "The home page shows 25:00"))}},
		scripted.Reply{ToolCalls: []scripted.Call{call("intent_submit", map[string]any{})}},
		scripted.Reply{Text: "The plan is in the Backlog. Approve it there, then press Run."})
	// Both attempts of the first run write nothing: the task fails.
	for _, a := range []string{"a1", "a2"} {
		model.On(scripted.RunID("intent-1-"+slug+"-"+a), scripted.Reply{Text: "I could not do it."})
	}
	model.On(scripted.Contains("The task failed. The host's reasons:"),
		scripted.Reply{Text: `{"diagnosis": "The turn wrote nothing.", "advice": "revise", "note": "Say exactly what the page shows."}`})

	must(t, page.GetByLabel("Guided").Check())
	must(t, page.GetByTestId("request-text").Fill("a timer page"))
	must(t, page.GetByTestId("send").Click())
	must(t, expect.Locator(page.GetByTestId("conversation")).ToContainText("The plan is in the Backlog", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))
	must(t, page.GetByTestId("open-intent").Click())
	intentURL := page.URL()
	must(t, page.GetByTestId("approve").Click())
	must(t, expect.Locator(page.GetByTestId("approved")).ToBeVisible())
	must(t, page.GetByTestId("run").Locator("summary").Click())
	must(t, page.GetByTestId("run-confirm").Click())
	must(t, expect.Locator(page.GetByTestId("task-"+slug).GetByTestId("status")).ToHaveText("failed", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(60000)}))

	// The person asks for a revision; the engineer rewrites the task and submits again.
	example, _ := json.Marshal(map[string]any{"title": "The home page shows 25:00", "steps": []map[string]any{
		{"method": "GET", "path": "/", "expect": map[string]any{"status": 200, "contains": []string{"25:00"}}}}})
	model.On(scripted.RunID("chat-timer-2"),
		scripted.Reply{ToolCalls: []scripted.Call{call("intent_task", func() map[string]any {
			a := taskArgs("The home page shows 25:00 under its heading.", "The home page shows 25:00")
			a["replaces"] = slug
			return a
		}())}},
		scripted.Reply{ToolCalls: []scripted.Call{call("intent_submit", map[string]any{})}},
		scripted.Reply{Text: "I rewrote the task; the revised plan is in the Backlog for your approval."})
	// The revised task's attempt: whatever the run ids so far, it is the
	// one that builds the task now.
	model.On(scripted.Contains("Build this one task, "+slug),
		scripted.Reply{ToolCalls: []scripted.Call{call("source_change", map[string]any{"files": []map[string]string{
			{"path": "acceptance/" + slug + "-c1.json", "action": "create", "content": string(example)},
			{"path": "site/index.html", "action": "overwrite", "content": "<!DOCTYPE html><title>Timer</title><h1>A new site</h1><p>25:00</p>\n"}}})}},
		scripted.Reply{ToolCalls: []scripted.Call{call("candidate_cycle", map[string]any{})}},
		scripted.Reply{Text: "The page shows 25:00."})
	// The failed task offers to ask the engineer; the Request page opens
	// with the task named and the message begun.
	must(t, page.GetByTestId("needs-"+slug).GetByTestId("ask-revise").Click())
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/request\?revise=`)))
	must(t, expect.Locator(page.GetByTestId("revising")).ToContainText(slug))
	must(t, expect.Locator(page.GetByTestId("request-text")).ToHaveValue(regexp.MustCompile("^Please revise "+slug)))
	must(t, page.GetByTestId("request-text").PressSequentially("the page should just show 25:00."))
	must(t, page.GetByTestId("send").Click())
	must(t, expect.Locator(page.GetByTestId("conversation")).ToContainText("the revised plan is in the Backlog", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))

	// The revised plan is approved, and Run completes it.
	_, err := page.Goto(intentURL)
	must(t, err)
	must(t, expect.Locator(page.GetByTestId("task-"+slug).GetByTestId("status")).ToHaveText("proposed"))
	must(t, expect.Locator(page.GetByTestId("not-approved")).ToBeVisible())
	must(t, page.GetByTestId("approve").Click())
	if err := expect.Locator(page.GetByTestId("approved")).ToBeVisible(); err != nil {
		text, _ := page.Locator("main").TextContent()
		t.Fatalf("the revised plan was not approved: %v\n%s\n%s", err, text, s.out)
	}
	must(t, page.GetByTestId("run").Locator("summary").Click())
	must(t, page.GetByTestId("run-confirm").Click())
	if err := expect.Locator(page.GetByTestId("intent-status")).ToContainText("done", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(60000)}); err != nil {
		text, _ := page.Locator("main").TextContent()
		t.Fatalf("the revised run did not finish: %v\n%s", err, text)
	}
	must(t, expect.Locator(page.GetByTestId("task-"+slug).GetByTestId("status")).ToHaveText("completed"))
	var runs []string
	for _, r := range model.Requests() {
		if id := r.Header.Get(scripted.RunHeader); len(id) > 9 && id[:9] == "intent-1-" && (len(runs) == 0 || runs[len(runs)-1] != id) {
			runs = append(runs, id)
		}
	}
	if want := []string{"intent-1-" + slug + "-a1", "intent-1-" + slug + "-a2", "intent-1-" + slug + "-a3"}; len(runs) != 3 || runs[2] != want[2] {
		t.Errorf("the builder turns ran as %q, want %q: the revised task's attempt is its third", runs, want)
	}
}
