package executor_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"autoapp/executor/ai/scripted"
	"autoapp/intent"
	"autoapp/intent/plan"
	"autoapp/intent/workspace"
)

// trivialTasks is how many tasks one round runs: two intents of ten, as
// an intent holds at most twelve.
const (
	trivialTasks     = 20
	trivialPerIntent = 10
)

// BenchmarkTwentyTrivialTasks runs twenty trivial tasks (two intents of
// ten) on a fresh application of the static template each round, with the
// scripted model, which answers at once, and the build stage removed.
// ms/task is each run's whole time, per task; host-ms/task is that less
// the time the scripted model spent answering (its Busy time): what the
// host does around the model and the build (opening the workspace, the
// commits, the turn's documents, the cycle, the preview, the checks, the
// verdict, the moves, the knowledge rows). "earlier" is the same on an
// application with 10,000 earlier completed tasks.
func BenchmarkTwentyTrivialTasks(b *testing.B) {
	for _, earlier := range []int{0, 10_000} {
		b.Run(fmt.Sprintf("earlier=%d", earlier), func(b *testing.B) {
			h := newHost(b)
			var ran, model time.Duration
			round := 0
			for b.Loop() {
				round++
				b.StopTimer()
				appID := h.trivialApp(b, round, earlier)
				b.StartTimer()
				for part := range trivialTasks / trivialPerIntent {
					b.StopTimer()
					id := h.trivialIntent(b, appID, round, part)
					b.StartTimer()
					began, busy := time.Now(), h.model.Busy()
					if err := h.exec.Start(context.Background(), id); err != nil {
						b.Fatal(err)
					}
					d := h.waitTB(b, id)
					ran += time.Since(began)
					model += h.model.Busy() - busy
					if d.Status != intent.IntentDone {
						b.Fatalf("round %d ended %s: %s", round, d.Status, d.StopReason)
					}
				}
			}
			tasks := float64(round * trivialTasks)
			b.ReportMetric(float64(ran.Microseconds())/1000/tasks, "ms/task")
			b.ReportMetric(float64((ran-model).Microseconds())/1000/tasks, "host-ms/task")
		})
	}
}

// BenchmarkRunsAtOnce runs twenty trivial tasks (two intents of ten) on
// each of one or two fresh applications of the static template each round,
// the two at once with Runs at once = 2, as BenchmarkTwentyTrivialTasks
// does. ms/task is each run's own time per task, as its owner waits for
// it (the mean over the runs): two at once should stay within 1.5× of one
// alone. wall-ms/task is the round's whole time over every task run.
func BenchmarkRunsAtOnce(b *testing.B) {
	for _, runs := range []int{1, 2} {
		b.Run(fmt.Sprintf("runs=%d", runs), func(b *testing.B) {
			h := newHost(b)
			if err := h.launcher.Limits.SaveRunsAtOnce(strconv.Itoa(runs)); err != nil {
				b.Fatal(err)
			}
			var own, wall time.Duration
			var mu sync.Mutex
			round := 0
			for b.Loop() {
				b.StopTimer()
				var appIDs []string
				for range runs {
					round++
					appIDs = append(appIDs, h.trivialApp(b, round, 0))
				}
				// Every intent is planned before the clock starts; each
				// application's second waits for its first to end.
				plans := make([][]int64, runs)
				for i, appID := range appIDs {
					plans[i] = append(plans[i], h.trivialIntent(b, appID, round, 0))
				}
				b.StartTimer()
				began := time.Now()
				var wg sync.WaitGroup
				for i, appID := range appIDs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						start := time.Now()
						for part := range trivialTasks / trivialPerIntent {
							id := plans[i][0]
							if part > 0 {
								id = h.trivialIntent(b, appID, round, part)
							}
							if err := h.exec.Start(context.Background(), id); err != nil {
								b.Error(err)
								return
							}
							if d := h.waitIntent(b, id); d.Status != intent.IntentDone {
								b.Errorf("%s ended %s: %s", appID, d.Status, d.StopReason)
								return
							}
						}
						mu.Lock()
						own += time.Since(start)
						mu.Unlock()
					}()
				}
				wg.Wait()
				wall += time.Since(began)
				if b.Failed() {
					b.FailNow()
				}
			}
			tasks := float64(round * trivialTasks)
			b.ReportMetric(float64(own.Microseconds())/1000/tasks, "ms/task")
			b.ReportMetric(float64(wall.Microseconds())/1000/tasks, "wall-ms/task")
		})
	}
}

// waitIntent waits until the intent's own run ends, asking the executor
// (in memory), then reads the intent once.
func (h *host) waitIntent(b *testing.B, id int64) intent.IntentDetail {
	deadline := time.Now().Add(120 * time.Second)
	for {
		if _, going := h.exec.Progress(id); !going {
			d, err := h.backlog.Get(context.Background(), id)
			if err != nil {
				b.Error(err)
				return d
			}
			if d.Status != intent.IntentRunning {
				return d
			}
		}
		if time.Now().After(deadline) {
			b.Errorf("intent %d still runs", id)
			return intent.IntentDetail{}
		}
		time.Sleep(time.Millisecond)
	}
}

