package ai_test

import (
	"context"
	"strings"
	"testing"

	"autoapp/executor/ai"
	"autoapp/executor/ai/scripted"
)

// Each answer is what a small model writes when its server leaves the
// call in the text, in the shape of its published chat template.
var textCallAnswers = []struct {
	name, form, text string
	calls            []string // the tools called, in order
}{
	{"Hermes, as Qwen 2.5 writes it", ai.TextCallHermes,
		"<tool_call>\n{\"name\": \"source_read\", \"arguments\": {\"path\": \"main.go\"}}\n</tool_call>", []string{"source.read"}},
	{"Hermes, two calls with words before", ai.TextCallHermes,
		"I will read the file, then change it.\n<tool_call>\n{\"name\": \"source_read\", \"arguments\": {\"path\": \"main.go\"}}\n</tool_call>\n" +
			"<tool_call>\n{\"name\": \"source_edit\", \"arguments\": {\"path\": \"main.go\", \"find\": \"main\", \"replace\": \"app\"}}\n</tool_call>",
		[]string{"source.read", "source.edit"}},
	{"Llama 3.1 with its python tag", ai.TextCallLlama,
		"<|python_tag|>{\"name\": \"source_read\", \"parameters\": {\"path\": \"main.go\"}}<|eom_id|>", []string{"source.read"}},
	{"Llama 3.2 JSON alone", ai.TextCallLlama,
		"{\"name\": \"source_read\", \"parameters\": {\"path\": \"main.go\"}}", []string{"source.read"}},
	{"Llama, two calls separated by a semicolon", ai.TextCallLlama,
		"{\"name\": \"source_read\", \"parameters\": {\"path\": \"main.go\"}}; {\"name\": \"source_read\", \"parameters\": {\"path\": \"go.mod\"}}",
		[]string{"source.read", "source.read"}},
	{"Mistral's list", ai.TextCallMistral,
		"[TOOL_CALLS] [{\"name\": \"source_read\", \"arguments\": {\"path\": \"main.go\"}}, {\"name\": \"source_edit\", \"arguments\": {\"path\": \"main.go\", \"find\": \"main\", \"replace\": \"app\"}}]",
		[]string{"source.read", "source.edit"}},
	{"Mistral's newer name[ARGS] form", ai.TextCallMistral,
		"[TOOL_CALLS]source_read[ARGS]{\"path\": \"main.go\"}", []string{"source.read"}},
	{"a fenced json block naming the tool in our words", ai.TextCallFenced,
		"Let me look at the file first.\n\n```json\n{\"name\": \"source.read\", \"arguments\": {\"path\": \"main.go\"}}\n```", []string{"source.read"}},
	{"arguments sent as a JSON string", ai.TextCallHermes,
		"<tool_call>{\"name\": \"source_read\", \"arguments\": \"{\\\"path\\\": \\\"main.go\\\"}\"}</tool_call>", []string{"source.read"}},
	{"the OpenAI shape copied into the text", ai.TextCallFenced,
		"```json\n[{\"type\": \"function\", \"function\": {\"name\": \"source_read\", \"arguments\": {\"path\": \"main.go\"}}}]\n```", []string{"source.read"}},
}

