package e2e

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/playwright-community/playwright-go"

	"autoapp/executor/ai/scripted"
	"autoapp/intent/plan"
	"autoapp/intent/spend"
)

// TestAFinishedRunShowsItsSpendAndTheChartRenders prices the scripted
// model in Settings, runs one task whose turn reports its tokens, and
// reads what it cost on the intent, on the task and on the Overview,
// whose chart has a bar a day.
func TestAFinishedRunShowsItsSpendAndTheChartRenders(t *testing.T) {
	s, model, page := signedInWithModel(t, "builder")

	// Prices, typed into Settings: a price that is not a number is refused
	// with a sentence, then the right one is kept.
	_, err := page.Goto(s.URL + "/settings")
	must(t, err)
	prices := page.GetByTestId("prices")
	must(t, expect.Locator(prices.GetByTestId("prices-missing")).ToBeVisible())
	must(t, prices.GetByLabel("Model, row 1").Fill("scripted:builder"))
	must(t, prices.GetByLabel("Input price, row 1").Fill("two"))
	must(t, prices.GetByLabel("Output price, row 1").Fill("10"))
	must(t, prices.GetByTestId("save-prices").Click())
	must(t, expect.Locator(page.GetByTestId("refusal-prices")).ToContainText(`row 1 (scripted:builder): input "two" is not a number of dollars`))
	prices = page.GetByTestId("prices")
	must(t, prices.GetByLabel("Input price, row 1").Fill("2"))
	must(t, prices.GetByLabel("Dollars a day (priced models)").Fill("5"))
	must(t, prices.GetByTestId("save-prices").Click())
	must(t, expect.Locator(page.GetByTestId("prices").GetByLabel("Input price, row 1")).ToHaveValue("2"))

	// One task, planned through the service as the engineer would.
	in := planFor(t, s, "Greet notes readers.", plan.Task{Title: "Change the heading", Priority: "high", Labels: []string{"copy"}, EstimatedLines: 5,
		Risk: "normal", Reasoning: "low", Summary: "The home page greets notes readers.",
		Criteria:      []plan.Criterion{{Text: "The home page says Hello notes"}},
		NoFailurePath: "a static page refuses nothing", Runbook: []string{"Read the heading."}})
	const slug = "0001-change-the-heading"

	replies := []scripted.Reply{
		{ToolCalls: []scripted.Call{change("acceptance/0001-change-the-heading-c1.json", example("The home page says Hello notes", "/", "Hello notes"))},
			Usage: scripted.Usage{Input: 40_000, Output: 2_000}},
		{ToolCalls: []scripted.Call{edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p>Hello notes</p>")},
			Usage: scripted.Usage{Input: 50_000, Output: 1_000}},
		{ToolCalls: []scripted.Call{cycle}, Usage: scripted.Usage{Input: 60_000, Output: 500}},
		{Text: "The heading says Hello notes.", Usage: scripted.Usage{Input: 70_000, Output: 500}},
	}
	var input, output int64
	for _, r := range replies {
		input += int64(r.Usage.Input)
		output += int64(r.Usage.Output)
	}
	cost := spend.Dollars((float64(input)*2 + float64(output)*10) / 1e6)
	model.On(scripted.RunID("intent-"+strconv.FormatInt(in.ID, 10)+"-"+slug+"-a1"), replies...)

	_, err = page.Goto(s.URL + "/backlog/intents/" + strconv.FormatInt(in.ID, 10))
	must(t, err)
	must(t, page.GetByTestId("run").Locator("summary").Click())
	must(t, page.GetByTestId("run-confirm").Click())
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("done", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(60000)}))

	// The intent's spend, and its task's, from the turn's row and the prices.
	must(t, expect.Locator(page.GetByTestId("intent-spend")).ToContainText(cost))
	must(t, expect.Locator(page.GetByTestId("intent-spend")).ToContainText(spend.Count(input)+" in, "+spend.Count(output)+" out"))
	must(t, expect.Locator(page.GetByTestId("task-"+slug).GetByTestId("task-spend")).ToContainText(cost))
	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: slug}).First().Click())
	must(t, expect.Locator(page.GetByTestId("turns")).ToContainText("scripted:builder"))
	must(t, expect.Locator(page.GetByTestId("task-total")).ToContainText(cost))

	// The Backlog's panel: today's spend against the budget.
	must(t, page.GetByTestId("rail-backlog").Click())
	overview := page.GetByTestId("overview")
	must(t, expect.Locator(overview.GetByTestId("today-cost")).ToHaveText(cost))
	must(t, expect.Locator(overview.GetByTestId("budget")).ToContainText("$5.00 a day"))

	// The Overview: a bar a day for 30 days, of cost, today's drawn.
	must(t, overview.GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "Spend by day, model and kind"}).Click())
	chart := page.GetByTestId("chart")
	must(t, expect.Locator(chart).ToHaveAttribute("data-measure", "cost"))
	must(t, expect.Locator(chart.Locator("svg")).ToBeVisible())
	must(t, expect.Locator(chart.Locator("svg rect.bar")).ToHaveCount(30))
	today := chart.Locator("svg rect.bar.today")
	must(t, expect.Locator(today).ToHaveCount(1))
	must(t, expect.Locator(today).Not().ToHaveAttribute("height", "0"))
	must(t, expect.Locator(today.Locator("title")).ToContainText(cost))
	must(t, expect.Locator(page.GetByTestId("by-model")).ToContainText("scripted:builder"))
	must(t, expect.Locator(page.GetByTestId("by-kind")).ToContainText("builder"))
}

