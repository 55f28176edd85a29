package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/ai/scripted"
	"autoapp/intent"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
	"autoapp/intent/timetest"
	"autoapp/migrations"
)

// The slugs the host gives the tasks of these tests, and the examples
// their criteria need.
const (
	headingSlug = "0001-change-the-heading"
	headingC1   = "acceptance/0001-change-the-heading-c1.json"
	aboutSlug   = "0002-add-an-about-page"
	// distillAsked is in the distiller's question about a resolved case.
	distillAsked = "A failure the host saw has been resolved."
	// adviceAsked is in the advice question and in no builder's message.
	adviceAsked = "The task failed. The host's reasons:"
)

// withLimits builds the executor on clock c with the turn limits l.
func withLimits(c *timetest.Clock, l ai.Limits) hostOption {
	return func(h *hostConfig) { h.now, h.opts.Limits = c.Now, func() ai.Limits { return l } }
}

// whole is a source.change of one whole file: create, overwrite or delete.
func whole(path, action, content string) scripted.Call {
	f := map[string]string{"path": path, "action": action}
	if content != "" {
		f["content"] = content
	}
	args, _ := json.Marshal(map[string]any{"files": []map[string]string{f}})
	return scripted.Call{Name: "source_change", Args: string(args)}
}

func ask(question string) scripted.Call {
	args, _ := json.Marshal(map[string]string{"question": question})
	return scripted.Call{Name: "intent_ask", Args: string(args)}
}

