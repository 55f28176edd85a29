package intent_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"autoapp/intent"
)

func TestTheMovesThatNeedTheOwnerEachWriteOneNotice(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in, tasks := e.draft(t, "site", "Change the heading", "Add a page")
	if err := e.svc.Submit(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.BeginRun(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	move := func(id int64, to intent.TaskStatus, m intent.Move) {
		t.Helper()
		m.Actor = intent.ActorExecutor
		if err := e.svc.MoveTask(ctx, id, to, m); err != nil {
			t.Fatal(err)
		}
	}
	first, second := tasks[0].ID, tasks[1].ID
	move(first, intent.TaskInProgress, intent.Move{Reason: "its turn", RunID: "r1"})
	move(first, intent.TaskNeedsAnswer, intent.Move{Reason: "the builder asked", RunID: "r1", Question: "Which heading?", Outcome: intent.OutcomeAsked})
	if err := e.svc.AnswerTask(ctx, first, "The big one."); err != nil {
		t.Fatal(err)
	}
	move(first, intent.TaskInProgress, intent.Move{Reason: "its turn", RunID: "r2"})
	move(first, intent.TaskInQueue, intent.Move{Reason: "another attempt: the check failed.", RunID: "r2", Outcome: intent.OutcomeRetry})
	move(second, intent.TaskInProgress, intent.Move{Reason: "its turn", RunID: "r3"})
	move(second, intent.TaskFailed, intent.Move{Reason: "The check still fails.", RunID: "r3", Outcome: intent.OutcomeFailed})
	// The owner's own stop tells nobody; a cap's does.
	if err := e.svc.MoveIntent(ctx, in.ID, intent.IntentStopped, "Stopped by the person."); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.BeginRun(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	capped := fmt.Sprintf("Intent #%d reached its cap of 1,000 tokens (spent 1,001). Raise the cap to go on, or leave it stopped.", in.ID)
	if err := e.svc.MoveIntent(ctx, in.ID, intent.IntentStopped, capped); err != nil {
		t.Fatal(err)
	}

	notices := intent.NewNotices(e.db, e.clock.Now)
	got, err := notices.After(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		kind     intent.NoticeKind
		sentence string
		link     string
	}{
		{intent.NoticeQuestion, tasks[0].Slug + " (site) asks: Which heading?", fmt.Sprintf("/backlog/intents/%d#needs-%s", in.ID, tasks[0].Slug)},
		{intent.NoticeFailed, tasks[1].Slug + " (site) failed: The check still fails.", fmt.Sprintf("/backlog/intents/%d#needs-%s", in.ID, tasks[1].Slug)},
		{intent.NoticeCap, capped, fmt.Sprintf("/backlog/intents/%d", in.ID)},
	}
	if len(got) != len(want) {
		t.Fatalf("notices %+v, want %d", got, len(want))
	}
	for i, w := range want {
		if got[i].Kind != w.kind || got[i].Sentence != w.sentence || got[i].Link != w.link || got[i].AppID != "site" || got[i].IntentID != in.ID {
			t.Errorf("notice %d is %+v, want %s %q at %s", i+1, got[i], w.kind, w.sentence, w.link)
		}
	}
	// What happened is kept as it was: only the sending changes.
	if _, err := e.db.Write.Exec(`UPDATE notices SET sentence = 'changed' WHERE id = ?`, got[0].ID); err == nil {
		t.Error("a notice's sentence was changed")
	}
	if _, err := e.db.Write.Exec(`DELETE FROM notices`); err == nil {
		t.Error("the notices were deleted")
	}
	// The outbox: due now, failed and retried later, then sent once.
	due, err := notices.Due(ctx, 10)
	if err != nil || len(due) != 3 {
		t.Fatalf("due %d (%v), want the three", len(due), err)
	}
	if err := notices.Failed(ctx, got[0].ID, "The webhook answered 500.", e.clock.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := notices.Sent(ctx, got[1].ID, intent.SendSent); err != nil {
		t.Fatal(err)
	}
	if due, _ = notices.Due(ctx, 10); len(due) != 1 || due[0].ID != got[2].ID {
		t.Fatalf("due %+v, want only the third until the first's retry", due)
	}
	e.clock.Advance(time.Minute)
	if due, _ = notices.Due(ctx, 10); len(due) != 2 || due[0].ID != got[0].ID || due[0].Attempts != 1 {
		t.Fatalf("due %+v, want the first again, tried once, then the third", due)
	}
	o, err := notices.Outbox(ctx)
	if err != nil || o.Pending != 2 || o.LastError != "The webhook answered 500." {
		t.Errorf("outbox %+v (%v)", o, err)
	}
}
