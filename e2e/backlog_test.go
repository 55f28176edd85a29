package e2e

import (
	"context"
	"regexp"
	"strconv"
	"testing"

	"github.com/playwright-community/playwright-go"

	"autoapp/intent"
	"autoapp/intent/plan"
)

// backlog is a fixture written into a running server's root through the
// service API, as the engineer and the executor will write it.
type backlog struct {
	svc    *intent.Service
	intent int64
	tasks  map[string]int64
}

func task(title, priority string, blockedBy ...string) plan.Task {
	return plan.Task{
		Title: title, Priority: priority, Labels: []string{"views"}, BlockedBy: blockedBy,
		EstimatedLines: 40, Risk: "normal", Reasoning: "medium",
		Summary:  "A change the owner asked for.",
		Criteria: []plan.Criterion{{Text: "The page lists the tags"}, {Text: "An empty tag is refused with a sentence", Failure: true}},
		Runbook:  []string{"Open the notes page and look for the tags."},
	}
}

// newBacklog makes the application notes with a stopped intent of four
// tasks: the first failed, two wait on it (blocked), one is queued.
func newBacklog(t *testing.T, root string) *backlog {
	t.Helper()
	ctx := context.Background()
	l := boot(t, root)
	_, err := l.Apps.CreateFromTemplate(ctx, "notes", "Notes", "static")
	must(t, err)
	must(t, l.Apps.Select(ctx, "notes"))

	svc := l.Backlog
	in, err := svc.OpenDraft(ctx, "notes", "Add tags to notes, and a filter by tag.", intent.Analysis{
		Restated:    []string{"Notes get tags, and the list can be filtered by one."},
		Assumptions: []string{"A tag is one lowercase word."},
	})
	must(t, err)
	b := &backlog{svc: svc, intent: in.ID, tasks: map[string]int64{}}
	for _, p := range []plan.Task{
		task("Add tags to notes", "high"),
		task("Filter notes by tag", "medium", "0001-add-tags-to-notes"),
		task("Show tag chips", "medium", "0001-add-tags-to-notes"),
		task("Say so when no note has a tag", "low"),
	} {
		added, err := svc.AddTask(ctx, in.ID, p)
		must(t, err)
		b.tasks[added.Slug] = added.ID
	}
	must(t, svc.Submit(ctx, in.ID))
	must(t, svc.MoveIntent(ctx, in.ID, intent.IntentRunning, "the owner pressed Run"))
	for _, id := range b.tasks {
		must(t, svc.MoveTask(ctx, id, intent.TaskInQueue, intent.Move{Reason: "a run starts", Actor: intent.ActorExecutor}))
	}
	first := b.tasks["0001-add-tags-to-notes"]
	runID := "intent-" + strconv.FormatInt(in.ID, 10) + "-0001-add-tags-to-notes-a1"
	must(t, svc.MoveTask(ctx, first, intent.TaskInProgress, intent.Move{Reason: "its turn", RunID: runID, Actor: intent.ActorExecutor}))
	must(t, svc.MoveTask(ctx, first, intent.TaskFailed, intent.Move{Reason: "expected status 200, got 404 on GET /tags", RunID: runID, Actor: intent.ActorExecutor}))
	must(t, svc.MoveIntent(ctx, in.ID, intent.IntentStopped, "0001-add-tags-to-notes failed"))
	return b
}

