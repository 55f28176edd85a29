package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"autoapp/executor"
	"autoapp/executor/acceptance"
	"autoapp/executor/ai"
	"autoapp/executor/ai/provider"
	"autoapp/executor/builder"
	"autoapp/executor/candidate"
	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/atomicfile"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
	"autoapp/knowledge"
	"autoapp/knowledge/origin"
)

// The conditions of an evaluation, in the order each task runs them: what
// the engineer's turn is given beyond the instructions, the message and
// its tools.
const (
	// Baseline: no documents and no hints.
	Baseline = "baseline"
	// Orientation: the orientation digest alone.
	Orientation = "orientation"
	// OrientationFacts: the digest, the intent document and the task's
	// evidence, as a task's first turn is given them, and no lesson.
	OrientationFacts = "orientation+facts"
	// Learned: that, and every provisional and confirmed lesson of the
	// launcher's store on every turn, with the hints a failed build's
	// answer carries from among them.
	Learned = "learned"
)

// Conditions are the four conditions, in the order they run.
var Conditions = []string{Baseline, Orientation, OrientationFacts, Learned}

// DefaultEvaluationRuns is how many runs each task makes under each
// condition unless asked.
const DefaultEvaluationRuns = 1

// NoOneAnswersEvaluation is what an evaluation's builder is told when it
// asks the person something: the turn goes on.
const NoOneAnswersEvaluation = "No one answers questions in an evaluation: decide with what you have; the evaluation judges what the turn leaves."

// evaluationFile is the JSON of an evaluation, kept in its folder and
// written again as each run finishes.
const evaluationFile = "evaluation.json"

// EvaluateOptions say how much an evaluation runs.
type EvaluateOptions struct {
	// Runs is how many runs each task makes under each condition; 0 is
	// DefaultEvaluationRuns.
	Runs int
}

// EvalProgress is one run of an evaluation starting (Done false) or
// judged (Run set).
type EvalProgress struct {
	// Index is the run's place among the evaluation's Total runs, from 1.
	Index, Total    int
	Task, Condition string
	// Mode is a two-turn task's history mode; "" for a task of one turn.
	Mode  string
	N     int
	Dir   string
	RunID string
	Done  bool
	Run   *EvalRun
}

// documentsOf are the documents a condition's turns are given.
func documentsOf(condition string) executor.TurnDocuments {
	switch condition {
	case Orientation:
		return executor.TurnDocuments{Orientation: true}
	case OrientationFacts:
		return executor.TurnDocuments{Orientation: true, Attempts: true, Intent: true, Evidence: true}
	case Learned:
		return executor.AllDocuments
	}
	return executor.TurnDocuments{}
}

