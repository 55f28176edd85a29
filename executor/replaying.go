package executor

import (
	"context"

	"autoapp/intent/refusal"
)

// A replay (executor/replay) runs the engineer's builder turns as a run
// does, on the same models and within the same sandbox, so the executor
// counts it as a run against Settings → Runs at once (one replay at a
// time), decided under the executor's lock. The replay's own work is
// the harness's, which builds on the executor; it is handed here as a
// function to run in the background, until it ends or the launcher stops.

// replaying is the replay going.
type replaying struct {
	// what names it in a refusal: "A replay of lesson 4".
	what   string
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// The kinds of work held as a replay is, as a refusal names them.
const (
	kindReplay     = "a replay"
	kindComparison = "a comparison of models"
)

// CanReplay refuses, with a sentence, a replay that could not start now:
// a run or another replay goes, or the launcher is stopping.
func (e *Executor) CanReplay() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.replayRefusedLocked(kindReplay)
}

// CanCompare refuses, with a sentence, a comparison of models (Settings →
// Compare models) that could not start now, as CanReplay refuses a
// replay: it is held as a replay is, and counts as a run.
func (e *Executor) CanCompare() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.replayRefusedLocked(kindComparison)
}

// StartComparison runs compare in the background, refused as CanCompare
// refuses, held and stopped as a replay is.
func (e *Executor) StartComparison(ctx context.Context, compare func(ctx context.Context)) error {
	return e.startBackground(ctx, kindComparison, "A comparison of models", compare)
}

// StartReplay runs replay in the background, refused as CanReplay
// refuses; what names it in the sentence that refuses a run while it goes
// ("A replay of lesson 4"). replay's context ends when the launcher stops.
func (e *Executor) StartReplay(ctx context.Context, what string, replay func(ctx context.Context)) error {
	return e.startBackground(ctx, kindReplay, what, replay)
}

// startBackground runs replay, work of kind, in the background as the
// replay going.
func (e *Executor) startBackground(ctx context.Context, kind, what string, replay func(ctx context.Context)) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.replayRefusedLocked(kind); err != nil {
		return err
	}
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	r := &replaying{what: what, cancel: cancel, done: make(chan struct{})}
	e.replay = r
	go func() {
		defer close(r.done)
		defer cancel(nil)
		defer func() {
			e.mu.Lock()
			if e.replay == r {
				e.replay = nil
			}
			e.mu.Unlock()
		}()
		replay(rctx)
	}()
	return nil
}

// replayRefusedLocked is why work of kind (a replay, a comparison of
// models) cannot start now, or nil; the caller holds e.mu.
func (e *Executor) replayRefusedLocked(kind string) error {
	switch {
	case e.closed:
		return refuse(refusal.Conflict, "The launcher is shutting down; nothing can start.")
	case e.replay != nil:
		return refuse(refusal.Conflict, "%s is going; one replay or comparison of models runs at a time, so wait for it to end.", e.replay.what)
	case len(e.runs) > 0 && e.atOnce() == 1:
		return refuse(refusal.Conflict, "Intent #%d is running; %s can start once it ends, or once you stop it.", e.goingLocked()[0].IntentID, kind)
	}
	return e.fullLocked(kind)
}

// stopReplay cancels the replay going, as the launcher stops, and waits
// for it to end: what finished is kept.
func (e *Executor) stopReplay() {
	e.mu.Lock()
	r := e.replay
	e.mu.Unlock()
	if r == nil {
		return
	}
	r.cancel(errShutdown)
	<-r.done
}
