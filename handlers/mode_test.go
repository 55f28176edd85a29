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

// TestTheOwnerSwitchesARequestsMode: the intent's page and the Request page
// carry the mode control with the revision seen; a switch writes a mode
// entry and voids the approval, and a stale revision is refused with a
// sentence and writes nothing.
func TestTheOwnerSwitchesARequestsMode(t *testing.T) {
	t.Parallel()
	s, ada := withApp(t)
	ctx := context.Background()
	requests := s.launcher.Requests
	st, in := s.guidedPlan(t)
	state := func() request.State {
		t.Helper()
		st, err := requests.ForIntent(ctx, in.ID)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	entries := func() int {
		t.Helper()
		var n int
		if err := s.db.Read.Get(&n, `SELECT count(*) FROM request_journal WHERE request_id = ?`, st.ID); err != nil {
			t.Fatal(err)
		}
		return n
	}
	wantRedirect(t, ada.post(intentPath(in.ID)+"/approve", url.Values{"seen": {strconv.Itoa(state().Revision)}, "op": {"op-approve"}}), intentPath(in.ID))
	r := ada.get(intentPath(in.ID))
	control := element(t, r, `<form method="post" action="`+intentPath(in.ID)+`/mode"`, "</form>")
	for _, want := range []string{`data-testid="mode-control"`, `name="seen" value="` + strconv.Itoa(state().Revision) + `"`,
		`name="mode" value="autonomous"`, `name="op"`, "Switching voids your approval of the plan."} {
		if !strings.Contains(control, want) {
			t.Fatalf("the mode control lacks %s: %s", want, control)
		}
	}

	t.Run("a stale revision", func(t *testing.T) {
		n := entries()
		r := ada.post(intentPath(in.ID)+"/mode", url.Values{"seen": {strconv.Itoa(state().Revision - 1)}, "op": {"op-mode-stale"}, "mode": {"autonomous"}})
		wantStatus(t, r, fiber.StatusConflict)
		wantText(t, r, "The request changed since you looked (revision 3, you saw 2); reload and try again.")
		if entries() != n || state().Mode != request.ModeGuided || !state().Approval.Valid {
			t.Fatal("a stale switch wrote")
		}
	})
	t.Run("a switch on the intent's page", func(t *testing.T) {
		wantRedirect(t, ada.post(intentPath(in.ID)+"/mode", url.Values{"seen": {strconv.Itoa(state().Revision)}, "op": {"op-mode-1"}, "mode": {"autonomous"}}), intentPath(in.ID))
		var n int
		if err := s.db.Read.Get(&n, `SELECT count(*) FROM request_journal WHERE request_id = ? AND kind = 'mode' AND actor = 'owner'
			AND json_extract(body, '$.mode') = 'autonomous'`, st.ID); err != nil || n != 1 {
			t.Fatalf("%d mode entries (%v)", n, err)
		}
		if st := state(); st.Mode != request.ModeAutonomous || st.Approved != "" ||
			st.Approval.Voided != "Switching the request to autonomous voided the approval." {
			t.Fatalf("after the switch: %+v", st)
		}
		r := ada.get(intentPath(in.ID))
		wantSentence(t, r, `<strong data-testid="mode">autonomous</strong>`)
		wantSentence(t, r, `name="mode" value="guided"`)
		if strings.Contains(r.body, `data-testid="approval"`) {
			t.Fatal("an autonomous intent shows the approval card")
		}
	})
	t.Run("a switch on the Request page", func(t *testing.T) {
		r := ada.get("/request")
		control := element(t, r, `<form method="post" action="/request/mode"`, "</form>")
		if !strings.Contains(control, `data-testid="mode-control"`) || !strings.Contains(control, `name="request" value="`+strconv.FormatInt(st.ID, 10)+`"`) {
			t.Fatalf("the Request page's mode control: %s", control)
		}
		wantRedirect(t, ada.post("/request/mode", url.Values{"request": {strconv.FormatInt(st.ID, 10)}, "seen": {strconv.Itoa(state().Revision)},
			"op": {"op-mode-2"}, "mode": {"guided"}}), "/request")
		if st := state(); st.Mode != request.ModeGuided || st.Approval.Valid || !st.Approvable {
			t.Fatalf("switched back: %+v", st)
		}
		r = ada.post("/request/mode", url.Values{"request": {strconv.FormatInt(st.ID, 10)}, "seen": {"1"}, "op": {"op-mode-3"}, "mode": {"autonomous"}})
		wantStatus(t, r, fiber.StatusConflict)
		wantSentence(t, r, `data-testid="refusal-mode"`)
	})
	t.Run("while the intent runs", func(t *testing.T) {
		wantRedirect(t, ada.post(intentPath(in.ID)+"/approve", url.Values{"seen": {strconv.Itoa(state().Revision)}, "op": {"op-approve-2"}}), intentPath(in.ID))
		s.moveIntent(t, in.ID, intent.IntentRunning)
		for _, page := range []string{intentPath(in.ID), "/request"} {
			r := ada.get(page)
			control := element(t, r, `data-testid="mode-control"`, "</form>")
			if strings.Contains(control, `data-testid="mode-switch"`) || !strings.Contains(control, "A run keeps the mode it started in; stop it to switch.") {
				t.Fatalf("%s offers to switch the mode of a running intent: %s", page, control)
			}
		}
		n := entries()
		r := ada.post(intentPath(in.ID)+"/mode", url.Values{"seen": {strconv.Itoa(state().Revision)}, "op": {"op-mode-4"}, "mode": {"autonomous"}})
		wantStatus(t, r, fiber.StatusConflict)
		wantText(t, r, "is running; stop it before changing its mode.")
		if entries() != n || state().Mode != request.ModeGuided || !state().Approval.Valid {
			t.Fatal("a switch while running wrote")
		}
	})
}
