package spend_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"autoapp/intent"
	"autoapp/intent/spend"
)

// runningIntent is an intent of the application site, running since now.
func (e *env) runningIntent(tb testing.TB) intent.Intent {
	tb.Helper()
	ctx := context.Background()
	if _, err := e.db.Write.Exec(`INSERT OR IGNORE INTO apps (id, name, origin, created_at) VALUES ('site', 'Site', 'template:static', 0)`); err != nil {
		tb.Fatal(err)
	}
	in, err := e.backlog.OpenDraft(ctx, "site", "Change the site.", intent.Analysis{Restated: []string{"Change it."}})
	if err != nil {
		tb.Fatal(err)
	}
	e.addTask(tb, in, "First change")
	if err := e.backlog.Submit(ctx, in.ID); err != nil {
		tb.Fatal(err)
	}
	if err := e.backlog.BeginRun(ctx, in.ID); err != nil {
		tb.Fatal(err)
	}
	return in
}

func TestTheGuardCountsTheRowsTheLiveTurnsAndTheRequestsInput(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in := e.runningIntent(t)
	guard := spend.NewGuard(e.book, e.backlog, e.usageBook, e.clock.Now)
	if err := e.backlog.SetCap(ctx, in.ID, intent.CapForm{Tokens: "10,000"}); err != nil {
		t.Fatal(err)
	}
	run := func(n string) string { return "intent-" + itoa(in.ID) + "-first-change-a" + n }
	// An earlier turn's row, partial: its floor counts.
	e.usage(t, intent.Usage{Kind: intent.KindBuilder, RunID: run("1"), AppID: "site", Model: "ollama:qwen", Input: 6000, Output: 400, Partial: true})
	// Another app's turn and a chat turn of no request do not count.
	e.usage(t, intent.Usage{Kind: intent.KindBuilder, RunID: "intent-99-x-a1", AppID: "blog", Model: "ollama:qwen", Input: 50_000, Output: 1})

	r, err := guard.Room(ctx, spend.Ask{IntentID: in.ID, RunID: run("2"), AppID: "site", Kind: intent.KindBuilder, Model: "ollama:qwen",
		UsedInput: 1000, UsedOutput: 100, Input: 1500})
	if err != nil {
		t.Fatal(err)
	}
	if r.Refused != "" || r.Output != 10_000-6400-1100-1500 {
		t.Fatalf("room %+v, want %d output tokens left of an unpriced model's cap in tokens", r, 10_000-6400-1100-1500)
	}
	if got, want := r.Reached(1000+1500, 100+1001), "Intent #"+itoa(in.ID)+" reached its cap of 10,000 tokens (spent 10,001). Raise the cap to go on, or leave it stopped."; got != want {
		t.Errorf("reached %q, want %q", got, want)
	}
	// The next request's input alone would pass the cap: it is not sent.
	r, err = guard.Room(ctx, spend.Ask{IntentID: in.ID, RunID: run("2"), AppID: "site", Kind: intent.KindBuilder, Model: "ollama:qwen",
		UsedInput: 2500, UsedOutput: 900, Input: 700})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Refused, "reached its cap of 10,000 tokens (spent 9,800).") || !strings.Contains(r.Refused, "The next request alone would pass it.") {
		t.Errorf("refused %q, want the cap named with what was spent and why this request may not go", r.Refused)
	}
}

