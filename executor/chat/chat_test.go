package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"autoapp/cmd/autoapp/launcher"
	"autoapp/executor"
	"autoapp/executor/ai"
	"autoapp/executor/ai/provider"
	"autoapp/executor/ai/scripted"
	"autoapp/executor/candidate"
	"autoapp/executor/chat"
	"autoapp/executor/gate"
	"autoapp/executor/planner"
	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
	"autoapp/migrations"
)

const appID = "site"

// logBook keeps the messages logged at Info and above.
type logBook struct {
	mu   sync.Mutex
	msgs []string
}

func (b *logBook) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (b *logBook) Handle(_ context.Context, r slog.Record) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.msgs = append(b.msgs, r.Message)
	return nil
}
func (b *logBook) WithAttrs([]slog.Attr) slog.Handler { return b }
func (b *logBook) WithGroup(string) slog.Handler      { return b }

func (b *logBook) messages() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.msgs)
}

// host is the launcher's own services over a temporary root, with the
// scripted model as the Settings model scripted:planner and the static
// template's application.
type host struct {
	launcher   *launcher.Launcher
	db         *migrations.DB
	apps       *app.Service
	backlog    *intent.Service
	candidates *candidate.Service
	providers  *provider.Registry
	runs       *executor.Executor
	gate       *gate.Gate
	model      *scripted.Server
	chat       *chat.Service
	// log keeps what the launcher's services logged.
	log *logBook
}

