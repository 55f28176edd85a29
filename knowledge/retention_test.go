package knowledge_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"autoapp/knowledge"
)

func TestRetention(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	now := e.clock.Now()
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
	e.clock.Set(now.Add(-40 * day))
	turn, err := e.store.RecordTurn(ctx, knowledge.Turn{Kind: knowledge.TurnBuilder, Instructions: "old instructions",
		Documents: []knowledge.DeliveredDoc{{Ref: "digest:notes", Text: "old digest"}}})
	if err != nil {
		t.Fatal(err)
	}
	// A check case opened 40 days ago keeps its example's steps.
	cases := knowledge.NewCases(e.store.DB(), e.clock.Now)
	if _, _, err := cases.Checks(ctx, knowledge.ChecksObserved{AppID: "notes", RunID: "r1",
		Results: []knowledge.ExampleResult{{ID: "0001-tags-c1", Hash: "abc", Failure: "status 500", Steps: "old example steps"}}}); err != nil {
		t.Fatal(err)
	}
	e.clock.Set(now)
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
	if r, err := e.store.Retain(ctx); err != nil || r.Events != 4 || r.Blobs != 1 || r.Batches != 3 {
		t.Fatalf("Retain = %+v, %v; want 4 events and 1 blob deleted in 3 batches", r, err)
	}

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
		want := []string{"old digest", "old example steps", "old instructions", "recent orphan"}
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
		if err != nil || r.Events != 0 || r.Blobs != 0 {
			t.Errorf("Retain = %+v, %v, want nothing deleted", r, err)
		}
	})
}

func TestRetentionKeepsEverythingWithinItsLimits(t *testing.T) {
	e := mustOpen(t, knowledge.Options{MaxEvents: 3})
	ctx := context.Background()
	for range 3 {
		if err := e.store.Append(ctx, knowledge.Event{At: e.clock.Now().Add(-29 * 24 * time.Hour), Level: knowledge.LevelDebug, Message: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := e.store.Retain(ctx)
	if err != nil || r.Events != 0 || r.Blobs != 0 {
		t.Errorf("Retain = %+v, %v, want nothing deleted", r, err)
	}
}

// oldEvents writes n events from 31 days ago, straight into the store in
// one transaction.
func oldEvents(tb testing.TB, e *env, n int) {
	tb.Helper()
	tx, err := e.store.DB().Write.Beginx()
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback()
	at := e.clock.Now().Add(-31 * 24 * time.Hour).UnixMilli()
	for i := range n {
		if _, err := tx.Exec(`INSERT INTO events (at, level, message, run_id, app_id, attrs) VALUES (?, 'info', 'preview started on its own port', 'run-1', 'notes', '{"port":4312}')`,
			at+int64(i)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

func TestOpenLeavesRetentionToTheBackground(t *testing.T) {
	e := mustOpen(t)
	oldEvents(t, e, 5000)
	e.reopen(t)
	if n := count(t, e.store, `SELECT count(*) FROM events`); n != 5000 {
		t.Fatalf("after Open %d events, want the 5000 old ones still there", n)
	}
}

func TestRetentionInTheBackgroundLetsWritesThrough(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	const old = 100_000
	oldEvents(t, e, old)

	passes := make(chan knowledge.Retained, 1)
	e.store.StartRetention(time.Hour, func(r knowledge.Retained, err error) {
		if err != nil {
			t.Errorf("retention: %v", err)
		}
		passes <- r
	})
	// Writes go on while the pass deletes; each waits at most for the
	// batch in hand.
	stop := make(chan struct{})
	waits := make(chan []time.Duration)
	go func() {
		var w []time.Duration
		for {
			select {
			case <-stop:
				waits <- w
				return
			default:
			}
			began := time.Now()
			if err := e.store.Append(ctx, knowledge.Event{Level: knowledge.LevelInfo, Message: "a write meanwhile"}); err != nil {
				t.Error(err)
			}
			w = append(w, time.Since(began))
		}
	}()
	var r knowledge.Retained
	select {
	case r = <-passes:
	case <-time.After(2 * time.Minute):
		t.Fatal("the background pass did not end")
	}
	close(stop)
	written := <-waits

	if r.Events != old || r.Batches < old/knowledge.RetainBatch {
		t.Fatalf("the pass: %+v; want the %d old events deleted in batches of %d", r, old, knowledge.RetainBatch)
	}
	if n := count(t, e.store, `SELECT count(*) FROM events`); n != len(written) {
		t.Fatalf("%d events left, want the %d written meanwhile", n, len(written))
	}
	longest := slices.Max(written)
	t.Logf("%d batches, the longest %v; %d writes meanwhile, the longest %v", r.Batches, r.Longest, len(written), longest)
	// A shared machine is slow at times: the bounds are generous, the log says what was measured.
	if r.Longest > 250*time.Millisecond {
		t.Errorf("a batch held the write lock for %v", r.Longest)
	}
	if longest > r.Longest+250*time.Millisecond {
		t.Errorf("a write waited %v, longer than the longest batch (%v)", longest, r.Longest)
	}
}

func TestCloseStopsTheBackgroundRetention(t *testing.T) {
	e := mustOpen(t)
	oldEvents(t, e, 50_000)
	e.store.StartRetention(time.Hour, nil)
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	e.open(t)
	// Close stopped the pass after the batch in hand at most.
	if n := count(t, e.store, `SELECT count(*) FROM events`); n < 50_000-knowledge.RetainBatch {
		t.Fatalf("%d events left: the pass went on after Close", n)
	}
}
