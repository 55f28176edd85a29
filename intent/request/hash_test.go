package request_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"autoapp/intent"
	"autoapp/intent/plan"
	"autoapp/intent/request"
)

func TestPlanHashIsStableAcrossReads(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	st, tasks := e.planned(t, "notes", request.ModeGuided, "Add tags", "Show tags")
	a, err := e.backlog.Get(ctx, st.IntentID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.backlog.Get(ctx, st.IntentID)
	if err != nil {
		t.Fatal(err)
	}
	h := request.PlanHash(a)
	if len(h) != 64 || request.PlanHash(b) != h || st.Current != h || st.Plans[0].Hash != h {
		t.Fatalf("hashes %s %s, state %+v", h, request.PlanHash(b), st)
	}
	// The order tasks are listed in does not matter.
	reversed := a
	reversed.Tasks = slices.Clone(a.Tasks)
	slices.Reverse(reversed.Tasks)
	if request.PlanHash(reversed) != h {
		t.Fatal("the hash depends on the order of the tasks")
	}
	// Running the plan does not change it: statuses other than removed are left out.
	if err := e.backlog.MoveTask(ctx, tasks[0].ID, intent.TaskInQueue, intent.Move{Reason: "test", Actor: intent.ActorExecutor}); err != nil {
		t.Fatal(err)
	}
	c, err := e.backlog.Get(ctx, st.IntentID)
	if err != nil {
		t.Fatal(err)
	}
	if request.PlanHash(c) != h {
		t.Fatal("a task moving to in-queue changed the hash")
	}
	// A removed task leaves the plan.
	c.Tasks[1].Status = intent.TaskRemoved
	if request.PlanHash(c) == h {
		t.Fatal("a removed task did not change the hash")
	}
}

// TestPlanHashCoversEveryPlanField changes each field of plan.Task in turn,
// and the model, and expects a different hash each time: a field added to
// the plan later is covered without touching the hash.
func TestPlanHashCoversEveryPlanField(t *testing.T) {
	base := intent.BacklogTask{Task: intent.Task{Task: task("Add tags"), Status: intent.TaskProposed}}
	base.Slug = "0001-add-tags"
	detail := func(bt intent.BacklogTask) intent.IntentDetail {
		return intent.IntentDetail{Tasks: []intent.BacklogTask{bt}}
	}
	h := request.PlanHash(detail(base))

	typ := reflect.TypeOf(plan.Task{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		t.Run(f.Name, func(t *testing.T) {
			bt := base
			bt.Task.Task = cloneTask(base.Task.Task)
			v := reflect.ValueOf(&bt.Task.Task).Elem().Field(i)
			switch v.Kind() {
			case reflect.String:
				v.SetString(v.String() + "x")
			case reflect.Int:
				v.SetInt(v.Int() + 1)
			case reflect.Bool:
				v.SetBool(!v.Bool())
			case reflect.Slice:
				v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem()))
			default:
				t.Fatalf("field %s is a %s the test does not change", f.Name, v.Kind())
			}
			if request.PlanHash(detail(bt)) == h {
				t.Fatalf("changing %s kept the hash", f.Name)
			}
		})
	}
	t.Run("Model", func(t *testing.T) {
		bt := base
		bt.Model = "ollama:qwen3"
		if request.PlanHash(detail(bt)) == h {
			t.Fatal("changing the model kept the hash")
		}
	})
	t.Run("nil and empty lists", func(t *testing.T) {
		bt := base
		bt.Task.Task = cloneTask(base.Task.Task)
		bt.BlockedBy, bt.Locks, bt.TestNotes = []string{}, nil, []string{}
		other := base
		other.Task.Task = cloneTask(base.Task.Task)
		other.BlockedBy, other.Locks, other.TestNotes = nil, []string{}, nil
		if request.PlanHash(detail(bt)) != request.PlanHash(detail(other)) {
			t.Fatal("a nil list and an empty one hash differently")
		}
	})
}

// TestPlanHashCoversTheAnalysis changes each part of the analysis the
// owner is shown in turn and expects a different hash each time; the open
// questions are not part of the plan.
func TestPlanHashCoversTheAnalysis(t *testing.T) {
	base := intent.IntentDetail{Tasks: []intent.BacklogTask{{Task: intent.Task{Task: task("Add tags"), Status: intent.TaskProposed}}}}
	base.Restated = []string{"Add tags."}
	h := request.PlanHash(base)
	typ := reflect.TypeOf(intent.Analysis{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		t.Run(f.Name, func(t *testing.T) {
			d := base
			v := reflect.ValueOf(&d.Analysis).Elem().Field(i)
			v.Set(reflect.Append(v, reflect.ValueOf("one more line")))
			if changed := request.PlanHash(d) != h; changed != (f.Name != "Questions") {
				t.Fatalf("changing %s changed the hash: %v", f.Name, changed)
			}
		})
	}
	t.Run("nil and empty lists", func(t *testing.T) {
		d := base
		d.Fits, d.Conflicts = []string{}, nil
		if request.PlanHash(d) != h {
			t.Fatal("a nil list and an empty one hash differently")
		}
	})
}

func cloneTask(p plan.Task) plan.Task {
	p.Labels = slices.Clone(p.Labels)
	p.BlockedBy = slices.Clone(p.BlockedBy)
	p.Locks = slices.Clone(p.Locks)
	p.Criteria = slices.Clone(p.Criteria)
	p.NonFunctional = slices.Clone(p.NonFunctional)
	p.TestNotes = slices.Clone(p.TestNotes)
	p.Runbook = slices.Clone(p.Runbook)
	return p
}
