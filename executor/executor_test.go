package executor_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"autoapp/cmd/autoapp/launcher"
	"autoapp/executor"
	"autoapp/executor/ai/provider"
	"autoapp/executor/ai/scripted"
	"autoapp/executor/candidate"
	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/plan"
	"autoapp/knowledge"
)

// host is the launcher's own services over a temporary root, with the
// scripted model set up as the Settings model.
type host struct {
	root string
	// db is the intents store's file, for a test that opens it again.
	db        string
	launcher  *launcher.Launcher
	backlog   *intent.Service
	apps      *app.Service
	cands     *candidate.Service
	providers *provider.Registry
	exec      *executor.Executor
	model     *scripted.Server
}

// hostConfig is what a test may choose of the launcher it boots: its
// clock and its options.
type hostConfig struct {
	now  func() time.Time
	opts launcher.Options
}

// hostOption changes what a host's launcher is built with.
type hostOption func(*hostConfig)

func newHost(t testing.TB, opts ...hostOption) *host {
	t.Helper()
	root := t.TempDir()
	cfg := hostConfig{now: time.Now, opts: launcher.Options{AdviceTimeout: 5 * time.Second, Quiet: true}}
	for _, o := range opts {
		o(&cfg)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	l, err := launcher.New(root, cfg.now, log, cfg.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	h := &host{root: root, db: filepath.Join(root, "launcher", "intents.sqlite"), launcher: l, model: scripted.New(t),
		backlog: l.Backlog, apps: l.Apps, cands: l.Candidates, providers: l.Providers, exec: l.Runs}
	h.model.Models("builder")
	// The launcher asks the Settings model about every case a turn
	// resolved; unless a test says otherwise, it hears there was nothing to learn.
	h.model.Always(scripted.Contains(distillAsked), scripted.Reply{Text: `{"explanation":"The check failed until the page said it.","knowable":"specific","lesson":"","same_as":0}`})
	if err := h.providers.Save(provider.Provider{Name: "scripted", BaseURL: h.model.URL(), On: true}, false); err != nil {
		t.Fatal(err)
	}
	if err := h.providers.SetDefaultModel("scripted:builder"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.apps.CreateFromTemplate(context.Background(), "site", "Site", "static"); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *host) plan(t *testing.T, tasks ...plan.Task) int64 {
	t.Helper()
	ctx := context.Background()
	in, err := h.backlog.OpenDraft(ctx, "site", "Change the site.", intent.Analysis{Restated: []string{"Changes."}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tasks {
		if _, err := h.backlog.AddTask(ctx, in.ID, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.backlog.Submit(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	return in.ID
}

// wait waits until the intent leaves running.
func (h *host) wait(t *testing.T, id int64) intent.IntentDetail {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		d, err := h.backlog.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if running := len(h.exec.Running()) > 0; d.Status != intent.IntentRunning && !running {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("the intent still runs: %+v", d.Intent)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func heading() plan.Task {
	return plan.Task{Title: "Change the heading", Priority: "high", Labels: []string{"copy"}, EstimatedLines: 5, Risk: "normal",
		Reasoning: "low", Summary: "The home page greets notes readers.", Criteria: []plan.Criterion{{Text: "The home page says Hello notes"}},
		NoFailurePath: "a static page refuses nothing", Runbook: []string{"Read the heading."}}
}

func about() plan.Task {
	return plan.Task{Title: "Add an about page", Priority: "medium", Labels: []string{"views"}, EstimatedLines: 10, Risk: "normal",
		Reasoning: "low", BlockedBy: []string{"0001-change-the-heading"}, Summary: "An about page.",
		Criteria: []plan.Criterion{{Text: "The about page says About notes"}}, NoFailurePath: "a static page refuses nothing"}
}

func change(path, content string) scripted.Call {
	args, _ := json.Marshal(map[string]any{"files": []map[string]string{{"path": path, "action": "create", "content": content}}})
	return scripted.Call{Name: "source_change", Args: string(args)}
}

func edit(path, find, replace string) scripted.Call {
	args, _ := json.Marshal(map[string]any{"path": path, "hunks": []map[string]string{{"find": find, "replace": replace}}})
	return scripted.Call{Name: "source_edit", Args: string(args)}
}

var cycle = scripted.Call{Name: "candidate_cycle", Args: `{}`}

func example(title, path, text string) string {
	b, _ := json.Marshal(map[string]any{"title": title, "steps": []map[string]any{
		{"method": "GET", "path": path, "expect": map[string]any{"status": 200, "contains": []string{text}}}}})
	return string(b)
}

func runID(id int64, slug string, n int) string {
	return "intent-" + strconv.FormatInt(id, 10) + "-" + slug + "-a" + strconv.Itoa(n)
}

func TestATwoTaskIntentCompletes(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading(), about())
	h.model.On(scripted.RunID(runID(id, "0001-change-the-heading", 1)),
		scripted.Reply{ToolCalls: []scripted.Call{change("acceptance/0001-change-the-heading-c1.json",
			example("The home page says Hello notes", "/", "Hello notes"))}, Usage: scripted.Usage{Input: 900, Output: 120}},
		scripted.Reply{ToolCalls: []scripted.Call{edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p class=\"greeting\">Hello notes</p>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	h.model.On(scripted.RunID(runID(id, "0002-add-an-about-page", 1)),
		scripted.Reply{ToolCalls: []scripted.Call{
			change("acceptance/0002-add-an-about-page-c1.json", example("The about page says About notes", "/about.html", "About notes")),
			change("site/about.html", "<!DOCTYPE html><title>About</title><h1>About notes</h1>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	if err := h.exec.Start(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	d := h.wait(t, id)
	for _, task := range d.Tasks {
		td, _ := h.backlog.Task(context.Background(), task.ID)
		for _, ev := range td.Events {
			t.Logf("%s: %s → %s: %s", task.Slug, ev.From, ev.To, ev.Reason)
		}
	}
	if d.Status != intent.IntentDone {
		t.Fatalf("intent %s (%s)", d.Status, d.StopReason)
	}
}

func TestATaskWhoseProviderIsOffFailsWithoutATurn(t *testing.T) {
	h := newHost(t)
	id := h.plan(t, heading())
	if err := h.providers.SetOn("scripted", false); err != nil {
		t.Fatal(err)
	}
	before := h.model.Count()
	if err := h.exec.Start(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	d := h.wait(t, id)
	if h.model.Count() != before {
		t.Fatalf("the provider that is off was sent %d requests", h.model.Count()-before)
	}
	task := d.Tasks[0]
	if task.Status != intent.TaskFailed || task.Attempts != 0 || len(task.RunIDs) != 0 {
		t.Fatalf("task: %s, %d attempts, runs %v", task.Status, task.Attempts, task.RunIDs)
	}
	if task.Reason != "scripted is not turned on in Settings." {
		t.Fatalf("reason %q", task.Reason)
	}
	if d.Status != intent.IntentStopped || d.StopReason != "0001-change-the-heading failed without a turn: scripted is not turned on in Settings." {
		t.Fatalf("intent: %s %q", d.Status, d.StopReason)
	}
}

func TestACheckThatFailsThenPassesIsACaseOpenedAndResolvedUnderItsRun(t *testing.T) {
	h := newHost(t)
	// The launcher's own store: the turn's record keeps the cases there.
	cases := h.launcher.Cases
	id := h.plan(t, heading())
	run := runID(id, "0001-change-the-heading", 1)
	h.model.On(scripted.RunID(run),
		scripted.Reply{ToolCalls: []scripted.Call{change("acceptance/0001-change-the-heading-c1.json",
			example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{ToolCalls: []scripted.Call{edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p>Hello notes</p>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	if err := h.exec.Start(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if d := h.wait(t, id); d.Status != intent.IntentDone {
		t.Fatalf("intent %s (%s)", d.Status, d.StopReason)
	}
	all, err := cases.List(context.Background(), knowledge.CaseQuery{AppID: "site"})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 {
		t.Fatalf("%d cases, want the one failed example: %+v", len(all), all)
	}
	c := all[0]
	if c.Kind != knowledge.CaseCheck || c.OpenedRunID != run || !c.Resolved() || c.ResolvedRunID != run {
		t.Fatalf("case: kind %s opened by %q resolved %v by %q", c.Kind, c.OpenedRunID, c.Resolved(), c.ResolvedRunID)
	}
}