func TestTheBacklogShowsAStoppedIntentAndTakesTheOwnersChanges(t *testing.T) {
	s := startServer(t)
	page := newPage(t)
	createOwner(t, page, s)
	b := newBacklog(t, s.Root)
	ctx := context.Background()

	must(t, page.GetByTestId("rail-backlog").Click())
	row := page.GetByTestId("intent-" + strconv.FormatInt(b.intent, 10))
	must(t, expect.Locator(row).ToContainText("stopped"))
	must(t, expect.Locator(row).ToContainText("Add tags to notes, and a filter by tag."))
	must(t, row.GetByRole("link").First().Click())

	// The tasks in run order, with blocked and failed shown.
	must(t, expect.Locator(page.GetByTestId("request")).ToHaveText("Add tags to notes, and a filter by tag."))
	must(t, expect.Locator(page.GetByTestId("intent-live")).ToHaveAttribute("data-polling", "false"))
	rows := page.GetByTestId("tasks").Locator("tbody tr")
	must(t, expect.Locator(rows).ToHaveCount(4))
	order := []struct{ slug, status string }{
		{"0001-add-tags-to-notes", "failed"},
		{"0002-filter-notes-by-tag", "blocked"},
		{"0003-show-tag-chips", "blocked"},
		{"0004-say-so-when-no-note-has", "in-queue"},
	}
	for i, o := range order {
		r := rows.Nth(i)
		must(t, expect.Locator(r).ToHaveAttribute("data-testid", "task-"+o.slug))
		must(t, expect.Locator(r.GetByTestId("status")).ToHaveText(o.status))
	}
	// The failure is what needs the person, first on the page.
	needs := page.GetByTestId("needs-0001-add-tags-to-notes")
	must(t, expect.Locator(needs.GetByTestId("fail-reason")).ToHaveText("expected status 200, got 404 on GET /tags"))
	must(t, expect.Locator(needs).ToContainText("Run again to retry, or ask the engineer to revise this task."))
	failed := page.GetByTestId("task-0001-add-tags-to-notes")
	must(t, expect.Locator(failed.GetByTestId("tier")).ToHaveText("standard"))
	must(t, expect.Locator(failed.GetByTestId("tier")).ToHaveAttribute("title", regexp.MustCompile(`reasoning medium`)))
	must(t, expect.Locator(page.GetByTestId("task-0002-filter-notes-by-tag")).ToContainText("0001-add-tags-to-notes"))

	// Change a model; a malformed one is refused beside its task.
	last := page.GetByTestId("task-0004-say-so-when-no-note-has")
	must(t, last.GetByLabel("Model for 0004-say-so-when-no-note-has").Fill("ollama:qwen3:27b"))
	must(t, last.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Set"}).Click())
	last = page.GetByTestId("task-0004-say-so-when-no-note-has")
	must(t, expect.Locator(last.GetByTestId("model-source")).ToHaveText("chosen for this task"))
	must(t, expect.Locator(last.GetByLabel("Model for 0004-say-so-when-no-note-has")).ToHaveValue("ollama:qwen3:27b"))
	must(t, last.GetByLabel("Model for 0004-say-so-when-no-note-has").Fill("ollama:"))
	must(t, last.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Set"}).Click())
	taskID := strconv.FormatInt(b.tasks["0004-say-so-when-no-note-has"], 10)
	must(t, expect.Locator(page.GetByTestId("refusal-task-"+taskID)).ToBeVisible())

	// Remove a task through the inline confirmation.
	last = page.GetByTestId("task-0004-say-so-when-no-note-has")
	must(t, last.GetByText("Remove", playwright.LocatorGetByTextOptions{Exact: playwright.Bool(true)}).Click())
	must(t, expect.Locator(last.GetByTestId("remove-confirm")).ToBeVisible())
	must(t, last.GetByTestId("remove-confirm").Click())
	must(t, expect.Locator(page.GetByTestId("task-0004-say-so-when-no-note-has").GetByTestId("status")).ToHaveText("removed"))

	// The plan and the history of a task.
	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "0001-add-tags-to-notes"}).First().Click())
	// The plan reads as a document: its front matter a table, its criteria
	// a checklist, its sections headings.
	must(t, expect.Locator(page.GetByTestId("plan-facts")).ToContainText("Priority"))
	must(t, expect.Locator(page.GetByTestId("plan").GetByRole("heading", playwright.LocatorGetByRoleOptions{Name: "Acceptance criteria"})).ToBeVisible())
	empty := page.GetByTestId("plan").Locator("li", playwright.LocatorLocatorOptions{HasText: "(when it goes wrong) An empty tag is refused with a sentence"})
	must(t, expect.Locator(empty.Locator("input[type=checkbox]")).Not().ToBeChecked())
	must(t, expect.Locator(page.GetByTestId("plan").Locator("li", playwright.LocatorLocatorOptions{HasText: plan.HostCriterion})).ToBeVisible())
	must(t, expect.Locator(page.GetByTestId("history")).ToContainText("expected status 200, got 404 on GET /tags"))
	_, err := page.GoBack()
	must(t, err)
	_, err = page.Reload()
	must(t, err)

	// The intent starts running behind the owner's back: the withdraw they
	// confirm is refused with its sentence, and the page starts polling.
	must(t, b.svc.MoveIntent(ctx, b.intent, intent.IntentRunning, "the owner pressed Run"))
	must(t, page.GetByText("Withdraw this intent").Click())
	must(t, page.GetByTestId("withdraw-confirm").Click())
	must(t, expect.Locator(page.GetByTestId("refusal-withdraw")).ToContainText("running"))
	must(t, expect.Locator(page.GetByTestId("intent-live")).ToHaveAttribute("data-polling", "true"))

	// It stops: the polled part shows it by itself and stops polling.
	must(t, b.svc.MoveIntent(ctx, b.intent, intent.IntentStopped, "the owner pressed Stop"))
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("stopped"))
	must(t, expect.Locator(page.GetByTestId("intent-live")).ToHaveAttribute("data-polling", "false"))

	// Withdraw for real.
	_, err = page.Goto(s.URL + "/backlog/intents/" + strconv.FormatInt(b.intent, 10))
	must(t, err)
	must(t, page.GetByText("Withdraw this intent").Click())
	must(t, page.GetByTestId("withdraw-confirm").Click())
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("withdrawn"))
	for slug := range b.tasks {
		must(t, expect.Locator(page.GetByTestId("task-"+slug).GetByTestId("status")).ToHaveText("removed"))
	}
}
