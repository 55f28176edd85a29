package intent_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"autoapp/intent"
	"autoapp/intent/refusal"
)

// allowedTaskMoves is the table, written out again here so the
// test does not read the code's own table.
var allowedTaskMoves = map[[2]intent.TaskStatus]bool{
	{intent.TaskProposed, intent.TaskInQueue}:       true,
	{intent.TaskProposed, intent.TaskRemoved}:       true,
	{intent.TaskInQueue, intent.TaskInProgress}:     true,
	{intent.TaskInQueue, intent.TaskFailed}:         true,
	{intent.TaskInQueue, intent.TaskRemoved}:        true,
	{intent.TaskInQueue, intent.TaskProposed}:       true,
	{intent.TaskInProgress, intent.TaskCompleted}:   true,
	{intent.TaskInProgress, intent.TaskInQueue}:     true,
	{intent.TaskInProgress, intent.TaskFailed}:      true,
	{intent.TaskInProgress, intent.TaskInterrupted}: true,
	{intent.TaskInProgress, intent.TaskNeedsAnswer}: true,
	{intent.TaskFailed, intent.TaskInQueue}:         true,
	{intent.TaskFailed, intent.TaskProposed}:        true,
	{intent.TaskFailed, intent.TaskRemoved}:         true,
	{intent.TaskInterrupted, intent.TaskInQueue}:    true,
	{intent.TaskInterrupted, intent.TaskRemoved}:    true,
	{intent.TaskInterrupted, intent.TaskProposed}:   true,
	{intent.TaskNeedsAnswer, intent.TaskInQueue}:    true,
	{intent.TaskNeedsAnswer, intent.TaskRemoved}:    true,
}

// pathTo is how a proposed task reaches each status through allowed moves.
var pathTo = map[intent.TaskStatus][]intent.TaskStatus{
	intent.TaskProposed:    {},
	intent.TaskInQueue:     {intent.TaskInQueue},
	intent.TaskInProgress:  {intent.TaskInQueue, intent.TaskInProgress},
	intent.TaskCompleted:   {intent.TaskInQueue, intent.TaskInProgress, intent.TaskCompleted},
	intent.TaskFailed:      {intent.TaskInQueue, intent.TaskInProgress, intent.TaskFailed},
	intent.TaskInterrupted: {intent.TaskInQueue, intent.TaskInProgress, intent.TaskInterrupted},
	intent.TaskNeedsAnswer: {intent.TaskInQueue, intent.TaskInProgress, intent.TaskNeedsAnswer},
	intent.TaskRemoved:     {intent.TaskRemoved},
}

// taskState is everything a move may write, read straight from the store.
type taskState struct {
	Status    intent.TaskStatus `db:"status"`
	StartedAt sql.NullInt64     `db:"started_at"`
	EndedAt   sql.NullInt64     `db:"ended_at"`
	Attempts  int               `db:"attempts"`
	RunIDs    string            `db:"run_ids"`
	Model     string            `db:"model"`
	Events    int               `db:"events"`
	Runs      int               `db:"runs"`
}

func (e *env) state(tb testing.TB, taskID int64) taskState {
	tb.Helper()
	var s taskState
	if err := e.db.Read.Get(&s,
		`SELECT status, started_at, ended_at, attempts, run_ids, model,
		        (SELECT count(*) FROM task_events WHERE task_id = tasks.id) AS events,
		        (SELECT count(*) FROM task_runs WHERE task_id = tasks.id) AS runs
		 FROM tasks WHERE id = ?`, taskID); err != nil {
		tb.Fatal(err)
	}
	return s
}

type lastEvent struct {
	From   intent.TaskStatus `db:"from_status"`
	To     intent.TaskStatus `db:"to_status"`
	At     int64             `db:"at"`
	Reason string            `db:"reason"`
	RunID  string            `db:"run_id"`
	Actor  string            `db:"actor"`
}

func (e *env) lastEvent(tb testing.TB, taskID int64) lastEvent {
	tb.Helper()
	var ev lastEvent
	if err := e.db.Read.Get(&ev,
		`SELECT from_status, to_status, at, reason, run_id, actor FROM task_events WHERE task_id = ? ORDER BY id DESC LIMIT 1`,
		taskID); err != nil {
		tb.Fatal(err)
	}
	return ev
}

func runIDs(tb testing.TB, text string) []string {
	tb.Helper()
	var ids []string
	if err := json.Unmarshal([]byte(text), &ids); err != nil {
		tb.Fatal(err)
	}
	return ids
}

