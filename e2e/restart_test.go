package e2e

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"autoapp/executor/acceptance"
	"autoapp/executor/ai/provider"
	"autoapp/executor/ai/scripted"
	"autoapp/intent"
	"autoapp/intent/plan"
)

// TestARestartKeepsTheCandidateAndSaysWhatStopped builds and checks a Go
// service, stops the server (which must stop the preview's process), moves
// the workspace's HEAD while it is down, starts a new server on the same
// root, and reads the application page: the owner is still signed in, and
// the page says the preview stopped with the restart, that the checks ran
// on an earlier preview, and that the workspace was edited since the build.
func TestARestartKeepsTheCandidateAndSaysWhatStopped(t *testing.T) {
	first := startServer(t)
	page := newPage(t)
	createOwner(t, page, first)

	_, err := page.Goto(first.URL + "/apps")
	must(t, err)
	form := page.GetByTestId("create-app")
	must(t, form.GetByLabel("Go HTTP service").Check())
	must(t, form.GetByLabel("Id").Fill("svc"))
	must(t, form.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Create the application"}).Click())
	must(t, expect.Page(page).ToHaveURL(first.URL+"/apps/svc"))
	// A new Go application's first build compiles the standard library
	// into its own cache.
	// Build and check answers at once and goes on in the background: the
	// page shows it going and follows it until it ends.
	must(t, page.GetByTestId("cycle").Click())
	must(t, expect.Locator(page.GetByTestId("candidate-going")).ToContainText("Build and check"))
	must(t, expect.Locator(page.GetByTestId("app-live")).ToHaveAttribute("data-polling", "true"))
	must(t, expect.Locator(page.GetByTestId("checks-summary")).ToHaveText("Passed 1 of 1.", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(120000)}))
	must(t, expect.Locator(page.GetByTestId("app-live")).ToHaveAttribute("data-polling", "false"))
	link, err := page.GetByTestId("preview-link").GetAttribute("href")
	must(t, err)
	// The page links the preview at its own host name, which is the only
	// name it answers; Go reaches that name at loopback, as a browser does.
	previewURL := link
	client := &http.Client{Transport: acceptance.LoopbackTransport(), Timeout: 10 * time.Second}
	if resp, err := client.Get(previewURL + "health"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the preview does not answer before the restart: %v", err)
	}

	// The preview's own output reaches the log, as a line with no origin.
	_, err = page.Goto(first.URL + "/knowledge")
	must(t, err)
	must(t, expect.Locator(page.GetByTestId("log")).ToContainText("listening on 127.0.0.1:"))

	first.stop(t)
	if resp, err := client.Get(previewURL + "health"); err == nil {
		resp.Body.Close()
		t.Fatalf("the preview at %s outlived the server", previewURL)
	}

	// A commit lands in the workspace while the launcher is down.
	ws := filepath.Join(first.Root, "apps", "svc", "workspace")
	git := exec.Command("git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--allow-empty", "-qm", "while it was down")
	git.Dir = ws
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v\n%s", err, out)
	}

	second := startServerAt(t, first.Root)
	_, err = page.Goto(second.URL + "/apps/svc")
	must(t, err)
	must(t, expect.Locator(page.GetByTestId("owner-name")).ToHaveText(ownerName))
	must(t, expect.Locator(page.GetByTestId("preview-note")).ToHaveText("The preview stopped when the launcher restarted."))
	must(t, expect.Locator(page.GetByTestId("checks-note")).ToHaveText("Passed 1 of 1 for an earlier preview; run the checks again."))
	must(t, expect.Locator(page.GetByTestId("edited")).ToHaveText("Edited since this build."))

	must(t, page.GetByTestId("preview-start").Click())
	must(t, expect.Locator(page.GetByTestId("preview-running")).ToBeVisible(playwright.LocatorAssertionsToBeVisibleOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.GetByTestId("preview-note")).ToHaveCount(0))
}

