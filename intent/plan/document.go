package plan

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxDocument is the most characters the intent document may hold.
const MaxDocument = 3000

// maxDocLine clips one request, question or reason, so that a long one
// costs the document a line's worth and not every task after it.
const maxDocLine = 300

// DocIntent is one intent as the intent document shows it.
type DocIntent struct {
	ID        int64
	Status    string
	Request   string
	Questions []string // the questions still open
	Tasks     []DocTask
}

// DocTask is one task as the intent document shows it.
type DocTask struct {
	Slug, Status, Tier, Title string
	Reason                    string // why it failed; shown only for a failed task
}

// docLine is one line of the document and what it stands for, so a cut
// can say what it left out.
type docLine struct {
	text string
	kind int
}

const (
	lineOther = iota
	lineIntent
	lineQuestion
	lineTask
	lineFrame // a blank line or a sub-heading, not worth ending on
)

// Document is the intent document of an application, titled
// intent:<appID>: each live intent (every one not withdrawn) in the order
// given, with its status, request, open questions and one line per live
// task (every one not removed), in the order given, with slug, status,
// tier, title and a failed task's reason. It holds at most MaxDocument
// characters: when longer, whole lines are cut from the end and a last
// line says how many tasks, questions and intents were left out.
func Document(appID string, intents []DocIntent) string {
	lines := []docLine{{"# intent:" + clip(oneLineOf(appID), maxDocLine), lineOther}}
	live := 0
	for _, in := range intents {
		if in.Status == "withdrawn" {
			continue
		}
		live++
		lines = append(lines,
			docLine{"", lineFrame},
			docLine{fmt.Sprintf("## Intent %d (%s)", in.ID, oneLineOf(in.Status)), lineIntent})
		if r := strings.TrimSpace(in.Request); r != "" {
			lines = append(lines, docLine{"Request: " + clip(oneLineOf(r), maxDocLine), lineOther})
		}
		if len(in.Questions) > 0 {
			lines = append(lines, docLine{"Open questions:", lineFrame})
			for _, q := range in.Questions {
				lines = append(lines, docLine{"- " + clip(oneLineOf(q), maxDocLine), lineQuestion})
			}
		}
		tasks := make([]DocTask, 0, len(in.Tasks))
		for _, t := range in.Tasks {
			if t.Status != "removed" {
				tasks = append(tasks, t)
			}
		}
		if len(tasks) > 0 {
			lines = append(lines, docLine{"Tasks:", lineFrame})
		}
		for _, t := range tasks {
			lines = append(lines, docLine{taskLine(t), lineTask})
		}
	}
	if live == 0 {
		lines = append(lines, docLine{"", lineFrame}, docLine{"No live intents.", lineOther})
	}

	size := 0
	for _, l := range lines {
		size += utf8.RuneCountInString(l.text) + 1
	}
	if size <= MaxDocument {
		return render(lines)
	}

	var left [lineFrame + 1]int
	note := func() string { return leftOut(left[lineTask], left[lineQuestion], left[lineIntent]) }
	for len(lines) > 1 && size+1+utf8.RuneCountInString(note())+1 > MaxDocument {
		last := lines[len(lines)-1]
		lines = lines[:len(lines)-1]
		size -= utf8.RuneCountInString(last.text) + 1
		left[last.kind]++
	}
	for len(lines) > 1 && lines[len(lines)-1].kind == lineFrame {
		lines = lines[:len(lines)-1]
	}
	return render(append(lines, docLine{"", lineFrame}, docLine{note(), lineOther}))
}

func taskLine(t DocTask) string {
	state := oneLineOf(t.Status)
	if t.Tier != "" {
		state += ", " + oneLineOf(t.Tier)
	}
	s := fmt.Sprintf("- %s [%s] %s", oneLineOf(t.Slug), state, clip(oneLineOf(t.Title), maxDocLine))
	if r := strings.TrimSpace(t.Reason); t.Status == "failed" && r != "" {
		s += " — " + clip(oneLineOf(r), maxDocLine)
	}
	return s
}

// leftOut is the document's last line after a cut.
func leftOut(tasks, questions, intents int) string {
	var parts []string
	for _, c := range []struct {
		n    int
		noun string
	}{{tasks, "task"}, {questions, "question"}, {intents, "intent"}} {
		switch {
		case c.n == 1:
			parts = append(parts, "1 "+c.noun)
		case c.n > 1:
			parts = append(parts, fmt.Sprintf("%d %ss", c.n, c.noun))
		}
	}
	what := "The rest"
	if len(parts) > 0 {
		what = and(parts)
	}
	return fmt.Sprintf("… %s left out: this document holds at most %d characters.", what, MaxDocument)
}

func render(lines []docLine) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.text)
		b.WriteString("\n")
	}
	return b.String()
}

// clip shortens s to at most n characters, marking the cut with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
