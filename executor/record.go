package executor

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"autoapp/executor/acceptance"
	"autoapp/executor/ai"
	"autoapp/executor/build"
	"autoapp/executor/builder"
	"autoapp/executor/candidate"
	"autoapp/knowledge"
)

// Books are the knowledge stores a turn's record writes to; each may be
// nil, and what it would keep is then not kept.
type Books struct {
	Turns    TurnBook
	Cases    CaseBook
	Servings ServingBook
	Attempts AttemptBook
	// Builds opens and resolves the cases of the builds and checks a turn
	// makes (a CaseRecorder over the knowledge's cases and servings).
	Builds CaseRecorder
	Log    *slog.Logger
}

// TurnRecord is the knowledge of one turn, a builder's attempt or a chat
// turn, made with the turn: it owns every row the turn writes to the
// knowledge store besides its log lines. They are the edits its open cases
// keep, the hints a failed build gave it, its contexts row (written as its
// documents are delivered, answered again as it ends), the lessons it was
// served and their closing, the cases its builds and checks open or
// resolve (it is the candidate's Observer for the turn's calls), what the
// attempt left for the next one and the planning model's diagnosis. A
// write that fails is logged once, with the turn's run, in failed; the
// turn goes on, since knowledge never changes a verdict.
type TurnRecord struct {
	books          Books
	runID, appID   string
	request, model string
	// contextID is the turn's contexts row, once written.
	contextID atomic.Int64

	mu sync.Mutex
	// failures are the writes that failed, by what they were.
	failures []string
}

// NewTurnRecord is the record of the turn runID of appID, working on
// request with model (provider:model).
func NewTurnRecord(books Books, runID, appID, request, model string) *TurnRecord {
	if books.Log == nil {
		books.Log = slog.New(slog.DiscardHandler)
	}
	return &TurnRecord{books: books, runID: runID, appID: appID, request: request, model: model}
}

// Failures are what the record could not write, in order; none when every
// write held.
func (r *TurnRecord) Failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.failures...)
}

// failed is the one place a write of the record that failed is handled:
// logged with the turn's run and application, and remembered.
func (r *TurnRecord) failed(ctx context.Context, what string, err error) {
	if err == nil {
		return
	}
	r.mu.Lock()
	r.failures = append(r.failures, what)
	r.mu.Unlock()
	r.books.Log.ErrorContext(ctx, what+" could not be kept", "run", r.runID, "app", r.appID, "err", err)
}

// Edited keeps an edit the turn landed in the application's open cases
// (a builder.Config's Edited).
func (r *TurnRecord) Edited(ctx context.Context, summary string) {
	if r.books.Cases == nil {
		return
	}
	r.failed(ctx, "the edit in the open cases", r.books.Cases.AppendEdit(context.WithoutCancel(ctx), r.appID, r.runID, summary))
}

// Hinted keeps the hints a failed build's answer gave the turn as
// servings (a builder.Config's Hinted).
func (r *TurnRecord) Hinted(ctx context.Context, hints []knowledge.Served) {
	hb, ok := r.books.Servings.(hintBook)
	if !ok {
		return
	}
	r.failed(ctx, "the turn's hints as servings", hb.RecordHints(context.WithoutCancel(ctx), r.runID, hints))
}

// KeepAtDelivery makes turn write the record's contexts row as soon as its
// documents are delivered, before the model is asked anything, so that a
// build or a check that fails during the turn opens a case naming the
// turn. Whatever turn.OnDelivered did already it still does.
func (r *TurnRecord) KeepAtDelivery(ctx context.Context, turn *ai.Turn) {
	if r.books.Turns == nil {
		return
	}
	t := *turn
	prev := turn.OnDelivered
	turn.OnDelivered = func(docs []ai.DeliveredDocument) {
		if prev != nil {
			prev(docs)
		}
		id, err := RecordContext(ctx, r.books.Turns, r.appID, r.request, t, ai.Result{Documents: docs})
		r.failed(ctx, "the turn's context as it started", err)
		if err == nil {
			r.contextID.Store(id)
		}
	}
}

// Context writes the turn's contexts row as it ended (the row kept at
// delivery, answered again; a turn that ended before its documents were
// delivered gets it here) and returns it.
func (r *TurnRecord) Context(ctx context.Context, turn ai.Turn, res ai.Result) int64 {
	if r.books.Turns == nil {
		return 0
	}
	id, err := RecordContext(ctx, r.books.Turns, r.appID, r.request, turn, res)
	r.failed(ctx, "the turn's context", err)
	if err == nil {
		r.contextID.Store(id)
	}
	return r.contextID.Load()
}

// Served keeps the lessons the turn was given, each included or cut by
// the budget, under its contexts row.
func (r *TurnRecord) Served(ctx context.Context, included, cut []knowledge.Served) {
	if r.books.Servings == nil {
		return
	}
	r.failed(ctx, "the turn's servings", r.books.Servings.Record(context.WithoutCancel(ctx), r.runID, r.contextID.Load(), included, cut))
}

// EndServings closes the turn's servings that nothing closed.
func (r *TurnRecord) EndServings(ctx context.Context) {
	if r.books.Servings == nil {
		return
	}
	r.failed(ctx, "the closing of the turn's servings", r.books.Servings.End(context.WithoutCancel(ctx), r.runID))
}

// Attempt keeps what the attempt left (still wrong, reads, refusals) for
// the next attempt's document.
func (r *TurnRecord) Attempt(ctx context.Context, observed candidate.Observed, rec builder.Record) {
	if r.books.Attempts == nil {
		return
	}
	r.failed(ctx, "what the attempt left", r.books.Attempts.RecordAttempt(context.WithoutCancel(ctx), r.runID, r.appID, attemptFacts(observed, rec)))
}

// Diagnosis keeps the planning model's diagnosis of the failed attempt.
func (r *TurnRecord) Diagnosis(ctx context.Context, diagnosis string) {
	if r.books.Attempts == nil {
		return
	}
	r.failed(ctx, "the advice's diagnosis", r.books.Attempts.RecordDiagnosis(context.WithoutCancel(ctx), r.runID, r.appID, diagnosis))
}

// turn is what the cases the turn's builds and checks open record of it.
func (r *TurnRecord) turn() caseTurn {
	return caseTurn{request: r.request, model: r.model, contextID: r.contextID.Load()}
}

// Built opens and resolves the cases of a build the turn made (the
// candidate's Observer for the turn's calls).
func (r *TurnRecord) Built(ctx context.Context, appID, revision, before string, out build.Result) {
	r.failed(ctx, "the build's cases", r.books.Builds.built(ctx, r.turn(), appID, revision, before, out))
}

// Checked opens and resolves the cases of the checks the turn ran.
func (r *TurnRecord) Checked(ctx context.Context, appID, revision string, results []acceptance.Result) {
	r.failed(ctx, "the checks' cases", r.books.Builds.checked(ctx, r.turn(), appID, revision, results))
}

var _ candidate.Observer = (*TurnRecord)(nil)
