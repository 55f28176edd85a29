// Package gate holds the questions a chat turn asks the person before it
// acts — "Edit site/index.html (2 hunks)?", "Run intent #4 now: 3 tasks,
// one at a time?" — and hands back the person's Approve or Deny from the
// page. A question waits in memory only: it belongs to a turn that runs in
// this process, and it goes when the turn does.
package gate

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"autoapp/executor/ai"
	"autoapp/intent/refusal"
)

// NotAsked is what Decide answers about a question that is not waiting.
const NotAsked = "That question was answered already or is no longer asked."

// Question is one question waiting for the person.
type Question struct {
	// ID orders the questions of the whole gate; it is never reused.
	ID    int64
	AppID string
	// RunID is the turn that asks (chat-<app>-<turn>).
	RunID string
	// Text is the question in one line, as the page shows it.
	Text string
	At   time.Time
}

// Gate holds the questions of one server. It is safe for concurrent use.
type Gate struct {
	now func() time.Time

	mu      sync.Mutex
	last    int64
	waiting map[int64]*waiting
}

// waiting is a question and where its decision goes.
type waiting struct {
	q Question
	// decided has room for the one decision, so Decide never blocks.
	decided chan bool
}

// New builds an empty gate; now dates the questions.
func New(now func() time.Time) *Gate {
	if now == nil {
		panic("gate: a clock is required")
	}
	return &Gate{now: now, waiting: map[int64]*waiting{}}
}

// Ask records the question and blocks until the person decides it, which
// Ask returns, or until ctx ends: the question is then dropped and Ask
// returns ctx.Err(), whatever was decided. While it waits, the turn's idle
// clock is held: a person reading the question is not an idle model.
func (g *Gate) Ask(ctx context.Context, appID, runID, question string) (approved bool, err error) {
	w := &waiting{decided: make(chan bool, 1)}
	g.mu.Lock()
	g.last++
	w.q = Question{ID: g.last, AppID: appID, RunID: runID, Text: question, At: g.now()}
	g.waiting[w.q.ID] = w
	g.mu.Unlock()

	release := ai.HoldIdle(ctx)
	defer release()
	select {
	case approved = <-w.decided:
	case <-ctx.Done():
	}
	if err := ctx.Err(); err != nil {
		g.drop(w.q.ID)
		return false, err
	}
	return approved, nil
}

// drop forgets a question, decided or not.
func (g *Gate) drop(id int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.waiting, id)
}

// Pending are the application's questions waiting for the person, oldest
// first.
func (g *Gate) Pending(appID string) []Question {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []Question
	for _, w := range g.waiting {
		if w.q.AppID == appID {
			out = append(out, w.q)
		}
	}
	slices.SortFunc(out, func(a, b Question) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Decide gives the person's answer to the application's question id:
// approve true is Approve, false is Deny. A question that is not waiting
// for that application — answered already, dropped with its turn, or
// never asked — is refused with NotAsked.
func (g *Gate) Decide(appID string, id int64, approve bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.waiting[id]
	if w == nil || w.q.AppID != appID {
		return &refusal.Error{Code: refusal.Conflict, Message: NotAsked}
	}
	delete(g.waiting, id)
	w.decided <- approve
	return nil
}

// Waiting reports whether any question of any application waits for the
// person.
func (g *Gate) Waiting() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.waiting) > 0
}
