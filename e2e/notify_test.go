package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"autoapp/executor/ai/scripted"
	"autoapp/intent/plan"
)

// recordNotifications wraps the browser's Notification so that the test
// sees each one the page raises (kept in the tab's sessionStorage, across
// navigations) and can click the last.
const recordNotifications = `(() => {
  const Real = window.Notification;
  if (!Real) { return; }
  class Recorded extends Real {
    constructor(title, options) {
      super(title, options);
      const all = JSON.parse(sessionStorage.getItem("__notices") || "[]");
      all.push({ title: title, body: options && options.body, tag: options && options.tag });
      sessionStorage.setItem("__notices", JSON.stringify(all));
      window.__lastNotice = this;
    }
  }
  Recorded.requestPermission = (cb) => Real.requestPermission(cb);
  Object.defineProperty(Recorded, "permission", { get: () => Real.permission });
  window.Notification = Recorded;
})();`

type shownNotice struct {
	Title, Body, Tag string
}

func shownNotices(t *testing.T, page playwright.Page) []shownNotice {
	t.Helper()
	raw, err := page.Evaluate(`sessionStorage.getItem("__notices") || "[]"`)
	must(t, err)
	var out []shownNotice
	must(t, json.Unmarshal([]byte(raw.(string)), &out))
	return out
}

// askingIntent plans one task whose first turn asks the person (once hold,
// when not nil, is closed), and scripts its second to complete it.
func askingIntent(t *testing.T, s *server, model *scripted.Server, hold <-chan struct{}) (id string, slug string) {
	in := planFor(t, s, "Greet notes readers.", plan.Task{Title: "Change the heading", Priority: "high", Labels: []string{"copy"},
		EstimatedLines: 5, Risk: "normal", Reasoning: "low", Summary: "The home page greets notes readers.",
		Criteria: []plan.Criterion{{Text: "The home page says Hello notes"}}, NoFailurePath: "a static page refuses nothing"})
	slug = "0001-change-the-heading"
	id = strconv.FormatInt(in.ID, 10)
	run := func(n int) string { return "intent-" + id + "-" + slug + "-a" + strconv.Itoa(n) }
	question, _ := json.Marshal(map[string]string{"question": "Should the greeting be bold?"})
	ask := scripted.Reply{ToolCalls: []scripted.Call{{Name: "intent_ask", Args: string(question)}}}
	if hold != nil {
		ask.Before = func() { <-hold }
	}
	model.On(scripted.RunID(run(1)), ask)
	model.On(scripted.RunID(run(2)),
		scripted.Reply{ToolCalls: []scripted.Call{change("acceptance/"+slug+"-c1.json", example("The home page says Hello notes", "/", "Hello notes")),
			edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p><b>Hello notes</b></p>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	return id, slug
}

// TestABuildersQuestionRaisesOneBrowserNotificationThatOpensTheIntent
// turns notifications on in Settings (the test grants the permission), runs
// a task that asks, and sees one notification raised on another page;
// clicking it opens the question.
func TestABuildersQuestionRaisesOneBrowserNotificationThatOpensTheIntent(t *testing.T) {
	s, model, page := signedInWithModel(t, "builder")
	must(t, page.Context().GrantPermissions([]string{"notifications"}, playwright.BrowserContextGrantPermissionsOptions{Origin: playwright.String(s.URL)}))
	must(t, page.AddInitScript(playwright.Script{Content: playwright.String(recordNotifications)}))
	_, err := page.Goto(s.URL + "/settings#notifications")
	must(t, err)
	state := page.GetByTestId("browser-notify-state")
	must(t, expect.Locator(state).ToHaveAttribute("data-notify-state", "off"))
	must(t, page.GetByTestId("notify-on").Click())
	must(t, expect.Locator(state).ToHaveAttribute("data-notify-state", "on"))
	_, err = page.GetByTestId("notifications").Screenshot(playwright.LocatorScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "settings-notifications.png"))})
	must(t, err)

	hold := make(chan struct{})
	id, slug := askingIntent(t, s, model, hold)
	runFromPage(t, page, s, mustID(t, id))
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("running"))
	// The owner is elsewhere when the builder asks; the tab asks the
	// console in the background.
	_, err = page.Goto(s.URL + "/knowledge")
	must(t, err)
	close(hold)
	deadline := time.Now().Add(30 * time.Second)
	for len(shownNotices(t, page)) == 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	// Several polls later it is still one.
	time.Sleep(7 * time.Second)
	got := shownNotices(t, page)
	if len(got) != 1 || got[0].Title != "A builder asks you" || got[0].Body != slug+" (site) asks: Should the greeting be bold?" {
		t.Fatalf("notifications %+v, want the question once", got)
	}
	_, err = page.Evaluate(`window.__lastNotice.onclick()`)
	must(t, err)
	must(t, page.WaitForURL(s.URL+"/backlog/intents/"+id+"#needs-"+slug))
	must(t, expect.Locator(page.GetByTestId("task-question")).ToContainText("Should the greeting be bold?"))
}

