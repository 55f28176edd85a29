package chat_test

import (
	"context"
	"strings"
	"testing"

	"autoapp/executor/ai/scripted"
	"autoapp/intent"
	"autoapp/intent/plan"
)

// allText is everything a request gave the model to read.
func allText(r scripted.Request) string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Content)
		b.WriteString("\n")
	}
	return b.String()
}

func TestTheNextChatTurnIsGivenAppliedFeedbackOnce(t *testing.T) {
	h := newHost(t)
	ctx := context.Background()
	in, err := h.backlog.OpenDraft(ctx, appID, "A timer.", intent.Analysis{Restated: []string{"A timer."}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.backlog.AddTask(ctx, in.ID, plan.Task{Title: "Show the timer", Priority: "high", Labels: []string{"views"},
		EstimatedLines: 20, Risk: "normal", Reasoning: "low", Summary: "The timer.",
		Criteria: []plan.Criterion{{Text: "The home page shows 25:00"}}, NoFailurePath: "nothing to refuse"}); err != nil {
		t.Fatal(err)
	}
	if err := h.backlog.Submit(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if err := h.backlog.BeginRun(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	const feedback = "Make the timer 50 minutes, not 25."
	if _, _, err := h.launcher.Interventions.SubmitIntervention(ctx, in.ID, "f-1", intent.InterventionFeedback, feedback); err != nil {
		t.Fatal(err)
	}
	h.model.On(scripted.Any(), scripted.Reply{Text: "I will revise the plan."}, scripted.Reply{Text: "Nothing new."})

	// Pending feedback is not the chat's yet: it is the run's to apply.
	first := h.wait(t, h.send(t, "Hello").ID)
	if first.Status != "answered" {
		t.Fatalf("the first turn: %+v", first)
	}
	if strings.Contains(allText(h.chats()[0]), feedback) {
		t.Fatal("a chat turn was given feedback the run had not applied")
	}
	if _, err := h.launcher.Interventions.ApplyInterventions(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	h.model.On(scripted.Any(), scripted.Reply{Text: "Revised."}, scripted.Reply{Text: "Nothing new."})
	h.wait(t, h.send(t, "Go on").ID)
	given := allText(h.chats()[1])
	if !strings.Contains(given, feedback) || !strings.Contains(given, "Revise the plan") {
		t.Fatalf("the turn after the feedback was applied did not get it:\n%s", given)
	}
	h.wait(t, h.send(t, "And now?").ID)
	if strings.Contains(allText(h.chats()[2]), feedback) {
		t.Fatal("the feedback was given to a second turn")
	}
}
