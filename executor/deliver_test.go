package executor_test

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
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

// TestADeliveryIsOfTheRevisionTheChecksPassedAt: the delivery write fails
// after the last verdict, and a direct edit then commits a change to the
// artifact. Run delivers the judged revision's bytes, not the new HEAD's,
// and the delivery keeps the HEAD it found, for the panel to say so.
func TestADeliveryIsOfTheRevisionTheChecksPassedAt(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	h.scriptHeading(id, 1)
	h.exec1(t, `CREATE TRIGGER no_delivery BEFORE INSERT ON deliveries BEGIN SELECT RAISE(ABORT, 'the disk is full'); END`)
	if d := h.run(t, id); d.Status != intent.IntentStopped {
		t.Fatalf("the intent is %s (%q), want stopped undelivered", d.Status, d.StopReason)
	}
	ctx := context.Background()
	detail, err := h.backlog.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	judged := detail.Tasks[0].RevAfter
	judgedPage, err := os.ReadFile(filepath.Join(h.apps.WorkspaceDir("site"), "site", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	// A chat turn's direct edit, committed after the verdict.
	ws := h.apps.WorkspaceDir("site")
	if err := os.WriteFile(filepath.Join(ws, "site", "index.html"), []byte("<h1>Never judged</h1>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "A direct edit"}} {
		if out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	h.exec1(t, `DROP TRIGGER no_delivery`)
	if d := h.run(t, id); d.Status != intent.IntentDone {
		t.Fatalf("after Run the intent is %s (%q)", d.Status, d.StopReason)
	}
	got, err := h.launcher.Deliveries.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != judged {
		t.Errorf("the delivery is of %s, want the judged revision %s", got.Revision, judged)
	}
	if got.Evidence.HeadAtDelivery == "" || got.Evidence.HeadAtDelivery == judged {
		t.Errorf("the delivery kept HEAD %q, want the later revision it found", got.Evidence.HeadAtDelivery)
	}
	blob, _, err := h.launcher.Deliveries.Artifact(ctx, id, "site/index.html")
	if err != nil {
		t.Fatal(err)
	}
	if string(blob.Data) != string(judgedPage) {
		t.Errorf("the delivered page is %q, want the judged %q", blob.Data, judgedPage)
	}
}
