package plan_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"autoapp/intent/plan"
	"autoapp/intent/refusal"
)

// task is a graph node: a slug, a priority and its blockers.
func task(slug, priority string, blockedBy ...string) plan.Task {
	return plan.Task{Slug: slug, Priority: priority, BlockedBy: blockedBy}
}

func problemStrings(ps refusal.Problems) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

func TestValidateGraph(t *testing.T) {
	cases := []struct {
		name  string
		tasks []plan.Task
		want  []string
	}{
		{"no tasks", nil, nil},
		{"a chain", []plan.Task{task("0001-a", "low"), task("0002-b", "high", "0001-a"), task("0003-c", "high", "0002-b", "0001-a")}, nil},
		{"unknown blocker", []plan.Task{task("0001-a", "low"), task("0002-b", "high", "0001-a", "0009-gone")},
			[]string{`0002-b.blocked_by[1]: there is no task "0009-gone" in this intent; name one of its tasks or drop the blocker`}},
		{"unknown blocker of a task with no slug", []plan.Task{task("", "low", "0009-gone")},
			[]string{`tasks[0].blocked_by[0]: there is no task "0009-gone" in this intent; name one of its tasks or drop the blocker`}},
		{"two-cycle", []plan.Task{task("0003-a", "high", "0004-b"), task("0004-b", "high", "0003-a")},
			[]string{"blocked_by: 0003-a → 0004-b → 0003-a form a cycle"}},
		{"three-cycle", []plan.Task{task("0001-a", "low", "0003-c"), task("0002-b", "low", "0001-a"), task("0003-c", "low", "0002-b"), task("0004-d", "low", "0001-a")},
			[]string{"blocked_by: 0001-a → 0003-c → 0002-b → 0001-a form a cycle"}},
		{"self", []plan.Task{task("0001-a", "low", "0001-a")},
			[]string{"blocked_by: 0001-a → 0001-a form a cycle"}},
		{"two cycles, each once", []plan.Task{
			task("0001-a", "low", "0002-b"), task("0002-b", "low", "0001-a"),
			task("0005-e", "low", "0003-c"), task("0003-c", "low", "0004-d"), task("0004-d", "low", "0005-e"),
		}, []string{
			"blocked_by: 0001-a → 0002-b → 0001-a form a cycle",
			"blocked_by: 0003-c → 0004-d → 0005-e → 0003-c form a cycle",
		}},
		{"cycles sharing a slug", []plan.Task{task("0001-a", "low", "0002-b", "0003-c"), task("0002-b", "low", "0001-a"), task("0003-c", "low", "0001-a")},
			[]string{"blocked_by: 0001-a → 0002-b → 0001-a → 0003-c → 0001-a form cycles"}},
		{"unknown repaid_by", []plan.Task{{Slug: "0001-a", Stub: true, RepaidBy: "0002-b"}},
			[]string{`0001-a.repaid_by: there is no task "0002-b" in this intent; name the task in it that repays the stub`}},
		{"known repaid_by", []plan.Task{{Slug: "0001-a", Stub: true, RepaidBy: "0002-b"}, task("0002-b", "low")}, nil},
		{"shared slug", []plan.Task{task("0001-a", "low"), task("0001-a", "high")},
			[]string{`tasks[1].slug: "0001-a" is already the slug of tasks[0]; each task has its own`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := problemStrings(plan.ValidateGraph(c.tasks))
			if !slices.Equal(got, c.want) {
				t.Fatalf("problems:\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestValidateGraphCycleNamesEverySlug(t *testing.T) {
	var tasks []plan.Task
	for i := 1; i <= 5; i++ {
		tasks = append(tasks, task(fmt.Sprintf("%04d-t", i), "low", fmt.Sprintf("%04d-t", i%5+1)))
	}
	ps := plan.ValidateGraph(tasks)
	if len(ps) != 1 || ps[0].Field != "blocked_by" {
		t.Fatalf("want one cycle, got %v", ps)
	}
	for _, k := range tasks {
		if !strings.Contains(ps[0].Message, k.Slug) {
			t.Errorf("%s not named in %q", k.Slug, ps[0].Message)
		}
	}
}

func TestValidateGraphTaskCount(t *testing.T) {
	for _, n := range []int{plan.MaxLiveTasks, plan.MaxLiveTasks + 1} {
		t.Run(fmt.Sprintf("%d tasks", n), func(t *testing.T) {
			var tasks []plan.Task
			for i := 1; i <= n; i++ {
				tasks = append(tasks, task(fmt.Sprintf("%04d-t", i), "low"))
			}
			got := problemStrings(plan.ValidateGraph(tasks))
			var want []string
			if n > plan.MaxLiveTasks {
				want = []string{"tasks: an intent holds at most 12 live tasks, and this plan has 13; merge small tasks or leave some for a later intent"}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("problems:\n got %q\nwant %q", got, want)
			}
		})
	}
}

func slugs(tasks []plan.Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.Slug
	}
	return out
}

func TestRunOrder(t *testing.T) {
	cases := []struct {
		name  string
		tasks []plan.Task
		want  []string
	}{
		{"empty", nil, []string{}},
		{"ties by priority then slug", []plan.Task{
			task("0004-d", "low"), task("0002-b", "medium"), task("0003-c", "high"), task("0001-a", "medium"), task("0005-e", "high"),
		}, []string{"0003-c", "0005-e", "0001-a", "0002-b", "0004-d"}},
		{"chain: a low blocker runs before a high task", []plan.Task{
			task("0001-c", "high", "0002-b"), task("0002-b", "high", "0003-a"), task("0003-a", "low"),
		}, []string{"0003-a", "0002-b", "0001-c"}},
		{"ready tasks choose by priority, not by what they unblock", []plan.Task{
			task("0001-a", "low"), task("0002-b", "high", "0001-a"), task("0003-c", "medium"),
		}, []string{"0003-c", "0001-a", "0002-b"}},
		{"diamond", []plan.Task{
			task("0004-d", "high", "0002-b", "0003-c"), task("0003-c", "medium", "0001-a"), task("0002-b", "high", "0001-a"),
			task("0001-a", "low"), task("0005-e", "medium"),
		}, []string{"0005-e", "0001-a", "0002-b", "0003-c", "0004-d"}},
		{"cycle goes last, every task once", []plan.Task{
			task("0001-x", "high", "0002-y"), task("0002-y", "low", "0001-x"), task("0003-w", "high", "0001-x"), task("0004-z", "low"),
		}, []string{"0004-z", "0001-x", "0003-w", "0002-y"}},
		{"unknown blocker goes last", []plan.Task{
			task("0001-a", "high", "0009-gone"), task("0002-b", "low"),
		}, []string{"0002-b", "0001-a"}},
		{"self blocker goes last", []plan.Task{
			task("0001-a", "high", "0001-a"), task("0002-b", "low"),
		}, []string{"0002-b", "0001-a"}},
		{"unknown priority after low", []plan.Task{
			task("0001-a", ""), task("0002-b", "low"),
		}, []string{"0002-b", "0001-a"}},
		{"a shared slug is placed when both are", []plan.Task{
			task("0002-b", "high", "0001-a"), task("0001-a", "low"), task("0001-a", "medium"),
		}, []string{"0001-a", "0001-a", "0002-b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := slugs(c.tasks)
			got := slugs(plan.RunOrder(c.tasks))
			if !slices.Equal(got, c.want) {
				t.Fatalf("order:\n got %v\nwant %v", got, c.want)
			}
			if !slices.Equal(slugs(c.tasks), before) {
				t.Fatalf("input reordered: %v", slugs(c.tasks))
			}
		})
	}
}

func TestRunOrderIsStableForEqualTasks(t *testing.T) {
	tasks := []plan.Task{
		{Slug: "0001-a", Priority: "low", Title: "first"},
		{Slug: "0001-a", Priority: "low", Title: "second"},
	}
	got := plan.RunOrder(tasks)
	if got[0].Title != "first" || got[1].Title != "second" {
		t.Fatalf("order: %q, %q", got[0].Title, got[1].Title)
	}
}
