package planner

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"autoapp/executor/ai"
	"autoapp/intent/refusal"
)

// MaxLine is the longest line Line writes, in characters.
const MaxLine = 240

// Line says in one line what a tool call of a chat turn did, for the
// conversation the person reads: "intent.open: the analysis has 2 open
// questions", "intent.task: 0002-add-tags proposed (standard)",
// "spec.read: application", "intent.start: intent 4 started with 3
// tasks", or why it was refused.
func Line(c ai.Call) string {
	var answer struct {
		Result   json.RawMessage   `json:"result"`
		Problems []refusal.Problem `json:"problems"`
		Error    string            `json:"error"`
	}
	_ = json.Unmarshal(c.Result, &answer)
	var input map[string]any
	_ = json.Unmarshal(c.Input, &input)
	text := func(key string) string {
		s, _ := input[key].(string)
		return s
	}

	var what string
	switch {
	case !c.OK && len(c.Problems) > 0:
		what = "refused: " + c.Problems[0].String()
		if n := len(c.Problems) - 1; n > 0 {
			what += fmt.Sprintf(" (and %s more)", plural(n, "problem"))
		}
	case !c.OK:
		what = "failed"
		if answer.Error != "" {
			what += ": " + answer.Error
		}
	case c.Name == "spec.read":
		switch topic := text("topic"); topic {
		case "":
			what = TopicApplication + " and " + TopicPlan
		default:
			what = topic
		}
	case c.Name == "intent.open":
		var a OpenAnswer
		_ = json.Unmarshal(answer.Result, &a)
		if a.Questions == 0 {
			what = "the analysis has no open questions"
		} else {
			what = "the analysis has " + plural(a.Questions, "open question")
		}
	case c.Name == "intent.task":
		var a TaskAnswer
		_ = json.Unmarshal(answer.Result, &a)
		verb := "proposed"
		if a.Revised {
			verb = "revised"
		}
		what = fmt.Sprintf("%s %s (%s)", a.Slug, verb, a.Tier)
	case c.Name == "intent.submit":
		var a SubmitAnswer
		_ = json.Unmarshal(answer.Result, &a)
		what = fmt.Sprintf("intent %d submitted with %s", a.Intent, plural(a.Tasks, "task"))
	case c.Name == StartTool:
		var a StartAnswer
		_ = json.Unmarshal(answer.Result, &a)
		what = fmt.Sprintf("intent %d started with %s", a.Intent, plural(a.Tasks, "task"))
	case c.Name == "source.read":
		what = text("path")
	case c.Name == "source.list":
		what = text("dir")
		if what == "" {
			what = "the top folder"
		}
	case c.Name == "source.search":
		what = fmt.Sprintf("%q", text("query"))
	default:
		what = "done"
	}
	return clip(strings.Join(strings.Fields(c.Name+": "+what), " "), MaxLine)
}

// clip shortens s to at most n characters, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
