package executor_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"autoapp/executor"
	"autoapp/executor/ai"
	"autoapp/executor/builder"
	"autoapp/executor/candidate"
	"autoapp/knowledge"
)

// A turn's record owns every knowledge write of the turn: each that holds
// lands in the store under the turn's run, and each that fails is logged
// once, naming the turn's run and what could not be kept, while the turn
// goes on.
func TestATurnsRecordKeepsItsRowsAndNamesEachWriteThatFailed(t *testing.T) {
	ctx := context.Background()
	ks, err := knowledge.Open(filepath.Join(t.TempDir(), "knowledge.sqlite"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	const run = "intent-1-0001-greet-a1"
	books := executor.Books{Turns: ks, Cases: knowledge.NewCases(ks.DB(), time.Now), Servings: knowledge.NewServings(ks.DB(), time.Now),
		Attempts: ks, Builds: executor.CaseRecorder{Cases: knowledge.NewCases(ks.DB(), time.Now), Version: "test"}, Log: log}
	rec := executor.NewTurnRecord(books, run, "site", "0001-greet: Greet the readers", "scripted:builder")
	turn := ai.Turn{Kind: ai.KindBuilder, RunID: run, Instructions: "You build the task.", Now: time.Now,
		Documents: []ai.Document{{Ref: "intent:site", Title: "The backlog", Text: "0001-greet: Greet the readers"}}}
	res := ai.Result{Documents: []ai.DeliveredDocument{{Ref: "intent:site", Title: "The backlog", Delivered: 30}}}

	// Every write holds while the store is open.
	id := rec.Context(ctx, turn, res)
	rec.Served(ctx, nil, nil)
	rec.Attempt(ctx, candidate.Observed{}, builder.Record{Reads: []string{"site/index.html"}})
	rec.Diagnosis(ctx, "The heading was never changed.")
	rec.EndServings(ctx)
	if f := rec.Failures(); id == 0 || len(f) > 0 {
		t.Fatalf("contexts row %d, failures %v: want a row and none", id, f)
	}
	facts, err := ks.AttemptFacts(ctx, []string{run})
	if err != nil || len(facts[run].Reads) != 1 || facts[run].Diagnosis != "The heading was never changed." {
		t.Fatalf("what the attempt left: %+v (%v)", facts[run], err)
	}

	// The store goes away mid-turn: each later write fails, is named once
	// in the log with the turn's run, and the record goes on.
	ks.Close()
	rec.Edited(ctx, "site/index.html: 1 hunk")
	rec.Context(ctx, turn, res)
	rec.Attempt(ctx, candidate.Observed{}, builder.Record{})
	rec.Diagnosis(ctx, "Again.")
	want := []string{"the edit in the open cases", "the turn's context", "what the attempt left", "the advice's diagnosis"}
	got := rec.Failures()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("failures %q, want %q", got, want)
	}
	lines := strings.Split(strings.TrimSpace(logged.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines logged, want one per failed write:\n%s", len(lines), logged.String())
	}
	for i, l := range lines {
		if !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "run="+run) || !strings.Contains(l, want[i]+" could not be kept") {
			t.Errorf("line %d does not name the failed write and the turn's run: %s", i, l)
		}
	}
}
