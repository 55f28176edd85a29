package scripted_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"autoapp/executor/ai/scripted"
)

// post sends a chat completion request with the messages given as role,
// content pairs and returns the status and body.
func post(t *testing.T, s *scripted.Server, header map[string]string, pairs ...string) (int, string) {
	t.Helper()
	var msgs []map[string]string
	for i := 0; i+1 < len(pairs); i += 2 {
		msgs = append(msgs, map[string]string{"role": pairs[i], "content": pairs[i+1]})
	}
	body, _ := json.Marshal(map[string]any{"model": "m", "messages": msgs})
	req, err := http.NewRequest("POST", s.URL()+"/v1/chat/completions", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func content(t *testing.T, body string) string {
	t.Helper()
	var c struct {
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(body), &c); err != nil || len(c.Choices) != 1 {
		t.Fatalf("not a completion: %s", body)
	}
	if c.Choices[0].Message.Content == nil {
		return ""
	}
	return *c.Choices[0].Message.Content
}

func TestScriptsAnswerTheRequestsTheyMatchInOrder(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.RunID("run-7"), scripted.Reply{Text: "run by header"}, scripted.Reply{Text: "run in a message"})
	s.On(scripted.Contains("footer"), scripted.Reply{Text: "footer 1"}, scripted.Reply{Text: "footer 2"})
	s.On(scripted.Mentions("[lesson 12]"), scripted.Reply{Text: "a lesson mentioned"})
	s.On(scripted.Contains("You plan"), scripted.Reply{Text: "planner"})
	s.On(scripted.Any(), scripted.Reply{Text: "anything"})

	cases := []struct {
		header map[string]string
		pairs  []string
		want   string
	}{
		{map[string]string{scripted.RunHeader: "run-7"}, []string{"user", "hello"}, "run by header"},
		{nil, []string{"user", "for run-7: go"}, "run in a message"},
		{nil, []string{"user", "add a footer"}, "footer 1"},
		{nil, []string{"user", "the footer again", "assistant", "ok", "user", "a footer, please"}, "footer 2"},
		// A document mentions it, not the last user message.
		{nil, []string{"user", "<document>[lesson 12] Keep the page whole.</document>", "user", "Build the task."}, "a lesson mentioned"},
		// The footer script is used up: the request falls through.
		{nil, []string{"system", "You plan.", "user", "a footer"}, "planner"},
		{nil, []string{"user", "an earlier footer", "user", "something else"}, "anything"},
	}
	for i, c := range cases {
		status, body := post(t, s, c.header, c.pairs...)
		if status != 200 || content(t, body) != c.want {
			t.Errorf("request %d: %d %s, want %q", i, status, body, c.want)
		}
	}
	if s.Count() != len(cases) {
		t.Errorf("count %d", s.Count())
	}
	r := s.Requests()[3]
	if r.Model != "m" || len(r.Messages) != 3 || r.LastUser() != "a footer, please" || r.Path != "/v1/chat/completions" {
		t.Errorf("recorded %+v", r)
	}
}

func TestARepliesToolCallsAndUsageAreAnswered(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(), scripted.Reply{
		ToolCalls: []scripted.Call{{Name: "source.read", Args: `{"path":"a"}`}},
		Usage:     scripted.Usage{Input: 12, Output: 3},
	}, scripted.Reply{Text: "no usage"})
	_, body := post(t, s, nil, "user", "hi")
	var c struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(body), &c); err != nil {
		t.Fatal(err)
	}
	tc := c.Choices[0].Message.ToolCalls
	if len(tc) != 1 || tc[0].Function.Name != "source_read" || tc[0].Function.Arguments != `{"path":"a"}` || tc[0].ID == "" {
		t.Errorf("tool calls %+v", tc)
	}
	if c.Choices[0].FinishReason != "tool_calls" || c.Usage == nil || c.Usage.PromptTokens != 12 || c.Usage.CompletionTokens != 3 {
		t.Errorf("finish %q, usage %+v", c.Choices[0].FinishReason, c.Usage)
	}
	_, body = post(t, s, nil, "user", "hi")
	if strings.Contains(body, `"usage"`) {
		t.Errorf("a zero usage was reported: %s", body)
	}
}

func TestFaultsAnswerWhatTheyName(t *testing.T) {
	cases := []struct {
		fault  scripted.Fault
		status int
	}{
		{scripted.Status500, 500}, {scripted.Status401, 401}, {scripted.Status403, 403},
		{scripted.Status404Model, 404}, {scripted.Status429, 429}, {scripted.Malformed, 200},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.status), func(t *testing.T) {
			s := scripted.New(t)
			s.On(scripted.Any(), scripted.Reply{Fault: c.fault})
			status, body := post(t, s, nil, "user", "hi")
			if status != c.status || !strings.Contains(body, scripted.RawDetail) {
				t.Errorf("%d %s", status, body)
			}
			if c.fault == scripted.Malformed && json.Valid([]byte(body)) {
				t.Errorf("the malformed body is valid JSON: %s", body)
			}
		})
	}
	t.Run("drop", func(t *testing.T) {
		s := scripted.New(t)
		s.On(scripted.Any(), scripted.Reply{Fault: scripted.ConnectionDrop})
		res, err := http.Post(s.URL()+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
		if err == nil {
			res.Body.Close()
			t.Fatalf("answered %d", res.StatusCode)
		}
	})
}

func TestModelsAreListed(t *testing.T) {
	s := scripted.New(t)
	s.Models("a", "b")
	res, err := http.Get(s.URL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var list struct {
		Data []struct{ ID string } `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil || len(list.Data) != 2 || list.Data[1].ID != "b" {
		t.Errorf("list %+v, %v", list, err)
	}
	if s.Count() != 1 || s.Requests()[0].Path != "/v1/models" {
		t.Errorf("recorded %+v", s.Requests())
	}
}

// recorder is a testing.TB that keeps what the server reports as an error.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestAnUnscriptedRequestFailsLoudly(t *testing.T) {
	rec := &recorder{TB: t}
	s := scripted.New(rec)
	s.On(scripted.Contains("footer"), scripted.Reply{Text: "ok"})
	status, body := post(t, s, nil, "user", "a header")
	if status != 500 || !strings.Contains(body, "no script answers this request") {
		t.Errorf("%d %s", status, body)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], `"a header"`) {
		t.Errorf("reported %q", rec.errors)
	}
}
