package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"autoapp/executor/ai/scripted"
)

// TestASmallChangeInTheChatAsksFirst has the engineer make one small change
// directly in a chat turn: the edit waits for Approve in the page and
// lands; the build it asks for next is denied, and the engineer is told.
func TestASmallChangeInTheChatAsksFirst(t *testing.T) {
	s, model, page := signedInWithModel(t, "engineer")
	must(t, page.GetByTestId("rail-request").Click())
	must(t, page.GetByLabel("Id").Fill("site"))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Create the application"}).Click())

	model.On(scripted.RunID("chat-site-1"),
		scripted.Reply{ToolCalls: []scripted.Call{call("source_edit", map[string]any{"path": "site/index.html",
			"hunks": []map[string]string{{"find": "<h1>A new site</h1>", "replace": "<h1>A new site</h1>\n    <p>Open on weekdays.</p>"}}})}},
		scripted.Reply{ToolCalls: []scripted.Call{call("candidate_cycle", map[string]any{})}},
		scripted.Reply{Text: "I added the line; you declined the build, so it is not checked yet."})

	must(t, page.GetByTestId("request-text").Fill("Say on the home page that we are open on weekdays."))
	must(t, page.GetByTestId("send").Click())

	asks := page.GetByTestId("asks")
	must(t, expect.Locator(asks).ToContainText("Edit site/index.html (1 hunk)?", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))
	index := filepath.Join(s.Root, "apps", "site", "workspace", "site", "index.html")
	if b, _ := os.ReadFile(index); strings.Contains(string(b), "Open on weekdays.") {
		t.Fatal("the edit landed before the person approved it")
	}
	must(t, asks.GetByTestId("approve-ask").Click())
	must(t, expect.Locator(page.GetByTestId("asks")).ToContainText("Build, preview and check site?", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))
	b, err := os.ReadFile(index)
	must(t, err)
	if !strings.Contains(string(b), "Open on weekdays.") {
		t.Fatalf("the approved edit did not land:\n%s", b)
	}
	must(t, page.GetByTestId("asks").GetByTestId("deny-ask").Click())
	must(t, expect.Locator(page.GetByTestId("reply")).ToContainText("you declined the build", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.GetByTestId("asks")).ToHaveCount(0))
	must(t, expect.Locator(page.GetByTestId("request-live")).ToHaveAttribute("data-polling", "false"))
	// The model was told.
	declined := false
	for _, r := range model.Requests() {
		for _, m := range r.Messages {
			if m.Role == "tool" && strings.Contains(m.Content, "The person declined") {
				declined = true
			}
		}
	}
	if !declined {
		t.Fatal("the engineer was not told the build was declined")
	}
}
