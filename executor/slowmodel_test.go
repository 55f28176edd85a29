package executor_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/ai/scripted"
	"autoapp/intent"
)

// These run on the real clock with limits of seconds, as a limits.json
// set so small would: the model is slow in real time, not on a fake clock.

// withRealLimits builds the executor on the real clock with the limits l.
func withRealLimits(l ai.Limits) hostOption {
	return func(h *hostConfig) { h.opts.Limits = func() ai.Limits { return l } }
}

func TestARealSilenceLongerThanTheIdleLimitIsACountedAttempt(t *testing.T) {
	h := newHost(t, withRealLimits(ai.Limits{Idle: time.Second, Wall: time.Minute}))
	id := h.plan(t, heading())
	for n := 1; n <= 2; n++ {
		h.model.On(scripted.RunID(runID(id, headingSlug, n)), scripted.Reply{Text: "thinking", FirstToken: 4 * time.Second})
	}
	h.adviceAnswers(scripted.Reply{Text: `{"diagnosis": "The model was silent.", "advice": "retry", "note": "Choose a faster model."}`})

	d := h.run(t, id)
	wantStopped(t, d, headingSlug+" failed.")
	task := h.task(t, id, headingSlug)
	wantTask(t, task, intent.TaskFailed, 2)
	// The application was never built: the turn is told both facts.
	reasons := "Nothing was built. The workspace did not change since the task began. The turn made no tool call for 1 second."
	wantEnds(t, task, "in-queue: another attempt: "+reasons, "failed: 2 attempts in this run did not complete the task. "+reasons)
}

func TestAStreamDroppedHalfWayIsNotAnAttempt(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
		scripted.Reply{Text: "one two three four five six seven eight nine ten", DropAfter: 4})
	d := h.run(t, id)
	if d.Status != intent.IntentStopped {
		t.Fatalf("the intent is %s", d.Status)
	}
	task := h.task(t, id, headingSlug)
	wantTask(t, task, intent.TaskInterrupted, 0)
	if got := ends(task); len(got) != 1 || !strings.HasPrefix(got[0], "interrupted: not an attempt: ") {
		t.Fatalf("the turn ended %q", got)
	}
}

func TestARateLimitWaitedOutCompletesTheTask(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
		scripted.Reply{Fault: scripted.Status429, RetryAfter: "1"},
		scripted.Reply{Fault: scripted.Status429, RetryAfter: "1"},
		scripted.Reply{ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{addLine("Hello notes")}},
		scripted.Reply{Text: "Done."})
	d := h.run(t, id)
	if d.Status != intent.IntentDone {
		t.Fatalf("the intent is %s (%q)", d.Status, d.StopReason)
	}
	wantTask(t, h.task(t, id, headingSlug), intent.TaskCompleted, 1)
}

func TestARateLimitThatNeverLiftsStopsTheRun(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	replies := make([]scripted.Reply, 1+ai.MaxRetries)
	for i := range replies {
		replies[i] = scripted.Reply{Fault: scripted.Status429, RetryAfter: "0"}
	}
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)), replies...)
	d := h.run(t, id)
	if d.Status != intent.IntentStopped {
		t.Fatalf("the intent is %s", d.Status)
	}
	task := h.task(t, id, headingSlug)
	wantTask(t, task, intent.TaskInterrupted, 0)
	if got := ends(task); len(got) != 1 || !strings.Contains(got[0], "rate-limiting") {
		t.Fatalf("the turn ended %q", got)
	}
}

// TestTheProgressCountsTurnsAndAttemptsOfThisRun: the limits are per run,
// as the policy counts them, so a task run again starts at turn 1 with no
// counted attempt, whatever its earlier runs did.
func TestTheProgressCountsTurnsAndAttemptsOfThisRun(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	// The first run: one attempt that counts, then a provider fault.
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)), scripted.Reply{ToolCalls: []scripted.Call{addLine("Hello")}}, scripted.Reply{Text: "Done."})
	h.model.On(scripted.RunID(runID(id, headingSlug, 2)), scripted.Reply{Fault: scripted.Status500})
	if d := h.run(t, id); d.Status != intent.IntentStopped {
		t.Fatalf("the first run ended %s", d.Status)
	}
	g := scripted.NewGate(t)
	h.model.On(scripted.RunID(runID(id, headingSlug, 3)),
		scripted.Reply{Before: g.Hold, ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{addLine("Hello notes")}},
		scripted.Reply{Text: "Done."})
	if err := h.exec.Start(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	g.Wait(t)
	p, ok := h.exec.Progress(id)
	if !ok || p.Turn != 1 || p.Counted != 0 {
		t.Errorf("progress of the second run: turn %d, counted %d; want turn 1 and none counted", p.Turn, p.Counted)
	}
	g.Open()
	if d := h.wait(t, id); d.Status != intent.IntentDone {
		t.Fatalf("the second run ended %s (%q)", d.Status, d.StopReason)
	}
}