// newHost boots the program's launcher over a fresh data folder.
func newHost(t *testing.T) *host {
	t.Helper()
	// The model first: it closes after the launcher, which stops the turns
	// and the run that ask it.
	model := scripted.New(t)
	model.Models("planner")
	logs := &logBook{}
	l, err := launcher.New(t.TempDir(), time.Now, slog.New(logs), launcher.Options{Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	h := &host{launcher: l, db: l.Intents, apps: l.Apps, backlog: l.Backlog, candidates: l.Candidates, providers: l.Providers,
		runs: l.Runs, gate: l.Gate, model: model, chat: l.Chats, log: logs}
	if err := h.providers.Save(provider.Provider{Name: "scripted", BaseURL: h.model.URL(), On: true}, false); err != nil {
		t.Fatal(err)
	}
	if err := h.providers.SetDefaultModel("scripted:planner"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.apps.CreateFromTemplate(context.Background(), appID, "Site", "static"); err != nil {
		t.Fatal(err)
	}
	return h
}

// running starts a run of a one-task intent of the application through
// the launcher's executor, as Run in the Backlog does, and returns its id
// once the builder's turn asks the model; the model holds the turn until
// the test ends.
func (h *host) running(t *testing.T) int64 {
	t.Helper()
	ctx := context.Background()
	in, err := h.backlog.OpenDraft(ctx, appID, "A timer.", intent.Analysis{Restated: []string{"A timer."}})
	if err != nil {
		t.Fatal(err)
	}
	task, err := h.backlog.AddTask(ctx, in.ID, plan.Task{Title: "Show the timer", Priority: "high", Labels: []string{"views"},
		EstimatedLines: 20, Risk: "normal", Reasoning: "low", Summary: "The timer.",
		Criteria: []plan.Criterion{{Text: "The home page shows 25:00"}}, NoFailurePath: "nothing to refuse"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.backlog.Submit(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	held := scripted.NewGate(t)
	h.model.On(scripted.RunID(fmt.Sprintf("intent-%d-%s-a1", in.ID, task.Slug)), scripted.Reply{Before: held.Hold, Fault: scripted.Status500})
	if err := h.runs.Start(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	held.Wait(t)
	return in.ID
}

// send starts a turn or fails the test.
func (h *host) send(t *testing.T, message string) chat.Turn {
	t.Helper()
	turn, err := h.chat.Send(context.Background(), appID, 0, message)
	if err != nil {
		t.Fatalf("send %q: %v", message, err)
	}
	return turn
}

// wait waits for the application's turn to end and returns the turn.
func (h *host) wait(t *testing.T, id int64) chat.Turn {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for h.chat.Running(appID) {
		if time.Now().After(deadline) {
			t.Fatal("the turn still runs")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return h.turn(t, id)
}

func (h *host) turn(t *testing.T, id int64) chat.Turn {
	t.Helper()
	turns, err := h.chat.Turns(context.Background(), appID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, turn := range turns {
		if turn.ID == id {
			return turn
		}
	}
	t.Fatalf("no turn %d", id)
	return chat.Turn{}
}

// chats are the chat completion requests the model got from chat turns,
// in order: a builder's turn of a run asks the same model.
func (h *host) chats() []scripted.Request {
	var out []scripted.Request
	for _, r := range h.model.Requests() {
		if r.Path == "/v1/chat/completions" && strings.HasPrefix(r.Header.Get(scripted.RunHeader), "chat-") {
			out = append(out, r)
		}
	}
	return out
}

// waitChats waits until the model got n chat completion requests.
func (h *host) waitChats(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(h.chats()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the model got %d requests, not %d", len(h.chats()), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// toolAnswer is a tool message as the model read it.
type toolAnswer struct {
	OK       bool              `json:"ok"`
	Result   json.RawMessage   `json:"result"`
	Problems []refusal.Problem `json:"problems"`
}

// answers are the tool answers in a request after its last assistant message.
func answers(t *testing.T, r scripted.Request) []toolAnswer {
	t.Helper()
	var out []toolAnswer
	for _, m := range r.Messages {
		switch m.Role {
		case "assistant":
			out = nil
		case "tool":
			var a toolAnswer
			if err := json.Unmarshal([]byte(m.Content), &a); err != nil {
				t.Fatalf("a tool message is not an answer: %q", m.Content)
			}
			out = append(out, a)
		}
	}
	return out
}

func call(name string, input any) scripted.Call {
	b, err := json.Marshal(input)
	if err != nil {
		panic(err)
	}
	return scripted.Call{Name: strings.ReplaceAll(name, ".", "_"), Args: string(b)}
}

func calls(cs ...scripted.Call) scripted.Reply { return scripted.Reply{ToolCalls: cs} }

func task(title string, edit func(m map[string]any)) scripted.Call {
	m := map[string]any{
		"title": title, "priority": "high", "labels": []string{"views"}, "blocked_by": []string{}, "estimated_lines": 50,
		"locks": []string{}, "risk": "normal", "stub": false, "reasoning": "low",
		"summary":  "The home page shows the pomodoro timer.",
		"criteria": []map[string]any{{"text": "The home page shows 25:00 and a Start button"}}, "no_failure_path": "a static page refuses nothing",
	}
	if edit != nil {
		edit(m)
	}
	return call("intent.task", m)
}

func TestARequestWithQuestionsBecomesASubmittedPlan(t *testing.T) {
	h := newHost(t)
	ctx := context.Background()
	typed := "a pomodoro timer page: 25-minute work, 5-minute break,\nstart, pause and reset — no network.  "

	// The first turn reads the application, opens the intent with two
	// questions, tries to go on regardless, and asks.
	h.model.On(scripted.RunID("chat-site-1"),
		calls(call("spec.read", map[string]string{"topic": "application"})),
		calls(call("intent.open", map[string]any{
			"restated":  "A page with a 25-minute work timer and a 5-minute break timer.\nStart, pause and reset; nothing over the network.",
			"fits":      []string{"The static site's home page"},
			"questions": []string{"Should the timer ring when a period ends?", "Should it count the cycles done?"},
		})),
		calls(task("Show the work timer", nil), call("intent.submit", map[string]any{})),
		scripted.Reply{Text: "Two questions first: should the timer ring when a period ends, and should it count the cycles done?"})
	first := h.send(t, typed)
	if first.Status != chat.StatusRunning || first.Message != typed || first.RunID != "chat-site-1" {
		t.Fatalf("the turn as sent: %+v", first)
	}
	first = h.wait(t, first.ID)
	if first.Status != chat.StatusAnswered || !strings.HasPrefix(first.Reply, "Two questions first") || first.Sentence != "" || first.EndedAt.IsZero() {
		t.Fatalf("the first turn: %+v", first)
	}
	wantLines := []string{
		"spec.read: application",
		"intent.open: the analysis has 2 open questions",
		"intent.task: refused: " + planner.AnswerFirst,
		"intent.submit: refused: " + planner.AnswerFirst,
	}
	if !slices.Equal(first.Lines, wantLines) {
		t.Fatalf("lines:\n%q\nwant\n%q", first.Lines, wantLines)
	}
	// The model read the refusals back.
	for i, a := range answers(t, h.chats()[3]) {
		if a.OK || len(a.Problems) != 1 || a.Problems[0].Message != planner.AnswerFirst {
			t.Fatalf("answer %d to the calls made while questions were open: %+v", i, a)
		}
	}
	list, err := h.backlog.List(ctx, appID)
	if err != nil || len(list) != 1 {
		t.Fatalf("intents: %v %v", list, err)
	}
	id := list[0].ID
	d, _ := h.backlog.Get(ctx, id)
	if d.Status != intent.IntentDraft || len(d.Questions) != 2 || len(d.Tasks) != 0 || d.Request != typed {
		t.Fatalf("after the questions: %+v, %d tasks", d.Intent, len(d.Tasks))
	}

	// The person's answer is the next turn; the model folds it in and plans.
	answer := "No sound. Don't count cycles."
	h.model.On(scripted.RunID("chat-site-2"),
		calls(call("intent.open", map[string]any{
			"restated":    "A page with a 25-minute work timer and a 5-minute break timer.",
			"assumptions": []string{"No sound when a period ends.", "No cycle count."},
			"questions":   []string{},
		})),
		calls(task("Show the work timer", nil)),
		// No failure criterion and no no_failure_path: a plan problem.
		calls(task("Add start pause and reset", func(m map[string]any) {
			delete(m, "no_failure_path")
			m["blocked_by"] = []string{"0001-show-the-work-timer"}
		})),
		calls(task("Add start pause and reset", func(m map[string]any) {
			m["blocked_by"] = []string{"0001-show-the-work-timer"}
			m["criteria"] = []map[string]any{{"text": "Start counts down from 25:00"}, {"text": "Reset shows 25:00 again"}}
		})),
		calls(call("intent.submit", map[string]any{})),
		scripted.Reply{Text: "The plan is in the Backlog: two tasks for you to review."})
	second := h.send(t, answer)
	second = h.wait(t, second.ID)
	if second.Status != chat.StatusAnswered || !strings.Contains(second.Reply, "plan is in the Backlog") {
		t.Fatalf("the second turn: %+v", second)
	}
	wantLines = []string{
		"intent.open: the analysis has no open questions",
		"intent.task: 0001-show-the-work-timer proposed (quick)",
		"intent.task: refused: criteria: add a failure criterion (failure: true) naming the route that refuses and what the person is told, or say in no_failure_path why nothing can go wrong",
		"intent.task: 0002-add-start-pause-and-reset proposed (quick)",
		fmt.Sprintf("intent.submit: intent %d submitted with 2 tasks", id),
	}
	if !slices.Equal(second.Lines, wantLines) {
		t.Fatalf("lines:\n%q\nwant\n%q", second.Lines, wantLines)
	}

	d, _ = h.backlog.Get(ctx, id)
	if d.Status != intent.IntentDraft || d.BeingWritten() || len(d.Questions) != 0 || len(d.Tasks) != 2 {
		t.Fatalf("after the plan: %+v, %d tasks", d.Intent, len(d.Tasks))
	}
	if d.Request != typed {
		t.Fatalf("the request is %q, not the person's message as typed", d.Request)
	}
	if !slices.Equal(d.Assumptions, []string{"No sound when a period ends.", "No cycle count."}) {
		t.Fatalf("the answers were not folded in: %+v", d.Analysis)
	}

	// The plan problem came back to the model field-named, and nothing was stored for it.
	reqs := h.chats()
	refusedAt := 4 + 3 // the first turn's four requests, then the second turn's third answer
	a := answers(t, reqs[refusedAt])
	if len(a) != 1 || a[0].OK || len(a[0].Problems) != 1 || a[0].Problems[0].Field != "criteria" {
		t.Fatalf("the refused task's answer: %+v", a)
	}

	// The second turn was given the conversation so far, the intent
	// document with the open questions, the instructions and the tools.
	opening := reqs[4]
	if opening.Messages[0].Role != "system" || opening.Messages[0].Content != planner.Instructions {
		t.Fatal("the turn's system message is not the planner's instructions")
	}
	var doc, history []string
	for _, m := range opening.Messages[1:] {
		switch {
		case m.Role == "user" && strings.HasPrefix(m.Content, ai.DocumentsPreamble):
			doc = append(doc, m.Content)
		default:
			history = append(history, m.Role+": "+m.Content)
		}
	}
	if len(doc) != 1 || !strings.Contains(doc[0], `ref="intent:site"`) || !strings.Contains(doc[0], "Should the timer ring when a period ends?") {
		t.Fatalf("the intent document: %q", doc)
	}
	wantHistory := []string{"user: " + typed, "assistant: " + first.Reply, "user: " + answer}
	if !slices.Equal(history, wantHistory) {
		t.Fatalf("history:\n%q\nwant\n%q", history, wantHistory)
	}
	for _, name := range []string{"spec_read", "intent_open", "intent_task", "intent_submit", "source_list", "source_read", "source_search"} {
		if !slices.Contains(opening.ToolNames(), name) {
			t.Errorf("the turn was not offered %s: %v", name, opening.ToolNames())
		}
	}

	// One log line per accepted call, in the seed's words.
	var logged []string
	for _, m := range h.log.messages() {
		if strings.HasPrefix(m, "intent ") || strings.HasPrefix(m, "task ") {
			logged = append(logged, m)
		}
	}
	wantLog := []string{
		fmt.Sprintf("intent %d opened for site", id),
		fmt.Sprintf("intent %d opened for site", id),
		"task 0001-show-the-work-timer proposed (quick)",
		"task 0002-add-start-pause-and-reset proposed (quick)",
		fmt.Sprintf("intent %d submitted with 2 tasks", id),
	}
	if !slices.Equal(logged, wantLog) {
		t.Fatalf("log lines:\n%q\nwant\n%q", logged, wantLog)
	}

	var usage int
	// Both turns wrote the plan: they are planning turns in the usage.
	if err := h.db.Read.Get(&usage, `SELECT count(*) FROM usage WHERE kind = 'planning' AND app_id = ?`, appID); err != nil || usage != 2 {
		t.Fatalf("%d planning usage rows (%v)", usage, err)
	}
	turns, err := h.chat.Turns(ctx, appID, 0)
	if err != nil || len(turns) != 2 || turns[0].ID != first.ID || turns[1].ID != second.ID {
		t.Fatalf("turns oldest first: %+v %v", turns, err)
	}
	if last, _ := h.chat.Turns(ctx, appID, 1); len(last) != 1 || last[0].ID != second.ID {
		t.Fatalf("the last turn: %+v", last)
	}
}

func TestATurnThatPlannedCannotEdit(t *testing.T) {
	h := newHost(t)
	edit := call("source.edit", map[string]any{"path": "site/index.html", "hunks": []hunk{{"<h1>A new site</h1>", "<h1>Pomodoro</h1>"}}})

	h.model.On(scripted.RunID("chat-site-1"),
		calls(call("intent.open", map[string]any{"restated": "A timer page."})),
		calls(task("Show the work timer", nil)),
		calls(edit),
		scripted.Reply{Text: "Planned."})
	turn := h.wait(t, h.send(t, "a pomodoro timer page").ID)
	a := answers(t, h.chats()[3])
	if len(a) != 1 || a[0].OK || a[0].Problems[0].Message != planner.PlannedRefusal {
		t.Fatalf("the edit's answer: %+v", a)
	}
	if h.gate.Waiting() || strings.Contains(h.file(t, "site/index.html"), "Pomodoro") {
		t.Fatal("the edit was asked or ran in a turn that planned")
	}
	if last := turn.Lines[len(turn.Lines)-1]; last != "source.edit: refused: "+planner.PlannedRefusal {
		t.Fatalf("the edit's line: %q", last)
	}

	// The next turn did not plan, so its edit is asked and, approved, runs.
	h.model.On(scripted.RunID("chat-site-2"), calls(edit), scripted.Reply{Text: "Edited."})
	second := h.send(t, "change the heading")
	h.decide(t, "Edit site/index.html (1 hunk)?", true)
	turn = h.wait(t, second.ID)
	if !strings.Contains(h.file(t, "site/index.html"), "<h1>Pomodoro</h1>") || turn.Lines[0] != "source.edit: done" {
		t.Fatalf("the next turn's edit: lines %q", turn.Lines)
	}
}

func TestASecondSendWhileATurnRunsIsRefused(t *testing.T) {
	h := newHost(t)
	gate := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(open) // before the scripted server closes: it waits for its requests
	h.model.On(scripted.RunID("chat-site-1"), scripted.Reply{Text: "Hello.", Before: func() { <-gate }})
	first := h.send(t, "hello")
	h.waitChats(t, 1)

	_, err := h.chat.Send(context.Background(), appID, 0, "are you there?")
	var ce *refusal.Error
	if !errors.As(err, &ce) || ce.Code != refusal.Conflict || ce.Message != chat.BusySentence {
		t.Fatalf("a second send: %v", err)
	}
	if !h.chat.Running(appID) {
		t.Fatal("the turn does not run")
	}
	open()
	if got := h.wait(t, first.ID); got.Status != chat.StatusAnswered || got.Reply != "Hello." {
		t.Fatalf("the first turn: %+v", got)
	}
	if turns, _ := h.chat.Turns(context.Background(), appID, 0); len(turns) != 1 {
		t.Fatalf("the refused send wrote a row: %+v", turns)
	}

	h.model.On(scripted.RunID("chat-site-2"), scripted.Reply{Text: "Yes."})
	if got := h.wait(t, h.send(t, "are you there?").ID); got.Reply != "Yes." {
		t.Fatalf("the next turn: %+v", got)
	}
}

func TestAProviderFaultFailsTheTurnWithASentence(t *testing.T) {
	h := newHost(t)
	h.model.On(scripted.RunID("chat-site-1"), scripted.Reply{Fault: scripted.Status500})
	turn := h.wait(t, h.send(t, "hello").ID)
	if turn.Status != chat.StatusFailed || turn.Sentence != ai.FailedSentence(500) || turn.Reply != "" {
		t.Fatalf("the turn: %+v", turn)
	}
	b, _ := json.Marshal(turn)
	if strings.Contains(string(b), scripted.RawDetail) {
		t.Fatalf("the provider's raw text reached the turn: %s", b)
	}
}

func TestSendRefusesWithASentence(t *testing.T) {
	h := newHost(t)
	for _, c := range []struct {
		name, app, message, want string
	}{
		{"an empty message", appID, " \n ", chat.EmptySentence},
		{"an unknown application", "nope", "hello", `There is no application "nope".`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := h.chat.Send(context.Background(), c.app, 0, c.message)
			var ce *refusal.Error
			if !errors.As(err, &ce) || ce.Message != c.want {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if h.chat.Running(c.app) {
				t.Fatal("a refused send left a turn running")
			}
		})
	}

	t.Run("no Settings model", func(t *testing.T) {
		h := newHost(t)
		// The owner cleared the Settings model.
		if err := h.providers.SetDefaultModel(""); err != nil {
			t.Fatal(err)
		}
		_, err := h.chat.Send(context.Background(), appID, 0, "hello")
		var ce *refusal.Error
		if !errors.As(err, &ce) || ce.Message != chat.NoModelSentence {
			t.Fatalf("got %v", err)
		}
		if h.chat.Running(appID) {
			t.Fatal("a refused send left a turn running")
		}
	})
}

func TestStopShutdownAndRecoverMarkTurnsStopped(t *testing.T) {
	ctx := context.Background()

	t.Run("stop", func(t *testing.T) {
		h := newHost(t)
		h.model.On(scripted.RunID("chat-site-1"), scripted.Reply{Fault: scripted.Timeout})
		turn := h.send(t, "hello")
		h.waitChats(t, 1)
		h.chat.Stop(appID)
		if got := h.turn(t, turn.ID); got.Status != chat.StatusStopped || got.Sentence != chat.StoppedByPerson || h.chat.Running(appID) {
			t.Fatalf("after Stop: %+v", got)
		}
	})

	t.Run("shutdown", func(t *testing.T) {
		h := newHost(t)
		h.model.On(scripted.RunID("chat-site-1"), scripted.Reply{Fault: scripted.Timeout})
		turn := h.send(t, "hello")
		h.waitChats(t, 1)
		h.chat.Shutdown()
		if got := h.turn(t, turn.ID); got.Status != chat.StatusStopped || got.Sentence != chat.LauncherStopped {
			t.Fatalf("after Shutdown: %+v", got)
		}
		_, err := h.chat.Send(ctx, appID, 0, "hello again")
		var ce *refusal.Error
		if !errors.As(err, &ce) || ce.Message != chat.ClosedSentence {
			t.Fatalf("a send after Shutdown: %v", err)
		}
	})

	t.Run("recover", func(t *testing.T) {
		h := newHost(t)
		// A row a launcher left running when it was killed.
		if _, err := h.db.Write.Exec(`INSERT INTO chat_turns (app_id, request_id, run_id, message, status, started_at)
			VALUES (?, 7, 'chat-site-1', 'hello', 'running', 1)`, appID); err != nil {
			t.Fatal(err)
		}
		_, err := h.chat.Send(ctx, appID, 0, "hello again")
		var ce *refusal.Error
		if !errors.As(err, &ce) || ce.Message != chat.BusySentence {
			t.Fatalf("a send beside a row left running: %v", err)
		}
		n, err := h.chat.Recover(ctx)
		if err != nil || n != 1 {
			t.Fatalf("recover: %d, %v", n, err)
		}
		got := h.turn(t, 1)
		if got.Status != chat.StatusStopped || got.Sentence != chat.LauncherStopped || got.EndedAt.IsZero() || got.RequestID != 7 {
			t.Fatalf("after Recover: %+v", got)
		}
		h.model.On(scripted.RunID("chat-site-2"), scripted.Reply{Text: "Hello."})
		if got := h.wait(t, h.send(t, "hello again").ID); got.Status != chat.StatusAnswered {
			t.Fatalf("the next turn: %+v", got)
		}
	})
}

// TestATurnWhosePlanWasRefusedStillPlannedAndCannotBuild: the turn's only
// intent.task was refused by the schema; it still planned, so a build
// after it is refused as such, never asked of the person.
func TestATurnWhosePlanWasRefusedStillPlannedAndCannotBuild(t *testing.T) {
	h := newHost(t)
	h.model.On(scripted.RunID("chat-site-1"),
		calls(call("intent.task", map[string]any{"title": ""})),
		calls(call("candidate.build", map[string]any{})),
		scripted.Reply{Text: "Planned."})
	h.wait(t, h.send(t, "a pomodoro timer page").ID)
	a := answers(t, h.chats()[2])
	if len(a) != 1 || a[0].OK || len(a[0].Problems) == 0 || a[0].Problems[0].Message != planner.PlannedRefusal {
		t.Fatalf("the build's answer: %+v", a)
	}
	if h.gate.Waiting() {
		t.Fatal("the build was asked of the person in a turn that planned")
	}
}
