package ai_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/ai/scripted"
)

// progressLog keeps what a turn said of its model's progress.
type progressLog struct {
	mu   sync.Mutex
	seen []ai.Progress
}

func (p *progressLog) add(g ai.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, g)
}

func (p *progressLog) all() []ai.Progress {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ai.Progress(nil), p.seen...)
}

// realTurn is a turn on the real clock, whose limits are applied as real
// time, with its progress kept.
func realTurn(s *scripted.Server, limits ai.Limits, tools ...ai.Tool) (ai.Turn, *progressLog) {
	tr := turn(s, nil, &syncBuffer{}, tools...)
	tr.Now = time.Now
	tr.Limits = limits
	p := &progressLog{}
	tr.OnProgress = p.add
	return tr, p
}

func TestASlowModelWithinTheLimitsIsNotAFault(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(),
		scripted.Reply{ToolCalls: []scripted.Call{{Name: "source.read", Args: `{"path":"main.go"}`}}, FirstToken: 1500 * time.Millisecond,
			Every: 20 * time.Millisecond, Usage: scripted.Usage{Input: 900, Output: 30}},
		scripted.Reply{Text: "The footer is there now, on every page.", FirstToken: 1500 * time.Millisecond, Every: 20 * time.Millisecond,
			Usage: scripted.Usage{Input: 1000, Output: 12}})
	tr, progress := realTurn(s, ai.Limits{Idle: 3 * time.Second, Wall: 10 * time.Second}, readTool(nil))

	res := ai.Run(context.Background(), tr)
	if res.Ended != ai.EndAnswered || res.Text != "The footer is there now, on every page." {
		t.Fatalf("ended %s: %q %q, want the answer", res.Ended, res.Sentence, res.Text)
	}
	if res.Usage != (ai.Usage{Input: 1900, Output: 42}) {
		t.Errorf("usage %+v, want the stream's usage of both steps, whole", res.Usage)
	}
	for _, r := range s.Requests() {
		if !r.Stream || !r.IncludeUsage {
			t.Errorf("a request did not ask to stream with its usage: %s", r.Body)
		}
	}
	// The page could say the model was reading, then that it was writing.
	seen := progress.all()
	if len(seen) == 0 || seen[0].Tokens != 0 || seen[0].Asked.IsZero() {
		t.Fatalf("progress %+v, want the request first, with no token yet", seen)
	}
	most := 0
	for _, p := range seen {
		most = max(most, p.Tokens)
	}
	if most < 5 {
		t.Errorf("the most tokens seen streaming is %d, want the pieces counted as they came", most)
	}
}

func TestAModelSilentPastTheIdleLimitEndsTheTurnAsIdle(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(), scripted.Reply{Text: "too late", FirstToken: 10 * time.Second})
	tr, _ := realTurn(s, ai.Limits{Idle: time.Second, Wall: time.Minute})
	start := time.Now()
	res := ai.Run(context.Background(), tr)
	if res.Ended != ai.EndIdle || res.Sentence != "The turn made no tool call for 1 second." {
		t.Fatalf("ended %s: %q, want the idle ending", res.Ended, res.Sentence)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the idle turn took %s to end", took)
	}
}

func TestAStreamDroppedHalfWayIsAProviderFault(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(), scripted.Reply{Text: "one two three four five six seven eight", DropAfter: 3})
	tr, _ := realTurn(s, ai.Limits{})
	res := ai.Run(context.Background(), tr)
	want := "The AI provider at " + strings.TrimPrefix(s.URL(), "http://") + " closed the connection without answering."
	if res.Ended != ai.EndProvider || res.Err == nil || res.Err.Kind != ai.ProviderDropped || res.Sentence != want {
		t.Fatalf("ended %s: %q (%v), want %q", res.Ended, res.Sentence, res.Err, want)
	}
	if res.ToolCalledBeforeFailure {
		t.Error("a turn that failed before any tool call counts as an attempt")
	}
}

