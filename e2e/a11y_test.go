package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"autoapp/executor/ai/scripted"
)

// axeViolation is one rule axe-core found broken, with where.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any `json:"target"`
	} `json:"nodes"`
}

// accessible runs axe-core on the page as it is and fails the test on a
// violation of impact serious or critical; it keeps a screenshot of the
// page under the name given.
func accessible(t *testing.T, page playwright.Page, name string) {
	t.Helper()
	axe := os.Getenv("AUTOAPP_AXE")
	if axe == "" {
		t.Fatal("AUTOAPP_AXE names no axe.min.js: run the browser tests with make (make e2e), which fetches axe-core")
	}
	// Evaluated through the browser's devtools protocol, which the pages'
	// Content-Security-Policy (scripts only from the server) does not stop.
	src, err := os.ReadFile(axe)
	must(t, err)
	_, err = page.Evaluate(string(src) + "\n;true")
	must(t, err)
	raw, err := page.Evaluate(`async () => {
		const r = await axe.run(document, { resultTypes: ['violations'] });
		return JSON.stringify(r.violations);
	}`)
	must(t, err)
	var found []axeViolation
	must(t, json.Unmarshal([]byte(raw.(string)), &found))
	_, err = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "page-"+name+".png")), FullPage: playwright.Bool(true)})
	must(t, err)
	var bad []string
	for _, v := range found {
		if v.Impact != "serious" && v.Impact != "critical" {
			continue
		}
		var where []string
		for _, n := range v.Nodes {
			where = append(where, fmt.Sprint(n.Target...))
		}
		bad = append(bad, fmt.Sprintf("%s (%s): %s at %s", v.ID, v.Impact, v.Help, strings.Join(where, ", ")))
	}
	if len(bad) > 0 {
		t.Errorf("%s (%s) is not accessible:\n%s", name, page.URL(), strings.Join(bad, "\n"))
	}
}

// accessibleWideAndNarrow is accessible, then at 900 px wide, where
// nothing scrolls sideways, in the dark, where the page is as readable,
// and at a phone's 390 px, where the page still does not scroll sideways.
func accessibleWideAndNarrow(t *testing.T, page playwright.Page, name string) {
	t.Helper()
	accessible(t, page, name)
	must(t, page.SetViewportSize(900, 800))
	notSideways(t, page, name, 900)
	must(t, page.EmulateMedia(playwright.PageEmulateMediaOptions{ColorScheme: playwright.ColorSchemeDark}))
	accessible(t, page, name+"-dark-900")
	must(t, page.EmulateMedia(playwright.PageEmulateMediaOptions{ColorScheme: playwright.ColorSchemeLight}))
	accessibleOnAPhone(t, page, name)
}

// accessibleOnAPhone is accessible at a phone's 390 by 844 px, where the
// page does not scroll sideways either; the page is left at 1280 px.
func accessibleOnAPhone(t *testing.T, page playwright.Page, name string) {
	t.Helper()
	must(t, page.SetViewportSize(390, 844))
	notSideways(t, page, name, 390)
	accessible(t, page, name+"-390")
	must(t, page.SetViewportSize(1280, 800))
}

// notSideways fails the test when the page itself scrolls sideways at the
// width it is shown at; a wide table scrolls inside its own box instead.
func notSideways(t *testing.T, page playwright.Page, name string, width int) {
	t.Helper()
	wide, err := page.Evaluate(`() => document.documentElement.scrollWidth - document.documentElement.clientWidth`)
	must(t, err)
	if n, _ := wide.(int); n > 0 {
		t.Errorf("%s scrolls sideways by %d px at %d px wide", name, n, width)
	}
}

// TestEveryPageIsAccessible runs axe-core on each page a person meets,
// first run to a finished intent, and keeps a screenshot of each.
func TestEveryPageIsAccessible(t *testing.T) {
	s := startServer(t)
	page := newPage(t)
	_, err := page.Goto(s.URL + "/setup")
	must(t, err)
	accessible(t, page, "setup")
	accessibleOnAPhone(t, page, "setup")
	createOwner(t, page, s)
	accessible(t, page, "backlog-first-run")
	accessibleOnAPhone(t, page, "backlog-first-run")

	model := scripted.New(t)
	model.Models("builder")
	connectModel(t, page, s, model, "scripted:builder")
	in := twoTaskPlan(t, s)
	id := strconv.FormatInt(in.ID, 10)
	model.On(scripted.RunID("intent-"+id+"-0001-change-the-heading-a1"),
		scripted.Reply{ToolCalls: []scripted.Call{change("acceptance/0001-change-the-heading-c1.json",
			example("The home page says Hello notes", "/", "Hello notes")), edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p>Hello notes</p>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	model.On(scripted.RunID("intent-"+id+"-0002-add-an-about-page-a1"), scripted.Reply{Text: "Nothing to do."}, scripted.Reply{Text: "Still nothing."})
	model.Always(scripted.Contains("The task failed. The host's reasons:"),
		scripted.Reply{Text: `{"diagnosis": "The turn wrote nothing.", "advice": "revise", "note": "Say what the page shows."}`})
	model.Always(scripted.Contains("A failure the host saw has been resolved."),
		scripted.Reply{Text: `{"explanation":"It was fixed.","knowable":"specific","lesson":"","same_as":0}`})
	runFromPage(t, page, s, in.ID)
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("stopped", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(60000)}))

	for _, p := range []struct{ name, path string }{
		{"backlog", "/backlog"},
		{"board", "/board"},
		{"overview", "/overview"},
		{"intent", "/backlog/intents/" + id},
		{"task", "/backlog/tasks/1"},
		{"request", "/request"},
		{"applications", "/apps"},
		{"application", "/apps/site"},
		{"knowledge-log", "/knowledge"},
		{"knowledge-turns", "/knowledge/turns"},
		{"knowledge-cases", "/knowledge/cases"},
		{"knowledge-lessons", "/knowledge/lessons"},
		{"settings", "/settings"},
	} {
		_, err := page.Goto(s.URL + p.path)
		must(t, err)
		accessibleWideAndNarrow(t, page, p.name)
	}
	must(t, page.GetByTestId("sign-out").Click())
	_, err = page.Goto(s.URL + "/signin")
	must(t, err)
	accessible(t, page, "signin")
	accessibleOnAPhone(t, page, "signin")
}
