package e2e

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/playwright-community/playwright-go"

	"autoapp/executor/ai/scripted"
)

// TestTheOwnerWithdrawsAnApprovalAndSwitchesTheMode plans a guided
// request in the browser and approves it. Withdraw approval takes it back:
// the page says so and Run is no longer offered until the owner approves
// again. Switching the mode to autonomous voids the approval; switching
// back to guided asks for it again.
func TestTheOwnerWithdrawsAnApprovalAndSwitchesTheMode(t *testing.T) {
	s, model, page := signedInWithModel(t, "engineer")
	guidedTimerPlan(t, s, model, page)

	must(t, page.GetByTestId("approve").Click())
	must(t, expect.Locator(page.GetByTestId("approved")).ToBeVisible())
	must(t, expect.Locator(page.GetByTestId("run")).ToBeVisible())

	// Withdraw approval, behind its inline confirmation.
	must(t, page.GetByTestId("withdraw-approval").Locator("summary").Click())
	must(t, page.GetByTestId("withdraw-approval-confirm").Click())
	must(t, expect.Locator(page.GetByTestId("revoked")).ToHaveText("You withdrew your approval."))
	must(t, expect.Locator(page.GetByTestId("run")).ToHaveCount(0))
	_, err := page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "intent-approval-withdrawn.png")), FullPage: playwright.Bool(true)})
	must(t, err)

	// Approved again, then the mode switched: the approval is void.
	must(t, page.GetByTestId("approve").Click())
	must(t, expect.Locator(page.GetByTestId("approved")).ToBeVisible())
	must(t, expect.Locator(page.GetByTestId("mode")).ToHaveText("guided"))
	must(t, expect.Locator(page.GetByTestId("mode-control")).ToContainText("Switching voids your approval of the plan."))
	_, err = page.GetByTestId("mode-control").Screenshot(playwright.LocatorScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "intent-mode-control.png"))})
	must(t, err)
	must(t, page.GetByTestId("mode-switch").Click())
	must(t, expect.Locator(page.GetByTestId("mode")).ToHaveText("autonomous"))
	must(t, page.GetByTestId("mode-switch").Click())
	must(t, expect.Locator(page.GetByTestId("mode")).ToHaveText("guided"))
	must(t, expect.Locator(page.GetByTestId("not-approved")).ToBeVisible())
	must(t, expect.Locator(page.GetByTestId("run")).ToHaveCount(0))
	_, err = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "intent-mode-switched.png")), FullPage: playwright.Bool(true)})
	must(t, err)
}

