package knowledge_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"autoapp/intent/refusal"
	"autoapp/knowledge"
)

func TestATurnRecordedAgainIsTheSameRow(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	turn := knowledge.Turn{AppID: "site", RunID: "intent-1-0001-greet-a1", Kind: knowledge.TurnBuilder,
		Instructions: "You are the engineer.", Request: "0001-greet: Greet",
		Documents: []knowledge.DeliveredDoc{{Ref: "intent:site", Title: "Backlog", Text: "one task"}}}
	first, err := e.store.RecordTurn(ctx, turn)
	if err != nil {
		t.Fatal(err)
	}
	// The turn ends a minute later and is recorded again, as the executor does.
	e.clock.Set(e.clock.Now().Add(time.Minute))
	again, err := e.store.RecordTurn(ctx, turn)
	if err != nil {
		t.Fatal(err)
	}
	if again != first || count(t, e.store, `SELECT count(*) FROM contexts`) != 1 {
		t.Fatalf("recorded again: id %d, first %d, %d rows", again, first, count(t, e.store, `SELECT count(*) FROM contexts`))
	}
	row, _, err := e.store.Turn(ctx, first)
	if err != nil || !row.At.Equal(e.clock.Now().Add(-time.Minute)) {
		t.Fatalf("the row keeps when the turn started: %v (%v)", row.At, err)
	}

	// Another turn of the same run with other documents, and a turn with
	// no run recorded twice, are rows of their own.
	other := turn
	other.Documents = []knowledge.DeliveredDoc{{Ref: "intent:site", Title: "Backlog", Text: "two tasks"}}
	noRun := turn
	noRun.RunID = ""
	for _, tt := range []knowledge.Turn{other, noRun, noRun} {
		id, err := e.store.RecordTurn(ctx, tt)
		if err != nil || id == first {
			t.Fatalf("id %d (first %d): %v", id, first, err)
		}
	}
	if n := count(t, e.store, `SELECT count(*) FROM contexts`); n != 4 {
		t.Fatalf("%d contexts rows, want 4", n)
	}
}

func TestARunsWorkIsReadByItsRun(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	cases := knowledge.NewCases(e.store.DB(), e.clock.Now)
	const run, other = "intent-1-0001-greet-a1", "intent-1-0001-greet-a2"

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(cases.AppendEdit(ctx, "site", run, "source.change change acceptance/0001-greet-c1.json"))
	_, _, err := cases.Build(ctx, knowledge.BuildObserved{AppID: "site", RunID: run, Revision: "r1", StagesRun: []string{"vet", "compile"},
		Problems: []knowledge.BuildProblem{problem("compile", "main.go:3:2: undefined: x"), problem("compile", "main.go:9:1: missing return")}})
	must(err)
	must(cases.AppendEdit(ctx, "site", run, "source.edit main.go"))
	_, _, err = cases.Build(ctx, knowledge.BuildObserved{AppID: "site", RunID: run, Revision: "r2", StagesRun: []string{"vet", "compile"}, OK: true})
	must(err)
	_, _, err = cases.Checks(ctx, knowledge.ChecksObserved{AppID: "site", RunID: run, Revision: "r2", Results: []knowledge.ExampleResult{
		{ID: "0001-greet-c1", Hash: "h1", Passed: false, Failure: "GET / answered without Hello"},
		{ID: "0000-home-c1", Hash: "h0", Passed: true}}})
	must(err)
	// The next attempt passes the example: it resolves the check case.
	_, _, err = cases.Checks(ctx, knowledge.ChecksObserved{AppID: "site", RunID: other, Revision: "r3", Results: []knowledge.ExampleResult{
		{ID: "0001-greet-c1", Hash: "h1", Passed: true}, {ID: "0000-home-c1", Hash: "h0", Passed: true}}})
	must(err)

	work, err := e.store.Work(ctx, []string{run, other, "intent-9-none-a1", ""}, 0)
	must(err)
	if _, ok := work["intent-9-none-a1"]; ok || len(work) != 2 {
		t.Fatalf("work of %d runs: %+v", len(work), work)
	}
	w := work[run]
	summaries := func(ws []knowledge.Work) string {
		var s []string
		for _, x := range ws {
			s = append(s, fmt.Sprintf("%v %s", x.OK, x.Summary))
		}
		return strings.Join(s, " | ")
	}
	if got := summaries(w.Edits); w.EditCount != 2 || got != "true source.change change acceptance/0001-greet-c1.json | true source.edit main.go" {
		t.Errorf("edits (%d): %s", w.EditCount, got)
	}
	if got := summaries(w.Builds); w.BuildCount != 2 ||
		got != "false failed at compile: main.go:3:2: undefined: x (and 1 more) | true passed (vet, compile)" {
		t.Errorf("builds (%d): %s", w.BuildCount, got)
	}
	if got := summaries(w.Checks); w.CheckCount != 1 || got != "false 1 of 2 failed: 0001-greet-c1" {
		t.Errorf("checks (%d): %s", w.CheckCount, got)
	}
	// Two build cases (two distinct problems) opened and resolved in this
	// run, and the check case opened here.
	if len(w.Opened) != 3 || w.OpenedCount != 3 || w.Opened[0].Kind != knowledge.CaseBuild || w.Opened[0].Where != "compile" ||
		w.Opened[2].Kind != knowledge.CaseCheck || w.Opened[2].Where != "0001-greet-c1" {
		t.Errorf("opened: %+v", w.Opened)
	}
	if len(w.Resolved) != 2 || w.Resolved[0].ID != w.Opened[0].ID || w.Resolved[1].ID != w.Opened[1].ID {
		t.Errorf("resolved: %+v", w.Resolved)
	}
	o := work[other]
	if len(o.Edits)+len(o.Builds)+len(o.Opened) != 0 || len(o.Checks) != 1 || !o.Checks[0].OK || o.Checks[0].Summary != "2 of 2 passed" ||
		len(o.Resolved) != 1 || o.Resolved[0].ID != w.Opened[2].ID {
		t.Errorf("the other run: %+v", o)
	}

	// A page asks for the newest few of each, with the count of all.
	for i := range 7 {
		must(cases.AppendEdit(ctx, "site", other, fmt.Sprintf("source.edit page-%d.html", i)))
	}
	work, err = e.store.Work(ctx, []string{other}, 3)
	must(err)
	if o := work[other]; o.EditCount != 7 || summaries(o.Edits) != "true source.edit page-4.html | true source.edit page-5.html | true source.edit page-6.html" {
		t.Errorf("the newest three of %d edits: %s", o.EditCount, summaries(o.Edits))
	}
}

func TestARunsWorkIsNeverChanged(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	if err := knowledge.NewCases(e.store.DB(), e.clock.Now).AppendEdit(ctx, "site", "run-1", "source.edit a.html"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`UPDATE run_work SET summary = 'nothing'`, `UPDATE run_work SET ok = 0`, `DELETE FROM run_work`} {
		if _, err := e.store.DB().Write.Exec(q); err == nil || !strings.Contains(err.Error(), "never") {
			t.Errorf("%s: %v", q, err)
		}
	}
}

func TestWorkRefusesTooManyRuns(t *testing.T) {
	e := mustOpen(t)
	runs := make([]string, knowledge.MaxWorkRuns+1)
	for i := range runs {
		runs[i] = fmt.Sprint("run-", i)
	}
	_, err := e.store.Work(context.Background(), runs, 0)
	wantCode(t, err, refusal.Invalid)
}