func mustID(t *testing.T, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	must(t, err)
	return n
}

// webhookReceiver answers 503 until it is opened, and counts each event
// id it accepted.
type webhookReceiver struct {
	mu       sync.Mutex
	open     bool
	tried    int
	accepted map[string]int
	kinds    map[string]string
}

func (r *webhookReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	var ev struct{ ID, Kind string }
	_ = json.Unmarshal(b, &ev)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tried++
	if !r.open {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	r.accepted[req.Header.Get("X-Autoapp-Event")]++
	r.kinds[req.Header.Get("X-Autoapp-Event")] = ev.Kind
}

// TestTheWebhookGetsEachEventOnceAcrossAKill has the webhook fail while
// a question's notice is pending, kills the server, starts it again and
// opens the webhook: the question arrives once, and the intent's done
// once after it.
func TestTheWebhookGetsEachEventOnceAcrossAKill(t *testing.T) {
	s, model, page := signedInWithModel(t, "builder")
	r := &webhookReceiver{accepted: map[string]int{}, kinds: map[string]string{}}
	hook := httptest.NewServer(r)
	defer hook.Close()
	_, err := page.Goto(s.URL + "/settings#notifications")
	must(t, err)
	must(t, page.GetByLabel("Webhook address").Fill(hook.URL+"/hook"))
	must(t, page.GetByTestId("save-notifications").Click())
	must(t, expect.Locator(page.GetByTestId("notice")).ToHaveText("Saved the notifications."))

	id, _ := askingIntent(t, s, model, nil)
	runFromPage(t, page, s, mustID(t, id))
	must(t, expect.Locator(page.GetByTestId("task-question")).ToBeVisible(playwright.LocatorAssertionsToBeVisibleOptions{Timeout: playwright.Float(60000)}))
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.mu.Lock()
		tried := r.tried
		r.mu.Unlock()
		if tried > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the webhook was never tried")
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, err = page.Goto(s.URL + "/settings#notifications")
	must(t, err)
	must(t, expect.Locator(page.GetByTestId("outbox-error")).ToContainText("The last failure: The webhook answered 503 Service Unavailable."))

	s.kill(t)
	r.mu.Lock()
	r.open = true
	r.mu.Unlock()
	s2 := startServerAt(t, s.Root)
	page2 := page
	_, err = page2.Goto(s2.URL + "/backlog/intents/" + id)
	must(t, err)
	if strings.Contains(page2.URL(), "/signin") {
		signIn(t, page2, ownerName, ownerPassword)
		_, err = page2.Goto(s2.URL + "/backlog/intents/" + id)
		must(t, err)
	}
	must(t, page2.GetByTestId("answer-form").Locator("textarea").Fill("Yes, bold."))
	must(t, page2.GetByTestId("answer-form").GetByRole("button").Click())
	must(t, page2.GetByTestId("run").Locator("summary").Click())
	must(t, page2.GetByTestId("run-confirm").Click())
	must(t, expect.Locator(page2.GetByTestId("intent-status")).ToContainText("done", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(60000)}))

	// The question's retry waits out its backoff; the done goes at once.
	deadline = time.Now().Add(40 * time.Second)
	for {
		r.mu.Lock()
		n := len(r.accepted)
		r.mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(3 * time.Second) // a repeat would come within a pass or two
	r.mu.Lock()
	defer r.mu.Unlock()
	kinds := map[string]int{}
	for event, n := range r.accepted {
		if n != 1 {
			t.Errorf("event %s was accepted %d times", event, n)
		}
		kinds[r.kinds[event]]++
	}
	if len(r.accepted) != 2 || kinds["question"] != 1 || kinds["done"] != 1 {
		t.Fatalf("the webhook accepted %v (%v), want the question and the done once each", r.accepted, r.kinds)
	}
}
