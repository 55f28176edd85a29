package executor

import (
	"context"
	"log/slog"

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
	u := intent.Usage{Kind: kind, RunID: t.RunID, AppID: appID, Model: ModelRef(t.Endpoint),
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
// ModelRef names the model of ep as usage rows and cases do
// (provider:model).
func ModelRef(ep ai.Endpoint) string {
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
