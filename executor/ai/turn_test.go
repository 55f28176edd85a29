package ai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/ai/scripted"
	"autoapp/intent/refusal"
)

func TestTheExamplesOfTheTestToolsHoldToTheirSchemas(t *testing.T) {
	for _, tool := range []ai.Tool{readTool(nil), editTool(), askTool()} {
		if err := ai.CheckExample(tool); err != nil {
			t.Errorf("%s: %v", tool.Name, err)
		}
	}
}

func TestCheckExampleRefusesWhatCannotBeOffered(t *testing.T) {
	cases := map[string]ai.Tool{
		"an example its schema refuses": {Name: "source.read", Schema: readSchema, Example: json.RawMessage(`{"file":"a"}`)},
		"no example":                    {Name: "source.read", Schema: readSchema},
		"an unsupported keyword":        {Name: "source.read", Schema: json.RawMessage(`{"type":"object","oneOf":[]}`), Example: json.RawMessage(`{}`)},
		"a name the API refuses":        {Name: "source read", Schema: readSchema, Example: json.RawMessage(`{"path":"a"}`)},
	}
	for name, tool := range cases {
		t.Run(name, func(t *testing.T) {
			if err := ai.CheckExample(tool); err == nil {
				t.Error("CheckExample accepted it")
			}
		})
	}
}

func TestAMultiStepTurnRunsEachToolAndRecordsTheCalls(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.RunID("run-1"),
		call("source.read", `{"path":"main.go"}`),
		call("source.edit", `{"path":"main.go","find":"main","replace":"app"}`),
		scripted.Reply{Text: "The footer is added.", Usage: scripted.Usage{Input: 300, Output: 30}},
	)
	c := newClock()
	var steps []ai.Call
	var usages []ai.Usage
	tr := turn(s, c, &syncBuffer{}, readTool(func(context.Context) { c.Advance(2 * time.Second) }), editTool())
	tr.OnStep = func(c ai.Call) { steps = append(steps, c) }
	tr.OnUsage = func(u ai.Usage) { usages = append(usages, u) }

	res := ai.Run(context.Background(), tr)

	if res.Ended != ai.EndAnswered || res.Text != "The footer is added." {
		t.Fatalf("ended %s (%s) with %q", res.Ended, res.Sentence, res.Text)
	}
	if len(res.Calls) != 2 || res.Calls[0].Name != "source.read" || res.Calls[1].Name != "source.edit" {
		t.Fatalf("calls: %+v", res.Calls)
	}
	if string(res.Calls[0].Input) != `{"path":"main.go"}` || !res.Calls[0].OK || res.Calls[0].Took != 2*time.Second {
		t.Errorf("the first call: %+v", res.Calls[0])
	}
	if a := decodeAnswer(t, string(res.Calls[1].Result)); !a.OK || string(a.Result) != `{"changed":1,"path":"main.go"}` {
		t.Errorf("the second call answered %s", res.Calls[1].Result)
	}
	if len(steps) != 2 || steps[1].Name != "source.edit" {
		t.Errorf("OnStep saw %+v", steps)
	}
	wantUsage := []ai.Usage{{Input: 100, Output: 10}, {Input: 200, Output: 20}, {Input: 500, Output: 50}}
	if !slices.Equal(usages, wantUsage) {
		t.Errorf("OnUsage saw %+v, want %+v", usages, wantUsage)
	}
	if res.Usage != (ai.Usage{Input: 500, Output: 50}) {
		t.Errorf("usage %+v", res.Usage)
	}

	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	first := reqs[0]
	if first.Model != "model-1" || first.Authorization() != "Bearer "+testKey || first.Header.Get(scripted.RunHeader) != "run-1" {
		t.Errorf("the first request: model %q, authorization %q, run %q", first.Model, first.Authorization(), first.Header.Get(scripted.RunHeader))
	}
	if !slices.Equal(first.ToolNames(), []string{"source_read", "source_edit"}) {
		t.Errorf("tools offered: %v", first.ToolNames())
	}
	if first.Messages[0].Role != "system" || first.Messages[0].Content != "You build the task." || first.LastUser() != "Add a footer." {
		t.Errorf("the first request's messages: %+v", first.Messages)
	}
	third := reqs[2]
	answers := toolAnswers(third)
	if len(answers) != 2 {
		t.Fatalf("the third request carries %d tool answers, want 2", len(answers))
	}
	var assistant []scripted.Call
	for _, m := range third.Messages {
		assistant = append(assistant, m.ToolCalls...)
	}
	if len(assistant) != 2 || assistant[0].ID != answers[0].ToolCallID || assistant[1].ID != answers[1].ToolCallID || assistant[0].Name != "source_read" {
		t.Errorf("tool calls %+v do not pair with answers %+v", assistant, answers)
	}
	if a := decodeAnswer(t, answers[0].Content); !a.OK || !strings.Contains(string(a.Result), "package main") {
		t.Errorf("the read answered %s", answers[0].Content)
	}
}

