package intent

import (
	"context"
	"fmt"
	"time"

	"autoapp/intent/refusal"
)

// The kinds of turn whose usage is recorded.
const (
	KindChat     = "chat"
	KindPlanning = "planning"
	KindBuilder  = "builder"
	KindAdvice   = "advice"
	KindDistill  = "distill"
)

// Usage is what one turn used, written when the turn ends.
type Usage struct {
	ID      int64     `db:"id" json:"id"`
	At      time.Time `db:"-" json:"at"`
	Kind    string    `db:"kind" json:"kind"`
	RunID   string    `db:"run_id" json:"runId"`
	AppID   string    `db:"app_id" json:"appId"`
	Model   string    `db:"model" json:"model"`
	Input   int       `db:"input_tokens" json:"input"`
	Output  int       `db:"output_tokens" json:"output"`
	Partial bool      `db:"partial" json:"partial"`
}

// RecordUsage writes one turn's usage row. A zero At is stamped now.
func (s *UsageBook) RecordUsage(ctx context.Context, u Usage) error {
	switch u.Kind {
	case KindChat, KindPlanning, KindBuilder, KindAdvice, KindDistill:
	default:
		return refuse(refusal.Invalid, "%q is not a kind of turn.", u.Kind)
	}
	if u.Input < 0 || u.Output < 0 {
		return refuse(refusal.Invalid, "Token counts cannot be negative.")
	}
	if u.At.IsZero() {
		u.At = s.now()
	}
	if _, err := s.db.Write.ExecContext(ctx,
		`INSERT INTO usage (at, kind, run_id, app_id, model, input_tokens, output_tokens, partial) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		u.At.UnixMilli(), u.Kind, u.RunID, u.AppID, u.Model, u.Input, u.Output, u.Partial); err != nil {
		return fmt.Errorf("intent: record usage: %w", err)
	}
	return nil
}

// UsageSince lists the usage rows written at or after since, oldest first.
func (s *UsageBook) UsageSince(ctx context.Context, since time.Time) ([]Usage, error) {
	var rows []struct {
		Usage
		AtMs int64 `db:"at"`
	}
	if err := s.db.Read.SelectContext(ctx, &rows,
		`SELECT id, at, kind, run_id, app_id, model, input_tokens, output_tokens, partial
		 FROM usage WHERE at >= ? ORDER BY at, id`, since.UnixMilli()); err != nil {
		return nil, fmt.Errorf("intent: usage: %w", err)
	}
	out := make([]Usage, len(rows))
	for i, r := range rows {
		out[i] = r.Usage
		out[i].At = time.UnixMilli(r.AtMs)
	}
	return out, nil
}
