package plan_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"autoapp/intent/plan"
)

// FuzzValidate builds plans from the input, as JSON tasks when it parses
// and otherwise as tasks whose every field comes from the input's text,
// and runs every function of the package over them: none may panic,
// RunOrder returns each task once, and a valid graph runs blockers first.
func FuzzValidate(f *testing.F) {
	valid, _ := json.Marshal([]plan.Task{validTask(), {
		Slug: "0006-list-notes", Title: "List notes", Priority: "low", Labels: []string{"views"},
		EstimatedLines: 40, Risk: "normal", Reasoning: "low", Summary: "Notes are listed.",
		Criteria: []plan.Criterion{{Text: "The page lists notes"}}, NoFailurePath: "Nothing is sent",
	}})
	f.Add(string(valid))
	f.Add(`[{"slug":"0001-a","blocked_by":["0002-b"]},{"slug":"0002-b","blocked_by":["0001-a"]},{"slug":"0003-c","blocked_by":["0003-c","0009-x"]}]`)
	f.Add(`[{"slug":"0001-a","priority":"high","stub":true,"repaid_by":"0001-a","labels":["views","views","x"]},{"slug":"0001-a"}]`)
	f.Add(`[{"title":"","criteria":[{"text":"Only after activation","failure":true}],"estimated_lines":-1}]`)
	f.Add("Add tags to notes only after activation 0001-a 0002-b views")
	f.Add("")
	f.Add("\x00\n\u2028 日本語 Café 0007-add-tags ollama:qwen3:27b")

	f.Fuzz(func(t *testing.T, input string) {
		var tasks []plan.Task
		if json.Unmarshal([]byte(input), &tasks) != nil {
			tasks = tasksFromText(input)
		}

		order := plan.RunOrder(tasks)
		if !isPermutation(tasks, order) {
			t.Fatalf("RunOrder is not a permutation:\n%v\n%v", slugs(tasks), slugs(order))
		}
		graph := plan.ValidateGraph(tasks)
		if len(graph) == 0 {
			placed := map[string]bool{}
			for _, k := range order {
				for _, b := range k.BlockedBy {
					if !placed[b] {
						t.Fatalf("%s runs before its blocker %s: %v", k.Slug, b, slugs(order))
					}
				}
				placed[k.Slug] = true
			}
		}
		for _, p := range graph {
			if p.Field == "" || p.Message == "" {
				t.Fatalf("unnamed problem %+v", p)
			}
		}

		var doc []plan.DocTask
		existing := slugs(tasks)
		for _, k := range tasks {
			for _, p := range plan.ValidateTask(k) {
				if p.Field == "" || p.Message == "" {
					t.Fatalf("unnamed problem %+v", p)
				}
			}
			tier, reasons := plan.Tier(k)
			if !slices.Contains(plan.Tiers, tier) || len(reasons) == 0 {
				t.Fatalf("Tier = %q %q", tier, reasons)
			}
			passed := make([]bool, len(k.Criteria)+1)
			for i := range passed {
				passed[i] = i%2 == 0
			}
			md := plan.Markdown(k, passed)
			if !strings.HasPrefix(md, "---\n") || !strings.Contains(md, plan.HostCriterion+"\n") {
				t.Fatalf("markdown:\n%s", md)
			}
			if !plan.IsSlug(plan.Slug(len(existing)+1, k.Title)) {
				t.Fatalf("Slug(%d, %q) is not a slug", len(existing)+1, k.Title)
			}
			_, _, _ = plan.ParseModelRef(k.Title)
			doc = append(doc, plan.DocTask{Slug: k.Slug, Status: "failed", Tier: tier, Title: k.Title, Reason: k.Summary})
		}
		d := plan.Document(input, []plan.DocIntent{{ID: 1, Status: "running", Request: input, Questions: []string{input}, Tasks: doc}})
		if utf8.RuneCountInString(d) > plan.MaxDocument {
			t.Fatalf("document has %d characters", utf8.RuneCountInString(d))
		}
	})
}

// tasksFromText makes tasks whose fields all come from text: each line,
// up to 64, is a task, its words its labels, blockers and locks.
func tasksFromText(text string) []plan.Task {
	var tasks []plan.Task
	lines := strings.Split(text, "\n")
	for i, line := range lines[:min(len(lines), 64)] {
		words := strings.Fields(line)
		tasks = append(tasks, plan.Task{
			Slug:           plan.Slug(len(tasks)+1, line),
			Title:          line,
			Priority:       pick(plan.Priorities, i, line),
			Labels:         words,
			BlockedBy:      words,
			EstimatedLines: len(line) * 7,
			Locks:          words,
			Risk:           pick(plan.Risks, i, line),
			Stub:           len(words)%2 == 1,
			RepaidBy:       line,
			Reasoning:      pick(plan.Reasoning, i, line),
			Summary:        line,
			Criteria:       []plan.Criterion{{Text: line, Failure: i%2 == 0}, {Text: text}},
			NoFailurePath:  line,
			NonFunctional:  words,
			TestNotes:      []string{line},
			Runbook:        words,
		})
	}
	return tasks
}

func pick(from []string, i int, s string) string {
	return from[(i+len(s))%len(from)]
}

func isPermutation(in, out []plan.Task) bool {
	if len(in) != len(out) {
		return false
	}
	count := map[string]int{}
	for _, k := range in {
		b, _ := json.Marshal(k)
		count[string(b)]++
	}
	for _, k := range out {
		b, _ := json.Marshal(k)
		count[string(b)]--
		if count[string(b)] < 0 {
			return false
		}
	}
	return true
}