// Evaluate measures the knowledge path itself: each of EvalTasks, under
// each of Conditions, o.Runs times, on the Settings model, each run a
// builder turn in a fresh workspace made from the task's template with the
// task's example added, under <root>/evaluate/<stamp>/<task>/<condition>/<n>/.
// Each run is judged twice: working code (the evaluation built and
// previewed what the turn left, and the task's example, its own copy,
// passed) and workflow completed (the engineer itself checked the release
// it last built, with the example intact, and every example passed). A
// run's turns, cases and log lines (source evaluate) go to a store in its
// folder; the launcher's own store gains nothing, and the turns' usage is
// recorded as any turn's. The runs share one cache, <root>/evaluate/cache,
// warmed by building each template once before the first run, so no run's
// tool time is the toolchain's first compile. A stopped evaluation
// returns what finished with ErrStopped. progress, which may be nil,
// hears of each run as it starts and as it is judged.
func (h *Harness) Evaluate(ctx context.Context, o EvaluateOptions, progress func(EvalProgress)) (Evaluation, error) {
	if progress == nil {
		progress = func(EvalProgress) {}
	}
	runs := o.Runs
	switch {
	case runs == 0:
		runs = DefaultEvaluationRuns
	case runs < 0 || runs > MaxRuns:
		return Evaluation{}, refuse(refusal.Invalid, "Give between 1 and %d runs a task and condition.", MaxRuns)
	}
	ref := h.d.Models.DefaultModel()
	if ref == "" {
		return Evaluation{}, refuse(refusal.Conflict, "No model is chosen in Settings: an evaluation runs on the Settings model, so choose one first.")
	}
	if err := h.d.Jail.Ready(); err != nil {
		return Evaluation{}, err
	}
	ep, err := h.d.Models.Resolve(ctx, ref)
	if err != nil {
		var pe *refusal.Error
		if errors.As(err, &pe) {
			return Evaluation{}, refuse(refusal.Conflict, "The Settings model, %s, cannot be used: %s", ref, pe.Message)
		}
		return Evaluation{}, err
	}
	// The learned condition's corpus is frozen as the evaluation starts.
	all, err := h.d.Lessons.List(ctx, knowledge.LessonQuery{Limit: knowledge.MaxLessonLimit})
	if err != nil {
		return Evaluation{}, err
	}
	var lessons corpus
	ids := []int64{}
	for _, l := range all {
		if l.Servable() {
			lessons = append(lessons, l)
			ids = append(ids, l.ID)
		}
	}

	started := h.d.Now()
	stamp, dir, err := h.evaluationDir(started)
	if err != nil {
		return Evaluation{}, err
	}
	ev := Evaluation{StartedAt: started, Stamp: stamp, Dir: dir, Version: h.d.Version,
		Model:    ModelEntry{Ref: ref, Provider: ep.Provider, Model: ep.Model},
		RunsEach: runs, StepCap: StepCap, TurnMinutes: int(TurnLimit / time.Minute), Instructions: builder.InstructionsHash(),
		Lessons: ids, Conditions: Conditions, Runs: []EvalRun{}}
	for _, t := range EvalTasks {
		ex := t.example()
		ev.Tasks = append(ev.Tasks, EvalTaskEntry{Key: t.Key, Template: t.Template, Request: t.Request, Slug: t.Task.Slug, TwoTurns: t.TwoTurns, Touch: t.Touch,
			Example: ExampleEntry{ID: ex.ID, Hash: ex.Hash, Text: t.Example}})
	}
	ev = ev.tally()
	if err := ev.keep(); err != nil {
		return ev, err
	}
	if err := h.warm(ctx, dir); err != nil {
		if ctx.Err() != nil {
			ev.Stopped = true
			return ev, ErrStopped
		}
		return ev, err
	}

	limits := h.d.Limits()
	limits.Steps, limits.Wall = StepCap, TurnLimit
	each := 0
	for _, t := range EvalTasks {
		for _, c := range Conditions {
			each += len(modesOf(t.TwoTurns, c))
		}
	}
	e := &evaluationRun{h: h, ev: &ev, ep: ep, limits: limits, lessons: lessons, total: runs * each, progress: progress}
	index := 0
	for n := 1; n <= runs && !ev.Stopped; n++ {
	tasks:
		for _, t := range EvalTasks {
			for _, c := range Conditions {
				for _, mode := range modesOf(t.TwoTurns, c) {
					index++
					if ctx.Err() != nil {
						ev.Stopped = true
						break tasks
					}
					run, err := e.run(ctx, index, t, c, mode, n)
					if errors.Is(err, ErrStopped) {
						ev.Stopped = true
						break tasks
					}
					if err != nil {
						ev = ev.tally()
						_ = ev.keep()
						return ev, err
					}
					ev.Runs = append(ev.Runs, run)
					ev = ev.tally()
					if err := ev.keep(); err != nil {
						return ev, err
					}
					p := EvalProgress{Index: index, Total: e.total, Task: t.Key, Condition: c, Mode: mode, N: n, Dir: run.Dir, RunID: run.RunID,
						Done: true, Run: &ev.Runs[len(ev.Runs)-1]}
					progress(p)
				}
			}
		}
	}
	ev = ev.tally()
	if err := ev.keep(); err != nil {
		return ev, err
	}
	if ev.Stopped {
		return ev, ErrStopped
	}
	return ev, nil
}

// evaluationDir makes <root>/evaluate/<stamp>, the stamp the start's time
// and, when another evaluation started in the same second, a number.
func (h *Harness) evaluationDir(started time.Time) (string, string, error) {
	base := filepath.Join(h.d.Root, "evaluate")
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", "", fmt.Errorf("replay: the evaluation's folder: %w", err)
	}
	stamp := started.UTC().Format("20060102-150405")
	for n := 1; ; n++ {
		s := stamp
		if n > 1 {
			s = stamp + "-" + strconv.Itoa(n)
		}
		dir := filepath.Join(base, s)
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			return s, dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", "", fmt.Errorf("replay: the evaluation's folder: %w", err)
		}
	}
}

// cacheDir is the cache every evaluation's runs build with.
func (h *Harness) cacheDir() string { return filepath.Join(h.d.Root, "evaluate", "cache") }

