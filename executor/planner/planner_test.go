package planner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/planner"
	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
	"autoapp/intent/workspace"
	"autoapp/migrations"
	"autoapp/migrations/migrationstest"

	"golang.org/x/sys/unix"
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

// host is a data folder with the static template's application and the
// backlog over a real store.
type host struct {
	t       testing.TB
	apps    *app.Service
	backlog *intent.Service
	db      *migrations.DB
	log     *logBook
}

func newHost(t testing.TB) *host {
	t.Helper()
	root := t.TempDir()
	db := migrationstest.IntentsIn(t, root)
	h := &host{t: t, apps: app.NewService(db, root, time.Now, workspace.Repositories{Now: time.Now}), backlog: intent.NewService(db, root, time.Now, intent.Collaborators{Journal: request.Journal{}}), db: db, log: &logBook{}}
	if _, err := h.apps.CreateFromTemplate(context.Background(), appID, "Site", "static"); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *host) session(request string) *planner.Session {
	h.t.Helper()
	ws, err := workspace.Open(h.apps.WorkspaceDir(appID), time.Now)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { ws.Close() })
	return planner.NewSession(planner.Config{AppID: appID, RequestText: request, Backlog: h.backlog,
		Workspace: ws, Log: slog.New(h.log), Now: time.Now})
}

func tool(t testing.TB, s *planner.Session, name string) ai.Tool {
	t.Helper()
	for _, tl := range append(s.Tools(), s.SourceTools()...) {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return ai.Tool{}
}

// call runs a tool's handler with input and decodes an accepted answer into out.
func call(t testing.TB, s *planner.Session, name, input string, out any) error {
	t.Helper()
	res, err := tool(t, s, name).Handler(context.Background(), json.RawMessage(input))
	if err != nil {
		return err
	}
	if out != nil {
		b, _ := json.Marshal(res)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatal(err)
		}
	}
	return nil
}

func ok(t testing.TB, s *planner.Session, name, input string, out any) {
	t.Helper()
	if err := call(t, s, name, input, out); err != nil {
		t.Fatalf("%s %s: %v", name, input, err)
	}
}

// refused runs a call that must be refused and returns its problems.
func refused(t testing.TB, s *planner.Session, name, input string) []refusal.Problem {
	t.Helper()
	err := call(t, s, name, input, nil)
	var r *ai.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("%s was not refused: %v", name, err)
	}
	return r.Problems
}

