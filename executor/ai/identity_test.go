package ai_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/ai/scripted"
	"autoapp/knowledge"
	"autoapp/knowledge/origin"
)

func TestTheDeliveredDocumentsAreToldBeforeTheModelIsAsked(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(), text("Read."))
	tr := turn(s, newClock(), &syncBuffer{})
	tr.Documents = []ai.Document{{Ref: "digest", Title: "Digest", Text: "0123456789"}, {Ref: "evidence", Title: "Evidence", Text: "abcdefghij"}}
	tr.DocumentBudget = 15
	var told [][]ai.DeliveredDocument
	asked := -1
	tr.OnDelivered = func(docs []ai.DeliveredDocument) {
		told = append(told, docs)
		asked = len(s.Requests())
	}
	res := ai.Run(context.Background(), tr)
	if len(told) != 1 || asked != 0 {
		t.Fatalf("told %d times, after %d requests; want once, before the first", len(told), asked)
	}
	if !slices.Equal(told[0], res.Documents) || told[0][1].Delivery != ai.DeliveredCut {
		t.Fatalf("told %+v, the result says %+v", told[0], res.Documents)
	}
}

func TestTheTurnsLogLinesCarryItsIdentity(t *testing.T) {
	path := filepath.Join(t.TempDir(), "knowledge.sqlite")
	ks, err := knowledge.Open(path, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ks.Close() })
	s := scripted.New(t)
	s.On(scripted.RunID("run-1"), call("source.read", `{"path":"main.go"}`), text("Read."))
	s.On(scripted.RunID("run-2"), text("Nothing to do."))
	failing := readTool(nil)
	failing.Handler = func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("the disk is full") }

	// A builder turn: the executor's context names the run and the application.
	tr := turn(s, newClock(), &syncBuffer{}, failing)
	tr.Log = slog.New(ks.Handler(slog.LevelInfo, nil))
	ctx := origin.WithIdentity(context.Background(), origin.Identity{RunID: "run-1", AppID: "site"})
	if res := ai.Run(ctx, tr); res.Ended != ai.EndAnswered {
		t.Fatalf("ended %s", res.Ended)
	}
	// A turn whose context names nothing still carries its run.
	tr.RunID = "run-2"
	if res := ai.Run(context.Background(), tr); res.Ended != ai.EndAnswered {
		t.Fatalf("ended %s", res.Ended)
	}
	if err := ks.Close(); err != nil { // writes what the handler holds
		t.Fatal(err)
	}
	ks, err = knowledge.Open(path, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	events, err := ks.Log(context.Background(), knowledge.LogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range events {
		got[e.Message+" "+e.RunID.String+" "+e.AppID.String] = true
	}
	for _, want := range []string{"ai: a tool failed run-1 site", "ai: turn ended run-1 site", "ai: turn ended run-2 "} {
		if !got[want] {
			t.Errorf("no line %q among %v", want, got)
		}
	}
}