// warm builds each template the tasks start from once, in dir/warm, with
// the runs' cache, and refuses with a sentence a template that does not
// build here: no turn is spent on a toolchain that is missing.
func (h *Harness) warm(ctx context.Context, dir string) error {
	done := map[string]bool{}
	for _, t := range EvalTasks {
		if done[t.Template] {
			continue
		}
		done[t.Template] = true
		folder := filepath.Join(dir, "warm", t.Template)
		a, err := h.makeWorkspace(ctx, folder, t.Template, t.Template, nil)
		if err != nil {
			return err
		}
		w := h.newWorld(a, folder, nil)
		res, err := w.cands.Build(ctx, a.ID, candidate.By{})
		w.close()
		if isRefusal(err) {
			return refuse(refusal.Conflict, "The %s template cannot be built here, so nothing was evaluated: %s", t.Template, err.Error())
		}
		if err != nil {
			return err
		}
		if res.Build == nil || !res.Build.OK {
			why := "its build failed"
			if len(res.BuildProblems) > 0 {
				why = res.BuildProblems[0].String()
			}
			return refuse(refusal.Conflict, "The %s template does not build on this machine, so nothing was evaluated: %s", t.Template, sentence(why))
		}
	}
	return nil
}

// makeWorkspace makes folder/workspace a new git workspace of template,
// with example (the task's, or none) added before its first commit, links
// folder/cache to the evaluations' cache, and answers the application the
// folder stands for.
func (h *Harness) makeWorkspace(ctx context.Context, folder, appID, template string, example *EvalTask) (app.App, error) {
	ws := filepath.Join(folder, "workspace")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return app.App{}, fmt.Errorf("replay: %w", err)
	}
	if err := app.WriteTemplate(template, ws); err != nil {
		return app.App{}, err
	}
	message := "Start from the " + template + " template"
	if example != nil {
		m, err := app.TemplateManifest(template)
		if err != nil {
			return app.App{}, err
		}
		name := filepath.Join(ws, filepath.FromSlash(m.AcceptanceDir()), example.ExampleID()+".json")
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return app.App{}, fmt.Errorf("replay: %w", err)
		}
		if err := os.WriteFile(name, []byte(example.Example), 0o644); err != nil {
			return app.App{}, fmt.Errorf("replay: %w", err)
		}
		message += ", with the evaluation's example " + example.ExampleID()
	}
	if _, err := workspace.InitRepository(ctx, ws, message, h.d.Now); err != nil {
		return app.App{}, fmt.Errorf("replay: a workspace for %s: %w", appID, err)
	}
	if err := os.MkdirAll(h.cacheDir(), 0o700); err != nil {
		return app.App{}, fmt.Errorf("replay: %w", err)
	}
	if err := os.Symlink(h.cacheDir(), filepath.Join(folder, "cache")); err != nil {
		return app.App{}, fmt.Errorf("replay: %w", err)
	}
	return app.App{ID: appID, Name: appID, Origin: "template:" + template}, nil
}

// evaluationRun is one evaluation going: what each of its runs shares.
type evaluationRun struct {
	h        *Harness
	ev       *Evaluation
	ep       provider.Endpoint
	limits   ai.Limits
	lessons  corpus
	total    int
	progress func(EvalProgress)
}

