package request_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"autoapp/intent"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
)

func TestJournalIsAppendOnly(t *testing.T) {
	e := mustOpen(t)
	st := e.create(t, "notes", request.ModeGuided)
	for _, q := range []string{
		`UPDATE request_journal SET body = '{"text":"rewritten","mode":"guided"}' WHERE request_id = ?`,
		`UPDATE request_journal SET revision = 9 WHERE request_id = ?`,
		`DELETE FROM request_journal WHERE request_id = ?`,
	} {
		_, err := e.db.Write.Exec(q, st.ID)
		if err == nil || !strings.Contains(err.Error(), "the request journal is append-only") {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if got := e.state(t, st.ID); got.Text != "Please change notes" || got.Revision != 1 {
		t.Fatalf("after refused writes: %+v", got)
	}
}

func TestCreateKeepsTheTextByteExact(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	e.app(t, "notes")
	text := "  A pomodoro timer:\r\n25-minute work, 5-minute break — café ☕ 日本語 <b>&</b>\u2028\t  \r\n"
	st, err := e.svc.Create(ctx, "notes", text, request.ModeGuided, "op-create")
	if err != nil {
		t.Fatal(err)
	}
	if st.Text != text || st.Mode != request.ModeGuided || st.Revision != 1 || st.AppID != "notes" || st.IntentID != 0 {
		t.Fatalf("created: %+v", st)
	}
	if got := e.state(t, st.ID); got.Text != text {
		t.Fatalf("read back %q, want %q", got.Text, text)
	}
	var body struct {
		Text string `json:"text"`
		Mode string `json:"mode"`
	}
	var raw string
	if err := e.db.Read.Get(&raw, `SELECT body FROM request_journal WHERE request_id = ? AND revision = 1`, st.ID); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(raw), &body); err != nil || body.Text != text || body.Mode != "guided" {
		t.Fatalf("stored body %s: %v", raw, err)
	}
	if n := e.count(t, `SELECT count(*) FROM request_journal WHERE request_id = ? AND kind = 'request' AND actor = 'owner'`, st.ID); n != 1 {
		t.Fatalf("%d request entries", n)
	}

	for name, c := range map[string]struct {
		app, text, mode, op string
		code                refusal.Code
	}{
		"blank text":      {"notes", " \r\n\t", "guided", "op-1", refusal.Invalid},
		"not utf-8":       {"notes", "caf\xe9", "guided", "op-2", refusal.Invalid},
		"too long":        {"notes", strings.Repeat("x", request.MaxText+1), "guided", "op-3", refusal.Invalid},
		"unknown mode":    {"notes", "x", "supervised", "op-4", refusal.Invalid},
		"no operation id": {"notes", "x", "guided", "", refusal.Invalid},
		"long op id":      {"notes", "x", "guided", strings.Repeat("o", request.MaxOpID+1), refusal.Invalid},
		"unknown app":     {"nope", "x", "guided", "op-5", refusal.NotFound},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := e.svc.Create(ctx, c.app, c.text, c.mode, c.op)
			wantRefusal(t, err, c.code)
		})
	}
	if n := e.count(t, `SELECT count(*) FROM requests`); n != 1 {
		t.Fatalf("%d requests after refusals", n)
	}
}

func TestAStaleRevisionIsRefused(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	st := e.create(t, "notes", request.ModeGuided)
	for st.Revision < 7 {
		var err error
		if st, err = e.svc.Message(ctx, st.ID, st.Revision, e.op(), fmt.Sprintf("message %d", st.Revision)); err != nil {
			t.Fatal(err)
		}
	}
	writes := map[string]func(seen int) error{
		"message": func(seen int) error { _, err := e.svc.Message(ctx, st.ID, seen, e.op(), "late"); return err },
		"mode":    func(seen int) error { _, err := e.svc.SetMode(ctx, st.ID, seen, e.op(), "autonomous"); return err },
		"approve": func(seen int) error { _, err := e.svc.Approve(ctx, st.ID, seen, e.op()); return err },
		"answer":  func(seen int) error { _, err := e.svc.Answer(ctx, st.ID, seen, e.op(), "yes"); return err },
	}
	for name, write := range writes {
		t.Run(name, func(t *testing.T) {
			re := wantRefusal(t, write(5), refusal.Conflict)
			if want := "The request changed since you looked (revision 7, you saw 5); reload and try again."; re.Message != want {
				t.Fatalf("message %q", re.Message)
			}
		})
	}
	if n := e.count(t, `SELECT count(*) FROM request_journal WHERE request_id = ?`, st.ID); n != 7 {
		t.Fatalf("%d entries, want 7", n)
	}
	wantRefusal(t, func() error { _, err := e.svc.Message(ctx, 99, 1, e.op(), "x"); return err }(), refusal.NotFound)
}

