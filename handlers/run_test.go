package handlers_test

import (
	"context"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"autoapp/executor/ai/provider"
	"autoapp/executor/ai/scripted"
	"autoapp/intent"
)

// withModel sets the scripted model up as the Settings model.
func withModel(t *testing.T, s *server) *scripted.Server {
	t.Helper()
	m := scripted.New(t)
	m.Models("builder")
	if err := s.providers.Save(provider.Provider{Name: "scripted", BaseURL: m.URL(), On: true}, false); err != nil {
		t.Fatal(err)
	}
	if err := s.providers.SetDefaultModel("scripted:builder"); err != nil {
		t.Fatal(err)
	}
	return m
}

// running is a submitted intent the owner ran through its page, whose
// builder's turn waits on the model until the gate opens.
func running(t *testing.T, s *server, ada *browser) (intent.Intent, *scripted.Gate) {
	t.Helper()
	m := withModel(t, s)
	g := scripted.NewGate(t)
	m.On(scripted.Any(), scripted.Reply{Before: g.Hold, Fault: scripted.Status500})
	in, _ := s.submitted(t, "Change the page")
	wantRedirect(t, ada.post(intentPath(in.ID)+"/run", nil), intentPath(in.ID))
	g.Wait(t)
	return in, g
}

// waiting is a task whose builder asked a question, in a stopped intent.
func (s *server) waiting(t *testing.T, question string) (intent.Intent, intent.Task) {
	t.Helper()
	ctx := context.Background()
	in, tasks := s.submitted(t, "Change the page")
	s.moveIntent(t, in.ID, intent.IntentRunning)
	s.moveTask(t, tasks[0].ID, intent.TaskInQueue, intent.TaskInProgress)
	if err := s.backlog.MoveTask(ctx, tasks[0].ID, intent.TaskNeedsAnswer, intent.Move{Reason: "the builder asked",
		Actor: intent.ActorExecutor, Question: question}); err != nil {
		t.Fatal(err)
	}
	if err := s.backlog.MoveIntent(ctx, in.ID, intent.IntentStopped, tasks[0].Slug+" needs an answer"); err != nil {
		t.Fatal(err)
	}
	return in, tasks[0]
}

func TestRunIsRefusedBesideRunWithItsSentence(t *testing.T) {
	t.Parallel()
	// The scripted model, where one is set up, has no script: a run that
	// started would fail the test.
	tests := []struct {
		name     string
		setup    func(t *testing.T, s *server) intent.Intent
		action   string
		sentence string
	}{
		{"a draft not submitted", func(t *testing.T, s *server) intent.Intent {
			withModel(t, s)
			in, _ := s.draft(t, "Tag notes", intent.Analysis{Restated: []string{"Tag notes."}}, planStep{title: "Store tags", priority: "medium"})
			return in
		}, "run", "The plan is still being written; it can run once the engineer submits it."},
		{"a task waiting for an answer", func(t *testing.T, s *server) intent.Intent {
			withModel(t, s)
			in, _ := s.waiting(t, "Which page?")
			return in
		}, "run", "0001-change-the-page waits for an answer; answer its question first."},
		{"no model set up", func(t *testing.T, s *server) intent.Intent {
			in, _ := s.submitted(t, "Change the page")
			return in
		}, "run", "No model is set up for 0001-change-the-page: choose the Settings model in Settings."},
		{"stop when nothing runs", func(t *testing.T, s *server) intent.Intent {
			in, _ := s.submitted(t, "Change the page")
			return in
		}, "stop", "Intent #1 is not running."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, ada := withApp(t)
			in := tt.setup(t, s)
			before := intentStatus(t, ada.get(intentPath(in.ID)))
			r := ada.post(intentPath(in.ID)+"/"+tt.action, nil)
			wantStatus(t, r, fiber.StatusConflict)
			wantWithin(t, element(t, r, `data-testid="refusal-run"`, "</p>"), tt.sentence)
			if got := intentStatus(t, r); got != before {
				t.Errorf("the intent is %s, was %s", got, before)
			}
		})
	}
}

