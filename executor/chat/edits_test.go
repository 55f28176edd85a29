package chat_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"autoapp/executor"
	"autoapp/executor/ai"
	"autoapp/executor/ai/scripted"
	"autoapp/executor/candidate"
	"autoapp/executor/chat"
	"autoapp/executor/gate"
	"autoapp/executor/planner"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
)

// hunk is a find/replace pair as the model sends it.
type hunk struct {
	Find    string `json:"find"`
	Replace string `json:"replace"`
}

// question waits for the one question the turn asks and returns it.
func (h *host) question(t *testing.T) gate.Question {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if qs := h.gate.Pending(appID); len(qs) > 0 {
			if len(qs) > 1 {
				t.Fatalf("more than one question waits: %+v", qs)
			}
			return qs[0]
		}
		if time.Now().After(deadline) {
			t.Fatal("the turn asked nothing")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// decide waits for the turn's question, checks it reads want, and answers
// it as the person does in the page.
func (h *host) decide(t *testing.T, want string, approve bool) {
	t.Helper()
	q := h.question(t)
	if q.Text != want || !strings.HasPrefix(q.RunID, "chat-"+appID+"-") {
		t.Fatalf("the question: %+v\nwant the text %q", q, want)
	}
	if err := h.gate.Decide(appID, q.ID, approve); err != nil {
		t.Fatal(err)
	}
}

// file is a workspace file as it is on disk.
func (h *host) file(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.apps.WorkspaceDir(appID), filepath.FromSlash(p)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runDiff is what the commits of a run changed.
func (h *host) runDiff(t *testing.T, runID string) string {
	t.Helper()
	ws, err := workspace.Open(h.apps.WorkspaceDir(appID), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	diff, err := ws.RunDiff(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	return diff
}

func TestAnEditInAChatTurnAsksThePersonFirst(t *testing.T) {
	edit := call("source.edit", map[string]any{"path": "site/index.html", "hunks": []hunk{
		{"<title>A new site</title>", "<title>Pomodoro</title>"},
		{"<h1>A new site</h1>", "<h1>Pomodoro</h1>"},
	}})
	const asked = "Edit site/index.html (2 hunks)?"

	t.Run("approved", func(t *testing.T) {
		h := newHost(t)
		h.model.On(scripted.RunID("chat-site-1"), calls(edit), scripted.Reply{Text: "The heading says Pomodoro."})
		sent := h.send(t, "call the page Pomodoro")
		h.decide(t, asked, true)
		turn := h.wait(t, sent.ID)

		if text := h.file(t, "site/index.html"); !strings.Contains(text, "<h1>Pomodoro</h1>") || !strings.Contains(text, "<title>Pomodoro</title>") {
			t.Fatalf("the file after an approved edit:\n%s", text)
		}
		diff := h.runDiff(t, "chat-site-1")
		if !strings.Contains(diff, "(run chat-site-1, call chat-site-1:1)") || !strings.Contains(diff, "+    <h1>Pomodoro</h1>") {
			t.Fatalf("the turn's commit:\n%s", diff)
		}
		if a := answers(t, h.chats()[1]); len(a) != 1 || !a[0].OK {
			t.Fatalf("the edit's answer: %+v", a)
		}
		if turn.Status != chat.StatusAnswered || !slices.Equal(turn.Lines, []string{"source.edit: done"}) {
			t.Fatalf("the turn: %+v", turn)
		}
		if h.gate.Waiting() {
			t.Fatal("a question still waits")
		}
	})

	t.Run("denied", func(t *testing.T) {
		h := newHost(t)
		before := h.file(t, "site/index.html")
		h.model.On(scripted.RunID("chat-site-1"), calls(edit), scripted.Reply{Text: "I left the page as it is."})
		sent := h.send(t, "call the page Pomodoro")
		h.decide(t, asked, false)
		turn := h.wait(t, sent.ID)

		if h.file(t, "site/index.html") != before || h.runDiff(t, "chat-site-1") != "" {
			t.Fatal("a denied edit changed the workspace")
		}
		declined := chat.Declined + "edit site/index.html (2 hunks)."
		if declined != "The person declined: edit site/index.html (2 hunks)." {
			t.Fatalf("the sentence reads %q", declined)
		}
		a := answers(t, h.chats()[1])
		if len(a) != 1 || a[0].OK || len(a[0].Problems) != 1 || a[0].Problems[0] != (refusal.Problem{Message: declined}) {
			t.Fatalf("the edit's answer: %+v", a)
		}
		if !slices.Equal(turn.Lines, []string{"source.edit: refused: " + declined}) {
			t.Fatalf("lines: %q", turn.Lines)
		}
	})
}

func TestEachEditAndBuildSaysWhatItWillDo(t *testing.T) {
	h := newHost(t)
	before := h.file(t, "site/index.html")
	h.model.On(scripted.RunID("chat-site-1"),
		calls(call("source.change", map[string]any{"files": []map[string]string{
			{"path": "site/about.html", "action": "create", "content": "<h1>About</h1>"},
			{"path": "site/index.html", "action": "overwrite", "content": "<h1>Home</h1>"},
		}})),
		calls(call("candidate.build", map[string]any{})),
		calls(call("candidate.cycle", map[string]any{})),
		calls(call("candidate.cycle", map[string]any{"path": "site/index.html", "hunks": []hunk{{"<h1>A new site</h1>", "<h1>Home</h1>"}}})),
		scripted.Reply{Text: "Nothing was changed."})
	sent := h.send(t, "add an about page")
	for _, q := range []string{
		"Create site/about.html, overwrite site/index.html?",
		"Build site?",
		"Build, preview and check site?",
		"Edit site/index.html (1 hunk), then build, preview and check site?",
	} {
		h.decide(t, q, false)
	}
	turn := h.wait(t, sent.ID)
	want := []string{
		"source.change: refused: The person declined: create site/about.html, overwrite site/index.html.",
		"candidate.build: refused: The person declined: build site.",
		"candidate.cycle: refused: The person declined: build, preview and check site.",
		"candidate.cycle: refused: The person declined: edit site/index.html (1 hunk), then build, preview and check site.",
	}
	if !slices.Equal(turn.Lines, want) {
		t.Fatalf("lines:\n%q\nwant\n%q", turn.Lines, want)
	}
	if h.file(t, "site/index.html") != before {
		t.Fatal("a denied call changed the workspace")
	}
	if st, err := h.candidates.State(appID); err != nil || st.Build != nil {
		t.Fatalf("a denied build ran: %+v %v", st.Build, err)
	}
}

func TestAnEditWhileARunGoesOnIsRefused(t *testing.T) {
	h := newHost(t)
	id := h.running(t)
	running := fmt.Sprintf("Intent #%d is running on site; stop it before changing the application by hand.", id)
	before := h.file(t, "site/index.html")
	h.model.On(scripted.RunID("chat-site-1"),
		calls(call("source.edit", map[string]any{"path": "site/index.html", "hunks": []hunk{{"<h1>A new site</h1>", "<h1>Home</h1>"}}})),
		scripted.Reply{Text: "A run is going; I will wait."})
	turn := h.wait(t, h.send(t, "change the heading").ID)

	a := answers(t, h.chats()[1])
	if len(a) != 1 || a[0].OK || len(a[0].Problems) != 1 || a[0].Problems[0].Message != running {
		t.Fatalf("the edit's answer: %+v", a)
	}
	if h.gate.Waiting() || h.file(t, "site/index.html") != before {
		t.Fatal("an edit during a run was asked or ran")
	}
	if !slices.Equal(turn.Lines, []string{"source.edit: refused: " + running}) {
		t.Fatalf("lines: %q", turn.Lines)
	}
}

// The planner's test keeps Instructions naming its own tools and
// planner.AddedTools; a chat turn of the launcher, with its edits and its
// Start, offers all of them and nothing Instructions do not name.
func TestAChatTurnIsOfferedEveryToolTheInstructionsName(t *testing.T) {
	h := newHost(t)
	h.model.On(scripted.RunID("chat-site-1"), scripted.Reply{Text: "Hello."})
	h.wait(t, h.send(t, "hello").ID)

	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b(?:source|candidate|spec|intent|knowledge|release|app)\.[a-z_]+\b`).FindAllString(planner.Instructions, -1) {
		named[strings.ReplaceAll(m, ".", "_")] = true
	}
	offered := h.chats()[0].ToolNames()
	for _, name := range offered {
		if !named[name] {
			t.Errorf("the turn offers %s, which the instructions do not name", name)
		}
	}
	for name := range named {
		if !slices.Contains(offered, name) {
			t.Errorf("the instructions name %s, which the turn does not offer: %v", name, offered)
		}
	}
	for _, name := range planner.AddedTools {
		if !slices.Contains(offered, strings.ReplaceAll(name, ".", "_")) {
			t.Errorf("the turn does not offer %s", name)
		}
	}

	tools, done := chat.GatedEditTools(chat.EditConfig{Gate: h.gate, Candidates: h.candidates, Apps: h.apps, Now: time.Now})(openWorkspace(t, h.apps.WorkspaceDir(appID)),
		executor.NewTurnRecord(executor.Books{}, "chat-site-9", appID, "Change the heading", "scripted:chat"), appID, "chat-site-9", nil)
	defer done()
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
		if err := ai.CheckExample(tl); err != nil {
			t.Error(err)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, slices.Sorted(slices.Values(planner.EditTools))) {
		t.Fatalf("the edit tools are %v", names)
	}
}

func TestEditToolsNeedAWorkspace(t *testing.T) {
	h := newHost(t)
	tools, done := chat.GatedEditTools(chat.EditConfig{Gate: h.gate, Candidates: h.candidates, Apps: h.apps, Now: time.Now,
		Log: slog.New(h.log)})(nil, executor.NewTurnRecord(executor.Books{}, "chat-nope-1", "nope", "Change it", "scripted:chat"), "nope", "chat-nope-1", nil)
	done()
	if len(tools) != 0 {
		t.Fatalf("an application without a workspace was given edit tools: %d", len(tools))
	}
	if !slices.Contains(h.log.messages(), "the workspace could not be opened for edits; the turn goes without them") {
		t.Fatalf("nothing was logged: %q", h.log.messages())
	}
}

func TestARunStartedWhileThePersonReadsRefusesTheEdit(t *testing.T) {
	h := newHost(t)
	before := h.file(t, "site/index.html")
	h.model.On(scripted.RunID("chat-site-1"),
		calls(call("source.edit", map[string]any{"path": "site/index.html", "hunks": []hunk{{"<h1>A new site</h1>", "<h1>Home</h1>"}}})),
		scripted.Reply{Text: "A run started; I will wait."})
	sent := h.send(t, "change the heading")
	h.question(t)
	id := h.running(t)
	running := fmt.Sprintf("Intent #%d is running on site; stop it before changing the application by hand.", id)
	h.decide(t, "Edit site/index.html (1 hunk)?", true)
	turn := h.wait(t, sent.ID)
	if h.file(t, "site/index.html") != before || !slices.Equal(turn.Lines, []string{"source.edit: refused: " + running}) {
		t.Fatalf("an approved edit ran beside a run: lines %q", turn.Lines)
	}
}

func TestStoppingATurnDropsItsQuestion(t *testing.T) {
	h := newHost(t)
	before := h.file(t, "site/index.html")
	h.model.On(scripted.RunID("chat-site-1"),
		calls(call("source.edit", map[string]any{"path": "site/index.html", "hunks": []hunk{{"<h1>A new site</h1>", "<h1>Home</h1>"}}})))
	sent := h.send(t, "change the heading")
	q := h.question(t)
	h.chat.Stop(appID)

	if got := h.turn(t, sent.ID); got.Status != chat.StatusStopped || got.Sentence != chat.StoppedByPerson {
		t.Fatalf("after Stop: %+v", got)
	}
	if h.gate.Waiting() {
		t.Fatal("the stopped turn's question still waits")
	}
	var ge *refusal.Error
	if err := h.gate.Decide(appID, q.ID, true); !errors.As(err, &ge) || ge.Message != gate.NotAsked {
		t.Fatalf("deciding the dropped question: %v", err)
	}
	if h.file(t, "site/index.html") != before {
		t.Fatal("the stopped turn's edit ran")
	}
}

// openWorkspace opens the workspace at dir for the test, as a chat turn
// opens its application's once.
func openWorkspace(t testing.TB, dir string) *workspace.Workspace {
	t.Helper()
	ws, err := workspace.Open(dir, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

// A case the chat turn's approved edit resolved (the owner's build failed;
// the turn's cycle built and checked the repair) is asked about as the
// chat turn ends, not after a later builder turn.
func TestACaseResolvedInAChatTurnIsDistilledAsTheTurnEnds(t *testing.T) {
	const distillAsked = "A failure the host saw has been resolved."
	h := newHost(t)
	h.model.Always(scripted.Contains(distillAsked), scripted.Reply{Text: `{"explanation":"The page was empty.","knowable":"specific","lesson":"","same_as":0}`})
	// The owner empties the page and builds: the check stage fails, and a
	// case opens.
	dir := h.apps.WorkspaceDir(appID)
	if err := os.WriteFile(filepath.Join(dir, "site/index.html"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", dir, "-c", "user.name=Owner", "-c", "user.email=owner@example.com",
		"commit", "-qam", "Empty the page").CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v\n%s", err, out)
	}
	if res, err := h.candidates.Build(context.Background(), appID, candidate.By{}); err != nil || res.Build == nil || res.Build.OK {
		t.Fatalf("the owner's build of the empty page: %+v %v", res, err)
	}
	h.model.On(scripted.RunID("chat-site-1"),
		calls(call("candidate.cycle", map[string]any{"files": []map[string]string{
			{"path": "site/index.html", "action": "overwrite", "content": "<h1>Back</h1>\n"}}})),
		scripted.Reply{Text: "The page is back."})
	sent := h.send(t, "put the page back")
	h.decide(t, "Overwrite site/index.html, then build, preview and check site?", true)
	h.wait(t, sent.ID)

	var asked int
	for _, r := range h.model.Requests() {
		if strings.Contains(string(r.Body), distillAsked) {
			asked++
		}
	}
	if asked != 1 {
		t.Fatalf("the distiller was asked %d times as the chat turn ended, want once about the case it resolved", asked)
	}
}
