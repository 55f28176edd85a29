package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/playwright-community/playwright-go"

	"autoapp/executor/ai/scripted"
	"autoapp/intent"
	"autoapp/intent/plan"
)

// TestThePagesWorkOnAPhone: at 390 by 844 px the rail is a bar across the
// top whose Menu opens and leads to a page, the page takes the whole width,
// a board card's failure shows its first sentence with a link to the rest,
// a wide table scrolls sideways in its own box while the page does not, and
// a confirmation and an answer are big enough for a thumb. Screenshots of
// the board, a failed intent and a builder's question waiting for its
// answer are kept (phone-*.png).
func TestThePagesWorkOnAPhone(t *testing.T) {
	s, model, page := signedInWithModel(t, "builder")

	// A task that fails, as the accessibility test's second task does.
	failing := planFor(t, s, "Add an about page.", plan.Task{Title: "Add an about page", Priority: "medium", Labels: []string{"views"},
		EstimatedLines: 10, Risk: "normal", Reasoning: "low", Summary: "An about page.", Criteria: []plan.Criterion{{Text: "The about page says About notes"}},
		NoFailurePath: "a static page refuses nothing", Runbook: []string{"Open /about.html."}})
	model.On(scripted.RunID("intent-"+strconv.FormatInt(failing.ID, 10)+"-0001-add-an-about-page-a1"),
		scripted.Reply{Text: "Nothing to do."}, scripted.Reply{Text: "Still nothing."})
	model.Always(scripted.Contains("The task failed. The host's reasons:"),
		scripted.Reply{Text: `{"diagnosis": "The turn wrote nothing.", "advice": "revise", "note": "Say what the page shows."}`})
	runFromPage(t, page, s, failing.ID)
	long := playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(60000)}
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("stopped", long))

	// Another intent whose builder asks a question.
	asking := openAndSubmit(t, s, "Greet notes readers.", plan.Task{Title: "Change the heading", Priority: "high", Labels: []string{"copy"},
		EstimatedLines: 5, Risk: "normal", Reasoning: "low", Summary: "The home page greets notes readers.",
		Criteria: []plan.Criterion{{Text: "The home page says Hello notes"}}, NoFailurePath: "a static page refuses nothing"})
	question, _ := json.Marshal(map[string]string{"question": "Should the greeting be bold, or in the notes' own colour? The heading is plain today."})
	model.On(scripted.RunID("intent-"+strconv.FormatInt(asking.ID, 10)+"-0002-change-the-heading-a1"),
		scripted.Reply{ToolCalls: []scripted.Call{{Name: "intent_ask", Args: string(question)}}})
	runFromPage(t, page, s, asking.ID)
	must(t, expect.Locator(page.GetByTestId("task-question")).ToContainText("Should the greeting be bold", long))

	// At a desktop's width the card says its whole failure.
	_, err := page.Goto(s.URL + "/board")
	must(t, err)
	card := page.GetByTestId("column-waiting").GetByTestId("card-0001-add-an-about-page")
	inner := playwright.LocatorAssertionsToContainTextOptions{UseInnerText: playwright.Bool(true)}
	must(t, expect.Locator(card.GetByTestId("card-why")).ToContainText("The workspace did not change", inner))
	must(t, expect.Locator(card.GetByTestId("card-why-more")).ToBeHidden())
	must(t, expect.Locator(page.GetByTestId("rail-menu-toggle")).ToBeHidden())
	must(t, expect.Locator(page.GetByTestId("rail-board")).ToBeVisible())

	must(t, page.SetViewportSize(390, 844))
	_, err = page.Goto(s.URL + "/board")
	must(t, err)

	// The rail is a bar across the top, and the page has the width.
	rail := box(t, page.GetByTestId("rail"))
	if rail.Width < 380 || rail.Height > 80 {
		t.Errorf("at 390 px the rail is %.0f by %.0f px, not a bar across the top", rail.Width, rail.Height)
	}
	if main := box(t, page.Locator("main")); main.Width <= 350 || main.Y < rail.Y+rail.Height {
		t.Errorf("at 390 px the page is %.0f px wide at y %.0f, beside or under the rail rather than below it", main.Width, main.Y)
	}
	notSideways(t, page, "the board", 390)

	// The card: the failure's first sentence, and a link to the rest.
	why := card.GetByTestId("card-why")
	must(t, expect.Locator(why).ToContainText("failed: 2 attempts in this run did not complete the task.", inner))
	must(t, expect.Locator(why).Not().ToContainText("The workspace did not change", inner))
	more := card.GetByTestId("card-why-more")
	must(t, expect.Locator(more).ToBeVisible())
	_, err = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "phone-board.png")), FullPage: playwright.Bool(true)})
	must(t, err)
	must(t, more.Click())
	must(t, expect.Locator(page.Locator("main")).ToContainText("The workspace did not change since the task began."))

	// Menu opens the rail's pages; a page's link leads there.
	must(t, expect.Locator(page.GetByTestId("rail-knowledge")).ToBeHidden())
	toggle := page.GetByTestId("rail-menu-toggle")
	must(t, expect.Locator(toggle).ToBeVisible())
	if h := box(t, toggle).Height; h < 44 {
		t.Errorf("Menu is %.0f px high, less than a thumb's 44", h)
	}
	must(t, toggle.Click())
	must(t, expect.Locator(page.GetByTestId("rail-knowledge")).ToBeVisible())
	must(t, expect.Locator(page.GetByTestId("sign-out")).ToBeVisible())
	_, err = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "phone-menu.png"))})
	must(t, err)
	must(t, page.GetByTestId("rail-knowledge").Click())
	must(t, expect.Locator(page.GetByRole("heading", playwright.PageGetByRoleOptions{Level: playwright.Int(1)})).ToHaveText("Knowledge"))
	must(t, expect.Locator(page.GetByTestId("rail-knowledge")).ToBeHidden())

	// The log's table scrolls sideways in its box; the page does not.
	logBox := page.GetByTestId("scroll").Filter(playwright.LocatorFilterOptions{Has: page.GetByTestId("log")})
	wider, err := logBox.Evaluate(`e => e.scrollWidth - e.clientWidth`, nil)
	must(t, err)
	if n, _ := wider.(int); n <= 0 {
		t.Errorf("the log's table does not scroll sideways in its box at 390 px (%v px wider)", wider)
	}
	notSideways(t, page, "the log", 390)
	must(t, expect.Locator(logBox).ToHaveAttribute("tabindex", "0"))
	must(t, expect.Locator(logBox).ToHaveAttribute("aria-label", "Log"))

	// The failed intent: its tasks' table scrolls in its box too.
	_, err = page.Goto(s.URL + "/backlog/intents/" + strconv.FormatInt(failing.ID, 10))
	must(t, err)
	notSideways(t, page, "the failed intent", 390)
	must(t, expect.Locator(page.GetByTestId("needs-0001-add-an-about-page")).ToContainText("The workspace did not change"))
	_, err = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "phone-intent.png")), FullPage: playwright.Bool(true)})
	must(t, err)
	run := page.GetByTestId("run").Locator("summary")
	if h := box(t, run).Height; h < 44 {
		t.Errorf("Run is %.0f px high, less than a thumb's 44", h)
	}
	must(t, run.Click())
	confirm := page.GetByTestId("run-confirm")
	must(t, expect.Locator(confirm).ToBeVisible())
	if b := box(t, confirm); b.Height < 44 || b.Width < 44 {
		t.Errorf("Yes, run it is %.0f by %.0f px, less than a thumb's 44", b.Width, b.Height)
	}
	_, err = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "phone-intent-run-confirm.png"))})
	must(t, err)

	// The question waits with its answer box, and is answered from the phone.
	_, err = page.Goto(s.URL + "/backlog/intents/" + strconv.FormatInt(asking.ID, 10))
	must(t, err)
	notSideways(t, page, "the question", 390)
	must(t, expect.Locator(page.GetByTestId("task-question")).ToContainText("The heading is plain today."))
	form := page.GetByTestId("answer-form")
	if b := box(t, form.GetByRole("button")); b.Height < 44 {
		t.Errorf("the answer's button is %.0f px high, less than a thumb's 44", b.Height)
	}
	if b := box(t, form.Locator("textarea")); b.Width < 300 {
		t.Errorf("the answer's box is %.0f px wide at 390 px", b.Width)
	}
	_, err = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "phone-question.png")), FullPage: playwright.Bool(true)})
	must(t, err)
	must(t, form.Locator("textarea").Fill("Bold, please."))
	must(t, form.GetByRole("button").Click())
	must(t, expect.Locator(page.GetByTestId("run")).ToBeVisible())
}

// box is the element's bounding box, failing the test when it has none.
func box(t *testing.T, l playwright.Locator) *playwright.Rect {
	t.Helper()
	b, err := l.BoundingBox()
	must(t, err)
	if b == nil {
		t.Fatal("the element is not shown")
	}
	return b
}

// openAndSubmit opens and submits another intent of the site application
// planFor made, with the tasks, written through the service as the
// engineer would.
func openAndSubmit(t *testing.T, s *server, request string, tasks ...plan.Task) intent.Intent {
	t.Helper()
	ctx := context.Background()
	backlog := boot(t, s.Root).Backlog
	in, err := backlog.OpenDraft(ctx, "site", request, intent.Analysis{Restated: []string{request}})
	must(t, err)
	for _, p := range tasks {
		_, err := backlog.AddTask(ctx, in.ID, p)
		must(t, err)
	}
	must(t, backlog.Submit(ctx, in.ID))
	return in
}
