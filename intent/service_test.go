package intent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"autoapp/intent"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
)

func TestOpenDraftStartsFromTheRequestAsTyped(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	e.app(t, "notes")
	request := "  Add tags to notes,\nand a filter.  "
	in, err := e.svc.OpenDraft(ctx, "notes", request, intent.Analysis{
		Restated:  []string{"Notes get tags; the list filters by one."},
		Fits:      []string{"The notes list", "  "},
		Questions: []string{"Can a note have several tags?"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if in.Status != intent.IntentDraft || in.Request != request || in.AppID != "notes" || in.Mode != intent.ModeAutonomous {
		t.Fatalf("intent: %+v", in)
	}
	if !slices.Equal(in.Fits, []string{"The notes list"}) || in.Conflicts == nil || len(in.Conflicts) != 0 {
		t.Fatalf("analysis: %+v", in.Analysis)
	}
	if !in.BeingWritten() || !in.CreatedAt.Equal(e.clock.Now()) {
		t.Fatalf("being written %v, created %v", in.BeingWritten(), in.CreatedAt)
	}
	if n := e.count(t, `SELECT count(*) FROM intent_events WHERE intent_id = ? AND from_status = '' AND to_status = 'draft'`, in.ID); n != 1 {
		t.Fatalf("%d opening events", n)
	}

	wantRefusal(t, func() error { _, err := e.svc.OpenDraft(ctx, "nope", "x", intent.Analysis{}); return err }(), refusal.NotFound)
	e.app(t, "shop")
	wantRefusal(t, func() error { _, err := e.svc.OpenDraft(ctx, "shop", " \n", intent.Analysis{}); return err }(), refusal.Invalid)
}

func TestOpenDraftAgainReplacesTheAnalysisAndKeepsTasksAndRequest(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	first, tasks := e.draft(t, "notes", "Add tags")
	if err := e.svc.Submit(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	again, err := e.svc.OpenDraft(ctx, "notes", "Something else entirely", intent.Analysis{
		Restated:    []string{"Tags, answered."},
		Assumptions: []string{"One tag per note."},
	})
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || again.Request != first.Request {
		t.Fatalf("a second draft: %+v", again)
	}
	if !slices.Equal(again.Restated, []string{"Tags, answered."}) || !slices.Equal(again.Assumptions, []string{"One tag per note."}) {
		t.Fatalf("analysis not replaced: %+v", again.Analysis)
	}
	if !again.BeingWritten() {
		t.Fatal("a reopened draft is being written again")
	}
	d, err := e.svc.Get(ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Tasks) != 1 || d.Tasks[0].ID != tasks[0].ID {
		t.Fatalf("tasks after reopening: %+v", d.Tasks)
	}
	if n := e.count(t, `SELECT count(*) FROM intents WHERE app_id = 'notes'`); n != 1 {
		t.Fatalf("%d intents", n)
	}
}

func TestAddTaskNumbersSlugsAcrossTheIntentsOfAnApplication(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	first, tasks := e.draft(t, "notes", "Add tags to notes", "Filter the list by tag")
	if tasks[0].Slug != "0001-add-tags-to-notes" || tasks[1].Slug != "0002-filter-the-list-by-tag" {
		t.Fatalf("slugs %s, %s", tasks[0].Slug, tasks[1].Slug)
	}
	if tasks[0].Status != intent.TaskProposed || tasks[0].AppID != "notes" || tasks[0].IntentID != first.ID {
		t.Fatalf("task: %+v", tasks[0])
	}
	if err := e.svc.Withdraw(ctx, "op-w", first.ID); err != nil {
		t.Fatal(err)
	}
	_, more := e.openWith(t, "notes", "Export notes")
	if more[0].Slug != "0003-export-notes" {
		t.Fatalf("second intent's slug %s", more[0].Slug)
	}
	_, other := e.draft(t, "shop", "Add a cart")
	if other[0].Slug != "0001-add-a-cart" {
		t.Fatalf("another application's slug %s", other[0].Slug)
	}
	slugs, err := e.svc.AllSlugs(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(slugs, []string{"0001-add-tags-to-notes", "0002-filter-the-list-by-tag", "0003-export-notes"}) {
		t.Fatalf("slugs %v", slugs)
	}
}

func TestAddTaskRefusesAPlanWithProblemsAndStoresNothing(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, _ := e.draft(t, "notes", "Add tags")
	tasksBefore := e.count(t, `SELECT count(*) FROM tasks`)
	eventsBefore := e.count(t, `SELECT count(*) FROM task_events`)

	bad := planned("")
	bad.Priority = "urgent"
	_, err := e.svc.AddTask(ctx, in.ID, bad)
	ie := wantRefusal(t, err, refusal.Invalid)
	var fields []string
	for _, p := range ie.Problems {
		fields = append(fields, p.Field)
	}
	if !slices.Contains(fields, "title") || !slices.Contains(fields, "priority") {
		t.Fatalf("problems %v", ie.Problems)
	}
	if !strings.HasPrefix(ie.Message, "The task was not added: ") {
		t.Fatalf("message %q", ie.Message)
	}

	// The graph: a blocker that is not in the intent.
	_, err = e.svc.AddTask(ctx, in.ID, planned("Show tags", "0042-nowhere"))
	ie = wantRefusal(t, err, refusal.Invalid)
	if len(ie.Problems) == 0 || !strings.Contains(ie.Problems[0].Field, "blocked_by[0]") {
		t.Fatalf("graph problems %v", ie.Problems)
	}

	if e.count(t, `SELECT count(*) FROM tasks`) != tasksBefore || e.count(t, `SELECT count(*) FROM task_events`) != eventsBefore {
		t.Fatal("a refused task left rows behind")
	}
	slugs, _ := e.svc.AllSlugs(ctx, "notes")
	if len(slugs) != 1 {
		t.Fatalf("slugs %v", slugs)
	}
}

func TestAddTaskRefusesMoreThanTwelveLiveTasks(t *testing.T) {
	e := mustOpen(t)
	titles := make([]string, plan.MaxLiveTasks)
	for i := range titles {
		titles[i] = "Change part " + string(rune('a'+i))
	}
	in, _ := e.draft(t, "notes", titles...)
	_, err := e.svc.AddTask(context.Background(), in.ID, planned("One too many"))
	ie := wantRefusal(t, err, refusal.Invalid)
	if len(ie.Problems) == 0 || ie.Problems[0].Field != "tasks" {
		t.Fatalf("problems %v", ie.Problems)
	}
}

func TestAddTaskOnlyOnADraftWithoutQuestions(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	e.app(t, "notes")
	in, err := e.svc.OpenDraft(ctx, "notes", "Tags", intent.Analysis{Questions: []string{"One tag or several?"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.AddTask(ctx, in.ID, planned("Add tags"))
	wantRefusal(t, err, refusal.Conflict)

	if _, err := e.svc.OpenDraft(ctx, "notes", "", intent.Analysis{Assumptions: []string{"Several."}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.AddTask(ctx, in.ID, planned("Add tags")); err != nil {
		t.Fatal(err)
	}
	e.moveIntent(t, in.ID, intent.IntentRunning)
	_, err = e.svc.AddTask(ctx, in.ID, planned("Show tags"))
	if ie := wantRefusal(t, err, refusal.Conflict); ie.Message != "Tasks are added only to a draft; intent 1 is running." {
		t.Fatalf("message %q", ie.Message)
	}
	_, err = e.svc.AddTask(ctx, 99, planned("Show tags"))
	wantRefusal(t, err, refusal.NotFound)
}

func TestSubmitChecksThePlanAndStampsIt(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	e.app(t, "notes")
	in, err := e.svc.OpenDraft(ctx, "notes", "Tags", intent.Analysis{Questions: []string{"One tag or several?"}})
	if err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, e.svc.Submit(ctx, in.ID), refusal.Conflict) // open questions
	if _, err := e.svc.OpenDraft(ctx, "notes", "", intent.Analysis{}); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, e.svc.Submit(ctx, in.ID), refusal.Invalid) // no tasks
	if _, err := e.svc.AddTask(ctx, in.ID, planned("Add tags")); err != nil {
		t.Fatal(err)
	}
	at := e.clock.Set(time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC))
	if err := e.svc.Submit(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	d, err := e.svc.Get(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.BeingWritten() || !d.SubmittedAt.Equal(at) {
		t.Fatalf("submitted at %v, being written %v", d.SubmittedAt, d.BeingWritten())
	}
	// Another task means the plan is being written again.
	if _, err := e.svc.AddTask(ctx, in.ID, planned("Show tags")); err != nil {
		t.Fatal(err)
	}
	if d, _ := e.svc.Get(ctx, in.ID); !d.BeingWritten() {
		t.Fatal("a task added after Submit leaves the plan submitted")
	}
	e.moveIntent(t, in.ID, intent.IntentRunning)
	wantRefusal(t, e.svc.Submit(ctx, in.ID), refusal.Conflict)
}

func TestGetShowsRunOrderBlockedTiersAndModels(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	e.app(t, "notes")
	in, err := e.svc.OpenDraft(ctx, "notes", "Tags", intent.Analysis{})
	if err != nil {
		t.Fatal(err)
	}
	add := func(p plan.Task) intent.Task {
		t.Helper()
		task, err := e.svc.AddTask(ctx, in.ID, p)
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	low := planned("Store tags")
	low.Priority = "low"
	a := add(low)
	blocked := planned("Filter by tag", a.Slug)
	blocked.Priority = "high"
	blocked.Risk = "high"
	b := add(blocked)
	high := planned("Show tags")
	high.Priority = "high"
	c := add(high)
	gone := add(planned("Colour tags"))
	if err := e.svc.RemoveTask(ctx, "op-rm", gone.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.SetTierModels(ctx, "op-tiers", map[string]string{"quick": "ollama:qwen3:4b"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.SetTaskModel(ctx, "op-model", c.ID, "gpt-5-mini"); err != nil {
		t.Fatal(err)
	}
	for _, task := range []intent.Task{a, b, c} {
		e.move(t, task.ID, intent.TaskInQueue, "")
	}

	d, err := e.svc.Get(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, bt := range d.Tasks {
		order = append(order, bt.Slug)
	}
	if !slices.Equal(order, []string{c.Slug, a.Slug, b.Slug, gone.Slug}) {
		t.Fatalf("order %v", order)
	}
	show, store, filter := d.Tasks[0], d.Tasks[1], d.Tasks[2]
	if !filter.Blocked || !slices.Equal(filter.WaitingOn, []string{a.Slug}) || store.Blocked || show.Blocked {
		t.Fatalf("blocked: %+v %+v", filter.WaitingOn, store.WaitingOn)
	}
	if filter.Tier != plan.TierDeep || len(filter.TierReasons) == 0 || store.Tier != plan.TierQuick {
		t.Fatalf("tiers %s %v, %s", filter.Tier, filter.TierReasons, store.Tier)
	}
	if show.RunsOn != "gpt-5-mini" || show.RunsOnFrom != "task" ||
		store.RunsOn != "ollama:qwen3:4b" || store.RunsOnFrom != "tier quick" || filter.RunsOn != "" {
		t.Fatalf("models: %q %q, %q %q, %q", show.RunsOn, show.RunsOnFrom, store.RunsOn, store.RunsOnFrom, filter.RunsOn)
	}

	// Its blocker completed, the task is no longer blocked.
	e.move(t, a.ID, intent.TaskInProgress, "r1")
	e.move(t, a.ID, intent.TaskCompleted, "r1")
	td, err := e.svc.Task(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if td.Blocked || len(td.WaitingOn) != 0 {
		t.Fatalf("still blocked: %+v", td.WaitingOn)
	}
	if _, err := e.svc.Get(ctx, 99); err == nil {
		t.Fatal("a missing intent was found")
	} else {
		wantRefusal(t, err, refusal.NotFound)
	}
}

func TestTaskHistoryOldestFirst(t *testing.T) {
	e := mustOpen(t)
	_, tasks := e.draft(t, "notes", "Add tags")
	id := tasks[0].ID
	e.move(t, id, intent.TaskInQueue, "")
	e.move(t, id, intent.TaskInProgress, "r1")
	d, err := e.svc.Task(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, ev := range d.Events {
		steps = append(steps, string(ev.From)+">"+string(ev.To))
	}
	if !slices.Equal(steps, []string{">proposed", "proposed>in-queue", "in-queue>in-progress"}) || d.Events[2].RunID != "r1" {
		t.Fatalf("history %v", steps)
	}
	_, err = e.svc.Task(context.Background(), 99)
	wantRefusal(t, err, refusal.NotFound)
}

func TestListNewestFirstWithCounts(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	first, tasks := e.draft(t, "notes", "Add tags", "Show tags")
	e.moveIntent(t, first.ID, intent.IntentRunning)
	e.move(t, tasks[0].ID, intent.TaskInQueue, "")
	second, _ := e.openWith(t, "notes", "Export notes")
	e.draft(t, "shop", "Add a cart")

	list, err := e.svc.List(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != second.ID || list[1].ID != first.ID {
		t.Fatalf("list %+v", list)
	}
	if list[1].Counts[intent.TaskInQueue] != 1 || list[1].Counts[intent.TaskProposed] != 1 || list[1].Live != 2 ||
		list[0].Counts[intent.TaskProposed] != 1 || !list[0].BeingWritten() || list[1].BeingWritten() {
		t.Fatalf("counts %v %v", list[0].Counts, list[1].Counts)
	}
	if none, err := e.svc.List(ctx, "nothing"); err != nil || len(none) != 0 {
		t.Fatalf("an application without intents: %v %v", none, err)
	}
}

// stoppedWithEveryStatus makes a stopped intent with a task in each status
// a stopped intent can hold: proposed, in-queue, completed, failed,
// interrupted and needs-answer.
func stoppedWithEveryStatus(t *testing.T, e *env, appID string) (intent.Intent, map[intent.TaskStatus]intent.Task) {
	t.Helper()
	in, tasks := e.draft(t, appID, "Stay proposed", "Wait in queue", "Complete", "Fail", "Be interrupted", "Ask a question")
	e.moveIntent(t, in.ID, intent.IntentRunning)
	for i, task := range tasks[1:] {
		e.move(t, task.ID, intent.TaskInQueue, "")
		if i == 0 {
			continue
		}
		e.move(t, task.ID, intent.TaskInProgress, appID+"-run-"+task.Slug)
	}
	e.move(t, tasks[2].ID, intent.TaskCompleted, "")
	e.move(t, tasks[3].ID, intent.TaskFailed, "")
	e.move(t, tasks[4].ID, intent.TaskInterrupted, "")
	e.move(t, tasks[5].ID, intent.TaskNeedsAnswer, "")
	e.moveIntent(t, in.ID, intent.IntentStopped)
	byStatus := map[intent.TaskStatus]intent.Task{}
	for _, task := range tasks {
		byStatus[e.status(t, task.ID)] = task
	}
	return in, byStatus
}

func TestWithdrawADraft(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, tasks := e.draft(t, "notes", "Add tags", "Show tags")
	if err := e.svc.Withdraw(ctx, "op-1", in.ID); err != nil {
		t.Fatal(err)
	}
	if e.intentStatus(t, in.ID) != intent.IntentWithdrawn {
		t.Fatal("the draft was not withdrawn")
	}
	for _, task := range tasks {
		ev := e.lastEvent(t, task.ID)
		if e.status(t, task.ID) != intent.TaskRemoved || ev.From != intent.TaskProposed || ev.Reason != "the intent was withdrawn" || ev.Actor != intent.ActorOwner {
			t.Fatalf("task %s: %+v", task.Slug, ev)
		}
	}
	// A new draft can open once the old one is withdrawn.
	if _, err := e.svc.OpenDraft(ctx, "notes", "Again", intent.Analysis{}); err != nil {
		t.Fatal(err)
	}
}

func TestWithdrawAStoppedIntentKeepsCompletedTasks(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, byStatus := stoppedWithEveryStatus(t, e, "notes")
	before := map[int64]int{}
	for _, task := range byStatus {
		before[task.ID] = e.state(t, task.ID).Events
	}
	if err := e.svc.Withdraw(ctx, "op-1", in.ID); err != nil {
		t.Fatal(err)
	}
	for status, task := range byStatus {
		after := e.state(t, task.ID)
		if status == intent.TaskCompleted {
			if after.Status != intent.TaskCompleted || after.Events != before[task.ID] {
				t.Fatalf("the completed task changed: %+v", after)
			}
			continue
		}
		ev := e.lastEvent(t, task.ID)
		if after.Status != intent.TaskRemoved || after.Events != before[task.ID]+1 || ev.From != status {
			t.Fatalf("%s task: %+v, last event %+v", status, after, ev)
		}
	}
	var ev struct {
		From string `db:"from_status"`
		To   string `db:"to_status"`
	}
	if err := e.db.Read.Get(&ev, `SELECT from_status, to_status FROM intent_events WHERE intent_id = ? ORDER BY id DESC LIMIT 1`, in.ID); err != nil {
		t.Fatal(err)
	}
	if ev.From != "stopped" || ev.To != "withdrawn" {
		t.Fatalf("intent event %+v", ev)
	}

	// The same operation again changes nothing and writes no event.
	events := e.count(t, `SELECT (SELECT count(*) FROM task_events) + (SELECT count(*) FROM intent_events)`)
	if err := e.svc.Withdraw(ctx, "op-1", in.ID); err != nil {
		t.Fatalf("a repeated withdraw: %v", err)
	}
	if e.count(t, `SELECT (SELECT count(*) FROM task_events) + (SELECT count(*) FROM intent_events)`) != events {
		t.Fatal("a repeated operation wrote events")
	}
	// A new operation is refused: the intent is withdrawn now.
	err := e.svc.Withdraw(ctx, "op-2", in.ID)
	if ie := wantRefusal(t, err, refusal.Conflict); ie.Message != "Only a draft or a stopped intent can be withdrawn; this one is withdrawn." {
		t.Fatalf("message %q", ie.Message)
	}
}

func TestWithdrawRefusesARunningOrDoneIntent(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, tasks := e.draft(t, "notes", "Add tags")
	e.moveIntent(t, in.ID, intent.IntentRunning)
	e.move(t, tasks[0].ID, intent.TaskInQueue, "")
	err := e.svc.Withdraw(ctx, "op-1", in.ID)
	if ie := wantRefusal(t, err, refusal.Conflict); ie.Message != "Only a draft or a stopped intent can be withdrawn; this one is running." {
		t.Fatalf("message %q", ie.Message)
	}
	if e.status(t, tasks[0].ID) != intent.TaskInQueue || e.intentStatus(t, in.ID) != intent.IntentRunning {
		t.Fatal("a refused withdraw changed something")
	}
	if e.count(t, `SELECT count(*) FROM operations`) != 0 {
		t.Fatal("a refused operation was recorded")
	}
	e.moveIntent(t, in.ID, intent.IntentDone)
	wantRefusal(t, e.svc.Withdraw(ctx, "op-1", in.ID), refusal.Conflict)
	wantRefusal(t, e.svc.Withdraw(ctx, "op-3", 99), refusal.NotFound)
}

func TestWithdrawIsNeverHalfApplied(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, tasks := e.draft(t, "notes", "Add tags", "Show tags")
	e.moveIntent(t, in.ID, intent.IntentRunning)
	e.move(t, tasks[0].ID, intent.TaskInQueue, "")
	e.move(t, tasks[1].ID, intent.TaskInQueue, "")
	e.move(t, tasks[1].ID, intent.TaskInProgress, "r1")
	// Stopped with a task still in progress: the second task cannot be
	// removed, so nothing is.
	e.moveIntent(t, in.ID, intent.IntentStopped)
	err := e.svc.Withdraw(ctx, "op-1", in.ID)
	wantRefusal(t, err, refusal.Conflict)
	if e.status(t, tasks[0].ID) != intent.TaskInQueue || e.intentStatus(t, in.ID) != intent.IntentStopped {
		t.Fatal("a refused withdraw removed a task")
	}
}

func TestRemoveTask(t *testing.T) {
	ctx := context.Background()

	t.Run("proposed on a draft", func(t *testing.T) {
		e := mustOpen(t)
		_, tasks := e.draft(t, "notes", "Add tags")
		if err := e.svc.RemoveTask(ctx, "op-1", tasks[0].ID); err != nil {
			t.Fatal(err)
		}
		ev := e.lastEvent(t, tasks[0].ID)
		if e.status(t, tasks[0].ID) != intent.TaskRemoved || ev.From != intent.TaskProposed || ev.Actor != intent.ActorOwner {
			t.Fatalf("event %+v", ev)
		}
		err := e.svc.RemoveTask(ctx, "op-2", tasks[0].ID)
		wantRefusal(t, err, refusal.Conflict)
	})

	t.Run("proposed and in-queue on a stopped intent", func(t *testing.T) {
		e := mustOpen(t)
		_, byStatus := stoppedWithEveryStatus(t, e, "notes")
		for i, s := range []intent.TaskStatus{intent.TaskProposed, intent.TaskInQueue} {
			if err := e.svc.RemoveTask(ctx, "op-"+string(s), byStatus[s].ID); err != nil {
				t.Fatalf("%d %s: %v", i, s, err)
			}
			if e.status(t, byStatus[s].ID) != intent.TaskRemoved {
				t.Fatalf("%s not removed", s)
			}
		}
	})

	t.Run("refused for the other statuses of a stopped intent", func(t *testing.T) {
		e := mustOpen(t)
		_, byStatus := stoppedWithEveryStatus(t, e, "notes")
		for _, s := range []intent.TaskStatus{intent.TaskCompleted, intent.TaskFailed, intent.TaskInterrupted, intent.TaskNeedsAnswer} {
			before := e.state(t, byStatus[s].ID)
			err := e.svc.RemoveTask(ctx, "op-"+string(s), byStatus[s].ID)
			if ie := wantRefusal(t, err, refusal.Conflict); !strings.Contains(ie.Message, byStatus[s].Slug) {
				t.Fatalf("%s: %q", s, ie.Message)
			}
			if e.state(t, byStatus[s].ID) != before {
				t.Fatalf("%s: a refused remove changed the task", s)
			}
		}
	})

	t.Run("refused while the intent runs", func(t *testing.T) {
		e := mustOpen(t)
		in, tasks := e.draft(t, "notes", "Add tags")
		e.moveIntent(t, in.ID, intent.IntentRunning)
		e.move(t, tasks[0].ID, intent.TaskInQueue, "")
		err := e.svc.RemoveTask(ctx, "op-1", tasks[0].ID)
		if ie := wantRefusal(t, err, refusal.Conflict); ie.Message != "Task 0001-add-tags cannot be removed while its intent runs; stop the intent first." {
			t.Fatalf("message %q", ie.Message)
		}
		if e.status(t, tasks[0].ID) != intent.TaskInQueue {
			t.Fatal("removed while running")
		}
	})

	t.Run("refused while another task is blocked by it", func(t *testing.T) {
		e := mustOpen(t)
		in, tasks := e.draft(t, "notes", "Add tags")
		blocked, err := e.svc.AddTask(ctx, in.ID, planned("Show tags", tasks[0].Slug))
		if err != nil {
			t.Fatal(err)
		}
		err = e.svc.RemoveTask(ctx, "op-1", tasks[0].ID)
		if ie := wantRefusal(t, err, refusal.Conflict); ie.Message != "Task 0002-show-tags is blocked by 0001-add-tags; remove 0002-show-tags first." {
			t.Fatalf("message %q", ie.Message)
		}
		if err := e.svc.RemoveTask(ctx, "op-2", blocked.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.svc.RemoveTask(ctx, "op-3", tasks[0].ID); err != nil {
			t.Fatalf("once its dependant is gone: %v", err)
		}
	})

	t.Run("a repeated operation changes nothing", func(t *testing.T) {
		e := mustOpen(t)
		_, tasks := e.draft(t, "notes", "Add tags", "Show tags")
		if err := e.svc.RemoveTask(ctx, "op-1", tasks[0].ID); err != nil {
			t.Fatal(err)
		}
		if err := e.svc.RemoveTask(ctx, "op-1", tasks[0].ID); err != nil {
			t.Fatalf("the same removal again: %v", err)
		}
		// The id sent again for another task is another change: refused,
		// and nothing is written.
		err := e.svc.RemoveTask(ctx, "op-1", tasks[1].ID)
		if ie := wantRefusal(t, err, refusal.Conflict); ie.Message != `Operation id "op-1" was sent before for another change; nothing was written. Reload the page and try again.` {
			t.Fatalf("message %q", ie.Message)
		}
		if e.status(t, tasks[1].ID) != intent.TaskProposed {
			t.Fatal("a recorded operation ran again")
		}
	})
}

func TestSetTaskModel(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	_, tasks := e.draft(t, "notes", "Add tags", "Show tags")
	id := tasks[0].ID
	if err := e.svc.SetTaskModel(ctx, "op-1", id, " ollama:qwen3:27b "); err != nil {
		t.Fatal(err)
	}
	if s := e.state(t, id); s.Model != "ollama:qwen3:27b" {
		t.Fatalf("model %q", s.Model)
	}

	// The same operation id again with the same model answers as the
	// first; with another model it is refused: nothing changes.
	events := e.state(t, id).Events
	if err := e.svc.SetTaskModel(ctx, "op-1", id, "ollama:qwen3:27b"); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, e.svc.SetTaskModel(ctx, "op-1", id, "gpt-5-mini"), refusal.Conflict)
	if s := e.state(t, id); s.Model != "ollama:qwen3:27b" || s.Events != events {
		t.Fatalf("a repeated operation: %+v", s)
	}

	err := e.svc.SetTaskModel(ctx, "op-2", id, "qwen3 27b")
	if ie := wantRefusal(t, err, refusal.Invalid); !strings.Contains(ie.Message, "contains a space") {
		t.Fatalf("message %q", ie.Message)
	}
	wantRefusal(t, e.svc.SetTaskModel(ctx, "op-2", id, ":qwen3"), refusal.Invalid)
	wantRefusal(t, e.svc.SetTaskModel(ctx, "", id, "gpt-5-mini"), refusal.Invalid)
	wantRefusal(t, e.svc.SetTaskModel(ctx, strings.Repeat("x", intent.MaxOpID+1), id, "gpt-5-mini"), refusal.Invalid)
	wantRefusal(t, e.svc.SetTaskModel(ctx, "op-2", 99, "gpt-5-mini"), refusal.NotFound)

	if err := e.svc.SetTaskModel(ctx, "op-3", id, ""); err != nil {
		t.Fatal(err)
	}
	if s := e.state(t, id); s.Model != "" {
		t.Fatalf("not cleared: %q", s.Model)
	}

	e.move(t, id, intent.TaskInQueue, "")
	e.move(t, id, intent.TaskInProgress, "r1")
	e.move(t, id, intent.TaskCompleted, "r1")
	err = e.svc.SetTaskModel(ctx, "op-4", id, "gpt-5-mini")
	if ie := wantRefusal(t, err, refusal.Conflict); ie.Message != "Task 0001-add-tags is completed; its model no longer changes." {
		t.Fatalf("message %q", ie.Message)
	}
	if err := e.svc.RemoveTask(ctx, "op-5", tasks[1].ID); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, e.svc.SetTaskModel(ctx, "op-6", tasks[1].ID, "gpt-5-mini"), refusal.Conflict)
}

func TestTierModels(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	m, err := e.svc.TierModels()
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 3 || m["quick"] != "" || m["standard"] != "" || m["deep"] != "" {
		t.Fatalf("without a file: %v", m)
	}

	if err := e.svc.SetTierModels(ctx, "op-1", map[string]string{"quick": "ollama:qwen3:4b", "deep": "gpt-5"}, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(e.root, "launcher", "intent-models.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]*string
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	if *file["quick"] != "ollama:qwen3:4b" || file["standard"] != nil || *file["deep"] != "gpt-5" {
		t.Fatalf("file %s", b)
	}
	if m, _ = e.svc.TierModels(); m["quick"] != "ollama:qwen3:4b" || m["standard"] != "" || m["deep"] != "gpt-5" {
		t.Fatalf("read back %v", m)
	}

	// A repeated operation writes nothing (with other values it is
	// refused); refusals write nothing.
	if err := e.svc.SetTierModels(ctx, "op-1", map[string]string{"quick": "ollama:qwen3:4b", "deep": "gpt-5"}, nil); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, e.svc.SetTierModels(ctx, "op-1", map[string]string{"quick": "other"}, nil), refusal.Conflict)
	wantRefusal(t, e.svc.SetTierModels(ctx, "op-2", map[string]string{"fast": "gpt-5"}, nil), refusal.Invalid)
	ie := wantRefusal(t, e.svc.SetTierModels(ctx, "op-3", map[string]string{"deep": "a b"}, nil), refusal.Invalid)
	if !strings.HasPrefix(ie.Message, "The deep tier's model was not saved.") {
		t.Fatalf("message %q", ie.Message)
	}
	if after, _ := os.ReadFile(path); string(after) != string(b) {
		t.Fatalf("the file changed: %s", after)
	}

	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.TierModels(); err == nil {
		t.Fatal("a broken file read as tier models")
	}
}

// intent-models.json is kept between reads while it is the same; every
// change shows on the next read: by this service, by another process over
// the same root, by hand.
func TestAChangeOfTheTierModelsShowsOnTheNextRead(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	want := func(quick string) {
		t.Helper()
		m, err := e.svc.TierModels()
		if err != nil || m["quick"] != quick {
			t.Fatalf("the quick tier runs on %q, %v; want %q", m["quick"], err, quick)
		}
		m["quick"] = "changed by a reader"
	}
	want("")
	if err := e.svc.SetTierModels(ctx, "op-1", map[string]string{"quick": "ollama:qwen3"}, nil); err != nil {
		t.Fatal(err)
	}
	want("ollama:qwen3")
	want("ollama:qwen3")
	other := intent.NewService(e.db, e.root, e.clock.Now, intent.Collaborators{Journal: request.Journal{}})
	if err := other.SetTierModels(ctx, "op-2", map[string]string{"quick": "ollama:gemma"}, nil); err != nil {
		t.Fatal(err)
	}
	want("ollama:gemma")
	path := filepath.Join(e.root, "launcher", "intent-models.json")
	if err := os.WriteFile(path, []byte(`{"quick": "gpt-5"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	want("gpt-5")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	want("")
}
