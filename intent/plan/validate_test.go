package plan_test

import (
	"strings"
	"testing"

	"autoapp/intent/plan"
)

// validTask is a plan with no problems; each case changes one field.
func validTask() plan.Task {
	return plan.Task{
		Slug:           "0007-add-tags-to-notes",
		Title:          "Add tags to notes",
		Priority:       "high",
		Labels:         []string{"views", "migration"},
		BlockedBy:      []string{"0006-list-notes"},
		EstimatedLines: 120,
		Locks:          []string{"notes table"},
		Risk:           "normal",
		Reasoning:      "medium",
		Summary:        "A note can carry tags, so a person can find related notes again.",
		Criteria: []plan.Criterion{
			{Text: "The note page shows each tag of the note"},
			{Text: `POST /notes/1/tags with an empty tag answers 400 and says "A tag needs a name."`, Failure: true},
		},
		NonFunctional: []string{"The notes page still renders in under 100 ms"},
		TestNotes:     []string{"Seed two notes, one with tags"},
		Runbook:       []string{"Open a note and add a tag"},
	}
}

type fieldCase struct {
	name   string
	change func(*plan.Task)
	field  string // the one field named, or "" for no problem
}

// runFieldCases checks that each change gives exactly one problem, on the
// named field, with a sentence.
func runFieldCases(t *testing.T, cases []fieldCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			task := validTask()
			c.change(&task)
			ps := plan.ValidateTask(task)
			if c.field == "" {
				if len(ps) != 0 {
					t.Fatalf("want no problem, got %v", ps)
				}
				return
			}
			if len(ps) != 1 || ps[0].Field != c.field {
				t.Fatalf("want one problem on %s, got %v", c.field, ps)
			}
			if strings.TrimSpace(ps[0].Message) == "" {
				t.Fatalf("problem on %s has no sentence", c.field)
			}
		})
	}
}

func TestValidateTaskAcceptsAValidPlan(t *testing.T) {
	if ps := plan.ValidateTask(validTask()); len(ps) != 0 {
		t.Fatalf("valid plan refused: %v", ps)
	}
}

func TestValidateTaskSlug(t *testing.T) {
	runFieldCases(t, []fieldCase{
		{"unset", func(k *plan.Task) { k.Slug = "" }, ""},
		{"one word", func(k *plan.Task) { k.Slug = "0001-a" }, ""},
		{"six words", func(k *plan.Task) { k.Slug = "0001-a-b-c-d-e-f" }, ""},
		{"seven words", func(k *plan.Task) { k.Slug = "0001-a-b-c-d-e-f-g" }, "slug"},
		{"three digits", func(k *plan.Task) { k.Slug = "007-add-tags" }, "slug"},
		{"past 9999", func(k *plan.Task) { k.Slug = "10000-add-tags" }, ""},
		{"no words", func(k *plan.Task) { k.Slug = "0007" }, "slug"},
		{"uppercase", func(k *plan.Task) { k.Slug = "0007-Add-tags" }, "slug"},
		{"double dash", func(k *plan.Task) { k.Slug = "0007--tags" }, "slug"},
		{"trailing newline", func(k *plan.Task) { k.Slug = "0007-tags\n" }, "slug"},
	})
}

func TestValidateTaskTitle(t *testing.T) {
	runFieldCases(t, []fieldCase{
		{"empty", func(k *plan.Task) { k.Title = "" }, "title"},
		{"blank", func(k *plan.Task) { k.Title = "   " }, "title"},
		{"120 characters", func(k *plan.Task) { k.Title = strings.Repeat("é", 120) }, ""},
		{"121 characters", func(k *plan.Task) { k.Title = strings.Repeat("a", 121) }, "title"},
		{"two lines", func(k *plan.Task) { k.Title = "Add tags\nto notes" }, "title"},
		{"tab", func(k *plan.Task) { k.Title = "Add\ttags" }, "title"},
	})
}

func TestValidateTaskPriority(t *testing.T) {
	runFieldCases(t, []fieldCase{
		{"medium", func(k *plan.Task) { k.Priority = "medium" }, ""},
		{"low", func(k *plan.Task) { k.Priority = "low" }, ""},
		{"missing", func(k *plan.Task) { k.Priority = "" }, "priority"},
		{"urgent", func(k *plan.Task) { k.Priority = "urgent" }, "priority"},
		{"capitalised", func(k *plan.Task) { k.Priority = "High" }, "priority"},
	})
}

func TestValidateTaskLabels(t *testing.T) {
	runFieldCases(t, []fieldCase{
		{"none", func(k *plan.Task) { k.Labels = nil }, "labels"},
		{"four", func(k *plan.Task) { k.Labels = []string{"views", "theme", "copy", "host"} }, ""},
		{"five", func(k *plan.Task) { k.Labels = []string{"views", "theme", "copy", "host", "contract"} }, "labels"},
		{"unknown second", func(k *plan.Task) { k.Labels = []string{"views", "ui"} }, "labels[1]"},
		{"empty first", func(k *plan.Task) { k.Labels = []string{"", "views"} }, "labels[0]"},
		{"duplicate", func(k *plan.Task) { k.Labels = []string{"views", "copy", "views"} }, "labels[2]"},
	})
}