func TestARateLimitIsWaitedOutAndTheRequestSentAgain(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(),
		scripted.Reply{Fault: scripted.Status429, RetryAfter: "1"},
		scripted.Reply{Fault: scripted.Status503, RetryAfter: time.Now().Add(3 * time.Second).UTC().Format(http1123)},
		scripted.Reply{Text: "Done."})
	tr, progress := realTurn(s, ai.Limits{})
	start := time.Now()
	res := ai.Run(context.Background(), tr)
	if res.Ended != ai.EndAnswered || res.Text != "Done." {
		t.Fatalf("ended %s: %q, want the answer after the waits", res.Ended, res.Sentence)
	}
	if took := time.Since(start); took < 2*time.Second {
		t.Errorf("the turn took %s: it did not wait as asked", took)
	}
	if n := s.Count(); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	var waits []string
	for _, p := range progress.all() {
		if p.Wait > 0 {
			waits = append(waits, ai.WaitSentence(p.Wait, p.Why))
		}
	}
	if len(waits) != 2 || waits[0] != "The provider asked to wait 1 s (rate limit)." || !strings.HasSuffix(waits[1], "(overloaded).") {
		t.Errorf("the waits said %q", waits)
	}
}

const http1123 = "Mon, 02 Jan 2006 15:04:05 GMT"

func TestARateLimitThatDoesNotLiftFailsAfterThreeRetries(t *testing.T) {
	s := scripted.New(t)
	for range 4 {
		s.On(scripted.Any(), scripted.Reply{Fault: scripted.Status429, RetryAfter: "0"})
	}
	tr, _ := realTurn(s, ai.Limits{})
	res := ai.Run(context.Background(), tr)
	if res.Ended != ai.EndProvider || res.Err.Kind != ai.ProviderRateLimit || res.ToolCalledBeforeFailure {
		t.Fatalf("ended %s: %q, want the rate limit, not an attempt", res.Ended, res.Sentence)
	}
	if n := s.Count(); n != 1+ai.MaxRetries {
		t.Errorf("%d requests, want %d", n, 1+ai.MaxRetries)
	}
}

func TestAWaitLongerThanTwoMinutesIsNotWaited(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(), scripted.Reply{Fault: scripted.Status429, RetryAfter: "600"})
	tr, _ := realTurn(s, ai.Limits{})
	start := time.Now()
	res := ai.Run(context.Background(), tr)
	if res.Ended != ai.EndProvider || res.Err.Kind != ai.ProviderRateLimit || time.Since(start) > 5*time.Second || s.Count() != 1 {
		t.Fatalf("ended %s: %q after %s and %d requests, want the rate limit at once", res.Ended, res.Sentence, time.Since(start), s.Count())
	}
}

func TestAContextWindowTooSmallIsSaidInASentence(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(), scripted.Reply{Fault: scripted.ContextExceeded, ContextTokens: 8192})
	tr, _ := realTurn(s, ai.Limits{})
	res := ai.Run(context.Background(), tr)
	want := "The model's context window (8,192 tokens) is too small for this turn's documents."
	if res.Ended != ai.EndProvider || res.Err.Kind != ai.ProviderContext || res.Sentence != want || res.ToolCalledBeforeFailure {
		t.Fatalf("ended %s: %q, want %q, not an attempt", res.Ended, res.Sentence, want)
	}
	assertNoRawText(t, s, res)
}

func TestTheModelsReasoningReachesNeitherThePersonNorTheTools(t *testing.T) {
	s := scripted.New(t)
	var got []string
	tool := readTool(nil)
	handler := tool.Handler
	tool.Handler = func(ctx context.Context, input json.RawMessage) (any, error) {
		got = append(got, string(input))
		return handler(ctx, input)
	}
	s.On(scripted.Any(),
		scripted.Reply{Reasoning: "I should read the file first.", ToolCalls: []scripted.Call{{Name: "source.read", Args: `<think>path is main.go</think>{"path":"main.go"}`}}},
		scripted.Reply{Reasoning: "secret musing", Text: "<think>The person must not read this.</think>The footer is added."})
	tr, _ := realTurn(s, ai.Limits{}, tool)
	res := ai.Run(context.Background(), tr)
	if res.Ended != ai.EndAnswered || res.Text != "The footer is added." {
		t.Fatalf("ended %s: %q, want the answer without its reasoning", res.Ended, res.Text)
	}
	if len(got) != 1 || got[0] != `{"path":"main.go"}` {
		t.Errorf("the tool was given %q", got)
	}
	for i, r := range s.Requests() {
		if strings.Contains(string(r.Body), "think>") || strings.Contains(string(r.Body), "musing") {
			t.Errorf("request %d sent the reasoning back: %s", i, r.Body)
		}
	}
}

