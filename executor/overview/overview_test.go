package overview_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"autoapp/cmd/autoapp/launcher"
	"autoapp/executor"
	"autoapp/executor/acceptance"
	"autoapp/executor/ai"
	"autoapp/executor/ai/provider"
	"autoapp/executor/ai/scripted"
	"autoapp/executor/build"
	"autoapp/executor/candidate"
	"autoapp/executor/gate"
	"autoapp/executor/overview"
	"autoapp/executor/verdict"
	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/atomicfile"
	"autoapp/intent/plan"
	"autoapp/intent/spend"
	"autoapp/intent/timetest"
	"autoapp/migrations"
)

// env is the launcher's own services over a temporary root, with a clock
// the test holds and the scripted model as the Settings model prov:m.
type env struct {
	launcher *launcher.Launcher
	db       *migrations.DB
	clock    *timetest.Clock
	backlog  *intent.Service
	apps     *app.Service
	book     *spend.Book
	gate     *gate.Gate
	runs     *executor.Executor
	model    *scripted.Server
	svc      *overview.Service
}

// mustOpen boots the program's launcher over a fresh data folder, at a
// time that stands still until the test moves it.
func mustOpen(tb testing.TB) *env {
	tb.Helper()
	// The model first: it closes after the launcher, which stops the run
	// and the turns that ask it.
	model := scripted.New(tb)
	model.Models("m")
	c := timetest.NewClock(time.Date(2026, 3, 10, 15, 0, 0, 0, time.UTC))
	l, err := launcher.New(tb.TempDir(), c.Now, nil, launcher.Options{Quiet: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	if err := l.Providers.Save(provider.Provider{Name: "prov", BaseURL: model.URL(), On: true}, false); err != nil {
		tb.Fatal(err)
	}
	if err := l.Providers.SetDefaultModel("prov:m"); err != nil {
		tb.Fatal(err)
	}
	return &env{launcher: l, db: l.Intents, clock: c, backlog: l.Backlog, apps: l.Apps, book: l.Spend, gate: l.Gate,
		runs: l.Runs, model: model, svc: l.Overview}
}

// app inserts an application row; the overview reads nothing of its workspace.
func (e *env) app(tb testing.TB, id string) {
	tb.Helper()
	if _, err := e.db.Write.Exec(`INSERT INTO apps (id, name, origin, created_at) VALUES (?, ?, 'template:static', 0)`, id, strings.ToUpper(id)); err != nil {
		tb.Fatal(err)
	}
}

// site makes an application from the static template, with its workspace:
// one a run or a chat turn can work on.
func (e *env) site(tb testing.TB, id string) {
	tb.Helper()
	if _, err := e.apps.CreateFromTemplate(context.Background(), id, strings.ToUpper(id), "static"); err != nil {
		tb.Fatal(err)
	}
}

// run starts the intent's run through the launcher's executor, as Run in
// the Backlog does: the builder's turn runID gets replies, then the model
// holds it until the test ends. It returns once the turn waits there.
func (e *env) run(tb testing.TB, in intent.Intent, runID string, replies ...scripted.Reply) {
	tb.Helper()
	held := scripted.NewGate(tb)
	e.model.On(scripted.RunID(runID), append(replies, scripted.Reply{Before: held.Hold, Fault: scripted.Status500})...)
	if err := e.runs.Start(context.Background(), in.ID); err != nil {
		tb.Fatal(err)
	}
	held.Wait(tb)
}

// intent plans n tasks for the application, submits them and marks the
// intent running as a run's start does: the history of a run, with no run
// going in the executor.
func (e *env) intent(tb testing.TB, appID string, n int) (intent.Intent, []intent.Task) {
	tb.Helper()
	ctx := context.Background()
	in, err := e.backlog.OpenDraft(ctx, appID, "Change "+appID, intent.Analysis{Restated: []string{"Change it."}})
	if err != nil {
		tb.Fatal(err)
	}
	var tasks []intent.Task
	for i := range n {
		t, err := e.backlog.AddTask(ctx, in.ID, plan.Task{Title: fmt.Sprintf("Change number %d", i+1), Priority: "medium",
			Labels: []string{"views"}, EstimatedLines: 10, Risk: "normal", Reasoning: "low", Summary: "A change.",
			Criteria: []plan.Criterion{{Text: "It shows."}}, NoFailurePath: "nothing to refuse"})
		if err != nil {
			tb.Fatal(err)
		}
		tasks = append(tasks, t)
	}
	if err := e.backlog.Submit(ctx, in.ID); err != nil {
		tb.Fatal(err)
	}
	if err := e.backlog.BeginRun(ctx, in.ID); err != nil {
		tb.Fatal(err)
	}
	return in, tasks
}

func (e *env) move(tb testing.TB, taskID int64, to intent.TaskStatus, ev intent.Move) {
	tb.Helper()
	ev.Actor = intent.ActorExecutor
	if ev.Reason == "" {
		ev.Reason = "test"
	}
	if err := e.backlog.MoveTask(context.Background(), taskID, to, ev); err != nil {
		tb.Fatalf("move %d to %s: %v", taskID, to, err)
	}
}

// turn runs one turn of a queued task for took, writing its usage row,
// and moves it to `to`.
func (e *env) turn(tb testing.TB, in intent.Intent, task intent.Task, n int, took time.Duration, tokens int, partial bool, to intent.TaskStatus) string {
	tb.Helper()
	runID := fmt.Sprintf("intent-%d-%s-a%d", in.ID, task.Slug, n)
	e.move(tb, task.ID, intent.TaskInProgress, intent.Move{RunID: runID})
	e.clock.Advance(took)
	if err := e.launcher.Usage.RecordUsage(context.Background(), intent.Usage{Kind: intent.KindBuilder, RunID: runID, AppID: in.AppID,
		Model: "prov:m", Input: tokens, Output: tokens / 10, Partial: partial}); err != nil {
		tb.Fatal(err)
	}
	e.move(tb, task.ID, to, intent.Move{RunID: runID, Question: "Which colour?"})
	return runID
}

// candidateFile writes the application's candidate.json as the host leaves
// it after a build of release and a run of its checks.
func (e *env) candidateFile(tb testing.TB, appID, release string, passed, total int) {
	tb.Helper()
	st := candidate.State{AppID: appID,
		Build:  &candidate.BuildRecord{Revision: "abc", OK: true, Release: &build.Release{ID: release, Revision: "abc"}},
		Checks: &candidate.ChecksRecord{Release: release, Passed: passed}}
	for i := range total {
		st.Checks.Results = append(st.Checks.Results, acceptance.Result{ID: fmt.Sprintf("c%d", i), Passed: i < passed})
	}
	b, err := json.Marshal(st)
	if err != nil {
		tb.Fatal(err)
	}
	if err := atomicfile.Write(filepath.Join(e.apps.Dir(appID), candidate.File), b); err != nil {
		tb.Fatal(err)
	}
}

// needs lists what waits for the person, and checks that the rail's
// count says as many.
func (e *env) needs(ctx context.Context) ([]overview.Need, error) {
	n, err := e.svc.Needs(ctx)
	if err != nil {
		return nil, err
	}
	count, err := e.svc.NeedCount(ctx)
	if err != nil {
		return nil, err
	}
	if count != n.Total() || n.Total() != len(n.List) {
		return nil, fmt.Errorf("the rail counts %d, the needs count %d and list %d", count, n.Total(), len(n.List))
	}
	return n.List, nil
}

func kinds(needs []overview.Need) map[overview.NeedKind][]overview.Need {
	out := map[overview.NeedKind][]overview.Need{}
	for _, n := range needs {
		out[n.Kind] = append(out[n.Kind], n)
	}
	return out
}

func TestNeedsListWhatWaitsForThePerson(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	for _, id := range []string{"site", "shop", "blog"} {
		e.app(t, id)
	}
	needs, err := e.needs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(needs) != 0 {
		t.Fatalf("a fresh launcher needs the person: %+v", needs)
	}

	// A task that asked, and a failed one with its advice.
	in, tasks := e.intent(t, "site", 2)
	e.turn(t, in, tasks[0], 1, time.Minute, 100, false, intent.TaskNeedsAnswer)
	e.turn(t, in, tasks[1], 1, time.Minute, 100, false, intent.TaskFailed)
	if err := e.backlog.SetAdvice(ctx, tasks[1].ID, "Split the task in two."); err != nil {
		t.Fatal(err)
	}
	if err := e.backlog.MoveIntent(ctx, in.ID, intent.IntentStopped, "it failed"); err != nil {
		t.Fatal(err)
	}
	// A candidate whose checks all passed and is not current; one with a
	// check failing; one whose release is current already.
	e.candidateFile(t, "shop", "r-shop-1", 3, 3)
	e.candidateFile(t, "blog", "r-blog-1", 1, 2)
	// A question a chat turn waits on at the gate.
	askCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	asked := make(chan struct{})
	go func() {
		defer close(asked)
		e.gate.Ask(askCtx, "blog", "chat-blog-1", "Edit site/index.html (1 hunk)?")
	}()
	for len(e.gate.Pending("blog")) == 0 {
		time.Sleep(time.Millisecond)
	}

	needs, err = e.needs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	k := kinds(needs)
	if q := k[overview.NeedQuestion]; len(q) != 1 || q[0].AppID != "blog" || !strings.Contains(q[0].Text, "Edit site/index.html (1 hunk)?") {
		t.Errorf("the question: %+v", q)
	}
	if a := k[overview.NeedAnswer]; len(a) != 1 || a[0].TaskID != tasks[0].ID || !strings.Contains(a[0].Text, "Which colour?") {
		t.Errorf("the task that asked: %+v", a)
	}
	if f := k[overview.NeedFailed]; len(f) != 1 || f[0].TaskID != tasks[1].ID || f[0].Advice != "Split the task in two." {
		t.Errorf("the failed task: %+v", f)
	}
	if r := k[overview.NeedRelease]; len(r) != 1 || r[0].AppID != "shop" || r[0].Release != "r-shop-1" {
		t.Errorf("the release to make current: %+v", r)
	}
	if len(needs) != 4 {
		t.Errorf("%d needs, want 4: %+v", len(needs), needs)
	}

	// Answered, made current, decided: nothing is left but the failure.
	cancel()
	<-asked
	if _, err := e.db.Write.Exec(`INSERT INTO releases (id, app_id, revision, built_at) VALUES ('r-shop-1', 'shop', 'abc', 0)`); err != nil {
		t.Fatal(err)
	}
	if err := e.apps.Activate(ctx, "shop", "r-shop-1"); err != nil {
		t.Fatal(err)
	}
	e.move(t, tasks[0].ID, intent.TaskInQueue, intent.Move{Answer: "Blue."})
	needs, err = e.needs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(needs) != 1 || needs[0].Kind != overview.NeedFailed {
		t.Fatalf("after answering: %+v", needs)
	}
	// A withdrawn intent's tasks wait for nobody.
	if err := e.backlog.Withdraw(ctx, "op-withdraw", in.ID); err != nil {
		t.Fatal(err)
	}
	if needs, _ = e.needs(ctx); len(needs) != 0 {
		t.Fatalf("after withdrawing: %+v", needs)
	}
}

// Years of stopped intents hold many failed tasks: the list shows the
// oldest few of each kind and counts the rest, and the rail counts them
// all.
func TestNeedsListAScreenOfEachKindAndCountTheRest(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	e.app(t, "site")
	failed := overview.NeedsShown + 3
	var first intent.Task
	for i := range failed {
		in, tasks := e.intent(t, "site", 2)
		e.turn(t, in, tasks[0], 1, time.Minute, 100, false, intent.TaskFailed)
		if i == 0 {
			first = tasks[0]
			e.turn(t, in, tasks[1], 1, time.Minute, 100, false, intent.TaskNeedsAnswer)
		}
		if err := e.backlog.MoveIntent(ctx, in.ID, intent.IntentStopped, "it failed"); err != nil {
			t.Fatal(err)
		}
	}
	n, err := e.svc.Needs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	k := kinds(n.List)
	if f := k[overview.NeedFailed]; len(f) != overview.NeedsShown || f[0].TaskID != first.ID {
		t.Errorf("the failed tasks listed: %+v; want the oldest %d", f, overview.NeedsShown)
	}
	if more := n.More(overview.NeedFailed); more != 3 {
		t.Errorf("%d more failed tasks, want 3", more)
	}
	if a := k[overview.NeedAnswer]; len(a) != 1 || n.More(overview.NeedAnswer) != 0 {
		t.Errorf("the task that asked: %+v, %d more", a, n.More(overview.NeedAnswer))
	}
	count, err := e.svc.NeedCount(ctx)
	if err != nil || count != failed+1 || n.Total() != failed+1 {
		t.Errorf("the rail counts %d (%v) and the needs %d, want %d", count, err, n.Total(), failed+1)
	}
}

func TestTheReadShowsTheTaskInHandItsLimitsAndSpend(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	e.site(t, "site")
	if err := os.WriteFile(e.book.Path(), []byte(`{"prov:m": {"input": 2, "output": 10}, "budget": {"day": 5}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	in, tasks := e.intent(t, "site", 4)
	// A run before this one: two tasks completed with whole rows, a third
	// turned twice, once with a partial row; then it stopped.
	e.turn(t, in, tasks[0], 1, 4*time.Minute, 1000, false, intent.TaskCompleted)
	e.turn(t, in, tasks[1], 1, 6*time.Minute, 3000, false, intent.TaskCompleted)
	e.turn(t, in, tasks[2], 1, time.Minute, 50, true, intent.TaskInQueue)
	first := e.turn(t, in, tasks[2], 2, time.Minute, 50, false, intent.TaskInQueue)
	if err := e.backlog.MoveIntent(ctx, in.ID, intent.IntentStopped, "stopped by the person"); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Minute)

	// This run: the third task's third turn had an edit refused, built,
	// and waits on the model now.
	runID := fmt.Sprintf("intent-%d-%s-a3", in.ID, tasks[2].Slug)
	started := e.clock.Now()
	e.run(t, in, runID,
		scripted.Reply{ToolCalls: []scripted.Call{call("source.edit", map[string]any{"path": "site/missing.html",
			"hunks": []map[string]string{{"find": "a", "replace": "b"}}})}, Usage: scripted.Usage{Input: 350, Output: 35}},
		scripted.Reply{ToolCalls: []scripted.Call{call("candidate.build", map[string]any{})}, Usage: scripted.Usage{Input: 350, Output: 35}})
	e.clock.Advance(3 * time.Minute)

	o, err := e.svc.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.InHand) != 1 {
		t.Fatalf("%d tasks in hand, want 1", len(o.InHand))
	}
	h := o.InHand[0]
	if h.Slug != tasks[2].Slug || h.RunID != runID || h.Stage != "building" || h.LastTool != "candidate.build" || !strings.HasPrefix(h.Refusal, "source.edit: ") {
		t.Errorf("in hand: %+v", h)
	}
	if !h.Started.Equal(started) || h.Elapsed != 3*time.Minute || h.Limit != ai.DefaultWall || h.Turn != 1 || h.MaxTurns != verdict.MaxTurns || h.MaxCounted != verdict.MaxCounted {
		t.Errorf("limits: elapsed %v of %v, turn %d of %d", h.Elapsed, h.Limit, h.Turn, h.MaxTurns)
	}
	// The task: its two turns with rows and the one running (a floor).
	if h.Task.Input != 50+50+700 || !h.Task.AtLeast || h.Task.Turns != 3 {
		t.Errorf("the task's spend: %+v (after %s)", h.Task, first)
	}
	// The run: only the turn it runs, priced as its row will be.
	price := func(in, out int64) float64 { return (float64(in)*2 + float64(out)*10) / 1e6 }
	wantRun := price(700, 70)
	if h.Run.Cost == nil || *h.Run.Cost-wantRun > 1e-12 || wantRun-*h.Run.Cost > 1e-12 || h.Run.Turns != 1 {
		t.Errorf("the run's spend: %+v, want $%v", h.Run, wantRun)
	}
	if o.Today.Turns != 5 || !o.Today.AtLeast || o.Prices.DayBudget == nil || *o.Prices.DayBudget != 5 {
		t.Errorf("today: %+v, prices %+v", o.Today, o.Prices)
	}

	// The estimate: two whole tasks, two left (the third and the fourth).
	if len(o.Apps) != 1 {
		t.Fatalf("apps: %+v", o.Apps)
	}
	a := o.Apps[0]
	if a.Left != 2 || a.Estimate == nil || a.Estimate.From != 2 || !a.Running {
		t.Fatalf("the outlook: %+v", a)
	}
	if a.Estimate.TokensPerTask != (1100+3300)/2 || a.Estimate.TimePerTask != 5*time.Minute || a.Estimate.Time != 10*time.Minute {
		t.Errorf("the estimate: %+v", a.Estimate)
	}
	if !strings.Contains(a.State, fmt.Sprintf("Intent #%d runs", in.ID)) || !strings.Contains(a.State, "building") {
		t.Errorf("the state: %q", a.State)
	}

	// The run stops: the turn's row, written as it ends, replaces what
	// memory held.
	if err := e.runs.Stop(in.ID); err != nil {
		t.Fatal(err)
	}
	o, err = e.svc.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Still a floor: the third task's first turn wrote a partial row.
	if len(o.InHand) != 0 || !o.Today.AtLeast || o.Today.Turns != 5 || o.Today.Input != 1000+3000+50+50+700 {
		t.Fatalf("after the turn: in hand %+v, today %+v", o.InHand, o.Today)
	}
	is, err := e.svc.Intent(ctx, mustGet(t, e, in.ID))
	if err != nil {
		t.Fatal(err)
	}
	if len(is.Turns[tasks[2].ID]) != 3 || is.Tasks[tasks[0].ID].Input != 1000 || is.Total.Turns != 5 {
		t.Fatalf("the intent's spend: %+v", is)
	}
}

// call is a tool call of the model's.
func call(name string, input any) scripted.Call {
	b, err := json.Marshal(input)
	if err != nil {
		panic(err)
	}
	return scripted.Call{Name: strings.ReplaceAll(name, ".", "_"), Args: string(b)}
}

func mustGet(tb testing.TB, e *env, id int64) intent.IntentDetail {
	tb.Helper()
	d, err := e.backlog.Get(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func TestAModelIsNamedAsItsUsageRowWillBe(t *testing.T) {
	m := models{def: "gpt-5-mini", inUse: "openai"}
	of := overview.ModelOf(m)
	for ref, want := range map[string]string{"": "openai:gpt-5-mini", "gpt-5": "openai:gpt-5", "ollama:qwen3:27b": "ollama:qwen3:27b"} {
		if got := of(ref); got != want {
			t.Errorf("%q: %q, want %q", ref, got, want)
		}
	}
}

type models struct{ def, inUse string }

func (m models) DefaultModel() string { return m.def }
func (m models) InUse() string        { return m.inUse }

func TestFeedbackThatStoppedARunNeedsThePersonUntilAChatTurnTakesIt(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	e.app(t, "site")
	in, _ := e.intent(t, "site", 1) // running
	if _, _, err := e.launcher.Interventions.SubmitIntervention(ctx, in.ID, "f-1", intent.InterventionFeedback, "Smaller steps."); err != nil {
		t.Fatal(err)
	}
	// Pending, it is the run's: nothing waits for the person yet.
	if needs, err := e.needs(ctx); err != nil || len(kinds(needs)[overview.NeedFeedback]) != 0 {
		t.Fatalf("pending feedback: %+v, %v", needs, err)
	}
	if _, err := e.launcher.Interventions.ApplyInterventions(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	needs, err := e.needs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f := kinds(needs)[overview.NeedFeedback]
	if len(f) != 1 || f[0].IntentID != in.ID || f[0].AppID != "site" {
		t.Fatalf("applied feedback: %+v", needs)
	}
	fb, err := e.launcher.Interventions.FeedbackForChat(ctx, "site")
	if err != nil || len(fb) != 1 {
		t.Fatalf("%+v, %v", fb, err)
	}
	if err := e.launcher.Interventions.FeedbackGiven(ctx, []int64{fb[0].Order}, "chat-site-1"); err != nil {
		t.Fatal(err)
	}
	if needs, _ := e.needs(ctx); len(kinds(needs)[overview.NeedFeedback]) != 0 {
		t.Fatalf("feedback a chat turn took still waits: %+v", needs)
	}
}

// TestAGuidedPlanAndADraftsQuestionsNeedTheOwner: a submitted guided plan
// waits for the owner's approval, and a draft whose engineer asked waits
// for the owner's answers; both are listed and counted for the rail, each
// with the intent it is about, until the owner acts. (Before, neither was.)
func TestAGuidedPlanAndADraftsQuestionsNeedTheOwner(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	e.app(t, "site")
	e.app(t, "shop")
	requests := e.launcher.Requests

	st, err := requests.Create(ctx, "site", "Add tags", "guided", "op-site")
	if err != nil {
		t.Fatal(err)
	}
	planned, err := e.backlog.OpenDraft(ctx, "site", st.Text, intent.Analysis{Restated: []string{"Tags."}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.backlog.AddTask(ctx, planned.ID, plan.Task{Title: "Add tags", Priority: "medium",
		Labels: []string{"views"}, EstimatedLines: 10, Risk: "normal", Reasoning: "low", Summary: "A change.",
		Criteria: []plan.Criterion{{Text: "It shows."}}, NoFailurePath: "nothing to refuse"}); err != nil {
		t.Fatal(err)
	}
	if _, err := requests.Link(ctx, st.ID, planned.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.backlog.Submit(ctx, planned.ID); err != nil {
		t.Fatal(err)
	}
	if st, err = requests.PlanSubmitted(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	asking, err := e.backlog.OpenDraft(ctx, "shop", "Sell shirts", intent.Analysis{Restated: []string{"A shop."},
		Questions: []string{"Which sizes?", "Which currency?"}})
	if err != nil {
		t.Fatal(err)
	}

	needs, err := e.needs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	k := kinds(needs)
	if a := k[overview.NeedApproval]; len(a) != 1 || a[0].IntentID != planned.ID || a[0].AppID != "site" ||
		a[0].Text != fmt.Sprintf("site: the guided plan of intent #%d waits for your approval.", planned.ID) {
		t.Errorf("the plan waiting for approval: %+v", a)
	}
	if q := k[overview.NeedDraftQuestions]; len(q) != 1 || q[0].IntentID != asking.ID || q[0].AppID != "shop" ||
		q[0].Text != fmt.Sprintf("shop: the engineer asks 2 questions about the draft of intent #%d.", asking.ID) {
		t.Errorf("the draft's questions: %+v", q)
	}
	if len(needs) != 2 {
		t.Errorf("%d needs, want 2: %+v", len(needs), needs)
	}

	// Approved, the plan waits for Run, not for the owner's approval.
	if _, err := requests.Approve(ctx, st.ID, st.Revision, "op-approve"); err != nil {
		t.Fatal(err)
	}
	needs, err = e.needs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(needs) != 1 || needs[0].Kind != overview.NeedDraftQuestions {
		t.Fatalf("after approving: %+v", needs)
	}
}
