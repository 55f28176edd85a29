package executor_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"autoapp/executor/ai/scripted"
	"autoapp/intent"
	"autoapp/intent/refusal"
	"autoapp/intent/spend"
)

// requestsOf are the model's requests that named the run, each with its
// number on the server (from 1).
func (h *host) requestsOf(run string) []int {
	var out []int
	for i, r := range h.model.Requests() {
		if r.Header.Get(scripted.RunHeader) == run {
			out = append(out, i+1)
		}
	}
	return out
}

// usageOf is the run's usage row.
func (h *host) usageOf(t *testing.T, run string) intent.Usage {
	t.Helper()
	rows, err := h.launcher.Usage.UsageSince(context.Background(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range rows {
		if u.RunID == run {
			return u
		}
	}
	t.Fatalf("no usage row for %s", run)
	return intent.Usage{}
}

func TestACapCrossedMidStreamStopsTheIntentAndRaisingItFinishesIt(t *testing.T) {
	h := newHost(t)
	ctx := context.Background()
	id := h.plan(t, heading())
	// A local model: no price anywhere, so only a cap in tokens holds it.
	if err := h.backlog.SetCap(ctx, id, intent.CapForm{Tokens: "50,000"}); err != nil {
		t.Fatal(err)
	}
	first := runID(id, headingSlug, 1)
	// The first step reports 30,120 tokens; the second request fits, and
	// its model writes far past what is left.
	h.model.On(scripted.RunID(first),
		scripted.Reply{ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes"))},
			Usage: scripted.Usage{Input: 30_000, Output: 120}},
		scripted.Reply{Text: strings.Repeat("more ", 40_000), Every: 20 * time.Microsecond, Usage: scripted.Usage{Input: 31_000, Output: 40_000}},
		scripted.Reply{Text: "never asked"})

	d := h.run(t, id)
	if d.Status != intent.IntentStopped {
		t.Fatalf("intent %s (%s), want it stopped at its cap", d.Status, d.StopReason)
	}
	want := fmt.Sprintf("Intent #%d reached its cap of 50,000 tokens (spent ", id)
	if !strings.HasPrefix(d.StopReason, want) || !strings.HasSuffix(d.StopReason, "). Raise the cap to go on, or leave it stopped.") {
		t.Fatalf("stopped with %q, want %q…", d.StopReason, want)
	}
	// Not a token more was asked: two requests, the second cut short.
	asked := h.requestsOf(first)
	if len(asked) != 2 {
		t.Fatalf("the model was asked %d times for the turn, want the second request cut and no third", len(asked))
	}
	if pieces, finished := h.model.Streamed(asked[1]); finished || pieces >= 40_000 {
		t.Fatalf("the second answer streamed %d pieces (finished %v), want it cut at the cap", pieces, finished)
	}
	// The usage row is the turn's floor, partial, and the sentence says it.
	u := h.usageOf(t, first)
	if !u.Partial || u.Input+u.Output <= 50_000 || u.Input+u.Output > 50_010 {
		t.Errorf("usage %+v, want a partial floor just past the cap", u)
	}
	if !strings.Contains(d.StopReason, "(spent "+spend.Count(int64(u.Input+u.Output))+")") {
		t.Errorf("stopped with %q, want it to name what the usage row holds, %d", d.StopReason, u.Input+u.Output)
	}
	// The turn is not an attempt.
	task := h.task(t, id, headingSlug)
	if task.Status != intent.TaskInterrupted || task.Attempts != 0 {
		t.Fatalf("task %s after %d attempts, want it interrupted with no attempt counted", task.Status, task.Attempts)
	}
	last := task.Events[len(task.Events)-1]
	if last.Outcome != intent.OutcomeNotAnAttempt || !strings.HasPrefix(last.Reason, "not an attempt: Intent #") {
		t.Errorf("the turn ended %q (%s), want it not an attempt", last.Reason, last.Outcome)
	}

	// Run again at the same cap is refused with the same cap named.
	err := h.exec.Start(ctx, id)
	if r, ok := refusal.As(err); !ok || !strings.HasPrefix(r.Message, want) {
		t.Fatalf("Run at the cap: %v, want the cap's sentence", err)
	}
	// Raised, Run goes on from the task and finishes the intent.
	if err := h.backlog.SetCap(ctx, id, intent.CapForm{Tokens: "200,000"}); err != nil {
		t.Fatal(err)
	}
	h.scriptHeading(id, 2)
	if d := h.run(t, id); d.Status != intent.IntentDone {
		t.Fatalf("after raising the cap: intent %s (%s)", d.Status, d.StopReason)
	}
}

func TestTheDaysCapRefusesANewRunWithItsSentence(t *testing.T) {
	h := newHost(t)
	ctx := context.Background()
	id := h.plan(t, heading())
	prices := filepath.Join(h.root, "launcher", spend.File)
	if err := os.WriteFile(prices, []byte(`{"budget": {"dayTokens": 1000}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.launcher.Usage.RecordUsage(ctx, intent.Usage{Kind: intent.KindChat, RunID: "chat-site-1", AppID: "site", Model: "scripted:builder",
		Input: 900, Output: 150}); err != nil {
		t.Fatal(err)
	}
	err := h.exec.Start(ctx, id)
	r, ok := refusal.As(err)
	if !ok || r.Message != "Today's cap of 1,000 tokens is reached (spent 1,050 today). New runs and turns are refused until tomorrow, or until you raise the cap in Settings." {
		t.Fatalf("Run past the day's cap: %v", err)
	}
	if n := len(h.model.Requests()); n != 0 {
		t.Errorf("the model was asked %d times, want nothing asked", n)
	}
	if d, _ := h.backlog.Get(ctx, id); d.Status != intent.IntentDraft {
		t.Errorf("the intent is %s, want it left as it was", d.Status)
	}
	// Raised in Settings, the run goes.
	if err := os.WriteFile(prices, []byte(`{"budget": {"dayTokens": 10000000}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	h.scriptHeading(id, 1)
	if d := h.run(t, id); d.Status != intent.IntentDone {
		t.Fatalf("after raising the day's cap: intent %s (%s)", d.Status, d.StopReason)
	}
}