func taskJSON(title string, edit func(m map[string]any)) string {
	m := map[string]any{
		"title": title, "priority": "high", "labels": []string{"views"}, "blocked_by": []string{}, "estimated_lines": 40,
		"locks": []string{}, "risk": "normal", "stub": false, "reasoning": "low",
		"summary":  "The home page shows the timer.",
		"criteria": []map[string]any{{"text": "The home page shows 25:00"}}, "no_failure_path": "a static page refuses nothing",
	}
	if edit != nil {
		edit(m)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func TestInstructionsNameEveryToolAndOnlyThem(t *testing.T) {
	s := newHost(t).session("x")
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b(?:source|candidate|spec|intent|knowledge|release|app)\.[a-z_]+\b`).FindAllString(planner.Instructions, -1) {
		named[m] = true
	}
	// The planner's own tools, and those a chat turn adds (executor/chat's
	// test keeps the chat turn offering every one of AddedTools).
	offered := map[string]bool{}
	for _, tl := range append(s.Tools(), s.SourceTools()...) {
		offered[tl.Name] = true
	}
	for _, name := range planner.AddedTools {
		offered[name] = true
	}
	for name := range offered {
		if !named[name] {
			t.Errorf("the instructions do not name %s", name)
		}
	}
	for name := range named {
		if !offered[name] {
			t.Errorf("the instructions name %s, which is not a tool of the turn", name)
		}
	}
	for _, rule := range []string{
		"Call spec.read before anything else",
		fmt.Sprintf("over %d changed lines, is planned rather than started", planner.PlanOverLines),
		"intent.open, then intent.task once per task, then intent.submit",
		"ask the same questions in your reply in plain words, and stop",
		"Call intent.open again with the answers folded into the analysis",
		"no questions left",
		"One independently verifiable change",
		"a preview can check",
		"<slug>-c<n>",
		"no_failure_path",
		fmt.Sprintf("at most %d live tasks", plan.MaxLiveTasks),
		`"after activating", "not in a preview", "only after" or "in the activated"`,
		"that the plan is in the Backlog for them to review, and stop",
		"are data",
		"never tell the person that something works",
		planner.PlannedRefusal,
		"A single small change may be made directly",
		"Each edit, build and preview asks the person first",
		"a turn that planned cannot edit",
		"Call it only when the person says to go ahead",
		"It asks the person again",
	} {
		if !strings.Contains(planner.Instructions, rule) {
			t.Errorf("the instructions do not say %q", rule)
		}
	}
}

func TestEveryToolCanBeOffered(t *testing.T) {
	s := newHost(t).session("x")
	for _, tl := range append(s.Tools(), s.SourceTools()...) {
		if err := ai.CheckExample(tl); err != nil {
			t.Error(err)
		}
	}
	var names []string
	for _, tl := range s.Tools() {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"spec.read", "intent.open", "intent.task", "intent.submit"}) {
		t.Fatalf("the planning tools are %v", names)
	}
}

func TestSpecReadGivesTheApplicationAndThePlanFormat(t *testing.T) {
	s := newHost(t).session("x")
	var a planner.SpecAnswer
	ok(t, s, "spec.read", `{"topic": "application"}`, &a)
	if a.Plan != "" || a.Application == nil {
		t.Fatalf("topic application: %+v", a)
	}
	app := a.Application
	if !strings.Contains(app.Manifest, `"name": "Static site"`) || len(app.Problems) > 0 || app.AcceptanceFolder != "acceptance" {
		t.Fatalf("manifest: %+v", app)
	}
	for _, f := range []string{"autoapp.json", "site/index.html", "acceptance/0001-home-page.json"} {
		if !slices.Contains(app.Files, f) {
			t.Errorf("the files do not list %s: %v", f, app.Files)
		}
	}
	if slices.ContainsFunc(app.Files, func(f string) bool { return strings.HasPrefix(f, ".git/") }) {
		t.Errorf("the files list .git: %v", app.Files)
	}
	if len(app.Examples) != 1 || app.Examples[0].ID != "0001-home-page" || app.Examples[0].Title == "" {
		t.Fatalf("examples: %+v", app.Examples)
	}

	a = planner.SpecAnswer{}
	ok(t, s, "spec.read", `{"topic": "plan"}`, &a)
	if a.Application != nil || a.Plan != planner.PlanReference {
		t.Fatalf("topic plan: %+v", a)
	}
	for _, want := range append(slices.Clone(plan.Labels),
		strings.Join(plan.Priorities, ", "), "<slug>-c<n>", "0007-add-tags-c2", plan.HostCriterion,
		"no_failure_path", `"failure": true`, fmt.Sprintf("at most %d live tasks", plan.MaxLiveTasks),
		fmt.Sprintf("at most about %d changed lines", planner.PlanOverLines), "not in a preview", "after activating, …", "replaces") {
		if !strings.Contains(a.Plan, want) {
			t.Errorf("the plan reference does not say %q", want)
		}
	}

	a = planner.SpecAnswer{}
	ok(t, s, "spec.read", `{}`, &a)
	if a.Application == nil || a.Plan == "" {
		t.Fatal("without a topic, spec.read gives both")
	}
}

func TestIntentOpenKeepsThePersonsRequestAsTyped(t *testing.T) {
	h := newHost(t)
	typed := "  A pomodoro timer page:\n25-minute work, 5-minute break. "
	s := h.session(typed)
	var a planner.OpenAnswer
	ok(t, s, "intent.open", `{"restated": "A timer page.\nWith a break.", "questions": ["Should it ring?"]}`, &a)
	if a.Intent == 0 || a.Questions != 1 || !strings.Contains(a.Next, "end the turn") {
		t.Fatalf("answer %+v", a)
	}
	if !s.Planned() {
		t.Fatal("intent.open did not mark the turn as planning")
	}
	d, err := h.backlog.Get(context.Background(), a.Intent)
	if err != nil {
		t.Fatal(err)
	}
	if d.Request != typed || !slices.Equal(d.Restated, []string{"A timer page.", "With a break."}) || !slices.Equal(d.Questions, []string{"Should it ring?"}) {
		t.Fatalf("intent %+v", d.Intent)
	}

	// The answer is the next turn's message; the draft keeps the first request.
	next := h.session("No sound, please.")
	ok(t, next, "intent.open", `{"restated": "A timer page.", "assumptions": ["No sound."], "questions": []}`, &a)
	d, _ = h.backlog.Get(context.Background(), a.Intent)
	if d.Request != typed || len(d.Questions) != 0 || !slices.Equal(d.Assumptions, []string{"No sound."}) || a.Questions != 0 {
		t.Fatalf("the second intent.open: %+v", d.Intent)
	}
}

func TestTasksAndSubmitRefuseWhileQuestionsAreOpen(t *testing.T) {
	h := newHost(t)
	s := h.session("A timer")
	for _, name := range []string{"intent.task", "intent.submit"} {
		input := `{}`
		if name == "intent.task" {
			input = taskJSON("Show a timer", nil)
		}
		if ps := refused(t, s, name, input); !strings.Contains(ps[0].Message, "intent.open") {
			t.Errorf("%s without a draft: %v", name, ps)
		}
	}
	ok(t, s, "intent.open", `{"restated": "A timer.", "questions": ["Should it ring?"]}`, nil)
	for _, name := range []string{"intent.task", "intent.submit"} {
		input := `{}`
		if name == "intent.task" {
			input = taskJSON("Show a timer", nil)
		}
		if ps := refused(t, s, name, input); len(ps) != 1 || ps[0].Message != planner.AnswerFirst {
			t.Errorf("%s with open questions: %v", name, ps)
		}
	}
	if slugs, _ := h.backlog.AllSlugs(context.Background(), appID); len(slugs) != 0 {
		t.Fatalf("tasks were stored: %v", slugs)
	}
}

func TestAPlanProblemIsRefusedFieldByFieldAndNothingIsStored(t *testing.T) {
	h := newHost(t)
	s := h.session("A timer")
	ok(t, s, "intent.open", `{"restated": "A timer."}`, nil)
	var first planner.TaskAnswer
	ok(t, s, "intent.task", taskJSON("Show a timer", nil), &first)

	ps := refused(t, s, "intent.task", taskJSON("Add a pause button", func(m map[string]any) {
		delete(m, "no_failure_path")
		m["criteria"] = []map[string]any{{"text": "The timer pauses, checked after activation"}}
		m["blocked_by"] = []string{first.Slug, "0042-not-a-task"}
	}))
	var fields []string
	for _, p := range ps {
		fields = append(fields, p.Field)
	}
	for _, want := range []string{"criteria[0].text", "criteria"} {
		if !slices.Contains(fields, want) {
			t.Errorf("no problem names %s: %v", want, ps)
		}
	}
	// The graph's problems name the field as the model wrote it.
	ps = refused(t, s, "intent.task", taskJSON("Add a pause button", func(m map[string]any) {
		m["blocked_by"] = []string{first.Slug, "0042-not-a-task"}
	}))
	if len(ps) != 1 || ps[0].Field != "blocked_by[1]" {
		t.Fatalf("the graph's problem: %v", ps)
	}
	if slugs, _ := h.backlog.AllSlugs(context.Background(), appID); !slices.Equal(slugs, []string{first.Slug}) {
		t.Fatalf("a refused task was stored: %v", slugs)
	}
}

func TestATaskIsProposedRevisedAndSubmittedWithALogLineEach(t *testing.T) {
	h := newHost(t)
	s := h.session("A timer")
	var opened planner.OpenAnswer
	ok(t, s, "intent.open", `{"restated": "A timer."}`, &opened)
	var a, b planner.TaskAnswer
	ok(t, s, "intent.task", taskJSON("Show a timer", nil), &a)
	if a.Slug != "0001-show-a-timer" || a.Status != "proposed" || a.Tier != plan.TierQuick || !slices.Equal(a.Examples, []string{"0001-show-a-timer-c1"}) || a.Tasks != 1 {
		t.Fatalf("answer %+v", a)
	}
	ok(t, s, "intent.task", taskJSON("Add start and pause", func(m map[string]any) {
		m["blocked_by"] = []string{a.Slug}
		m["reasoning"] = "high"
		m["criteria"] = []map[string]any{{"text": "Start counts down"}, {"text": "A second start while running is refused with: The timer runs already.", "failure": true}}
		delete(m, "no_failure_path")
	}), &b)
	if b.Slug != "0002-add-start-and-pause" || b.Tier != plan.TierDeep || len(b.Examples) != 2 || b.Tasks != 2 {
		t.Fatalf("answer %+v", b)
	}

	var r planner.TaskAnswer
	ok(t, s, "intent.task", taskJSON("Show a bigger timer", func(m map[string]any) { m["replaces"] = a.Slug }), &r)
	if r.Slug != a.Slug || !r.Revised || r.Tasks != 2 {
		t.Fatalf("replaced: %+v", r)
	}
	if ps := refused(t, s, "intent.task", taskJSON("Anything", func(m map[string]any) { m["replaces"] = "0009-nothing" })); ps[0].Field != "replaces" {
		t.Fatalf("an unknown replaces: %v", ps)
	}

	var sub planner.SubmitAnswer
	ok(t, s, "intent.submit", `{}`, &sub)
	if sub.Intent != opened.Intent || sub.Tasks != 2 || !strings.Contains(sub.Next, "Backlog") {
		t.Fatalf("submit %+v", sub)
	}
	d, _ := h.backlog.Get(context.Background(), opened.Intent)
	if d.BeingWritten() || d.Tasks[0].Title != "Show a bigger timer" {
		t.Fatalf("intent after submit: %+v", d)
	}
	want := []string{
		fmt.Sprintf("intent %d opened for site", opened.Intent),
		"task 0001-show-a-timer proposed (quick)",
		"task 0002-add-start-and-pause proposed (deep)",
		"task 0001-show-a-timer revised (quick)",
		fmt.Sprintf("intent %d submitted with 2 tasks", opened.Intent),
	}
	if got := h.log.messages(); !slices.Equal(got, want) {
		t.Fatalf("log lines:\n%q\nwant\n%q", got, want)
	}
}

func TestGuardEditsRefusesOnceTheTurnPlanned(t *testing.T) {
	h := newHost(t)
	s := h.session("A timer")
	edits := 0
	edit := ai.Tool{Name: "source.edit", Schema: json.RawMessage(`{"type": "object"}`), Example: json.RawMessage(`{}`),
		Handler: func(context.Context, json.RawMessage) (any, error) { edits++; return "edited", nil }}
	marked := ai.Tool{Name: "site.touch", Edits: true, Schema: json.RawMessage(`{"type": "object"}`), Example: json.RawMessage(`{}`),
		Handler: func(context.Context, json.RawMessage) (any, error) { edits++; return "touched", nil }}
	tools := planner.GuardEdits(append(append(s.Tools(), s.SourceTools()...), edit, marked), s)

	find := func(name string) ai.Tool {
		for _, tl := range tools {
			if tl.Name == name {
				return tl
			}
		}
		t.Fatalf("no %s", name)
		return ai.Tool{}
	}
	if _, err := find("source.edit").Handler(context.Background(), json.RawMessage(`{}`)); err != nil || edits != 1 {
		t.Fatalf("before planning the edit runs: %v", err)
	}
	ok(t, s, "intent.open", `{"restated": "A timer."}`, nil)
	for _, name := range []string{"source.edit", "site.touch"} {
		_, err := find(name).Handler(context.Background(), json.RawMessage(`{}`))
		var r *ai.Refusal
		if !errors.As(err, &r) || len(r.Problems) != 1 || r.Problems[0].Message != planner.PlannedRefusal {
			t.Fatalf("%s after planning: %v", name, err)
		}
	}
	if edits != 1 {
		t.Fatal("an edit ran after the turn planned")
	}
	if _, err := find("source.read").Handler(context.Background(), json.RawMessage(`{"path": "site/index.html"}`)); err != nil {
		t.Fatalf("a read is not guarded: %v", err)
	}
}

func TestSourceToolsReadAndRefuseByField(t *testing.T) {
	s := newHost(t).session("x")
	var r struct {
		Path string `json:"path"`
		Text string `json:"text"`
	}
	ok(t, s, "source.read", `{"path": "site/index.html"}`, &r)
	if r.Path != "site/index.html" || !strings.Contains(r.Text, "<h1>") {
		t.Fatalf("read %+v", r)
	}
	if ps := refused(t, s, "source.read", `{"path": "../outside"}`); ps[0].Field != "path" {
		t.Fatalf("a path outside: %v", ps)
	}
	var found struct {
		Matches []any `json:"matches"`
	}
	ok(t, s, "source.search", `{"query": "<h1>"}`, &found)
	ok(t, s, "source.list", `{"dir": ""}`, nil)
}

func TestLineSaysWhatEachCallDid(t *testing.T) {
	answer := func(v any) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"ok": true, "result": v})
		return b
	}
	for _, c := range []struct {
		call ai.Call
		want string
	}{
		{ai.Call{Name: "spec.read", Input: json.RawMessage(`{"topic": "application"}`), OK: true}, "spec.read: application"},
		{ai.Call{Name: "spec.read", Input: json.RawMessage(`{}`), OK: true}, "spec.read: application and plan"},
		{ai.Call{Name: "intent.open", OK: true, Result: answer(planner.OpenAnswer{Intent: 1, Questions: 2})}, "intent.open: the analysis has 2 open questions"},
		{ai.Call{Name: "intent.open", OK: true, Result: answer(planner.OpenAnswer{Intent: 1})}, "intent.open: the analysis has no open questions"},
		{ai.Call{Name: "intent.task", OK: true, Result: answer(planner.TaskAnswer{Slug: "0002-add-tags", Tier: "standard"})}, "intent.task: 0002-add-tags proposed (standard)"},
		{ai.Call{Name: "intent.task", OK: true, Result: answer(planner.TaskAnswer{Slug: "0002-add-tags", Tier: "deep", Revised: true})}, "intent.task: 0002-add-tags revised (deep)"},
		{ai.Call{Name: "intent.submit", OK: true, Result: answer(planner.SubmitAnswer{Intent: 4, Tasks: 5})}, "intent.submit: intent 4 submitted with 5 tasks"},
		{ai.Call{Name: "intent.task", Problems: []refusal.Problem{{Field: "criteria", Message: "add a failure criterion"}, {Field: "labels", Message: "x"}}},
			"intent.task: refused: criteria: add a failure criterion (and 1 problem more)"},
		{ai.Call{Name: "intent.start", OK: true, Result: answer(planner.StartAnswer{Intent: 4, Tasks: 3})}, "intent.start: intent 4 started with 3 tasks"},
		{ai.Call{Name: "intent.start", Problems: []refusal.Problem{{Message: "The person declined to run it now."}}}, "intent.start: refused: The person declined to run it now."},
		{ai.Call{Name: "source.read", Input: json.RawMessage(`{"path": "site/index.html"}`), OK: true}, "source.read: site/index.html"},
		{ai.Call{Name: "source.edit", Problems: []refusal.Problem{{Message: planner.PlannedRefusal}}}, "source.edit: refused: " + planner.PlannedRefusal},
	} {
		if got := planner.Line(c.call); got != c.want {
			t.Errorf("Line(%s) = %q, want %q", c.call.Name, got, c.want)
		}
	}
}

// TestSpecReadHandsOverNothingTheEngineersCodePlanted: with autoapp.json
// a link to the owner's keys and the acceptance folder a link out of the
// workspace, or a named pipe among the examples, spec.read answers at
// once with the committed manifest and the refusals, never a byte of what
// the links point to.
func TestSpecReadHandsOverNothingTheEngineersCodePlanted(t *testing.T) {
	h := newHost(t)
	dir := h.apps.WorkspaceDir(appID)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "providers.json"), []byte(`{"apiKey": "sk-the-owners-key"}`), 0o600)
	os.WriteFile(filepath.Join(outside, "0009-key-c1.json"), []byte(`{"title": "sk-the-owners-key", "steps": []}`), 0o600)
	os.Remove(filepath.Join(dir, "autoapp.json"))
	if err := os.Symlink(filepath.Join(outside, "providers.json"), filepath.Join(dir, "autoapp.json")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, "acceptance", "0002-pipe-c1.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := h.session("x")
	var a planner.SpecAnswer
	answered := make(chan error, 1)
	go func() { answered <- call(t, s, "spec.read", `{"topic": "application"}`, &a) }()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Second):
		t.Fatal("spec.read did not answer within a second")
	}
	b, _ := json.Marshal(a)
	if strings.Contains(string(b), "sk-the-owners-key") {
		t.Fatalf("spec.read handed over the owner's key: %s", b)
	}
	if !strings.Contains(a.Application.Manifest, `"name": "Static site"`) ||
		!slices.ContainsFunc(a.Application.Problems, func(p string) bool { return strings.Contains(p, "symbolic link") }) {
		t.Fatalf("the manifest answered: %q, problems %v", a.Application.Manifest, a.Application.Problems)
	}

	// The acceptance folder itself a link out of the workspace.
	acceptance := filepath.Join(dir, "acceptance")
	os.RemoveAll(acceptance)
	if err := os.Symlink(outside, acceptance); err != nil {
		t.Fatal(err)
	}
	a = planner.SpecAnswer{}
	if err := call(t, s, "spec.read", `{"topic": "application"}`, &a); err == nil {
		if b, _ := json.Marshal(a); strings.Contains(string(b), "sk-the-owners-key") {
			t.Fatalf("spec.read handed over the owner's key through the folder: %s", b)
		}
	} else if strings.Contains(err.Error(), "sk-the-owners-key") {
		t.Fatalf("the refusal holds the owner's key: %v", err)
	}
}
