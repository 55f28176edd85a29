package request_test

import (
	"context"
	"testing"

	"autoapp/intent"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
)

// TestTheOwnerCanWithdrawAnApproval: withdrawing an approval before Run
// journals an approval entry with the reason "revoked"; Run is then refused
// as for a plan never approved, until the owner approves again. A repeated
// operation id writes nothing; a stale revision, no approval or a running
// intent is refused.
func TestTheOwnerCanWithdrawAnApproval(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	st, _ := e.planned(t, "notes", request.ModeGuided, "Add tags")
	if st.Revocable {
		t.Fatal("an unapproved plan offers to withdraw its approval")
	}
	_, err := e.svc.WithdrawApproval(ctx, st.IntentID, st.Revision, e.op())
	if re := wantRefusal(t, err, refusal.Conflict); re.Message != "There is no approval to withdraw on request 1." {
		t.Fatalf("message %q", re.Message)
	}
	st = e.approve(t, st.ID)
	if !st.Revocable {
		t.Fatal("an approved draft cannot withdraw its approval")
	}
	_, err = e.svc.WithdrawApproval(ctx, st.IntentID, st.Revision-1, e.op())
	wantRefusal(t, err, refusal.Conflict)

	op := e.op()
	after, err := e.svc.WithdrawApproval(ctx, st.IntentID, st.Revision, op)
	if err != nil {
		t.Fatal(err)
	}
	if after.Revision != st.Revision+1 || after.Approved != "" || after.Approval.Valid || !after.Approval.Revoked ||
		after.Approval.Voided != "" || after.Revocable || !after.Approvable {
		t.Fatalf("after withdrawing: %+v", after)
	}
	if n := e.count(t, `SELECT count(*) FROM request_journal WHERE request_id = ? AND revision = ? AND kind = 'approval'
		AND actor = 'owner' AND json_extract(body, '$.reason') = 'revoked'`, st.ID, after.Revision); n != 1 {
		t.Fatalf("%d revoked approval entries", n)
	}
	re := wantRefusal(t, e.svc.CanRun(ctx, st.ID), refusal.Conflict)
	if re.Message != "Approve the plan before Run: this request is guided." {
		t.Fatalf("Run after withdrawing: %q", re.Message)
	}

	// The same operation again answers the same and writes nothing.
	entries := e.count(t, `SELECT count(*) FROM request_journal WHERE request_id = ?`, st.ID)
	again, err := e.svc.WithdrawApproval(ctx, st.IntentID, st.Revision, op)
	if err != nil || again.Revision != after.Revision {
		t.Fatalf("replayed: %+v %v", again, err)
	}
	if n := e.count(t, `SELECT count(*) FROM request_journal WHERE request_id = ?`, st.ID); n != entries {
		t.Fatalf("the replay wrote %d entries", n-entries)
	}
	_, err = e.svc.WithdrawApproval(ctx, st.IntentID, after.Revision, e.op())
	wantRefusal(t, err, refusal.Conflict)

	// Approved again, it runs; running, its approval stays.
	st = e.approve(t, st.ID)
	if err := e.svc.CanRun(ctx, st.ID); err != nil {
		t.Fatalf("Run after approving again: %v", err)
	}
	if err := e.backlog.MoveIntent(ctx, st.IntentID, intent.IntentRunning, "the test runs it"); err != nil {
		t.Fatal(err)
	}
	st = e.state(t, st.ID)
	_, err = e.svc.WithdrawApproval(ctx, st.IntentID, st.Revision, e.op())
	if re := wantRefusal(t, err, refusal.Conflict); re.Message != "Intent #1 is running; stop it before withdrawing the approval." {
		t.Fatalf("message %q", re.Message)
	}
	_, err = e.svc.WithdrawApproval(ctx, 99, 0, e.op())
	wantRefusal(t, err, refusal.NotFound)
}

// TestAnApprovalsOperationIDCannotWithdrawIt: approving and withdrawing
// are both approval entries, but they are other changes: the id an
// approval was sent with, sent again to withdraw it, is refused with the
// conflict sentence and writes nothing; the other way round too.
func TestAnApprovalsOperationIDCannotWithdrawIt(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	st, _ := e.planned(t, "notes", request.ModeGuided, "Add tags")
	op := e.op()
	st, err := e.svc.Approve(ctx, st.ID, st.Revision, op)
	if err != nil {
		t.Fatal(err)
	}
	entries := e.count(t, `SELECT count(*) FROM request_journal WHERE request_id = ?`, st.ID)
	_, err = e.svc.WithdrawApproval(ctx, st.IntentID, st.Revision, op)
	if re := wantRefusal(t, err, refusal.Conflict); re.Message != `Operation id "`+op+`" was sent before for another change; nothing was written. Reload the page and try again.` {
		t.Fatalf("message %q", re.Message)
	}
	if n := e.count(t, `SELECT count(*) FROM request_journal WHERE request_id = ?`, st.ID); n != entries {
		t.Fatalf("the refused withdrawal wrote %d entries", n-entries)
	}
	if st = e.state(t, st.ID); !st.Approval.Valid {
		t.Fatalf("the approval did not hold: %+v", st.Approval)
	}

	op = e.op()
	st, err = e.svc.WithdrawApproval(ctx, st.IntentID, st.Revision, op)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Approve(ctx, st.ID, st.Revision, op)
	wantRefusal(t, err, refusal.Conflict)
	if st = e.state(t, st.ID); st.Approval.Valid || !st.Approval.Revoked {
		t.Fatalf("a withdrawal's id approved again: %+v", st.Approval)
	}
}
