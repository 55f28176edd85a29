package replay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"autoapp/executor"
	"autoapp/executor/acceptance"
	"autoapp/executor/ai"
	"autoapp/executor/ai/provider"
	"autoapp/executor/build"
	"autoapp/executor/candidate"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
	"autoapp/knowledge"
	"autoapp/knowledge/origin"
)

// replayRun is one replay going: what each of its runs shares.
type replayRun struct {
	h      *Harness
	hash   string
	of     int64
	lesson int64
	ep     provider.Endpoint
	limits ai.Limits
	total  int
	// stores are the cases' own stores, opened at a case's first run.
	stores   map[int64]*caseStore
	progress func(Progress)
}

// close closes the cases' stores.
func (r *replayRun) close() {
	for _, s := range r.stores {
		s.store.Close()
	}
}

// store is the store of case id, opened at its first run of this replay,
// once the oldest run folders beyond KeepRuns are gone.
func (r *replayRun) store(id int64) (*caseStore, error) {
	if s := r.stores[id]; s != nil {
		return s, nil
	}
	dir := r.h.caseDir(id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	if err := prune(dir, KeepRuns); err != nil {
		return nil, err
	}
	s, err := r.h.openStore(filepath.Join(dir, "knowledge.sqlite"), "replay")
	if err != nil {
		return nil, err
	}
	r.stores[id] = s
	return s, nil
}

// run runs step st, the index-th of the replay, judges it and records its
// row. A run cut short answers ErrStopped and records nothing.
func (r *replayRun) run(ctx context.Context, index int, st step) (knowledge.ReplayRun, error) {
	c := st.pc.c
	cs, err := r.store(c.ID)
	if err != nil {
		return knowledge.ReplayRun{}, err
	}
	n, dir, err := r.h.folder(ctx, c.ID, st.arm)
	if err != nil {
		return knowledge.ReplayRun{}, err
	}
	runID := fmt.Sprintf("replay-%d-%s-%d", c.ID, st.arm, n)
	p := Progress{Index: index, Total: r.total, CaseID: c.ID, Arm: st.arm, N: n, Dir: dir, RunID: runID}
	r.progress(p)
	started := r.h.d.Now()
	stopped := func(err error) (knowledge.ReplayRun, error) {
		if ctx.Err() != nil {
			return knowledge.ReplayRun{}, ErrStopped
		}
		return knowledge.ReplayRun{}, err
	}

	if err := workspace.CloneAt(ctx, r.h.d.Apps.WorkspaceDir(c.AppID), filepath.Join(dir, "workspace"), st.pc.entry.Revision); err != nil {
		return stopped(fmt.Errorf("replay: a clone of %s for %s: %w", c.AppID, runID, err))
	}
	if err := writeTaskContext(dir, len(st.given) > 0); err != nil {
		return knowledge.ReplayRun{}, err
	}
	w := r.h.newWorld(st.pc.app, dir, cs)
	defer w.close()
	deps := executor.Deps{Backlog: r.h.d.Backlog, Usage: r.h.d.Usage, Apps: w.apps, Candidates: w.cands, Models: r.h.d.Models, Log: cs.log, Now: r.h.d.Now,
		Limits: func() ai.Limits { return r.limits }, Books: cs.books(r.h.d.Version),
		TaskContext: filepath.Join(dir, executor.TaskContextFile)}
	if len(st.given) > 0 {
		deps.Lessons = corpus(st.given)
	}
	out := executor.New(deps).RunBuilderTurn(ctx, executor.BuilderTurn{Intent: st.pc.intent, Task: st.pc.task, RunID: runID,
		Endpoint: r.ep, Answer: NoOneAnswers})
	switch {
	case out.Result.Ended == ai.EndAborted || ctx.Err() != nil:
		return knowledge.ReplayRun{}, ErrStopped
	case out.Result.Ended == ai.EndProvider:
		return knowledge.ReplayRun{}, refuse(refusal.Failed, "Run %s of the replay got no answer from the model: %s The replay stopped; the runs that finished are kept.",
			runID, out.Result.Sentence)
	}

	passed, why, err := w.judge(ctx, st.pc, runID)
	if err != nil || ctx.Err() != nil {
		return stopped(err)
	}
	if out.Record.Edits == 0 {
		why += " The run landed no edit."
	}
	row := knowledge.ReplayRun{Manifest: r.hash, OfCaseID: r.of, CaseID: c.ID, LessonID: r.lesson, Arm: st.arm, N: n, RunID: runID,
		Passed: passed, Judgement: why, Ended: string(out.Result.Ended), Calls: len(out.Result.Calls),
		InputTokens: out.Result.Usage.Input, OutputTokens: out.Result.Usage.Output, StartedAt: started, FinishedAt: r.h.d.Now()}
	// The run finished and was judged: its row is written whatever comes now.
	if row.ID, err = r.h.d.Replays.Record(context.WithoutCancel(ctx), row); err != nil {
		return knowledge.ReplayRun{}, err
	}
	p.Done, p.Passed, p.Judgement = true, passed, why
	r.progress(p)
	return row, nil
}

// judge says whether what the run left passes the case, and why.
func (w *world) judge(ctx context.Context, pc *prepared, runID string) (bool, string, error) {
	ctx = origin.WithIdentity(ctx, origin.Identity{RunID: runID, CallID: runID + ":judge", AppID: pc.c.AppID})
	if pc.c.Kind == knowledge.CaseCheck {
		return w.judgeCheck(ctx, pc)
	}
	return w.judgeBuild(ctx, pc)
}

// judgeBuild: a build case passes when the build of what the run left
// runs the failing stage and no problem carries the case's signature. The
// run's last build stands when it built the revision the run left.
func (w *world) judgeBuild(ctx context.Context, pc *prepared) (bool, string, error) {
	appID, stage := pc.c.AppID, pc.c.Stage
	o, err := w.cands.ObserveNow(ctx, appID)
	if err != nil {
		return false, "", err
	}
	rec := o.Build
	if rec == nil || o.Edited {
		res, err := w.cands.Build(ctx, appID, candidate.By{})
		if isRefusal(err) {
			return false, "Nothing was built of what the run left: " + err.Error(), nil
		}
		if err != nil {
			return false, "", err
		}
		rec = res.Build
	}
	ran := slices.Contains(rec.StagesRun, stage) || (stage == "" && (rec.OK || len(rec.StagesRun) > 0))
	if !ran {
		return false, fmt.Sprintf("The build of what the run left stopped before stage %s, so it says nothing of the failure.", stage), nil
	}
	for _, p := range rec.Problems {
		if build.Signature(p.Stage, p.String()) == pc.c.Signature {
			return false, sentence("The build of what the run left failed again with the case's failure: " + p.String()), nil
		}
	}
	return true, fmt.Sprintf("The build of what the run left ran stage %s and no problem carries the case's signature.", stage), nil
}

// judgeCheck: a check case passes when its own example, by its content
// hash and never the workspace's copy, passes on a preview of what the run
// left.
func (w *world) judgeCheck(ctx context.Context, pc *prepared) (bool, string, error) {
	return w.judgeExample(ctx, pc.c.AppID, *pc.example, "The case's own example")
}

// judgeExample builds what a run left of application appID, starts a
// fresh preview of it and runs ex there first and alone: the harness's own
// copy of an example, never the workspace's, on a preview no other example
// has changed (an example that adds a note expects the list it finds).
// whose names the example in the judgement.
func (w *world) judgeExample(ctx context.Context, appID string, ex acceptance.Example, whose string) (bool, string, error) {
	lower := strings.ToLower(whose[:1]) + whose[1:]
	res, err := w.cands.Build(ctx, appID, candidate.By{})
	if isRefusal(err) {
		return false, "Nothing was built of what the run left: " + err.Error(), nil
	}
	if err != nil {
		return false, "", err
	}
	if res.Build == nil || !res.Build.OK {
		return false, "What the run left does not build, so " + lower + " was not run.", nil
	}
	o, err := w.cands.StartPreview(ctx, appID)
	if isRefusal(err) {
		return false, "The preview of what the run left would not start, so " + lower + " was not run. " + sentence(err.Error()), nil
	}
	if err != nil {
		return false, "", err
	}
	if !o.PreviewRunning {
		return false, "The preview of what the run left is not running, so " + lower + " was not run.", nil
	}
	results := acceptance.Run(ctx, o.Live.URL, []acceptance.Example{ex}, nil)
	if len(results) == 1 && results[0].Passed {
		return true, fmt.Sprintf("%s %s (content %s) passed on a preview of what the run left.", whose, ex.ID, short(ex.Hash)), nil
	}
	why := whose + " " + ex.ID + " failed on a preview of what the run left"
	if len(results) == 1 && results[0].Failure != "" {
		why += ": " + results[0].Failure
	}
	return false, sentence(why), nil
}

// sentence ends s with a full stop unless it ends a sentence already.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}
