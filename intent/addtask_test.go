package intent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"autoapp/intent"
)

// seedTasks gives application appID n completed tasks, numbered 0001 to n,
// in done intents of 100 tasks each, written straight into the store in one
// transaction: the history a long-lived application has.
func (e *env) seedTasks(tb testing.TB, appID string, n int) {
	tb.Helper()
	tx, err := e.db.Write.Beginx()
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback()
	var intentID int64
	for i := range n {
		if i%100 == 0 {
			res, err := tx.Exec(`INSERT INTO intents (app_id, status, request, created_at, updated_at) VALUES (?, 'done', 'Old work.', 0, 0)`, appID)
			if err != nil {
				tb.Fatal(err)
			}
			if intentID, err = res.LastInsertId(); err != nil {
				tb.Fatal(err)
			}
		}
		if _, err := tx.Exec(`INSERT INTO tasks (intent_id, app_id, slug, title, priority, estimated_lines, risk, reasoning, summary, status, created_at)
			VALUES (?, ?, ?, 'Old change', 'medium', 10, 'normal', 'low', 'Old work.', 'completed', 0)`,
			intentID, appID, fmt.Sprintf("%04d-old-change", i+1)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

func TestAddTaskPastTheTenThousandth(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	e.app(t, "notes")
	e.seedTasks(t, "notes", 9999)
	in, _ := e.openWith(t, "notes")

	for _, want := range []string{"10000-add-tags", "10001-show-tags"} {
		title := strings.ReplaceAll(want[strings.Index(want, "-")+1:], "-", " ")
		task, err := e.svc.AddTask(ctx, in.ID, planned(title))
		if err != nil {
			t.Fatalf("task %s: %v", want, err)
		}
		if task.Slug != want {
			t.Fatalf("slug %q, want %q", task.Slug, want)
		}
	}
}

// BenchmarkAddTask adds a task to a draft of an application whose history
// already holds n tasks. Every ten tasks the draft is withdrawn and another
// opened (outside the timer), so a draft stays under its live-task limit.
func BenchmarkAddTask(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		b.Run(fmt.Sprintf("existing=%d", n), func(b *testing.B) {
			e := mustOpen(b)
			ctx := context.Background()
			e.app(b, "notes")
			e.seedTasks(b, "notes", n)
			in, _ := e.openWith(b, "notes")
			i := 0
			for b.Loop() {
				if i > 0 && i%10 == 0 {
					b.StopTimer()
					e.moveIntent(b, in.ID, intent.IntentWithdrawn)
					in, _ = e.openWith(b, "notes")
					b.StartTimer()
				}
				i++
				if _, err := e.svc.AddTask(ctx, in.ID, planned(fmt.Sprintf("Change %d", i))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
