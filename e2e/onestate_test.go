package e2e

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/playwright-community/playwright-go"

	"autoapp/executor/ai/scripted"
	"autoapp/intent/plan"
)

// seen is what a person sees of a page: the text of its main part and
// the controls and marks it shows, by test id.
func seen(t *testing.T, page playwright.Page) string {
	t.Helper()
	v, err := page.Evaluate(`() => {
		const m = document.querySelector('main');
		const ids = [...m.querySelectorAll('[data-testid]')]
			.filter(e => e.getClientRects().length > 0)
			.map(e => e.dataset.testid).filter(id => id !== 'intent-live').sort();
		return m.innerText + '\n-- controls: ' + ids.join(' ');
	}`)
	must(t, err)
	return v.(string)
}

// sameAsAFreshLoad checks the page, as its live part left it, against a
// fresh load of the same address in another tab.
func sameAsAFreshLoad(t *testing.T, page playwright.Page, step string) {
	t.Helper()
	live := seen(t, page)
	fresh, err := page.Context().NewPage()
	must(t, err)
	defer fresh.Close()
	_, err = fresh.Goto(page.URL())
	must(t, err)
	if loaded := seen(t, fresh); loaded != live {
		t.Fatalf("%s: the live page differs from a fresh load of it.\nlive:\n%s\n\nfresh:\n%s", step, live, loaded)
	}
}

// TestTheIntentPageIsOneState: a task asks the person a question, is
// answered, and completes; after each transition the page as its live
// refresh left it is the page a fresh load shows.
func TestTheIntentPageIsOneState(t *testing.T) {
	s, model, page := signedInWithModel(t, "builder")
	in := planFor(t, s, "Greet notes readers.", plan.Task{Title: "Change the heading", Priority: "high", Labels: []string{"copy"},
		EstimatedLines: 5, Risk: "normal", Reasoning: "low", Summary: "The home page greets notes readers.",
		Criteria: []plan.Criterion{{Text: "The home page says Hello notes"}}, NoFailurePath: "a static page refuses nothing"})
	slug := "0001-change-the-heading"
	run := func(n int) string {
		return "intent-" + strconv.FormatInt(in.ID, 10) + "-" + slug + "-a" + strconv.Itoa(n)
	}
	question, _ := json.Marshal(map[string]string{"question": "Should the greeting be bold?"})
	release := make(chan struct{})
	model.On(scripted.RunID(run(1)), scripted.Reply{ToolCalls: []scripted.Call{{Name: "intent_ask", Args: string(question)}}, Before: func() { <-release }})
	model.On(scripted.RunID(run(2)),
		scripted.Reply{ToolCalls: []scripted.Call{change("acceptance/"+slug+"-c1.json", example("The home page says Hello notes", "/", "Hello notes")),
			edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p><b>Hello notes</b></p>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})

	_, err := page.Goto(s.URL + "/backlog/intents/" + strconv.FormatInt(in.ID, 10))
	must(t, err)
	sameAsAFreshLoad(t, page, "submitted")

	// Run; the turn asks, and the page follows it to the question.
	must(t, page.GetByTestId("run").Locator("summary").Click())
	must(t, page.GetByTestId("run-confirm").Click())
	must(t, expect.Locator(page.GetByTestId("intent-live")).ToHaveAttribute("data-polling", "true"))
	close(release)
	long := playwright.LocatorAssertionsToHaveAttributeOptions{Timeout: playwright.Float(60000)}
	must(t, expect.Locator(page.GetByTestId("intent-live")).ToHaveAttribute("data-polling", "false", long))
	must(t, expect.Locator(page.GetByTestId("task-question")).ToContainText("Should the greeting be bold?"))
	sameAsAFreshLoad(t, page, "asked")

	// Answered: the task is queued again and the intent can run.
	must(t, page.GetByTestId("answer-form").Locator("textarea").Fill("Yes, bold."))
	must(t, page.GetByTestId("answer-form").GetByRole("button").Click())
	must(t, expect.Locator(page.GetByTestId("run")).ToBeVisible())
	sameAsAFreshLoad(t, page, "answered")

	// Run again: it completes and the page shows it done, delivered.
	must(t, page.GetByTestId("run").Locator("summary").Click())
	must(t, page.GetByTestId("run-confirm").Click())
	must(t, expect.Locator(page.GetByTestId("intent-live")).ToHaveAttribute("data-polling", "false", long))
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("done"))
	sameAsAFreshLoad(t, page, "done")
}
