package intent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"autoapp/intent"
	"autoapp/intent/request"
	"autoapp/migrations/migrationstest"
)

func TestUsageRowsKeepWhatATurnUsed(t *testing.T) {
	db := migrationstest.Intents(t)
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	svc := intent.New(db, t.TempDir(), func() time.Time { return at }, intent.Collaborators{Journal: request.Journal{}}).Usage
	ctx := context.Background()
	rows := []intent.Usage{
		{Kind: intent.KindBuilder, RunID: "intent-1-0001-a-a1", Model: "ollama:qwen3", Input: 1200, Output: 300},
		{Kind: intent.KindChat, Model: "gpt-4o", Input: 40, Output: 0, Partial: true},
		{Kind: intent.KindPlanning, Model: "m", Partial: true},
	}
	for _, u := range rows {
		if err := svc.RecordUsage(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.RecordUsage(ctx, intent.Usage{Kind: "lunch", Model: "m"}); err == nil || !strings.Contains(err.Error(), "not a kind of turn") {
		t.Fatalf("an unknown kind: %v", err)
	}
	if err := svc.RecordUsage(ctx, intent.Usage{Kind: intent.KindChat, Model: "m", Input: -1}); err == nil {
		t.Fatal("a negative count was kept")
	}
	got, err := svc.UsageSince(ctx, at.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d rows, want 3", len(got))
	}
	for i, u := range got {
		w := rows[i]
		if u.Kind != w.Kind || u.Model != w.Model || u.Input != w.Input || u.Output != w.Output || u.Partial != w.Partial || !u.At.Equal(at) {
			t.Errorf("row %d: got %+v, want %+v at %v", i, u, w, at)
		}
	}
	if later, _ := svc.UsageSince(ctx, at.Add(time.Minute)); len(later) != 0 {
		t.Fatalf("rows after the last one: %+v", later)
	}
}