func TestModelTimeIsTheTimeTheModelWasWaitedOnAndNotTheTools(t *testing.T) {
	s := scripted.New(t)
	c := newClock()
	slow := func(d time.Duration, r scripted.Reply) scripted.Reply {
		r.Before = func() { c.Advance(d) }
		return r
	}
	s.On(scripted.RunID("run-1"),
		slow(3*time.Second, call("source.read", `{"path":"main.go"}`)),
		slow(5*time.Second, text("Read.")))
	tr := turn(s, c, &syncBuffer{}, readTool(func(context.Context) { c.Advance(2 * time.Second) }))

	res := ai.Run(context.Background(), tr)

	if res.Ended != ai.EndAnswered || len(res.Calls) != 1 {
		t.Fatalf("ended %s with %d calls", res.Ended, len(res.Calls))
	}
	if res.ModelTime != 8*time.Second || res.Calls[0].Took != 2*time.Second {
		t.Fatalf("model time %s and tool time %s, want 8s and 2s", res.ModelTime, res.Calls[0].Took)
	}
}

func TestTheStepCapEndsATurn(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(), call("source.read", `{"path":"a"}`), call("source.read", `{"path":"b"}`), call("source.read", `{"path":"c"}`))
	tr := turn(s, newClock(), &syncBuffer{}, readTool(nil))
	tr.Limits.Steps = 2

	res := ai.Run(context.Background(), tr)

	if res.Ended != ai.EndSteps || res.Sentence != "The turn reached its limit of 2 steps." {
		t.Fatalf("ended %s: %q", res.Ended, res.Sentence)
	}
	if s.Count() != 2 || len(res.Calls) != 2 {
		t.Errorf("%d requests and %d calls, want 2 and 2", s.Count(), len(res.Calls))
	}
	if !res.Usage.Partial || res.Usage.Input != 200 {
		t.Errorf("usage %+v, want 200 input, partial", res.Usage)
	}
}

func TestTheWallLimitEndsATurn(t *testing.T) {
	t.Run("while a tool runs", func(t *testing.T) {
		s := scripted.New(t)
		s.On(scripted.Any(), call("source.read", `{"path":"a"}`))
		c := newClock()
		res := ai.Run(context.Background(), turn(s, c, &syncBuffer{}, readTool(func(context.Context) { c.Advance(21 * time.Minute) })))
		if res.Ended != ai.EndWall || res.Sentence != "The turn ran out of time (20 minutes)." {
			t.Fatalf("ended %s: %q", res.Ended, res.Sentence)
		}
		if s.Count() != 1 || len(res.Calls) != 1 || !res.Usage.Partial {
			t.Errorf("%d requests, %d calls, usage %+v", s.Count(), len(res.Calls), res.Usage)
		}
	})
	t.Run("while the model thinks", func(t *testing.T) {
		s := scripted.New(t)
		c := newClock()
		slow := call("source.read", `{"path":"b"}`)
		slow.Before = func() { c.Advance(7 * time.Minute) }
		s.On(scripted.Any(), slow, slow, slow)
		tr := turn(s, c, &syncBuffer{}, readTool(nil))
		tr.Limits.Wall = 15 * time.Minute
		res := ai.Run(context.Background(), tr)
		if res.Ended != ai.EndWall || res.Sentence != "The turn ran out of time (15 minutes)." {
			t.Fatalf("ended %s: %q", res.Ended, res.Sentence)
		}
		// The third answer came after the limit: its call is not run.
		if s.Count() != 3 || len(res.Calls) != 2 {
			t.Errorf("%d requests and %d calls, want 3 and 2", s.Count(), len(res.Calls))
		}
	})
}

