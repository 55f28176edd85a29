package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"autoapp/executor/ai/scripted"
)

func call(name string, args any) scripted.Call {
	b, _ := json.Marshal(args)
	return scripted.Call{Name: name, Args: string(b)}
}

const pomodoro = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Pomodoro</title></head>
<body>
  <main>
    <h1>A new site</h1>
    <p id="phase">Work</p>
    <p id="clock">25:00</p>
    <button id="start">Start</button> <button id="pause">Pause</button> <button id="reset">Reset</button>
    <p class="hint">25-minute work, 5-minute break. Nothing leaves this page.</p>
  </main>
</body>
</html>
`

// TestTheGoldenPath is the journey a person takes: sign in, create a
// static application, ask for a pomodoro timer in guided mode, answer the
// engineer's question, read the plan in the Backlog, approve it, Run it
// through the inline confirmation, watch the tasks complete, and download
// index.html whose SHA-256 matches the one shown.
func TestTheGoldenPath(t *testing.T) {
	s, model, page := signedInWithModel(t, "engineer")

	// A static application, made from the Request page.
	must(t, page.GetByTestId("rail-request").Click())
	must(t, page.GetByLabel("Id").Fill("timer"))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Create the application"}).Click())
	must(t, expect.Page(page).ToHaveURL(s.URL+"/request"))

	// The engineer: a question first; then the plan; then each task's builder.
	model.On(scripted.RunID("chat-timer-1"),
		scripted.Reply{ToolCalls: []scripted.Call{call("spec_read", map[string]string{"topic": "application"})}},
		scripted.Reply{ToolCalls: []scripted.Call{call("intent_open", map[string]any{
			"restated": "A pomodoro timer on the home page.", "fits": []string{"the static home page"},
			"assumptions": []string{"no sound"}, "questions": []string{"Should the break start by itself when work ends?"}})}},
		scripted.Reply{Text: "One question before I plan: should the break start by itself when work ends?"})
	model.On(scripted.RunID("chat-timer-2"),
		scripted.Reply{ToolCalls: []scripted.Call{call("intent_open", map[string]any{
			"restated": "A pomodoro timer on the home page; the break starts by itself.", "fits": []string{"the static home page"},
			"assumptions": []string{"no sound"}, "questions": []string{}})}},
		scripted.Reply{ToolCalls: []scripted.Call{call("intent_task", map[string]any{
			"title": "Show the timer on the home page", "priority": "high", "labels": []string{"views"}, "blocked_by": []string{},
			"estimated_lines": 40, "locks": []string{}, "risk": "normal", "stub": false, "reasoning": "low",
			"summary":         "The home page shows 25:00 with start, pause and reset.",
			"criteria":        []map[string]any{{"text": "The home page shows 25:00 and a Start button"}},
			"no_failure_path": "a static page refuses nothing", "runbook": []string{"Press Start and watch the clock count down."}})}},
		scripted.Reply{ToolCalls: []scripted.Call{call("intent_task", map[string]any{
			"title": "Say the page needs no network", "priority": "medium", "labels": []string{"copy"},
			"blocked_by": []string{"0001-show-the-timer-on-the-home"}, "estimated_lines": 5, "locks": []string{}, "risk": "normal",
			"stub": false, "reasoning": "low", "summary": "The page says nothing leaves it.",
			"criteria":        []map[string]any{{"text": "The home page says Nothing leaves this page"}},
			"no_failure_path": "a static page refuses nothing"})}},
		scripted.Reply{ToolCalls: []scripted.Call{call("intent_submit", map[string]any{})}},
		scripted.Reply{Text: "The plan is in the Backlog: two tasks. Approve it there, then press Run."})
	example := func(id, text string) scripted.Call {
		body, _ := json.Marshal(map[string]any{"title": text, "steps": []map[string]any{
			{"method": "GET", "path": "/", "expect": map[string]any{"status": 200, "contains": []string{text}}}}})
		return call("source_change", map[string]any{"files": []map[string]string{{"path": "acceptance/" + id + ".json", "action": "create", "content": string(body)}}})
	}
	model.On(scripted.RunID("intent-1-0001-show-the-timer-on-the-home-a1"),
		scripted.Reply{ToolCalls: []scripted.Call{example("0001-show-the-timer-on-the-home-c1", "25:00")}},
		scripted.Reply{ToolCalls: []scripted.Call{call("source_change", map[string]any{"files": []map[string]string{
			{"path": "site/index.html", "action": "overwrite", "content": strings.Replace(pomodoro, `<p class="hint">25-minute work, 5-minute break. Nothing leaves this page.</p>`, "", 1)}}})}},
		scripted.Reply{ToolCalls: []scripted.Call{call("candidate_cycle", map[string]any{})}},
		scripted.Reply{Text: "The timer is on the home page."})
	model.On(scripted.RunID("intent-1-0002-say-the-page-needs-no-network-a1"),
		scripted.Reply{ToolCalls: []scripted.Call{example("0002-say-the-page-needs-no-network-c1", "Nothing leaves this page")}},
		scripted.Reply{ToolCalls: []scripted.Call{call("source_change", map[string]any{"files": []map[string]string{
			{"path": "site/index.html", "action": "overwrite", "content": pomodoro}}})}},
		scripted.Reply{ToolCalls: []scripted.Call{call("candidate_cycle", map[string]any{})}},
		scripted.Reply{Text: "The page says so."})

	// The request, in guided mode.
	must(t, page.GetByLabel("Guided").Check())
	must(t, page.GetByTestId("request-text").Fill("a pomodoro timer page: 25-minute work, 5-minute break, start, pause and reset, no network"))
	must(t, page.GetByTestId("send").Click())
	must(t, expect.Locator(page.GetByTestId("questions")).ToContainText("Should the break start by itself when work ends?", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.GetByTestId("conversation")).ToContainText("a pomodoro timer page"))
	must(t, expect.Locator(page.GetByTestId("request-live")).ToHaveAttribute("data-polling", "false"))
	// The page as its live part left it is the page a reload shows: the
	// answer box, and no box for a message beside it.
	must(t, expect.Locator(page.GetByTestId("request-form")).ToHaveCount(0))
	sameAsAFreshLoad(t, page, "the engineer asked")
	_, err := page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "request-questions.png")), FullPage: playwright.Bool(true)})
	must(t, err)

	// The answer starts the planning turn; the plan lands in the Backlog.
	must(t, page.GetByTestId("answer-text").Fill("Yes, the break starts by itself."))
	must(t, page.GetByTestId("answer").Click())
	must(t, expect.Locator(page.GetByTestId("conversation")).ToContainText("The plan is in the Backlog", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.GetByTestId("conversation")).ToContainText("0001-show-the-timer-on-the-home"))
	must(t, expect.Locator(page.GetByTestId("request-live")).ToHaveAttribute("data-polling", "false"))
	must(t, expect.Locator(page.GetByTestId("request-form")).ToBeVisible())
	sameAsAFreshLoad(t, page, "the plan replied")
	must(t, page.GetByTestId("open-intent").Click())

	// Read the plan, approve it (guided), Run.
	must(t, expect.Locator(page.GetByTestId("request")).ToHaveText("a pomodoro timer page: 25-minute work, 5-minute break, start, pause and reset, no network"))
	must(t, expect.Locator(page.GetByTestId("task-0001-show-the-timer-on-the-home")).ToBeVisible())
	must(t, expect.Locator(page.GetByTestId("not-approved")).ToBeVisible())
	// Guided: Run is offered once the plan is approved, not before.
	must(t, expect.Locator(page.GetByTestId("run")).ToHaveCount(0))
	must(t, page.GetByTestId("approve").Click())
	must(t, expect.Locator(page.GetByTestId("approved")).ToBeVisible())
	must(t, page.GetByTestId("run").Locator("summary").Click())
	must(t, page.GetByTestId("run-confirm").Click())

	// The tasks complete; the delivery is offered.
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("done", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(60000)}))
	row := page.GetByTestId("artifact-site/index.html")
	shown, err := row.GetByTestId("sha256").TextContent()
	must(t, err)
	download, err := page.ExpectDownload(func() error { return row.GetByTestId("download").Click() })
	must(t, err)
	saved := filepath.Join(t.TempDir(), "index.html")
	must(t, download.SaveAs(saved))
	body, err := os.ReadFile(saved)
	must(t, err)
	sum := sha256.Sum256(body)
	if hex.EncodeToString(sum[:]) != shown || string(body) != pomodoro {
		t.Fatalf("the downloaded index.html (sha256 %x) is not the delivered one (%s)", sum, shown)
	}
	// Knowledge keeps the chat turns and the builder turns alike.
	_, err = page.Goto(s.URL + "/knowledge/turns")
	must(t, err)
	must(t, expect.Locator(page.GetByTestId("turn-chat-timer-1")).ToContainText("chat"))
	must(t, expect.Locator(page.GetByTestId("turn-intent-1-0001-show-the-timer-on-the-home-a1")).ToContainText("builder"))

	// The Request page shows the delivery too.
	must(t, page.GetByTestId("rail-request").Click())
	must(t, expect.Locator(page.GetByTestId("delivery")).ToContainText("site/index.html"))
}
