package request_test

import (
	"context"
	"fmt"
	"testing"

	"autoapp/intent"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
)

// TestWhetherAPlanCanBeApprovedIsOneRule: the state a page reads says
// whether the plan can be approved now and, when not, why; Approve keeps
// the same rule and refuses with the same sentence.
func TestWhetherAPlanCanBeApprovedIsOneRule(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// arrange makes the request, and returns it and the sentence
		// why it cannot be approved ("" when it can).
		arrange func(t *testing.T, e *env) (request.State, string)
	}{
		{"a guided plan just submitted", func(t *testing.T, e *env) (request.State, string) {
			st, _ := e.planned(t, "notes", request.ModeGuided, "Add tags")
			return st, ""
		}},
		{"an autonomous request", func(t *testing.T, e *env) (request.State, string) {
			st, _ := e.planned(t, "notes", request.ModeAutonomous, "Add tags")
			return st, fmt.Sprintf("Request %d is autonomous: its plan runs without an approval.", st.ID)
		}},
		{"no plan yet", func(t *testing.T, e *env) (request.State, string) {
			return e.create(t, "notes", request.ModeGuided), "There is no submitted plan to approve yet."
		}},
		{"being written again", func(t *testing.T, e *env) (request.State, string) {
			st, _ := e.planned(t, "notes", request.ModeGuided, "Add tags")
			if _, err := e.backlog.AddTask(ctx, st.IntentID, task("Filter by tag")); err != nil {
				t.Fatal(err)
			}
			return st, "The engineer is writing the plan again; approve it once it is submitted."
		}},
		{"changed after it was submitted", func(t *testing.T, e *env) (request.State, string) {
			st, tasks := e.planned(t, "notes", request.ModeGuided, "Add tags")
			// Stopped after a run, the engineer's chat turn rewrites a task
			// without submitting the plan again.
			e.approve(t, st.ID)
			if err := e.backlog.BeginRun(ctx, st.IntentID); err != nil {
				t.Fatal(err)
			}
			if err := e.backlog.MoveIntent(ctx, st.IntentID, intent.IntentStopped, "0001-add-tags failed."); err != nil {
				t.Fatal(err)
			}
			revised := task("Add tags")
			revised.Summary = "Tags, as chips."
			if _, err := e.backlog.ReplaceTask(ctx, tasks[0].IntentID, tasks[0].Slug, revised); err != nil {
				t.Fatal(err)
			}
			return st, "The plan changed after it was submitted: 0001-add-tags was replaced. Approve it once the engineer submits it again."
		}},
		{"running", func(t *testing.T, e *env) (request.State, string) {
			st, _ := e.planned(t, "notes", request.ModeGuided, "Add tags")
			e.approve(t, st.ID)
			if err := e.backlog.BeginRun(ctx, st.IntentID); err != nil {
				t.Fatal(err)
			}
			return st, fmt.Sprintf("Intent #%d is running; approve its plan once it stops.", st.IntentID)
		}},
		{"withdrawn", func(t *testing.T, e *env) (request.State, string) {
			st, _ := e.planned(t, "notes", request.ModeGuided, "Add tags")
			if err := e.backlog.Withdraw(ctx, e.op(), st.IntentID); err != nil {
				t.Fatal(err)
			}
			return st, fmt.Sprintf("Intent #%d is withdrawn; its plan can no longer be approved.", st.IntentID)
		}},
		{"approved already", func(t *testing.T, e *env) (request.State, string) {
			st, _ := e.planned(t, "notes", request.ModeGuided, "Add tags")
			return e.approve(t, st.ID), "This plan is approved already."
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := mustOpen(t)
			st, why := tc.arrange(t, e)
			st = e.state(t, st.ID)
			if st.Approvable != (why == "") || st.Unapprovable != why {
				t.Fatalf("the state says approvable %v, %q; want %v, %q", st.Approvable, st.Unapprovable, why == "", why)
			}
			_, err := e.svc.Approve(ctx, st.ID, st.Revision, e.op())
			if why == "" {
				if err != nil {
					t.Fatalf("Approve refused what the state says can be approved: %v", err)
				}
				return
			}
			if re := wantRefusal(t, err, refusal.Conflict); re.Message != why {
				t.Fatalf("Approve refused with %q; the state says %q", re.Message, why)
			}
		})
	}
}
