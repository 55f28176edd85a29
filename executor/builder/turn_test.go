package builder_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/ai/scripted"
	"autoapp/executor/builder"
	"autoapp/executor/candidate"
)

func TestAScriptedTurnWritesItsExampleAndCyclesToAPass(t *testing.T) {
	h := newHost(t)
	s := newSession(t, h, nil)
	m := scripted.New(t)
	m.On(scripted.Any(),
		scripted.Reply{ToolCalls: []scripted.Call{{Name: "spec_read", Args: `{"topic": "examples"}`}}},
		// An input the schema refuses never reaches a handler.
		scripted.Reply{ToolCalls: []scripted.Call{{Name: "source_change", Args: `{"files": "acceptance/x.json"}`}}},
		scripted.Reply{ToolCalls: []scripted.Call{{Name: "source_change", Args: createFile("acceptance/"+slug+"-c1.json", example(200, "<h1>"))}}},
		scripted.Reply{ToolCalls: []scripted.Call{{Name: "candidate_cycle", Args: `{}`}}},
		scripted.Reply{Text: "Done: the heading is checked by " + slug + "-c1."},
	)
	res := ai.Run(context.Background(), ai.Turn{
		Endpoint:     ai.Endpoint{BaseURL: m.URL(), Model: "m"},
		Kind:         ai.KindBuilder,
		RunID:        runID,
		Instructions: builder.Instructions,
		Message:      builder.Message(appID, task(), "", nil, ""),
		Tools:        s.Tools(),
		OnStep:       s.Observe,
		Now:          time.Now,
	})
	if res.Ended != ai.EndAnswered {
		t.Fatalf("ended %s: %s", res.Ended, res.Sentence)
	}
	if len(res.Calls) != 4 {
		t.Fatalf("calls: %d", len(res.Calls))
	}
	var cycle struct {
		OK     bool `json:"ok"`
		Result struct {
			Step   string `json:"step"`
			Checks string `json:"checks"`
			Next   string `json:"next"`
		} `json:"result"`
	}
	if err := json.Unmarshal(res.Calls[3].Result, &cycle); err != nil {
		t.Fatal(err)
	}
	if !cycle.OK || cycle.Result.Step != candidate.StepChecked || cycle.Result.Checks != "passed 2 of 2" ||
		!strings.HasSuffix(cycle.Result.Next, builder.AllPassed) {
		t.Fatalf("the cycle's answer: %s", res.Calls[3].Result)
	}
	var change struct {
		Result struct {
			Verification struct {
				Next string `json:"next"`
			} `json:"verification"`
		} `json:"result"`
	}
	if err := json.Unmarshal(res.Calls[2].Result, &change); err != nil || change.Result.Verification.Next != "candidate.cycle" {
		t.Fatalf("the change's answer: %s", res.Calls[2].Result)
	}

	// The model was offered every tool under its wire name, and told the rules.
	first := m.Requests()[0]
	if got := strings.Join(first.ToolNames(), " "); got != "source_list source_read source_search source_edit source_change candidate_cycle candidate_build spec_read intent_ask knowledge_show" {
		t.Fatalf("tools offered: %s", got)
	}
	if !strings.HasPrefix(first.LastUser(), "Application: site") || first.Messages[0].Content != builder.Instructions {
		t.Fatalf("messages: %+v", first.Messages)
	}

	r := s.Record()
	if r.Edits != 1 || r.EditedAfterBuild || !r.Built || r.LastCycle == nil || len(r.LastCycle.Failed) != 0 {
		t.Fatalf("record: %+v", r)
	}
	if len(r.Refused) != 1 || r.Refused[0].Tool != "source.change" || !r.Refused[0].Edit || r.Refused[0].Problems[0].Field != "files" {
		t.Fatalf("refused: %+v", r.Refused)
	}
	if got := builder.SummariseRefusals(r.Refused); len(got) != 1 || got[0] != "1 edit was refused: files: expected an array, not a string." {
		t.Fatalf("summary: %q", got)
	}
	st, err := h.candidates.State(appID)
	if err != nil || st.Checks == nil || st.Checks.Passed != 2 {
		t.Fatalf("candidate.json: %+v %v", st.Checks, err)
	}
}
