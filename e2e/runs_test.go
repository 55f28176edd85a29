package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"github.com/playwright-community/playwright-go"

	"autoapp/cmd/autoapp/launcher"
	"autoapp/executor/ai/scripted"
	"autoapp/intent"
	"autoapp/intent/plan"
)

// greeting is a one-task plan: the home page says text.
func greeting(text string) plan.Task {
	return plan.Task{Title: "Change the heading", Priority: "high", Labels: []string{"copy"}, EstimatedLines: 5,
		Risk: "normal", Reasoning: "low", Summary: "The home page greets its readers.",
		Criteria:      []plan.Criterion{{Text: "The home page says " + text}},
		NoFailurePath: "a static page refuses nothing", Runbook: []string{"Read the heading."}}
}

// planApp submits a one-task plan for appID, creating the application
// first when it does not exist.
func planApp(t *testing.T, l *launcher.Launcher, appID, text string) intent.Intent {
	t.Helper()
	ctx := context.Background()
	if _, err := l.Apps.Get(ctx, appID); err != nil {
		_, err := l.Apps.CreateFromTemplate(ctx, appID, appID, "static")
		must(t, err)
	}
	in, err := l.Backlog.OpenDraft(ctx, appID, "Greet "+appID+" readers.", intent.Analysis{Restated: []string{"A greeting."}})
	must(t, err)
	_, err = l.Backlog.AddTask(ctx, in.ID, greeting(text))
	must(t, err)
	must(t, l.Backlog.Submit(ctx, in.ID))
	return in
}

// heldGreeting scripts the one task of intent id (the application's task
// number n) to write its example and the greeting, its first request held
// until hold is closed; arrived hears when it arrives.
func heldGreeting(model *scripted.Server, id int64, n int, text string, arrived chan<- int64, hold <-chan struct{}) {
	slug := fmt.Sprintf("%04d-change-the-heading", n)
	model.On(scripted.RunID("intent-"+strconv.FormatInt(id, 10)+"-"+slug+"-a1"),
		scripted.Reply{Before: func() { arrived <- id; <-hold },
			ToolCalls: []scripted.Call{change("acceptance/"+slug+"-c1.json", example("The home page says "+text, "/", text)),
				edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p>"+text+"</p>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "The home page says " + text + "."})
}

// setRunsAtOnce sets Settings → Runs at once from the page.
func setRunsAtOnce(t *testing.T, page playwright.Page, s *server, n int) {
	t.Helper()
	_, err := page.Goto(s.URL + "/settings")
	must(t, err)
	form := page.GetByTestId("runs-at-once")
	must(t, form.GetByLabel("Runs at once").Fill(strconv.Itoa(n)))
	must(t, form.GetByTestId("save-runs").Click())
	must(t, expect.Locator(page.GetByTestId("runs-at-once").GetByLabel("Runs at once")).ToHaveValue(strconv.Itoa(n)))
}

// TestTwoApplicationsRunTogetherOnTheBoard: with Runs at once = 2, site's
// and blog's intents run at the same time, both on the Board of every
// application and in the rail; a second intent of site is refused with its
// sentence; Stop on site leaves blog running, and blog finishes.
func TestTwoApplicationsRunTogetherOnTheBoard(t *testing.T) {
	s, model, page := signedInWithModel(t, "builder")
	setRunsAtOnce(t, page, s, 2)
	l := boot(t, s.Root)
	site, blog := planApp(t, l, "site", "Hello site"), planApp(t, l, "blog", "Hello blog")
	must(t, l.Apps.Select(context.Background(), "site"))
	arrived, hold, blogHold := make(chan int64, 4), make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(hold) })
	heldGreeting(model, site.ID, 1, "Hello site", arrived, hold)
	heldGreeting(model, blog.ID, 1, "Hello blog", arrived, blogHold)

	runFromPage(t, page, s, site.ID)
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("running"))
	runFromPage(t, page, s, blog.ID)
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("running"))
	for range 2 {
		select {
		case <-arrived:
		case <-time.After(60 * time.Second):
			t.Fatal("the two runs did not reach the model together")
		}
	}

	// Both on the board of every application, and in the rail.
	_, err := page.Goto(s.URL + "/board?apps=all")
	must(t, err)
	runs := page.GetByTestId("board-runs")
	must(t, expect.Locator(runs.GetByTestId("board-run-site")).ToHaveText(fmt.Sprintf("intent #%d of site", site.ID)))
	must(t, expect.Locator(runs.GetByTestId("board-run-blog")).ToHaveText(fmt.Sprintf("intent #%d of blog", blog.ID)))
	progress := page.GetByTestId("column-progress")
	must(t, expect.Locator(progress.Locator(".board-card")).ToHaveCount(2))
	must(t, expect.Locator(progress).ToContainText(fmt.Sprintf("intent #%d of site", site.ID)))
	must(t, expect.Locator(progress).ToContainText(fmt.Sprintf("intent #%d of blog", blog.ID)))
	rail := page.GetByTestId("rail-runs")
	must(t, expect.Locator(rail.GetByTestId("rail-run-site")).ToBeVisible())
	must(t, expect.Locator(rail.GetByTestId("rail-run-blog")).ToBeVisible())
	_, err = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "board-two-running-applications.png")), FullPage: playwright.Bool(true)})
	must(t, err)
	// One application's board shows its own cards only.
	_, err = page.GetByTestId("board-filter-apps").SelectOption(playwright.SelectOptionValues{Values: playwright.StringSlice("")})
	must(t, err)
	must(t, page.GetByTestId("board-filter").GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Filter"}).Click())
	must(t, expect.Locator(page.GetByTestId("column-progress").Locator(".board-card")).ToHaveCount(1))
	must(t, expect.Locator(page.GetByTestId("board-runs")).ToContainText(fmt.Sprintf("Running now: intent #%d of site", site.ID)))
	must(t, expect.Locator(page.GetByTestId("board-run-blog")).ToHaveCount(0))

	// A second intent of site is refused, naming the one running.
	site2 := planApp(t, l, "site", "Hello again")
	runFromPage(t, page, s, site2.ID)
	must(t, expect.Locator(page.GetByTestId("refusal-run")).ToHaveText(fmt.Sprintf(
		"Intent #%d of site is running; an application runs one intent at a time, so wait for it to end or stop it first.", site.ID)))

	// Stop on site leaves blog running.
	_, err = page.Goto(s.URL + "/backlog/intents/" + strconv.FormatInt(site.ID, 10))
	must(t, err)
	must(t, page.GetByTestId("stop").Locator("summary").Click())
	must(t, page.GetByTestId("stop-confirm").Click())
	must(t, expect.Locator(page.GetByTestId("stop-reason")).ToHaveText("Stopped by the person."))
	_, err = page.Goto(s.URL + "/backlog/intents/" + strconv.FormatInt(blog.ID, 10))
	must(t, err)
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("running"))
	close(blogHold)
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("done", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(60000)}))
}

