package overview_test

import (
	"context"
	"fmt"
	"testing"

	"autoapp/executor/ai"
	"autoapp/executor/ai/scripted"
	"autoapp/intent"
	"autoapp/intent/plan"
	"autoapp/intent/request"
)

// TestOneReadIsTheIntentPage: a guided intent, approved, whose run stopped
// because a task asked a question, and a running intent, each read in one
// call with what its page shows.
func TestOneReadIsTheIntentPage(t *testing.T) {
	ctx := context.Background()

	t.Run("guided, with a question", func(t *testing.T) {
		e := mustOpen(t)
		e.site(t, "notes")
		// The owner chose another of the provider's models in Settings.
		e.model.Models("m", "settings")
		if err := e.launcher.Providers.SetDefaultModel("prov:settings"); err != nil {
			t.Fatal(err)
		}
		requests := e.launcher.Requests
		st, err := requests.Create(ctx, "notes", "Add tags", request.ModeGuided, "op-1")
		if err != nil {
			t.Fatal(err)
		}
		in, err := e.backlog.OpenDraft(ctx, "notes", "Add tags", intent.Analysis{Restated: []string{"Tags on notes."}})
		if err != nil {
			t.Fatal(err)
		}
		// A deep task with a model of its own, and a quick one with none.
		own, err := e.backlog.AddTask(ctx, in.ID, plan.Task{Title: "Store tags", Priority: "high", Labels: []string{"migration"},
			EstimatedLines: 80, Risk: "normal", Reasoning: "medium", Summary: "A table.",
			Criteria: []plan.Criterion{{Text: "Tags are kept."}}, NoFailurePath: "nothing to refuse"})
		if err != nil {
			t.Fatal(err)
		}
		none, err := e.backlog.AddTask(ctx, in.ID, plan.Task{Title: "Show tags", Priority: "medium", Labels: []string{"views"},
			EstimatedLines: 10, Risk: "normal", Reasoning: "low", Summary: "A list.", BlockedBy: []string{own.Slug},
			Criteria: []plan.Criterion{{Text: "Tags show."}}, NoFailurePath: "nothing to refuse"})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.backlog.SetTaskModel(ctx, "op-model", own.ID, "prov:big"); err != nil {
			t.Fatal(err)
		}
		if _, err := requests.Link(ctx, st.ID, in.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.backlog.Submit(ctx, in.ID); err != nil {
			t.Fatal(err)
		}
		submitted, err := requests.PlanSubmitted(ctx, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := requests.Approve(ctx, st.ID, submitted.Revision, "op-approve"); err != nil {
			t.Fatal(err)
		}
		// Its run: the first task's builder asks, and the run stops for the answer.
		if err := e.backlog.BeginRun(ctx, in.ID); err != nil {
			t.Fatal(err)
		}
		e.move(t, own.ID, intent.TaskInProgress, intent.Move{RunID: fmt.Sprintf("intent-%d-%s-a1", in.ID, own.Slug)})
		e.move(t, own.ID, intent.TaskNeedsAnswer, intent.Move{Question: "Should tags be case-sensitive?"})
		if err := e.backlog.MoveIntent(ctx, in.ID, intent.IntentStopped, "0001-store-tags asks a question."); err != nil {
			t.Fatal(err)
		}

		p, err := e.svc.IntentPage(ctx, in.ID)
		if err != nil {
			t.Fatal(err)
		}
		if p.Intent.ID != in.ID || p.App.ID != "notes" || p.App.Name != "NOTES" || len(p.Intent.Tasks) != 2 {
			t.Fatalf("intent %d of %+v with %d tasks", p.Intent.ID, p.App, len(p.Intent.Tasks))
		}
		runsOn := map[int64][2]string{}
		for _, task := range p.Intent.Tasks {
			runsOn[task.ID] = [2]string{task.RunsOn, task.RunsOnFrom}
			if task.ID == own.ID && (task.Status != intent.TaskNeedsAnswer || task.Question != "Should tags be case-sensitive?") {
				t.Errorf("the task that asked is %s with question %q", task.Status, task.Question)
			}
		}
		if runsOn[own.ID] != [2]string{"prov:big", "task"} || runsOn[none.ID] != [2]string{"prov:settings", "settings"} {
			t.Errorf("the models the tasks run on: %v", runsOn)
		}
		if !p.Guided() || p.Request == nil || p.Request.ID != st.ID || !p.Request.Approval.Valid ||
			p.Request.Approvable || p.Request.Unapprovable != "This plan is approved already." {
			t.Fatalf("the request: %+v", p.Request)
		}
		if p.Intent.Status != intent.IntentStopped || p.Intent.StopReason != "0001-store-tags asks a question." {
			t.Errorf("the intent is %s: %q", p.Intent.Status, p.Intent.StopReason)
		}
		if p.Live || p.Progress != nil || p.Delivery != nil || len(p.Interventions) != 0 || p.Spend.Total.Turns != 0 {
			t.Errorf("a planned intent: live %v, progress %+v, delivery %+v, interventions %v, spend %+v",
				p.Live, p.Progress, p.Delivery, p.Interventions, p.Spend.Total)
		}

		// A chat turn about its application may change it: the page follows.
		held := scripted.NewGate(t)
		e.model.On(scripted.RunID("chat-notes-1"), scripted.Reply{Before: held.Hold, Text: "Hello."})
		if _, err := e.launcher.Chats.Send(ctx, "notes", 0, "hello"); err != nil {
			t.Fatal(err)
		}
		held.Wait(t)
		if p, err = e.svc.IntentPage(ctx, in.ID); err != nil || !p.Live {
			t.Errorf("while a chat turn runs: live %v, %v", p.Live, err)
		}
	})

	t.Run("running", func(t *testing.T) {
		e := mustOpen(t)
		e.site(t, "site")
		in, tasks := e.intent(t, "site", 2)
		// A run before this one completed the first task, then stopped.
		first := e.turn(t, in, tasks[0], 1, 0, 1000, false, intent.TaskCompleted)
		if err := e.backlog.MoveIntent(ctx, in.ID, intent.IntentStopped, "stopped by the person"); err != nil {
			t.Fatal(err)
		}
		// This run's builder read a file and waits on the model.
		e.run(t, in, fmt.Sprintf("intent-%d-%s-a1", in.ID, tasks[1].Slug),
			scripted.Reply{ToolCalls: []scripted.Call{call("source.read", map[string]any{"path": "site/index.html"})}, Usage: scripted.Usage{Input: 300, Output: 30}})
		if _, _, err := e.launcher.Interventions.SubmitIntervention(ctx, in.ID, "pause-1", intent.InterventionPause, ""); err != nil {
			t.Fatal(err)
		}

		p, err := e.svc.IntentPage(ctx, in.ID)
		if err != nil {
			t.Fatal(err)
		}
		if p.Intent.Status != intent.IntentRunning || !p.Live || p.Request != nil || p.Guided() {
			t.Fatalf("status %s, live %v, request %+v", p.Intent.Status, p.Live, p.Request)
		}
		if p.Progress == nil || p.Progress.Slug != tasks[1].Slug || p.Progress.Stage != "reading" || p.Progress.LastTool != "source.read" {
			t.Fatalf("progress %+v", p.Progress)
		}
		if p.Limits != (ai.Limits{}).WithDefaults() || !p.At.Equal(e.clock.Now()) {
			t.Errorf("limits %+v at %v", p.Limits, p.At)
		}
		// The completed turn's row and the turn running now.
		if p.Spend.Total.Turns != 2 || p.Spend.Tasks[tasks[0].ID].Input != 1000 || p.Spend.Tasks[tasks[1].ID].Input != 300 {
			t.Errorf("spend %+v (after %s)", p.Spend, first)
		}
		// The pause waits for the run's next boundary.
		if len(p.Interventions) != 1 || p.Interventions[0].Kind != intent.InterventionPause || p.Interventions[0].AppliedAt != nil {
			t.Errorf("interventions %+v", p.Interventions)
		}
	})
}
