package knowledge_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"autoapp/knowledge"
	"autoapp/migrations"
)

// seedHistory writes, straight into both stores, the history of an
// application with n tasks: one run each, a turn each, a case opened and
// resolved by every second run with its edit line, and a served lesson
// every fifth. It answers the run ids.
func seedHistory(b *testing.B, intents, kdb *migrations.DB, n int) []string {
	b.Helper()
	runs := make([]string, n)
	in, err := intents.Write.Beginx()
	if err != nil {
		b.Fatal(err)
	}
	defer in.Rollback()
	kn, err := kdb.Write.Beginx()
	if err != nil {
		b.Fatal(err)
	}
	defer kn.Rollback()
	exec := func(tx interface {
		Exec(string, ...any) (sql.Result, error)
	}, q string, args ...any) {
		if _, err := tx.Exec(q, args...); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	exec(in, `INSERT INTO apps (id, name, origin, created_at) VALUES ('notes', 'Notes', 'template:static', 0)`)
	exec(kn, `INSERT INTO blobs (hash, text, bytes, created_at) VALUES ('h', 'You are the engineer.', 21, 0)`)
	exec(kn, `INSERT INTO lessons (text, status, origin, created_at) VALUES ('Build before checking.', 'confirmed', 'curated', 0)`)
	for i := range n {
		if i%100 == 0 {
			exec(in, `INSERT INTO intents (id, app_id, status, request, created_at, updated_at) VALUES (?, 'notes', 'done', 'r', 0, 0)`, i/100+1)
		}
		slug := fmt.Sprintf("%04d-change", i+1)
		runs[i] = fmt.Sprintf("intent-%d-%s-a1", i/100+1, slug)
		exec(in, `INSERT INTO tasks (id, intent_id, app_id, slug, title, priority, locks, estimated_lines, risk, reasoning, summary, status, attempts, run_ids, created_at)
			VALUES (?, ?, 'notes', ?, 'Change', 'medium', '["main.go"]', 10, 'normal', 'low', 's', 'completed', 1, json_array(?), 0)`,
			i+1, i/100+1, slug, runs[i])
		exec(in, `INSERT INTO task_runs (run_id, task_id, attempt) VALUES (?, ?, 1)`, runs[i], i+1)
		exec(kn, `INSERT INTO contexts (at, app_id, run_id, kind, instructions_hash, request, documents) VALUES (0, 'notes', ?, 'builder', 'h', 'a task', '[]')`, runs[i])
		if i%2 == 0 {
			exec(kn, `INSERT INTO cases (kind, signature, app_id, stage, message, opened_at, opened_run_id, edits, resolved_at, resolved_run_id, resolved_revision)
				VALUES ('build', ?, 'notes', 'compile', 'x', 0, ?, ?, 0, ?, 'r')`, fmt.Sprint("sig-", i), runs[i],
				"2026-03-01T09:00:00Z "+runs[i]+" source.edit main.go\n", runs[i])
		}
		if i%5 == 0 {
			exec(kn, `INSERT INTO servings (lesson_id, run_id, served_at, reason) VALUES (1, ?, 0, 'words')`, runs[i])
		}
	}
	if err := in.Commit(); err != nil {
		b.Fatal(err)
	}
	if err := kn.Commit(); err != nil {
		b.Fatal(err)
	}
	return runs
}

// BenchmarkLinksAfterAnAttempt is what the index costs after an attempt
// over a history of 10,000 tasks: a full rebuild, as every attempt's end
// did before, and the update of the run that ended.
func BenchmarkLinksAfterAnAttempt(b *testing.B) {
	s := openLinkStores(b)
	kdb := s.knowledge.DB()
	runs := seedHistory(b, s.intents, kdb, 10_000)
	ctx := context.Background()
	if _, err := knowledge.RebuildLinks(ctx, kdb, s.backlog); err != nil {
		b.Fatal(err)
	}
	b.Run("rebuild", func(b *testing.B) {
		for b.Loop() {
			if _, err := knowledge.RebuildLinks(ctx, kdb, s.backlog); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("update", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if _, err := knowledge.UpdateLinks(ctx, kdb, s.backlog, runs[len(runs)-1-i%100]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