// TestAKilledLauncherInterruptsTheTurnAndNeverResumes kills the real binary
// with SIGKILL while a builder's turn waits, starts it again on the same
// root, and finds the task interrupted with its attempt given back and the
// intent stopped with "The launcher stopped." — not resumed.
func TestAKilledLauncherInterruptsTheTurnAndNeverResumes(t *testing.T) {
	root := t.TempDir()
	model := scripted.New(t)
	model.Models("builder")
	l := boot(t, root)
	providers := l.Providers
	must(t, providers.Save(provider.Provider{Name: "scripted", BaseURL: model.URL(), On: true}, false))
	must(t, providers.SetDefaultModel("scripted:builder"))

	first := startServerAt(t, root)
	page := newPage(t)
	createOwner(t, page, first)
	ctx := context.Background()
	_, err := l.Apps.CreateFromTemplate(ctx, "site", "Site", "static")
	must(t, err)
	backlog := l.Backlog
	in, err := backlog.OpenDraft(ctx, "site", "Greet notes readers.", intent.Analysis{Restated: []string{"A greeting."}})
	must(t, err)
	task, err := backlog.AddTask(ctx, in.ID, plan.Task{Title: "Change the heading", Priority: "high", Labels: []string{"copy"},
		EstimatedLines: 5, Risk: "normal", Reasoning: "low", Summary: "A greeting.",
		Criteria: []plan.Criterion{{Text: "The home page says Hello notes"}}, NoFailurePath: "a static page refuses nothing"})
	must(t, err)
	must(t, backlog.Submit(ctx, in.ID))

	// The turn makes one call, then waits for a reply that never comes.
	inTurn := make(chan struct{})
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	run := "intent-" + strconv.FormatInt(in.ID, 10) + "-0001-change-the-heading-a1"
	model.On(scripted.RunID(run),
		scripted.Reply{ToolCalls: []scripted.Call{{Name: "spec_read", Args: `{}`}}},
		scripted.Reply{Before: func() { close(inTurn); <-hold }, Text: "never seen"})

	_, err = page.Goto(first.URL + "/backlog/intents/" + strconv.FormatInt(in.ID, 10))
	must(t, err)
	must(t, page.GetByTestId("run").Locator("summary").Click())
	must(t, page.GetByTestId("run-confirm").Click())
	select {
	case <-inTurn:
	case <-time.After(30 * time.Second):
		t.Fatal("the builder's turn did not start")
	}
	d, err := backlog.Task(ctx, task.ID)
	must(t, err)
	if d.Status != intent.TaskInProgress || d.Attempts != 1 {
		t.Fatalf("before the kill: %s with %d attempts", d.Status, d.Attempts)
	}

	// The page polls while the run goes: leave it, so the kill cuts no
	// request the browser would report.
	_, err = page.Goto("about:blank")
	must(t, err)
	first.kill(t)
	second := startServerAt(t, root)
	d, err = backlog.Task(ctx, task.ID)
	must(t, err)
	if d.Status != intent.TaskInterrupted || d.Attempts != 0 {
		t.Fatalf("after the restart: %s with %d attempts", d.Status, d.Attempts)
	}
	// The interruption names the attempt the kill cut, so the next
	// attempt's attempts document has it.
	if last := d.Events[len(d.Events)-1]; last.To != intent.TaskInterrupted || last.RunID != run {
		t.Fatalf("the interruption is recorded as %+v, want run %s", last, run)
	}
	got, err := backlog.Get(ctx, in.ID)
	must(t, err)
	if got.Status != intent.IntentStopped || got.StopReason != "The launcher stopped." {
		t.Fatalf("the intent after the restart: %s %q", got.Status, got.StopReason)
	}
	_, err = page.Goto(second.URL + "/backlog/intents/" + strconv.FormatInt(in.ID, 10))
	must(t, err)
	must(t, expect.Locator(page.GetByTestId("stop-reason")).ToHaveText("The launcher stopped."))
	must(t, expect.Locator(page.GetByTestId("task-0001-change-the-heading").GetByTestId("status")).ToHaveText("interrupted"))
	must(t, expect.Locator(page.GetByTestId("run")).ToBeVisible())
}

