package intent_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"autoapp/intent"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
	"autoapp/migrations"
)

// running opens a draft for a new application with the given tasks, and
// starts a run of it as the executor does: every task queued, the intent
// running.
func (e *env) running(tb testing.TB, appID string, titles ...string) (intent.Intent, []intent.Task) {
	tb.Helper()
	in, tasks := e.draft(tb, appID, titles...)
	ctx := context.Background()
	if err := e.svc.Submit(ctx, in.ID); err != nil {
		tb.Fatal(err)
	}
	if err := e.svc.BeginRun(ctx, in.ID); err != nil {
		tb.Fatal(err)
	}
	return in, tasks
}

func TestAnIdenticalRetryReturnsTheOriginalReceiptAndWritesNothing(t *testing.T) {
	e := mustOpen(t)
	in, _ := e.running(t, "notes", "Add tags")
	ctx := context.Background()
	first, replayed, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, "request-123", intent.InterventionFeedback, "Keep the partial implementation")
	if err != nil || replayed {
		t.Fatalf("first submission: replayed %v, %v", replayed, err)
	}
	if first.Order <= 0 || !first.BoundaryPause || first.Text != "Keep the partial implementation" || first.AppliedAt != nil {
		t.Fatalf("the receipt is not what was sent: %+v", first)
	}
	e.clock.Set(e.clock.Now().Add(time.Minute))
	again, replayed, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, "request-123", intent.InterventionFeedback, "Keep the partial implementation")
	if err != nil || !replayed {
		t.Fatalf("retry: replayed %v, %v", replayed, err)
	}
	if again.Order != first.Order || !again.SubmittedAt.Equal(first.SubmittedAt) {
		t.Fatalf("a retry got another receipt: %+v, first %+v", again, first)
	}
	if n := e.count(t, `SELECT count(*) FROM interventions`); n != 1 {
		t.Fatalf("%d receipts after a retry, want 1", n)
	}
	// Once applied, a retry still answers the original acceptance receipt.
	if _, err := e.all.Interventions.ApplyInterventions(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	late, replayed, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, "request-123", intent.InterventionFeedback, "Keep the partial implementation")
	if err != nil || !replayed || late.Order != first.Order || late.AppliedAt != nil {
		t.Fatalf("a retry after application: %+v, replayed %v, %v", late, replayed, err)
	}
}

func TestTheSameRequestIDWithOtherTextOrKindIsAConflict(t *testing.T) {
	e := mustOpen(t)
	in, _ := e.running(t, "notes", "Add tags")
	ctx := context.Background()
	if _, _, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, "r-1", intent.InterventionFeedback, "Use blue."); err != nil {
		t.Fatal(err)
	}
	// The text is kept byte for byte: a trailing space is other text.
	_, _, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, "r-1", intent.InterventionFeedback, "Use blue. ")
	if ie := wantRefusal(t, err, refusal.Conflict); ie.Message == "" {
		t.Fatal("no sentence")
	}
	_, _, err = e.all.Interventions.SubmitIntervention(ctx, in.ID, "r-1", intent.InterventionPause, "Use blue.")
	wantRefusal(t, err, refusal.Conflict)
	if n := e.count(t, `SELECT count(*) FROM interventions`); n != 1 {
		t.Fatalf("%d receipts, want 1", n)
	}
}

