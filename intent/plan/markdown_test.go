package plan_test

import (
	"testing"

	"autoapp/intent/plan"
)

func TestMarkdown(t *testing.T) {
	cases := []struct {
		name   string
		task   plan.Task
		passed []bool
		want   string
	}{
		{"a stub with a failure criterion, one passed", plan.Task{
			Slug: "0007-add-tags", Title: "Add tags to notes", Priority: "high",
			Labels: []string{"views", "migration"}, BlockedBy: []string{"0005-notes", "0006-list-notes"},
			EstimatedLines: 120, Locks: []string{"notes"}, Risk: "normal", Stub: true, RepaidBy: "0009-real-tags",
			Reasoning: "medium", Summary: "A note can carry tags, so a person can find related notes again.",
			Criteria: []plan.Criterion{
				{Text: "The note page shows each tag of the note"},
				{Text: `POST /notes/1/tags with an empty tag answers 400 and says "A tag needs a name."`, Failure: true},
			},
			NonFunctional: []string{"The notes page still renders in under 100 ms"},
			TestNotes:     []string{"Seed two notes, one with tags"},
			Runbook:       []string{"Open a note", "Add a tag"},
		}, []bool{true, false}, `---
title: Add tags to notes
priority: high
labels: [views, migration]
blocked_by: [0005-notes, 0006-list-notes]
estimated_lines: 120
locks: [notes]
risk: normal
stub: true
repaid_by: 0009-real-tags
---

A note can carry tags, so a person can find related notes again.

## Acceptance criteria
- [x] The note page shows each tag of the note
- [ ] (when it goes wrong) POST /notes/1/tags with an empty tag answers 400 and says "A tag needs a name."
- [ ] Every criterion above has exactly one acceptance example named after it

## Non-functional
- The notes page still renders in under 100 ms

## Test notes
- Seed two notes, one with tags

## Human runbook
- Open a note
- Add a tag
`},
		{"no failure path, empty sections left out, all passed", plan.Task{
			Slug: "0008-warmer-theme", Title: "Warm the theme", Priority: "low", Labels: []string{"theme"},
			EstimatedLines: 30, Risk: "normal", RepaidBy: "0009-ignored-without-stub", Reasoning: "low",
			Summary:       "Softer colours, asked for by the person.",
			Criteria:      []plan.Criterion{{Text: "The page background is #fdf6e3"}},
			NoFailurePath: "A stylesheet change: nothing a person sends reaches it",
		}, []bool{true, true, true}, `---
title: Warm the theme
priority: low
labels: [theme]
blocked_by: []
estimated_lines: 30
locks: []
risk: normal
stub: false
---

Softer colours, asked for by the person.

## Acceptance criteria
- [x] The page background is #fdf6e3
- [ ] No failure path: A stylesheet change: nothing a person sends reaches it
- [x] Every criterion above has exactly one acceptance example named after it
`},
		{"line breaks stay on their line", plan.Task{
			Title: "Two\nlines", Criteria: []plan.Criterion{{Text: "a\r\nb"}}, Runbook: []string{"c\nd"},
		}, nil, `---
title: Two lines
priority: 
labels: []
blocked_by: []
estimated_lines: 0
locks: []
risk: 
stub: false
---

## Acceptance criteria
- [ ] a  b
- [ ] Every criterion above has exactly one acceptance example named after it

## Human runbook
- c d
`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := plan.Markdown(c.task, c.passed); got != c.want {
				t.Fatalf("markdown:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

func TestExampleID(t *testing.T) {
	if got := plan.ExampleID("0007-add-tags", 2); got != "0007-add-tags-c2" {
		t.Fatalf("ExampleID = %q", got)
	}
}
