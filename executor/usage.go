package executor

import (
	"context"
	"log/slog"
	"sync/atomic"

	"autoapp/executor/ai"
	"autoapp/intent"
	"autoapp/knowledge"
)

// UsageBook is where every turn's usage row goes.
type UsageBook interface {
	RecordUsage(ctx context.Context, u intent.Usage) error
}

// RunTurn runs one turn of the engineer and, however it ended, writes its
// usage row: what its completed steps used, partial when the turn was cut
// short or the provider reported nothing. A row that cannot be written is
// logged; the turn's result stands.
func RunTurn(ctx context.Context, book UsageBook, appID string, t ai.Turn) ai.Result {
	res := ai.Run(ctx, t)
	kind := t.Kind
	if kind == ai.KindChat && planned(res.Calls) {
		kind = ai.KindPlanning
	}
	u := intent.Usage{Kind: kind, RunID: t.RunID, AppID: appID, Model: modelRef(t.Endpoint),
		Input: res.Usage.Input, Output: res.Usage.Output, Partial: res.Usage.Partial}
	// The row is written even when the turn's context was cancelled (Stop).
	if err := book.RecordUsage(context.WithoutCancel(ctx), u); err != nil {
		log := t.Log
		if log == nil {
			log = slog.Default()
		}
		log.ErrorContext(ctx, "usage row not written", "run", t.RunID, "err", err)
	}
	return res
}

// planned says a chat turn's intent tools wrote a plan: it was a planning
// turn, and its usage is counted so.
func planned(calls []ai.Call) bool {
	for _, c := range calls {
		switch c.Name {
		case "intent.open", "intent.task", "intent.submit":
			if c.OK {
				return true
			}
		}
	}
	return false
}

// modelRef names the model as Settings would: provider:model.
func modelRef(ep ai.Endpoint) string {
	if ep.Provider == "" {
		return ep.Model
	}
	return ep.Provider + ":" + ep.Model
}

// TurnBook keeps each turn's context: the documents exactly as delivered.
type TurnBook interface {
	RecordTurn(ctx context.Context, t knowledge.Turn) (int64, error)
}

// RecordContext writes a turn's contexts row and answers its id: when,
// application, run id, the instructions, and each document as it was
// delivered (cut where the budget cut it; a dropped one was not delivered
// and is not kept). With no book it keeps nothing and answers 0.
func RecordContext(ctx context.Context, book TurnBook, appID, request string, t ai.Turn, res ai.Result) (int64, error) {
	if book == nil {
		return 0, nil
	}
	texts := make(map[string]string, len(t.Documents))
	for _, d := range t.Documents {
		texts[d.Ref] = d.Text
	}
	turn := knowledge.Turn{At: t.Now(), AppID: appID, RunID: t.RunID, Kind: knowledge.TurnKind(t.Kind),
		Instructions: t.Instructions, Request: request}
	for _, d := range res.Documents {
		if d.Delivery == ai.DeliveredDropped {
			continue
		}
		text := []rune(texts[d.Ref])
		if d.Delivered < len(text) {
			text = text[:d.Delivered]
		}
		turn.Documents = append(turn.Documents, knowledge.DeliveredDoc{Ref: d.Ref, Title: d.Title, Text: string(text),
			Cut: d.Delivery == ai.DeliveredCut})
	}
	return book.RecordTurn(context.WithoutCancel(ctx), turn)
}

// KeepContextAtDelivery makes turn write its contexts row into book as soon
// as its documents are delivered, before the model is asked anything, and
// returns ctx carrying what the cases its tools open record of the turn:
// that row, and the request and model unless ctx names them already. So a
// build or a check that fails during the turn opens a case naming the
// turn that met it. Recording the turn again when it ends (RecordContext)
// answers the same row. Whatever turn.OnDelivered did already it still
// does. With no book, nothing is kept and ctx is returned as it is; a row that cannot be written is logged, and the turn goes on.
func KeepContextAtDelivery(ctx context.Context, book TurnBook, appID, request string, turn *ai.Turn, log *slog.Logger) context.Context {
	if book == nil {
		return ctx
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ct := caseTurnFrom(ctx)
	if ct.request == "" {
		ct.request = request
	}
	if ct.model == "" {
		ct.model = modelRef(turn.Endpoint)
	}
	ct.delivered = new(atomic.Int64)
	t := *turn
	prev := turn.OnDelivered
	turn.OnDelivered = func(docs []ai.DeliveredDocument) {
		if prev != nil {
			prev(docs)
		}
		id, err := RecordContext(ctx, book, appID, request, t, ai.Result{Documents: docs})
		if err != nil {
			log.ErrorContext(ctx, "the turn's context could not be kept as it started", "run", t.RunID, "err", err)
			return
		}
		ct.delivered.Store(id)
	}
	return withCaseTurn(ctx, ct)
}
