package intent_test

import (
	"context"
	"fmt"
	"testing"

	"autoapp/intent"
	"autoapp/intent/refusal"
)

var chatStatuses = []intent.ChatStatus{intent.ChatRunning, intent.ChatAnswered, intent.ChatFailed, intent.ChatStopped}

func TestEndChatTurnEveryPair(t *testing.T) {
	ctx := context.Background()
	for _, from := range chatStatuses {
		for _, to := range chatStatuses {
			t.Run(fmt.Sprintf("%s to %s", from, to), func(t *testing.T) {
				e := mustOpen(t)
				e.app(t, "notes")
				turn, err := e.all.Chats.StartChatTurn(ctx, "notes", 0, "hello")
				if err != nil {
					t.Fatal(err)
				}
				if from != intent.ChatRunning {
					if err := e.all.Chats.EndChatTurn(ctx, turn.ID, from, "before", ""); err != nil {
						t.Fatal(err)
					}
				}
				err = e.all.Chats.EndChatTurn(ctx, turn.ID, to, "the reply", "how it ended")
				allowed := from == intent.ChatRunning && to != intent.ChatRunning
				if !allowed {
					wantRefusal(t, err, refusal.Conflict)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				turns, err := e.all.Chats.ChatTurns(ctx, "notes", 10)
				if err != nil || len(turns) != 1 {
					t.Fatalf("turns %+v, %v", turns, err)
				}
				if got := turns[0]; got.Status != to || got.Reply != "the reply" || got.Sentence != "how it ended" || !got.EndedAt.Equal(e.clock.Now()) {
					t.Fatalf("after the move: %+v", got)
				}
			})
		}
	}
}

func TestStartChatTurnRefusals(t *testing.T) {
	ctx := context.Background()
	e := mustOpen(t)
	_, err := e.all.Chats.StartChatTurn(ctx, "notes", 0, "hello")
	if ie := wantRefusal(t, err, refusal.NotFound); ie.Message != `There is no application "notes".` {
		t.Fatalf("sentence %q", ie.Message)
	}
	e.app(t, "notes")
	if _, err := e.all.Chats.StartChatTurn(ctx, "notes", 0, "hello"); err != nil {
		t.Fatal(err)
	}
	_, err = e.all.Chats.StartChatTurn(ctx, "notes", 0, "again")
	if ie := wantRefusal(t, err, refusal.Conflict); ie.Message != intent.ChatBusySentence {
		t.Fatalf("sentence %q", ie.Message)
	}
	if err := e.all.Chats.EndChatTurn(ctx, 99, intent.ChatAnswered, "", ""); err == nil {
		t.Fatal("a turn that does not exist was ended")
	}
}

func TestStopChatTurnsStopsOnlyTheRunningOnes(t *testing.T) {
	ctx := context.Background()
	e := mustOpen(t)
	e.app(t, "notes")
	e.app(t, "shop")
	answered, err := e.all.Chats.StartChatTurn(ctx, "notes", 0, "first")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.all.Chats.EndChatTurn(ctx, answered.ID, intent.ChatAnswered, "hi", ""); err != nil {
		t.Fatal(err)
	}
	for _, app := range []string{"notes", "shop"} {
		if _, err := e.all.Chats.StartChatTurn(ctx, app, 0, "still going"); err != nil {
			t.Fatal(err)
		}
	}
	n, err := e.all.Chats.StopChatTurns(ctx, intent.LauncherStopped)
	if err != nil || n != 2 {
		t.Fatalf("stopped %d, %v; want 2", n, err)
	}
	turns, err := e.all.Chats.ChatTurns(ctx, "notes", 10)
	if err != nil || len(turns) != 2 {
		t.Fatalf("turns %+v, %v", turns, err)
	}
	if turns[0].Status != intent.ChatAnswered || turns[1].Status != intent.ChatStopped || turns[1].Sentence != intent.LauncherStopped {
		t.Fatalf("after stopping: %+v", turns)
	}
	if n, err := e.all.Chats.StopChatTurns(ctx, intent.LauncherStopped); err != nil || n != 0 {
		t.Fatalf("a second stop: %d, %v", n, err)
	}
}
