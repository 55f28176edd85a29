package executor_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"autoapp/executor/ai/provider"
	"autoapp/executor/ai/scripted"
	"autoapp/intent"
)

func TestARetryIsToldWhatWasStillWrongWhatItReadAndWhatWasRefused(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	slug := "0001-change-the-heading"
	// Attempt 1 reads the page, sends an edit the schema refuses, writes the
	// example and cycles: the check fails, since the page does not greet.
	h.model.On(scripted.RunID(runID(id, slug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{{Name: "source_read", Args: `{"path":"site/index.html"}`}}},
		scripted.Reply{ToolCalls: []scripted.Call{{Name: "source_edit", Args: `{"path":"site/index.html","hunks":"nope"}`}}},
		scripted.Reply{ToolCalls: []scripted.Call{change("acceptance/"+slug+"-c1.json", example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	h.model.On(scripted.RunID(runID(id, slug, 2)),
		scripted.Reply{ToolCalls: []scripted.Call{edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p>Hello notes</p>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	if d := h.run(t, id); d.Status != intent.IntentDone {
		t.Fatalf("intent %s (%s)", d.Status, d.StopReason)
	}
	doc := documentsOf(t, h, runID(id, slug, 2))
	for _, want := range []string{
		"Earlier attempts at " + slug,
		"Still wrong at the end: " + slug + "-c1 failed",
		"Refused: source.edit was refused: hunks:",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the retry's attempts document lacks %q:\n%s", want, doc)
		}
	}
	// Attempt 1 changed files, so what it read is not shown.
	if strings.Contains(doc, "Read, changing nothing") {
		t.Errorf("an attempt that changed files was shown its reads:\n%s", doc)
	}
}

func TestARetryAfterAnAttemptThatChangedNothingIsToldWhatItRead(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	slug := "0001-change-the-heading"
	h.model.On(scripted.RunID(runID(id, slug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{{Name: "source_read", Args: `{"path":"site/index.html"}`}}},
		scripted.Reply{Text: "I looked."})
	h.scriptHeading(id, 2)
	if d := h.run(t, id); d.Status != intent.IntentDone {
		t.Fatalf("intent %s (%s)", d.Status, d.StopReason)
	}
	doc := documentsOf(t, h, runID(id, slug, 2))
	if !strings.Contains(doc, "Read, changing nothing: site/index.html.") {
		t.Errorf("the retry was not told what the attempt that changed nothing read:\n%s", doc)
	}
}

func TestAFailedTasksDiagnosisReachesItsNextRunAndATurnThatWasNotAnAttemptIsLeftOut(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	slug := "0001-change-the-heading"
	// Two attempts that change nothing fail the task; the planning model
	// diagnoses it.
	for n := 1; n <= 2; n++ {
		h.model.On(scripted.RunID(runID(id, slug, n)), scripted.Reply{Text: "Nothing to do."})
	}
	h.adviceAnswers(scripted.Reply{Text: `{"diagnosis":"The heading lives in site/index.html, which no attempt opened.","advice":"retry","note":"Look first."}`})
	d := h.run(t, id)
	if d.Status != intent.IntentStopped {
		t.Fatalf("intent %s (%s)", d.Status, d.StopReason)
	}
	// The third run's first turn fails at the provider: not an attempt.
	h.model.On(scripted.RunID(runID(id, slug, 3)), scripted.Reply{Fault: scripted.Status500})
	h.run(t, id)
	h.scriptHeading(id, 4)
	if d := h.run(t, id); d.Status != intent.IntentDone {
		t.Fatalf("intent %s (%s)", d.Status, d.StopReason)
	}
	doc := documentsOf(t, h, runID(id, slug, 4))
	if !strings.Contains(doc, "How the planning model read it: The heading lives in site/index.html, which no attempt opened.") {
		t.Errorf("the diagnosis did not reach the next run:\n%s", doc)
	}
	if strings.Contains(doc, "Look first") || strings.Contains(doc, "Advice:") {
		t.Errorf("the advice or note, the person's, reached the builder:\n%s", doc)
	}
	if strings.Contains(doc, runID(id, slug, 3)) {
		t.Errorf("the turn that was not an attempt is in the attempts document:\n%s", doc)
	}
}

func TestAProviderThatCannotBeReachedAtATasksStartStopsTheRunWithoutFailingTheTask(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	if err := h.providers.Save(provider.Provider{Name: "scripted", BaseURL: "http://127.0.0.1:1", On: true}, true); err != nil {
		t.Fatal(err)
	}
	d := h.run(t, id)
	td := h.task(t, id, "0001-change-the-heading")
	if td.Status == intent.TaskFailed || td.Attempts != 0 || len(td.RunIDs) != 0 {
		t.Fatalf("an unreachable provider failed the task: %s, %d attempts, runs %v (%s)", td.Status, td.Attempts, td.RunIDs, td.Reason)
	}
	if d.Status != intent.IntentStopped || !strings.Contains(d.StopReason, "could not be reached") || !strings.Contains(d.StopReason, "nothing was judged") {
		t.Fatalf("intent %s (%q)", d.Status, d.StopReason)
	}
	// Once it answers again, Run builds the task.
	if err := h.providers.Save(provider.Provider{Name: "scripted", BaseURL: h.model.URL(), On: true}, true); err != nil {
		t.Fatal(err)
	}
	h.scriptHeading(id, 1)
	if d := h.run(t, id); d.Status != intent.IntentDone {
		t.Fatalf("intent %s (%s)", d.Status, d.StopReason)
	}
}

func TestEachMoveThatEndsAnAttemptRecordsItsOutcome(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	slug := "0001-change-the-heading"
	// A turn the provider fails, a turn that changes nothing, one that gets
	// further, and one that completes.
	h.model.On(scripted.RunID(runID(id, slug, 1)), scripted.Reply{Fault: scripted.Status500})
	h.run(t, id)
	h.model.On(scripted.RunID(runID(id, slug, 2)), scripted.Reply{Text: "Nothing to do."})
	h.scriptHeading(id, 3)
	if d := h.run(t, id); d.Status != intent.IntentDone {
		t.Fatalf("intent %s (%s)", d.Status, d.StopReason)
	}
	var got []intent.Outcome
	for _, ev := range h.task(t, id, slug).Events {
		if ev.From == intent.TaskInProgress {
			got = append(got, ev.Outcome)
		} else if ev.Outcome != intent.OutcomeNone {
			t.Errorf("a move from %s has the outcome %q", ev.From, ev.Outcome)
		}
	}
	want := []intent.Outcome{intent.OutcomeNotAnAttempt, intent.OutcomeRetry, intent.OutcomeCompleted}
	if !slices.Equal(got, want) {
		t.Fatalf("the attempts ended %v, want %v", got, want)
	}
}

func TestTheProgressCountsPassingCriteriaAsSoonAsACyclesChecksPass(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	slug := "0001-change-the-heading"
	g := scripted.NewGate(t)
	h.model.On(scripted.RunID(runID(id, slug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{change("acceptance/"+slug+"-c1.json", example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p>Hello notes</p>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done.", Before: g.Hold})
	if err := h.exec.Start(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	g.Wait(t)
	// The turn goes on after its passing cycle: the progress says so now.
	p, ok := h.exec.Progress(id)
	if !ok || p.Passed != 1 || p.Total != 1 {
		t.Fatalf("while the turn goes on after its passing cycle the progress says %d of %d (%v)", p.Passed, p.Total, ok)
	}
	g.Open()
	if d := h.wait(t, id); d.Status != intent.IntentDone {
		t.Fatalf("intent %s (%s)", d.Status, d.StopReason)
	}
}

func TestARetrysProgressSaysWhyTheLastAttemptDidNotComplete(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	slug := "0001-change-the-heading"
	g := scripted.NewGate(t)
	h.model.On(scripted.RunID(runID(id, slug, 1)), scripted.Reply{Text: "Nothing to do."})
	h.model.On(scripted.RunID(runID(id, slug, 2)), scripted.Reply{Text: "Still nothing.", Before: g.Hold})
	h.adviceAnswers(scripted.Reply{Text: `{"diagnosis":"x","advice":"retry","note":""}`})
	if err := h.exec.Start(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	g.Wait(t)
	p, ok := h.exec.Progress(id)
	if !ok || p.Turn != 2 || !strings.Contains(p.LastEnded, "Nothing was built.") {
		t.Fatalf("the retry's progress: turn %d, last ended %q (%v)", p.Turn, p.LastEnded, ok)
	}
	g.Open()
	h.wait(t, id)
}
