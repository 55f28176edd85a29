package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"autoapp/intent"
)

const (
	benchIntents = 200
	benchTasks   = 12 // the most live tasks an intent holds
)

// busyBacklog is an owner whose application has benchIntents intents of
// benchTasks tasks each, planned, run and ended as the executor would leave
// them: every fourth is done, the others stopped with tasks completed,
// failed, interrupted and queued, and the newest still runs. It returns the
// newest intent and its tasks in the order they were added.
func busyBacklog(b *testing.B) (*server, *browser, intent.Intent, []intent.Task) {
	b.Helper()
	s, ada := withApp(b)
	ctx := context.Background()
	// Task i is blocked by i-1 within chains of three, and the last task
	// waits on the ends of every chain.
	steps := make([]planStep, benchTasks)
	for i := range steps {
		steps[i] = planStep{title: fmt.Sprintf("Step %d of the change", i+1), priority: []string{"high", "medium", "low"}[i%3]}
		if i%3 != 0 {
			steps[i].blockedBy = []int{i - 1}
		}
	}
	steps[benchTasks-1].blockedBy = []int{2, 5, 8}

	var last intent.Intent
	var lastTasks []intent.Task
	for n := 1; n <= benchIntents; n++ {
		in, tasks := s.draft(b, fmt.Sprintf("Request %d: add tags to notes,\nand a filter by tag.", n), intent.Analysis{
			Restated:    []string{"Notes get tags.", "The list filters by one tag."},
			Fits:        []string{"The notes list"},
			Assumptions: []string{"One tag per note is enough for now."},
		}, steps...)
		if err := s.backlog.Submit(ctx, in.ID); err != nil {
			b.Fatalf("submit intent %d: %v", in.ID, err)
		}
		s.moveIntent(b, in.ID, intent.IntentRunning)
		switch {
		case n == benchIntents: // the newest still runs
			s.moveTask(b, tasks[0].ID, intent.TaskInQueue, intent.TaskInProgress, intent.TaskCompleted)
			s.moveTask(b, tasks[1].ID, intent.TaskInQueue, intent.TaskInProgress)
			s.moveTask(b, tasks[2].ID, intent.TaskInQueue)
			s.moveTask(b, tasks[3].ID, intent.TaskInQueue, intent.TaskInProgress, intent.TaskFailed)
		case n%4 == 0:
			for _, t := range tasks {
				s.moveTask(b, t.ID, intent.TaskInQueue, intent.TaskInProgress, intent.TaskCompleted)
			}
			s.moveIntent(b, in.ID, intent.IntentDone)
		default:
			s.moveTask(b, tasks[0].ID, intent.TaskInQueue, intent.TaskInProgress, intent.TaskCompleted)
			s.moveTask(b, tasks[1].ID, intent.TaskInQueue, intent.TaskInProgress, intent.TaskFailed)
			s.moveTask(b, tasks[3].ID, intent.TaskInQueue, intent.TaskInProgress, intent.TaskInterrupted)
			s.moveTask(b, tasks[4].ID, intent.TaskInQueue)
			s.moveIntent(b, in.ID, intent.IntentStopped)
		}
		last, lastTasks = in, tasks
	}
	return s, ada, last, lastTasks
}

// benchGet asks for target until the benchmark has its measure, after
// checking once that the answer is what it should be; headers come in
// name, value pairs. With b.Loop the benchmark function runs once, so its
// fixture is built once, and the timer starts at the loop.
func benchGet(b *testing.B, ada *browser, target string, check func(r *response), headers ...string) {
	b.Helper()
	r := ada.get(target, headers...)
	wantStatus(b, r, fiber.StatusOK)
	check(r)
	b.ReportAllocs()
	for b.Loop() {
		if r := ada.get(target, headers...); r.StatusCode != fiber.StatusOK {
			b.Fatalf("GET %s answered %d", target, r.StatusCode)
		}
	}
	// After the loop: its start deletes what was reported before it.
	b.ReportMetric(float64(len(r.body)), "bytes/answer")
}