func TestConcurrentSubmissionsGetDistinctIncreasingOrders(t *testing.T) {
	e := mustOpen(t)
	in, _ := e.running(t, "notes", "Add tags")
	ctx := context.Background()
	const n = 20
	orders := make([]int64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rc, _, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, fmt.Sprintf("r-%d", i), intent.InterventionFeedback, "feedback "+strconv.Itoa(i))
			orders[i], errs[i] = rc.Order, err
		}()
	}
	wg.Wait()
	seen := map[int64]bool{}
	for i, o := range orders {
		if errs[i] != nil {
			t.Fatalf("submission %d: %v", i, errs[i])
		}
		if seen[o] {
			t.Fatalf("order %d given twice: %v", o, orders)
		}
		seen[o] = true
	}
	pending, _, err := e.all.Interventions.Interventions(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != n {
		t.Fatalf("%d pending, want %d", len(pending), n)
	}
	for i := 1; i < n; i++ {
		if pending[i].Order <= pending[i-1].Order || pending[i].SubmittedAt.Before(pending[i-1].SubmittedAt) {
			t.Fatalf("orders do not increase in acceptance order: %+v then %+v", pending[i-1], pending[i])
		}
	}
	// Orders keep increasing across consumed batches.
	if _, err := e.all.Interventions.ApplyInterventions(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	e.moveIntent(t, in.ID, intent.IntentRunning)
	next, _, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, "after", intent.InterventionPause, "")
	if err != nil {
		t.Fatal(err)
	}
	if next.Order <= pending[n-1].Order {
		t.Fatalf("order %d after a consumed batch ending at %d", next.Order, pending[n-1].Order)
	}
}

func TestBadSubmissionsAreRefusedWithASentenceAndLeaveNoReceipt(t *testing.T) {
	e := mustOpen(t)
	in, _ := e.running(t, "notes", "Add tags")
	stopped, _ := e.draft(t, "todo", "Add todos")
	ctx := context.Background()
	cases := []struct {
		name     string
		intentID int64
		id       string
		kind     intent.InterventionKind
		text     string
		code     refusal.Code
	}{
		{"empty feedback", in.ID, "a", intent.InterventionFeedback, "  \n", refusal.Invalid},
		{"unknown kind", in.ID, "b", "resume", "go on", refusal.Invalid},
		{"no request id", in.ID, "", intent.InterventionPause, "", refusal.Invalid},
		{"an intent that is not running", stopped.ID, "c", intent.InterventionPause, "", refusal.Conflict},
		{"no such intent", 999, "d", intent.InterventionPause, "", refusal.NotFound},
	}
	for _, c := range cases {
		_, _, err := e.all.Interventions.SubmitIntervention(ctx, c.intentID, c.id, c.kind, c.text)
		if ie := wantRefusal(t, err, c.code); ie.Message == "" {
			t.Fatalf("%s: no sentence", c.name)
		}
	}
	if n := e.count(t, `SELECT count(*) FROM interventions`); n != 0 {
		t.Fatalf("%d receipts written by refused submissions", n)
	}
}