func TestValidateTaskBlockedBy(t *testing.T) {
	runFieldCases(t, []fieldCase{
		{"none", func(k *plan.Task) { k.BlockedBy = nil }, ""},
		{"not a slug", func(k *plan.Task) { k.BlockedBy = []string{"0006-list-notes", "list notes"} }, "blocked_by[1]"},
		{"bare number", func(k *plan.Task) { k.BlockedBy = []string{"0006"} }, "blocked_by[0]"},
		{"itself", func(k *plan.Task) { k.BlockedBy = []string{k.Slug} }, "blocked_by[0]"},
	})
}

func TestValidateTaskEstimatedLines(t *testing.T) {
	runFieldCases(t, []fieldCase{
		{"zero", func(k *plan.Task) { k.EstimatedLines = 0 }, "estimated_lines"},
		{"negative", func(k *plan.Task) { k.EstimatedLines = -3 }, "estimated_lines"},
		{"one", func(k *plan.Task) { k.EstimatedLines = 1 }, ""},
		{"5000", func(k *plan.Task) { k.EstimatedLines = 5000 }, ""},
		{"5001", func(k *plan.Task) { k.EstimatedLines = 5001 }, "estimated_lines"},
	})
}

func TestValidateTaskLocks(t *testing.T) {
	runFieldCases(t, []fieldCase{
		{"none", func(k *plan.Task) { k.Locks = nil }, ""},
		{"empty second", func(k *plan.Task) { k.Locks = []string{"notes", ""} }, "locks[1]"},
		{"blank", func(k *plan.Task) { k.Locks = []string{"  "} }, "locks[0]"},
	})
}

func TestValidateTaskRisk(t *testing.T) {
	runFieldCases(t, []fieldCase{
		{"high", func(k *plan.Task) { k.Risk = "high" }, ""},
		{"missing", func(k *plan.Task) { k.Risk = "" }, "risk"},
		{"low", func(k *plan.Task) { k.Risk = "low" }, "risk"},
	})
}

func TestValidateTaskStub(t *testing.T) {
	runFieldCases(t, []fieldCase{
		{"stub repaid", func(k *plan.Task) { k.Stub, k.RepaidBy = true, "0009-real-search" }, ""},
		{"stub without repaid_by", func(k *plan.Task) { k.Stub = true }, "repaid_by"},
		{"repaid_by without stub", func(k *plan.Task) { k.RepaidBy = "0009-real-search" }, "repaid_by"},
		{"repaid_by not a slug", func(k *plan.Task) { k.Stub, k.RepaidBy = true, "real search" }, "repaid_by"},
		{"repaid by itself", func(k *plan.Task) { k.Stub, k.RepaidBy = true, k.Slug }, "repaid_by"},
	})
}

func TestValidateTaskReasoning(t *testing.T) {
	runFieldCases(t, []fieldCase{
		{"low", func(k *plan.Task) { k.Reasoning = "low" }, ""},
		{"high", func(k *plan.Task) { k.Reasoning = "high" }, ""},
		{"missing", func(k *plan.Task) { k.Reasoning = "" }, "reasoning"},
		{"extreme", func(k *plan.Task) { k.Reasoning = "extreme" }, "reasoning"},
	})
}

func TestValidateTaskSummary(t *testing.T) {
	runFieldCases(t, []fieldCase{
		{"empty", func(k *plan.Task) { k.Summary = "" }, "summary"},
		{"blank", func(k *plan.Task) { k.Summary = " \n " }, "summary"},
		{"600 characters", func(k *plan.Task) { k.Summary = strings.Repeat("ü", 600) }, ""},
		{"601 characters", func(k *plan.Task) { k.Summary = strings.Repeat("a", 601) }, "summary"},
	})
}

func TestValidateTaskCriteria(t *testing.T) {
	runFieldCases(t, []fieldCase{
		{"only a failure criterion", func(k *plan.Task) { k.Criteria = k.Criteria[1:] }, ""},
		{"none", func(k *plan.Task) { k.Criteria, k.NoFailurePath = nil, "Nothing the person sends is refused" }, "criteria"},
		{"empty text", func(k *plan.Task) { k.Criteria[0].Text = "" }, "criteria[0].text"},
		{"blank text", func(k *plan.Task) { k.Criteria[1].Text = "  " }, "criteria[1].text"},
		{"400 characters", func(k *plan.Task) { k.Criteria[0].Text = strings.Repeat("a", 400) }, ""},
		{"401 characters", func(k *plan.Task) { k.Criteria[1].Text = strings.Repeat("a", 401) }, "criteria[1].text"},
		{"two lines", func(k *plan.Task) { k.Criteria[0].Text = "The page\nshows tags" }, "criteria[0].text"},
	})
}

