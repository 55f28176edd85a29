package e2e

import (
	"strconv"
	"testing"

	"github.com/playwright-community/playwright-go"

	"autoapp/executor/ai/scripted"
)

// TestTheBoardFollowsARunWithoutAReload: while the first task's turn waits,
// its card is in progress and the second, blocked by it, is queued; when
// the run goes on, both cards move to completed on the same page, with
// their criteria passing.
func TestTheBoardFollowsARunWithoutAReload(t *testing.T) {
	s, model, page := signedInWithModel(t, "builder")
	in := twoTaskPlan(t, s)
	release := make(chan struct{})
	run1 := "intent-" + strconv.FormatInt(in.ID, 10) + "-0001-change-the-heading-a1"
	run2 := "intent-" + strconv.FormatInt(in.ID, 10) + "-0002-add-an-about-page-a1"
	model.On(scripted.RunID(run1),
		scripted.Reply{ToolCalls: []scripted.Call{change("acceptance/0001-change-the-heading-c1.json",
			example("The home page says Hello notes", "/", "Hello notes"))}, Usage: scripted.Usage{Input: 900, Output: 120}},
		scripted.Reply{ToolCalls: []scripted.Call{edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p>Hello notes</p>")},
			Before: func() { <-release }},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	model.On(scripted.RunID(run2),
		scripted.Reply{ToolCalls: []scripted.Call{
			change("acceptance/0002-add-an-about-page-c1.json", example("The about page says About notes", "/about.html", "About notes")),
			change("site/about.html", "<!DOCTYPE html><title>About</title><h1>About notes</h1>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})

	// Before Run: a submitted plan's tasks are proposed, and nothing polls.
	_, err := page.Goto(s.URL + "/board")
	must(t, err)
	must(t, expect.Locator(page.GetByTestId("column-proposed").GetByTestId("card-0001-change-the-heading")).ToBeVisible())
	must(t, expect.Locator(page.GetByTestId("board")).ToHaveAttribute("data-polling", "false"))

	runFromPage(t, page, s, in.ID)
	_, err = page.Goto(s.URL + "/board")
	must(t, err)
	must(t, expect.Locator(page.GetByTestId("column-progress").GetByTestId("card-0001-change-the-heading")).ToBeVisible())
	second := page.GetByTestId("column-queued").GetByTestId("card-0002-add-an-about-page")
	must(t, expect.Locator(second).ToBeVisible())
	must(t, expect.Locator(second.GetByTestId("card-status")).ToHaveText("blocked"))
	must(t, expect.Locator(page.GetByTestId("board")).ToHaveAttribute("data-polling", "true"))
	_, err = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(shots(t) + "/board-running.png"), FullPage: playwright.Bool(true)})
	must(t, err)
	close(release)

	done := page.GetByTestId("column-completed")
	long := playwright.LocatorAssertionsToBeVisibleOptions{Timeout: playwright.Float(60000)}
	must(t, expect.Locator(done.GetByTestId("card-0001-change-the-heading")).ToBeVisible(long))
	must(t, expect.Locator(done.GetByTestId("card-0002-add-an-about-page")).ToBeVisible(long))
	must(t, expect.Locator(done.GetByTestId("card-0001-change-the-heading").GetByTestId("card-criteria")).ToHaveText("1 of 1 criteria passing"))
	must(t, expect.Locator(page.GetByTestId("column-progress").GetByTestId("card-0001-change-the-heading")).ToHaveCount(0))

	// The filter by label keeps only the cards with it; a card opens its task.
	_, err = page.Goto(s.URL + "/board?label=views")
	must(t, err)
	must(t, expect.Locator(page.GetByTestId("card-0002-add-an-about-page")).ToBeVisible())
	must(t, expect.Locator(page.GetByTestId("card-0001-change-the-heading")).ToHaveCount(0))
	must(t, page.GetByTestId("card-0002-add-an-about-page").GetByRole("link").Click())
	must(t, expect.Locator(page.GetByRole("heading", playwright.PageGetByRoleOptions{Level: playwright.Int(1)})).ToContainText("0002-add-an-about-page"))
	_, err = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(shots(t) + "/board-task.png")})
	must(t, err)
}