// run runs task t under condition c (and, for a task of two turns,
// history mode) for the n-th time, the index-th run of the evaluation,
// and judges it. A run cut short answers ErrStopped.
func (e *evaluationRun) run(ctx context.Context, index int, t EvalTask, c, mode string, n int) (EvalRun, error) {
	h := e.h
	dir := filepath.Join(e.ev.Dir, t.Key, c, strconv.Itoa(n))
	runID := fmt.Sprintf("evaluate-%s-%s-%s-%d", e.ev.Stamp, t.Key, c, n)
	if mode != "" {
		dir = filepath.Join(e.ev.Dir, t.Key, c, mode, strconv.Itoa(n))
		runID = fmt.Sprintf("evaluate-%s-%s-%s-%s-%d", e.ev.Stamp, t.Key, c, mode, n)
	}
	e.progress(EvalProgress{Index: index, Total: e.total, Task: t.Key, Condition: c, Mode: mode, N: n, Dir: dir, RunID: runID})
	started := h.d.Now()
	stopped := func(err error) (EvalRun, error) {
		if ctx.Err() != nil {
			return EvalRun{}, ErrStopped
		}
		return EvalRun{}, err
	}
	a, err := h.makeWorkspace(ctx, dir, t.Key, t.Template, &t)
	if err != nil {
		return stopped(err)
	}
	cs, err := e.openStore(dir)
	if err != nil {
		return EvalRun{}, err
	}
	w := h.newWorld(a, dir, cs)
	started0 := filesOf(w.apps.WorkspaceDir(a.ID))
	// A restart replaces both; whichever are open at the end are closed.
	defer func() {
		w.close()
		if cs != nil {
			cs.store.Close()
		}
	}()

	docs := documentsOf(c)
	d, td := evalIntent(t)
	bt := executor.BuilderTurn{Intent: d, Task: td, RunID: runID, Endpoint: e.ep, Answer: NoOneAnswersEvaluation, Documents: &docs}
	var one *KeptTurn
	var existed map[string]bool
	if t.TwoTurns {
		kept, err := e.turnOne(ctx, e.executor(c, cs, w), bt, dir)
		if err != nil {
			return stopped(err)
		}
		if t.Touch != "" {
			if err := touch(ctx, a, w, t, runID, h.d.Now); err != nil {
				return stopped(err)
			}
		}
		if mode == RestartHistory {
			// The launcher restarted: nothing of turn one is held but what
			// its folder keeps.
			w.close()
			cs.store.Close()
			if cs, err = e.openStore(dir); err != nil {
				return EvalRun{}, err
			}
			w = h.newWorld(a, dir, cs)
			if kept, err = readKept(dir, turnOneFile); err != nil {
				return EvalRun{}, err
			}
		}
		one = &kept
		existed = filesOf(w.apps.WorkspaceDir(a.ID))
		bt.RunID, bt.History, bt.Message = runID+"-turn2", one.history(mode), ContinueMessage
	}
	out := e.executor(c, cs, w).RunBuilderTurn(ctx, bt)
	switch {
	case out.Result.Ended == ai.EndAborted || ctx.Err() != nil:
		return EvalRun{}, ErrStopped
	case out.Result.Ended == ai.EndProvider:
		return EvalRun{}, refuse(refusal.Failed, "Run %s of the evaluation got no answer from the model: %s The evaluation stopped; the runs that finished are kept.",
			bt.RunID, out.Result.Sentence)
	}

	if _, err := keepTurn(dir, lastTurnFile, bt.RunID, out); err != nil {
		return EvalRun{}, err
	}
	ex := t.example()
	// What the engineer's own checks showed is read before the
	// evaluation's cycle replaces them.
	workflow, err := w.workflowCompleted(ctx, a.ID, ex, out)
	if err != nil || ctx.Err() != nil {
		return stopped(err)
	}
	ctx = origin.WithIdentity(ctx, origin.Identity{RunID: runID, CallID: runID + ":judge", AppID: a.ID})
	working, why, err := w.judgeExample(ctx, a.ID, ex, "The task's example")
	if err != nil || ctx.Err() != nil {
		return stopped(err)
	}
	met, err := cs.cases.List(context.WithoutCancel(ctx), knowledge.CaseQuery{Limit: knowledge.MaxCaseLimit})
	if err != nil {
		return EvalRun{}, err
	}
	run := figures(out.Result.Calls)
	run.Task, run.Condition, run.Mode, run.N, run.RunID, run.Dir = t.Key, c, mode, n, runID, dir
	run.Ended, run.Calls = string(out.Result.Ended), len(out.Result.Calls)
	run.WorkingCode, run.Judgement, run.Workflow = working, why, workflow
	run.ReachedBuild, run.HostBuilt = out.Record.Built, out.HostBuilt
	run.ModelMS = out.Result.ModelTime.Milliseconds()
	run.InputTokens, run.OutputTokens, run.TokensReported = out.Result.Usage.Input, out.Result.Usage.Output, !out.Result.Usage.Partial
	if one != nil {
		second := secondTurn(*one, out.Result.Calls, existed, t.Touch)
		second.RunID = bt.RunID
		second.InputTokens, second.OutputTokens, second.TokensReported = out.Result.Usage.Input, out.Result.Usage.Output, !out.Result.Usage.Partial
		run.Second = &second
		// The run's tokens are both turns'; turn one, stopped, never
		// reports its whole use.
		run.InputTokens += one.Usage.Input
		run.OutputTokens += one.Usage.Output
		run.TokensReported = false
		run.ModelMS += one.ModelMS
	}
	run.Approvals = approvals(out.Result.Calls)
	run.Named, run.NamedUsed, run.ReadUnnamed = namedFiles(started0, delivered(out), out.Result.Calls)
	served, err := cs.servings.ForRun(context.WithoutCancel(ctx), bt.RunID)
	if err != nil {
		return EvalRun{}, err
	}
	run.HintsCredited, run.UnrelatedCredit = hintCredit(served, e.lessons, met)
	run.StartedAt, run.FinishedAt = started, h.d.Now()
	run.Failures = []string{}
	for i := len(met) - 1; i >= 0; i-- { // oldest first
		e.ev.meet(met[i], runID)
		run.Failures = appendNew(run.Failures, met[i].Signature)
	}
	return run, nil
}

