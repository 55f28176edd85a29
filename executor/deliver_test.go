package executor_test

import (
	"context"
	"testing"
	"time"

	"autoapp/executor"
	"autoapp/executor/ai/scripted"
	"autoapp/executor/workspace"
	"autoapp/intent"
	"autoapp/intent/delivery"
	"autoapp/migrations"
)

// TestADoneIntentLeftUndeliveredIsDeliveredOnStart: a launcher that
// stopped between marking the intent done and delivering it (here, one
// built with no deliveries) leaves it undelivered; the next start delivers
// it, once.
func TestADoneIntentLeftUndeliveredIsDeliveredOnStart(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{addLine("Hello notes")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	if d := h.run(t, id); d.Status != intent.IntentDone {
		t.Fatalf("the intent is %s (%q)", d.Status, d.StopReason)
	}

	db, err := migrations.Open(h.db, migrations.Intents)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	deliveries := delivery.NewService(db, func(appID string) (*workspace.Workspace, error) {
		return workspace.Open(h.apps.WorkspaceDir(appID), time.Now)
	}, time.Now)
	ctx := context.Background()
	if _, err := deliveries.Get(ctx, id); err == nil {
		t.Fatal("the first launcher delivered: the test stands for nothing")
	}
	// The next launcher starts over the same stores.
	next := executor.New(executor.Deps{Backlog: h.backlog, Apps: h.apps, Candidates: h.cands, Models: h.providers, Deliveries: deliveries, Now: time.Now})
	t.Cleanup(next.Shutdown)
	if n, err := next.DeliverMissing(ctx); err != nil || n != 1 {
		t.Fatalf("DeliverMissing = %d, %v; want the one done intent delivered", n, err)
	}
	got, err := deliveries.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Artifact("site/index.html"); !ok {
		t.Errorf("the delivery holds %+v, want the manifest's artifacts", got.Artifacts)
	}
	if n, err := next.DeliverMissing(ctx); err != nil || n != 0 {
		t.Fatalf("DeliverMissing again = %d, %v; want nothing: it is delivered once", n, err)
	}
}