func TestValidateTaskFailurePath(t *testing.T) {
	runFieldCases(t, []fieldCase{
		{"failure criterion", func(k *plan.Task) {}, ""},
		{"no_failure_path reason", func(k *plan.Task) {
			k.Criteria = k.Criteria[:1]
			k.NoFailurePath = "The change is a stylesheet; nothing a person sends reaches it"
		}, ""},
		{"neither", func(k *plan.Task) { k.Criteria = k.Criteria[:1] }, "criteria"},
		{"blank reason", func(k *plan.Task) { k.Criteria, k.NoFailurePath = k.Criteria[:1], "  " }, "criteria"},
		{"both", func(k *plan.Task) { k.NoFailurePath = "Nothing can go wrong" }, "no_failure_path"},
		{"reason on two lines", func(k *plan.Task) { k.Criteria, k.NoFailurePath = k.Criteria[:1], "a\nb" }, "no_failure_path"},
		{"reason too long", func(k *plan.Task) { k.Criteria, k.NoFailurePath = k.Criteria[:1], strings.Repeat("a", 401) }, "no_failure_path"},
	})
}

func TestValidateTaskCriterionWording(t *testing.T) {
	cases := []struct {
		text   string
		phrase string // the phrase the sentence quotes, or "" when accepted
	}{
		{"Tags appear after activation", "after activation"},
		{"Tags appear after activate", "after activate"},
		{"Tags appear AFTER Activating the release", "after activating"},
		{"Tags appear after   activated", "after activated"},
		{"Tags appear after\u00a0activation", "after activation"},
		{"Tags are hidden, not in a preview", "not in a preview"},
		{"Tags are hidden Not In A Preview.", "not in a preview"},
		{"The tag list shows only after a reload", "only after"},
		{"Only after saving, the tag shows", "only after"},
		{"The tag shows in the activated release", "in the activated"},
		{"The deactivated note is hidden", ""},
		{"The banner shows after reactivation", ""},
		{"The banner shows after deactivation", ""},
		{"onlyafter is the name of the flag", ""},
		{"The page shows the activation date", ""},
		{"The preview shows tags after saving", ""},
		{"Tags are not in a previewer's cache", ""},
		{"The list is sorted only, after which it pages", ""},
		{"Shown in the activated_at column", ""},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			task := validTask()
			task.Criteria[0].Text = c.text
			ps := plan.ValidateTask(task)
			if c.phrase == "" {
				if len(ps) != 0 {
					t.Fatalf("want no problem, got %v", ps)
				}
				return
			}
			if len(ps) != 1 || ps[0].Field != "criteria[0].text" {
				t.Fatalf("want one problem on criteria[0].text, got %v", ps)
			}
			want := `a criterion is checked against a preview before anything is activated; say what the preview shows instead of "` + c.phrase + `"`
			if ps[0].Message != want {
				t.Fatalf("message:\n got %s\nwant %s", ps[0].Message, want)
			}
		})
	}
}

func TestValidateTaskHostCriterion(t *testing.T) {
	runFieldCases(t, []fieldCase{
		{"exact", func(k *plan.Task) { k.Criteria[0].Text = plan.HostCriterion }, "criteria[0].text"},
		{"case and full stop", func(k *plan.Task) { k.Criteria[0].Text = strings.ToUpper(plan.HostCriterion) + "." }, "criteria[0].text"},
		{"the seed's wording", func(k *plan.Task) {
			k.Criteria[0].Text = "Every criterion above has exactly one test named after it"
		}, "criteria[0].text"},
		{"a different criterion", func(k *plan.Task) {
			k.Criteria[0].Text = "Every tag above has exactly one colour"
		}, ""},
	})
}

func TestValidateTaskItems(t *testing.T) {
	runFieldCases(t, []fieldCase{
		{"none", func(k *plan.Task) { k.NonFunctional, k.TestNotes, k.Runbook = nil, nil, nil }, ""},
		{"empty non-functional", func(k *plan.Task) { k.NonFunctional = []string{""} }, "non_functional[0]"},
		{"test note on two lines", func(k *plan.Task) { k.TestNotes = []string{"a", "b\nc"} }, "test_notes[1]"},
		{"runbook too long", func(k *plan.Task) { k.Runbook = []string{strings.Repeat("a", 401)} }, "runbook[0]"},
	})
}

func TestValidateTaskNamesEveryProblem(t *testing.T) {
	ps := plan.ValidateTask(plan.Task{Labels: []string{"ui"}, Criteria: []plan.Criterion{{Text: "only after activation"}}})
	want := []string{"title", "priority", "labels[0]", "estimated_lines", "risk", "reasoning", "summary", "criteria[0].text", "criteria"}
	var got []string
	for _, p := range ps {
		got = append(got, p.Field)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("fields:\n got %v\nwant %v", got, want)
	}
	if !strings.HasPrefix(ps.Error(), "title: a title is required") {
		t.Fatalf("error: %s", ps.Error())
	}
}