// TestARunAfterAStopIsJudgedFromBeforeTheTasksFirstTurn: the stopped
// attempt edited; the next run's turn only builds those edits. The
// workspace moved since before the task's first turn, so it completes, and
// its lines count every run's change.
func TestARunAfterAStopIsJudgedFromBeforeTheTasksFirstTurn(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	g := scripted.NewGate(t)
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{addLine("Hello notes")}},
		scripted.Reply{Before: g.Hold, Fault: scripted.Status500})
	if err := h.exec.Start(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	g.Wait(t)
	if err := h.exec.Stop(id); err != nil {
		t.Fatal(err)
	}
	g.Open()
	if d := h.wait(t, id); d.Status != intent.IntentStopped {
		t.Fatalf("the first run ended %s", d.Status)
	}
	h.model.On(scripted.RunID(runID(id, headingSlug, 2)),
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "The edits of the last attempt build and pass."})
	d := h.run(t, id)
	if d.Status != intent.IntentDone {
		task := h.task(t, id, headingSlug)
		t.Fatalf("the second run ended %s (%q): %q", d.Status, d.StopReason, ends(task))
	}
	task := h.task(t, id, headingSlug)
	wantTask(t, task, intent.TaskCompleted, 1)
	if task.ActualLines < 2 {
		t.Errorf("actual lines %d, want the first run's change counted too", task.ActualLines)
	}
}

// TestStopCutsTheAdviceOfAFailedTask: the planning model is slow to advise
// on the failed task; Stop does not wait for it.
func TestStopCutsTheAdviceOfAFailedTask(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	for n := 1; n <= 2; n++ {
		h.model.On(scripted.RunID(runID(id, headingSlug, n)), scripted.Reply{Text: "Nothing done."})
	}
	g := scripted.NewGate(t)
	h.adviceAnswers(scripted.Reply{Before: g.Hold, Text: `{"diagnosis": "slow", "advice": "retry", "note": ""}`})
	if err := h.exec.Start(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	g.Wait(t)
	stopped := make(chan error, 1)
	go func() { stopped <- h.exec.Stop(id) }()
	select {
	case <-stopped:
	case <-time.After(2 * time.Second): // the host's advice limit here is 5 s
		t.Fatal("Stop waited for the planning model's advice")
	}
	g.Open()
	wantTask(t, h.task(t, id, headingSlug), intent.TaskFailed, 2)
}

// TestTheAdviceHearsTheRefusalsOfTheLastTwoAttempts: the planning model is
// told what the tools refused in the last attempt and the one before.
func TestTheAdviceHearsTheRefusalsOfTheLastTwoAttempts(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{edit("site/index.html", "A heading that is not there", "x")}}, scripted.Reply{Text: "Stuck."})
	h.model.On(scripted.RunID(runID(id, headingSlug, 2)),
		scripted.Reply{ToolCalls: []scripted.Call{edit("site/missing.html", "anything", "x")}}, scripted.Reply{Text: "Stuck again."})
	h.adviceAnswers(scripted.Reply{Text: `{"diagnosis": "The edits missed.", "advice": "retry", "note": ""}`})
	h.run(t, id)
	asked := adviceRequests(h)
	if len(asked) != 1 {
		t.Fatalf("the advice was asked %d times", len(asked))
	}
	msg := asked[0].LastUser()
	if !strings.Contains(msg, "index.html") || !strings.Contains(msg, "missing.html") {
		t.Errorf("the advice was told of the refusals:\n%s\nwant both attempts'", msg)
	}
}

// TestAContextWindowTooSmallStopsTheRunSayingSo: the stop reason says the
// window is too small, not that the provider failed.
func TestAContextWindowTooSmallStopsTheRunSayingSo(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)), scripted.Reply{Fault: scripted.ContextExceeded, ContextTokens: 8192})
	d := h.run(t, id)
	wantStopped(t, d, headingSlug+" could not be built: The model's context window (8,192 tokens) is too small for this turn's documents. "+
		"Nothing was judged; choose a model with a larger window, or set its window in Settings.")
	wantTask(t, h.task(t, id, headingSlug), intent.TaskInterrupted, 0)
}

// TestStopCutsTheDistillationAfterATurn: the questions asked of a turn's
// resolved cases run on the run's context; Stop does not wait for them.
func TestStopCutsTheDistillationAfterATurn(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	h := newHost(t)
	t.Cleanup(func() { close(release) })
	id := h.plan(t, heading())
	// The turn's first check fails and its second passes: a case opened and
	// resolved, which the distiller is asked about when the turn ends. The
	// Settings model takes its time over that question.
	h.model.On(scripted.Contains(distillAsked), scripted.Reply{Before: func() {
		once.Do(func() { close(entered) })
		<-release
	}, Text: "{}"})
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{ToolCalls: []scripted.Call{addLine("Hello notes")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	if err := h.exec.Start(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the distillation was never asked")
	}
	stopped := make(chan error, 1)
	go func() { stopped <- h.exec.Stop(id) }()
	select {
	case <-stopped:
	case <-time.After(3 * time.Second):
		t.Fatal("Stop waited for the distillation")
	}
}

// TestStopCutsTheHostBuild: the turn left its edits unbuilt, and the host
// builds them; a slow build does not hold Stop.
func TestStopCutsTheHostBuild(t *testing.T) {
	h := newHost(t)
	manifest := `{"name": "Static site", "build": [{"name": "slow", "command": ["sh", "-c", "echo building; sleep 30"], "timeout": "1m"}],
		"preview": {"static": "site"}, "acceptance": "acceptance/", "artifacts": ["site/index.html"]}`
	if err := h.apps.SaveManifest(context.Background(), "site", []byte(manifest)); err != nil {
		t.Fatal(err)
	}
	id := h.plan(t, heading())
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{addLine("Hello notes")}},
		scripted.Reply{Text: "Edited; not built."})
	if err := h.exec.Start(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if p, ok := h.exec.Progress(id); ok && p.HostBuild {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the host never built what the turn left unbuilt")
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- h.exec.Stop(id) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop waited for the host's build")
	}
	if d := h.wait(t, id); d.Status != intent.IntentStopped || d.StopReason != "Stopped by the person." {
		t.Errorf("the intent is %s (%q)", d.Status, d.StopReason)
	}
}
