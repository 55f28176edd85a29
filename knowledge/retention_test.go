package knowledge_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"autoapp/knowledge"
)

func TestRetentionOnOpen(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	now := e.clock.now()
	day := 24 * time.Hour

	// Two events from 31 days ago, five from the last hour.
	for i := range 7 {
		at := now.Add(-31 * day)
		if i >= 2 {
			at = now.Add(time.Duration(i-7) * time.Minute)
		}
		if err := e.store.Append(ctx, knowledge.Event{At: at, Level: knowledge.LevelInfo, Message: "line"}); err != nil {
			t.Fatal(err)
		}
	}
	// A turn 40 days ago: its instructions and document are old but referred to.
	e.clock.set(now.Add(-40 * day))
	turn, err := e.store.RecordTurn(ctx, knowledge.Turn{Kind: knowledge.TurnBuilder, Instructions: "old instructions",
		Documents: []knowledge.DeliveredDoc{{Ref: "digest:notes", Text: "old digest"}}})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.set(now)
	// Blobs nothing refers to: one old, one recent.
	for _, b := range []struct {
		text string
		at   time.Time
	}{{"old orphan", now.Add(-31 * day)}, {"recent orphan", now.Add(-29 * day)}} {
		if _, err := e.store.DB().Write.Exec(`INSERT INTO blobs (hash, text, bytes, created_at) VALUES (?, ?, ?, ?)`,
			knowledge.Hash(b.text), b.text, len(b.text), b.at.UnixMilli()); err != nil {
			t.Fatal(err)
		}
	}

	e.reopen(t, knowledge.Options{MaxEvents: 3})

	t.Run("old events go, then the oldest beyond the cap", func(t *testing.T) {
		got, err := e.store.Log(ctx, knowledge.LogQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if ids := idsOf(got); !slices.Equal(ids, []int64{7, 6, 5}) {
			t.Errorf("events left = %v, want the newest three [7 6 5]", ids)
		}
	})
	t.Run("old blobs go unless referred to", func(t *testing.T) {
		var texts []string
		if err := e.store.DB().Read.Select(&texts, `SELECT text FROM blobs ORDER BY text`); err != nil {
			t.Fatal(err)
		}
		want := []string{"old digest", "old instructions", "recent orphan"}
		if !slices.Equal(texts, want) {
			t.Errorf("blobs left = %q, want %q", texts, want)
		}
	})
	t.Run("contexts are never deleted", func(t *testing.T) {
		if _, docs, err := e.store.Turn(ctx, turn); err != nil || docs[0].Text != "old digest" {
			t.Errorf("the 40-day-old turn: %+v, %v", docs, err)
		}
	})
	t.Run("a second pass finds nothing", func(t *testing.T) {
		r, err := e.store.Retain(ctx)
		if err != nil || r != (knowledge.Retained{}) {
			t.Errorf("Retain = %+v, %v, want nothing deleted", r, err)
		}
	})
}

func TestRetentionKeepsEverythingWithinItsLimits(t *testing.T) {
	e := mustOpen(t, knowledge.Options{MaxEvents: 3})
	ctx := context.Background()
	for range 3 {
		if err := e.store.Append(ctx, knowledge.Event{At: e.clock.now().Add(-29 * 24 * time.Hour), Level: knowledge.LevelDebug, Message: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := e.store.Retain(ctx)
	if err != nil || r != (knowledge.Retained{}) {
		t.Errorf("Retain = %+v, %v, want nothing deleted", r, err)
	}
}
