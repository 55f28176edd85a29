package handlers_test

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"autoapp/intent"
	"autoapp/intent/request"
)

// TestTheApproveButtonFollowsTheRequestsRule: the intent page offers
// Approve exactly when the request's rule allows it, and says the rule's
// sentence when it does not; pressing it anyway is refused with the same.
func TestTheApproveButtonFollowsTheRequestsRule(t *testing.T) {
	t.Parallel()
	s, ada := withApp(t)
	ctx := context.Background()
	requests := s.launcher.Requests
	st, err := requests.Create(ctx, appID, "Add tags", request.ModeGuided, "op-create")
	if err != nil {
		t.Fatal(err)
	}
	in, tasks := s.draft(t, "Add tags", intent.Analysis{Restated: []string{"Add tags."}}, planStep{title: "Add tags", priority: "medium"})
	if _, err := requests.Link(ctx, st.ID, in.ID); err != nil {
		t.Fatal(err)
	}
	const button = `data-testid="approve"`
	state := func() request.State {
		t.Helper()
		st, err := requests.ForIntent(ctx, in.ID)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	// follows checks the page against the rule, and returns the page.
	follows := func(t *testing.T) *response {
		t.Helper()
		st := state()
		r := ada.get(intentPath(in.ID))
		wantStatus(t, r, fiber.StatusOK)
		if strings.Contains(r.body, button) != st.Approvable {
			t.Fatalf("the page offers Approve: %v; the rule says %v (%q)", !st.Approvable, st.Approvable, st.Unapprovable)
		}
		if !st.Approvable && !st.Approval.Valid {
			wantText(t, r, st.Unapprovable)
		}
		return r
	}
	approve := func() *response {
		return ada.post(intentPath(in.ID)+"/approve", url.Values{"seen": {strconv.Itoa(state().Revision)}, "op": {"op-approve-" + strconv.Itoa(state().Revision)}})
	}

	t.Run("being written", func(t *testing.T) { follows(t) })
	if err := s.backlog.Submit(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := requests.PlanSubmitted(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	t.Run("submitted", func(t *testing.T) {
		if !state().Approvable {
			t.Fatalf("a submitted guided plan cannot be approved: %s", state().Unapprovable)
		}
		follows(t)
	})
	t.Run("approved", func(t *testing.T) {
		wantRedirect(t, approve(), intentPath(in.ID))
		wantSentence(t, follows(t), `data-testid="approved"`)
	})
	t.Run("changed by the owner after it was submitted", func(t *testing.T) {
		// The owner's own change is the owner's to approve: a plan version
		// of theirs.
		wantRedirect(t, ada.post(taskPath(tasks[0].ID)+"/model", url.Values{"model": {"gpt-5-mini"}, "op": {"op-model"}}), intentPath(in.ID))
		follows(t)
		if st := state(); !st.Approvable || st.Unapprovable != "" {
			t.Fatalf("after the owner's change: approvable %v, %q", st.Approvable, st.Unapprovable)
		}
		wantRedirect(t, approve(), intentPath(in.ID))
		page := follows(t)
		wantSentence(t, page, `data-testid="approved"`)
		wantSentence(t, page, "Plan version 2")
	})
}

// TestAnApprovalCoversTheAnalysis: after the owner approved, a later chat
// turn rewrites the analysis through intent.open (other assumptions, the
// same tasks) and submits again; the approval no longer holds, Run is
// refused with the changed plan's sentence, and the page shows the new
// version.
func TestAnApprovalCoversTheAnalysis(t *testing.T) {
	t.Parallel()
	s, ada := withApp(t)
	withModel(t, s)
	ctx := context.Background()
	requests := s.launcher.Requests
	st, err := requests.Create(ctx, appID, "Add tags", request.ModeGuided, "op-create")
	if err != nil {
		t.Fatal(err)
	}
	in, _ := s.draft(t, "Add tags", intent.Analysis{Restated: []string{"Add tags."}, Assumptions: []string{"One tag per note."}},
		planStep{title: "Add tags", priority: "medium"})
	if _, err := requests.Link(ctx, st.ID, in.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.backlog.Submit(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	st, err = requests.Sync(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantRedirect(t, ada.post(intentPath(in.ID)+"/approve", url.Values{"seen": {strconv.Itoa(st.Revision)}, "op": {"op-approve"}}), intentPath(in.ID))
	wantSentence(t, ada.get(intentPath(in.ID)), `data-testid="approved"`)

	// The engineer's tools: intent.open with other assumptions, then
	// intent.submit; the turn's end syncs the journal.
	if _, err := s.backlog.OpenDraft(ctx, appID, "", intent.Analysis{Restated: []string{"Add tags."}, Assumptions: []string{"Several tags per note."}}); err != nil {
		t.Fatal(err)
	}
	if err := s.backlog.Submit(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if st, err = requests.Sync(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	const voided = "The assumptions changed. A new plan was submitted."
	r := ada.post(intentPath(in.ID)+"/run", nil)
	wantStatus(t, r, fiber.StatusConflict)
	wantText(t, r, voided+" Approve the plan again before Run: this request is guided.")

	r = ada.get(intentPath(in.ID))
	wantStatus(t, r, fiber.StatusOK)
	wantSentence(t, r, `data-testid="not-approved"`)
	wantText(t, r, voided)
	wantText(t, r, "Several tags per note.")
	wantSentence(t, r, `data-testid="plan-version"`)
	wantText(t, r, "Plan version 2")
	if strings.Contains(r.body, `data-testid="run-confirm"`) {
		t.Fatal("the page offers Run on a voided approval")
	}
}

// TestApproveBindsThePlanThePageShowed: the Approve form carries the hash
// of the plan the page showed; when the plan changed since (here the
// owner's own change of a model, made in another tab), pressing Approve on
// the old page is refused with a sentence and approves nothing; the page
// read again approves the version it shows. (Before, the old page's
// Approve approved the changed plan it had never shown.)
func TestApproveBindsThePlanThePageShowed(t *testing.T) {
	s, ada := withApp(t)
	st, in := s.guidedPlan(t)
	old := ada.get(intentPath(in.ID))
	action := intentPath(in.ID) + "/approve"
	form := element(t, old, `<form method="post" action="`+action+`"`, "</form>")
	shown := inputValue(t, form, "plan")
	if shown != st.Current || shown == "" {
		t.Fatalf("the Approve form carries plan %q, want the plan's hash %q", shown, st.Current)
	}
	d, err := s.backlog.Get(context.Background(), in.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantRedirect(t, ada.post(taskPath(d.Tasks[0].ID)+"/model", url.Values{"model": {"gpt-5-mini"}, "op": {"op-model-other-tab"}}), intentPath(in.ID))

	r := ada.post(action, url.Values{"seen": {inputValue(t, form, "seen")}, "op": {inputValue(t, form, "op")}, "plan": {shown}})
	wantStatus(t, r, fiber.StatusConflict)
	wantText(t, r, "The plan changed since you looked; reload the page and approve the plan it shows.")
	if after, _ := s.launcher.Requests.State(context.Background(), st.ID); after.Approval.Valid || after.Approved != "" {
		t.Fatalf("the old page approved the changed plan: %+v", after.Approval)
	}

	again := ada.get(intentPath(in.ID))
	form = element(t, again, `<form method="post" action="`+action+`"`, "</form>")
	wantRedirect(t, ada.post(action, url.Values{"seen": {inputValue(t, form, "seen")}, "op": {inputValue(t, form, "op")}, "plan": {inputValue(t, form, "plan")}}), intentPath(in.ID))
	wantSentence(t, ada.get(intentPath(in.ID)), `data-testid="approved"`)
}
