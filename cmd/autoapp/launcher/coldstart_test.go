package launcher_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"autoapp/cmd/autoapp/launcher"
	"autoapp/intent"
	"autoapp/intent/request"
	"autoapp/knowledge"
	"autoapp/migrations"
)

// history is a data folder with a long history, made once for the
// benchmarks of this package and removed when they end.
var history struct {
	once sync.Once
	root string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range []string{history.root, year.root, binary.dir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

// year is longHistory's data folder with its events spread over the
// last year, made once like it.
var year struct {
	once sync.Once
	root string
	err  error
}

// yearOfHistory answers a data folder as longHistory's, its million
// events spread over the last year: retention deletes most of them.
func yearOfHistory(b *testing.B) string {
	b.Helper()
	year.once.Do(func() {
		year.root, year.err = os.MkdirTemp("", "autoapp-year-")
		if year.err == nil {
			year.err = seed(year.root, 10_000, 1_000_000, 365*24*time.Hour)
		}
	})
	if year.err != nil {
		b.Fatal(year.err)
	}
	return year.root
}

// longHistory answers a data folder holding 10,000 completed tasks (each
// with its run, its events and its turn) in 1,000 delivered intents, and a
// million events of the last day, written through SQL in one transaction
// per store, with the links index current: what a start finds after a
// long life.
func longHistory(b *testing.B) string {
	b.Helper()
	history.once.Do(func() {
		history.root, history.err = os.MkdirTemp("", "autoapp-history-")
		if history.err == nil {
			history.err = seed(history.root, 10_000, 1_000_000, 24*time.Hour)
		}
	})
	if history.err != nil {
		b.Fatal(history.err)
	}
	return history.root
}

// seed writes tasks completed tasks and events events, the events spread
// evenly over the span before now.
func seed(root string, tasks, events int, span time.Duration) error {
	dir := filepath.Join(root, "launcher")
	idb, err := migrations.Open(filepath.Join(dir, "intents.sqlite"), migrations.Intents)
	if err != nil {
		return err
	}
	defer idb.Close()
	kdb, err := migrations.Open(filepath.Join(dir, "knowledge.sqlite"), migrations.Knowledge)
	if err != nil {
		return err
	}
	defer kdb.Close()
	now := time.Now()
	at := now.Add(-24 * time.Hour).UnixMilli()

	err = inTx(idb.Write, func(exec func(string, ...any)) {
		exec(`INSERT INTO apps (id, name, origin, created_at) VALUES ('notes', 'Notes', 'template:static', ?)`, at)
		for i := range tasks {
			intentID := i/10 + 1
			if i%10 == 0 {
				exec(`INSERT INTO intents (id, app_id, status, request, submitted_at, created_at, updated_at)
					VALUES (?, 'notes', 'done', 'Change the notes.', ?, ?, ?)`, intentID, at, at, at)
				exec(`INSERT INTO deliveries (intent_id, app_id, at, revision, evidence) VALUES (?, 'notes', ?, ?, '{}')`,
					intentID, at, fmt.Sprintf("%040x", intentID))
			}
			slug := fmt.Sprintf("%04d-change-the-notes", i+1)
			run := fmt.Sprintf("intent-%d-%s-a1", intentID, slug)
			exec(`INSERT INTO tasks (id, intent_id, app_id, slug, title, priority, locks, estimated_lines, risk, reasoning, summary,
				status, started_at, ended_at, attempts, run_ids, created_at)
				VALUES (?, ?, 'notes', ?, 'Change the notes', 'medium', '["main.go"]', 40, 'normal', 'low', 'A change.',
				'completed', ?, ?, 1, json_array(?), ?)`, i+1, intentID, slug, at, at, run, at)
			exec(`INSERT INTO task_runs (run_id, task_id, attempt) VALUES (?, ?, 1)`, run, i+1)
			for _, m := range [][2]string{{"", "proposed"}, {"proposed", "in-queue"}, {"in-queue", "in-progress"}, {"in-progress", "completed"}} {
				exec(`INSERT INTO task_events (task_id, at, from_status, to_status, reason, run_id, actor) VALUES (?, ?, ?, ?, 'test', ?, 'executor')`,
					i+1, at, m[0], m[1], run)
			}
		}
	})
	if err != nil {
		return err
	}
	err = inTx(kdb.Write, func(exec func(string, ...any)) {
		exec(`INSERT INTO blobs (hash, text, bytes, created_at) VALUES ('h', 'You are the engineer.', 21, ?)`, at)
		for i := range tasks {
			run := fmt.Sprintf("intent-%d-%04d-change-the-notes-a1", i/10+1, i+1)
			exec(`INSERT INTO contexts (at, app_id, run_id, kind, instructions_hash, request, documents) VALUES (?, 'notes', ?, 'builder', 'h', 'Change the notes.', '[]')`, at, run)
		}
		for i := range events {
			exec(`INSERT INTO events (at, level, message, run_id, app_id, attrs) VALUES (?, 'info', 'preview started on its own port', ?, 'notes', '{"port":4312}')`,
				now.Add(-span).UnixMilli()+int64(i)*span.Milliseconds()/int64(events), fmt.Sprintf("intent-%d-%04d-change-the-notes-a1", i%tasks/10+1, i%tasks+1))
		}
	})
	if err != nil {
		return err
	}
	_, err = knowledge.RebuildLinks(context.Background(), kdb, intent.NewService(idb, root, time.Now, intent.Collaborators{Journal: request.Journal{}}))
	return err
}

// inTx runs write in one transaction of db; exec stops at the first error.
func inTx(db *sqlx.DB, write func(exec func(string, ...any))) error {
	tx, err := db.Beginx()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var failed error
	write(func(q string, args ...any) {
		if failed == nil {
			if _, err := tx.Exec(q, args...); err != nil {
				failed = fmt.Errorf("%s: %w", q, err)
			}
		}
	})
	if failed != nil {
		return failed
	}
	return tx.Commit()
}

// BenchmarkColdStart is a start on a long history, as serve makes it: the
// launcher built (both stores opened and migrated, every service), the
// start-up work (Recover), and the first /healthz answered. Close is not
// timed. It reports each part too.
func BenchmarkColdStart(b *testing.B) {
	root := longHistory(b)
	ctx := context.Background()
	const host = "127.0.0.1:8080"
	var built, recovered, answered time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		began := time.Now()
		l, err := launcher.New(root, time.Now, nil, launcher.Options{})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := l.Recover(ctx); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
		req.Host = host
		resp, err := l.App(launcher.Site{Hosts: []string{host}}, nil).Test(req, -1)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("/healthz: %v, %v", resp, err)
		}
		resp.Body.Close()
		t3 := time.Now()
		built, recovered, answered = built+t1.Sub(began), recovered+t2.Sub(t1), answered+t3.Sub(t2)

		b.StopTimer()
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64(built.Milliseconds())/n, "ms-new/op")
	b.ReportMetric(float64(recovered.Milliseconds())/n, "ms-recover/op")
	b.ReportMetric(float64(answered.Milliseconds())/n, "ms-healthz/op")
}
