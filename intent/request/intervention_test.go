package request_test

import (
	"context"
	"strings"
	"testing"

	"autoapp/intent"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
)

// A pause keeps the guided approval, so Run resumes at once; applied
// feedback voids it, so Run waits until the owner approves the revised plan.
func TestAPauseKeepsTheApprovalAndFeedbackVoidsIt(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	st, _ := e.planned(t, "notes", request.ModeGuided, "Add tags", "Filter by tag")
	e.approve(t, st.ID)
	if err := e.svc.CanRun(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.backlog.BeginRun(ctx, st.IntentID); err != nil {
		t.Fatal(err)
	}

	if _, _, err := e.all.Interventions.SubmitIntervention(ctx, st.IntentID, "p-1", intent.InterventionPause, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.all.Interventions.ApplyInterventions(ctx, st.IntentID); err != nil {
		t.Fatal(err)
	}
	if got := e.state(t, st.ID); !got.Approval.Valid {
		t.Fatalf("a pause voided the approval: %+v", got.Approval)
	}
	if err := e.svc.CanRun(ctx, st.ID); err != nil {
		t.Fatalf("Run after a pause: %v", err)
	}

	if err := e.backlog.BeginRun(ctx, st.IntentID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.all.Interventions.SubmitIntervention(ctx, st.IntentID, "f-1", intent.InterventionFeedback, "Tags are lowercase."); err != nil {
		t.Fatal(err)
	}
	// Submitting changes nothing: the approval holds until the feedback is applied.
	if got := e.state(t, st.ID); !got.Approval.Valid {
		t.Fatal("submitting feedback voided the approval before a boundary")
	}
	if _, err := e.all.Interventions.ApplyInterventions(ctx, st.IntentID); err != nil {
		t.Fatal(err)
	}
	got := e.state(t, st.ID)
	if got.Approval.Valid || got.Approved != "" || got.Approval.Voided != request.FeedbackVoided {
		t.Fatalf("feedback left the approval %+v (approved %q)", got.Approval, got.Approved)
	}
	err := e.svc.CanRun(ctx, st.ID)
	if re := wantRefusal(t, err, refusal.Conflict); !strings.Contains(re.Message, "Approve the plan again") {
		t.Fatalf("Run after feedback: %s", re.Message)
	}
	// The owner approves the plan again, and Run is allowed.
	e.approve(t, st.ID)
	if err := e.svc.CanRun(ctx, st.ID); err != nil {
		t.Fatalf("Run after approving again: %v", err)
	}
}
