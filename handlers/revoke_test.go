package handlers_test

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"autoapp/executor/ai/scripted"
	"autoapp/intent"
	"autoapp/intent/request"
)

// guidedPlan is a guided request whose intent, with one task, the engineer
// submitted and the journal recorded.
func (s *server) guidedPlan(t *testing.T) (request.State, intent.Intent) {
	t.Helper()
	ctx := context.Background()
	requests := s.launcher.Requests
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
	if st, err = requests.Sync(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	return st, in
}

// TestWithdrawApprovalBeforeRun: the owner withdraws an approval on the
// intent's page (behind its confirmation): the journal gets an approval
// entry with the reason "revoked", Run is refused with the guided
// sentence, a repeated submit writes nothing, and once approved again Run
// starts.
func TestWithdrawApprovalBeforeRun(t *testing.T) {
	t.Parallel()
	s, ada := withApp(t)
	m := withModel(t, s)
	g := scripted.NewGate(t)
	m.On(scripted.Any(), scripted.Reply{Before: g.Hold, Fault: scripted.Status500})
	ctx := context.Background()
	st, in := s.guidedPlan(t)
	revision := func() string {
		t.Helper()
		st, err := s.launcher.Requests.ForIntent(ctx, in.ID)
		if err != nil {
			t.Fatal(err)
		}
		return strconv.Itoa(st.Revision)
	}
	entries := func() int {
		t.Helper()
		var n int
		if err := s.db.Read.Get(&n, `SELECT count(*) FROM request_journal WHERE request_id = ?`, st.ID); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if strings.Contains(ada.get(intentPath(in.ID)).body, `data-testid="withdraw-approval"`) {
		t.Fatal("an unapproved plan offers Withdraw approval")
	}
	wantRedirect(t, ada.post(intentPath(in.ID)+"/approve", url.Values{"seen": {revision()}, "op": {"op-approve-1"}}), intentPath(in.ID))
	r := ada.get(intentPath(in.ID))
	wantSentence(t, r, `data-testid="withdraw-approval"`)
	wantSentence(t, r, `data-testid="withdraw-approval-confirm"`)

	withdraw := url.Values{"seen": {revision()}, "op": {"op-withdraw-1"}}
	wantRedirect(t, ada.post(intentPath(in.ID)+"/approval/withdraw", withdraw), intentPath(in.ID))
	var revoked int
	if err := s.db.Read.Get(&revoked, `SELECT count(*) FROM request_journal WHERE request_id = ? AND kind = 'approval'
		AND actor = 'owner' AND json_extract(body, '$.reason') = 'revoked'`, st.ID); err != nil || revoked != 1 {
		t.Fatalf("%d revoked approval entries (%v)", revoked, err)
	}
	// The same submit again writes nothing.
	n := entries()
	wantRedirect(t, ada.post(intentPath(in.ID)+"/approval/withdraw", withdraw), intentPath(in.ID))
	if entries() != n {
		t.Fatal("a repeated withdrawal wrote an entry")
	}

	r = ada.post(intentPath(in.ID)+"/run", nil)
	wantStatus(t, r, fiber.StatusConflict)
	wantText(t, r, "Approve the plan before Run: this request is guided.")
	r = ada.get(intentPath(in.ID))
	wantSentence(t, r, `data-testid="revoked"`)
	wantSentence(t, r, `data-testid="approve"`)
	if strings.Contains(r.body, `data-testid="withdraw-approval"`) || strings.Contains(r.body, `data-testid="run-confirm"`) {
		t.Fatal("after withdrawing, the page offers Withdraw approval or Run")
	}
	// Withdrawing again, with a new operation, is refused with a sentence.
	r = ada.post(intentPath(in.ID)+"/approval/withdraw", url.Values{"seen": {revision()}, "op": {"op-withdraw-2"}})
	wantStatus(t, r, fiber.StatusConflict)
	wantText(t, r, "There is no approval to withdraw on request "+strconv.FormatInt(st.ID, 10)+".")

	wantRedirect(t, ada.post(intentPath(in.ID)+"/approve", url.Values{"seen": {revision()}, "op": {"op-approve-2"}}), intentPath(in.ID))
	wantRedirect(t, ada.post(intentPath(in.ID)+"/run", nil), intentPath(in.ID))
	g.Wait(t)
}

// TestAWithdrawalIsInTheRequestsJournal: withdrawing the intent on its
// page appends a withdrawn entry (actor owner) to the request's journal in
// the same write; the request and its history stay, and its mode no
// longer changes. (Before, the journal did not say the request was
// cancelled.)
func TestAWithdrawalIsInTheRequestsJournal(t *testing.T) {
	s, ada := withApp(t)
	st, in := s.guidedPlan(t)
	page := ada.get(intentPath(in.ID))
	action := intentPath(in.ID) + "/withdraw"
	wantRedirect(t, ada.post(action, url.Values{"op": {formOp(t, page, action)}}), intentPath(in.ID))

	var rows []string
	if err := s.db.Read.Select(&rows, `SELECT kind || ' ' || actor FROM request_journal WHERE request_id = ? ORDER BY revision`, st.ID); err != nil {
		t.Fatal(err)
	}
	if len(rows) <= st.Revision || rows[len(rows)-1] != "withdrawn owner" || len(rows) != st.Revision+1 {
		t.Fatalf("the journal after the withdrawal: %q (it had %d entries)", rows, st.Revision)
	}
	after, err := s.launcher.Requests.State(context.Background(), st.ID)
	if err != nil || !after.Withdrawn || after.Text != "Add tags" {
		t.Fatalf("the request after the withdrawal: %+v %v", after, err)
	}
	r := ada.post(intentPath(in.ID)+"/mode", url.Values{"seen": {strconv.Itoa(after.Revision)}, "op": {"op-mode-withdrawn"}, "mode": {"autonomous"}})
	wantStatus(t, r, fiber.StatusConflict)
}
