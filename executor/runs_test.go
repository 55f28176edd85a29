package executor_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"autoapp/executor"
	"autoapp/executor/ai/scripted"
	"autoapp/intent"
	"autoapp/intent/plan"
)

// planOn plans the tasks as an intent of appID and submits it.
func (h *host) planOn(t *testing.T, appID string, tasks ...plan.Task) int64 {
	t.Helper()
	ctx := context.Background()
	in, err := h.backlog.OpenDraft(ctx, appID, "Change "+appID+".", intent.Analysis{Restated: []string{"Changes."}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tasks {
		if _, err := h.backlog.AddTask(ctx, in.ID, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.backlog.Submit(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	return in.ID
}

// waitFor waits until the intent leaves running and its run has ended,
// whatever else runs.
func (h *host) waitFor(t *testing.T, id int64) intent.IntentDetail {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		d, err := h.backlog.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if _, going := h.exec.Progress(id); d.Status != intent.IntentRunning && !going {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("intent %d still runs: %+v", id, d.Intent)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// heldHeading scripts the heading task of intent id to complete, its
// first request held until release is closed; arrived is told when it
// arrives.
func (h *host) heldHeading(id int64, arrived chan<- int64, release <-chan struct{}) {
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
		scripted.Reply{Before: func() { arrived <- id; <-release },
			ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes")), addLine("Hello notes")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
}

func ids(runs []executor.Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, fmt.Sprintf("#%d %s", r.IntentID, r.AppID))
	}
	return out
}

// With Runs at once set to two, intents of two applications run at the
// same time; a second intent of a running application and a third run
// are refused with sentences naming the runs; Stop stops its own run only.
func TestTwoApplicationsRunAtOnceAndStopStopsOne(t *testing.T) {
	h := newHost(t)
	ctx := context.Background()
	for _, a := range []string{"blog", "docs"} {
		if _, err := h.apps.CreateFromTemplate(ctx, a, strings.ToUpper(a[:1])+a[1:], "static"); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.launcher.Limits.SaveRunsAtOnce("2"); err != nil {
		t.Fatal(err)
	}
	site, blog := h.planOn(t, "site", heading()), h.planOn(t, "blog", heading())
	docs := h.planOn(t, "docs", heading())
	arrived, release := make(chan int64, 4), make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	t.Cleanup(open)
	h.heldHeading(site, arrived, release)
	h.heldHeading(blog, arrived, release)
	h.headingCompletes(docs)

	for _, id := range []int64{site, blog} {
		if err := h.exec.Start(ctx, id); err != nil {
			t.Fatalf("Run of intent #%d: %v", id, err)
		}
	}
	// Both are in their first turn at once.
	for range 2 {
		select {
		case <-arrived:
		case <-time.After(30 * time.Second):
			t.Fatalf("both runs did not reach the model at once; running: %v", ids(h.exec.Running()))
		}
	}
	if got := ids(h.exec.Running()); !slices.Equal(got, []string{fmt.Sprintf("#%d site", site), fmt.Sprintf("#%d blog", blog)}) {
		t.Fatalf("running %v", got)
	}
	// An application has one draft at a time: the second is planned
	// while the first runs.
	site2 := h.planOn(t, "site", heading())
	second := "0002-change-the-heading" // task numbers go on within an application
	h.model.On(scripted.RunID(runID(site2, second, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{change(examplePath(second, 1), example("The home page says Hello again", "/", "Hello again")), addLine("Hello again")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	err := h.exec.Start(ctx, site2)
	want := fmt.Sprintf("Intent #%d of site is running; an application runs one intent at a time, so wait for it to end or stop it first.", site)
	if err == nil || err.Error() != want {
		t.Fatalf("a second intent of site: %v, want %q", err, want)
	}
	err = h.exec.Start(ctx, docs)
	want = fmt.Sprintf("2 runs are going (intent #%d of site, intent #%d of blog), as many as Settings → Runs at once allows; wait for one to end, stop one, or raise the number.", site, blog)
	if err == nil || err.Error() != want {
		t.Fatalf("a third run: %v, want %q", err, want)
	}
	if err := h.exec.CanReplay(); err == nil || !strings.HasPrefix(err.Error(), "2 runs are going") {
		t.Fatalf("a replay past the runs at once: %v", err)
	}
	if err := h.exec.Busy("blog"); err == nil {
		t.Fatal("blog could be changed by hand while it runs")
	}
	if err := h.exec.Busy("docs"); err != nil {
		t.Fatalf("docs, which does not run, is busy: %v", err)
	}

	// Stop on site leaves blog running.
	stopped := make(chan error, 1)
	go func() { stopped <- h.exec.Stop(site) }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Stop did not return")
	}
	if d := h.waitFor(t, site); d.Status != intent.IntentStopped || d.StopReason != executor.StoppedByPerson {
		t.Fatalf("site after Stop: %s (%s)", d.Status, d.StopReason)
	}
	if got := ids(h.exec.Running()); !slices.Equal(got, []string{fmt.Sprintf("#%d blog", blog)}) {
		t.Fatalf("after Stop on site, running %v", got)
	}
	// A free run: docs starts beside blog, and both finish.
	if err := h.exec.Start(ctx, docs); err != nil {
		t.Fatalf("docs beside blog: %v", err)
	}
	open()
	for _, id := range []int64{blog, docs} {
		if d := h.waitFor(t, id); d.Status != intent.IntentDone {
			t.Fatalf("intent #%d ended %s (%s)", id, d.Status, d.StopReason)
		}
	}
	// Site is free again: its second intent runs.
	if err := h.exec.Start(ctx, site2); err != nil {
		t.Fatalf("site's second intent: %v", err)
	}
	if d := h.waitFor(t, site2); d.Status != intent.IntentDone {
		t.Fatalf("site's second intent ended %s (%s)", d.Status, d.StopReason)
	}
	// The knowledge log names each run's own application on every record
	// the runs wrote side by side.
	apps := map[int64]string{site: "site", blog: "blog", docs: "docs", site2: "site"}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var rows []struct {
			RunID string `db:"run_id"`
			AppID string `db:"app_id"`
		}
		if err := h.launcher.Knowledge.DB().Read.Select(&rows,
			`SELECT DISTINCT run_id, coalesce(app_id, '') AS app_id FROM events WHERE run_id LIKE 'intent-%'`); err != nil {
			t.Fatal(err)
		}
		seen := map[int64]bool{}
		for _, r := range rows {
			var id int64
			fmt.Sscanf(r.RunID, "intent-%d-", &id)
			if apps[id] == "" {
				continue
			}
			if r.AppID != apps[id] {
				t.Fatalf("the log's records of run %s name application %q, want %q", r.RunID, r.AppID, apps[id])
			}
			seen[id] = true
		}
		// (The run stopped in its first request may have written none.)
		if seen[blog] && seen[docs] && seen[site2] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log has records of the runs of %v only", seen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// With the default of one run at once, a run of another application is
// refused as seed 000 says, and a shutdown stops every run going.
func TestOneRunAtOnceByDefaultAndShutdownStopsEveryRun(t *testing.T) {
	h := newHost(t)
	ctx := context.Background()
	if _, err := h.apps.CreateFromTemplate(ctx, "blog", "Blog", "static"); err != nil {
		t.Fatal(err)
	}
	site, blog := h.planOn(t, "site", heading()), h.planOn(t, "blog", heading())
	arrived, release := make(chan int64, 4), make(chan struct{})
	t.Cleanup(func() { close(release) })
	h.heldHeading(site, arrived, release)
	h.heldHeading(blog, arrived, release)
	if err := h.exec.Start(ctx, site); err != nil {
		t.Fatal(err)
	}
	<-arrived
	err := h.exec.Start(ctx, blog)
	if want := fmt.Sprintf("Intent #%d is running; wait for it to end or stop it first.", site); err == nil || err.Error() != want {
		t.Fatalf("a second run with one at once: %v, want %q", err, want)
	}
	if err := h.launcher.Limits.SaveRunsAtOnce("2"); err != nil {
		t.Fatal(err)
	}
	// Raised, it holds from the next Run on.
	if err := h.exec.Start(ctx, blog); err != nil {
		t.Fatal(err)
	}
	<-arrived
	h.exec.Shutdown()
	for _, id := range []int64{site, blog} {
		d := h.waitFor(t, id)
		if d.Status != intent.IntentStopped || d.StopReason != executor.LauncherStopped {
			t.Fatalf("intent #%d after the shutdown: %s (%s)", id, d.Status, d.StopReason)
		}
		if task := d.Tasks[0]; task.Status != intent.TaskInterrupted {
			t.Fatalf("intent #%d's task after the shutdown: %s", id, task.Status)
		}
	}
	if len(h.exec.Running()) != 0 {
		t.Fatalf("still running after the shutdown: %v", ids(h.exec.Running()))
	}
}

// Runs at once is named in a sentence when it is out of bounds, and the
// turn limits saved beside it are kept.
func TestRunsAtOnceIsCheckedAndKeepsTheTurnLimits(t *testing.T) {
	h := newHost(t)
	if err := h.launcher.Limits.Save("3", "9"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"0", "9", "two", ""} {
		err := h.launcher.Limits.SaveRunsAtOnce(bad)
		if err == nil || !strings.Contains(err.Error(), "is not a whole number from 1 to 8") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if err := h.launcher.Limits.SaveRunsAtOnce("3"); err != nil {
		t.Fatal(err)
	}
	l, why := h.launcher.Limits.Read()
	if h.launcher.Limits.RunsAtOnce() != 3 || l.Idle != 3*time.Minute || l.Wall != 9*time.Minute || why != "" {
		t.Fatalf("runs %d, limits %+v (%s)", h.launcher.Limits.RunsAtOnce(), l, why)
	}
	if err := h.launcher.Limits.Save("4", "10"); err != nil {
		t.Fatal(err)
	}
	if h.launcher.Limits.RunsAtOnce() != 3 {
		t.Fatalf("saving the turn limits lost runs at once: %d", h.launcher.Limits.RunsAtOnce())
	}
}

// asHermes writes calls as a Qwen model whose server left them in the
// text does: one <tool_call> block each.
func asHermes(calls ...scripted.Call) scripted.Reply {
	var b strings.Builder
	b.WriteString("I will do this now.\n")
	for _, c := range calls {
		fmt.Fprintf(&b, "<tool_call>\n{\"name\": %q, \"arguments\": %s}\n</tool_call>\n", c.Name, c.Args)
	}
	return scripted.Reply{Text: b.String(), TextPieces: 9}
}

// A builder that writes every tool call as Hermes text still builds its
// task to done, and the knowledge log marks each call read from text.
func TestABuilderThatWritesItsCallsAsTextRunsToDone(t *testing.T) {
	h := newHost(t, func(c *hostConfig) { c.opts.Quiet = false }) // the log goes to the knowledge store
	id := h.plan(t, heading())
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
		asHermes(change(headingC1, example("The home page says Hello notes", "/", "Hello notes")), addLine("Hello notes")),
		asHermes(cycle),
		scripted.Reply{Text: "The home page says Hello notes."})
	if err := h.exec.Start(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if d := h.waitFor(t, id); d.Status != intent.IntentDone {
		t.Fatalf("the intent ended %s (%s)", d.Status, d.StopReason)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var rows []struct {
			CallID string `db:"call_id"`
			Attrs  string `db:"attrs"`
		}
		if err := h.launcher.Knowledge.DB().Read.Select(&rows,
			`SELECT coalesce(call_id, '') AS call_id, attrs FROM events WHERE message = 'ai: a tool call written as text was read' AND run_id = ?`,
			runID(id, headingSlug, 1)); err != nil {
			t.Fatal(err)
		}
		if len(rows) == 3 {
			for _, r := range rows {
				if r.CallID == "" || !strings.Contains(r.Attrs, `"form":"hermes"`) {
					t.Errorf("a recovered call's record: %+v", r)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			var msgs []string
			_ = h.launcher.Knowledge.DB().Read.Select(&msgs, `SELECT message FROM events WHERE run_id = ?`, runID(id, headingSlug, 1))
			t.Fatalf("the log marks %d calls read from text, want 3; the run logged %q", len(rows), msgs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