// openStore opens the store of the run in dir, keeping its servings.
func (e *evaluationRun) openStore(dir string) (*caseStore, error) {
	cs, err := e.h.openStore(filepath.Join(dir, "knowledge.sqlite"), "evaluate")
	if err != nil {
		return nil, err
	}
	cs.servings = knowledge.NewServings(cs.store.DB(), e.h.d.Now)
	return cs, nil
}

// executor is the executor a run's turn runs on, over the run's store and
// world, with the lessons condition c is given.
func (e *evaluationRun) executor(c string, cs *caseStore, w *world) *executor.Executor {
	h := e.h
	deps := executor.Deps{Backlog: h.d.Backlog, Usage: h.d.Usage, Apps: w.apps, Candidates: w.cands, Models: h.d.Models, Log: cs.log, Now: h.d.Now,
		Limits: func() ai.Limits { return e.limits }, Books: cs.books(h.d.Version)}
	if c == Learned && len(e.lessons) > 0 {
		deps.Lessons = learned{corpus: e.lessons, hints: h.d.Lessons}
	}
	return executor.New(deps)
}

// workflowCompleted says whether the engineer itself checked the release
// it last built, with ex intact among the examples, and every example
// passed: the candidate as the turn left it, before anything else builds.
func (w *world) workflowCompleted(ctx context.Context, appID string, ex acceptance.Example, out executor.BuilderOutcome) (bool, error) {
	if out.HostBuilt {
		// The host built what the turn left unbuilt: those checks are
		// the host's, not the engineer's.
		return false, nil
	}
	o, err := w.cands.ObserveNow(ctx, appID)
	if err != nil {
		return false, err
	}
	b, checks := o.Build, o.Checks
	if b == nil || !b.OK || b.Release == nil || checks == nil || checks.Release != b.Release.ID || o.Edited || len(checks.Results) == 0 {
		return false, nil
	}
	intact := false
	for _, r := range checks.Results {
		if !r.Passed {
			return false, nil
		}
		if r.ID == ex.ID && r.Hash == ex.Hash {
			intact = true
		}
	}
	return intact, nil
}

// evalIntent is the intent and the task a run's turn works on: a request
// planned as the one task, which no run has started before.
func evalIntent(t EvalTask) (intent.IntentDetail, intent.TaskDetail) {
	task := intent.Task{Task: t.Task, ID: 1, IntentID: 1, AppID: t.Key, Status: intent.TaskInProgress}
	d := intent.IntentDetail{Intent: intent.Intent{ID: 1, AppID: t.Key, Status: intent.IntentRunning, Mode: intent.ModeAutonomous,
		Request: t.Request, Analysis: intent.Analysis{Restated: []string{t.Task.Summary}}},
		Tasks: []intent.BacklogTask{{Task: task}}}
	return d, intent.TaskDetail{BacklogTask: intent.BacklogTask{Task: task}}
}

// learned is the learned condition's lessons: the corpus given whole on
// every turn, and beside a failed build the hints the launcher's store
// finds for it, among the corpus only.
type learned struct {
	corpus
	hints builder.HintGetter
}

func (l learned) Hints(ctx context.Context, stage string, problems []string) ([]knowledge.Served, error) {
	found, err := l.hints.Hints(ctx, stage, problems)
	if err != nil {
		return nil, err
	}
	var out []knowledge.Served
	for _, sv := range found {
		if _, err := l.Get(ctx, sv.Lesson.ID); err == nil {
			out = append(out, sv)
		}
	}
	return out, nil
}

// keep writes the evaluation's JSON into its folder.
func (ev Evaluation) keep() error {
	b, err := json.MarshalIndent(ev, "", "  ")
	if err != nil {
		return fmt.Errorf("replay: the evaluation: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(ev.Dir, evaluationFile), append(b, '\n')); err != nil {
		return fmt.Errorf("replay: the evaluation: %w", err)
	}
	return nil
}