func TestTheDayCapCountsEveryRunningTurnAndRefusesOnceReached(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	e.prices(t, `{"openai:gpt-x": {"input": 1, "output": 10}, "budget": {"day": 0.05, "dayTokens": 20000}}`)
	guard := spend.NewGuard(e.book, e.backlog, e.usageBook, e.clock.Now)
	e.usage(t, intent.Usage{Kind: intent.KindChat, RunID: "chat-site-1", AppID: "site", Model: "openai:gpt-x", Input: 10_000, Output: 2_000})
	// Another run's turn is going: what it used so far counts.
	if _, err := guard.Room(ctx, spend.Ask{RunID: "intent-3-a-a1", AppID: "blog", Kind: intent.KindBuilder, Model: "openai:gpt-x",
		UsedInput: 4000, UsedOutput: 500}); err != nil {
		t.Fatal(err)
	}
	r, err := guard.Room(ctx, spend.Ask{RunID: "chat-site-2", AppID: "site", Kind: intent.KindChat, Model: "openai:gpt-x", Input: 1000})
	if err != nil {
		t.Fatal(err)
	}
	// Money: spent $0.03 + $0.009 + $0.001 input; $0.01 left at $10 a
	// million output tokens is 1,000 tokens. Tokens: 20,000 − 17,500 = 2,500.
	if r.Refused != "" || r.Output < 999 || r.Output > 1000 {
		t.Fatalf("room %+v, want about 1,000 output tokens: the day's money is the nearer cap", r)
	}
	// Once the other turn's row is written and today's spend passes the
	// cap, even an unpriced model's turn is refused.
	e.usage(t, intent.Usage{Kind: intent.KindBuilder, RunID: "intent-3-a-a2", AppID: "blog", Model: "openai:gpt-x", Input: 1000, Output: 2000})
	r, err = guard.Room(ctx, spend.Ask{RunID: "chat-site-3", AppID: "site", Kind: intent.KindChat, Model: "ollama:qwen", Input: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Refused, "Today's cap of $0.05 is reached (spent $0.06 today).") {
		t.Errorf("refused %q, want the day's cap in money named with today's spend", r.Refused)
	}
	// Tomorrow it holds again.
	e.clock.Advance(24 * time.Hour)
	if r, err = guard.Room(ctx, spend.Ask{RunID: "chat-site-4", AppID: "site", Kind: intent.KindChat, Model: "ollama:qwen", Input: 10}); err != nil || r.Refused != "" {
		t.Errorf("the next day: room %+v (%v), want the request to go", r, err)
	}
}

func TestAnIntentWithNoCapOfItsOwnHasTheDefaultOfSettingsAndItsTimeCounts(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	e.prices(t, `{"budget": {"intent": {"minutes": 30}}}`)
	in := e.runningIntent(t)
	guard := spend.NewGuard(e.book, e.backlog, e.usageBook, e.clock.Now)
	e.clock.Advance(20 * time.Minute)
	r, err := guard.Room(ctx, spend.Ask{IntentID: in.ID, RunID: "intent-" + itoa(in.ID) + "-first-change-a1", Kind: intent.KindBuilder, Model: "ollama:qwen"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Refused != "" || !r.Until.Equal(e.clock.Now().Add(10*time.Minute)) || r.Output >= 0 {
		t.Fatalf("room %+v, want 10 minutes left and no cap in tokens", r)
	}
	e.clock.Advance(11 * time.Minute)
	if got, want := r.Reached(0, 0), "Intent #"+itoa(in.ID)+" reached its cap of 30 minutes of running (ran 31 min 0 s). Raise the cap to go on, or leave it stopped."; got != want {
		t.Errorf("reached %q, want %q", got, want)
	}
	// The owner's own cap replaces the default.
	if err := e.backlog.SetCap(ctx, in.ID, intent.CapForm{Minutes: "60"}); err != nil {
		t.Fatal(err)
	}
	if r, err = guard.Room(ctx, spend.Ask{IntentID: in.ID, RunID: "intent-" + itoa(in.ID) + "-first-change-a1", Kind: intent.KindBuilder}); err != nil || r.Refused != "" {
		t.Errorf("room %+v (%v) under the intent's own cap of 60 minutes, want the request to go", r, err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestAnIntentsChatTurnsCountAgainstItsCap(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	in := e.runningIntent(t)
	other := e.runningIntentOf(t, "blog")
	for _, q := range []string{
		`INSERT INTO requests (id, app_id, intent_id, mode, created_at) VALUES (1, 'site', ` + itoa(in.ID) + `, 'autonomous', 0)`,
		`INSERT INTO requests (id, app_id, intent_id, mode, created_at) VALUES (2, 'blog', ` + itoa(other.ID) + `, 'autonomous', 0)`,
		`INSERT INTO chat_turns (id, app_id, request_id, run_id, message, status, started_at) VALUES (1, 'site', 1, 'chat-site-1', 'Plan it.', 'answered', 0)`,
		`INSERT INTO chat_turns (id, app_id, request_id, run_id, message, status, started_at) VALUES (2, 'blog', 2, 'chat-blog-2', 'Plan it.', 'answered', 0)`,
	} {
		if _, err := e.db.Write.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	e.usage(t, intent.Usage{Kind: intent.KindPlanning, RunID: "chat-site-1", AppID: "site", Model: "ollama:qwen", Input: 3000, Output: 500})
	e.usage(t, intent.Usage{Kind: intent.KindPlanning, RunID: "chat-blog-2", AppID: "blog", Model: "ollama:qwen", Input: 9000, Output: 900})
	e.usage(t, intent.Usage{Kind: intent.KindBuilder, RunID: "intent-" + itoa(in.ID) + "-first-change-a1", AppID: "site", Model: "ollama:qwen", Input: 1000, Output: 100})
	got, err := e.book.OfIntent(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Tokens() != 4600 || got.Turns != 2 {
		t.Errorf("intent #%d spent %d tokens in %d turns, want its planning turn and its builder's: 4,600 in 2", in.ID, got.Tokens(), got.Turns)
	}
}

// runningIntentOf is runningIntent of another application.
func (e *env) runningIntentOf(tb testing.TB, appID string) intent.Intent {
	tb.Helper()
	ctx := context.Background()
	if _, err := e.db.Write.Exec(`INSERT OR IGNORE INTO apps (id, name, origin, created_at) VALUES (?, ?, 'template:static', 0)`, appID, appID); err != nil {
		tb.Fatal(err)
	}
	in, err := e.backlog.OpenDraft(ctx, appID, "Change it.", intent.Analysis{Restated: []string{"Change it."}})
	if err != nil {
		tb.Fatal(err)
	}
	return in
}
