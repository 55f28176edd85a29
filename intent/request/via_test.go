package request_test

import (
	"context"
	"strings"
	"testing"

	"autoapp/intent"
	"autoapp/intent/request"
)

// TestEveryActOfTheOwnerSaysWhereItCameFrom: the request, its messages,
// the approval, the run and a receipt each keep the way the owner's act
// reached the launcher (an MCP client here, the console by default); the
// engineer's entries keep none. Neither the journal nor a receipt lets it
// be changed afterwards.
func TestEveryActOfTheOwnerSaysWhereItCameFrom(t *testing.T) {
	e := mustOpen(t)
	mcp := intent.WithVia(context.Background(), intent.ViaMCP)
	e.app(t, "notes")
	st, err := e.svc.Create(mcp, "notes", "Add tags", request.ModeGuided, e.op())
	if err != nil {
		t.Fatal(err)
	}
	if st.Via != "mcp" {
		t.Errorf("the request's via = %q, want mcp", st.Via)
	}
	st, err = e.svc.Message(context.Background(), st.ID, st.Revision, e.op(), "Lowercase tags.")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Messages) != 1 || st.Messages[0].Via != "console" {
		t.Errorf("a message from the page = %+v, want via console", st.Messages)
	}
	in, err := e.backlog.OpenDraft(context.Background(), "notes", "Add tags", intent.Analysis{Restated: []string{"Tags."}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Link(context.Background(), st.ID, in.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.backlog.AddTask(context.Background(), in.ID, task("Add tags")); err != nil {
		t.Fatal(err)
	}
	st = e.submit(t, st.ID)
	if _, err := e.svc.ApproveShown(mcp, st.ID, st.Revision, e.op(), st.Current); err != nil {
		t.Fatal(err)
	}
	if err := e.backlog.BeginRun(mcp, in.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.all.Interventions.SubmitIntervention(mcp, in.ID, "f-1", intent.InterventionFeedback, "Shorter labels."); err != nil {
		t.Fatal(err)
	}
	pending, _, err := e.all.Interventions.Interventions(context.Background(), in.ID)
	if err != nil || len(pending) != 1 || pending[0].Via != intent.ViaMCP {
		t.Fatalf("the receipt = %+v (%v), want it via mcp", pending, err)
	}

	var rows []struct {
		Kind  string `db:"kind"`
		Actor string `db:"actor"`
		Via   string `db:"via"`
	}
	if err := e.db.Read.Select(&rows, `SELECT kind, actor, via FROM request_journal WHERE request_id = ? ORDER BY revision`, st.ID); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.Kind+"/"+r.Actor+"/"+r.Via)
	}
	want := "request/owner/mcp message/owner/console plan/engineer/ approval/owner/mcp run/host/mcp"
	if strings.Join(got, " ") != want {
		t.Errorf("the journal says\n%s\nwant\n%s", strings.Join(got, " "), want)
	}

	if _, err := e.db.Write.Exec(`UPDATE interventions SET via = 'console'`); err == nil || !strings.Contains(err.Error(), "cannot change") {
		t.Errorf("a receipt's via was changed (%v)", err)
	}
	if _, err := e.db.Write.Exec(`UPDATE request_journal SET via = 'console'`); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Errorf("a journal entry's via was changed (%v)", err)
	}
	if _, err := e.db.Write.Exec(`INSERT INTO interventions (intent_id, request_id, kind, text, submitted_at, boundary_pause, via)
		VALUES (?, 'x', 'pause', '', 0, 1, 'carrier pigeon')`, in.ID); err == nil {
		t.Error("a receipt took a via no adapter has")
	}
}