func TestAPauseStopsTheRunAtTheBoundaryKeepingTheNextTask(t *testing.T) {
	e := mustOpen(t)
	in, tasks := e.running(t, "notes", "Add tags", "Filter by tag")
	ctx := context.Background()
	// The first task ran and completed: the verdict's boundary comes next.
	e.move(t, tasks[0].ID, intent.TaskInProgress, "r1")
	e.move(t, tasks[0].ID, intent.TaskCompleted, "r1")
	if _, _, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, "p-1", intent.InterventionPause, ""); err != nil {
		t.Fatal(err)
	}
	// Submitting changed nothing of the run.
	if s := e.intentStatus(t, in.ID); s != intent.IntentRunning {
		t.Fatalf("submitting moved the intent to %s", s)
	}
	e.clock.Set(e.clock.Now().Add(time.Second))
	a, err := e.all.Interventions.ApplyInterventions(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Stopped || a.Reason != intent.PausedByPerson || len(a.Receipts) != 1 {
		t.Fatalf("applied %+v", a)
	}
	d, err := e.svc.Get(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != intent.IntentStopped || d.StopReason != intent.PausedByPerson {
		t.Fatalf("intent %s (%q) after a pause", d.Status, d.StopReason)
	}
	if s := e.status(t, tasks[1].ID); s != intent.TaskInQueue {
		t.Fatalf("the next task is %s after a pause, want it still queued", s)
	}
	pending, applied, err := e.all.Interventions.Interventions(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 0 || len(applied) != 1 || applied[0].AppliedAt == nil || applied[0].ID != "p-1" || applied[0].Held != "" {
		t.Fatalf("pending %+v, applied %+v", pending, applied)
	}
	// Run resumes it.
	if err := e.svc.BeginRun(ctx, in.ID); err != nil {
		t.Fatalf("Run after a pause: %v", err)
	}
}

func TestAPauseOnAnIntentStoppedForAnotherReasonKeepsThatReason(t *testing.T) {
	e := mustOpen(t)
	in, tasks := e.running(t, "notes", "Add tags")
	ctx := context.Background()
	if _, _, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, "p-1", intent.InterventionPause, "after this"); err != nil {
		t.Fatal(err)
	}
	// The turn's verdict failed the task, and the run stopped for it.
	e.move(t, tasks[0].ID, intent.TaskInProgress, "r1")
	e.move(t, tasks[0].ID, intent.TaskFailed, "r1")
	if err := e.svc.MoveIntent(ctx, in.ID, intent.IntentStopped, "0001-add-tags failed."); err != nil {
		t.Fatal(err)
	}
	a, err := e.all.Interventions.ApplyInterventions(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Stopped || len(a.Receipts) != 1 || a.Receipts[0].Held != "0001-add-tags failed." {
		t.Fatalf("applied %+v", a)
	}
	d, _ := e.svc.Get(ctx, in.ID)
	if d.StopReason != "0001-add-tags failed." {
		t.Fatalf("the pause replaced the stop reason: %q", d.StopReason)
	}
	if n := e.count(t, `SELECT count(*) FROM intent_events WHERE intent_id = ? AND to_status = 'stopped'`, in.ID); n != 1 {
		t.Fatalf("%d stops recorded, want the one", n)
	}
}

func TestFeedbackStopsTheRunAndWaitsForTheNextChatTurn(t *testing.T) {
	e := mustOpen(t)
	in, tasks := e.running(t, "notes", "Add tags", "Filter by tag")
	ctx := context.Background()
	e.move(t, tasks[0].ID, intent.TaskInProgress, "r1")
	if _, _, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, "f-1", intent.InterventionFeedback, "Tags should be lowercase."); err != nil {
		t.Fatal(err)
	}
	// Pending feedback blocks Run until it is applied.
	e.move(t, tasks[0].ID, intent.TaskInterrupted, "r1")
	e.moveIntent(t, in.ID, intent.IntentStopped)
	wantRefusal(t, e.svc.BeginRun(ctx, in.ID), refusal.Conflict)

	a, err := e.all.Interventions.ApplyInterventions(ctx, in.ID)
	if err != nil || len(a.Receipts) != 1 {
		t.Fatalf("applied %+v, %v", a, err)
	}
	fb, err := e.all.Interventions.FeedbackForChat(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	if len(fb) != 1 || fb[0].Text != "Tags should be lowercase." || fb[0].IntentID != in.ID {
		t.Fatalf("feedback for the chat: %+v", fb)
	}
	if err := e.all.Interventions.FeedbackGiven(ctx, []int64{fb[0].Order}, "chat-notes-1"); err != nil {
		t.Fatal(err)
	}
	if fb, _ := e.all.Interventions.FeedbackForChat(ctx, "notes"); len(fb) != 0 {
		t.Fatalf("feedback given once is given again: %+v", fb)
	}
	// Applied, it no longer blocks Run.
	if err := e.svc.BeginRun(ctx, in.ID); err != nil {
		t.Fatalf("Run after the feedback was applied: %v", err)
	}
}

func TestFeedbackStopsARunningIntentWithItsReason(t *testing.T) {
	e := mustOpen(t)
	in, _ := e.running(t, "notes", "Add tags")
	ctx := context.Background()
	e.all.Interventions.SubmitIntervention(ctx, in.ID, "p", intent.InterventionPause, "")
	e.all.Interventions.SubmitIntervention(ctx, in.ID, "f", intent.InterventionFeedback, "Smaller steps.")
	a, err := e.all.Interventions.ApplyInterventions(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Stopped || a.Reason != intent.StoppedForFeedback || len(a.Receipts) != 2 {
		t.Fatalf("a batch with feedback: %+v", a)
	}
	if a.Receipts[0].ID != "p" || a.Receipts[1].ID != "f" {
		t.Fatalf("not applied in order: %+v", a.Receipts)
	}
}

func TestInterventionReceiptsCannotBeChangedOrDeleted(t *testing.T) {
	e := mustOpen(t)
	in, _ := e.running(t, "notes", "Add tags")
	ctx := context.Background()
	rc, _, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, "f", intent.InterventionFeedback, "Smaller steps.")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.all.Interventions.ApplyInterventions(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE interventions SET text = 'other' WHERE ord = ?`,
		`UPDATE interventions SET kind = 'pause' WHERE ord = ?`,
		`UPDATE interventions SET done_at = done_at + 1 WHERE ord = ?`,
		`DELETE FROM interventions WHERE ord = ?`,
		`UPDATE intervention_applied SET applied_at = applied_at + 1 WHERE ord = ?`,
		`UPDATE intervention_applied SET held = 'x' WHERE ord = ?`,
		`DELETE FROM intervention_applied WHERE ord = ?`,
	} {
		if _, err := e.db.Write.Exec(q, rc.Order); err == nil {
			t.Errorf("%s: not refused", q)
		}
	}
	// given_run is written once.
	if _, err := e.db.Write.Exec(`UPDATE intervention_applied SET given_run = 'chat-1' WHERE ord = ?`, rc.Order); err != nil {
		t.Fatalf("giving the feedback to a chat turn: %v", err)
	}
	if _, err := e.db.Write.Exec(`UPDATE intervention_applied SET given_run = 'chat-2' WHERE ord = ?`, rc.Order); err == nil {
		t.Error("given_run written twice")
	}
}

// crashEnv names the store a child process applies interventions in, and
// is killed between the state write and the acknowledgement.
const crashEnv = "AUTOAPP_TEST_CRASH_APPLY"

func TestMain(m *testing.M) {
	if spec := os.Getenv(crashEnv); spec != "" {
		crashWhileApplying(spec)
		return
	}
	os.Exit(m.Run())
}

// crashWhileApplying is the child: it applies the intent's interventions
// and kills itself with SIGKILL once they are written, before they are
// acknowledged.
func crashWhileApplying(spec string) {
	var path string
	var id int64
	if _, err := fmt.Sscanf(spec, "%d:%s", &id, &path); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	db, err := migrations.Open(path, migrations.Intents)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	svc := intent.New(db, filepath.Dir(filepath.Dir(path)), time.Now, intent.Collaborators{Journal: request.Journal{}}).Interventions
	intent.SetAfterApply(svc, func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) })
	svc.ApplyInterventions(context.Background(), id)
	fmt.Fprintln(os.Stderr, "the child was not killed")
	os.Exit(4)
}

// countingFeedback is the requests' journal, counting the feedback it is
// told was applied.
type countingFeedback struct {
	request.Journal
	n *int
}

func (c countingFeedback) FeedbackApplied(ctx context.Context, w migrations.Within, intentID int64, at time.Time) error {
	*c.n++
	return c.Journal.FeedbackApplied(ctx, w, intentID, at)
}

func TestACrashBetweenApplyingAndAcknowledgingAppliesNothingTwice(t *testing.T) {
	e := mustOpen(t)
	in, tasks := e.running(t, "notes", "Add tags", "Filter by tag")
	ctx := context.Background()
	if _, _, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, "f-1", intent.InterventionFeedback, "Smaller steps."); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, "p-1", intent.InterventionPause, ""); err != nil {
		t.Fatal(err)
	}
	feedback := 0

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d:%s", crashEnv, in.ID, e.db.Path))
	out, err := cmd.CombinedOutput()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if err == nil || !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed in the window: %v\n%s", err, out)
	}
	// The state write landed; the acknowledgement did not.
	if n := e.count(t, `SELECT count(*) FROM intervention_applied`); n != 2 {
		t.Fatalf("%d applied rows after the crash, want 2", n)
	}
	if n := e.count(t, `SELECT count(*) FROM interventions WHERE done_at IS NULL`); n != 2 {
		t.Fatalf("%d receipts left unacknowledged, want 2", n)
	}
	if s := e.intentStatus(t, in.ID); s != intent.IntentStopped {
		t.Fatalf("the crashed child's stop did not land: %s", s)
	}

	// The restart: recovery applies what is pending, and only acknowledges
	// what was applied.
	restarted := intent.New(e.db, e.root, e.clock.Now, intent.Collaborators{Journal: countingFeedback{n: &feedback}}).Interventions
	n, err := restarted.ApplyAllInterventions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 || feedback != 0 {
		t.Fatalf("recovery applied %d receipts again (feedback hook %d times)", n, feedback)
	}
	if c := e.count(t, `SELECT count(*) FROM interventions WHERE done_at IS NULL`); c != 0 {
		t.Fatalf("%d receipts still unacknowledged after recovery", c)
	}
	if c := e.count(t, `SELECT count(*) FROM intent_events WHERE intent_id = ? AND to_status = 'stopped'`, in.ID); c != 1 {
		t.Fatalf("the intent was stopped %d times, want once", c)
	}
	if c := e.count(t, `SELECT count(*) FROM intervention_applied`); c != 2 {
		t.Fatalf("%d applied rows after recovery, want 2", c)
	}
	if s := e.status(t, tasks[0].ID); s != intent.TaskInQueue {
		t.Fatalf("the next task is %s, want it kept in the queue", s)
	}
}

// TestAppliedFeedbackHoldsRunUntilTheEngineerTookIt: feedback stops the run
// for the engineer to revise the plan with; Run waits until a chat turn
// has been given it.
func TestAppliedFeedbackHoldsRunUntilTheEngineerTookIt(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, _ := e.draft(t, "notes", "List notes")
	if err := e.svc.Submit(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.BeginRun(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, "fb-1", intent.InterventionFeedback, "Sort them by date."); err != nil {
		t.Fatal(err)
	}
	if a, err := e.all.Interventions.ApplyInterventions(ctx, in.ID); err != nil || !a.Stopped {
		t.Fatalf("apply: %+v %v", a, err)
	}
	if err := e.svc.BeginRun(ctx, in.ID); err == nil || !strings.Contains(err.Error(), "waits for the engineer") {
		t.Fatalf("Run before the engineer took the feedback: %v", err)
	}
	fb, err := e.all.Interventions.FeedbackForChat(ctx, "notes")
	if err != nil || len(fb) != 1 {
		t.Fatalf("feedback for the chat: %+v %v", fb, err)
	}
	if err := e.all.Interventions.FeedbackGiven(ctx, []int64{fb[0].Order}, "chat-notes-1"); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.BeginRun(ctx, in.ID); err != nil {
		t.Fatalf("Run once the engineer took the feedback: %v", err)
	}
}

func TestRunAfterAPauseAddsResumedAtToTheAppliedReceiptsAndARetryNeverShowsIt(t *testing.T) {
	e := mustOpen(t)
	in, tasks := e.running(t, "notes", "Add tags", "Filter by tag")
	ctx := context.Background()
	e.move(t, tasks[0].ID, intent.TaskInProgress, "r1")
	e.move(t, tasks[0].ID, intent.TaskCompleted, "r1")
	if _, _, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, "p-1", intent.InterventionPause, ""); err != nil {
		t.Fatal(err)
	}
	e.clock.Set(e.clock.Now().Add(time.Second))
	if _, err := e.all.Interventions.ApplyInterventions(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	_, applied, err := e.all.Interventions.Interventions(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != 1 || applied[0].ResumedAt != nil {
		t.Fatalf("before Run: %+v", applied)
	}
	e.clock.Set(e.clock.Now().Add(time.Minute))
	resumed := e.clock.Now()
	if err := e.svc.BeginRun(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	_, applied, err = e.all.Interventions.Interventions(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != 1 || applied[0].ResumedAt == nil || !applied[0].ResumedAt.Equal(resumed.Truncate(time.Millisecond)) {
		t.Fatalf("after Run: %+v, want resumed at %s", applied, resumed)
	}
	// A second Run later keeps the first continuation's time.
	if _, _, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, "p-2", intent.InterventionPause, ""); err != nil {
		t.Fatal(err)
	}
	e.clock.Set(e.clock.Now().Add(time.Minute))
	if _, err := e.all.Interventions.ApplyInterventions(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	e.clock.Set(e.clock.Now().Add(time.Minute))
	if err := e.svc.BeginRun(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	_, applied, _ = e.all.Interventions.Interventions(ctx, in.ID)
	if len(applied) != 2 || !applied[0].ResumedAt.Equal(resumed.Truncate(time.Millisecond)) || applied[1].ResumedAt == nil || !applied[1].ResumedAt.After(resumed) {
		t.Fatalf("after the second Run: %+v", applied)
	}
	// The submitter's retry answers the acceptance receipt: neither applied
	// nor resumed.
	rc, replayed, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, "p-1", intent.InterventionPause, "")
	if err != nil || !replayed {
		t.Fatalf("retry: %v, replayed %v", err, replayed)
	}
	if rc.AppliedAt != nil || rc.ResumedAt != nil {
		t.Fatalf("a retry showed the owner's fields: %+v", rc)
	}
}

// TestRunRefusesAPausedIntentWhoseWaitingTaskWasRemoved: paused after its
// first task, the intent's waiting task is removed by the owner. Nothing
// is left to run, so Run refuses with the sentence the chat's door gives,
// instead of finishing the intent as done. Only the stop an undelivered
// finish left runs again to deliver.
func TestRunRefusesAPausedIntentWhoseWaitingTaskWasRemoved(t *testing.T) {
	e := mustOpen(t)
	in, tasks := e.running(t, "notes", "Add tags", "Filter by tag")
	ctx := context.Background()
	e.move(t, tasks[0].ID, intent.TaskInProgress, "r1")
	e.move(t, tasks[0].ID, intent.TaskCompleted, "r1")
	if _, _, err := e.all.Interventions.SubmitIntervention(ctx, in.ID, "p-1", intent.InterventionPause, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.all.Interventions.ApplyInterventions(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.RemoveTask(ctx, "rm-1", tasks[1].ID); err != nil {
		t.Fatal(err)
	}
	err := e.svc.BeginRun(ctx, in.ID)
	if err == nil || err.Error() != fmt.Sprintf("Nothing is left to run in intent #%d.", in.ID) {
		t.Fatalf("Run = %v, want nothing left to run", err)
	}
	if s := e.intentStatus(t, in.ID); s != intent.IntentStopped {
		t.Fatalf("the refused Run moved the intent to %s", s)
	}
	// The stop an undelivered finish leaves does run again, to deliver.
	if err := e.svc.MoveIntent(ctx, in.ID, intent.IntentRunning, "test"); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.MoveIntent(ctx, in.ID, intent.IntentStopped, intent.UndeliveredReason(in.ID)); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.BeginRun(ctx, in.ID); err != nil {
		t.Fatalf("Run after an undelivered finish: %v", err)
	}
}
