package handlers_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"autoapp/intent"
	"autoapp/intent/request"
	"autoapp/intent/spend"
)

// turnOf runs one builder turn of a task as the executor would: the task
// in progress under its run id, a usage row when the turn ends, then the
// move the verdict decided.
func (s *server) turnOf(t testing.TB, in intent.Intent, task intent.Task, n int, u intent.Usage, to intent.TaskStatus) string {
	t.Helper()
	ctx := context.Background()
	runID := fmt.Sprintf("intent-%d-%s-a%d", in.ID, task.Slug, n)
	if err := s.backlog.MoveTask(ctx, task.ID, intent.TaskInProgress, intent.Move{Reason: "its turn", RunID: runID, Actor: intent.ActorExecutor}); err != nil {
		t.Fatal(err)
	}
	u.Kind, u.RunID, u.AppID = intent.KindBuilder, runID, in.AppID
	if err := s.launcher.Usage.RecordUsage(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := s.backlog.MoveTask(ctx, task.ID, to, intent.Move{Reason: "judged", RunID: runID, Actor: intent.ActorExecutor,
		Question: "Which colour should the tags be?"}); err != nil {
		t.Fatal(err)
	}
	return runID
}

// running is a submitted intent of one task, started.
func (s *server) running(t testing.TB, titles ...string) (intent.Intent, []intent.Task) {
	t.Helper()
	steps := make([]planStep, len(titles))
	for i, title := range titles {
		steps[i] = planStep{title: title, priority: "high"}
	}
	in, tasks := s.draft(t, "Add tags to notes.", intent.Analysis{Restated: []string{"Notes get tags."}}, steps...)
	if err := s.backlog.Submit(context.Background(), in.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.backlog.BeginRun(context.Background(), in.ID); err != nil {
		t.Fatal(err)
	}
	return in, tasks
}

func TestPricesAreSavedFromSettingsAndEveryProblemIsNamed(t *testing.T) {
	t.Parallel()
	s, b := withOwner(t)
	// With no application and no prices, the Overview still answers.
	r := b.get("/overview")
	wantStatus(t, r, fiber.StatusOK)
	wantSentence(t, r, `data-testid="needs-none"`)
	r = b.get("/settings")
	wantStatus(t, r, fiber.StatusOK)
	wantSentence(t, r, `data-testid="prices-missing"`)

	// A refusal names the row and the field, keeps what was typed, and
	// writes nothing.
	r = b.post("/settings/prices", url.Values{"rows": {"2"}, "model_0": {"z-ai/glm-5.3"}, "input_0": {"cheap"}, "output_0": {"2.2"},
		"model_1": {""}, "input_1": {""}, "output_1": {""}, "budget_day": {"10"}})
	wantStatus(t, r, fiber.StatusUnprocessableEntity)
	wantSentence(t, r, `row 1 (z-ai/glm-5.3): input &#34;cheap&#34; is not a number of dollars`)
	wantSentence(t, r, `value="cheap"`)
	if _, err := os.Stat(s.book.Path()); !os.IsNotExist(err) {
		t.Fatalf("a refused form wrote %s", spend.File)
	}

	r = b.post("/settings/prices", url.Values{"rows": {"2"}, "model_0": {"z-ai/glm-5.3"}, "input_0": {"0.6"}, "output_0": {"2.2"},
		"model_1": {""}, "input_1": {""}, "output_1": {""}, "budget_day": {"10"}})
	wantRedirect(t, r, "/settings#prices")
	l := s.book.Prices()
	if l.Problem != "" || l.Models["z-ai/glm-5.3"] != (spend.Price{Input: 0.6, Output: 2.2}) || l.DayBudget == nil || *l.DayBudget != 10 {
		t.Fatalf("saved: %+v", l)
	}
	r = b.get("/settings")
	wantSentence(t, r, `value="z-ai/glm-5.3"`)
	wantSentence(t, r, `value="2.2"`)

	// A file broken by hand prices nothing, and the page says why.
	if err := os.WriteFile(s.book.Path(), []byte(`{"m": {"input": "a lot"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = b.get("/settings")
	wantSentence(t, r, `data-testid="prices-problem"`)
	wantSentence(t, r, spend.File+" could not be read")
}

func TestTheOverviewPageShowsTodayTheDaysAsBarsAndEachModelAndKind(t *testing.T) {
	t.Parallel()
	s, b := withApp(t)
	in, tasks := s.running(t, "Add tags to notes")
	s.turnOf(t, in, tasks[0], 1, intent.Usage{Model: "openrouter:z-ai/glm-5.3", Input: 200_000, Output: 10_000, At: s.clock.Now().AddDate(0, 0, -3)}, intent.TaskInQueue)
	s.turnOf(t, in, tasks[0], 2, intent.Usage{Model: "openrouter:z-ai/glm-5.3", Input: 100_000, Output: 5_000}, intent.TaskCompleted)
	if err := s.launcher.Usage.RecordUsage(context.Background(), intent.Usage{Kind: intent.KindChat, AppID: appID, Model: "ollama:qwen3", Input: 900, Output: 90}); err != nil {
		t.Fatal(err)
	}

	// Nothing priced: the bars are tokens, the cost is a dash.
	r := b.get("/overview")
	wantStatus(t, r, fiber.StatusOK)
	if n := strings.Count(r.body, `data-testid="bar"`); n != 30 {
		t.Fatalf("%d bars, want one a day for 30 days", n)
	}
	wantSentence(t, r, `data-measure="tokens"`)
	wantSentence(t, r, `<strong data-testid="today-cost">—</strong>`)

	wantRedirect(t, b.post("/settings/prices", url.Values{"rows": {"1"}, "model_0": {"z-ai/glm-5.3"}, "input_0": {"1"}, "output_0": {"10"}, "budget_day": {"0.10"}}),
		"/settings#prices")
	r = b.get("/overview")
	wantStatus(t, r, fiber.StatusOK)
	wantSentence(t, r, `data-measure="cost"`)
	today := spend.Dollars((100_000*1 + 5_000*10) / 1e6)
	wantSentence(t, r, `<strong data-testid="today-cost">`+today+`</strong>`)
	// Over the budget of $0.10 a day, shown and not enforced.
	wantSentence(t, r, "at the day's cap of $0.10 a day")
	wantSentence(t, r, "990 tokens of unpriced models not counted")
	for _, want := range []string{"openrouter:z-ai/glm-5.3", "ollama:qwen3", ">builder<", ">chat<"} {
		wantSentence(t, r, want)
	}
	// The bar of three days ago says its day and cost in its title.
	day := s.clock.Now().AddDate(0, 0, -3).Format("Mon 2 Jan")
	wantSentence(t, r, "<title>"+day+": "+spend.Dollars((200_000*1+10_000*10)/1e6))
}

func TestTheRailIsMarkedWhileATaskWaitsForThePerson(t *testing.T) {
	t.Parallel()
	s, b := withApp(t)
	r := b.get("/apps")
	if strings.Contains(r.body, `data-testid="rail-mark"`) {
		t.Fatal("the rail is marked with nothing waiting")
	}
	in, tasks := s.running(t, "Add tags to notes", "Filter notes by tag")
	s.turnOf(t, in, tasks[0], 1, intent.Usage{Model: "m", Input: 10, Output: 1}, intent.TaskNeedsAnswer)

	for _, path := range []string{"/apps", "/settings", "/knowledge", "/backlog"} {
		r = b.get(path)
		wantStatus(t, r, fiber.StatusOK)
		rail := element(t, r, `data-testid="rail-backlog"`, "</a>")
		if !strings.Contains(rail, `data-testid="rail-mark"`) || !strings.Contains(rail, "1 thing needs you") {
			t.Fatalf("%s: the rail's Backlog is not marked: %s", path, rail)
		}
	}
	// The panel at the top of the Backlog says what.
	panel := element(t, r, `data-testid="overview"`, "</ul>")
	if !strings.Contains(panel, `data-testid="need-answer"`) || !strings.Contains(panel, "Which colour should the tags be?") {
		t.Fatalf("the panel: %s", panel)
	}

	// Answered, the mark goes.
	wantRedirect(t, b.post(taskPath(tasks[0].ID)+"/answer", url.Values{"answer": {"Blue."}}), intentPath(in.ID))
	r = b.get("/apps")
	if strings.Contains(r.body, `data-testid="rail-mark"`) {
		t.Fatal("the rail is still marked after the answer")
	}
	r = b.get("/backlog")
	wantSentence(t, r, `data-testid="needs-none"`)
}

// Many failed tasks in stopped intents: the panel lists a screen of them
// and says how many more, and the rail counts them all.
func TestThePanelListsAFewOfEachKindAndCountsTheRest(t *testing.T) {
	t.Parallel()
	s, b := withApp(t)
	for range 8 {
		in, tasks := s.running(t, "Add tags to notes")
		s.turnOf(t, in, tasks[0], 1, intent.Usage{Model: "m", Input: 10, Output: 1}, intent.TaskFailed)
		s.moveIntent(t, in.ID, intent.IntentStopped)
	}
	r := b.get("/backlog")
	wantStatus(t, r, fiber.StatusOK)
	if n := strings.Count(r.body, `data-testid="need-failed"`); n != 5 {
		t.Errorf("the panel lists %d failed tasks, want 5", n)
	}
	wantSentence(t, r, `data-testid="need-more-failed">and 3 more failed tasks.<`)
	rail := element(t, r, `data-testid="rail-backlog"`, "</a>")
	if !strings.Contains(rail, "8 things need you") {
		t.Errorf("the rail: %s", rail)
	}
	// Every other page counts as many.
	if rail := element(t, b.get("/settings"), `data-testid="rail-backlog"`, "</a>"); !strings.Contains(rail, "8 things need you") {
		t.Errorf("the rail on Settings: %s", rail)
	}
}

func TestAnIntentAndItsTasksShowWhatTheirTurnsCost(t *testing.T) {
	t.Parallel()
	s, b := withApp(t)
	if err := os.MkdirAll(filepath.Dir(s.book.Path()), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.book.Path(), []byte(`{"m": {"input": 2, "output": 8}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	in, tasks := s.running(t, "Add tags to notes", "Filter notes by tag")
	first := s.turnOf(t, in, tasks[0], 1, intent.Usage{Model: "m", Input: 40_000, Output: 2_000, Partial: true}, intent.TaskInQueue)
	second := s.turnOf(t, in, tasks[0], 2, intent.Usage{Model: "m", Input: 60_000, Output: 3_000}, intent.TaskCompleted)
	s.turnOf(t, in, tasks[1], 1, intent.Usage{Model: "unpriced", Input: 500, Output: 50}, intent.TaskFailed)
	s.clock.Advance(time.Minute)

	r := b.get(intentPath(in.ID))
	wantStatus(t, r, fiber.StatusOK)
	all := (100_000*2.0 + 5_000*8.0) / 1e6
	wantSentence(t, r, `data-testid="intent-spend"`)
	wantSentence(t, r, "at least "+spend.Dollars(all))
	row := element(t, r, `data-testid="task-`+tasks[0].Slug+`"`, "</td>")
	if !strings.Contains(row, "at least "+spend.Dollars(all)) || !strings.Contains(row, "at least 100,000 in, 5,000 out") {
		t.Fatalf("the first task's row: %s", row)
	}
	row = element(t, r, `data-testid="task-`+tasks[1].Slug+`"`, "</td>")
	if !strings.Contains(row, "<strong>—</strong>") || !strings.Contains(row, "500 in, 50 out") || !strings.Contains(row, "no model here has a price") {
		t.Fatalf("the unpriced task's row: %s", row)
	}

	r = b.get(taskPath(tasks[0].ID))
	wantStatus(t, r, fiber.StatusOK)
	for _, id := range []string{first, second} {
		wantSentence(t, r, `data-testid="turn-`+id+`"`)
	}
	wantSentence(t, r, "partial")
	wantSentence(t, r, spend.Dollars((60_000*2.0+3_000*8.0)/1e6))
}

// TestTheRailCountsAPlanWaitingForApprovalAndADraftsQuestions: a guided
// plan waiting for approval and a draft whose engineer asked each mark the
// rail's Backlog and are listed on the panel with where the owner acts.
// (Before, the rail stayed unmarked.)
func TestTheRailCountsAPlanWaitingForApprovalAndADraftsQuestions(t *testing.T) {
	t.Parallel()
	s, b := withApp(t)
	ctx := context.Background()
	requests := s.launcher.Requests
	marked := func(t *testing.T, want string) *response {
		t.Helper()
		r := b.get("/backlog")
		wantStatus(t, r, fiber.StatusOK)
		rail := element(t, r, `data-testid="rail-backlog"`, "</a>")
		if want == "" {
			if strings.Contains(rail, `data-testid="rail-mark"`) {
				t.Fatalf("the rail is marked: %s", rail)
			}
			return r
		}
		if !strings.Contains(rail, `data-testid="rail-mark"`) || !strings.Contains(rail, want) {
			t.Fatalf("the rail's Backlog is not marked %q: %s", want, rail)
		}
		return r
	}

	st, err := requests.Create(ctx, appID, "Add tags", request.ModeGuided, "op-create")
	if err != nil {
		t.Fatal(err)
	}
	in, _ := s.draft(t, "Add tags", intent.Analysis{Restated: []string{"Add tags."}}, planStep{title: "Add tags", priority: "medium"})
	if _, err := requests.Link(ctx, st.ID, in.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.backlog.Submit(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if st, err = requests.PlanSubmitted(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	r := marked(t, "1 thing needs you")
	panel := element(t, r, `data-testid="overview"`, "</ul>")
	if !strings.Contains(panel, `data-testid="need-approval"`) || !strings.Contains(panel, fmt.Sprintf(`href="/backlog/intents/%d"`, in.ID)) ||
		!strings.Contains(panel, "Review and approve the plan") {
		t.Fatalf("the panel: %s", panel)
	}
	if _, err := requests.Approve(ctx, st.ID, st.Revision, "op-approve"); err != nil {
		t.Fatal(err)
	}
	marked(t, "")

	if err := s.backlog.Withdraw(ctx, "op-withdraw", in.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.backlog.OpenDraft(ctx, appID, "Sell shirts", intent.Analysis{Restated: []string{"A shop."}, Questions: []string{"Which sizes?"}}); err != nil {
		t.Fatal(err)
	}
	r = marked(t, "1 thing needs you")
	panel = element(t, r, `data-testid="overview"`, "</ul>")
	if !strings.Contains(panel, `data-testid="need-draft-questions"`) || !strings.Contains(panel, `action="/request/select"`) ||
		!strings.Contains(panel, "the engineer asks 1 question about the draft") {
		t.Fatalf("the panel: %s", panel)
	}
}
