package knowledge_test

import (
	"context"
	"fmt"
	"testing"

	"autoapp/knowledge"
)

// BenchmarkTurnsView reads the Turns view's page (the 100 newest turns)
// and what their runs did (edits, builds, checks, cases opened and
// resolved, servings) over 20,000 turns whose runs did 100,000 things and
// opened 10,000 cases.
func BenchmarkTurnsView(b *testing.B) {
	e := mustOpen(b)
	const turns = 20_000
	tx, err := e.store.DB().Write.Beginx()
	if err != nil {
		b.Fatal(err)
	}
	at := e.clock.Now().UnixMilli()
	exec := func(q string, args ...any) {
		if _, err := tx.Exec(q, args...); err != nil {
			b.Fatal(err)
		}
	}
	exec(`INSERT INTO blobs (hash, text, bytes, created_at) VALUES ('h', 'You are the engineer.', 21, ?)`, at)
	exec(`INSERT INTO lessons (text, status, origin, created_at) VALUES ('Build before checking.', 'confirmed', 'curated', ?)`, at)
	for i := range turns {
		app := fmt.Sprint("app-", i%10)
		run := fmt.Sprintf("intent-%d-0001-task-a1", i)
		exec(`INSERT INTO contexts (at, app_id, run_id, kind, instructions_hash, request, documents) VALUES (?, ?, ?, 'builder', 'h', 'a task', '[]')`,
			at+int64(i), app, run)
		for _, w := range []struct{ kind, summary string }{{"edit", "source.edit site/index.html"}, {"build", "failed at compile: x"},
			{"edit", "source.edit main.go"}, {"build", "passed (vet, compile)"}, {"checks", "2 of 2 passed"}} {
			exec(`INSERT INTO run_work (run_id, app_id, at, kind, ok, summary) VALUES (?, ?, ?, ?, 1, ?)`, run, app, at+int64(i), w.kind, w.summary)
		}
		if i%2 == 0 {
			exec(`INSERT INTO cases (kind, signature, app_id, stage, message, opened_at, opened_run_id, resolved_at, resolved_run_id, resolved_revision)
				VALUES ('build', ?, ?, 'compile', 'x', ?, ?, ?, ?, 'r')`, fmt.Sprint("sig-", i), app, at, run, at, run)
		}
		if i%5 == 0 {
			exec(`INSERT INTO servings (lesson_id, run_id, served_at, reason) VALUES (1, ?, ?, 'words')`, run, at)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, q := range []struct {
		name string
		q    knowledge.TurnQuery
	}{{"newest", knowledge.TurnQuery{Limit: 100}}, {"app", knowledge.TurnQuery{AppID: "app-3", Limit: 100}}} {
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				page, err := e.store.Turns(ctx, q.q)
				if err != nil || len(page) != 100 {
					b.Fatalf("%d turns: %v", len(page), err)
				}
				runs := make([]string, len(page))
				for i, t := range page {
					runs[i] = t.RunID
				}
				work, err := e.store.Work(ctx, runs, 0)
				if err != nil || len(work) != 100 || work[runs[0]].BuildCount != 2 {
					b.Fatalf("work of %d runs: %v", len(work), err)
				}
			}
		})
	}
}
