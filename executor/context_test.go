package executor_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"autoapp/executor"
	"autoapp/executor/ai"
	"autoapp/executor/ai/scripted"
	"autoapp/executor/build"
	"autoapp/knowledge"
	"autoapp/knowledge/origin"
)

// TestACaseOpenedDuringATurnNamesTheTurnsContext runs a turn as a builder
// turn runs (its contexts row kept as its documents are delivered, a build
// of its tools failing, its context recorded again when it ends): the case
// the build opens names the turn's one contexts row.
func TestACaseOpenedDuringATurnNamesTheTurnsContext(t *testing.T) {
	ctx := context.Background()
	ks, err := knowledge.Open(filepath.Join(t.TempDir(), "knowledge.sqlite"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ks.Close() })
	cases := knowledge.NewCases(ks.DB(), time.Now)
	const run = "intent-1-0001-greet-a1"
	const request = "0001-greet: Greet the readers"
	rec := executor.NewTurnRecord(executor.Books{Turns: ks, Builds: executor.CaseRecorder{Cases: cases, Version: "test"}},
		run, "site", request, "scripted:builder")

	model := scripted.New(t)
	model.On(scripted.RunID(run),
		scripted.Reply{ToolCalls: []scripted.Call{{Name: "candidate_build", Args: `{}`}}},
		scripted.Reply{Text: "The build failed; I stop here."})
	var rowsWhenBuilt int
	buildTool := ai.Tool{Name: "candidate.build", Description: "Build.", Schema: json.RawMessage(`{"type":"object"}`), Example: json.RawMessage(`{}`),
		Handler: func(ctx context.Context, _ json.RawMessage) (any, error) {
			var n int
			if err := ks.DB().Read.Get(&n, `SELECT count(*) FROM contexts`); err != nil {
				return nil, err
			}
			rowsWhenBuilt = n
			// What the candidate tells the turn's record of a failed build.
			rec.Built(ctx, "site", "rev-1", "rev-0", build.Result{StagesRun: []string{"compile"},
				Problems: []build.Problem{{Stage: "compile", File: "main.go", Line: 3, Message: "undefined: x"}}})
			return map[string]bool{"ok": false}, nil
		}}
	turn := ai.Turn{
		Endpoint: ai.Endpoint{Provider: "scripted", BaseURL: model.URL(), Model: "builder"},
		Kind:     ai.KindBuilder, RunID: run, Instructions: "You build the task.", Message: "Greet the readers.",
		Documents: []ai.Document{{Ref: "intent:site", Title: "The backlog", Text: "0001-greet: Greet the readers"}},
		Tools:     []ai.Tool{buildTool},
		Now:       time.Now,
	}
	turnCtx := origin.WithIdentity(ctx, origin.Identity{RunID: run, AppID: "site"})
	rec.KeepAtDelivery(turnCtx, &turn)
	res := ai.Run(turnCtx, turn)
	if res.Ended != ai.EndAnswered {
		t.Fatalf("ended %s: %s", res.Ended, res.Sentence)
	}
	rec.Context(ctx, turn, res)
	if f := rec.Failures(); len(f) > 0 {
		t.Fatalf("the record could not keep %v", f)
	}

	if rowsWhenBuilt != 1 {
		t.Fatalf("%d contexts rows when the turn built, want its own", rowsWhenBuilt)
	}
	turns, err := ks.Turns(ctx, knowledge.TurnQuery{})
	if err != nil || len(turns) != 1 || turns[0].RunID != run || len(turns[0].Documents) != 1 {
		t.Fatalf("turns %+v (%v): want one row, recorded once", turns, err)
	}
	opened, err := cases.List(ctx, knowledge.CaseQuery{AppID: "site"})
	if err != nil || len(opened) != 1 {
		t.Fatalf("cases %+v (%v)", opened, err)
	}
	if c := opened[0]; c.ContextID != turns[0].ID || c.OpenedRunID != run || c.Request != request || c.Model != "scripted:builder" {
		t.Fatalf("the case records context %d, run %q, request %q, model %q; the turn's row is %d", c.ContextID, c.OpenedRunID, c.Request, c.Model, turns[0].ID)
	}
}
