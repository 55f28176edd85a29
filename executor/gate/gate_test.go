package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/ai/scripted"
	"autoapp/executor/gate"
	"autoapp/intent/refusal"
	"autoapp/intent/timetest"
)

var asked = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// answer is what one Ask returned.
type answer struct {
	approved bool
	err      error
}

// ask asks in the background, as a turn's tool does, and returns where
// its answer comes.
func ask(ctx context.Context, g *gate.Gate, appID, runID, text string) <-chan answer {
	out := make(chan answer, 1)
	go func() {
		ok, err := g.Ask(ctx, appID, runID, text)
		out <- answer{ok, err}
	}()
	return out
}

// pending waits until the application has n questions waiting and returns
// them.
func pending(t *testing.T, g *gate.Gate, appID string, n int) []gate.Question {
	t.Helper()
	qs, ok := waitPending(g, appID, n)
	if !ok {
		t.Fatalf("%s has %d questions waiting, not %d: %+v", appID, len(qs), n, qs)
	}
	return qs
}

// waitPending polls Pending until it holds n questions, for ten seconds at
// most; it may run outside the test's goroutine.
func waitPending(g *gate.Gate, appID string, n int) ([]gate.Question, bool) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		qs := g.Pending(appID)
		if len(qs) == n {
			return qs, true
		}
		if time.Now().After(deadline) {
			return qs, false
		}
		time.Sleep(time.Millisecond)
	}
}

// got waits for an Ask's answer.
func got(t *testing.T, c <-chan answer) answer {
	t.Helper()
	select {
	case a := <-c:
		return a
	case <-time.After(10 * time.Second):
		t.Fatal("Ask did not return")
		return answer{}
	}
}

func notAsked(t *testing.T, err error) {
	t.Helper()
	var ge *refusal.Error
	if !errors.As(err, &ge) || ge.Message != gate.NotAsked {
		t.Fatalf("got %v, want %q", err, gate.NotAsked)
	}
}

func TestThePersonDecidesAQuestion(t *testing.T) {
	for _, c := range []struct {
		name    string
		approve bool
	}{
		{"approve", true},
		{"deny", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := gate.New(func() time.Time { return asked })
			if g.Waiting() {
				t.Fatal("a new gate has a question waiting")
			}
			answered := ask(context.Background(), g, "site", "chat-site-1", "Edit site/index.html (2 hunks)?")
			qs := pending(t, g, "site", 1)
			want := gate.Question{ID: qs[0].ID, AppID: "site", RunID: "chat-site-1", Text: "Edit site/index.html (2 hunks)?", At: asked}
			if qs[0] != want || qs[0].ID == 0 {
				t.Fatalf("the question waiting: %+v", qs[0])
			}
			if !g.Waiting() {
				t.Fatal("Waiting does not see the question")
			}
			if err := g.Decide("site", qs[0].ID, c.approve); err != nil {
				t.Fatal(err)
			}
			if a := got(t, answered); a.err != nil || a.approved != c.approve {
				t.Fatalf("Ask returned %+v, want %v", a, c.approve)
			}
			if len(g.Pending("site")) != 0 || g.Waiting() {
				t.Fatal("a decided question still waits")
			}
			notAsked(t, g.Decide("site", qs[0].ID, c.approve))
		})
	}
}