func TestTheIdleLimitEndsATurnWithoutToolCalls(t *testing.T) {
	s := scripted.New(t)
	c := newClock()
	slow := call("source.read", `{"path":"b"}`)
	slow.Before = func() { c.Advance(9 * time.Minute) }
	s.On(scripted.Any(), call("source.read", `{"path":"a"}`), slow)
	res := ai.Run(context.Background(), turn(s, c, &syncBuffer{}, readTool(nil)))
	if res.Ended != ai.EndIdle || res.Sentence != "The turn made no tool call for 8 minutes." {
		t.Fatalf("ended %s: %q", res.Ended, res.Sentence)
	}
	if len(res.Calls) != 1 || !res.Usage.Partial || res.Usage.Input != 200 {
		t.Errorf("%d calls, usage %+v", len(res.Calls), res.Usage)
	}
}

func TestTheIdleClockIsHeldWhileAToolRuns(t *testing.T) {
	s := scripted.New(t)
	c := newClock()
	s.On(scripted.Any(), call("source.read", `{"path":"a"}`), text("Read."))
	tr := turn(s, c, &syncBuffer{}, readTool(func(context.Context) { c.Advance(30 * time.Minute) }))
	tr.Limits.Wall = 2 * time.Hour
	res := ai.Run(context.Background(), tr)
	if res.Ended != ai.EndAnswered {
		t.Fatalf("ended %s: %q", res.Ended, res.Sentence)
	}
}

func TestHoldIdleHoldsTheClockUntilReleased(t *testing.T) {
	s := scripted.New(t)
	c := newClock()
	var release func()
	wait := func(ctx context.Context) { release = ai.HoldIdle(ctx) }
	answered := func(context.Context) { release() }
	asking := readTool(wait)
	asking.Name = "gate.ask"
	answering := readTool(answered)
	answering.Name = "gate.answered"

	slow := func(r scripted.Reply) scripted.Reply {
		r.Before = func() { c.Advance(9 * time.Minute) }
		return r
	}
	s.On(scripted.Any(),
		call("gate.ask", `{"path":"a"}`),
		// The person takes their time: the clock is held after the call.
		slow(call("gate.answered", `{"path":"b"}`)),
		// Released and restarted by the call: a slow model is idle again.
		slow(text("never read")),
	)
	tr := turn(s, c, &syncBuffer{}, asking, answering)
	tr.Limits.Wall = 2 * time.Hour
	res := ai.Run(context.Background(), tr)
	if res.Ended != ai.EndIdle || len(res.Calls) != 2 {
		t.Fatalf("ended %s (%q) after %d calls, want idle after 2", res.Ended, res.Sentence, len(res.Calls))
	}
	release() // a second release changes nothing
}

func TestFourRefusalsForTheSameReasonEndATurn(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(),
		call("source.edit", `{"path":"a.go","find":"missing","replace":"x"}`),
		call("source.read", `{"path":""}`), // another reason does not count
		call("source.edit", `{"path":"b.go","find":"missing","replace":"x"}`),
		call("source.edit", `{"path":"c.go","find":"missing","replace":"y"}`),
		call("source.edit", `{"path":"d.go","find":"missing","replace":"z"}`),
		text("never read"),
	)
	res := ai.Run(context.Background(), turn(s, newClock(), &syncBuffer{}, readTool(nil), editTool()))
	want := "The turn was refused 4 times for the same reason: source.edit: find: matches nothing in d.go."
	if res.Ended != ai.EndRefusals || res.Sentence != want {
		t.Fatalf("ended %s: %q\nwant %q", res.Ended, res.Sentence, want)
	}
	if s.Count() != 5 || len(res.Calls) != 5 || !res.Usage.Partial {
		t.Errorf("%d requests, %d calls, usage %+v", s.Count(), len(res.Calls), res.Usage)
	}
	if last := res.Calls[4]; last.OK || len(last.Problems) != 1 || last.Problems[0].Field != "find" {
		t.Errorf("the last call: %+v", last)
	}
}

