package ai_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/ai/scripted"
)

var adviceSchema = json.RawMessage(`{
	"type": "object",
	"properties": {
		"diagnosis": {"type": "string", "minLength": 1},
		"advice": {"type": "string", "enum": ["retry", "revise", "split", "ask"]},
		"note": {"type": "string"}
	},
	"required": ["diagnosis", "advice", "note"],
	"additionalProperties": false
}`)

type advice struct {
	Diagnosis string `json:"diagnosis"`
	Advice    string `json:"advice"`
	Note      string `json:"note"`
}

func TestAskDecodesAnAnswerThatMatchesTheSchema(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Contains("The task failed twice."), scripted.Reply{
		Text:  "```json\n{\"diagnosis\":\"The route is missing.\",\"advice\":\"retry\",\"note\":\"\"}\n```",
		Usage: scripted.Usage{Input: 40, Output: 12},
	})
	var got advice
	u, err := ai.Ask(context.Background(), time.Now, endpoint(s), "You advise.", "The task failed twice.", adviceSchema, time.Second, &got)
	if err != nil {
		t.Fatal(err)
	}
	if got != (advice{Diagnosis: "The route is missing.", Advice: "retry"}) || u != (ai.Usage{Input: 40, Output: 12}) {
		t.Errorf("got %+v, usage %+v", got, u)
	}
	r := s.Requests()[0]
	if !strings.Contains(string(r.ResponseFormat), `"json_schema"`) || !strings.Contains(string(r.ResponseFormat), `"diagnosis"`) {
		t.Errorf("response_format %s", r.ResponseFormat)
	}
	if r.Authorization() != "Bearer "+testKey || len(r.Tools) != 0 || r.Messages[0].Role != "system" || !strings.Contains(r.Messages[0].Content, "You advise.") {
		t.Errorf("the request: %+v", r)
	}
}

func TestAskReturnsAnErrorAndNothingElse(t *testing.T) {
	cases := []struct {
		name  string
		reply scripted.Reply
		kind  ai.ProviderErrorKind
	}{
		{"not JSON", scripted.Reply{Text: "I think you should retry.", Usage: scripted.Usage{Input: 1, Output: 1}}, ai.ProviderUnusable},
		{"not the schema", scripted.Reply{Text: `{"diagnosis":"x","advice":"pray","note":""}`}, ai.ProviderUnusable},
		{"a tool call", scripted.Reply{ToolCalls: []scripted.Call{{Name: "x", Args: "{}"}}}, ai.ProviderUnusable},
		{"no answer in time", scripted.Reply{Fault: scripted.Timeout}, ai.ProviderTimeout},
		{"a failed provider", scripted.Reply{Fault: scripted.Status500}, ai.ProviderFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := scripted.New(t)
			s.On(scripted.Any(), c.reply)
			got := advice{Note: "untouched"}
			_, err := ai.Ask(context.Background(), time.Now, endpoint(s), "You advise.", "Why?", adviceSchema, 200*time.Millisecond, &got)
			var pe *ai.ProviderError
			if !errors.As(err, &pe) || pe.Kind != c.kind {
				t.Fatalf("err %v, want a %s ProviderError", err, c.kind)
			}
			if got != (advice{Note: "untouched"}) {
				t.Errorf("out was changed: %+v", got)
			}
			if strings.Contains(err.Error(), scripted.RawDetail) || strings.Contains(err.Error(), "pray") {
				t.Errorf("the error carries raw text: %q", err.Error())
			}
		})
	}
	t.Run("the time limit is in the sentence", func(t *testing.T) {
		s := scripted.New(t)
		s.On(scripted.Any(), scripted.Reply{Fault: scripted.Timeout})
		var got advice
		_, err := ai.Ask(context.Background(), time.Now, endpoint(s), "", "Why?", adviceSchema, 300*time.Millisecond, &got)
		if ai.ErrorSentence(err) != "The AI provider did not answer within 0.3 seconds." {
			t.Errorf("sentence %q", ai.ErrorSentence(err))
		}
	})
}

func TestModelsListsWhatTheProviderOffers(t *testing.T) {
	s := scripted.New(t)
	s.Models("qwen3:27b", "llama3.3")
	ids, err := ai.Models(context.Background(), endpoint(s), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{"llama3.3", "qwen3:27b"}) {
		t.Errorf("models %v", ids)
	}
	if r := s.Requests()[0]; r.Path != "/v1/models" || r.Authorization() != "Bearer "+testKey {
		t.Errorf("request %s with %q", r.Path, r.Authorization())
	}
}