// scriptHeading scripts attempt n of the heading task as one that
// completes: the example, the change, a cycle.
func (h *host) scriptHeading(id int64, n int) {
	h.model.On(scripted.RunID(runID(id, headingSlug, n)),
		scripted.Reply{ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{addLine("Hello notes")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
}

// addLine puts a paragraph under the template's heading.
func addLine(text string) scripted.Call {
	return edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p>"+text+"</p>")
}

// marks is a task with one criterion per text: the home page says it.
func marks(title string, texts ...string) plan.Task {
	p := heading()
	p.Title, p.Summary, p.Criteria = title, "The home page says some words.", nil
	for _, text := range texts {
		p.Criteria = append(p.Criteria, plan.Criterion{Text: "The home page says " + text})
	}
	return p
}

// examplePath is the file of the example of criterion n of slug.
func examplePath(slug string, n int) string { return "acceptance/" + plan.ExampleID(slug, n) + ".json" }

// headingCompletes scripts the heading task's first turn to complete it.
func (h *host) headingCompletes(id int64) {
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes")),
			addLine("Hello notes")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
}

// adviceAnswers scripts the planning model's answer about a failed task.
func (h *host) adviceAnswers(r scripted.Reply) { h.model.On(scripted.Contains(adviceAsked), r) }

// task is the task slug of the intent, as the Backlog reads it now.
func (h *host) task(t *testing.T, intentID int64, slug string) intent.TaskDetail {
	t.Helper()
	ctx := context.Background()
	d, err := h.backlog.Get(ctx, intentID)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range d.Tasks {
		if task.Slug == slug {
			td, err := h.backlog.Task(ctx, task.ID)
			if err != nil {
				t.Fatal(err)
			}
			return td
		}
	}
	t.Fatalf("intent %d has no task %s", intentID, slug)
	return intent.TaskDetail{}
}

// shown is why the task failed or was interrupted, as the Backlog shows
// it under the task.
func (h *host) shown(t *testing.T, intentID int64, slug string) string {
	t.Helper()
	d, err := h.backlog.Get(context.Background(), intentID)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range d.Tasks {
		if task.Slug == slug {
			return task.Reason
		}
	}
	t.Fatalf("intent %d has no task %s", intentID, slug)
	return ""
}

// run runs the intent and waits until the run has stopped.
func (h *host) run(t *testing.T, id int64) intent.IntentDetail {
	t.Helper()
	if err := h.exec.Start(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	return h.wait(t, id)
}

// ends are how each turn of the task ended, oldest first, as its history
// says: "<status>: <reason>".
func ends(td intent.TaskDetail) []string {
	var out []string
	for _, ev := range td.Events {
		if ev.From == intent.TaskInProgress {
			out = append(out, string(ev.To)+": "+ev.Reason)
		}
	}
	return out
}

func wantEnds(t *testing.T, td intent.TaskDetail, want ...string) {
	t.Helper()
	if got := ends(td); !slices.Equal(got, want) {
		t.Fatalf("the turns of %s ended\n%s\nwant\n%s", td.Slug, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func wantStopped(t *testing.T, d intent.IntentDetail, reason string) {
	t.Helper()
	if d.Status != intent.IntentStopped || d.StopReason != reason {
		t.Fatalf("the intent is %s (%q), want stopped with %q", d.Status, d.StopReason, reason)
	}
}

func wantTask(t *testing.T, td intent.TaskDetail, status intent.TaskStatus, attempts int) {
	t.Helper()
	if td.Status != status || td.Attempts != attempts {
		t.Fatalf("%s is %s after %d attempts (runs %v), want %s after %d", td.Slug, td.Status, td.Attempts, td.RunIDs, status, attempts)
	}
}

// wantUntouched checks a later task was never started.
func wantUntouched(t *testing.T, h *host, td intent.TaskDetail) {
	t.Helper()
	if td.Status != intent.TaskInQueue || len(td.RunIDs) != 0 {
		t.Fatalf("%s is %s with runs %v, want in-queue and never run", td.Slug, td.Status, td.RunIDs)
	}
	for _, r := range h.model.Requests() {
		if strings.Contains(r.Header.Get(scripted.RunHeader), td.Slug) {
			t.Fatalf("the model was asked to build %s", td.Slug)
		}
	}
}

// adviceRequests are the structured questions the model was asked.
func adviceRequests(h *host) []scripted.Request {
	var out []scripted.Request
	for _, r := range h.model.Requests() {
		if len(r.ResponseFormat) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// turnRequests are the requests of one builder turn.
func turnRequests(h *host, runID string) []scripted.Request {
	var out []scripted.Request
	for _, r := range h.model.Requests() {
		if r.Header.Get(scripted.RunHeader) == runID {
			out = append(out, r)
		}
	}
	return out
}

// message is what the turn runID was asked to do: its first request's
// last user message.
func message(t *testing.T, h *host, runID string) string {
	t.Helper()
	reqs := turnRequests(h, runID)
	if len(reqs) == 0 {
		t.Fatalf("the model heard nothing of %s", runID)
	}
	return reqs[0].LastUser()
}

func TestATaskThatNeverWritesItsExamplesFailsAfterTwoAttempts(t *testing.T) {
	const noExample = "No example named 0001-change-the-heading-c1 was run."
	tests := []struct {
		name   string
		answer scripted.Reply
		advice string
	}{
		{"the advice is kept", scripted.Reply{Text: `{"diagnosis": "The builder changed the page but never wrote the example.", "advice": "revise", "note": "Name the example file in the plan."}`},
			"Diagnosis: The builder changed the page but never wrote the example.\nAdvice: revise (ask the engineer to revise this task)\nNote: Name the example file in the plan."},
		{"an answer that is not JSON stores nothing", scripted.Reply{Text: "I would revise the plan."}, ""},
		{"an answer out of the schema stores nothing", scripted.Reply{Text: `{"diagnosis": "x", "advice": "pray", "note": ""}`}, ""},
		{"a broken body stores nothing", scripted.Reply{Fault: scripted.Malformed}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t)
			id := h.plan(t, heading(), about())
			h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
				scripted.Reply{ToolCalls: []scripted.Call{addLine("Hello notes")}},
				scripted.Reply{ToolCalls: []scripted.Call{cycle}},
				scripted.Reply{Text: "Done: the home page says Hello notes."})
			h.model.On(scripted.RunID(runID(id, headingSlug, 2)),
				scripted.Reply{ToolCalls: []scripted.Call{edit("site/index.html", "<p>Hello notes</p>", "<p>Hello, notes</p>")}},
				scripted.Reply{ToolCalls: []scripted.Call{cycle}},
				scripted.Reply{Text: "Done."})
			h.adviceAnswers(tt.answer)

			d := h.run(t, id)
			wantStopped(t, d, "0001-change-the-heading failed.")
			task := h.task(t, id, headingSlug)
			wantTask(t, task, intent.TaskFailed, 2)
			wantEnds(t, task,
				"in-queue: another attempt: "+noExample,
				"failed: 2 attempts in this run did not complete the task. "+noExample)
			if got := h.shown(t, id, headingSlug); got != "2 attempts in this run did not complete the task. "+noExample {
				t.Errorf("the Backlog shows the failure as %q", got)
			}
			if task.Advice != tt.advice {
				t.Errorf("the advice is %q, want %q", task.Advice, tt.advice)
			}
			wantUntouched(t, h, h.task(t, id, aboutSlug))

			// The second attempt was told why the first was not completed.
			if msg := message(t, h, runID(id, headingSlug, 2)); !strings.Contains(msg, "The last attempt ended with:\n"+noExample) {
				t.Errorf("the second attempt's message does not say why the first was not completed:\n%s", msg)
			}
			asked := adviceRequests(h)
			if len(asked) != 1 {
				t.Fatalf("the advice was asked %d times", len(asked))
			}
			if q := asked[0].LastUser(); !strings.Contains(q, "Task 0001-change-the-heading: Change the heading") || !strings.Contains(q, "- "+noExample) {
				t.Errorf("the advice question:\n%s", q)
			}
		})
	}
}

func TestAnAttemptThatGotFurtherIsNotCounted(t *testing.T) {
	const slug = "0001-greet-in-two-words"
	h := newHost(t)
	id := h.plan(t, marks("Greet in two words", "Alpha greeting", "Beta greeting"))
	h.model.On(scripted.RunID(runID(id, slug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{
			change(examplePath(slug, 1), example("The home page says Alpha greeting", "/", "Alpha greeting")),
			change(examplePath(slug, 2), example("The home page says Beta greeting", "/", "Beta greeting"))}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "The examples are written."})
	h.model.On(scripted.RunID(runID(id, slug, 2)),
		scripted.Reply{ToolCalls: []scripted.Call{addLine("Alpha greeting")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "One of two."})
	h.model.On(scripted.RunID(runID(id, slug, 3)),
		scripted.Reply{ToolCalls: []scripted.Call{addLine("Beta greeting")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})

	d := h.run(t, id)
	if d.Status != intent.IntentDone {
		t.Fatalf("the intent is %s (%q)", d.Status, d.StopReason)
	}
	task := h.task(t, id, slug)
	wantTask(t, task, intent.TaskCompleted, 3)
	missing := func(n int, text string) string {
		return fmt.Sprintf("%s-c%d: expected the text %q on GET /, it is not there", slug, n, text)
	}
	wantEnds(t, task,
		"in-queue: another attempt: 2 of 3 checks failed: "+missing(1, "Alpha greeting")+"; "+missing(2, "Beta greeting")+".",
		"in-queue: another attempt: it got further (1 of 2). 1 of 3 checks failed: "+missing(2, "Beta greeting")+".",
		"completed: completed")
	if len(task.ExampleHashes) != 2 {
		t.Errorf("the completed task holds the examples %v", task.ExampleHashes)
	}
}

func TestATaskReachesItsCeilingOfFourTurns(t *testing.T) {
	const slug = "0001-mark-five-things"
	words := []string{"mark-one", "mark-two", "mark-three", "mark-four", "mark-five"}
	h := newHost(t)
	id := h.plan(t, marks("Mark five things", words...))
	var examples []scripted.Call
	for n, w := range words {
		examples = append(examples, change(examplePath(slug, n+1), example("The home page says "+w, "/", w)))
	}
	// Each attempt passes one criterion more than the one before, and none
	// passes them all.
	for n := 1; n <= 4; n++ {
		calls := []scripted.Call{addLine(words[n-1])}
		if n == 1 {
			calls = append(examples, calls...)
		}
		h.model.On(scripted.RunID(runID(id, slug, n)),
			scripted.Reply{ToolCalls: calls},
			scripted.Reply{ToolCalls: []scripted.Call{cycle}},
			scripted.Reply{Text: "Further."})
	}
	h.adviceAnswers(scripted.Reply{Text: `{"diagnosis": "Each turn did one criterion.", "advice": "split", "note": "Five words are five tasks."}`})

	d := h.run(t, id)
	wantStopped(t, d, slug+" failed.")
	task := h.task(t, id, slug)
	wantTask(t, task, intent.TaskFailed, 4)
	missing := func(n int) string {
		return fmt.Sprintf("%s-c%d: expected the text %q on GET /, it is not there", slug, n, words[n-1])
	}
	wantEnds(t, task,
		"in-queue: another attempt: 4 of 6 checks failed: "+missing(2)+"; "+missing(3)+"; "+missing(4)+"; and 1 more.",
		"in-queue: another attempt: it got further (2 of 5). 3 of 6 checks failed: "+missing(3)+"; "+missing(4)+"; "+missing(5)+".",
		"in-queue: another attempt: it got further (3 of 5). 2 of 6 checks failed: "+missing(4)+"; "+missing(5)+".",
		"failed: The task reached its ceiling of 4 turns. 1 of 6 checks failed: "+missing(5)+".")
	if got := h.shown(t, id, slug); got != "The task reached its ceiling of 4 turns. 1 of 6 checks failed: "+missing(5)+"." {
		t.Errorf("the Backlog shows the failure as %q", got)
	}
	if !strings.Contains(task.Advice, "Advice: split") {
		t.Errorf("the advice is %q", task.Advice)
	}
}

func TestTheHostBuildsWhatTheTurnLeftUnbuilt(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{addLine("Hello notes")}},
		scripted.Reply{Text: "I changed the heading; it should work."})

	d := h.run(t, id)
	if d.Status != intent.IntentDone {
		t.Fatalf("the intent is %s (%q)", d.Status, d.StopReason)
	}
	task := h.task(t, id, headingSlug)
	wantTask(t, task, intent.TaskCompleted, 1)
	wantEnds(t, task, "completed: completed after the host built what the turn left unbuilt")
	if task.ReleaseID == "" || task.ExampleHashes[1] == "" {
		t.Errorf("the completed task keeps release %q and hashes %v", task.ReleaseID, task.ExampleHashes)
	}
	for _, r := range turnRequests(h, runID(id, headingSlug, 1)) {
		for _, m := range r.Messages {
			for _, c := range m.ToolCalls {
				if c.Name == "candidate_cycle" || c.Name == "candidate_build" {
					t.Fatalf("the turn built (%s): the host's build is not what was tested", c.Name)
				}
			}
		}
	}
}

func TestAFinishedTasksExampleIsHeld(t *testing.T) {
	aboutExample := example("The about page says About notes", "/about.html", "About notes")
	tests := []struct {
		name     string
		touch    scripted.Call
		sentence string
	}{
		{"removed", whole(headingC1, "delete", ""), "The example 0001-change-the-heading-c1, from a finished task, is gone."},
		{"changed", whole(headingC1, "overwrite", example("The home page says Hello", "/", "Hello")),
			"The example 0001-change-the-heading-c1, from a finished task, was changed."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t)
			id := h.plan(t, heading(), about())
			h.headingCompletes(id)
			h.model.On(scripted.RunID(runID(id, aboutSlug, 1)),
				scripted.Reply{ToolCalls: []scripted.Call{
					change("acceptance/0002-add-an-about-page-c1.json", aboutExample),
					change("site/about.html", "<!DOCTYPE html><title>About</title><h1>About notes</h1>"),
					tt.touch}},
				scripted.Reply{ToolCalls: []scripted.Call{cycle}},
				scripted.Reply{Text: "Done."})
			h.model.On(scripted.RunID(runID(id, aboutSlug, 2)),
				scripted.Reply{ToolCalls: []scripted.Call{cycle}},
				scripted.Reply{Text: "Every check passes."})
			h.adviceAnswers(scripted.Reply{Text: `{"diagnosis": "An earlier example was touched.", "advice": "retry", "note": "Put it back."}`})

			d := h.run(t, id)
			wantStopped(t, d, aboutSlug+" failed.")
			wantTask(t, h.task(t, id, headingSlug), intent.TaskCompleted, 1)
			task := h.task(t, id, aboutSlug)
			wantTask(t, task, intent.TaskFailed, 2)
			wantEnds(t, task,
				"in-queue: another attempt: "+tt.sentence,
				"failed: 2 attempts in this run did not complete the task. "+tt.sentence)
		})
	}
}

func TestTheBuilderAsksAndThePersonAnswers(t *testing.T) {
	const (
		first   = "Should the greeting replace the heading or sit under it?"
		second  = "Which words exactly: Hello notes, or Hello, notes?"
		third   = "Bold or not?"
		answer1 = "Under it, as a paragraph."
		answer2 = "Hello notes."
		refused = "You asked about this task twice already: decide with what you have."
	)
	ctx := context.Background()
	h := newHost(t)
	id := h.plan(t, heading(), about())
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)), scripted.Reply{ToolCalls: []scripted.Call{ask(first)}})
	h.model.On(scripted.RunID(runID(id, headingSlug, 2)), scripted.Reply{ToolCalls: []scripted.Call{ask(second)}})
	h.model.On(scripted.RunID(runID(id, headingSlug, 3)),
		scripted.Reply{ToolCalls: []scripted.Call{ask(third)}},
		scripted.Reply{ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes")),
			addLine("Hello notes")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	h.model.On(scripted.RunID(runID(id, aboutSlug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{
			change("acceptance/0002-add-an-about-page-c1.json", example("The about page says About notes", "/about.html", "About notes")),
			change("site/about.html", "<!DOCTYPE html><title>About</title><h1>About notes</h1>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})

	for n, q := range []struct{ question, answer string }{{first, answer1}, {second, answer2}} {
		d := h.run(t, id)
		wantStopped(t, d, headingSlug+" needs an answer")
		task := h.task(t, id, headingSlug)
		wantTask(t, task, intent.TaskNeedsAnswer, 0)
		if task.Question != q.question {
			t.Fatalf("question %d is %q", n+1, task.Question)
		}
		if err := h.exec.Start(ctx, id); err == nil || err.Error() != "0001-change-the-heading waits for an answer; answer its question first." {
			t.Fatalf("a run with the question unanswered: %v", err)
		}
		if err := h.exec.Answer(ctx, task.ID, "  "); err == nil || err.Error() != "Write an answer to the question first." {
			t.Fatalf("an empty answer: %v", err)
		}
		if err := h.exec.Answer(ctx, task.ID, q.answer); err != nil {
			t.Fatal(err)
		}
		if task = h.task(t, id, headingSlug); task.Status != intent.TaskInQueue || task.Question != "" || len(task.Answers) != n+1 {
			t.Fatalf("after the answer: %s, question %q, answers %+v", task.Status, task.Question, task.Answers)
		}
	}
	d := h.run(t, id)
	if d.Status != intent.IntentDone {
		t.Fatalf("the intent is %s (%q)", d.Status, d.StopReason)
	}
	task := h.task(t, id, headingSlug)
	wantTask(t, task, intent.TaskCompleted, 1)
	wantEnds(t, task,
		"needs-answer: the builder asked",
		"needs-answer: the builder asked",
		"completed: completed")

	// Each turn after an answer is given the answers so far.
	msg := message(t, h, runID(id, headingSlug, 2))
	if !strings.Contains(msg, "The person's answers to your questions:\n- "+first+" → "+answer1+"\n") {
		t.Errorf("the second turn's message does not carry the answer:\n%s", msg)
	}
	if msg := message(t, h, runID(id, headingSlug, 3)); !strings.Contains(msg, "- "+first+" → "+answer1+"\n- "+second+" → "+answer2+"\n") {
		t.Errorf("the third turn's message does not carry both answers:\n%s", msg)
	}
	// The third question is refused, and the turn goes on.
	reqs := turnRequests(h, runID(id, headingSlug, 3))
	if len(reqs) != 4 {
		t.Fatalf("the third turn made %d requests", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != "tool" || !strings.Contains(last.Content, `"ok":false`) || !strings.Contains(last.Content, refused) {
		t.Errorf("the third question was answered %s: %s", last.Role, last.Content)
	}
}

func TestAProviderErrorMidTurnIsNotAnAttempt(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading(), about())
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{Fault: scripted.Status500})

	d := h.run(t, id)
	wantStopped(t, d, "The AI provider returned an error while building 0001-change-the-heading. Nothing was judged. The launcher's log has the detail.")
	task := h.task(t, id, headingSlug)
	wantTask(t, task, intent.TaskInterrupted, 0)
	got := ends(task)
	if len(got) != 1 || !strings.HasPrefix(got[0], "interrupted: not an attempt: ") || strings.Contains(got[0], scripted.RawDetail) {
		t.Fatalf("the turn ended %q", got)
	}
	if got := h.shown(t, id, headingSlug); "interrupted: "+got != ends(task)[0] {
		t.Errorf("the Backlog shows the interruption as %q", got)
	}
	if n := len(adviceRequests(h)); n != 0 {
		t.Errorf("the advice was asked %d times", n)
	}
	wantUntouched(t, h, h.task(t, id, aboutSlug))
}

func TestTheIdleAndWallLimitsEndATurnAndCountIt(t *testing.T) {
	tests := []struct {
		name     string
		limits   ai.Limits
		slow     time.Duration
		sentence string
	}{
		{"idle", ai.Limits{Idle: 8 * time.Minute, Wall: time.Hour}, 9 * time.Minute, "The turn made no tool call for 8 minutes."},
		{"wall", ai.Limits{Idle: time.Hour, Wall: 20 * time.Minute}, 21 * time.Minute, "The turn ran out of time."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := timetest.NewClock(time.Now())
			h := newHost(t, withLimits(c, tt.limits))
			id := h.plan(t, heading())
			// The model takes longer than the limit to answer, each turn;
			// the cycle it asks for then is not run.
			for n := 1; n <= 2; n++ {
				h.model.On(scripted.RunID(runID(id, headingSlug, n)),
					scripted.Reply{ToolCalls: []scripted.Call{cycle}, Before: func() { c.Advance(tt.slow) }})
			}
			h.adviceAnswers(scripted.Reply{Text: `{"diagnosis": "The model was too slow.", "advice": "retry", "note": "Choose a faster model."}`})

			d := h.run(t, id)
			wantStopped(t, d, headingSlug+" failed.")
			task := h.task(t, id, headingSlug)
			wantTask(t, task, intent.TaskFailed, 2)
			// The application was never built: the turn is told both facts.
			reasons := "Nothing was built. The workspace did not change since the task began. " + tt.sentence
			wantEnds(t, task,
				"in-queue: another attempt: "+reasons,
				"failed: 2 attempts in this run did not complete the task. "+reasons)
		})
	}
}

func TestStopMidTurn(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading(), about())
	g := scripted.NewGate(t)
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Before: g.Hold, Fault: scripted.Status500})
	if err := h.exec.Start(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	g.Wait(t)
	if p, ok := h.exec.Progress(id); !ok || p.Slug != headingSlug || p.LastTool != "candidate.cycle" {
		t.Fatalf("the progress while the model thinks: %+v", p)
	}

	stopped := make(chan error, 1)
	go func() { stopped <- h.exec.Stop(id) }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Stop did not return while the model was still thinking")
	}
	g.Open()

	d := h.wait(t, id)
	wantStopped(t, d, "Stopped by the person.")
	task := h.task(t, id, headingSlug)
	wantTask(t, task, intent.TaskInterrupted, 0)
	wantEnds(t, task, "interrupted: Stopped by the person.")
	wantUntouched(t, h, h.task(t, id, aboutSlug))
	if n := len(adviceRequests(h)); n != 0 {
		t.Errorf("the advice was asked %d times", n)
	}
	o, err := h.cands.Observe(context.Background(), "site")
	if err != nil {
		t.Fatal(err)
	}
	if !o.PreviewRunning {
		t.Errorf("the preview was stopped: %s", o.PreviewNote)
	}
	if err := h.exec.Stop(id); err == nil || err.Error() != "Intent #1 is not running." {
		t.Errorf("a second Stop: %v", err)
	}
}

func TestARestartInterruptsTheTaskAndStopsTheIntent(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	id := h.plan(t, heading())
	g := scripted.NewGate(t)
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)), scripted.Reply{Before: g.Hold, Fault: scripted.Status500})
	if err := h.exec.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	g.Wait(t)

	// The launcher dies during the turn; the next one opens the same store.
	db, err := migrations.Open(h.db, migrations.Intents)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tasks, intents, err := intent.NewService(db, h.root, time.Now, intent.Collaborators{Journal: request.Journal{}}).Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tasks != 1 || intents != 1 {
		t.Fatalf("recovered %d tasks and %d intents", tasks, intents)
	}
	check := func() {
		t.Helper()
		d, err := h.backlog.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		wantStopped(t, d, "The launcher stopped.")
		task := h.task(t, id, headingSlug)
		wantTask(t, task, intent.TaskInterrupted, 0)
		wantEnds(t, task, "interrupted: The launcher stopped.")
	}
	check()

	// What was left of the old launcher ends without changing what the new
	// one decided.
	g.Open()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if running := len(h.exec.Running()) > 0; !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the old run never ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	check()
}

func TestStartRefusesWithASentence(t *testing.T) {
	ctx := context.Background()
	// queued is a submitted intent with the heading task moved through the
	// statuses given, as a run would have moved it.
	queued := func(t *testing.T, h *host, to ...intent.TaskStatus) (int64, int64) {
		t.Helper()
		id := h.plan(t, heading())
		task := h.task(t, id, headingSlug)
		if err := h.backlog.MoveIntent(ctx, id, intent.IntentRunning, "the owner pressed Run"); err != nil {
			t.Fatal(err)
		}
		for _, st := range append([]intent.TaskStatus{intent.TaskInQueue, intent.TaskInProgress}, to...) {
			m := intent.Move{Reason: "the tests moved it", Actor: intent.ActorExecutor}
			switch st {
			case intent.TaskInProgress:
				m.RunID = runID(id, headingSlug, 1)
			case intent.TaskNeedsAnswer:
				m.Question = "Which heading?"
			}
			if err := h.backlog.MoveTask(ctx, task.ID, st, m); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.backlog.MoveIntent(ctx, id, intent.IntentStopped, "the tests stopped it"); err != nil {
			t.Fatal(err)
		}
		return id, task.ID
	}
	tests := []struct {
		name     string
		setup    func(t *testing.T, h *host) int64
		sentence string
	}{
		{"a draft not submitted", func(t *testing.T, h *host) int64 {
			in, err := h.backlog.OpenDraft(ctx, "site", "Change the site.", intent.Analysis{Restated: []string{"Changes."}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.backlog.AddTask(ctx, in.ID, heading()); err != nil {
				t.Fatal(err)
			}
			return in.ID
		}, "The plan is still being written; it can run once the engineer submits it."},
		{"an open question", func(t *testing.T, h *host) int64 {
			id := h.plan(t, heading())
			// The engineer opens the plan again with a question for the person.
			if _, err := h.backlog.OpenDraft(ctx, "site", "", intent.Analysis{Restated: []string{"Changes."}, Questions: []string{"Which heading?"}}); err != nil {
				t.Fatal(err)
			}
			return id
		}, "The engineer's questions need answers before the plan can run."},
		{"a task waiting for an answer", func(t *testing.T, h *host) int64 {
			id, _ := queued(t, h, intent.TaskNeedsAnswer)
			return id
		}, "0001-change-the-heading waits for an answer; answer its question first."},
		{"nothing left to run", func(t *testing.T, h *host) int64 {
			// (A stopped intent whose every task completed runs, to be
			// finished and delivered: TestDoneAndItsDeliveryAreOneWrite.)
			id, _ := queued(t, h, intent.TaskFailed, intent.TaskRemoved)
			return id
		}, "Nothing is left to run in intent #1."},
		{"no model set up", func(t *testing.T, h *host) int64 {
			if err := h.providers.SetDefaultModel(""); err != nil {
				t.Fatal(err)
			}
			return h.plan(t, heading())
		}, "No model is set up for 0001-change-the-heading: choose the Settings model in Settings."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t)
			id := tt.setup(t, h)
			before, err := h.backlog.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			err = h.exec.Start(ctx, id)
			if err == nil || err.Error() != tt.sentence {
				t.Fatalf("Start: %v, want %q", err, tt.sentence)
			}
			after, err := h.backlog.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if after.Status != before.Status || after.Tasks[0].Status != before.Tasks[0].Status {
				t.Errorf("the refused Start moved the intent from %s to %s, its task from %s to %s",
					before.Status, after.Status, before.Tasks[0].Status, after.Tasks[0].Status)
			}
			if running := len(h.exec.Running()) > 0; running {
				t.Error("a run goes after the refusal")
			}
			if n := h.model.Count(); n != 0 {
				t.Errorf("the model was asked %d times", n)
			}
		})
	}

	t.Run("another run going", func(t *testing.T) {
		h := newHost(t)
		if _, err := h.apps.CreateFromTemplate(ctx, "blog", "Blog", "static"); err != nil {
			t.Fatal(err)
		}
		running := h.plan(t, heading())
		g := scripted.NewGate(t)
		h.model.On(scripted.RunID(runID(running, headingSlug, 1)), scripted.Reply{Before: g.Hold, Fault: scripted.Status500})
		if err := h.exec.Start(ctx, running); err != nil {
			t.Fatal(err)
		}
		g.Wait(t)

		sameApp := h.plan(t, marks("Greet", "Hello"))
		other, err := h.backlog.OpenDraft(ctx, "blog", "Change the blog.", intent.Analysis{Restated: []string{"Changes."}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.backlog.AddTask(ctx, other.ID, heading()); err != nil {
			t.Fatal(err)
		}
		if err := h.backlog.Submit(ctx, other.ID); err != nil {
			t.Fatal(err)
		}
		for _, id := range []int64{sameApp, other.ID} {
			err := h.exec.Start(ctx, id)
			var xe *refusal.Error
			if !errors.As(err, &xe) || xe.Code != refusal.Conflict || xe.Message != "Intent #1 is running; wait for it to end or stop it first." {
				t.Errorf("Start of intent %d while intent %d runs: %v", id, running, err)
			}
			if d, _ := h.backlog.Get(ctx, id); d.Status != intent.IntentDraft {
				t.Errorf("intent %d is %s", id, d.Status)
			}
		}
		if err := h.exec.Busy("site"); err == nil || err.Error() != "Intent #1 is running on site; stop it before changing the application by hand." {
			t.Errorf("the owner's write to site: %v", err)
		}
		if err := h.exec.Busy("blog"); err != nil {
			t.Errorf("the owner's write to blog: %v", err)
		}
		if err := h.exec.Stop(running); err != nil {
			t.Fatal(err)
		}
		g.Open()
	})
}
