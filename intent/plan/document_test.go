package plan_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"autoapp/intent/plan"
)

func TestDocument(t *testing.T) {
	cases := []struct {
		name    string
		intents []plan.DocIntent
		want    string
	}{
		{"no intents", nil, "# intent:notes\n\nNo live intents.\n"},
		{"live intents, tasks and a failed task's reason", []plan.DocIntent{
			{ID: 3, Status: "running", Request: "Add tags to notes\nand a filter", Questions: []string{"Are tags case-sensitive?"}, Tasks: []plan.DocTask{
				{Slug: "0007-add-tags", Status: "completed", Tier: "quick", Title: "Add tags to notes", Reason: "not shown"},
				{Slug: "0008-filter-by-tag", Status: "failed", Tier: "standard", Title: "Filter notes by tag", Reason: "The build failed: undefined: Tag"},
				{Slug: "0009-gone", Status: "removed", Tier: "quick", Title: "Removed"},
				{Slug: "0010-later", Status: "blocked", Title: "Tag colours"},
			}},
			{ID: 2, Status: "withdrawn", Request: "Dark mode"},
			{ID: 4, Status: "draft", Request: "Export notes"},
		}, `# intent:notes

## Intent 3 (running)
Request: Add tags to notes and a filter
Open questions:
- Are tags case-sensitive?
Tasks:
- 0007-add-tags [completed, quick] Add tags to notes
- 0008-filter-by-tag [failed, standard] Filter notes by tag — The build failed: undefined: Tag
- 0010-later [blocked] Tag colours

## Intent 4 (draft)
Request: Export notes
`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := plan.Document("notes", c.intents); got != c.want {
				t.Fatalf("document:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

func TestDocumentCap(t *testing.T) {
	var intents []plan.DocIntent
	total := 0
	for i := 1; i <= 6; i++ {
		in := plan.DocIntent{ID: int64(i), Status: "running", Request: strings.Repeat("é", 400)}
		for j := 1; j <= plan.MaxLiveTasks; j++ {
			total++
			in.Tasks = append(in.Tasks, plan.DocTask{
				Slug: fmt.Sprintf("%04d-task", total), Status: "failed", Tier: "deep",
				Title: strings.Repeat("ü", 100), Reason: "The turn made no tool call for 8 minutes.",
			})
		}
		intents = append(intents, in)
	}
	doc := plan.Document("notes", intents)
	if n := utf8.RuneCountInString(doc); n > plan.MaxDocument {
		t.Fatalf("document has %d characters", n)
	}
	lines := strings.Split(strings.TrimSuffix(doc, "\n"), "\n")
	last := lines[len(lines)-1]
	shownTasks, shownIntents := strings.Count(doc, "\n- 0"), strings.Count(doc, "\n## Intent ")
	want := fmt.Sprintf("… %d tasks and %d intents left out: this document holds at most 3000 characters.", total-shownTasks, 6-shownIntents)
	if last != want {
		t.Fatalf("last line %q, want %q", last, want)
	}
	if lines[len(lines)-2] != "" || strings.HasSuffix(lines[len(lines)-3], ":") {
		t.Fatalf("the cut should end on a whole entry:\n%s", doc)
	}
	if shownTasks == 0 {
		t.Fatalf("no task fits:\n%s", doc)
	}
}

func TestDocumentCutsWholeLines(t *testing.T) {
	in := plan.DocIntent{ID: 1, Status: "running"}
	for i := range 40 {
		in.Tasks = append(in.Tasks, plan.DocTask{Slug: fmt.Sprintf("%04d-t", i+1), Status: "in-queue", Tier: "quick", Title: strings.Repeat("a", 90)})
	}
	doc := plan.Document("notes", []plan.DocIntent{in})
	if n := utf8.RuneCountInString(doc); n > plan.MaxDocument {
		t.Fatalf("document has %d characters", n)
	}
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "- ") && !strings.HasSuffix(l, strings.Repeat("a", 90)) {
			t.Fatalf("a task line was cut: %q", l)
		}
	}
	if !strings.Contains(doc, "tasks left out") || strings.Contains(doc, "intent left out") {
		t.Fatalf("last line:\n%s", doc)
	}
}