func TestARepeatedOperationIDReturnsTheFirstResultAndWritesNothing(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	e.app(t, "notes")
	created, err := e.svc.Create(ctx, "notes", "Add tags", request.ModeAutonomous, "op-create")
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.svc.Create(ctx, "notes", "Add tags", request.ModeAutonomous, "op-create")
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != created.ID || again.Text != "Add tags" || again.Mode != request.ModeAutonomous {
		t.Fatalf("repeated create: %+v", again)
	}
	if n := e.count(t, `SELECT count(*) FROM requests`); n != 1 {
		t.Fatalf("%d requests", n)
	}

	first, err := e.svc.Message(ctx, created.ID, 1, "op-message", "Also a filter.")
	if err != nil {
		t.Fatal(err)
	}
	// The page retries with what it showed before: revision 1, now stale.
	repeat, err := e.svc.Message(ctx, created.ID, 1, "op-message", "Also a filter.")
	if err != nil {
		t.Fatal(err)
	}
	if repeat.Revision != first.Revision || len(repeat.Messages) != 1 || repeat.Messages[0].Text != "Also a filter." {
		t.Fatalf("repeated message: %+v", repeat)
	}
	if n := e.count(t, `SELECT count(*) FROM request_journal WHERE request_id = ?`, created.ID); n != 2 {
		t.Fatalf("%d entries, want 2", n)
	}
	if n := e.count(t, `SELECT count(*) FROM request_ops WHERE op_id = 'op-message' AND revision = 2`); n != 1 {
		t.Fatalf("%d operations", n)
	}

	// The same id for another kind of change, or another request, is refused.
	_, err = e.svc.SetMode(ctx, created.ID, 2, "op-message", request.ModeGuided)
	wantRefusal(t, err, refusal.Conflict)
	e.app(t, "shop")
	other, err := e.svc.Create(ctx, "shop", "Sell", request.ModeGuided, "op-shop")
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Message(ctx, other.ID, 1, "op-message", "x")
	wantRefusal(t, err, refusal.Conflict)
	if n := e.count(t, `SELECT count(*) FROM request_journal`); n != 3 {
		t.Fatalf("%d entries, want 3", n)
	}
}