// TestAKillWithTwoRunsGoingInterruptsBoth: two runs are in their turns
// when the server is killed; the restart interrupts both tasks and stops
// both intents, the stores pass their integrity checks, and every event
// written before the kill is still there.
func TestAKillWithTwoRunsGoingInterruptsBoth(t *testing.T) {
	s, model, page := signedInWithModel(t, "builder")
	setRunsAtOnce(t, page, s, 2)
	l := boot(t, s.Root)
	site, blog := planApp(t, l, "site", "Hello site"), planApp(t, l, "blog", "Hello blog")
	arrived, hold := make(chan int64, 4), make(chan struct{})
	t.Cleanup(func() { close(hold) })
	heldGreeting(model, site.ID, 1, "Hello site", arrived, hold)
	heldGreeting(model, blog.ID, 1, "Hello blog", arrived, hold)
	runFromPage(t, page, s, site.ID)
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("running"))
	runFromPage(t, page, s, blog.ID)
	for range 2 {
		select {
		case <-arrived:
		case <-time.After(60 * time.Second):
			t.Fatal("the two runs did not reach the model together")
		}
	}
	ctx := context.Background()
	events := map[int64]int{}
	for _, in := range []intent.Intent{site, blog} {
		d, err := l.Backlog.Get(ctx, in.ID)
		must(t, err)
		td, err := l.Backlog.Task(ctx, d.Tasks[0].ID)
		must(t, err)
		if td.Status != intent.TaskInProgress {
			t.Fatalf("intent #%d's task before the kill: %s", in.ID, td.Status)
		}
		events[td.ID] = len(td.Events)
	}
	_, err := page.Goto("about:blank")
	must(t, err)
	s.kill(t)
	for _, name := range []string{"intents.sqlite", "knowledge.sqlite"} {
		db, err := sql.Open("sqlite3", "file:"+filepath.Join(s.Root, "launcher", name)+"?mode=ro")
		must(t, err)
		var ok string
		must(t, db.QueryRow(`PRAGMA integrity_check`).Scan(&ok))
		db.Close()
		if ok != "ok" {
			t.Fatalf("%s after the kill: %s", name, ok)
		}
	}
	second := startServerAt(t, s.Root)
	for _, in := range []intent.Intent{site, blog} {
		d, err := l.Backlog.Get(ctx, in.ID)
		must(t, err)
		if d.Status != intent.IntentStopped || d.StopReason != "The launcher stopped." {
			t.Fatalf("intent #%d after the restart: %s %q", in.ID, d.Status, d.StopReason)
		}
		td, err := l.Backlog.Task(ctx, d.Tasks[0].ID)
		must(t, err)
		if td.Status != intent.TaskInterrupted || len(td.Events) != events[td.ID]+1 {
			t.Fatalf("intent #%d's task after the restart: %s with %d events (had %d)", in.ID, td.Status, len(td.Events), events[td.ID])
		}
	}
	_, err = page.Goto(second.URL + "/board?apps=all")
	must(t, err)
	if strings.Contains(page.URL(), "/signin") {
		signIn(t, page, ownerName, ownerPassword)
		_, err = page.Goto(second.URL + "/board?apps=all")
		must(t, err)
	}
	must(t, expect.Locator(page.GetByTestId("board-runs")).ToHaveCount(0))
	must(t, expect.Locator(page.GetByTestId("column-queued").Locator(".board-card")).ToHaveCount(2))
}
