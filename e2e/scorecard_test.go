package e2e

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"

	"autoapp/executor/ai/scripted"
)

// addProvider turns on a provider in Settings, as the owner does.
func addProvider(t *testing.T, page playwright.Page, s *server, name string, model *scripted.Server) {
	t.Helper()
	_, err := page.Goto(s.URL + "/settings")
	must(t, err)
	form := page.GetByTestId("provider-form")
	must(t, form.GetByLabel("Name").Fill(name))
	must(t, form.GetByLabel("Base URL").Fill(model.URL()))
	must(t, form.GetByTestId("save-provider").Click())
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/settings\?saved=provider`)))
}

// TestCompareModelsFromSettings compares two models from Settings: one
// that writes the two static pages and leaves the Go routes, and one that
// does nothing. The card follows the comparison and then shows each
// model's row, the better first.
func TestCompareModelsFromSettings(t *testing.T) {
	s := startServer(t)
	good, weak := scripted.New(t), scripted.New(t)
	good.Models("coder")
	weak.Models("tiny")
	page := newPage(t)
	createOwner(t, page, s)
	addProvider(t, page, s, "good", good)
	addProvider(t, page, s, "weak", weak)

	gate := scripted.NewGate(t)
	about := scripted.Reply{Before: gate.Hold, ToolCalls: []scripted.Call{
		change("site/about.html", "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>About</title></head>\n<body><main><h1>About</h1>\n<p>This site is for trying Autoapp.</p></main></body></html>\n"),
		edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p><a href=\"about.html\">About</a></p>")}}
	hours := scripted.Reply{ToolCalls: []scripted.Call{edit("site/index.html", "<h1>A new site</h1>",
		"<h1>A new site</h1>\n    <section><h2>Opening hours</h2><p>Monday to Friday 9:00 to 17:00</p><p>Saturday 10:00 to 14:00</p><p>Sunday closed</p></section>")}}
	// Every answer reports 1,000 tokens read and 100 written.
	used := scripted.Usage{Input: 1000, Output: 100}
	about.Usage, hours.Usage = used, used
	checked := scripted.Reply{ToolCalls: []scripted.Call{cycle}, Usage: used}
	done := scripted.Reply{Text: "Done.", Usage: used}
	good.On(scripted.Contains("Application: site-about\n"), about, checked, done)
	good.On(scripted.Contains("Application: site-hours\n"), hours, checked, done)
	good.Always(scripted.Any(), scripted.Reply{Text: "I cannot do this one.", Usage: used})
	weak.Always(scripted.Any(), scripted.Reply{Text: "Nothing to do.", Usage: used})

	_, err := page.Goto(s.URL + "/settings")
	must(t, err)
	card := page.GetByTestId("scorecard")
	rows := card.GetByTestId("scorecard-row")
	must(t, expect.Locator(rows).ToHaveCount(2))
	must(t, expect.Locator(card.GetByTestId("scorecard-none")).ToHaveText([]string{"Not compared yet.", "Not compared yet."}))

	// Nothing chosen: refused with a sentence.
	must(t, card.GetByTestId("compare-models").Click())
	must(t, expect.Locator(page.GetByTestId("refusal-compare")).ToHaveText("Choose at least two models to compare."))

	card = page.GetByTestId("scorecard")
	must(t, card.GetByLabel("good:coder").Check())
	must(t, card.GetByLabel("weak:tiny").Check())
	must(t, card.GetByTestId("compare-models").Click())
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/settings#scorecard$`)))

	// It goes in the background, and the card follows it.
	gate.Wait(t)
	status := page.GetByTestId("scorecard-status")
	must(t, expect.Locator(status).ToContainText("Comparing good:coder, weak:tiny (0 of 2 finished"))
	must(t, expect.Locator(status).ToContainText("Now good:coder, site-about, attempt 1."))
	must(t, expect.Locator(page.GetByTestId("scorecard")).ToHaveAttribute("data-polling", "true"))
	must(t, expect.Locator(page.GetByTestId("compare-models")).ToBeDisabled())
	gate.Open()

	card = page.GetByTestId("scorecard")
	must(t, expect.Locator(card).ToHaveAttribute("data-polling", "false", playwright.LocatorAssertionsToHaveAttributeOptions{Timeout: playwright.Float(300000)}))
	must(t, expect.Locator(page.GetByTestId("scorecard-status")).ToContainText("The comparison of good:coder, weak:tiny finished at"))
	must(t, expect.Locator(card.GetByTestId("scorecard-problem")).ToHaveCount(0))
	rows = card.GetByTestId("scorecard-row")
	must(t, expect.Locator(rows).ToHaveCount(2))
	first, second := rows.Nth(0), rows.Nth(1)
	must(t, expect.Locator(first).ToHaveAttribute("data-model", "good:coder"))
	must(t, expect.Locator(first.Locator("td")).ToHaveText(cells("2 of 4", "2 of 4", "1.5", "1 (2 tasks)", "0", "0", "11,000")))
	must(t, expect.Locator(first.GetByTestId("scorecard-measured")).ToContainText("under baseline"))
	must(t, expect.Locator(second).ToHaveAttribute("data-model", "weak:tiny"))
	must(t, expect.Locator(second.Locator("td")).ToHaveText(cells("0 of 4", "0 of 4", "2", "—", "0", "0", "8,800")))

	must(t, card.ScrollIntoViewIfNeeded())
	_, err = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "settings-scorecard.png")), FullPage: playwright.Bool(true)})
	must(t, err)
	_, err = card.Screenshot(playwright.LocatorScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "settings-scorecard-card.png"))})
	must(t, err)
	accessibleWideAndNarrow(t, page, "settings-scorecard")
}

// cells are a scorecard row's cells, as given, then a wall time.
func cells(texts ...string) []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, s := range texts {
		out = append(out, regexp.MustCompile(`^`+regexp.QuoteMeta(s)+`$`))
	}
	return append(out, regexp.MustCompile(`^[0-9.hms]+$`))
}