func TestAnEditLandingResetsTheRefusalCount(t *testing.T) {
	s := scripted.New(t)
	bad := call("source.edit", `{"path":"a.go","find":"missing","replace":"x"}`)
	s.On(scripted.Any(),
		bad, bad, bad,
		call("source.read", `{"path":"a.go"}`), // a read is not an edit
		call("source.edit", `{"path":"a.go","find":"main","replace":"app"}`),
		bad, bad, bad,
		text("Done."),
	)
	tr := turn(s, newClock(), &syncBuffer{}, readTool(nil), editTool())
	tr.Limits.SameRefusals = 4
	res := ai.Run(context.Background(), tr)
	if res.Ended != ai.EndAnswered || len(res.Calls) != 8 {
		t.Fatalf("ended %s (%q) after %d calls", res.Ended, res.Sentence, len(res.Calls))
	}

	t.Run("a read in between does not", func(t *testing.T) {
		s := scripted.New(t)
		s.On(scripted.Any(), bad, bad, bad, call("source.read", `{"path":"a.go"}`), bad, text("never read"))
		res := ai.Run(context.Background(), turn(s, newClock(), &syncBuffer{}, readTool(nil), editTool()))
		if res.Ended != ai.EndRefusals || len(res.Calls) != 5 {
			t.Fatalf("ended %s (%q) after %d calls", res.Ended, res.Sentence, len(res.Calls))
		}
	})
}

func TestTheSecondIdenticalRefusalShowsAValidInput(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(),
		call("source.read", `{"file":"a.go"}`),
		call("source.edit", `{"path":"a.go","find":"missing","replace":"x"}`),
		call("source.read", `{"file":"a.go"}`),
		call("source.read", `{"path":""}`), // another error: unchanged
		call("source.edit", `{"path":"a.go","find":"missing","replace":"y"}`),
		text("Done."),
	)
	res := ai.Run(context.Background(), turn(s, newClock(), &syncBuffer{}, readTool(nil), editTool()))
	if res.Ended != ai.EndAnswered {
		t.Fatalf("ended %s: %q", res.Ended, res.Sentence)
	}
	answers := toolAnswers(s.Requests()[5])
	if len(answers) != 5 {
		t.Fatalf("%d answers, want 5", len(answers))
	}

	first := decodeAnswer(t, answers[0].Content)
	wantProblems := []refusal.Problem{
		{Field: "path", Message: "is required (a string)"},
		{Field: "file", Message: "is not a field here; the fields are path"},
	}
	if first.OK || !slices.Equal(first.Problems, wantProblems) {
		t.Errorf("the first refusal: %+v", first)
	}
	if first.Hint != "" || first.Example != nil || strings.Contains(answers[0].Content, ai.ExampleHint) {
		t.Errorf("the first refusal shows an example: %s", answers[0].Content)
	}

	second := decodeAnswer(t, answers[2].Content)
	if !slices.Equal(second.Problems, wantProblems) || second.Hint != "A valid input looks like:" || string(second.Example) != `{"path":"main.go"}` {
		t.Errorf("the second identical refusal: %s", answers[2].Content)
	}
	if err := ai.CheckExample(ai.Tool{Name: "source.read", Schema: readSchema, Example: second.Example}); err != nil {
		t.Errorf("the example shown is not valid: %v", err)
	}

	other := decodeAnswer(t, answers[3].Content)
	if other.Hint != "" || len(other.Problems) != 1 || other.Problems[0] != (refusal.Problem{Field: "path", Message: "must not be empty"}) {
		t.Errorf("a first refusal of another kind: %s", answers[3].Content)
	}

	handler := decodeAnswer(t, answers[1].Content)
	if handler.OK || handler.Hint != "" || handler.Problems[0] != (refusal.Problem{Field: "find", Message: "matches nothing in a.go"}) {
		t.Errorf("the handler's first refusal: %s", answers[1].Content)
	}
	again := decodeAnswer(t, answers[4].Content)
	if again.Hint != ai.ExampleHint || string(again.Example) != `{"path":"main.go","find":"old","replace":"new"}` {
		t.Errorf("the handler's second identical refusal: %s", answers[4].Content)
	}
}

