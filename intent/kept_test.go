package intent_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"autoapp/intent"
	"autoapp/intent/request"
	"autoapp/migrations"
)

// pageReads is what every page reads of the backlog, through one service.
type pageReads struct {
	Waiting         intent.Waitings
	WaitingCount    int
	Outlooks        map[string]intent.Outlook
	Awaiting        []intent.Awaiting
	FeedbackForChat []intent.Feedback
	FeedbackWaiting int
	List            []intent.IntentSummary
	More            bool
}

func readPages(t *testing.T, svc intent.Services) pageReads {
	t.Helper()
	ctx := context.Background()
	var r pageReads
	var err error
	check := func(what string) {
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	r.Waiting, err = svc.Attention.WaitingTasks(ctx, 5)
	check("waiting tasks")
	r.WaitingCount, err = svc.Attention.WaitingCount(ctx)
	check("waiting count")
	r.Outlooks, err = svc.Attention.Outlooks(ctx)
	check("outlooks")
	r.Awaiting, err = svc.Attention.AwaitingOwner(ctx)
	check("awaiting the owner")
	r.FeedbackForChat, err = svc.Interventions.FeedbackForChat(ctx, "notes")
	check("feedback for the chat")
	r.FeedbackWaiting, err = svc.Interventions.FeedbackWaiting(ctx)
	check("feedback waiting")
	r.List, r.More, err = svc.Attention.ListPage(ctx, "notes", 0, 2)
	check("list")
	return r
}

// TestTheReadsEveryPageMakesFollowEveryChangeAtOnce reads what the pages
// show (what waits, the outlooks, the list) through the server's service,
// changes the store through a second connection as a command run beside
// the server does, and reads again: each time the server's answer is what a
// service that never read before answers, and it changed.
func TestTheReadsEveryPageMakesFollowEveryChangeAtOnce(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	db, err := migrations.Open(e.db.Path, migrations.Intents)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	besideAll := intent.New(db, e.root, e.clock.Now, intent.Collaborators{Journal: request.Journal{}})
	beside := besideAll.Backlog
	var in intent.Intent
	var tasks []intent.Task
	var fed []int64
	must := func(t *testing.T, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	runs := 0
	move := func(t *testing.T, taskID int64, to ...intent.TaskStatus) {
		t.Helper()
		for _, st := range to {
			runs++
			must(t, beside.MoveTask(ctx, taskID, st, intent.Move{Reason: "The build failed.", RunID: fmt.Sprintf("run-%d", runs), Actor: intent.ActorExecutor,
				Question: "Which tag is the default?"}))
		}
	}
	e.app(t, "notes")
	for _, step := range []struct {
		name   string
		change func(t *testing.T)
	}{
		{"a draft is opened", func(t *testing.T) {
			in, err = beside.OpenDraft(ctx, "notes", "Add tags", intent.Analysis{Restated: []string{"Tags."}})
			must(t, err)
		}},
		{"tasks are added", func(t *testing.T) {
			for _, title := range []string{"Tag notes", "Filter by tag", "Rename a tag"} {
				task, err := beside.AddTask(ctx, in.ID, planned(title))
				must(t, err)
				tasks = append(tasks, task)
			}
		}},
		{"the plan is submitted and runs", func(t *testing.T) {
			must(t, beside.Submit(ctx, in.ID))
			must(t, beside.MoveIntent(ctx, in.ID, intent.IntentRunning, "Run"))
		}},
		{"a task fails", func(t *testing.T) { move(t, tasks[0].ID, intent.TaskInQueue, intent.TaskInProgress, intent.TaskFailed) }},
		{"its advice is kept", func(t *testing.T) { must(t, beside.SetAdvice(ctx, tasks[0].ID, "Add the import.")) }},
		{"a builder asks", func(t *testing.T) {
			move(t, tasks[1].ID, intent.TaskInQueue, intent.TaskInProgress, intent.TaskNeedsAnswer)
		}},
		{"feedback is applied", func(t *testing.T) {
			_, _, err := besideAll.Interventions.SubmitIntervention(ctx, in.ID, "op-1", intent.InterventionFeedback, "Tags are lower case.")
			must(t, err)
			_, err = besideAll.Interventions.ApplyAllInterventions(ctx)
			must(t, err)
		}},
		{"a chat turn is given the feedback", func(t *testing.T) {
			fb, err := besideAll.Interventions.FeedbackForChat(ctx, "notes")
			must(t, err)
			for _, f := range fb {
				fed = append(fed, f.Order)
			}
			must(t, besideAll.Interventions.FeedbackGiven(ctx, fed, "chat-1"))
		}},
		{"a row is changed by hand", func(t *testing.T) {
			_, err := db.Write.Exec(`UPDATE intents SET mode = 'guided' WHERE id = ?`, in.ID)
			must(t, err)
		}},
		{"another intent is opened", func(t *testing.T) {
			_, err := db.Write.Exec(`UPDATE intents SET status = 'done' WHERE id = ?`, in.ID)
			must(t, err)
			_, err = beside.OpenDraft(ctx, "notes", "Add colours", intent.Analysis{Restated: []string{"Colours."}})
			must(t, err)
		}},
	} {
		t.Run(step.name, func(t *testing.T) {
			before := readPages(t, e.all)
			step.change(t)
			got := readPages(t, e.all)
			want := readPages(t, intent.New(e.db, e.root, e.clock.Now, intent.Collaborators{Journal: request.Journal{}}))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("after the change the server reads\n%+v\nwhere the store holds\n%+v", got, want)
			}
			if reflect.DeepEqual(before, want) {
				t.Errorf("the change changed none of the reads: %+v", want)
			}
		})
	}
}