func TestTheToolTestSaysWhetherTheModelCallsTools(t *testing.T) {
	cases := []struct {
		name  string
		reply scripted.Reply
		ok    bool
		want  string
	}{
		{"a tool call", scripted.Reply{Reasoning: "easy", ToolCalls: []scripted.Call{{Name: "echo", Args: `{"word":"ready"}`}}}, true, "model-1 calls tools: yes ("},
		{"text instead", scripted.Reply{Text: `echo("ready")`}, false,
			"model-1 answered in text instead of calling the tool: choose a model with tool support, or start llama.cpp's server with --jinja."},
		{"a call written as text", scripted.Reply{Text: "<tool_call>\n{\"name\": \"echo\", \"arguments\": {\"word\": \"ready\"}}\n</tool_call>", TextPieces: 5}, true,
			"model-1 calls tools (written as text; the launcher reads them): yes ("},
		{"bad arguments", scripted.Reply{ToolCalls: []scripted.Call{{Name: "echo", Args: `{"text":"ready"}`}}}, false, "model-1 called the tool, but its arguments do not match"},
		{"a provider fault", scripted.Reply{Fault: scripted.Status401}, false, "model-1: The AI provider refused the key."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := scripted.New(t)
			s.On(scripted.Any(), c.reply)
			ok, sentence := ai.ProbeTools(context.Background(), endpoint(s), time.Now)
			if ok != c.ok || !strings.HasPrefix(sentence, c.want) {
				t.Errorf("ProbeTools = %v %q, want %v %q", ok, sentence, c.ok, c.want)
			}
			if strings.Contains(sentence, scripted.RawDetail) {
				t.Errorf("the provider's raw text is in %q", sentence)
			}
		})
	}
}

func TestTheDocumentsAreCutToTheModelsContextWindow(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(), scripted.Reply{Text: "Read."})
	tr, _ := realTurn(s, ai.Limits{})
	tr.Endpoint.ContextTokens = 2048 // room for 1,024 tokens, about 3,000 characters
	tr.Documents = []ai.Document{{Ref: "digest:app", Title: "Digest", Text: strings.Repeat("d", 2000)},
		{Ref: "evidence:app", Title: "Evidence", Text: strings.Repeat("e", 4000)}}
	res := ai.Run(context.Background(), tr)
	if res.Ended != ai.EndAnswered {
		t.Fatalf("ended %s: %q", res.Ended, res.Sentence)
	}
	if d := res.Documents; d[0].Delivery != ai.DeliveredWhole || d[1].Delivery != ai.DeliveredCut || d[0].Delivered+d[1].Delivered > 3072 {
		t.Errorf("delivered %+v, want the first whole and the second cut to fit", d)
	}
	if n := len(s.Requests()[0].Body); n > 2048*4 {
		t.Errorf("the request is %d bytes, too long for a 2,048-token window", n)
	}

	// A window too small for the instructions and message alone asks nothing.
	s2 := scripted.New(t)
	tr2, _ := realTurn(s2, ai.Limits{})
	tr2.Endpoint.ContextTokens = 1024
	tr2.Instructions = strings.Repeat("Build carefully. ", 100)
	res = ai.Run(context.Background(), tr2)
	if res.Ended != ai.EndProvider || res.Err.Kind != ai.ProviderContext || res.Sentence != "The model's context window (1,024 tokens) is too small for this turn's documents." || s2.Count() != 0 {
		t.Errorf("ended %s: %q after %d requests, want the context sentence and nothing sent", res.Ended, res.Sentence, s2.Count())
	}
}
