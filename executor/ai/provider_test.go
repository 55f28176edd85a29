package ai_test

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/ai/scripted"
)

func TestEachProviderFaultIsOneSentenceOfOurs(t *testing.T) {
	cases := []struct {
		fault    scripted.Fault
		kind     ai.ProviderErrorKind
		sentence string
	}{
		{scripted.Status500, ai.ProviderFailed, "The AI provider failed (HTTP 500)."},
		{scripted.Status401, ai.ProviderKey, "The AI provider refused the key."},
		{scripted.Status403, ai.ProviderKey, "The AI provider refused the key."},
		{scripted.Status404Model, ai.ProviderModel, "The AI provider does not offer the model model-1."},
		{scripted.Status429, ai.ProviderRateLimit, "The AI provider is rate-limiting requests; try again later."},
		{scripted.Status503, ai.ProviderFailed, "The AI provider failed (HTTP 503)."},
		{scripted.Malformed, ai.ProviderMalformed, "The AI provider answered with something that is not a chat completion."},
		{scripted.ConnectionDrop, ai.ProviderDropped, ""},
	}
	for _, c := range cases {
		t.Run(string(c.kind)+"/"+faultName(c.fault), func(t *testing.T) {
			s := scripted.New(t)
			// One step goes well first, so the fault cuts a turn in the
			// middle. A provider that asks to wait is asked again, at once
			// here (Retry-After: 0), until the retries are spent.
			replies := []scripted.Reply{call("source.read", `{"path":"a"}`)}
			for range 1 + ai.MaxRetries {
				replies = append(replies, scripted.Reply{Fault: c.fault, RetryAfter: "0"})
			}
			s.On(scripted.Any(), replies...)
			log := &syncBuffer{}
			tr := turn(s, newClock(), log, readTool(nil))

			res := ai.Run(context.Background(), tr)

			want := c.sentence
			if want == "" {
				want = "The AI provider at " + strings.TrimPrefix(s.URL(), "http://") + " closed the connection without answering."
			}
			if res.Ended != ai.EndProvider || res.Sentence != want || res.Err == nil || res.Err.Kind != c.kind {
				t.Fatalf("ended %s: %q (%v), want %q", res.Ended, res.Sentence, res.Err, want)
			}
			if ai.ErrorSentence(res.Err) != want || res.Err.Error() != want {
				t.Errorf("the error reads %q", res.Err.Error())
			}
			if !res.ToolCalledBeforeFailure {
				t.Error("ToolCalledBeforeFailure is false after a tool call")
			}
			if res.Usage != (ai.Usage{Input: 100, Output: 10, Partial: true}) {
				t.Errorf("usage %+v, want the first step's, partial", res.Usage)
			}
			assertNoRawText(t, s, res)
			if res.Err.Status >= 400 && !strings.Contains(log.String(), scripted.RawDetail) {
				t.Errorf("the raw detail is not in the log:\n%s", log.String())
			}
			if strings.Contains(log.String(), testKey) {
				t.Errorf("the key is in the log:\n%s", log.String())
			}
		})
	}
}

func faultName(f scripted.Fault) string {
	return [...]string{"none", "500", "401", "403", "404", "429", "timeout", "malformed", "drop", "503", "context"}[f]
}

// assertNoRawText checks that the provider's raw text reached neither the
// result nor any request sent to the model.
func assertNoRawText(t *testing.T, s *scripted.Server, res ai.Result) {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), scripted.RawDetail) || strings.Contains(res.Sentence+res.Text, scripted.RawDetail) {
		t.Errorf("the raw text is in the result: %s", b)
	}
	for i, r := range s.Requests() {
		if strings.Contains(string(r.Body), scripted.RawDetail) {
			t.Errorf("request %d carries the raw text", i)
		}
	}
}

func TestAFailureBeforeAnyToolCallIsNotAnAttempt(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(), scripted.Reply{Fault: scripted.Status500})
	res := ai.Run(context.Background(), turn(s, newClock(), &syncBuffer{}, readTool(nil)))
	if res.Ended != ai.EndProvider || res.ToolCalledBeforeFailure {
		t.Fatalf("ended %s, tool called before failure %v", res.Ended, res.ToolCalledBeforeFailure)
	}
	if res.Usage != (ai.Usage{Partial: true}) {
		t.Errorf("usage %+v, want zeros, partial", res.Usage)
	}
}

func TestAProviderThatCannotBeReachedIsNamedByItsHost(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := l.Addr().String()
	l.Close()

	tr := ai.Turn{Endpoint: ai.Endpoint{BaseURL: "http://" + host, APIKey: testKey, Model: "m"}, Message: "hello", Now: time.Now}
	res := ai.Run(context.Background(), tr)
	want := "The AI provider at " + host + " could not be reached."
	if res.Ended != ai.EndProvider || res.Sentence != want || res.Err.Kind != ai.ProviderUnreachable {
		t.Fatalf("ended %s: %q, want %q", res.Ended, res.Sentence, want)
	}

	tr.Endpoint.BaseURL = "localhost:11434"
	if res := ai.Run(context.Background(), tr); res.Ended != ai.EndProvider || res.Err.Kind != ai.ProviderUnreachable {
		t.Errorf("a base URL without a scheme: ended %s: %q", res.Ended, res.Sentence)
	}
}

func TestTheSentencesSayTheirNumbers(t *testing.T) {
	cases := map[string]string{
		ai.TimeoutSentence(60 * time.Second):                 "The AI provider did not answer within 60 seconds.",
		ai.TimeoutSentence(90 * time.Second):                 "The AI provider did not answer within 90 seconds.",
		ai.TimeoutSentence(5 * time.Minute):                  "The AI provider did not answer within 5 minutes.",
		ai.IdleSentence(8 * time.Minute):                     "The turn made no tool call for 8 minutes.",
		ai.WallSentence(20 * time.Minute):                    "The turn ran out of time (20 minutes).",
		ai.StepsSentence(60):                                 "The turn reached its limit of 60 steps.",
		ai.RefusalsSentence(4, "source.edit: find: nothing"): "The turn was refused 4 times for the same reason: source.edit: find: nothing.",
		ai.FailedSentence(503):                               "The AI provider failed (HTTP 503).",
		ai.UnreachableSentence("localhost:11434"):            "The AI provider at localhost:11434 could not be reached.",
		ai.ModelSentence("qwen3:27b"):                        "The AI provider does not offer the model qwen3:27b.",
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
