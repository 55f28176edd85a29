package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"autoapp/executor/ai/provider"
	"autoapp/executor/ai/scripted"
	"autoapp/intent/timetest"
	"autoapp/migrations"
)

// agent is an MCP client of the real binary's `autoapp mcp`, over stdio.
type agent struct {
	t  *testing.T
	cs *mcp.ClientSession
}

// connect starts `autoapp mcp --root root` with the extra flags and
// connects to it, with the SDK's own client.
func connect(t *testing.T, bin, root string, flags ...string) *agent {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "autoapp-test", Version: "1"}, nil)
	cmd := exec.Command(bin, append([]string{"mcp", "--root", root}, flags...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to autoapp mcp: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return &agent{t: t, cs: cs}
}

// tools are the names of the tools the server offers.
func (a *agent) tools() []string {
	a.t.Helper()
	res, err := a.cs.ListTools(context.Background(), nil)
	if err != nil {
		a.t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// call calls the tool and returns its text and whether it was refused.
func (a *agent) call(name string, args map[string]any) (text string, refused bool) {
	a.t.Helper()
	res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		a.t.Fatalf("%s: a protocol error, not a tool result: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// ok calls the tool, which must answer, and decodes its JSON into out.
func (a *agent) ok(name string, args map[string]any, out any) string {
	a.t.Helper()
	text, refused := a.call(name, args)
	if refused {
		a.t.Fatalf("%s(%v) was refused: %s", name, args, text)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(text), out); err != nil {
			a.t.Fatalf("%s answered what is not its JSON: %v\n%s", name, err, text)
		}
	}
	return text
}

// refusedWith calls the tool, which must refuse with one sentence
// containing want.
func (a *agent) refusedWith(name string, args map[string]any, want string) {
	a.t.Helper()
	text, refused := a.call(name, args)
	if !refused || !strings.Contains(text, want) {
		a.t.Fatalf("%s(%v) answered %q (refused %v); want a refusal saying %q", name, args, text, refused, want)
	}
	if strings.Contains(text, "\n") || strings.Contains(text, "validating") || strings.Contains(text, "goroutine") {
		a.t.Fatalf("%s(%v): the refusal is not a sentence for a person: %q", name, args, text)
	}
}

// startServe runs the real binary's serve over root until the test ends.
func startServe(t *testing.T, bin, root string) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--root", root, "--addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if servingLine.MatchString(lines.Text()) {
			go func() {
				for lines.Scan() {
				}
			}()
			return
		}
	}
	t.Fatalf("the server did not say where it serves: %s", stderr.String())
}

func toolCall(name string, args any) scripted.Call {
	b, _ := json.Marshal(args)
	return scripted.Call{Name: name, Args: string(b)}
}

// TestAnAgentDrivesTheLauncherOverMCP runs the real binary's `autoapp mcp`
// under the SDK's own client, beside the real binary's serve and the
// scripted model: it lists the applications, sends a request, reads the
// engineer's plan (the intent with its tasks), and, offered Run only with
// --allow-run, runs it and queues feedback while its first turn holds.
// Every write is journalled as coming from MCP; bad input and what the
// rules forbid are refused with a sentence; without a server, what needs
// one says to start it.
func TestAnAgentDrivesTheLauncherOverMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	root := t.TempDir()
	st, err := open(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Apps.CreateFromTemplate(context.Background(), "notes", "Notes", "static"); err != nil {
		t.Fatal(err)
	}
	model := scripted.New(t)
	model.Models("engineer")
	if err := st.Providers.Save(provider.Provider{Name: "scripted", BaseURL: model.URL(), On: true}, false); err != nil {
		t.Fatal(err)
	}
	if err := st.Providers.SetDefaultModel("scripted:engineer"); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// Without --allow-run, neither Approve nor Run is offered.
	a := connect(t, bin, root)
	tools := a.tools()
	for _, want := range []string{"list_applications", "list_intents", "show_intent", "read_run_log", "send_request", "answer_question", "queue_intervention"} {
		if !slices.Contains(tools, want) {
			t.Errorf("the tools %v do not offer %s", tools, want)
		}
	}
	if slices.Contains(tools, "run_intent") || slices.Contains(tools, "approve_plan") {
		t.Fatalf("without --allow-run the tools are %v", tools)
	}
	if res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_intent", Arguments: map[string]any{"intent": 1}}); err == nil && !res.IsError {
		t.Fatal("run_intent ran without --allow-run")
	}

	var apps struct{ Items []struct{ ID, Name string } }
	a.ok("list_applications", nil, &apps)
	if len(apps.Items) != 1 || apps.Items[0].ID != "notes" || apps.Items[0].Name != "Notes" {
		t.Fatalf("list_applications = %+v", apps)
	}
	a.refusedWith("list_intents", map[string]any{"app": "nope"}, `There is no application called "nope".`)

	// Bad input is refused with a sentence naming the field, before any service.
	send := map[string]any{"app": "notes", "text": "Add tags to notes.", "mode": "autonomous", "op": "send-1"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for key, val := range send {
			m[key] = val
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	a.refusedWith("send_request", with("mode", "fast"), `mode is one of autonomous or guided, not "fast".`)
	a.refusedWith("send_request", with("text", nil), "text is missing: what you ask of the engineer")
	a.refusedWith("send_request", with("text", ""), "text is empty")
	a.refusedWith("send_request", with("colour", "blue"), `send_request takes no field "colour"`)
	a.refusedWith("show_intent", map[string]any{"intent": 0}, "intent is a number from 1, not 0")
	a.refusedWith("show_intent", map[string]any{"intent": "one"}, `intent is a whole number, not the text "one".`)
	a.refusedWith("queue_intervention", map[string]any{"intent": 1, "kind": "stop", "op": "x"}, `kind is one of feedback or pause, not "stop".`)
	a.refusedWith("show_intent", map[string]any{"intent": 99}, "There is no intent 99.")

	// With no server, a request cannot reach the engineer, and the tool says what to do.
	abs, _ := filepath.Abs(root)
	a.refusedWith("send_request", send, "The launcher is not serving at "+abs+"; start `autoapp serve --root "+abs+"` to send it to the engineer.")

	// The server runs; the request reaches the engineer, who plans two tasks.
	startServe(t, bin, root)
	model.On(scripted.RunID("chat-notes-1"),
		scripted.Reply{ToolCalls: []scripted.Call{toolCall("intent_open", map[string]any{"restated": "Tags on notes.", "questions": []string{}})}},
		scripted.Reply{ToolCalls: []scripted.Call{toolCall("intent_task", map[string]any{"title": "Add tags", "priority": "high",
			"labels": []string{"views"}, "blocked_by": []string{}, "estimated_lines": 20, "locks": []string{}, "risk": "normal",
			"stub": false, "reasoning": "low", "summary": "Each note shows its tags.",
			"criteria": []map[string]any{{"text": "The home page shows a tag"}}, "no_failure_path": "a static page refuses nothing"})}},
		scripted.Reply{ToolCalls: []scripted.Call{toolCall("intent_task", map[string]any{"title": "Filter by tag", "priority": "medium",
			"labels": []string{"views"}, "blocked_by": []string{"0001-add-tags"}, "estimated_lines": 20, "locks": []string{}, "risk": "normal",
			"stub": false, "reasoning": "low", "summary": "A tag link filters the notes.",
			"criteria": []map[string]any{{"text": "The tag page lists its notes"}}, "no_failure_path": "a static page refuses nothing"})}},
		scripted.Reply{ToolCalls: []scripted.Call{toolCall("intent_submit", map[string]any{})}},
		scripted.Reply{Text: "The plan is in the Backlog."})
	// The service's own rules are the page's.
	a.refusedWith("send_request", with("text", "   "), "Write a message first.")
	a.refusedWith("send_request", with("mode", nil), "A new request needs its mode: autonomous or guided.")
	var sent struct {
		Message string
		Result  struct{ Request, Revision int }
	}
	a.ok("send_request", send, &sent)
	if sent.Result.Request != 1 || !strings.Contains(sent.Message, "Request 1 of notes is with the engineer") {
		t.Fatalf("send_request answered %+v", sent)
	}
	var intents struct {
		Items []struct {
			ID           int64
			Status       string
			BeingWritten bool
			Request      string
		}
	}
	timetest.WaitFor(t, 60*time.Second, "the engineer's plan to be submitted", func() bool {
		a.ok("list_intents", map[string]any{"app": "notes"}, &intents)
		return len(intents.Items) == 1 && !intents.Items[0].BeingWritten
	})
	if it := intents.Items[0]; it.ID != 1 || it.Status != "draft" || it.Request != "Add tags to notes." {
		t.Fatalf("list_intents = %+v", intents)
	}
	// The same op again starts nothing: the engineer is not asked again.
	// (The turn that submitted the plan may still write its last words, so
	// what is counted is the turns asked, not the requests.)
	turns := func() int {
		seen := map[string]bool{}
		for _, r := range model.Requests() {
			seen[r.Header.Get(scripted.RunHeader)] = true
		}
		return len(seen)
	}
	asked := turns()
	a.ok("send_request", send, &sent)
	if sent.Result.Request != 1 {
		t.Fatalf("a retried send answered request %d, want 1", sent.Result.Request)
	}
	a.refusedWith("send_request", with("text", "Something else."), "send-1")
	var plan struct {
		Status  string
		Journal struct {
			Request  int64
			Revision int
			Via      string
			Plan     string
		} `json:"request_journal"`
		Tasks []struct {
			Slug, Title, Status string
			Criteria            []struct{ Text string }
			Runs                []string
		}
	}
	// The request's journal records the submitted plan (revision 2) when
	// the engineer's turn ends, which may be a moment after the draft is
	// no longer being written; an approval must see that revision.
	timetest.WaitFor(t, 30*time.Second, "the journal to record the plan", func() bool {
		a.ok("show_intent", map[string]any{"intent": 1}, &plan)
		return plan.Journal.Revision >= 2
	})
	var titles []string
	for _, tk := range plan.Tasks {
		titles = append(titles, tk.Slug+" "+tk.Title+" "+tk.Status)
	}
	if strings.Join(titles, "; ") != "0001-add-tags Add tags proposed; 0002-filter-by-tag Filter by tag proposed" ||
		plan.Tasks[0].Criteria[0].Text != "The home page shows a tag" {
		for _, r := range model.Requests() {
			if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == "tool" {
				t.Logf("tool result: %s", r.Messages[n-1].Content)
			}
		}
		t.Fatalf("show_intent's tasks = %+v", plan.Tasks)
	}
	if plan.Journal.Request != 1 || plan.Journal.Via != "mcp" || plan.Journal.Plan == "" {
		t.Fatalf("show_intent's journal = %+v; want request 1, from mcp, with its plan hash", plan.Journal)
	}
	if turns() != asked {
		t.Fatalf("the retried send asked the model again (%d turns, then %d)", asked, turns())
	}
	// Feedback goes to a running intent only, and this one is not running.
	a.refusedWith("queue_intervention", map[string]any{"intent": 1, "kind": "feedback", "text": "Lowercase tags.", "op": "fb-1"},
		"Intent #1 is draft, not running: feedback and pause go to a running intent.")
	a.refusedWith("answer_question", map[string]any{"task": plan.Tasks[0].Slug, "answer": "yes"}, "task is a whole number")

	// With --allow-run the agent may run the intent; its first turn holds,
	// and feedback is queued for the run's next boundary.
	held := scripted.NewGate(t)
	model.On(scripted.RunID("intent-1-0001-add-tags-a1"), scripted.Reply{Before: held.Hold, Text: "I could not do it."})
	runner := connect(t, bin, root, "--allow-run")
	if tools := runner.tools(); !slices.Contains(tools, "run_intent") || !slices.Contains(tools, "approve_plan") {
		t.Fatalf("with --allow-run the tools are %v", tools)
	}
	runner.refusedWith("approve_plan", map[string]any{"intent": 1, "seen": plan.Journal.Revision, "plan": plan.Journal.Plan, "op": "ap-1"}, "autonomous")
	var ran struct{ Message string }
	runner.ok("run_intent", map[string]any{"intent": 1}, &ran)
	if ran.Message != "Intent #1 is running; show_intent follows its tasks." {
		t.Fatalf("run_intent answered %q", ran.Message)
	}
	runner.refusedWith("run_intent", map[string]any{"intent": 1}, "Intent #1 is running")
	held.Wait(t)
	var queued struct {
		Message string
		Result  struct {
			Order  int64
			Kind   string
			Via    string
			Intent int64
		}
	}
	a.ok("queue_intervention", map[string]any{"intent": 1, "kind": "feedback", "text": "Lowercase tags.", "op": "fb-1"}, &queued)
	if queued.Result.Kind != "feedback" || queued.Result.Via != "mcp" || queued.Result.Intent != 1 ||
		!strings.Contains(queued.Message, "applied at the run's next safe boundary") {
		t.Fatalf("queue_intervention answered %+v", queued)
	}
	held.Open()

	// The stores say every write came from MCP.
	db, err := migrations.OpenReadOnly(filepath.Join(root, "launcher", "intents.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var journal []string
	if err := db.Read.Select(&journal, `SELECT kind || '/' || via FROM request_journal WHERE request_id = 1 AND actor != 'engineer' ORDER BY revision`); err != nil {
		t.Fatal(err)
	}
	if strings.Join(journal, " ") != "request/mcp run/mcp" {
		t.Errorf("the journal's owner entries = %q, want the request and the run from mcp", journal)
	}
	var via string
	if err := db.Read.Get(&via, `SELECT via FROM interventions WHERE request_id = 'fb-1'`); err != nil || via != "mcp" {
		t.Errorf("the receipt's via = %q (%v), want mcp", via, err)
	}

	// The run's log is read by its id, as show_intent lists it.
	a.ok("show_intent", map[string]any{"intent": 1}, &plan)
	if len(plan.Tasks[0].Runs) == 0 || plan.Tasks[0].Runs[0] != "intent-1-0001-add-tags-a1" {
		t.Fatalf("the task's runs = %v", plan.Tasks[0].Runs)
	}
	var lines struct {
		Items []struct{ Level, Message string }
	}
	timetest.WaitFor(t, 30*time.Second, "the run's log to have lines", func() bool {
		a.ok("read_run_log", map[string]any{"run": "intent-1-0001-add-tags-a1"}, &lines)
		return len(lines.Items) > 0
	})
	a.refusedWith("read_run_log", map[string]any{"run": "x", "level": "loud"}, `level is one of debug, info, warn or error, not "loud".`)
}
