package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"autoapp/executor/ai/scripted"
	"autoapp/intent"
	"autoapp/intent/plan"
)

// change is a scripted source.change call that creates one file.
func change(path, content string) scripted.Call {
	args, _ := json.Marshal(map[string]any{"files": []map[string]string{{"path": path, "action": "create", "content": content}}})
	return scripted.Call{Name: "source_change", Args: string(args)}
}

// overwrite is a scripted source.change call that replaces one file.
func overwrite(path, content string) scripted.Call {
	args, _ := json.Marshal(map[string]any{"files": []map[string]string{{"path": path, "action": "overwrite", "content": content}}})
	return scripted.Call{Name: "source_change", Args: string(args)}
}

func edit(path, find, replace string) scripted.Call {
	args, _ := json.Marshal(map[string]any{"path": path, "hunks": []map[string]string{{"find": find, "replace": replace}}})
	return scripted.Call{Name: "source_edit", Args: string(args)}
}

var cycle = scripted.Call{Name: "candidate_cycle", Args: `{}`}

func example(title, path, text string) string {
	b, _ := json.Marshal(map[string]any{"title": title, "steps": []map[string]any{
		{"method": "GET", "path": path, "expect": map[string]any{"status": 200, "contains": []string{text}}}}})
	return string(b)
}

// TestARunGoesFromRunToDoneInTheBrowser plans two tasks on the static
// template, points Settings at the scripted model, and presses Run: the
// progress shows the task in hand while its turn waits, and the intent
// ends done with every task completed and its runbook listed.
func TestARunGoesFromRunToDoneInTheBrowser(t *testing.T) {
	s, model, page := signedInWithModel(t, "builder")
	in := twoTaskPlan(t, s)

	// The builder of each task: write the example, make the change, cycle.
	release := make(chan struct{})
	run1 := "intent-" + strconv.FormatInt(in.ID, 10) + "-0001-change-the-heading-a1"
	run2 := "intent-" + strconv.FormatInt(in.ID, 10) + "-0002-add-an-about-page-a1"
	model.On(scripted.RunID(run1),
		scripted.Reply{ToolCalls: []scripted.Call{change("acceptance/0001-change-the-heading-c1.json",
			example("The home page says Hello notes", "/", "Hello notes"))}, Usage: scripted.Usage{Input: 900, Output: 120}},
		scripted.Reply{ToolCalls: []scripted.Call{edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p class=\"greeting\">Hello notes</p>")},
			Usage: scripted.Usage{Input: 950, Output: 60}, Before: func() { <-release }},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}, Usage: scripted.Usage{Input: 1000, Output: 10}},
		scripted.Reply{Text: "The heading says Hello notes and its example passes.", Usage: scripted.Usage{Input: 1100, Output: 20}})
	model.On(scripted.RunID(run2),
		scripted.Reply{ToolCalls: []scripted.Call{
			change("acceptance/0002-add-an-about-page-c1.json", example("The about page says About notes", "/about.html", "About notes")),
			change("site/about.html", "<!DOCTYPE html><title>About</title><h1>About notes</h1>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})

	runFromPage(t, page, s, in.ID)

	// While the first turn waits, the polled progress shows the task in hand.
	progress := page.GetByTestId("progress")
	must(t, expect.Locator(progress).ToContainText("0001-change-the-heading"))
	must(t, expect.Locator(page.GetByTestId("last-tool")).ToHaveText("source.change"))
	must(t, expect.Locator(page.GetByTestId("intent-live")).ToHaveAttribute("data-polling", "true"))
	close(release)

	// Done: every task completed, the runbook listed, polling stopped.
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("done", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(60000)}))
	must(t, expect.Locator(page.GetByTestId("intent-live")).ToHaveAttribute("data-polling", "false"))
	for _, slug := range []string{"0001-change-the-heading", "0002-add-an-about-page"} {
		must(t, expect.Locator(page.GetByTestId("task-"+slug).GetByTestId("status")).ToHaveText("completed"))
	}
	must(t, expect.Locator(page.GetByTestId("runbook")).ToContainText("Open the home page and read the heading."))
	must(t, expect.Locator(page.GetByTestId("runbook")).ToContainText("Open /about.html."))
	must(t, expect.Locator(page.GetByTestId("done-preview")).ToHaveAttribute("href", regexp.MustCompile(`^http://site\.localhost:\d+/$`)))

	// Delivered: the artifacts at the completing revision, each with its
	// SHA-256; the downloaded bytes hash to the one shown.
	row := page.GetByTestId("artifact-site/index.html")
	must(t, expect.Locator(row).ToBeVisible())
	shown, err := row.GetByTestId("sha256").TextContent()
	must(t, err)
	download, err := page.ExpectDownload(func() error { return row.GetByTestId("download").Click() })
	must(t, err)
	saved := filepath.Join(t.TempDir(), "index.html")
	must(t, download.SaveAs(saved))
	body, err := os.ReadFile(saved)
	must(t, err)
	sum := sha256.Sum256(body)
	if hex.EncodeToString(sum[:]) != shown {
		t.Fatalf("the downloaded index.html hashes to %x, the page shows %s", sum, shown)
	}
	if !strings.Contains(string(body), "Hello notes") {
		t.Fatalf("the delivered index.html is not the completed one:\n%s", body)
	}

	// Knowledge: the log holds the server's lines, and each builder turn is
	// kept with the documents it was given.
	_, err = page.Goto(s.URL + "/knowledge")
	must(t, err)
	must(t, expect.Locator(page.GetByTestId("log")).ToContainText("preview started"))
	must(t, page.GetByTestId("tab-turns").Click())
	turn := page.GetByTestId("turn-" + run1)
	must(t, expect.Locator(turn).ToContainText("builder"))
	must(t, expect.Locator(turn).ToContainText("intent:site"))
	must(t, turn.GetByRole("link").First().Click())
	must(t, expect.Locator(page.GetByTestId("doc-intent:site")).ToContainText("0001-change-the-heading"))
	_, err = page.Goto(s.URL + "/backlog/intents/" + strconv.FormatInt(in.ID, 10))
	must(t, err)

	// The task's plan draws its passing criterion [x].
	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "0001-change-the-heading"}).First().Click())
	passing := page.GetByTestId("plan").Locator("li", playwright.LocatorLocatorOptions{HasText: "The home page says Hello notes"})
	must(t, expect.Locator(passing.Locator("input[type=checkbox]")).ToBeChecked())
	// Each attempt shows the diff of what it committed.
	attempt := page.GetByTestId("attempt-" + run1)
	must(t, attempt.Locator("summary").Click())
	must(t, expect.Locator(attempt).ToContainText("+    <p class=\"greeting\">Hello notes</p>"))
}

