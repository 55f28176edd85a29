package chat_test

import (
	"context"
	"strings"
	"testing"

	"autoapp/executor/ai/scripted"
	"autoapp/executor/chat"
	"autoapp/knowledge"
)

// TestAChatTurnsDirectChangesAreKeptLikeABuildersTurn: a chat turn's
// direct build that fails opens a case naming the turn's contexts row, and
// its edits are kept as the run's work and in the open case.
func TestAChatTurnsDirectChangesAreKeptLikeABuildersTurn(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	// The launcher's knowledge store keeps the turns, and its cases what
	// the builds saw.
	ks, cases := h.launcher.Knowledge, h.launcher.Cases
	overwrite := func(content string) scripted.Reply {
		return calls(call("source.change", map[string]any{"files": []map[string]string{
			{"path": "site/index.html", "action": "overwrite", "content": content}}}))
	}
	const run = "chat-site-1"
	h.model.On(scripted.RunID(run),
		overwrite(""),
		calls(call("candidate.build", map[string]any{})),
		overwrite("<h1>Home</h1>\n"),
		scripted.Reply{Text: "The page is back."})
	sent := h.send(t, "empty the home page")
	h.decide(t, "Overwrite site/index.html?", true)
	h.decide(t, "Build site?", true)
	h.decide(t, "Overwrite site/index.html?", true)
	if turn := h.wait(t, sent.ID); turn.Status != chat.StatusAnswered {
		t.Fatalf("the turn: %+v", turn)
	}

	turns, err := ks.Turns(ctx, knowledge.TurnQuery{})
	if err != nil || len(turns) != 1 || turns[0].RunID != run {
		t.Fatalf("turns %+v (%v): want the chat turn's one row", turns, err)
	}
	open := true
	opened, err := cases.List(ctx, knowledge.CaseQuery{AppID: appID, Open: &open})
	if err != nil || len(opened) != 1 {
		t.Fatalf("open cases %+v (%v)", opened, err)
	}
	c := opened[0]
	if c.ContextID != turns[0].ID || c.OpenedRunID != run || c.Request != "empty the home page" || c.Model != "scripted:planner" {
		t.Fatalf("the case records context %d (the turn's is %d), run %q, request %q, model %q",
			c.ContextID, turns[0].ID, c.OpenedRunID, c.Request, c.Model)
	}
	// The edit made after the build failed is appended to the case.
	if lines := strings.Split(strings.TrimSpace(c.Edits), "\n"); len(lines) != 1 || !strings.HasSuffix(lines[0], " "+run+" source.change change site/index.html") {
		t.Fatalf("the case's edits:\n%s", c.Edits)
	}
	work, err := ks.Work(ctx, []string{run}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if w := work[run]; w.EditCount != 2 || w.BuildCount != 1 || w.Builds[0].OK || len(w.Opened) != 1 || w.Opened[0].ID != c.ID {
		t.Fatalf("the run's work: %+v", w)
	}
}