func TestMoveTaskEveryPair(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	start := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	n := 0
	for _, from := range intent.TaskStatuses {
		for _, to := range intent.TaskStatuses {
			n++
			t.Run(fmt.Sprintf("%s to %s", from, to), func(t *testing.T) {
				_, tasks := e.draft(t, fmt.Sprintf("pair-%d", n), "Change one thing")
				id := tasks[0].ID
				e.clock.Set(start)
				for i, s := range pathTo[from] {
					e.move(t, id, s, fmt.Sprintf("setup-%d-%d", n, i))
				}
				at := e.clock.Set(start.Add(time.Duration(n) * time.Minute))
				before := e.state(t, id)
				if before.Status != from {
					t.Fatalf("setup left the task %s, not %s", before.Status, from)
				}

				runID := fmt.Sprintf("run-%d", n)
				err := e.svc.MoveTask(ctx, id, to, intent.Move{Reason: "because", RunID: runID, Actor: intent.ActorExecutor, Question: "Which tag?", Answer: "None."})
				after := e.state(t, id)

				if !allowedTaskMoves[[2]intent.TaskStatus{from, to}] {
					ie := wantRefusal(t, err, refusal.Conflict)
					if !strings.Contains(ie.Message, fmt.Sprintf("from %s to %s", from, to)) {
						t.Fatalf("the sentence does not name both statuses: %q", ie.Message)
					}
					if after != before {
						t.Fatalf("a refused move wrote something:\nbefore %+v\nafter  %+v", before, after)
					}
					return
				}

				if err != nil {
					t.Fatalf("allowed move refused: %v", err)
				}
				if after.Events != before.Events+1 {
					t.Fatalf("%d events written, want 1", after.Events-before.Events)
				}
				ev := e.lastEvent(t, id)
				if ev.From != from || ev.To != to || ev.At != at.UnixMilli() || ev.Reason != "because" ||
					ev.RunID != runID || ev.Actor != intent.ActorExecutor {
					t.Fatalf("event %+v", ev)
				}
				if after.Status != to || after.Model != before.Model {
					t.Fatalf("after the move: %+v", after)
				}

				// The stamps the issue gives each move; everything else stays.
				want := before
				want.Status, want.Events = to, before.Events+1
				stamp := sql.NullInt64{Int64: at.UnixMilli(), Valid: true}
				switch {
				case to == intent.TaskInProgress:
					want.StartedAt, want.EndedAt, want.Attempts = stamp, sql.NullInt64{}, before.Attempts+1
					want.Runs = before.Runs + 1
					ids, _ := json.Marshal(append(runIDs(t, before.RunIDs), runID))
					want.RunIDs = string(ids)
				case to == intent.TaskCompleted, to == intent.TaskFailed:
					want.EndedAt = stamp
				case from == intent.TaskInProgress && to == intent.TaskInQueue:
					want.EndedAt = stamp
				case to == intent.TaskInterrupted, to == intent.TaskNeedsAnswer:
					want.EndedAt, want.Attempts = stamp, before.Attempts-1
				}
				if after != want {
					t.Fatalf("stamps:\nwant %+v\ngot  %+v", want, after)
				}
				if to == intent.TaskInProgress {
					var attempt int
					if err := e.db.Read.Get(&attempt, `SELECT attempt FROM task_runs WHERE run_id = ? AND task_id = ?`, runID, id); err != nil {
						t.Fatal(err)
					}
					if attempt != after.Attempts {
						t.Fatalf("task_runs says attempt %d, the task %d", attempt, after.Attempts)
					}
				}
			})
		}
	}
	if n != 64 {
		t.Fatalf("%d cases, want 64", n)
	}
}