// signedInWithModel starts a server, creates the owner in a new page, and
// makes the scripted model's only model the Settings model.
func signedInWithModel(t *testing.T, name string) (*server, *scripted.Server, playwright.Page) {
	t.Helper()
	s := startServer(t)
	model := scripted.New(t)
	model.Models(name)
	page := newPage(t)
	createOwner(t, page, s)
	connectModel(t, page, s, model, "scripted:"+name)
	return s, model, page
}

// e2eKey is the API key every test's provider has, which nothing of the
// engineer's may ever see.
const e2eKey = "sk-e2e-owner-key-4f1d"

// connectModel turns on the scripted provider in Settings and makes ref
// the Settings model.
func connectModel(t *testing.T, page playwright.Page, s *server, model *scripted.Server, ref string) {
	t.Helper()
	_, err := page.Goto(s.URL + "/settings")
	must(t, err)
	form := page.GetByTestId("provider-form")
	must(t, form.GetByLabel("Name").Fill("scripted"))
	must(t, form.GetByLabel("Base URL").Fill(model.URL()))
	must(t, form.GetByLabel("API key").Fill(e2eKey))
	must(t, form.GetByTestId("save-provider").Click())
	must(t, page.GetByTestId("default-model").GetByLabel("Model").Fill(ref))
	must(t, page.GetByTestId("default-model").GetByRole("button").Click())
}

// twoTaskPlan makes the static template's application site and a submitted
// intent for it: a new heading, then an about page blocked by it.
func twoTaskPlan(t *testing.T, s *server) intent.Intent {
	t.Helper()
	return planFor(t, s, "Greet notes readers, and add an about page.",
		plan.Task{Title: "Change the heading", Priority: "high", Labels: []string{"copy"}, EstimatedLines: 5, Risk: "normal", Reasoning: "low",
			Summary: "The home page greets notes readers.", Criteria: []plan.Criterion{{Text: "The home page says Hello notes"}},
			NoFailurePath: "a static page refuses nothing", Runbook: []string{"Open the home page and read the heading."}},
		plan.Task{Title: "Add an about page", Priority: "medium", Labels: []string{"views"}, EstimatedLines: 10, Risk: "normal", Reasoning: "low",
			BlockedBy: []string{"0001-change-the-heading"}, Summary: "An about page.", Criteria: []plan.Criterion{{Text: "The about page says About notes"}},
			NoFailurePath: "a static page refuses nothing", Runbook: []string{"Open /about.html."}})
}

// planFor makes the static template's application site, selects it, and
// opens and submits an intent with the tasks, written through the service
// as the engineer would.
func planFor(t *testing.T, s *server, request string, tasks ...plan.Task) intent.Intent {
	t.Helper()
	ctx := context.Background()
	l := boot(t, s.Root)
	_, err := l.Apps.CreateFromTemplate(ctx, "site", "Site", "static")
	must(t, err)
	must(t, l.Apps.Select(ctx, "site"))
	backlog := l.Backlog
	in, err := backlog.OpenDraft(ctx, "site", request, intent.Analysis{Restated: []string{request}})
	must(t, err)
	for _, p := range tasks {
		_, err := backlog.AddTask(ctx, in.ID, p)
		must(t, err)
	}
	must(t, backlog.Submit(ctx, in.ID))
	return in
}

// runFromPage opens the intent's page and presses Run, confirming it.
func runFromPage(t *testing.T, page playwright.Page, s *server, id int64) {
	t.Helper()
	_, err := page.Goto(s.URL + "/backlog/intents/" + strconv.FormatInt(id, 10))
	must(t, err)
	must(t, page.GetByTestId("run").Locator("summary").Click())
	must(t, page.GetByTestId("run-confirm").Click())
}
