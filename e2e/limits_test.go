package e2e

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"autoapp/executor/ai/scripted"
	"autoapp/intent/plan"
)

// TestASlowModelStreamsWithinTheLimitsSetInSettings sets the limits in
// Settings, then runs a task whose model is slow to start and slow to
// write, as a local model is, behind a provider that first asks to wait:
// the task in hand says the provider asked to wait, then that it waits for
// the first token, then how many tokens have streamed, with the limits in
// force, and the task completes.
func TestASlowModelStreamsWithinTheLimitsSetInSettings(t *testing.T) {
	s, model, page := signedInWithModel(t, "builder")

	_, err := page.Goto(s.URL + "/settings")
	must(t, err)
	limits := page.GetByTestId("limits")
	must(t, limits.GetByLabel("Minutes without a tool call").Fill("0.5"))
	must(t, limits.GetByLabel("Minutes a turn").Fill("5"))
	must(t, limits.GetByTestId("save-limits").Click())
	must(t, expect.Locator(page.GetByLabel("Minutes without a tool call")).ToHaveValue("0.5"))
	_, err = page.Locator("#limits").Screenshot(playwright.LocatorScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "settings-limits.png"))})
	must(t, err)

	in := planFor(t, s, "Greet notes readers.", plan.Task{Title: "Change the heading", Priority: "high", Labels: []string{"copy"},
		EstimatedLines: 5, Risk: "normal", Reasoning: "low", Summary: "The home page greets notes readers.",
		Criteria: []plan.Criterion{{Text: "The home page says Hello notes"}}, NoFailurePath: "a static page refuses nothing",
		Runbook: []string{"Open the home page and read the heading."}})
	run := "intent-" + strconv.FormatInt(in.ID, 10) + "-0001-change-the-heading-a1"
	// The first step reads for 3 s, then writes its long call a piece every 120 ms.
	page1 := "<!DOCTYPE html>\n<title>Notes</title>\n<h1>A new site</h1>\n<p class=\"greeting\">Hello notes</p>\n" + strings.Repeat("<!-- padding -->\n", 20)
	model.On(scripted.RunID(run),
		// The provider first asks to wait, as a rate-limited one does.
		scripted.Reply{Fault: scripted.Status429, RetryAfter: "4"},
		scripted.Reply{ToolCalls: []scripted.Call{change("acceptance/0001-change-the-heading-c1.json",
			example("The home page says Hello notes", "/", "Hello notes")), overwrite("site/index.html", page1)},
			FirstToken: 3 * time.Second, Every: 120 * time.Millisecond, Usage: scripted.Usage{Input: 2000, Output: 400}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "The heading says Hello notes."})
	runFromPage(t, page, s, in.ID)

	progress := page.GetByTestId("model-progress")
	must(t, expect.Locator(progress).ToHaveText("The provider asked to wait 4 s (rate limit)."))
	must(t, expect.Locator(progress).ToContainText("Waiting for the model's first token"))
	must(t, expect.Locator(progress).ToContainText("The model is writing:", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(15000)}))
	must(t, expect.Locator(progress).ToContainText("tokens so far in this step"))
	must(t, expect.Locator(page.GetByTestId("limits-in-force")).ToContainText("no tool call for 30 s, 5 min a turn"))
	_, err = page.GetByTestId("progress").Screenshot(playwright.LocatorScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "progress-streaming.png"))})
	must(t, err)

	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("done", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(60000)}))
	for _, r := range model.Requests() {
		if r.Path == "/v1/chat/completions" && !r.Stream {
			t.Errorf("a request did not stream: %s", r.Body)
		}
	}
}
