package executor_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"autoapp/intent"
)

// exec runs one statement on the intents store through a connection of its
// own, as another process would.
func (h *host) exec1(t *testing.T, stmt string) {
	t.Helper()
	db, err := sql.Open("sqlite3", h.db+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatal(err)
	}
}

// TestDoneAndItsDeliveryAreOneWrite: when the delivery cannot be recorded,
// the intent is not done either — it stops saying so, and Run delivers it.
// (Before, done was one transaction and the delivery another: a crash
// between them left a done intent that was never delivered.)
func TestDoneAndItsDeliveryAreOneWrite(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	h.scriptHeading(id, 1)
	h.exec1(t, `CREATE TRIGGER no_delivery BEFORE INSERT ON deliveries BEGIN SELECT RAISE(ABORT, 'the disk is full'); END`)
	d := h.run(t, id)
	if d.Status == intent.IntentDone {
		t.Fatal("the intent is done although its delivery was never written")
	}
	if d.Status != intent.IntentStopped || !strings.Contains(d.StopReason, "could not be delivered") {
		t.Fatalf("the intent is %s (%q), want stopped saying it could not be delivered", d.Status, d.StopReason)
	}
	if _, err := h.launcher.Deliveries.Get(context.Background(), id); err == nil {
		t.Fatal("a delivery was recorded")
	}
	// With the store writable again, Run finishes it: done and delivered.
	h.exec1(t, `DROP TRIGGER no_delivery`)
	d = h.run(t, id)
	if d.Status != intent.IntentDone {
		t.Fatalf("after Run the intent is %s (%q)", d.Status, d.StopReason)
	}
	got, err := h.launcher.Deliveries.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Artifact("site/index.html"); !ok {
		t.Errorf("the delivery holds %+v, want the manifest's artifacts", got.Artifacts)
	}
}

// TestADoneIntentLeftUndeliveredIsDeliveredOnStart: a done intent with no
// delivery (left by a launcher from before done and delivery were one
// write) gets it when the next launcher starts, once.
func TestADoneIntentLeftUndeliveredIsDeliveredOnStart(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	h.scriptHeading(id, 1)
	if d := h.run(t, id); d.Status != intent.IntentDone {
		t.Fatalf("the intent is %s (%q)", d.Status, d.StopReason)
	}
	h.exec1(t, `DROP TRIGGER IF EXISTS deliveries_no_delete`)
	h.exec1(t, `DELETE FROM deliveries`)
	ctx := context.Background()
	if _, err := h.launcher.Deliveries.Get(ctx, id); err == nil {
		t.Fatal("the delivery is still there: the test stands for nothing")
	}
	// The next start delivers it.
	if err := h.launcher.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := h.launcher.Deliveries.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Artifact("site/index.html"); !ok {
		t.Errorf("the delivery holds %+v, want the manifest's artifacts", got.Artifacts)
	}
	if n, err := h.exec.DeliverMissing(ctx); err != nil || n != 0 {
		t.Fatalf("DeliverMissing again = %d, %v; want nothing: it is delivered once", n, err)
	}
}
