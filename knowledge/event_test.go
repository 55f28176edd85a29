package knowledge_test

import (
	"context"
	"database/sql"
	"slices"
	"testing"
	"time"

	"autoapp/intent/refusal"
	"autoapp/knowledge"
	"autoapp/knowledge/origin"
)

func TestAppendStoresTheIdentityOfItsContext(t *testing.T) {
	full := origin.Identity{RunID: "run-1", CallID: "call-2", AppID: "notes", ReleaseID: "rel-3", Revision: "abc123"}
	cases := []struct {
		name string
		ctx  context.Context
		// event is what the caller passes; its identity fields must not count.
		event knowledge.Event
		want  origin.Identity
	}{
		{"the turn's envelope", origin.WithIdentity(context.Background(), full), knowledge.Event{Level: knowledge.LevelInfo, Message: "built"}, full},
		{"a line with no origin", context.Background(), knowledge.Event{Level: knowledge.LevelWarn, Message: "stderr line"}, origin.Identity{}},
		{"only an application", origin.WithIdentity(context.Background(), origin.Identity{AppID: "notes"}), knowledge.Event{Level: knowledge.LevelInfo, Message: "preview started"}, origin.Identity{AppID: "notes"}},
		{"identity in the event is not taken", context.Background(), knowledge.Event{Level: knowledge.LevelInfo, Message: "model said",
			RunID: sql.NullString{String: "run-from-model-text", Valid: true}}, origin.Identity{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := mustOpen(t)
			if err := e.store.Append(c.ctx, c.event); err != nil {
				t.Fatal(err)
			}
			got, err := e.store.Log(context.Background(), knowledge.LogQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("got %d events, want 1", len(got))
			}
			if got[0].Identity() != c.want {
				t.Errorf("identity = %+v, want %+v", got[0].Identity(), c.want)
			}
			// An empty field is NULL in the row, not '', and reads back as NULL.
			nulls := count(t, e.store, `SELECT (run_id IS NULL) + (call_id IS NULL) + (app_id IS NULL) + (release_id IS NULL) + (revision IS NULL) FROM events`)
			wantNulls := 0
			for _, f := range []string{c.want.RunID, c.want.CallID, c.want.AppID, c.want.ReleaseID, c.want.Revision} {
				if f == "" {
					wantNulls++
				}
			}
			if nulls != wantNulls {
				t.Errorf("%d NULL identity columns, want %d", nulls, wantNulls)
			}
			if got[0].RunID.Valid != (c.want.RunID != "") || got[0].Revision.Valid != (c.want.Revision != "") {
				t.Errorf("read back run %+v, revision %+v: NULL must stay NULL", got[0].RunID, got[0].Revision)
			}
			if got[0].Message != c.event.Message || !got[0].At.Equal(e.clock.Now()) {
				t.Errorf("got %q at %v, want %q at %v", got[0].Message, got[0].At, c.event.Message, e.clock.Now())
			}
		})
	}
}

func TestAppendRefusesAnUnknownLevel(t *testing.T) {
	e := mustOpen(t)
	err := e.store.Append(context.Background(), knowledge.Event{Level: "fatal", Message: "x"})
	wantCode(t, err, refusal.Invalid)
}

