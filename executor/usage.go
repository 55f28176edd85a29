package executor

import (
	"context"
	"log/slog"

	"autoapp/executor/ai"
	"autoapp/intent"
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
	u := intent.Usage{Kind: t.Kind, RunID: t.RunID, AppID: appID, Model: modelRef(t.Endpoint),
		Input: res.Usage.Input, Output: res.Usage.Output, Partial: res.Usage.Partial}
	// The row is written even when the turn's context was cancelled (Stop).
	if err := book.RecordUsage(context.WithoutCancel(ctx), u); err != nil {
		log := t.Log
		if log == nil {
			log = slog.Default()
		}
		log.Error("usage row not written", "run", t.RunID, "err", err)
	}
	return res
}

// modelRef names the model as Settings would: provider:model.
func modelRef(ep ai.Endpoint) string {
	if ep.Provider == "" {
		return ep.Model
	}
	return ep.Provider + ":" + ep.Model
}