func TestWhatTheModelGetsWrongIsAnsweredWithNamedProblems(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(),
		call("source.write", `{"path":"a.go"}`),
		call("source.read", `{"path":`),
		call("source.read", `["a.go"]`),
		text("Done."),
	)
	res := ai.Run(context.Background(), turn(s, newClock(), &syncBuffer{}, readTool(nil), editTool()))
	if res.Ended != ai.EndAnswered || len(res.Calls) != 3 {
		t.Fatalf("ended %s (%q) after %d calls", res.Ended, res.Sentence, len(res.Calls))
	}
	want := []string{
		`there is no tool "source_write"; the tools are source_edit, source_read`,
		"the input is not valid JSON: unexpected EOF",
		"the input must be a JSON object, not an array",
	}
	for i, c := range res.Calls {
		if c.OK || len(c.Problems) != 1 || c.Problems[0].Message != want[i] {
			t.Errorf("call %d: %+v", i, c)
		}
		if !json.Valid(c.Input) {
			t.Errorf("call %d records input that is not JSON: %s", i, c.Input)
		}
	}
}

func TestAToolThatFailsOnTheHostAnswersOKFalse(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(), call("source.read", `{"path":"a"}`), text("Done."))
	tool := readTool(func(context.Context) { panic("disk on fire") })
	res := ai.Run(context.Background(), turn(s, newClock(), &syncBuffer{}, tool))
	if res.Ended != ai.EndAnswered || len(res.Calls) != 1 {
		t.Fatalf("ended %s: %q", res.Ended, res.Sentence)
	}
	a := decodeAnswer(t, string(res.Calls[0].Result))
	if a.OK || !strings.HasPrefix(a.Error, "the tool failed on the host:") {
		t.Errorf("answered %s", res.Calls[0].Result)
	}
}

func TestAQuestionEndsTheTurn(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(), scripted.Reply{ToolCalls: []scripted.Call{
		{Name: "intent.ask", Args: `{"question":"Blue or green?"}`},
		{Name: "source.read", Args: `{"path":"a"}`},
	}, Usage: scripted.Usage{Input: 10, Output: 5}})
	res := ai.Run(context.Background(), turn(s, newClock(), &syncBuffer{}, readTool(nil), askTool()))
	if res.Ended != ai.EndQuestion || res.Question != "Blue or green?" || res.Sentence != ai.QuestionSentence {
		t.Fatalf("ended %s: %q, question %q", res.Ended, res.Sentence, res.Question)
	}
	if len(res.Calls) != 1 || s.Count() != 1 {
		t.Errorf("%d calls, %d requests", len(res.Calls), s.Count())
	}
	if res.Usage != (ai.Usage{Input: 10, Output: 5}) {
		t.Errorf("usage %+v, want whole", res.Usage)
	}
}

func TestStopAbortsATurn(t *testing.T) {
	t.Run("while a tool runs", func(t *testing.T) {
		s := scripted.New(t)
		s.On(scripted.Any(), call("source.read", `{"path":"a"}`), text("never read"))
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		res := ai.Run(ctx, turn(s, newClock(), &syncBuffer{}, readTool(func(context.Context) { stop() })))
		if res.Ended != ai.EndAborted || res.Sentence != "The turn was stopped." {
			t.Fatalf("ended %s: %q", res.Ended, res.Sentence)
		}
		if s.Count() != 1 || !res.Usage.Partial || res.Usage.Input != 100 {
			t.Errorf("%d requests, usage %+v", s.Count(), res.Usage)
		}
	})
	t.Run("while the model thinks", func(t *testing.T) {
		s := scripted.New(t)
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		s.On(scripted.Any(), scripted.Reply{Fault: scripted.Timeout, Before: stop})
		res := ai.Run(ctx, turn(s, newClock(), &syncBuffer{}, readTool(nil)))
		if res.Ended != ai.EndAborted || res.Err != nil {
			t.Fatalf("ended %s: %q", res.Ended, res.Sentence)
		}
	})
}