// trivialIntent plans ten tasks, each adding one line to the home page
// and its example, and scripts each task's one turn to do it.
func (h *host) trivialIntent(b *testing.B, appID string, round, part int) int64 {
	b.Helper()
	ctx := context.Background()
	in, err := h.backlog.OpenDraft(ctx, appID, "Say more on the home page.", intent.Analysis{Restated: []string{"Lines."}})
	if err != nil {
		b.Fatal(err)
	}
	for i := range trivialPerIntent {
		word := fmt.Sprintf("Line %d.%d of round %d", part+1, i+1, round)
		p := heading()
		p.Title, p.Criteria = fmt.Sprintf("Say line %d", i+1), []plan.Criterion{{Text: "The home page says " + word}}
		t, err := h.backlog.AddTask(ctx, in.ID, p)
		if err != nil {
			b.Fatal(err)
		}
		h.model.On(scripted.RunID(runID(in.ID, t.Slug, 1)),
			scripted.Reply{ToolCalls: []scripted.Call{change(examplePath(t.Slug, 1), example("The home page says "+word, "/", word)), addLine(word)}},
			scripted.Reply{ToolCalls: []scripted.Call{cycle}},
			scripted.Reply{Text: "Done."})
	}
	if err := h.backlog.Submit(ctx, in.ID); err != nil {
		b.Fatal(err)
	}
	return in.ID
}

// trivialApp makes a fresh application of the static template for a
// round, its build stage removed, with earlier completed tasks in its
// history, and does what a start does before serving (the links index
// catches up on the history): each round's tasks meet the same workspace.
func (h *host) trivialApp(b *testing.B, round, earlier int) string {
	b.Helper()
	ctx := context.Background()
	appID := fmt.Sprintf("site%d", round)
	if _, err := h.apps.CreateFromTemplate(ctx, appID, "Site", "static"); err != nil {
		b.Fatal(err)
	}
	manifest := `{"name": "Static site", "build": [], "preview": {"static": "site"}, "acceptance": "acceptance/", "artifacts": ["site/index.html"]}`
	if err := h.apps.SaveManifest(ctx, appID, []byte(manifest)); err != nil {
		b.Fatal(err)
	}
	if earlier > 0 {
		h.earlierTasks(b, appID, earlier)
	}
	if err := h.launcher.Recover(ctx); err != nil {
		b.Fatal(err)
	}
	return appID
}

// earlierTasks writes n completed tasks, ten to a delivered intent, into
// the application's history as a long life leaves them: rows, events,
// runs and deliveries (of the workspace's first commit), in one
// transaction.
func (h *host) earlierTasks(b *testing.B, appID string, n int) {
	b.Helper()
	ws, err := workspace.Open(h.apps.WorkspaceDir(appID), time.Now)
	if err != nil {
		b.Fatal(err)
	}
	first, err := ws.Head(context.Background())
	ws.Close()
	if err != nil {
		b.Fatal(err)
	}
	db := h.launcher.Intents
	tx, err := db.Write.Beginx()
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	at := time.Now().Add(-24 * time.Hour).UnixMilli()
	exec := func(q string, args ...any) {
		if _, err := tx.Exec(q, args...); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	var intentID int64
	for i := range n {
		if i%10 == 0 {
			res, err := tx.Exec(`INSERT INTO intents (app_id, status, request, submitted_at, created_at, updated_at)
				VALUES (?, 'done', 'Change the site.', ?, ?, ?)`, appID, at, at, at)
			if err != nil {
				b.Fatal(err)
			}
			intentID, _ = res.LastInsertId()
			exec(`INSERT INTO deliveries (intent_id, app_id, at, revision, evidence) VALUES (?, ?, ?, ?, '{}')`, intentID, appID, at, first)
		}
		slug := fmt.Sprintf("%04d-change-the-site", i+1)
		run := fmt.Sprintf("intent-%d-%s-a1", intentID, slug)
		res, err := tx.Exec(`INSERT INTO tasks (intent_id, app_id, slug, title, priority, locks, estimated_lines, risk, reasoning, summary,
			status, started_at, ended_at, attempts, run_ids, created_at)
			VALUES (?, ?, ?, 'Change the site', 'medium', '["site/index.html"]', 5, 'normal', 'low', 'A change.',
			'completed', ?, ?, 1, json_array(?), ?)`, intentID, appID, slug, at, at, run, at)
		if err != nil {
			b.Fatal(err)
		}
		taskID, _ := res.LastInsertId()
		exec(`INSERT INTO task_runs (run_id, task_id, attempt) VALUES (?, ?, 1)`, run, taskID)
		for _, m := range [][2]string{{"", "proposed"}, {"proposed", "in-queue"}, {"in-queue", "in-progress"}, {"in-progress", "completed"}} {
			exec(`INSERT INTO task_events (task_id, at, from_status, to_status, reason, run_id, actor) VALUES (?, ?, ?, ?, 'test', ?, 'executor')`,
				taskID, at, m[0], m[1], run)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// waitTB waits until the run ends, asking the executor (in memory) so the
// wait costs the run nothing, then reads the intent once.
func (h *host) waitTB(b *testing.B, id int64) intent.IntentDetail {
	b.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for {
		if running := len(h.exec.Running()) > 0; !running {
			d, err := h.backlog.Get(context.Background(), id)
			if err != nil {
				b.Fatal(err)
			}
			if d.Status != intent.IntentRunning {
				return d
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("intent %d still runs", id)
		}
		time.Sleep(time.Millisecond)
	}
}