// TestADeliveryThatCannotBeWrittenLeavesTheIntentStoppedUntilRun: the
// delivery's write fails as the run finishes (the disk is full); done and
// the delivery are one write, so the intent is not done but stopped, saying
// so; once the disk has room, Run delivers it — after a restart too.
func TestADeliveryThatCannotBeWrittenLeavesTheIntentStoppedUntilRun(t *testing.T) {
	s, model, page := signedInWithModel(t, "builder")
	in := planFor(t, s, "Greet notes readers.", plan.Task{Title: "Change the heading", Priority: "high", Labels: []string{"copy"},
		EstimatedLines: 5, Risk: "normal", Reasoning: "low", Summary: "The home page greets notes readers.",
		Criteria: []plan.Criterion{{Text: "The home page says Hello notes"}}, NoFailurePath: "a static page refuses nothing"})
	db := openIntents(t, s)
	if _, err := db.Write.Exec(`CREATE TRIGGER test_no_delivery BEFORE INSERT ON deliveries
		BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`); err != nil {
		t.Fatal(err)
	}
	run := "intent-" + strconv.FormatInt(in.ID, 10) + "-0001-change-the-heading-a1"
	model.On(scripted.RunID(run),
		scripted.Reply{ToolCalls: []scripted.Call{change("acceptance/0001-change-the-heading-c1.json", example("The home page says Hello notes", "/", "Hello notes")),
			edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p>Hello notes</p>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	runFromPage(t, page, s, in.ID)
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("stopped", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(60000)}))
	must(t, expect.Locator(page.GetByTestId("stop-reason")).ToContainText("could not be delivered"))
	must(t, expect.Locator(page.GetByTestId("artifact-site/index.html")).ToHaveCount(0))

	// The disk has room again; the launcher stops, and a direct edit lands
	// in the workspace after the last verdict, as a chat turn's would.
	if _, err := db.Write.Exec(`DROP TRIGGER test_no_delivery`); err != nil {
		t.Fatal(err)
	}
	_, err := page.Goto("about:blank")
	must(t, err)
	s.stop(t)
	ws := filepath.Join(s.Root, "apps", "site", "workspace")
	page0, err := os.ReadFile(filepath.Join(ws, "site", "index.html"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(ws, "site", "index.html"), []byte("<h1>Never judged</h1>\n"), 0o644))
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a direct edit after the verdict"}} {
		git := exec.Command("git", args...)
		git.Dir = ws
		if out, err := git.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	second := startServerAt(t, s.Root)
	_, err = page.Goto(second.URL + "/backlog/intents/" + strconv.FormatInt(in.ID, 10))
	must(t, err)
	if strings.Contains(page.URL(), "/signin") {
		signIn(t, page, ownerName, ownerPassword)
		_, err = page.Goto(second.URL + "/backlog/intents/" + strconv.FormatInt(in.ID, 10))
		must(t, err)
	}
	runFromPage(t, page, second, in.ID)
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("done", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(60000)}))
	must(t, expect.Locator(page.GetByTestId("artifact-site/index.html")).ToBeVisible())
	// The delivery is of the judged revision, and says the workspace moved.
	must(t, expect.Locator(page.GetByTestId("delivery-moved")).ToContainText("The workspace changed after the last verdict; the delivery is of "))
	href, err := page.GetByTestId("artifact-site/index.html").GetByTestId("download").GetAttribute("href")
	must(t, err)
	resp, err := page.Request().Get(second.URL + href)
	must(t, err)
	body, err := resp.Body()
	must(t, err)
	if string(body) != string(page0) {
		t.Errorf("the delivered page is %q, want the judged revision's %q", body, page0)
	}
	_, err = page.Locator("[data-testid=delivery]").Screenshot(playwright.LocatorScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "delivery-moved.png"))})
	must(t, err)
}