// BenchmarkBacklogListPage is the Backlog at 200 intents of 12 tasks and
// at 5,000 intents: a page of the newest 50 either way, so the same cost.
func BenchmarkBacklogListPage(b *testing.B) {
	b.Run("200x12", func(b *testing.B) {
		_, ada, newest, _ := busyBacklog(b)
		benchGet(b, ada, "/backlog", func(r *response) {
			if n := strings.Count(r.body, `<tr data-testid="intent-`); n != 50 {
				b.Fatalf("the Backlog lists %d intents, want a page of 50", n)
			}
			wantInOrder(b, r, fmt.Sprintf(`data-testid="intent-%d"`, newest.ID), fmt.Sprintf(`data-testid="intent-%d"`, newest.ID-1))
			wantSentence(b, r, `data-testid="older-intents"`)
		})
	})
	b.Run("5000x2", func(b *testing.B) {
		s, ada := withApp(b)
		s.history(b, 5000, 2)
		benchGet(b, ada, "/backlog", func(r *response) {
			if n := strings.Count(r.body, `<tr data-testid="intent-`); n != 50 {
				b.Fatalf("the Backlog lists %d intents, want a page of 50", n)
			}
		})
	})
}

// BenchmarkBoardPage is the board of the same 200 intents of 12 tasks.
func BenchmarkBoardPage(b *testing.B) {
	_, ada, _, tasks := busyBacklog(b)
	benchGet(b, ada, "/board", func(r *response) {
		wantSentence(b, r, `data-testid="card-`+tasks[0].Slug+`"`)
	})
}

// runningAmong is an owner whose application has older intents of two
// tasks each before the newest, which runs with benchTasks tasks as
// busyBacklog's newest does: an intent's page must cost the same on the
// first day and after years.
func runningAmong(b *testing.B, older int) (*browser, intent.Intent, []intent.Task) {
	b.Helper()
	s, ada := withApp(b)
	in, tasks := runningIn(b, s, older)
	return ada, in, tasks
}

func runningIn(b *testing.B, s *server, older int) (intent.Intent, []intent.Task) {
	s.history(b, older, 2)
	// history leaves its newest as submitted drafts; this one is newer.
	if _, err := s.db.Write.Exec(`UPDATE intents SET status = 'done' WHERE status = 'draft'`); err != nil {
		b.Fatal(err)
	}
	steps := make([]planStep, benchTasks)
	for i := range steps {
		steps[i] = planStep{title: fmt.Sprintf("Step %d of the change", i+1), priority: []string{"high", "medium", "low"}[i%3]}
		if i%3 != 0 {
			steps[i].blockedBy = []int{i - 1}
		}
	}
	in, tasks := s.draft(b, "Add tags to notes,\nand a filter by tag.", intent.Analysis{Restated: []string{"Notes get tags."}}, steps...)
	if err := s.backlog.Submit(context.Background(), in.ID); err != nil {
		b.Fatal(err)
	}
	s.moveIntent(b, in.ID, intent.IntentRunning)
	s.moveTask(b, tasks[0].ID, intent.TaskInQueue, intent.TaskInProgress, intent.TaskCompleted)
	s.moveTask(b, tasks[1].ID, intent.TaskInQueue, intent.TaskInProgress)
	s.moveTask(b, tasks[2].ID, intent.TaskInQueue)
	s.moveTask(b, tasks[3].ID, intent.TaskInQueue, intent.TaskInProgress, intent.TaskFailed)
	return in, tasks
}

// historySizes are the histories an intent's page is measured at.
var historySizes = []int{10, 5000}

// BenchmarkIntentPage is a running intent's page with 10 and with 5,000
// intents before it: the same cost.
func BenchmarkIntentPage(b *testing.B) {
	for _, n := range historySizes {
		b.Run(fmt.Sprintf("%dintents", n), func(b *testing.B) {
			ada, newest, tasks := runningAmong(b, n-1)
			benchGet(b, ada, intentPath(newest.ID), func(r *response) {
				if n := strings.Count(r.body, `<tr data-testid="task-`); n != benchTasks {
					b.Fatalf("the intent shows %d tasks, want %d", n, benchTasks)
				}
				wantSentence(b, r, `data-testid="task-`+tasks[benchTasks-1].Slug+`"`)
				wantPolling(b, r, true)
			})
		})
	}
}

// BenchmarkIntentLiveFragment is what the running intent's page asks for
// every two seconds, at 10 and at 5,000 intents.
func BenchmarkIntentLiveFragment(b *testing.B) {
	for _, n := range historySizes {
		b.Run(fmt.Sprintf("%dintents", n), func(b *testing.B) {
			ada, newest, tasks := runningAmong(b, n-1)
			benchGet(b, ada, intentPath(newest.ID)+"/live", func(r *response) {
				if n := strings.Count(r.body, `<tr data-testid="task-`); n != benchTasks {
					b.Fatalf("the fragment shows %d tasks, want %d", n, benchTasks)
				}
				wantSentence(b, r, `data-testid="task-`+tasks[0].Slug+`" data-status="completed"`)
				wantPolling(b, r, true)
			}, "HX-Request", "true")
		})
	}
}