func TestRunStopAndAnswerNeedTheCSRFToken(t *testing.T) {
	t.Parallel()
	t.Run("run", func(t *testing.T) {
		t.Parallel()
		s, ada := withApp(t)
		withModel(t, s) // no script: a run that started would fail the test
		in, _ := s.submitted(t, "Change the page")
		r := ada.send(formRequest(intentPath(in.ID)+"/run", url.Values{}, "Origin", origin))
		wantStatus(t, r, fiber.StatusForbidden)
		wantSentence(t, r, noToken)
		if got := intentStatus(t, ada.get(intentPath(in.ID))); got != "draft" {
			t.Errorf("the intent is %s", got)
		}
		if going := len(s.executor.Running()) > 0; going {
			t.Error("a run started")
		}
	})
	t.Run("stop", func(t *testing.T) {
		t.Parallel()
		s, ada := withApp(t)
		in, g := running(t, s, ada)
		r := ada.send(formRequest(intentPath(in.ID)+"/stop", url.Values{}, "Origin", origin))
		wantStatus(t, r, fiber.StatusForbidden)
		wantSentence(t, r, noToken)
		if r := s.executor.Running(); len(r) != 1 || r[0].IntentID != in.ID {
			t.Error("the run stopped")
		}
		wantRedirect(t, ada.post(intentPath(in.ID)+"/stop", nil), intentPath(in.ID))
		g.Open()
	})
	t.Run("answer", func(t *testing.T) {
		t.Parallel()
		s, ada := withApp(t)
		in, task := s.waiting(t, "Which page?")
		r := ada.send(formRequest(taskPath(task.ID)+"/answer", url.Values{"answer": {"The home page."}}, "Origin", origin))
		wantStatus(t, r, fiber.StatusForbidden)
		wantSentence(t, r, noToken)
		page := ada.get(intentPath(in.ID))
		if got := taskStatus(t, page, task.Slug); got != "needs-answer" {
			t.Errorf("the task is %s", got)
		}
		wantWithin(t, needsCard(t, page, task.Slug), "Asks: Which page?")
	})
}

func TestAnEmptyAnswerIsRefusedBesideTheQuestion(t *testing.T) {
	t.Parallel()
	s, ada := withApp(t)
	in, task := s.waiting(t, "Which page?")
	r := ada.post(taskPath(task.ID)+"/answer", url.Values{"answer": {"   "}})
	wantStatus(t, r, fiber.StatusUnprocessableEntity)
	wantWithin(t, element(t, r, `data-testid="refusal-task-`+strconv.FormatInt(task.ID, 10)+`"`, "</p>"),
		"Write an answer to the question first.")
	if got := taskStatus(t, r, task.Slug); got != "needs-answer" {
		t.Errorf("the task is %s", got)
	}

	wantRedirect(t, ada.post(taskPath(task.ID)+"/answer", url.Values{"answer": {"The home page."}}), intentPath(in.ID))
	if got := taskStatus(t, ada.get(intentPath(in.ID)), task.Slug); got != "in-queue" {
		t.Errorf("the answered task is %s", got)
	}
}

func TestTheOwnersWritesAreRefusedWhileARunGoes(t *testing.T) {
	t.Parallel()
	s, ada := withApp(t)
	in, g := running(t, s, ada)
	const busy = "Intent #1 is running on notes; stop it before changing the application by hand."
	r := ada.post("/apps/"+appID+"/cycle", nil)
	wantStatus(t, r, fiber.StatusConflict)
	wantText(t, r, busy)
	r = ada.post("/apps/"+appID+"/manifest", url.Values{"manifest": {validManifest}})
	wantStatus(t, r, fiber.StatusConflict)
	wantText(t, r, busy)

	page := ada.get(intentPath(in.ID))
	wantWithin(t, element(t, page, `data-testid="progress"`, "</section>"), "0001-change-the-page")
	wantRedirect(t, ada.post(intentPath(in.ID)+"/stop", nil), intentPath(in.ID))
	g.Open()
	page = ada.get(intentPath(in.ID))
	if got := intentStatus(t, page); got != "stopped" {
		t.Fatalf("the intent is %s after Stop", got)
	}
	wantWithin(t, element(t, page, `data-testid="stop-reason"`, "</p>"), "Stopped by the person.")
	if got := taskStatus(t, page, "0001-change-the-page"); got != "interrupted" {
		t.Errorf("the task in hand is %s after Stop", got)
	}
	// Once the run stopped, the owner may build again.
	wantRedirect(t, ada.post("/apps/"+appID+"/cycle", nil), "/apps/"+appID+"#candidate")
	wantSentence(t, ended(t, ada, 30*time.Second), "Passed 1 of 1.")
}
