package request_test

import (
	"context"
	"testing"

	"autoapp/intent"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
)

// TestSwitchingTheModeVoidsAnApproval: the owner's switch of mode, with the
// revision seen, is one mode entry that voids an approval; a stale
// revision is refused with a sentence and writes nothing, and a repeated
// operation id writes nothing either. The intent's mode follows.
func TestSwitchingTheModeVoidsAnApproval(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	st, _ := e.planned(t, "notes", request.ModeGuided, "Add tags")
	st = e.approve(t, st.ID)
	entries := func() int {
		return e.count(t, `SELECT count(*) FROM request_journal WHERE request_id = ?`, st.ID)
	}
	n := entries()

	_, err := e.svc.SetIntentMode(ctx, st.IntentID, st.Revision-1, e.op(), request.ModeAutonomous)
	re := wantRefusal(t, err, refusal.Conflict)
	if want := "The request changed since you looked (revision 3, you saw 2); reload and try again."; re.Message != want {
		t.Fatalf("stale: %q, want %q", re.Message, want)
	}
	if entries() != n || e.count(t, `SELECT count(*) FROM requests WHERE id = ? AND mode = 'guided'`, st.ID) != 1 {
		t.Fatal("a stale switch wrote")
	}

	op := e.op()
	auto, err := e.svc.SetIntentMode(ctx, st.IntentID, st.Revision, op, request.ModeAutonomous)
	if err != nil {
		t.Fatal(err)
	}
	const voided = "Switching the request to autonomous voided the approval."
	if auto.Mode != request.ModeAutonomous || auto.Approved != "" || auto.Approval.Valid || auto.Approval.Voided != voided || auto.Revocable {
		t.Fatalf("switched: %+v", auto)
	}
	if n := e.count(t, `SELECT count(*) FROM request_journal WHERE request_id = ? AND revision = ? AND kind = 'mode' AND actor = 'owner'
		AND json_extract(body, '$.mode') = 'autonomous'`, st.ID, auto.Revision); n != 1 {
		t.Fatal("no mode entry")
	}
	if n := e.count(t, `SELECT count(*) FROM intents WHERE id = ? AND mode = 'autonomous'`, st.IntentID); n != 1 {
		t.Fatal("the intent's mode does not follow")
	}
	if err := e.svc.CanRun(ctx, st.ID); err != nil {
		t.Fatalf("autonomous: %v", err)
	}
	n = entries()
	if again, err := e.svc.SetIntentMode(ctx, st.IntentID, st.Revision, op, request.ModeAutonomous); err != nil || again.Revision != auto.Revision {
		t.Fatalf("replayed: %+v %v", again, err)
	}
	if entries() != n {
		t.Fatal("a repeated switch wrote")
	}

	// Back to guided: the approval is gone, and Run waits for a new one.
	guided, err := e.svc.SetMode(ctx, st.ID, auto.Revision, e.op(), request.ModeGuided)
	if err != nil {
		t.Fatal(err)
	}
	re = wantRefusal(t, e.svc.CanRun(ctx, st.ID), refusal.Conflict)
	if want := voided + " Approve the plan again before Run: this request is guided."; re.Message != want {
		t.Fatalf("Run: %q, want %q", re.Message, want)
	}
	if !guided.Approvable {
		t.Fatalf("the plan cannot be approved again: %s", guided.Unapprovable)
	}
	e.approve(t, st.ID)
	if err := e.svc.CanRun(ctx, st.ID); err != nil {
		t.Fatalf("approved again: %v", err)
	}
}

// TestTheModeHoldsWhileTheIntentRuns: a run started in one mode runs in
// it; switching while it runs is refused with a sentence and writes
// nothing (before, an autonomous run switched to guided ran on, unapproved).
// Stopped, the mode switches again.
func TestTheModeHoldsWhileTheIntentRuns(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	st, _ := e.planned(t, "notes", request.ModeAutonomous, "Add tags")
	if err := e.backlog.MoveIntent(ctx, st.IntentID, intent.IntentRunning, "the test runs it"); err != nil {
		t.Fatal(err)
	}
	n := e.count(t, `SELECT count(*) FROM request_journal WHERE request_id = ?`, st.ID)
	_, err := e.svc.SetIntentMode(ctx, st.IntentID, st.Revision, e.op(), request.ModeGuided)
	if re := wantRefusal(t, err, refusal.Conflict); re.Message != "Intent #1 is running; stop it before changing its mode." {
		t.Fatalf("message %q", re.Message)
	}
	if e.count(t, `SELECT count(*) FROM request_journal WHERE request_id = ?`, st.ID) != n {
		t.Fatal("a refused switch wrote")
	}
	if err := e.backlog.MoveIntent(ctx, st.IntentID, intent.IntentStopped, "the owner stopped it"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.SetIntentMode(ctx, st.IntentID, st.Revision, e.op(), request.ModeGuided); err != nil {
		t.Fatalf("stopped: %v", err)
	}
}