func TestAReusedOperationIDWithOtherWordsIsRefusedAndWritesNothing(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	e.app(t, "notes")
	created, err := e.svc.Create(ctx, "notes", "Add tags", request.ModeAutonomous, "op-create")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Message(ctx, created.ID, 1, "op-message", "Also a filter."); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Question(ctx, created.ID, "One tag or several?"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Answer(ctx, created.ID, 3, "op-answer", "Several."); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.SetMode(ctx, created.ID, 4, "op-mode", request.ModeGuided); err != nil {
		t.Fatal(err)
	}
	const sentence = "was sent before with other words or another mode; nothing was written. Reload the page and send it again."
	for _, c := range []struct {
		name  string
		write func() (request.State, error)
	}{
		{"create with other text", func() (request.State, error) {
			return e.svc.Create(ctx, "notes", "Add labels", request.ModeAutonomous, "op-create")
		}},
		{"create in another mode", func() (request.State, error) {
			return e.svc.Create(ctx, "notes", "Add tags", request.ModeGuided, "op-create")
		}},
		{"message with other text", func() (request.State, error) {
			return e.svc.Message(ctx, created.ID, 1, "op-message", "Also a sort.")
		}},
		{"answer with other text", func() (request.State, error) {
			return e.svc.Answer(ctx, created.ID, 3, "op-answer", "One.")
		}},
		{"mode switched back", func() (request.State, error) {
			return e.svc.SetMode(ctx, created.ID, 4, "op-mode", request.ModeAutonomous)
		}},
		{"a say that would open a request in another mode", func() (request.State, error) {
			st, _, err := e.svc.Say(ctx, request.Say{AppID: "notes", Op: "op-create", Text: "Add tags", Mode: request.ModeGuided}, nil)
			return st, err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.write()
			if re := wantRefusal(t, err, refusal.Conflict); !strings.Contains(re.Message, sentence) {
				t.Fatalf("message %q", re.Message)
			}
			if n := e.count(t, `SELECT count(*) FROM request_journal`); n != 5 {
				t.Fatalf("%d entries, want 5", n)
			}
			if n := e.count(t, `SELECT count(*) FROM requests`); n != 1 {
				t.Fatalf("%d requests, want 1", n)
			}
		})
	}
}

func TestConcurrentOwnerWritesGetDistinctIncreasingRevisions(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	st := e.create(t, "notes", request.ModeGuided)
	const writers = 8
	revisions := make([]int, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			// Each writer reloads and tries again on a stale revision, as the page does.
			for {
				cur, err := e.svc.State(ctx, st.ID)
				if err != nil {
					errs[i] = err
					return
				}
				got, err := e.svc.Message(ctx, st.ID, cur.Revision, fmt.Sprintf("op-writer-%d", i), fmt.Sprintf("writer %d", i))
				var re *refusal.Error
				if errors.As(err, &re) && re.Code == refusal.Conflict {
					continue
				}
				if err != nil {
					errs[i] = err
					return
				}
				if got.Revision <= cur.Revision {
					errs[i] = fmt.Errorf("writer %d saw %d and got %d", i, cur.Revision, got.Revision)
				}
				revisions[i] = got.Revision
				return
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(revisions)
	for i, r := range revisions {
		if r != i+2 {
			t.Fatalf("revisions %v, want 2..%d each once", revisions, writers+1)
		}
	}
	end := e.state(t, st.ID)
	if end.Revision != writers+1 || len(end.Messages) != writers {
		t.Fatalf("end: revision %d, %d messages", end.Revision, len(end.Messages))
	}
	for i, m := range end.Messages {
		if m.Revision != i+2 || m.Actor != request.ActorOwner {
			t.Fatalf("message %d: %+v", i, m)
		}
	}
}

func TestQuestionsAndAnswers(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	st := e.create(t, "notes", request.ModeGuided)
	_, err := e.svc.Answer(ctx, st.ID, st.Revision, e.op(), "Yes.")
	if re := wantRefusal(t, err, refusal.Conflict); re.Message != "The engineer has no open question on request 1; send this as a message instead." {
		t.Fatalf("message %q", re.Message)
	}
	if _, err := e.svc.Question(ctx, st.ID, "Can a note have several tags?"); err != nil {
		t.Fatal(err)
	}
	st, err = e.svc.Question(ctx, st.ID, "Is the filter by one tag?")
	if err != nil {
		t.Fatal(err)
	}
	if open := st.OpenQuestions(); len(open) != 2 || open[0].Actor != request.ActorEngineer || open[1].Revision != 3 {
		t.Fatalf("open questions: %+v", open)
	}
	st, err = e.svc.Answer(ctx, st.ID, st.Revision, e.op(), "Several; filter by one.  ")
	if err != nil {
		t.Fatal(err)
	}
	// The answer answers the oldest open question, and that one only.
	if open := st.OpenQuestions(); len(open) != 1 || open[0].Revision != 3 || len(st.Answers) != 1 ||
		st.Answers[0].Text != "Several; filter by one.  " || st.Answers[0].Question != 2 || st.Revision != 4 {
		t.Fatalf("answered: %+v", st)
	}
	_, err = e.svc.Question(ctx, st.ID, "  ")
	wantRefusal(t, err, refusal.Invalid)
}

// voidingCase changes an approved plan of two tasks and says what the
// approval's voiding sentence must be.
type voidingCase struct {
	name   string
	change func(t *testing.T, e *env, id int64, tasks []intent.Task)
	voided string
}

func TestAnApprovalIsBoundToThePlanHash(t *testing.T) {
	ctx := context.Background()
	cases := []voidingCase{
		{
			name: "a replaced task",
			change: func(t *testing.T, e *env, id int64, tasks []intent.Task) {
				revised := task("Show tags")
				revised.Summary, revised.EstimatedLines = "Tags, shown as chips.", 60
				if _, err := e.backlog.ReplaceTask(ctx, tasks[1].IntentID, tasks[1].Slug, revised); err != nil {
					t.Fatal(err)
				}
			},
			voided: "0002-show-tags was replaced.",
		},
		{
			name: "a task replaced by removing it and adding another",
			change: func(t *testing.T, e *env, id int64, tasks []intent.Task) {
				if err := e.backlog.RemoveTask(ctx, e.op(), tasks[1].ID); err != nil {
					t.Fatal(err)
				}
				if _, err := e.backlog.AddTask(ctx, tasks[1].IntentID, task("Show tags on cards")); err != nil {
					t.Fatal(err)
				}
			},
			voided: "0002-show-tags was removed. 0003-show-tags-on-cards was added.",
		},
		{
			name: "a removed task",
			change: func(t *testing.T, e *env, id int64, tasks []intent.Task) {
				if err := e.backlog.RemoveTask(ctx, e.op(), tasks[1].ID); err != nil {
					t.Fatal(err)
				}
			},
			voided: "0002-show-tags was removed.",
		},
		{
			name: "a changed model",
			change: func(t *testing.T, e *env, id int64, tasks []intent.Task) {
				if err := e.backlog.SetTaskModel(ctx, e.op(), tasks[0].ID, "ollama:qwen3"); err != nil {
					t.Fatal(err)
				}
			},
			voided: "0001-add-tags's model changed to ollama:qwen3.",
		},
		{
			name: "a new submission",
			change: func(t *testing.T, e *env, id int64, tasks []intent.Task) {
				if _, err := e.backlog.AddTask(ctx, tasks[0].IntentID, task("Filter by tag")); err != nil {
					t.Fatal(err)
				}
				e.submit(t, id)
			},
			voided: "0003-filter-by-tag was added. A new plan was submitted.",
		},
		{
			name: "the analysis rewritten by the engineer and submitted again",
			change: func(t *testing.T, e *env, id int64, tasks []intent.Task) {
				// What intent.open writes in a later chat turn: the same
				// restatement, other assumptions; the tasks stay.
				if _, err := e.backlog.OpenDraft(ctx, "notes", "", intent.Analysis{
					Restated: []string{"Change notes."}, Assumptions: []string{"Tags are free text."},
				}); err != nil {
					t.Fatal(err)
				}
				e.submit(t, id)
			},
			voided: "The assumptions changed. A new plan was submitted.",
		},
		{
			name: "everything at once",
			change: func(t *testing.T, e *env, id int64, tasks []intent.Task) {
				if err := e.backlog.SetTaskModel(ctx, e.op(), tasks[0].ID, "ollama:qwen3"); err != nil {
					t.Fatal(err)
				}
				if err := e.backlog.RemoveTask(ctx, e.op(), tasks[1].ID); err != nil {
					t.Fatal(err)
				}
				e.submit(t, id)
			},
			voided: "0001-add-tags's model changed to ollama:qwen3. 0002-show-tags was removed. A new plan was submitted.",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := mustOpen(t)
			st, tasks := e.planned(t, "notes", request.ModeGuided, "Add tags", "Show tags")
			if len(st.Plans) != 1 || st.Plans[0].Hash != st.Current {
				t.Fatalf("submitted: %+v", st)
			}
			st = e.approve(t, st.ID)
			if st.Approved != st.Plans[0].Hash || !st.Approval.Valid || st.Approval.Voided != "" {
				t.Fatalf("approved: %+v", st)
			}
			if err := e.svc.CanRun(ctx, st.ID); err != nil {
				t.Fatalf("can run after approval: %v", err)
			}

			c.change(t, e, st.ID, tasks)

			st = e.state(t, st.ID)
			if st.Approval.Valid || st.Approval.Voided != c.voided {
				t.Fatalf("approval %+v, want voided %q", st.Approval, c.voided)
			}
			re := wantRefusal(t, e.svc.CanRun(ctx, st.ID), refusal.Conflict)
			if want := c.voided + " Approve the plan again before Run: this request is guided."; re.Message != want {
				t.Fatalf("can run: %q, want %q", re.Message, want)
			}

			// Submitted again and approved again, the new plan can run.
			if last, _ := st.LastPlan(); last.Hash != st.Current {
				if err := e.backlog.Submit(ctx, st.IntentID); err != nil {
					t.Fatal(err)
				}
				if _, err := e.svc.PlanSubmitted(ctx, st.ID); err != nil {
					t.Fatal(err)
				}
			}
			st = e.approve(t, st.ID)
			if !st.Approval.Valid || st.Approved != st.Current {
				t.Fatalf("approved again: %+v", st)
			}
			if err := e.svc.CanRun(ctx, st.ID); err != nil {
				t.Fatalf("can run after approving again: %v", err)
			}
		})
	}
}

func TestApproveRefusals(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()

	st := e.create(t, "notes", request.ModeGuided)
	_, err := e.svc.Approve(ctx, st.ID, st.Revision, e.op())
	if re := wantRefusal(t, err, refusal.Conflict); re.Message != "There is no submitted plan to approve yet." {
		t.Fatalf("message %q", re.Message)
	}

	st, tasks := e.planned(t, "shop", request.ModeGuided, "Add cart", "Show cart")
	// The plan changed after it was submitted: the owner cannot approve
	// rows the engineer has not submitted.
	revised := task("Show cart")
	revised.Summary = "The cart, with totals."
	e.approve(t, st.ID)
	if err := e.backlog.BeginRun(ctx, st.IntentID); err != nil {
		t.Fatal(err)
	}
	if err := e.backlog.MoveIntent(ctx, st.IntentID, intent.IntentStopped, "0001-add-cart failed."); err != nil {
		t.Fatal(err)
	}
	if _, err := e.backlog.ReplaceTask(ctx, tasks[1].IntentID, tasks[1].Slug, revised); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Approve(ctx, st.ID, e.state(t, st.ID).Revision, e.op())
	if re := wantRefusal(t, err, refusal.Conflict); re.Message != "The plan changed after it was submitted: 0002-show-cart was replaced. Approve it once the engineer submits it again." {
		t.Fatalf("message %q", re.Message)
	}
	st, tasks = e.planned(t, "cart", request.ModeGuided, "Add cart", "Show cart")
	// Being written again: refused until it is submitted.
	if _, err := e.backlog.AddTask(ctx, tasks[0].IntentID, task("Empty cart")); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Approve(ctx, st.ID, st.Revision, e.op())
	if re := wantRefusal(t, err, refusal.Conflict); re.Message != "The engineer is writing the plan again; approve it once it is submitted." {
		t.Fatalf("message %q", re.Message)
	}
	st = e.submit(t, st.ID)
	st = e.approve(t, st.ID)
	_, err = e.svc.Approve(ctx, st.ID, st.Revision, e.op())
	if re := wantRefusal(t, err, refusal.Conflict); re.Message != "This plan is approved already." {
		t.Fatalf("message %q", re.Message)
	}
	if n := e.count(t, `SELECT count(*) FROM request_journal WHERE request_id = ? AND kind = 'approval'`, st.ID); n != 1 {
		t.Fatalf("%d approvals", n)
	}
}

func TestCanRunGuidedAndAutonomous(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()

	auto, _ := e.planned(t, "notes", request.ModeAutonomous, "Add tags")
	if err := e.svc.CanRun(ctx, auto.ID); err != nil {
		t.Fatalf("autonomous: %v", err)
	}

	guided, tasks := e.planned(t, "shop", request.ModeGuided, "Add cart")
	re := wantRefusal(t, e.svc.CanRun(ctx, guided.ID), refusal.Conflict)
	if re.Message != "Approve the plan before Run: this request is guided." {
		t.Fatalf("message %q", re.Message)
	}
	guided = e.approve(t, guided.ID)
	if err := e.svc.CanRun(ctx, guided.ID); err != nil {
		t.Fatalf("guided, approved: %v", err)
	}

	// A voided approval holds a guided request and not an autonomous one.
	if err := e.backlog.SetTaskModel(ctx, e.op(), tasks[0].ID, "gpt-5-mini"); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, e.svc.CanRun(ctx, guided.ID), refusal.Conflict)
	guided, err := e.svc.SetMode(ctx, guided.ID, guided.Revision, e.op(), request.ModeAutonomous)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.svc.CanRun(ctx, guided.ID); err != nil {
		t.Fatalf("switched to autonomous: %v", err)
	}
	if n := e.count(t, `SELECT count(*) FROM requests WHERE id = ? AND mode = 'autonomous'`, guided.ID); n != 1 {
		t.Fatal("requests.mode does not follow the journal")
	}
	_, err = e.svc.SetMode(ctx, guided.ID, guided.Revision, e.op(), request.ModeAutonomous)
	wantRefusal(t, err, refusal.Conflict)

	wantRefusal(t, e.svc.CanRun(ctx, 99), refusal.NotFound)
}

func TestPlanSubmittedRecordsEachVersionOnce(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	st := e.create(t, "notes", request.ModeGuided)
	_, err := e.svc.PlanSubmitted(ctx, st.ID)
	wantRefusal(t, err, refusal.Conflict)

	in, err := e.backlog.OpenDraft(ctx, "notes", st.Text, intent.Analysis{Restated: []string{"Tags."}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.backlog.AddTask(ctx, in.ID, task("Add tags")); err != nil {
		t.Fatal(err)
	}
	if st, err = e.svc.Link(ctx, st.ID, in.ID); err != nil || st.IntentID != in.ID {
		t.Fatalf("link: %+v %v", st, err)
	}
	_, err = e.svc.PlanSubmitted(ctx, st.ID)
	if re := wantRefusal(t, err, refusal.Conflict); re.Message != fmt.Sprintf("The plan of intent %d is not submitted; it is recorded once it is.", in.ID) {
		t.Fatalf("message %q", re.Message)
	}
	first := e.submit(t, st.ID)
	again, err := e.svc.PlanSubmitted(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Plans) != 1 || again.Revision != first.Revision {
		t.Fatalf("the same plan twice: %+v", again)
	}
	var body struct {
		IntentID int64             `json:"intent_id"`
		Hash     string            `json:"hash"`
		Tasks    []json.RawMessage `json:"tasks"`
	}
	var raw string
	if err := e.db.Read.Get(&raw, `SELECT body FROM request_journal WHERE request_id = ? AND kind = 'plan' AND actor = 'engineer'`, st.ID); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(raw), &body); err != nil || body.IntentID != in.ID || body.Hash != first.Current || len(body.Tasks) != 1 {
		t.Fatalf("plan entry %s: %v", raw, err)
	}
	if f, err := e.svc.ForIntent(ctx, in.ID); err != nil || f.ID != st.ID {
		t.Fatalf("for intent: %+v %v", f, err)
	}
	_, err = e.svc.ForIntent(ctx, 99)
	wantRefusal(t, err, refusal.NotFound)
}

func TestLinkRefusals(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	notes, _ := e.planned(t, "notes", request.ModeGuided, "Add tags")
	shop := e.create(t, "shop", request.ModeGuided)

	_, err := e.svc.Link(ctx, shop.ID, notes.IntentID)
	wantRefusal(t, err, refusal.Invalid)
	in, err := e.backlog.OpenDraft(ctx, "shop", shop.Text, intent.Analysis{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Link(ctx, notes.ID, in.ID)
	wantRefusal(t, err, refusal.Conflict)
	if st, err := e.svc.Link(ctx, notes.ID, notes.IntentID); err != nil || st.IntentID != notes.IntentID {
		t.Fatalf("linking the same intent again: %+v %v", st, err)
	}
	// A second request of the application cannot take an intent answered already.
	other, err := e.svc.Create(ctx, "notes", "Another", request.ModeGuided, e.op())
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Link(ctx, other.ID, notes.IntentID)
	wantRefusal(t, err, refusal.Conflict)
}

func TestRunAndDelivery(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	st, _ := e.planned(t, "notes", request.ModeAutonomous, "Add tags")
	if err := e.backlog.BeginRun(ctx, st.IntentID); err != nil {
		t.Fatal(err)
	}
	st, err := e.svc.State(ctx, st.ID)
	if err != nil || !st.Ran || st.Delivered {
		t.Fatalf("run: %+v %v", st, err)
	}
	st, err = e.svc.Delivered(ctx, st.ID)
	if err != nil || !st.Delivered {
		t.Fatalf("delivered: %+v %v", st, err)
	}
	again, err := e.svc.Delivered(ctx, st.ID)
	if err != nil || again.Revision != st.Revision {
		t.Fatalf("delivered again: %+v %v", again, err)
	}
	if n := e.count(t, `SELECT count(*) FROM request_journal WHERE request_id = ? AND kind IN ('run', 'delivery') AND actor = 'host'`, st.ID); n != 2 {
		t.Fatalf("%d host entries", n)
	}
}

// TestTheIntentTakesItsRequestsModeAndWords: the engineer may open the
// intent with other words (its second message, say) and the default mode;
// linked to the request, the intent is the request's mode and its first
// message, byte for byte.
func TestTheIntentTakesItsRequestsModeAndWords(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	st := e.create(t, "notes", "guided")
	in, err := e.backlog.OpenDraft(ctx, "notes", "Yes, by date please.", intent.Analysis{Restated: []string{"Sort notes."}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Link(ctx, st.ID, in.ID); err != nil {
		t.Fatal(err)
	}
	d, err := e.backlog.Get(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Mode != intent.ModeGuided || d.Request != st.Text {
		t.Fatalf("the intent is %s with request %q; want guided with %q", d.Mode, d.Request, st.Text)
	}
}

// TestARevisedGuidedPlanCanBeApprovedAgain: a guided plan is approved and
// run; its task fails; the engineer rewrites it (replaces) and submits the
// revised plan, which the person approves, and Run may go.
func TestARevisedGuidedPlanCanBeApprovedAgain(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	st, tasks := e.planned(t, "notes", "guided", "Add tags")
	if _, err := e.svc.Approve(ctx, st.ID, e.state(t, st.ID).Revision, e.op()); err != nil {
		t.Fatal(err)
	}
	id := tasks[0].ID
	if err := e.backlog.BeginRun(ctx, st.IntentID); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		to  intent.TaskStatus
		run string
	}{{intent.TaskInProgress, "intent-1-0001-add-tags-a1"}, {intent.TaskFailed, ""}} {
		if err := e.backlog.MoveTask(ctx, id, m.to, intent.Move{Reason: "the run", RunID: m.run}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.backlog.MoveIntent(ctx, st.IntentID, intent.IntentStopped, "0001-add-tags failed."); err != nil {
		t.Fatal(err)
	}
	revised := task("Add tags")
	revised.Summary = "Tags, stored in their own table."
	if _, err := e.backlog.ReplaceTask(ctx, st.IntentID, tasks[0].Slug, revised); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Approve(ctx, st.ID, e.state(t, st.ID).Revision, e.op()); err == nil || !strings.Contains(err.Error(), "submits it again") {
		t.Fatalf("approving the unsubmitted revision: %v", err)
	}
	// The engineer submits the revised plan; it is recorded and approvable.
	if err := e.backlog.Submit(ctx, st.IntentID); err != nil {
		t.Fatalf("submitting the revised plan of the stopped intent: %v", err)
	}
	if _, err := e.svc.PlanSubmitted(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	after, err := e.svc.Approve(ctx, st.ID, e.state(t, st.ID).Revision, e.op())
	if err != nil {
		t.Fatalf("approving the revised plan: %v", err)
	}
	if len(after.Plans) != 2 || !after.Approval.Valid {
		t.Fatalf("plans %d, approval %+v; want the revision approved", len(after.Plans), after.Approval)
	}
	if err := e.svc.CanRun(ctx, st.ID); err != nil {
		t.Fatalf("Run after the approval: %v", err)
	}
}

// TestARunStartsOnlyWithItsJournalEntry: the guided gate and the run's
// journal entry hold in the transaction that starts the run. When the entry
// cannot be written, the run does not start: the intent and its tasks stay
// as they were. (Before, BeginRun and RunStarted were two writes.)
func TestARunStartsOnlyWithItsJournalEntry(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	st, _ := e.planned(t, "notes", request.ModeGuided, "Add tags")
	// Guided and not approved: refused with the gate's sentence.
	err := e.backlog.BeginRun(ctx, st.IntentID)
	if err == nil || err.Error() != "Approve the plan before Run: this request is guided." {
		t.Fatalf("an unapproved guided plan ran: %v", err)
	}
	st, err = e.svc.Approve(ctx, st.ID, st.Revision, e.op())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Write.ExecContext(ctx, `CREATE TRIGGER no_run_entry BEFORE INSERT ON request_journal
		WHEN NEW.kind = 'run' BEGIN SELECT RAISE(ABORT, 'the disk is full'); END`); err != nil {
		t.Fatal(err)
	}
	if err := e.backlog.BeginRun(ctx, st.IntentID); err == nil {
		t.Fatal("the run started without its journal entry")
	}
	d, err := e.backlog.Get(ctx, st.IntentID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != intent.IntentDraft || d.Tasks[0].Status != intent.TaskProposed {
		t.Fatalf("after the failed start the intent is %s and its task %s", d.Status, d.Tasks[0].Status)
	}
	if _, err := e.db.Write.ExecContext(ctx, `DROP TRIGGER no_run_entry`); err != nil {
		t.Fatal(err)
	}
	if err := e.backlog.BeginRun(ctx, st.IntentID); err != nil {
		t.Fatal(err)
	}
	if st, err = e.svc.State(ctx, st.ID); err != nil || !st.Ran {
		t.Fatalf("after the run started: %+v %v", st, err)
	}
}

// TestABuildersQuestionAndItsAnswerAreJournaled: intent.ask's question (a
// move to needs-answer) is an entry by the engineer, and the owner's answer
// (AnswerTask) an entry by the owner linked to the question by its id,
// each in the transaction of the task's move. Another task's question
// stays open. (Before, neither was in the journal.)
func TestABuildersQuestionAndItsAnswerAreJournaled(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	st, tasks := e.planned(t, "notes", request.ModeAutonomous, "Add tags", "Add a filter")
	if err := e.backlog.BeginRun(ctx, st.IntentID); err != nil {
		t.Fatal(err)
	}
	ask := func(task intent.Task, question string) {
		t.Helper()
		if err := e.backlog.MoveTask(ctx, task.ID, intent.TaskInProgress, intent.Move{Reason: "a turn", RunID: "r-" + task.Slug}); err != nil {
			t.Fatal(err)
		}
		if err := e.backlog.MoveTask(ctx, task.ID, intent.TaskNeedsAnswer, intent.Move{Reason: "the builder asked", Question: question}); err != nil {
			t.Fatal(err)
		}
	}
	ask(tasks[0], "One tag or several?")
	ask(tasks[1], "Filter by one tag or by several?")
	asked := e.state(t, st.ID)
	open := asked.OpenQuestions()
	if len(open) != 2 || open[0].Actor != request.ActorEngineer || open[0].Task != tasks[0].ID || open[0].Text != "One tag or several?" ||
		open[1].Task != tasks[1].ID {
		t.Fatalf("open questions: %+v", open)
	}

	if err := e.backlog.AnswerTask(ctx, tasks[0].ID, "Several."); err != nil {
		t.Fatal(err)
	}
	st = e.state(t, st.ID)
	a, ok := st.AnswerTo(open[0].Revision)
	if !ok || a.Actor != request.ActorOwner || a.Text != "Several." || a.Task != tasks[0].ID || a.Revision != asked.Revision+1 {
		t.Fatalf("the answer to question %d: %+v (%v); answers %+v", open[0].Revision, a, ok, st.Answers)
	}
	if still := st.OpenQuestions(); len(still) != 1 || still[0].Revision != open[1].Revision {
		t.Fatalf("one answer closed more than its question: open %+v", still)
	}
	var body string
	if err := e.db.Read.Get(&body, `SELECT body FROM request_journal WHERE request_id = ? AND kind = 'answer' AND actor = 'owner'`, st.ID); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`{"text":"Several.","question":%d,"task":%d}`, open[0].Revision, tasks[0].ID); body != want {
		t.Fatalf("answer entry %s, want %s", body, want)
	}

	// The entry is written with the move: a journal that refuses it
	// refuses the answer, and the task still waits.
	if _, err := e.db.Write.Exec(`CREATE TRIGGER no_entry BEFORE INSERT ON request_journal BEGIN SELECT RAISE(ABORT, 'the disk is full'); END`); err != nil {
		t.Fatal(err)
	}
	if err := e.backlog.AnswerTask(ctx, tasks[1].ID, "By one."); err == nil {
		t.Fatal("the answer was taken although its journal entry could not be written")
	}
	if d, err := e.backlog.Task(ctx, tasks[1].ID); err != nil || d.Status != intent.TaskNeedsAnswer {
		t.Fatalf("task %s: %v %v", tasks[1].Slug, d.Status, err)
	}
}

// TestAnAnswerClosesOnlyTheQuestionItAnswers: of two open questions of the
// analysis, the owner's answer to one leaves the other open. (Before, one
// answer closed every open question.)
func TestAnAnswerClosesOnlyTheQuestionItAnswers(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	st := e.create(t, "notes", request.ModeGuided)
	first, err := e.svc.Question(ctx, st.ID, "Can a note have several tags?")
	if err != nil {
		t.Fatal(err)
	}
	st, err = e.svc.Question(ctx, st.ID, "Is the filter by one tag?")
	if err != nil {
		t.Fatal(err)
	}
	second := st.Revision
	st, err = e.svc.AnswerQuestion(ctx, st.ID, st.Revision, e.op(), second, "By one tag.")
	if err != nil {
		t.Fatal(err)
	}
	open := st.OpenQuestions()
	if len(open) != 1 || open[0].Revision != first.Revision {
		t.Fatalf("open after answering question %d: %+v", second, open)
	}
	if a, ok := st.AnswerTo(second); !ok || a.Text != "By one tag." || a.Actor != request.ActorOwner {
		t.Fatalf("the answer: %+v %v", a, ok)
	}
	_, err = e.svc.AnswerQuestion(ctx, st.ID, st.Revision, e.op(), second, "Again.")
	if re := wantRefusal(t, err, refusal.Conflict); re.Message != fmt.Sprintf("Question %d of request %d is answered already.", second, st.ID) {
		t.Fatalf("message %q", re.Message)
	}
	// With no question named, the oldest open one is answered.
	st, err = e.svc.Answer(ctx, st.ID, st.Revision, e.op(), "Several.")
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := st.AnswerTo(first.Revision); !ok || a.Text != "Several." || len(st.OpenQuestions()) != 0 {
		t.Fatalf("after the second answer: %+v", st)
	}
}

// TestTheOwnersOwnChangeIsApprovableByTheOwner: a guided plan approved and
// run stops on a failed task; the owner follows the advice and changes that
// task's model, then removes another. Approve binds that version, a plan
// version of the owner's, and Run may go; nothing waits for the engineer
// to submit again.
func TestTheOwnersOwnChangeIsApprovableByTheOwner(t *testing.T) {
	ctx := context.Background()
	e := mustOpen(t)
	st, tasks := e.planned(t, "notes", request.ModeGuided, "Add tags", "Show tags")
	st = e.approve(t, st.ID)
	if err := e.backlog.BeginRun(ctx, st.IntentID); err != nil {
		t.Fatal(err)
	}
	if err := e.backlog.MoveIntent(ctx, st.IntentID, intent.IntentStopped, "0001-add-tags failed."); err != nil {
		t.Fatal(err)
	}
	if err := e.backlog.SetTaskModel(ctx, e.op(), tasks[0].ID, "ollama:qwen3"); err != nil {
		t.Fatal(err)
	}
	if err := e.backlog.RemoveTask(ctx, e.op(), tasks[1].ID); err != nil {
		t.Fatal(err)
	}
	st = e.state(t, st.ID)
	if !st.Approvable || st.Approval.Valid {
		t.Fatalf("after the owner's changes: approvable %v (%q), approval %+v", st.Approvable, st.Unapprovable, st.Approval)
	}
	if err := e.svc.CanRun(ctx, st.ID); err == nil {
		t.Fatal("Run may go before the owner approved the changed plan")
	}
	st = e.approve(t, st.ID)
	if len(st.Plans) != 2 || st.Approved != st.Plans[1].Hash || st.Current != st.Approved || !st.Approval.Valid {
		t.Fatalf("approved: plans %+v, approved %s, current %s, %+v", st.Plans, st.Approved, st.Current, st.Approval)
	}
	if err := e.svc.CanRun(ctx, st.ID); err != nil {
		t.Fatalf("Run after approving the owner's version: %v", err)
	}
	// Approving it again is the usual refusal.
	if _, err := e.svc.Approve(ctx, st.ID, st.Revision, e.op()); err == nil || !strings.Contains(err.Error(), "approved already") {
		t.Fatalf("approve again: %v", err)
	}
}
