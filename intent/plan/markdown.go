package plan

import (
	"fmt"
	"strings"
	"unicode"
)

// HostCriterion is the last criterion of every task. The host writes it;
// a plan that writes it itself is refused.
const HostCriterion = "Every criterion above has exactly one acceptance example named after it"

// FailurePrefix opens a failure criterion's line in the markdown.
const FailurePrefix = "(when it goes wrong) "

// Markdown renders a task's plan in the plan format. It is a view of the
// rows and is never parsed back. passed[i] ticks criterion i; one more
// entry, passed[len(t.Criteria)], ticks the host's criterion. Sections
// after the criteria are left out when they have no items.
func Markdown(t Task, passed []bool) string {
	var b strings.Builder
	b.WriteString("---\n")
	fmt.Fprintf(&b, "title: %s\n", oneLineOf(t.Title))
	fmt.Fprintf(&b, "priority: %s\n", oneLineOf(t.Priority))
	fmt.Fprintf(&b, "labels: %s\n", list(t.Labels))
	fmt.Fprintf(&b, "blocked_by: %s\n", list(t.BlockedBy))
	fmt.Fprintf(&b, "estimated_lines: %d\n", t.EstimatedLines)
	fmt.Fprintf(&b, "locks: %s\n", list(t.Locks))
	fmt.Fprintf(&b, "risk: %s\n", oneLineOf(t.Risk))
	fmt.Fprintf(&b, "stub: %t\n", t.Stub)
	if t.Stub && t.RepaidBy != "" {
		fmt.Fprintf(&b, "repaid_by: %s\n", oneLineOf(t.RepaidBy))
	}
	b.WriteString("---\n\n")
	b.WriteString(Body(t, passed))
	return b.String()
}

// Body is the plan's Markdown after its front matter: the summary, the
// criteria as a checklist and the sections, for a page that shows the
// front matter's fields as a table of its own.
func Body(t Task, passed []bool) string {
	var b strings.Builder
	if s := strings.TrimSpace(t.Summary); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}

	box := func(i int) string {
		if i < len(passed) && passed[i] {
			return "- [x] "
		}
		return "- [ ] "
	}
	b.WriteString("## Acceptance criteria\n")
	for i, c := range t.Criteria {
		b.WriteString(box(i))
		if c.Failure {
			b.WriteString(FailurePrefix)
		}
		b.WriteString(oneLineOf(c.Text))
		b.WriteString("\n")
	}
	if r := strings.TrimSpace(t.NoFailurePath); r != "" {
		fmt.Fprintf(&b, "- [ ] No failure path: %s\n", oneLineOf(r))
	}
	b.WriteString(box(len(t.Criteria)))
	b.WriteString(HostCriterion)
	b.WriteString("\n")

	for _, s := range []struct {
		heading string
		items   []string
	}{
		{"Non-functional", t.NonFunctional},
		{"Test notes", t.TestNotes},
		{"Human runbook", t.Runbook},
	} {
		if len(s.items) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n", s.heading)
		for _, item := range s.items {
			fmt.Fprintf(&b, "- %s\n", oneLineOf(item))
		}
	}
	return b.String()
}

// ExampleID is the acceptance example that tests criterion n (counting
// from 1) of a task: 0007-add-tags-c2.
func ExampleID(slug string, n int) string {
	return fmt.Sprintf("%s-c%d", slug, n)
}

// list renders a front-matter list: [a, b], or [] when empty.
func list(items []string) string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = oneLineOf(s)
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// oneLineOf keeps a value on its line of the markdown: a line break or
// other control character becomes a space. Validation refuses them; this
// keeps the view whole for rows written before it did.
func oneLineOf(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}
