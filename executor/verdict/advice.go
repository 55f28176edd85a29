package verdict

import (
	"encoding/json"
	"strings"
)

// The advice a failed task can get.
const (
	AdviceRetry  = "retry"
	AdviceRevise = "revise"
	AdviceSplit  = "split"
	AdviceAsk    = "ask"
)

// AdviceSchema is the JSON Schema of the answer to the advice question:
// {diagnosis, advice: retry|revise|split|ask, note}, every field required
// and no other. It keeps to the part of JSON Schema executor/ai reads.
var AdviceSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "diagnosis": {"type": "string", "minLength": 1, "maxLength": 1000,
      "description": "What most likely went wrong, in one or two sentences, from the facts given."},
    "advice": {"type": "string", "enum": ["retry", "revise", "split", "ask"],
      "description": "retry: run the task again as it is; revise: the plan is wrong or unclear; split: the task is too large for one turn; ask: only the person can settle it."},
    "note": {"type": "string", "maxLength": 1000,
      "description": "One or two sentences for the person: what to look at or change."}
  },
  "required": ["diagnosis", "advice", "note"],
  "additionalProperties": false
}`)

// AdviceInstructions are the instructions of the advice question, asked of
// the main model once when a task fails.
const AdviceInstructions = `You are the planning model of Autoapp, a launcher in which a builder model builds one task of a backlog at a time and the host judges each attempt by the build and the acceptance examples it ran itself.
A task has failed. You are told its slug and title, the host's reasons for the last verdict, and what the builder's tools refused in the last attempt and the one before.
Answer with a diagnosis (what most likely went wrong, in one or two sentences), one word of advice, and a note for the person:
- retry: the task can be built as it is; run it again.
- revise: the plan is wrong, unclear or contradicts the application; the engineer should revise the task.
- split: the task is too large for one turn; it should become smaller tasks.
- ask: only the person can settle what is wrong.
When a builder's calls were refused for their input (a field missing, the wrong type), the plan is not at fault: the builder did not use its tools as they are written, and another model may be the answer. Say so in the note rather than advising a revision.
Use only the facts given. Do not invent files, errors or history.`

// AdviceMessage is the advice question about the failed task slug: its
// reasons, and refusedLastTwo, what the tools refused in the last attempt
// and the one before.
func AdviceMessage(slug, title string, reasons []string, refusedLastTwo []string) string {
	var b strings.Builder
	b.WriteString("Task " + oneLine(slug) + ": " + clip(oneLine(title), maxReasonPart) + "\n\n")
	b.WriteString("The task failed. The host's reasons:\n")
	if len(reasons) == 0 {
		b.WriteString("- (none recorded)\n")
	}
	for _, r := range reasons {
		b.WriteString("- " + clip(oneLine(r), 2*maxReasonPart) + "\n")
	}
	b.WriteString("\nWhat the tools refused in the last attempt and the one before:\n")
	listed := false
	for _, r := range refusedLastTwo {
		if r = oneLine(r); r != "" {
			b.WriteString("- " + clip(r, maxReasonPart) + "\n")
			listed = true
		}
	}
	if !listed {
		b.WriteString("- nothing\n")
	}
	b.WriteString("\nWhen a builder's calls were refused for their input, the plan is not at fault, and another model may be the answer.\n")
	return b.String()
}

// Advice is the main model's answer to the advice question.
type Advice struct {
	Diagnosis string `json:"diagnosis"`
	Advice    string `json:"advice"`
	Note      string `json:"note"`
}

// adviceMeaning says each advice to the person.
var adviceMeaning = map[string]string{
	AdviceRetry:  "run the task again as it is",
	AdviceRevise: "ask the engineer to revise this task",
	AdviceSplit:  "split the task into smaller ones",
	AdviceAsk:    "the person has to settle something first",
}

// Text is the advice for display under the failure: the diagnosis, the
// advice with what it means, and the note, each on a line of its own.
func (a Advice) Text() string {
	var lines []string
	if d := oneLine(a.Diagnosis); d != "" {
		lines = append(lines, "Diagnosis: "+d)
	}
	if w := oneLine(a.Advice); w != "" {
		line := "Advice: " + w
		if m, ok := adviceMeaning[w]; ok {
			line += " (" + m + ")"
		}
		lines = append(lines, line)
	}
	if n := oneLine(a.Note); n != "" {
		lines = append(lines, "Note: "+n)
	}
	return joinLines(lines)
}