// A call written as text is read, validated and run like one sent as a
// tool call, streamed whole or cut every few bytes (across its tags and
// inside its JSON), and the log marks each one read from text.
func TestToolCallsWrittenAsTextAreRecovered(t *testing.T) {
	for _, a := range textCallAnswers {
		for _, pieces := range []int{0, 3, 7} {
			t.Run(a.name+"/pieces="+string(rune('0'+pieces)), func(t *testing.T) {
				s := scripted.New(t)
				s.On(scripted.RunID("run-1"), scripted.Reply{Text: a.text, TextPieces: pieces}, scripted.Reply{Text: "The footer is added."})
				log := &syncBuffer{}
				res := ai.Run(context.Background(), turn(s, newClock(), log, readTool(nil), editTool()))
				if res.Ended != ai.EndAnswered || res.Text != "The footer is added." {
					t.Fatalf("ended %s (%s) with %q", res.Ended, res.Sentence, res.Text)
				}
				var names []string
				for _, c := range res.Calls {
					names = append(names, c.Name)
					if !c.OK || c.FromText != a.form {
						t.Errorf("call %+v: want it run, read from text as %s", c, a.form)
					}
				}
				if strings.Join(names, ",") != strings.Join(a.calls, ",") {
					t.Fatalf("calls %v, want %v", names, a.calls)
				}
				if string(res.Calls[0].Input) != `{"path":"main.go"}` && string(res.Calls[0].Input) != `{"path": "main.go"}` {
					t.Errorf("the first call's input: %s", res.Calls[0].Input)
				}
				if got := strings.Count(log.String(), "a tool call written as text was read"); got != len(a.calls) {
					t.Errorf("the log marks %d calls read from text, want %d:\n%s", got, len(a.calls), log)
				}
				if answers := toolAnswers(s.Requests()[1]); len(answers) != len(a.calls) {
					t.Errorf("the second request answers %d calls, want %d", len(answers), len(a.calls))
				}
			})
		}
	}
}

// Text that mentions a tool, shows JSON that is not a call, or names a
// tool the turn does not offer is the model's answer, not a call.
func TestTextThatMentionsAToolIsNotACall(t *testing.T) {
	for _, text := range []string{
		"You could call source_read with {\"path\": \"main.go\"} to see the file.",
		"The manifest looks like this:\n```json\n{\"name\": \"notes\", \"build\": []}\n```",
		"```json\n{\"path\": \"main.go\"}\n```",
		"I used source_read earlier; the footer is added.",
		"<tool_call>\n{\"name\": \"shell_run\", \"arguments\": {\"cmd\": \"ls\"}}\n</tool_call>",
		"{\"name\": \"source_read\"}",
	} {
		s := scripted.New(t)
		s.On(scripted.RunID("run-1"), scripted.Reply{Text: text})
		res := ai.Run(context.Background(), turn(s, newClock(), &syncBuffer{}, readTool(nil), editTool()))
		if res.Ended != ai.EndAnswered || len(res.Calls) != 0 || res.Text != text {
			t.Errorf("%q: ended %s with %d calls and text %q", text, res.Ended, len(res.Calls), res.Text)
		}
	}
}

// A call read from text whose input breaks the tool's schema is refused
// with the problems like any call; with the provider's setting off, the
// text is the answer.
func TestACallReadFromTextIsValidatedAndRecoveryCanBeTurnedOff(t *testing.T) {
	s := scripted.New(t)
	s.On(scripted.RunID("run-1"),
		scripted.Reply{Text: "<tool_call>{\"name\": \"source_read\", \"arguments\": {\"file\": \"main.go\"}}</tool_call>"},
		scripted.Reply{Text: "Sorry."})
	res := ai.Run(context.Background(), turn(s, newClock(), &syncBuffer{}, readTool(nil)))
	if len(res.Calls) != 1 || res.Calls[0].OK || len(res.Calls[0].Problems) == 0 || res.Calls[0].FromText != ai.TextCallHermes {
		t.Fatalf("calls %+v, want the call refused by the schema", res.Calls)
	}

	off := scripted.New(t)
	text := "<tool_call>\n{\"name\": \"source_read\", \"arguments\": {\"path\": \"main.go\"}}\n</tool_call>"
	off.On(scripted.RunID("run-1"), scripted.Reply{Text: text})
	tr := turn(off, newClock(), &syncBuffer{}, readTool(nil))
	tr.Endpoint.NoTextCalls = true
	res = ai.Run(context.Background(), tr)
	if len(res.Calls) != 0 || res.Text != text {
		t.Fatalf("with recovery off: %d calls, text %q", len(res.Calls), res.Text)
	}
}
