package e2e

import (
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
