package executor_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"autoapp/executor"
	"autoapp/executor/ai"
	"autoapp/executor/ai/scripted"
	"autoapp/intent"
	"autoapp/intent/request"
	"autoapp/migrations/migrationstest"
)

func TestEveryTurnLeavesOneUsageRow(t *testing.T) {
	db := migrationstest.Intents(t)
	book := intent.New(db, t.TempDir(), time.Now, intent.Collaborators{Journal: request.Journal{}}).Usage
	model := scripted.New(t)
	echo := ai.Tool{Name: "note.write", Description: "Write a note.",
		Schema:  []byte(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`),
		Example: []byte(`{"text":"hello"}`),
		Handler: func(ctx context.Context, in json.RawMessage) (any, error) {
			return map[string]bool{"written": true}, nil
		}}
	model.On(scripted.RunID("whole"),
		scripted.Reply{ToolCalls: []scripted.Call{{Name: "note_write", Args: `{"text":"a"}`}}, Usage: scripted.Usage{Input: 100, Output: 20}},
		scripted.Reply{Text: "Done.", Usage: scripted.Usage{Input: 150, Output: 5}})
	model.On(scripted.RunID("cut"),
		scripted.Reply{ToolCalls: []scripted.Call{{Name: "note_write", Args: `{"text":"a"}`}}, Usage: scripted.Usage{Input: 80, Output: 10}},
		scripted.Reply{Fault: scripted.Status500})
	model.On(scripted.RunID("silent"), scripted.Reply{Fault: scripted.Status500})

	ep := ai.Endpoint{Provider: "scripted", BaseURL: model.URL(), Model: "small"}
	for _, run := range []string{"whole", "cut", "silent"} {
		executor.RunTurn(context.Background(), book, "notes", ai.Turn{Endpoint: ep, Kind: ai.KindBuilder, RunID: run,
			Instructions: "Write notes.", Message: "Go.", Tools: []ai.Tool{echo}, Now: time.Now})
	}
	rows, err := book.UsageSince(context.Background(), time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []intent.Usage{
		{Kind: "builder", RunID: "whole", AppID: "notes", Model: "scripted:small", Input: 250, Output: 25, Partial: false},
		{Kind: "builder", RunID: "cut", AppID: "notes", Model: "scripted:small", Input: 80, Output: 10, Partial: true},
		{Kind: "builder", RunID: "silent", AppID: "notes", Model: "scripted:small", Input: 0, Output: 0, Partial: true},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, w := range want {
		g := rows[i]
		if g.Kind != w.Kind || g.RunID != w.RunID || g.AppID != w.AppID || g.Model != w.Model ||
			g.Input != w.Input || g.Output != w.Output || g.Partial != w.Partial {
			t.Errorf("row %d: got %+v, want %+v", i, g, w)
		}
	}
}

// TestAChatTurnThatPlannedIsAPlanningTurnInItsUsage: a chat turn whose
// intent tools wrote a plan is counted as planning; one that only talked
// stays chat.
func TestAChatTurnThatPlannedIsAPlanningTurnInItsUsage(t *testing.T) {
	db := migrationstest.Intents(t)
	book := intent.New(db, t.TempDir(), time.Now, intent.Collaborators{Journal: request.Journal{}}).Usage
	model := scripted.New(t)
	plan := ai.Tool{Name: "intent.task", Description: "Add a task.",
		Schema: []byte(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"],"additionalProperties":false}`),
		Handler: func(ctx context.Context, in json.RawMessage) (any, error) {
			return map[string]string{"slug": "0001-a-task"}, nil
		}}
	model.On(scripted.RunID("planned"),
		scripted.Reply{ToolCalls: []scripted.Call{{Name: "intent_task", Args: `{"title":"A task"}`}}, Usage: scripted.Usage{Input: 100, Output: 20}},
		scripted.Reply{Text: "The plan is in the Backlog.", Usage: scripted.Usage{Input: 120, Output: 8}})
	model.On(scripted.RunID("talked"), scripted.Reply{Text: "Which colour?", Usage: scripted.Usage{Input: 50, Output: 4}})
	ep := ai.Endpoint{Provider: "scripted", BaseURL: model.URL(), Model: "small"}
	for _, run := range []string{"planned", "talked"} {
		executor.RunTurn(context.Background(), book, "notes", ai.Turn{Endpoint: ep, Kind: ai.KindChat, RunID: run,
			Instructions: "Plan.", Message: "Go.", Tools: []ai.Tool{plan}, Now: time.Now})
	}
	rows, err := book.UsageSince(context.Background(), time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Kind != intent.KindPlanning || rows[1].Kind != intent.KindChat {
		t.Fatalf("rows %+v, want planning then chat", rows)
	}
}