func TestUsageIsPartialWhenTheProviderReportsNothing(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(), scripted.Reply{ToolCalls: []scripted.Call{{Name: "source.read", Args: `{"path":"a"}`}}}, scripted.Reply{Text: "Done."})
	var seen []ai.Usage
	tr := turn(s, newClock(), &syncBuffer{}, readTool(nil))
	tr.OnUsage = func(u ai.Usage) { seen = append(seen, u) }
	res := ai.Run(context.Background(), tr)
	if res.Ended != ai.EndAnswered || res.Usage != (ai.Usage{Partial: true}) {
		t.Fatalf("ended %s, usage %+v", res.Ended, res.Usage)
	}
	if len(seen) != 2 || !seen[0].Partial {
		t.Errorf("OnUsage saw %+v", seen)
	}
}

func TestDocumentsAreDeliveredInOrderUnderABudgetCutFromTheEnd(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(), text("Read."))
	tr := turn(s, newClock(), &syncBuffer{})
	tr.Documents = []ai.Document{
		{Ref: "digest", Title: "Digest", Text: "0123456789"},
		{Ref: "evidence", Title: "Evidence", Text: "abcdéfghij"},
		{Ref: "attempts", Title: "Attempts", Text: "never delivered"},
	}
	tr.DocumentBudget = 15
	res := ai.Run(context.Background(), tr)

	want := []ai.DeliveredDocument{
		{Ref: "digest", Title: "Digest", Delivery: ai.DeliveredWhole, Chars: 10, Delivered: 10},
		{Ref: "evidence", Title: "Evidence", Delivery: ai.DeliveredCut, Chars: 10, Delivered: 5},
		{Ref: "attempts", Title: "Attempts", Delivery: ai.DeliveredDropped, Chars: 15, Delivered: 0},
	}
	if !slices.Equal(res.Documents, want) {
		t.Fatalf("documents %+v\nwant %+v", res.Documents, want)
	}
	msgs := s.Requests()[0].Messages
	if len(msgs) != 3 || msgs[1].Role != "user" || msgs[2].Content != "Add a footer." {
		t.Fatalf("messages %+v", msgs)
	}
	block := msgs[1].Content
	for _, part := range []string{ai.DocumentsPreamble, `<document ref="digest" title="Digest">` + "\n0123456789\n</document>",
		`<document ref="evidence" title="Evidence">` + "\nabcdé\n[cut here: the first 5 of 10 characters]\n</document>"} {
		if !strings.Contains(block, part) {
			t.Errorf("the documents block lacks %q:\n%s", part, block)
		}
	}
	if strings.Contains(block, "never delivered") || strings.Contains(block, "fghij") {
		t.Errorf("the block carries what was cut:\n%s", block)
	}
}

func TestATurnIsOfferedAtMostEightDocuments(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.Any(), text("Read."))
	tr := turn(s, newClock(), &syncBuffer{})
	for n := 1; n <= ai.MaxDocuments+2; n++ {
		tr.Documents = append(tr.Documents, ai.Document{Ref: fmt.Sprintf("doc-%d", n), Title: "Doc", Text: fmt.Sprintf("text of document %d.", n)})
	}
	res := ai.Run(context.Background(), tr)
	block := s.Requests()[0].Messages[1].Content
	for i, d := range res.Documents {
		offered := strings.Contains(block, fmt.Sprintf("text of document %d.", i+1))
		if i < ai.MaxDocuments && (d.Delivery != ai.DeliveredWhole || !offered) {
			t.Errorf("document %d: %s, offered %v; the first eight fit the budget", i+1, d.Delivery, offered)
		}
		if i >= ai.MaxDocuments && (d.Delivery != ai.DeliveredDropped || offered) {
			t.Errorf("document %d: %s, offered %v; a ninth is never offered", i+1, d.Delivery, offered)
		}
	}
}