func TestAQuestionWhoseTurnEndsIsDropped(t *testing.T) {
	g := gate.New(time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	answered := ask(ctx, g, "site", "chat-site-1", "Build site?")
	q := pending(t, g, "site", 1)[0]
	cancel()
	if a := got(t, answered); !errors.Is(a.err, context.Canceled) || a.approved {
		t.Fatalf("Ask returned %+v, want the context's error", a)
	}
	if len(g.Pending("site")) != 0 || g.Waiting() {
		t.Fatal("the question of an ended turn still waits")
	}
	notAsked(t, g.Decide("site", q.ID, true))
}

func TestDecideRefusesAQuestionNotWaiting(t *testing.T) {
	g := gate.New(time.Now)
	answered := ask(context.Background(), g, "site", "chat-site-1", "Build site?")
	q := pending(t, g, "site", 1)[0]
	for _, c := range []struct {
		name  string
		appID string
		id    int64
	}{
		{"no such id", "site", q.ID + 1},
		{"another application's question", "notes", q.ID},
	} {
		t.Run(c.name, func(t *testing.T) {
			notAsked(t, g.Decide(c.appID, c.id, true))
			if qs := g.Pending("site"); len(qs) != 1 || qs[0] != q {
				t.Fatalf("the question waiting: %+v", qs)
			}
		})
	}
	if err := g.Decide("site", q.ID, false); err != nil {
		t.Fatal(err)
	}
	if a := got(t, answered); a.err != nil || a.approved {
		t.Fatalf("Ask returned %+v", a)
	}
}

func TestTwoApplicationsQuestionsAreIndependent(t *testing.T) {
	g := gate.New(time.Now)
	site := ask(context.Background(), g, "site", "chat-site-1", "Build site?")
	first := pending(t, g, "site", 1)[0]
	notes := ask(context.Background(), g, "notes", "chat-notes-2", "Build notes?")
	second := pending(t, g, "notes", 1)[0]
	if second.ID <= first.ID {
		t.Fatalf("ids do not increase: %d then %d", first.ID, second.ID)
	}
	if qs := g.Pending("site"); len(qs) != 1 || qs[0] != first {
		t.Fatalf("site's questions: %+v", qs)
	}

	if err := g.Decide("notes", second.ID, false); err != nil {
		t.Fatal(err)
	}
	if a := got(t, notes); a.err != nil || a.approved {
		t.Fatalf("notes' Ask returned %+v", a)
	}
	if qs := g.Pending("site"); len(qs) != 1 || qs[0] != first || !g.Waiting() {
		t.Fatalf("deciding notes' question touched site's: %+v", qs)
	}
	if err := g.Decide("site", first.ID, true); err != nil {
		t.Fatal(err)
	}
	if a := got(t, site); a.err != nil || !a.approved {
		t.Fatalf("site's Ask returned %+v", a)
	}
}

func TestAskIsSafeForConcurrentUse(t *testing.T) {
	g := gate.New(time.Now)
	const n = 20
	var wg sync.WaitGroup
	results := make(chan answer, n)
	for range n {
		wg.Go(func() {
			ok, err := g.Ask(context.Background(), "site", "chat-site-1", "Build site?")
			results <- answer{ok, err}
		})
	}
	qs := pending(t, g, "site", n)
	for i, q := range qs {
		if i > 0 && q.ID <= qs[i-1].ID {
			t.Fatalf("Pending is not oldest first: %+v", qs)
		}
		wg.Go(func() {
			if err := g.Decide("site", q.ID, i%2 == 0); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	close(results)
	approved := 0
	for a := range results {
		if a.err != nil {
			t.Fatal(a.err)
		}
		if a.approved {
			approved++
		}
	}
	if approved != n/2 || g.Waiting() {
		t.Fatalf("%d approved of %d, waiting %v", approved, n, g.Waiting())
	}
}

// A turn's tool that asks through the gate holds the idle clock while the
// person decides, and lets it run again once they did: a slow model after
// the answer ends the turn as idle.
func TestAskReleasesTheIdleClockWhenDecided(t *testing.T) {
	model := scripted.New(t)
	c := timetest.NewClock(asked)
	g := gate.New(c.Now)
	asking := ai.Tool{
		Name: "candidate.build", Description: "Build the workspace.",
		Schema:  json.RawMessage(`{"type": "object", "additionalProperties": false, "properties": {}}`),
		Example: json.RawMessage(`{}`),
		Handler: func(ctx context.Context, _ json.RawMessage) (any, error) {
			ok, err := g.Ask(ctx, "site", "chat-site-1", "Build site?")
			return map[string]bool{"approved": ok}, err
		},
	}
	go func() {
		qs, ok := waitPending(g, "site", 1)
		if !ok {
			t.Error("the tool asked nothing")
			return
		}
		q := qs[0]
		c.Advance(30 * time.Minute) // the person takes their time
		if err := g.Decide("site", q.ID, true); err != nil {
			t.Error(err)
		}
	}()
	model.On(scripted.Any(),
		scripted.Reply{ToolCalls: []scripted.Call{{Name: "candidate_build", Args: `{}`}}},
		scripted.Reply{Text: "never read", Before: func() { c.Advance(9 * time.Minute) }})
	res := ai.Run(context.Background(), ai.Turn{
		Endpoint: ai.Endpoint{Provider: "scripted", BaseURL: model.URL(), APIKey: "sk-test-0123456789", Model: "model-1"},
		Kind:     ai.KindChat, RunID: "chat-site-1", Message: "Build it.", Tools: []ai.Tool{asking},
		Limits: ai.Limits{Wall: 2 * time.Hour}, Now: c.Now,
	})
	if res.Ended != ai.EndIdle || len(res.Calls) != 1 || !res.Calls[0].OK {
		t.Fatalf("ended %s (%q) after %+v, want idle after the approved call", res.Ended, res.Sentence, res.Calls)
	}
}
