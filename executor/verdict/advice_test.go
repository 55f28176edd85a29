package verdict_test

import (
	"encoding/json"
	"strings"
	"testing"

	"autoapp/executor/ai"
	"autoapp/executor/verdict"
)

func TestAdviceSchemaIsOneTheAILayerReads(t *testing.T) {
	tool := ai.Tool{Name: "task.advice", Schema: verdict.AdviceSchema,
		Example: json.RawMessage(`{"diagnosis":"The builder never wrote its examples.","advice":"retry","note":""}`)}
	if err := ai.CheckExample(tool); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{
		"an advice outside the four": `{"diagnosis":"x","advice":"maybe","note":""}`,
		"a field missing":            `{"diagnosis":"x","advice":"retry"}`,
		"a field too many":           `{"diagnosis":"x","advice":"retry","note":"","extra":1}`,
		"an empty diagnosis":         `{"diagnosis":"","advice":"retry","note":""}`,
	} {
		t.Run(name, func(t *testing.T) {
			tool.Example = json.RawMessage(bad)
			if err := ai.CheckExample(tool); err == nil {
				t.Errorf("%s was accepted", bad)
			}
		})
	}
}

func TestTheAdviceQuestionIsToldWhatWasRefused(t *testing.T) {
	msg := verdict.AdviceMessage("0002-heading", "Change the heading",
		[]string{"No example named 0002-heading-c1 was run.", "The turn ran out of time."},
		[]string{"candidate.cycle was refused 4 times: create: expected an array.", "3 edits were refused; most often: hunks[0].find: expected a string."})
	for _, want := range []string{
		"Task 0002-heading: Change the heading",
		"- No example named 0002-heading-c1 was run.",
		"What the tools refused in the last attempt and the one before:",
		"- candidate.cycle was refused 4 times: create: expected an array.",
		"- 3 edits were refused; most often: hunks[0].find: expected a string.",
		"When a builder's calls were refused for their input, the plan is not at fault, and another model may be the answer.",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message lacks %q:\n%s", want, msg)
		}
	}
	if msg := verdict.AdviceMessage("0002-heading", "Change the heading", []string{"x"}, nil); !strings.Contains(msg, "before:\n- nothing\n") {
		t.Errorf("no refusals should say nothing was refused:\n%s", msg)
	}
	for _, want := range []string{"retry", "revise", "split", "ask", "another model may be the answer"} {
		if !strings.Contains(verdict.AdviceInstructions, want) {
			t.Errorf("the instructions lack %q", want)
		}
	}
}

func TestAdviceTextIsForDisplay(t *testing.T) {
	a := verdict.Advice{Diagnosis: "The builder never wrote\nits examples.", Advice: "revise", Note: "Name the example ids in the criteria."}
	want := "Diagnosis: The builder never wrote its examples.\n" +
		"Advice: revise (ask the engineer to revise this task)\n" +
		"Note: Name the example ids in the criteria."
	if got := a.Text(); got != want {
		t.Errorf("text\n got %q\nwant %q", got, want)
	}
	if got := (verdict.Advice{Diagnosis: "d", Advice: "retry"}).Text(); got != "Diagnosis: d\nAdvice: retry (run the task again as it is)" {
		t.Errorf("text without a note: %q", got)
	}
}