func TestRequestsGoToTheEndpointsBaseURLWithItsKey(t *testing.T) {
	a, b, env := scripted.New(t), scripted.New(t), scripted.New(t)
	a.On(scripted.Any(), text("from a"))
	b.On(scripted.Any(), text("from b"))
	// The environment never decides where a request goes or what it carries.
	t.Setenv("OPENAI_BASE_URL", env.URL()+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	t.Setenv("OPENAI_ORG_ID", "org-from-the-environment")

	log := &syncBuffer{}
	ta := turn(a, newClock(), log)
	ta.Endpoint = ai.Endpoint{Provider: "a", BaseURL: a.URL(), APIKey: "sk-key-of-a", Model: "qwen3:27b"}
	tb := turn(b, newClock(), log)
	tb.Endpoint = ai.Endpoint{Provider: "b", BaseURL: b.URL() + "/v1/", Model: "llama"}

	if res := ai.Run(context.Background(), ta); res.Text != "from a" {
		t.Fatalf("a: %s %q", res.Ended, res.Sentence)
	}
	if res := ai.Run(context.Background(), tb); res.Text != "from b" {
		t.Fatalf("b: %s %q", res.Ended, res.Sentence)
	}
	if a.Count() != 1 || b.Count() != 1 || env.Count() != 0 {
		t.Fatalf("requests: a %d, b %d, the environment's %d", a.Count(), b.Count(), env.Count())
	}
	ra, rb := a.Requests()[0], b.Requests()[0]
	if ra.Path != "/v1/chat/completions" || rb.Path != "/v1/chat/completions" {
		t.Errorf("paths %q %q", ra.Path, rb.Path)
	}
	if ra.Authorization() != "Bearer sk-key-of-a" || ra.Model != "qwen3:27b" {
		t.Errorf("a got authorization %q, model %q", ra.Authorization(), ra.Model)
	}
	if rb.Authorization() != "" || rb.Model != "llama" {
		t.Errorf("b, without a key, got authorization %q, model %q", rb.Authorization(), rb.Model)
	}
	if ra.Header.Get("OpenAI-Organization") != "" || rb.Header.Get("OpenAI-Organization") != "" {
		t.Error("the environment's organization was sent")
	}
	if strings.Contains(log.String(), "sk-key-of-a") {
		t.Errorf("the key is in the log:\n%s", log.String())
	}
	if ai.RunHeader != scripted.RunHeader {
		t.Errorf("the run header is %q here and %q in the scripted model", ai.RunHeader, scripted.RunHeader)
	}
}

func TestALimitCutsARequestInFlight(t *testing.T) {
	cases := []struct {
		name   string
		limits ai.Limits
		ended  ai.Ending
	}{
		{"idle", ai.Limits{Idle: 150 * time.Millisecond}, ai.EndIdle},
		{"wall", ai.Limits{Wall: 150 * time.Millisecond}, ai.EndWall},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := scripted.New(t)
			s.On(scripted.Any(), scripted.Reply{Fault: scripted.Timeout})
			tr := turn(s, newClock(), &syncBuffer{}, readTool(nil))
			tr.Now = time.Now // the real clock: the model never answers
			tr.Limits = c.limits
			res := ai.Run(context.Background(), tr)
			if res.Ended != c.ended {
				t.Fatalf("ended %s: %q, want %s", res.Ended, res.Sentence, c.ended)
			}
		})
	}
}