func TestMoveTaskAttemptsAcrossRetries(t *testing.T) {
	e := mustOpen(t)
	_, tasks := e.draft(t, "notes", "Add tags")
	id := tasks[0].ID
	e.move(t, id, intent.TaskInQueue, "")
	e.move(t, id, intent.TaskInProgress, "r1")
	e.move(t, id, intent.TaskInQueue, "r1") // another attempt
	e.move(t, id, intent.TaskInProgress, "r2")
	e.move(t, id, intent.TaskInterrupted, "r2") // not the builder's failure
	e.move(t, id, intent.TaskInQueue, "")
	e.move(t, id, intent.TaskInProgress, "r3")
	e.move(t, id, intent.TaskCompleted, "r3")

	d, err := e.svc.Task(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if d.Attempts != 2 || !slices.Equal(d.RunIDs, []string{"r1", "r2", "r3"}) || d.EndedAt.IsZero() {
		t.Fatalf("task: attempts %d, run ids %v, ended %v", d.Attempts, d.RunIDs, d.EndedAt)
	}
	var attempts []int
	if err := e.db.Read.Select(&attempts, `SELECT attempt FROM task_runs WHERE task_id = ? ORDER BY run_id`, id); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(attempts, []int{1, 2, 2}) {
		t.Fatalf("task_runs attempts %v, want [1 2 2]", attempts)
	}
}

func TestMoveTaskRefusals(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	_, tasks := e.draft(t, "notes", "Add tags")
	id := tasks[0].ID
	e.move(t, id, intent.TaskInQueue, "")

	err := e.svc.MoveTask(ctx, id, intent.TaskInProgress, intent.Move{})
	wantRefusal(t, err, refusal.Invalid)

	e.move(t, id, intent.TaskInProgress, "r1")
	e.move(t, id, intent.TaskInQueue, "r1")
	before := e.state(t, id)
	err = e.svc.MoveTask(ctx, id, intent.TaskInProgress, intent.Move{RunID: "r1"})
	if ie := wantRefusal(t, err, refusal.Conflict); ie.Message != "The run r1 has started a task already; each attempt has its own run id." {
		t.Fatalf("a reused run id: %q", ie.Message)
	}
	if after := e.state(t, id); after != before {
		t.Fatalf("a reused run id wrote something:\nbefore %+v\nafter  %+v", before, after)
	}

	wantRefusal(t, e.svc.MoveTask(ctx, id, "blocked", intent.Move{}), refusal.Invalid)
	wantRefusal(t, e.svc.MoveTask(ctx, 9999, intent.TaskInQueue, intent.Move{}), refusal.NotFound)

	err = e.svc.MoveTask(ctx, id, intent.TaskInQueue, intent.Move{})
	if ie := wantRefusal(t, err, refusal.Conflict); ie.Message != "A task cannot move from in-queue to in-queue: it is in-queue already." {
		t.Fatalf("same status: %q", ie.Message)
	}
	e.move(t, id, intent.TaskInProgress, "r2")
	e.move(t, id, intent.TaskCompleted, "r2")
	err = e.svc.MoveTask(ctx, id, intent.TaskInQueue, intent.Move{})
	if ie := wantRefusal(t, err, refusal.Conflict); ie.Message != "A task cannot move from completed to in-queue." {
		t.Fatalf("refused move: %q", ie.Message)
	}
}

func TestMoveTaskRaceHasOneWinner(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	_, tasks := e.draft(t, "notes", "Add tags", "Show tags", "Sort tags", "Hide tags", "Count tags")
	for round, task := range tasks {
		e.move(t, task.ID, intent.TaskInQueue, "")
		before := e.state(t, task.ID)

		var wg sync.WaitGroup
		errs := make([]error, 2)
		ready := make(chan struct{})
		for i := range errs {
			wg.Go(func() {
				<-ready
				errs[i] = e.svc.MoveTask(ctx, task.ID, intent.TaskInProgress,
					intent.Move{RunID: fmt.Sprintf("run-%d-%d", round, i), Actor: intent.ActorExecutor})
			})
		}
		close(ready)
		wg.Wait()

		won := 0
		for _, err := range errs {
			if err == nil {
				won++
				continue
			}
			wantRefusal(t, err, refusal.Conflict)
		}
		after := e.state(t, task.ID)
		if won != 1 || after.Events != before.Events+1 || after.Attempts != 1 || after.Runs != 1 ||
			len(runIDs(t, after.RunIDs)) != 1 {
			t.Fatalf("round %d: %d won (%v); %+v", round, won, errs, after)
		}
	}
}

func TestTaskEventsAreAppendOnly(t *testing.T) {
	e := mustOpen(t)
	_, tasks := e.draft(t, "notes", "Add tags")
	e.move(t, tasks[0].ID, intent.TaskInQueue, "")
	for _, q := range []string{
		`UPDATE task_events SET reason = 'rewritten' WHERE task_id = ?`,
		`DELETE FROM task_events WHERE task_id = ?`,
	} {
		_, err := e.db.Write.Exec(q, tasks[0].ID)
		if err == nil || !strings.Contains(err.Error(), "task_events are append-only") {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if n := e.count(t, `SELECT count(*) FROM task_events WHERE task_id = ? AND reason <> 'rewritten'`, tasks[0].ID); n != 2 {
		t.Fatalf("%d events, want 2", n)
	}
}

func TestIntentEventsAreAppendOnly(t *testing.T) {
	e := mustOpen(t)
	in, _ := e.draft(t, "notes", "Add tags")
	e.moveIntent(t, in.ID, intent.IntentRunning)
	for _, q := range []string{
		`UPDATE intent_events SET reason = 'rewritten' WHERE intent_id = ?`,
		`DELETE FROM intent_events WHERE intent_id = ?`,
	} {
		_, err := e.db.Write.Exec(q, in.ID)
		if err == nil || !strings.Contains(err.Error(), "intent_events are append-only") {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if n := e.count(t, `SELECT count(*) FROM intent_events WHERE intent_id = ?`, in.ID); n != 2 {
		t.Fatalf("%d events, want 2", n)
	}
}

// allowedIntentMoves is the intents' table, written out again.
var allowedIntentMoves = map[[2]intent.IntentStatus]bool{
	{intent.IntentDraft, intent.IntentRunning}:     true,
	{intent.IntentDraft, intent.IntentWithdrawn}:   true,
	{intent.IntentRunning, intent.IntentStopped}:   true,
	{intent.IntentRunning, intent.IntentDone}:      true,
	{intent.IntentStopped, intent.IntentRunning}:   true,
	{intent.IntentStopped, intent.IntentWithdrawn}: true,
	{intent.IntentStopped, intent.IntentDone}:      true,
}

var intentPathTo = map[intent.IntentStatus][]intent.IntentStatus{
	intent.IntentDraft:     {},
	intent.IntentRunning:   {intent.IntentRunning},
	intent.IntentStopped:   {intent.IntentRunning, intent.IntentStopped},
	intent.IntentDone:      {intent.IntentRunning, intent.IntentDone},
	intent.IntentWithdrawn: {intent.IntentWithdrawn},
}

func TestMoveIntentEveryPair(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	n := 0
	for _, from := range intent.IntentStatuses {
		for _, to := range intent.IntentStatuses {
			n++
			t.Run(fmt.Sprintf("%s to %s", from, to), func(t *testing.T) {
				in, _ := e.draft(t, fmt.Sprintf("intent-%d", n), "Change one thing")
				e.moveIntent(t, in.ID, intentPathTo[from]...)
				events := e.count(t, `SELECT count(*) FROM intent_events WHERE intent_id = ?`, in.ID)

				err := e.svc.MoveIntent(ctx, in.ID, to, "the owner pressed Stop")
				after := e.count(t, `SELECT count(*) FROM intent_events WHERE intent_id = ?`, in.ID)
				if !allowedIntentMoves[[2]intent.IntentStatus{from, to}] {
					ie := wantRefusal(t, err, refusal.Conflict)
					if !strings.Contains(ie.Message, fmt.Sprintf("from %s to %s", from, to)) {
						t.Fatalf("the sentence does not name both statuses: %q", ie.Message)
					}
					if after != events || e.intentStatus(t, in.ID) != from {
						t.Fatal("a refused move wrote something")
					}
					return
				}
				if err != nil {
					t.Fatalf("allowed move refused: %v", err)
				}
				got, err := e.svc.Get(ctx, in.ID)
				if err != nil {
					t.Fatal(err)
				}
				if after != events+1 || got.Status != to {
					t.Fatalf("%d events written, status %s", after-events, got.Status)
				}
				if (to == intent.IntentStopped) != (got.StopReason == "the owner pressed Stop") {
					t.Fatalf("stop reason %q after a move to %s", got.StopReason, to)
				}
			})
		}
	}
}

// BenchmarkMoveTask measures moveTask through the real store: a task
// cycles in-queue → in-progress → in-queue, each move a transaction of its
// own with its event row. A task is replaced every 500 moves so its run_ids
// stay the size a real task's would.
func BenchmarkMoveTask(b *testing.B) {
	e := mustOpen(b)
	ctx := context.Background()
	const perTask = 500
	var task int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%perTask == 0 {
			b.StopTimer()
			_, tasks := e.draft(b, fmt.Sprintf("bench-%d", i/perTask), "Change one thing")
			task = tasks[0].ID
			e.move(b, task, intent.TaskInQueue, "")
			b.StartTimer()
		}
		to, ev := intent.TaskInProgress, intent.Move{RunID: fmt.Sprintf("run-%d", i), Actor: intent.ActorExecutor}
		if i%2 == 1 {
			to, ev = intent.TaskInQueue, intent.Move{Reason: "another attempt", Actor: intent.ActorExecutor}
		}
		if err := e.svc.MoveTask(ctx, task, to, ev); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "moves/s")
}

// BenchmarkRawMoveTx is the floor BenchmarkMoveTask is measured against:
// the same move as one UPDATE of tasks and one INSERT into task_events in a
// transaction of the store's writer, with nothing read or checked.
func BenchmarkRawMoveTx(b *testing.B) {
	e := mustOpen(b)
	_, tasks := e.draft(b, "bench", "Change one thing")
	task := tasks[0].ID
	e.move(b, task, intent.TaskInQueue, "")
	from, to := intent.TaskInQueue, intent.TaskInProgress
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tx, err := e.db.Write.Begin()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Exec(`UPDATE tasks SET status = ? WHERE id = ? AND status = ?`, to, task, from); err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT INTO task_events (task_id, at, from_status, to_status, reason, run_id, actor) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			task, int64(i), from, to, "another attempt", fmt.Sprintf("run-%d", i), intent.ActorExecutor); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		from, to = to, from
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "moves/s")
}
