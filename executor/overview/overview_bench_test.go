package overview_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"autoapp/intent"
	"autoapp/intent/plan"
)

const (
	benchUsageRows = 100_000
	benchIntents   = 40
	benchTasks     = 10 // per intent, each completed in two turns
	benchDays      = 120
)

// busyLauncher is a launcher with a long history: benchIntents intents of
// benchTasks tasks on one application, each task completed in two turns
// with their rows, and chat, planning and distillation rows on top up to
// benchUsageRows, spread over benchDays days.
func busyLauncher(b *testing.B) *env {
	b.Helper()
	e := mustOpen(b)
	ctx := context.Background()
	e.app(b, "site")
	e.app(b, "shop")
	if err := os.WriteFile(e.book.Path(), []byte(`{"prov:m": {"input": 0.6, "output": 2.2}, "budget": {"day": 10}}`), 0o644); err != nil {
		b.Fatal(err)
	}
	start := e.clock.Now().AddDate(0, 0, -benchDays)
	e.clock.Advance(-benchDays * 24 * time.Hour)
	rows := 0
	for i := range benchIntents {
		in, err := e.backlog.OpenDraft(ctx, "site", fmt.Sprintf("Request %d", i), intent.Analysis{Restated: []string{"Change it."}})
		if err != nil {
			b.Fatal(err)
		}
		var tasks []intent.Task
		for j := range benchTasks {
			t, err := e.backlog.AddTask(ctx, in.ID, plan.Task{Title: fmt.Sprintf("Change %d of request %d", j, i), Priority: "medium",
				Labels: []string{"views"}, EstimatedLines: 10, Risk: "normal", Reasoning: "low", Summary: "A change.",
				Criteria: []plan.Criterion{{Text: "It shows."}}, NoFailurePath: "nothing to refuse"})
			if err != nil {
				b.Fatal(err)
			}
			tasks = append(tasks, t)
		}
		if err := e.backlog.Submit(ctx, in.ID); err != nil {
			b.Fatal(err)
		}
		if err := e.backlog.BeginRun(ctx, in.ID); err != nil {
			b.Fatal(err)
		}
		for _, t := range tasks {
			e.turn(b, in, t, 1, 3*time.Minute, 4000, false, intent.TaskInQueue)
			e.turn(b, in, t, 2, 2*time.Minute, 3000, false, intent.TaskCompleted)
			rows += 2
		}
		if i < benchIntents-1 {
			if err := e.backlog.MoveIntent(ctx, in.ID, intent.IntentDone, "every task completed"); err != nil {
				b.Fatal(err)
			}
		}
		e.clock.Advance(time.Hour)
	}
	// The rest of the rows: chat, planning and distillation turns.
	tx, err := e.db.Write.Beginx()
	if err != nil {
		b.Fatal(err)
	}
	kinds := []string{intent.KindChat, intent.KindPlanning, intent.KindDistill}
	models := []string{"prov:m", "ollama:qwen3", "openai:gpt-5-mini"}
	span := int64(benchDays * 24 * time.Hour / time.Millisecond)
	extra := int64(benchUsageRows - rows)
	for n := 0; rows < benchUsageRows; n++ {
		at := start.UnixMilli() + int64(n)*span/extra
		if _, err := tx.Exec(`INSERT INTO usage (at, kind, run_id, app_id, model, input_tokens, output_tokens, partial) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			at, kinds[n%3], fmt.Sprintf("chat-shop-%d", n), "shop", models[n%3], 1000+n%500, 100+n%50, n%97 == 0); err != nil {
			b.Fatal(err)
		}
		rows++
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	// Now is an hour before the last row's day ends.
	e.clock.Advance(start.AddDate(0, 0, benchDays).Add(-time.Hour).Sub(e.clock.Now()))
	return e
}

// BenchmarkOverviewRead is the panel at the top of the Backlog over a
// long history: needs, today's spend, each application's estimate.
func BenchmarkOverviewRead(b *testing.B) {
	e := busyLauncher(b)
	ctx := context.Background()
	o, err := e.svc.Read(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if len(o.Apps) != 2 || o.Apps[1].Estimate == nil || o.Today.Turns == 0 {
		b.Fatalf("the overview of the busy launcher: %+v", o)
	}
	for b.Loop() {
		if _, err := e.svc.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNeeds is what every page reads for the rail's mark.
func BenchmarkNeeds(b *testing.B) {
	e := busyLauncher(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := e.svc.Needs(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSpendOfThirtyDays is the Overview page's report: a bar a day,
// per model and per kind.
func BenchmarkSpendOfThirtyDays(b *testing.B) {
	e := busyLauncher(b)
	ctx := context.Background()
	r, err := e.svc.Spend(ctx, 30)
	if err != nil {
		b.Fatal(err)
	}
	if r.Period.Turns < benchUsageRows/5 || len(r.ByModel) != 3 {
		b.Fatalf("30 days of the busy launcher: %d turns, %d models", r.Period.Turns, len(r.ByModel))
	}
	for b.Loop() {
		if _, err := e.svc.Spend(ctx, 30); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIntentSpend is an intent's page: its turns, priced, per task.
func BenchmarkIntentSpend(b *testing.B) {
	e := busyLauncher(b)
	ctx := context.Background()
	d, err := e.backlog.Get(ctx, benchIntents)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := e.svc.Intent(ctx, d); err != nil {
			b.Fatal(err)
		}
	}
}