// TestAWaitingQuestionMarksTheRail has a chat turn ask the person before
// an edit: while the question waits, every page's rail marks the Backlog
// and the Backlog's panel says what waits; once answered, the mark goes.
func TestAWaitingQuestionMarksTheRail(t *testing.T) {
	s, model, page := signedInWithModel(t, "engineer")
	must(t, page.GetByTestId("rail-request").Click())
	must(t, page.GetByLabel("Id").Fill("site"))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Create the application"}).Click())
	must(t, expect.Locator(page.GetByTestId("rail-mark")).ToHaveCount(0))

	model.On(scripted.RunID("chat-site-1"),
		scripted.Reply{ToolCalls: []scripted.Call{call("source_edit", map[string]any{"path": "site/index.html",
			"hunks": []map[string]string{{"find": "<h1>A new site</h1>", "replace": "<h1>A new site</h1>\n    <p>Open on weekdays.</p>"}}})}},
		scripted.Reply{Text: "I added the line."})
	must(t, page.GetByTestId("request-text").Fill("Say on the home page that we are open on weekdays."))
	must(t, page.GetByTestId("send").Click())
	must(t, expect.Locator(page.GetByTestId("asks")).ToContainText("Edit site/index.html (1 hunk)?", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))

	// Any page the person opens now marks the Backlog, visibly and for a
	// screen reader.
	_, err := page.Goto(s.URL + "/knowledge")
	must(t, err)
	rail := page.GetByTestId("rail-backlog")
	must(t, expect.Locator(rail.GetByTestId("rail-mark")).ToBeVisible())
	must(t, expect.Locator(rail.GetByTestId("rail-mark")).ToHaveText("1"))
	must(t, expect.Locator(rail).ToHaveAccessibleName(regexp.MustCompile(`^Backlog\W+1 thing needs you$`)))
	must(t, rail.Click())
	need := page.GetByTestId("overview").GetByTestId("need-question")
	must(t, expect.Locator(need).ToContainText("Edit site/index.html (1 hunk)?"))

	// Answered from the Request page the panel leads to, the mark goes.
	must(t, need.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Answer it on the Request page"}).Click())
	must(t, page.GetByTestId("asks").GetByTestId("approve-ask").Click())
	must(t, expect.Locator(page.GetByTestId("reply")).ToContainText("I added the line.", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))
	must(t, page.GetByTestId("rail-backlog").Click())
	must(t, expect.Locator(page.GetByTestId("rail-mark")).ToHaveCount(0))
	must(t, expect.Locator(page.GetByTestId("needs-none")).ToBeVisible())
}