// TestAGuidedOwnerChangesTheFailedTasksModelApprovesAndRuns: a guided plan
// is approved and run; its task fails twice. The owner does what the
// advice allows on the page, changes the failed task's model, approves
// that version and presses Run: the task completes and the intent is done,
// with nothing waiting for the engineer to submit again.
func TestAGuidedOwnerChangesTheFailedTasksModelApprovesAndRuns(t *testing.T) {
	s, model, page := signedInWithModel(t, "engineer")
	const slug = "0001-show-the-timer"
	for _, a := range []string{"a1", "a2"} {
		model.On(scripted.RunID("intent-1-"+slug+"-"+a), scripted.Reply{Text: "I could not do it."})
	}
	model.On(scripted.Contains("The task failed. The host's reasons:"),
		scripted.Reply{Text: `{"diagnosis": "The turn wrote nothing.", "advice": "revise", "note": "Say exactly what the page shows."}`})
	example, _ := json.Marshal(map[string]any{"title": "The home page shows 25:00", "steps": []map[string]any{
		{"method": "GET", "path": "/", "expect": map[string]any{"status": 200, "contains": []string{"25:00"}}}}})
	model.On(scripted.RunID("intent-1-"+slug+"-a3"),
		scripted.Reply{ToolCalls: []scripted.Call{call("source_change", map[string]any{"files": []map[string]string{
			{"path": "acceptance/" + slug + "-c1.json", "action": "create", "content": string(example)},
			{"path": "site/index.html", "action": "overwrite", "content": "<!DOCTYPE html><title>Timer</title><h1>A new site</h1><p>25:00</p>\n"}}})}},
		scripted.Reply{ToolCalls: []scripted.Call{call("candidate_cycle", map[string]any{})}},
		scripted.Reply{Text: "The page shows 25:00."})

	guidedTimerPlan(t, s, model, page)
	must(t, page.GetByTestId("approve").Click())
	must(t, page.GetByTestId("run").Locator("summary").Click())
	must(t, page.GetByTestId("run-confirm").Click())
	must(t, expect.Locator(page.GetByTestId("task-"+slug).GetByTestId("status")).ToHaveText("failed", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(60000)}))

	// The owner changes the failed task's model (from the Settings model to
	// one named for the task), and approves that version.
	row := page.GetByTestId("task-" + slug)
	must(t, row.GetByTestId("model-form").Locator("input[name=model]").Fill("scripted:engineer"))
	must(t, row.GetByTestId("model-form").GetByRole("button").Click())
	must(t, expect.Locator(page.GetByTestId("not-approved")).ToBeVisible())
	must(t, page.GetByTestId("approve").Click())
	if err := expect.Locator(page.GetByTestId("approved")).ToBeVisible(); err != nil {
		text, _ := page.Locator("main").TextContent()
		t.Fatalf("the owner's own change was not approved: %v\n%s", err, text)
	}
	must(t, expect.Locator(page.GetByTestId("plan-version")).ToContainText("Plan version 2"))
	must(t, page.GetByTestId("run").Locator("summary").Click())
	must(t, page.GetByTestId("run-confirm").Click())
	if err := expect.Locator(page.GetByTestId("intent-status")).ToContainText("done", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(60000)}); err != nil {
		text, _ := page.Locator("main").TextContent()
		t.Fatalf("the run after the owner's change did not finish: %v\n%s\n%s", err, text, s.out)
	}
	// The delivery names the plan version it was built from: the owner's.
	must(t, expect.Locator(page.GetByTestId("delivered-plan")).ToContainText("Built from plan version 2"))
	must(t, expect.Locator(page.GetByTestId("delivered-plan")).ToContainText("the version you approved."))
	_, err := page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "intent-owner-change-done.png")), FullPage: playwright.Bool(true)})
	must(t, err)
}

// guidedTimerPlan makes the application timer on the Request page and
// sends a guided request there, which the scripted engineer plans as one
// task, 0001-show-the-timer; it leaves the page on the intent.
func guidedTimerPlan(t *testing.T, s *server, model *scripted.Server, page playwright.Page) {
	t.Helper()
	must(t, page.GetByTestId("rail-request").Click())
	must(t, page.GetByLabel("Id").Fill("timer"))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Create the application"}).Click())
	must(t, expect.Page(page).ToHaveURL(s.URL+"/request"))
	model.On(scripted.RunID("chat-timer-1"),
		scripted.Reply{ToolCalls: []scripted.Call{call("intent_open", map[string]any{"restated": "A timer on the home page.", "questions": []string{}})}},
		scripted.Reply{ToolCalls: []scripted.Call{call("intent_task", map[string]any{"title": "Show the timer", "priority": "high",
			"labels": []string{"views"}, "blocked_by": []string{}, "estimated_lines": 20, "locks": []string{}, "risk": "normal",
			"stub": false, "reasoning": "low", "summary": "The home page shows a timer.",
			"criteria": []map[string]any{{"text": "The home page shows 25:00"}}, "no_failure_path": "a static page refuses nothing"})}},
		scripted.Reply{ToolCalls: []scripted.Call{call("intent_submit", map[string]any{})}},
		scripted.Reply{Text: "The plan is in the Backlog. Approve it there, then press Run."})
	must(t, page.GetByLabel("Guided").Check())
	must(t, page.GetByTestId("request-text").Fill("a timer page"))
	must(t, page.GetByTestId("send").Click())
	must(t, expect.Locator(page.GetByTestId("conversation")).ToContainText("The plan is in the Backlog", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))
	must(t, page.GetByTestId("open-intent").Click())
}
