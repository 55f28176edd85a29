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

// TestAnIntentStoppedAtItsCapGoesOnOnceRaised sets a cap in tokens on an
// intent's page before Run (the scripted model is unpriced, as a local one
// is); its turn is cut where the cap falls, the intent stops with the
// cap's sentence and "What needs you" lists it; the cap raised on the
// page, Run finishes it.
func TestAnIntentStoppedAtItsCapGoesOnOnceRaised(t *testing.T) {
	s, model, page := signedInWithModel(t, "builder")
	in := planFor(t, s, "Greet notes readers.", plan.Task{Title: "Change the heading", Priority: "high", Labels: []string{"copy"}, EstimatedLines: 5,
		Risk: "normal", Reasoning: "low", Summary: "The home page greets notes readers.",
		Criteria:      []plan.Criterion{{Text: "The home page says Hello notes"}},
		NoFailurePath: "a static page refuses nothing", Runbook: []string{"Read the heading."}})
	const slug = "0001-change-the-heading"
	id := strconv.FormatInt(in.ID, 10)
	first := "intent-" + id + "-" + slug + "-a1"
	model.On(scripted.RunID(first),
		scripted.Reply{ToolCalls: []scripted.Call{change("acceptance/"+slug+"-c1.json", example("The home page says Hello notes", "/", "Hello notes"))},
			Usage: scripted.Usage{Input: 30_000, Output: 100}},
		scripted.Reply{Text: strings.Repeat("and more ", 20_000), Every: 50 * time.Microsecond, Usage: scripted.Usage{Input: 31_000, Output: 40_000}},
		scripted.Reply{Text: "never asked"})

	_, err := page.Goto(s.URL + "/backlog/intents/" + id)
	must(t, err)
	capCard := page.GetByTestId("cap")
	must(t, expect.Locator(capCard.GetByTestId("cap-line")).ToHaveText("No cap: nothing but you stops what this intent spends."))
	must(t, capCard.GetByLabel("Tokens").Fill("50,000"))
	must(t, capCard.GetByTestId("cap-save").Click())
	must(t, expect.Locator(page.GetByTestId("cap").GetByTestId("cap-line")).ToHaveText("Spent of its cap: 0 of 50,000 tokens"))

	must(t, page.GetByTestId("run").Locator("summary").Click())
	must(t, page.GetByTestId("run-confirm").Click())
	stopped := page.GetByTestId("stop-reason")
	must(t, expect.Locator(stopped).ToContainText("Intent #"+id+" reached its cap of 50,000 tokens (spent ", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(60000)}))
	must(t, expect.Locator(stopped).ToContainText("Raise the cap to go on, or leave it stopped."))
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("stopped"))
	must(t, expect.Locator(page.GetByTestId("task-"+slug)).ToHaveAttribute("data-status", "interrupted"))
	must(t, expect.Locator(page.GetByTestId("needs-"+slug).GetByTestId("capped-hint")).ToHaveText("Raise the cap, then Run to go on from this task."))
	_, err = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "intent-stopped-at-its-cap.png")), FullPage: playwright.Bool(true)})
	must(t, err)
	asked := 0
	for _, r := range model.Requests() {
		if r.Header.Get(scripted.RunHeader) == first {
			asked++
		}
	}
	if asked != 2 {
		t.Fatalf("the model was asked %d times for the turn, want the second request cut and no third", asked)
	}

	// What needs you says so and leads to the cap.
	must(t, page.GetByTestId("rail-backlog").Click())
	need := page.GetByTestId("overview").GetByTestId("need-cap")
	must(t, expect.Locator(need).ToContainText("site: intent #"+id+" stopped at a cap."))
	must(t, need.GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "Raise the cap"}).Click())

	model.On(scripted.RunID("intent-"+id+"-"+slug+"-a2"),
		scripted.Reply{ToolCalls: []scripted.Call{change("acceptance/"+slug+"-c1.json", example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p>Hello notes</p>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "The heading says Hello notes."})
	capCard = page.GetByTestId("cap")
	must(t, capCard.GetByLabel("Tokens").Fill("500,000"))
	must(t, capCard.GetByTestId("cap-save").Click())
	must(t, page.GetByTestId("run").Locator("summary").Click())
	must(t, page.GetByTestId("run-confirm").Click())
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("done", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(60000)}))
}