func TestAppendKeepsAttrs(t *testing.T) {
	e := mustOpen(t)
	err := e.store.Append(context.Background(), knowledge.Event{Level: knowledge.LevelError, Message: "build failed",
		Attrs: map[string]any{"stage": "go build", "problems": 2}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.store.Log(context.Background(), knowledge.LogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Attrs["stage"] != "go build" || got[0].Attrs["problems"] != float64(2) {
		t.Errorf("attrs = %v", got[0].Attrs)
	}
}

func TestLogFiltersByLevelAndApplicationNewestFirst(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	type row struct {
		level knowledge.Level
		app   string
	}
	var rows []row
	levels := knowledge.Levels
	for i := range 40 {
		r := row{level: levels[(i*7)%4], app: []string{"notes", "shop", ""}[i%3]}
		rows = append(rows, r)
		e.clock.Set(e.clock.Now().Add(time.Second))
		if err := e.store.Append(origin.WithIdentity(ctx, origin.Identity{AppID: r.app}),
			knowledge.Event{Level: r.level, Message: "line"}); err != nil {
			t.Fatal(err)
		}
	}
	// ids are 1..40 in the order written.
	want := func(least knowledge.Level, app string) []int64 {
		var ids []int64
		for i := len(rows) - 1; i >= 0; i-- {
			r := rows[i]
			if slices.Index(levels, r.level) >= slices.Index(levels, least) && (app == "" || r.app == app) {
				ids = append(ids, int64(i+1))
			}
		}
		return ids
	}
	cases := []struct {
		name  string
		level string
		app   string
	}{
		{"everything", "", ""},
		{"debug is everything", "debug", ""},
		{"info and above", "info", ""},
		{"warnings and errors", "warn", ""},
		{"errors", "error", ""},
		{"one application", "", "notes"},
		{"one application's warnings and errors", "warn", "shop"},
		{"an application with no events", "", "nobody"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			least := knowledge.Level(c.level)
			if least == "" {
				least = knowledge.LevelDebug
			}
			expected := want(least, c.app)
			got, err := e.store.Log(ctx, knowledge.LogQuery{Level: c.level, AppID: c.app})
			if err != nil {
				t.Fatal(err)
			}
			if ids := idsOf(got); !slices.Equal(ids, expected) {
				t.Fatalf("ids = %v, want %v", ids, expected)
			}
			// Pages of three, each starting before the last id of the one before.
			var paged []int64
			var before int64
			for {
				page, err := e.store.Log(ctx, knowledge.LogQuery{Level: c.level, AppID: c.app, Before: before, Limit: 3})
				if err != nil {
					t.Fatal(err)
				}
				if len(page) > 3 {
					t.Fatalf("a page of %d, want at most 3", len(page))
				}
				if len(page) == 0 {
					break
				}
				paged = append(paged, idsOf(page)...)
				before = page[len(page)-1].ID
			}
			if !slices.Equal(paged, expected) {
				t.Errorf("paged ids = %v, want %v", paged, expected)
			}
		})
	}
	t.Run("an unknown level is refused", func(t *testing.T) {
		_, err := e.store.Log(ctx, knowledge.LogQuery{Level: "loud"})
		wantCode(t, err, refusal.Invalid)
	})
}

func idsOf(events []knowledge.Event) []int64 {
	ids := make([]int64, 0, len(events))
	for _, e := range events {
		ids = append(ids, e.ID)
	}
	return ids
}

// TestLogOfOneRunReadsOnlyItsLinesAndAReadOnlyStoreWritesNothing: the log
// of a run is its lines, newest first, at the level asked; opened
// read-only beside the store that writes, it reads the same and refuses to
// write.
func TestLogOfOneRunReadsOnlyItsLinesAndAReadOnlyStoreWritesNothing(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	for i, line := range []struct{ run, message string }{
		{"intent-1-0001-a1", "the turn started"}, {"chat-notes-1", "a chat line"},
		{"intent-1-0001-a1", "the build failed"}, {"", "no run"}, {"intent-1-0001-a2", "the next attempt"},
	} {
		level := knowledge.LevelInfo
		if i == 2 {
			level = knowledge.LevelError
		}
		if err := e.store.Append(origin.WithIdentity(ctx, origin.Identity{RunID: line.run}), knowledge.Event{Level: level, Message: line.message}); err != nil {
			t.Fatal(err)
		}
	}
	ro, err := knowledge.OpenReadOnly(e.path, e.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	messages := func(q knowledge.LogQuery) []string {
		t.Helper()
		got, err := ro.Log(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ev := range got {
			out = append(out, ev.Message)
		}
		return out
	}
	if got, want := messages(knowledge.LogQuery{RunID: "intent-1-0001-a1"}), []string{"the build failed", "the turn started"}; !slices.Equal(got, want) {
		t.Errorf("the run's log = %q, want %q", got, want)
	}
	if got, want := messages(knowledge.LogQuery{RunID: "intent-1-0001-a1", Level: "error"}), []string{"the build failed"}; !slices.Equal(got, want) {
		t.Errorf("the run's errors = %q, want %q", got, want)
	}
	if got := messages(knowledge.LogQuery{RunID: "no-such-run"}); len(got) != 0 {
		t.Errorf("a run with no lines = %q, want none", got)
	}
	if err := ro.Append(ctx, knowledge.Event{Level: knowledge.LevelInfo, Message: "x"}); err == nil {
		t.Error("the read-only store took a write")
	}
}