// TestACallThatChangedNothingDoesNotResetTheRefusalCount: a tool that may
// edit (a cycle) but was given no change lands no edit, so three refusals,
// the cycle, and a fourth refusal end the turn.
func TestACallThatChangedNothingDoesNotResetTheRefusalCount(t *testing.T) {
	cycleTool := ai.Tool{Name: "candidate.cycle", Description: "Apply an optional change, then build and check.",
		Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"hunks":{"type":"array"}},"additionalProperties":false}`),
		Edits:  true,
		Landed: func(input json.RawMessage, _ any) bool {
			var in struct{ Hunks []json.RawMessage }
			return json.Unmarshal(input, &in) == nil && len(in.Hunks) > 0
		},
		Handler: func(ctx context.Context, input json.RawMessage) (any, error) {
			return map[string]string{"step": "checked"}, nil
		},
	}
	bad := call("source.edit", `{"path":"a.go","find":"missing","replace":"x"}`)
	s := scripted.New(t)
	s.On(scripted.Any(), bad, bad, bad, call("candidate.cycle", `{}`), bad, text("never read"))
	res := ai.Run(context.Background(), turn(s, newClock(), &syncBuffer{}, readTool(nil), editTool(), cycleTool))
	if res.Ended != ai.EndRefusals || len(res.Calls) != 5 {
		t.Fatalf("ended %s (%q) after %d calls; want the fourth refusal to end it", res.Ended, res.Sentence, len(res.Calls))
	}

	t.Run("a cycle whose change landed does", func(t *testing.T) {
		s := scripted.New(t)
		s.On(scripted.Any(), bad, bad, bad, call("candidate.cycle", `{"path":"a.go","hunks":[{}]}`), bad, text("Done."))
		res := ai.Run(context.Background(), turn(s, newClock(), &syncBuffer{}, readTool(nil), editTool(), cycleTool))
		if res.Ended != ai.EndAnswered {
			t.Fatalf("ended %s (%q)", res.Ended, res.Sentence)
		}
	})
}

// A turn stopped the moment its edit landed, and continued with it as
// structured history: the second turn's model is given the first run's
// calls, named by that run, each followed by the result it read back;
// with the words alone it is given no call.
func TestAStoppedRunsCallsAreGivenBackAsStructuredHistory(t *testing.T) {
	s := scripted.New(t)
	read := call("source.read", `{"path":"main.go"}`)
	read.Text = "I read main.go first."
	s.On(scripted.RunID("run-1"),
		read,
		call("source.edit", `{"path":"main.go","find":"main","replace":"app"}`),
		scripted.Reply{Text: "never asked"},
	)
	s.On(scripted.RunID("run-2"), scripted.Reply{Text: "Carried on."}, scripted.Reply{Text: "Carried on."})
	c := newClock()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	first := turn(s, c, &syncBuffer{}, readTool(nil), editTool())
	first.OnStep = func(c ai.Call) {
		if c.Name == "source.edit" && c.OK {
			stop() // as a person pressing stop the moment the edit lands
		}
	}
	one := ai.Run(ctx, first)
	if one.Ended != ai.EndAborted || len(one.Calls) != 2 || one.Words != "I read main.go first." || one.Text != "" {
		t.Fatalf("turn one ended %s with %d calls and the words %q, want aborted after its edit", one.Ended, len(one.Calls), one.Words)
	}

	for _, mode := range []string{"structured", "text"} {
		t.Run(mode, func(t *testing.T) {
			said := ai.Message{Role: ai.RoleAssistant, Text: "Run run-1 made these calls."}
			if mode == "structured" {
				said.Calls = one.Calls
			}
			second := turn(s, c, &syncBuffer{}, readTool(nil), editTool())
			second.RunID, second.Message = "run-2", "Continue."
			second.History = []ai.Message{{Role: ai.RoleUser, Text: "Add a footer."}, said}
			if res := ai.Run(context.Background(), second); res.Ended != ai.EndAnswered {
				t.Fatalf("turn two ended %s", res.Ended)
			}
			reqs := s.Requests()
			req := reqs[len(reqs)-1]
			var roles []string
			for _, m := range req.Messages {
				roles = append(roles, m.Role)
			}
			want := []string{"system", "user", "assistant", "user"}
			if mode == "structured" {
				want = []string{"system", "user", "assistant", "tool", "tool", "user"}
			}
			if !slices.Equal(roles, want) || req.LastUser() != "Continue." || req.Messages[1].Content != "Add a footer." {
				t.Fatalf("turn two was given %v, last %q; want %v", roles, req.LastUser(), want)
			}
			asked := req.Messages[2]
			if asked.Content != "Run run-1 made these calls." {
				t.Errorf("the assistant turn says %q", asked.Content)
			}
			if mode == "text" {
				if len(asked.ToolCalls) != 0 {
					t.Errorf("the words alone carried calls %+v", asked.ToolCalls)
				}
				return
			}
			if len(asked.ToolCalls) != 2 || asked.ToolCalls[0].ID != "run-1:1" || asked.ToolCalls[1].ID != "run-1:2" ||
				asked.ToolCalls[0].Name != "source_read" || asked.ToolCalls[1].Name != "source_edit" ||
				asked.ToolCalls[1].Args != `{"path":"main.go","find":"main","replace":"app"}` {
				t.Errorf("the assistant turn's calls: %+v", asked.ToolCalls)
			}
			for i, m := range req.Messages[3:5] {
				if m.ToolCallID != one.Calls[i].ID || m.Content != string(one.Calls[i].Result) {
					t.Errorf("tool message %d: %+v, want %s's result %s", i+1, m, one.Calls[i].ID, one.Calls[i].Result)
				}
			}
		})
	}
}
