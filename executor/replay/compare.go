package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"autoapp/executor"
	"autoapp/executor/ai"
	"autoapp/executor/ai/provider"
	"autoapp/intent/atomicfile"
	"autoapp/intent/refusal"
	"autoapp/knowledge"
	"autoapp/knowledge/origin"
)

// DefaultCompareCondition is the condition a comparison of models runs
// its tasks under unless asked: the baseline, so that the score is the
// model's own and not the documents'.
const DefaultCompareCondition = Baseline

// CompareAttempts is how many turns a comparison gives a task, as a run
// gives a task two counted attempts: the second, in the workspace the
// first left, is told why the first did not leave working code.
const CompareAttempts = 2

// comparisonFile is the JSON of a comparison, kept in its folder and
// written again as each attempt finishes.
const comparisonFile = "comparison.json"

// Catalogue is what a comparison reads of the providers
// (*provider.Registry): which there are, and the models each offers.
type Catalogue interface {
	List() []provider.ProviderView
	Models(ctx context.Context, name string) ([]string, error)
}

// CompareOptions say what a comparison runs.
type CompareOptions struct {
	// Models are the models compared, as references (provider:model, or a
	// bare id the provider in use serves); at least two.
	Models []string
	// Condition is what every turn is given, one of Conditions; "" is
	// DefaultCompareCondition.
	Condition string
}

// Comparison is a comparison of models: the same tasks under the same
// condition on each model, and the scorecard they make, one row a model,
// the best first.
type Comparison struct {
	StartedAt time.Time `json:"startedAt"`
	// Stamp names it, and Dir, <root>/evaluate/<stamp>, is where its runs
	// are kept (<dir>/<n>/<task>/ for the n-th model).
	Stamp     string   `json:"stamp"`
	Dir       string   `json:"dir"`
	Version   string   `json:"version"`
	Condition string   `json:"condition"`
	Models    []string `json:"models"`
	Tasks     []string `json:"tasks"`
	// Rows are the models that finished every task, the best first (see
	// knowledge.Score.Better).
	Rows []knowledge.Score `json:"rows"`
	// Attempts are every finished attempt, in the order they ran.
	Attempts []CompareAttempt `json:"attempts"`
	// Stopped says it ended before every model finished.
	Stopped bool `json:"stopped,omitempty"`
}

// CompareAttempt is one turn of one model on one task, and what the host
// saw of it.
type CompareAttempt struct {
	Model   string `json:"model"`
	Task    string `json:"task"`
	Attempt int    `json:"attempt"`
	RunID   string `json:"runId"`
	Dir     string `json:"dir"`
	Ended   string `json:"ended"`
	Calls   int    `json:"calls"`
	// WorkingCode and Workflow are judged as an evaluation's run is;
	// Judgement says why or why not.
	WorkingCode bool   `json:"workingCode"`
	Workflow    bool   `json:"workflowCompleted"`
	Judgement   string `json:"judgement"`
	// FirstEdit is the calls up to and with its first edit that landed, 0
	// for none.
	FirstEdit      int  `json:"firstEdit"`
	FromText       int  `json:"fromText"`
	InvalidInputs  int  `json:"invalidInputs"`
	InputTokens    int  `json:"inputTokens"`
	OutputTokens   int  `json:"outputTokens"`
	TokensReported bool `json:"tokensReported"`
}

// CompareProgress is one attempt of a comparison starting (Done false)
// or judged (Attempt set), or a model finished (Row set).
type CompareProgress struct {
	// Index is the model's place among the comparison's Models, from 1.
	Index, Models int
	Model         string
	Task          string
	// N is the attempt's number on its task.
	N       int
	RunID   string
	Done    bool
	Attempt *CompareAttempt
	Row     *knowledge.Score
}

// CheckModels resolves each of refs to the model it names, as
// provider:model, refusing with a sentence one that names no model a
// provider offers (naming the known models), one that cannot be used now,
// the same model twice, and fewer than two: nothing is asked of any model
// but its provider's list.
func (h *Harness) CheckModels(ctx context.Context, refs []string) ([]string, error) {
	var out []string
	for _, raw := range refs {
		ref := strings.TrimSpace(raw)
		if ref == "" {
			continue
		}
		ep, err := h.d.Models.Resolve(ctx, ref)
		if err != nil {
			pe, ok := refusal.As(err)
			if !ok {
				return nil, err
			}
			if pe.Code == refusal.NotFound || pe.Code == refusal.Invalid {
				return nil, refuse(refusal.Invalid, "There is no model %s: %s", ref, h.knownSentence(ctx))
			}
			return nil, refuse(refusal.Conflict, "%s cannot be compared now: %s", ref, pe.Message)
		}
		full := ep.Provider + ":" + ep.Model
		if slices.Contains(out, full) {
			return nil, refuse(refusal.Invalid, "%s is named twice; name each model once.", full)
		}
		out = append(out, full)
	}
	if len(out) < 2 {
		return nil, refuse(refusal.Invalid, "Choose at least two models to compare.")
	}
	return out, nil
}

// knownSentence names the models the turned-on providers offer.
func (h *Harness) knownSentence(ctx context.Context) string {
	known := h.Known(ctx)
	if len(known) == 0 {
		return "no provider turned on in Settings offers a model."
	}
	return "the known models are " + strings.Join(known, ", ") + "."
}

// Known are the models the turned-on providers offer, as provider:model,
// in the providers' order; a provider that does not answer offers none.
func (h *Harness) Known(ctx context.Context) []string {
	if h.d.Catalogue == nil {
		return nil
	}
	var known []string
	for _, p := range h.d.Catalogue.List() {
		if !p.On {
			continue
		}
		models, err := h.d.Catalogue.Models(ctx, p.Name)
		if err != nil {
			continue
		}
		for _, m := range models {
			known = append(known, p.Name+":"+m)
		}
	}
	return known
}

// compareTasks are the tasks a comparison runs: the evaluation's tasks of
// one turn.
func compareTasks() []EvalTask {
	var out []EvalTask
	for _, t := range EvalTasks {
		if !t.TwoTurns {
			out = append(out, t)
		}
	}
	return out
}

// conditionOf checks a comparison's condition, "" being the default.
func conditionOf(c string) (string, error) {
	if c == "" {
		return DefaultCompareCondition, nil
	}
	if !slices.Contains(Conditions, c) {
		return "", refuse(refusal.Invalid, "A comparison runs under one of %s, not %q.", strings.Join(Conditions, ", "), c)
	}
	return c, nil
}

// Compare runs the same tasks (the evaluation's tasks of one turn) under
// the same condition on each of o.Models, one model after the other, each
// task in a fresh workspace made from its template with its example and
// tried up to CompareAttempts times, and answers the scorecard: one row a
// model that finished every task, the best first. Each row is kept in
// the launcher's store as its model finishes, so a stopped comparison
// keeps the models that finished, and returns them with ErrStopped.
// Every refusal comes before any model is asked anything. progress, which
// may be nil, hears of each attempt and each model's row.
func (h *Harness) Compare(ctx context.Context, o CompareOptions, progress func(CompareProgress)) (Comparison, error) {
	if progress == nil {
		progress = func(CompareProgress) {}
	}
	condition, err := conditionOf(o.Condition)
	if err != nil {
		return Comparison{}, err
	}
	models, err := h.CheckModels(ctx, o.Models)
	if err != nil {
		return Comparison{}, err
	}
	if h.d.Scorecards == nil {
		return Comparison{}, errors.New("replay: a comparison needs the scorecards' store")
	}
	if err := h.d.Jail.Ready(); err != nil {
		return Comparison{}, err
	}
	var lessons corpus
	if condition == Learned {
		all, err := h.d.Lessons.List(ctx, knowledge.LessonQuery{Limit: knowledge.MaxLessonLimit})
		if err != nil {
			return Comparison{}, err
		}
		for _, l := range all {
			if l.Servable() {
				lessons = append(lessons, l)
			}
		}
	}
	started := h.d.Now()
	stamp, dir, err := h.evaluationDir(started)
	if err != nil {
		return Comparison{}, err
	}
	cmp := Comparison{StartedAt: started, Stamp: stamp, Dir: dir, Version: h.d.Version, Condition: condition, Models: models,
		Rows: []knowledge.Score{}, Attempts: []CompareAttempt{}}
	tasks := compareTasks()
	for _, t := range tasks {
		cmp.Tasks = append(cmp.Tasks, t.Key)
	}
	if err := cmp.keep(); err != nil {
		return cmp, err
	}
	if err := h.warm(ctx, dir); err != nil {
		if ctx.Err() != nil {
			cmp.Stopped = true
			return cmp, ErrStopped
		}
		return cmp, err
	}
	limits := h.d.Limits()
	limits.Steps, limits.Wall = StepCap, TurnLimit
	for i, ref := range models {
		if ctx.Err() != nil {
			cmp.Stopped = true
			break
		}
		ep, err := h.d.Models.Resolve(ctx, ref)
		if err != nil {
			if pe, ok := refusal.As(err); ok {
				err = refuse(refusal.Conflict, "%s could not be asked, so the comparison stopped before it: %s", ref, pe.Message)
			}
			_ = cmp.keep()
			return cmp, err
		}
		e := &evaluationRun{h: h, ev: &Evaluation{Dir: filepath.Join(dir, strconv.Itoa(i+1)), Stamp: stamp}, ep: ep, limits: limits, lessons: lessons}
		m := modelRun{e: e, cmp: &cmp, ref: ref, index: i + 1, condition: condition, progress: progress}
		row, err := m.run(ctx, tasks)
		if errors.Is(err, ErrStopped) {
			cmp.Stopped = true
			break
		}
		if err != nil {
			_ = cmp.keep()
			return cmp, err
		}
		if row.ID, err = h.d.Scorecards.Record(context.WithoutCancel(ctx), row); err != nil {
			return cmp, err
		}
		cmp.Rows = append(cmp.Rows, row)
		slices.SortStableFunc(cmp.Rows, func(a, b knowledge.Score) int {
			switch {
			case a.Better(b):
				return -1
			case b.Better(a):
				return 1
			}
			return 0
		})
		if err := cmp.keep(); err != nil {
			return cmp, err
		}
		progress(CompareProgress{Index: i + 1, Models: len(models), Model: ref, Done: true, Row: &row})
	}
	if err := cmp.keep(); err != nil {
		return cmp, err
	}
	if cmp.Stopped {
		return cmp, ErrStopped
	}
	return cmp, nil
}

// modelRun is one model of a comparison going through the tasks.
type modelRun struct {
	e         *evaluationRun
	cmp       *Comparison
	ref       string
	index     int
	condition string
	progress  func(CompareProgress)
}

// run runs every task on the model and answers its row. A run cut short
// answers ErrStopped.
func (m *modelRun) run(ctx context.Context, tasks []EvalTask) (knowledge.Score, error) {
	h := m.e.h
	started := h.d.Now()
	row := knowledge.Score{Model: m.ref, Stamp: m.cmp.Stamp, Condition: m.condition, TokensReported: true}
	for _, t := range tasks {
		if ctx.Err() != nil {
			return row, ErrStopped
		}
		if err := m.task(ctx, t, &row); err != nil {
			return row, err
		}
	}
	row.MeasuredAt = h.d.Now()
	row.WallMS = row.MeasuredAt.Sub(started).Milliseconds()
	return row, nil
}

// task tries task t on the model, up to CompareAttempts turns in one
// workspace, until what a turn left is working code, and adds it to row.
func (m *modelRun) task(ctx context.Context, t EvalTask, row *knowledge.Score) error {
	e, h := m.e, m.e.h
	dir := filepath.Join(e.ev.Dir, t.Key)
	stopped := func(err error) error {
		if ctx.Err() != nil {
			return ErrStopped
		}
		return err
	}
	a, err := h.makeWorkspace(ctx, dir, t.Key, t.Template, &t)
	if err != nil {
		return stopped(err)
	}
	cs, err := e.openStore(dir)
	if err != nil {
		return err
	}
	w := h.newWorld(a, dir, cs)
	defer func() {
		w.close()
		cs.store.Close()
	}()
	docs := documentsOf(m.condition)
	d, td := evalIntent(t)
	ex := t.example()
	last := ""
	before := 0 // the task's calls in the attempts before
	var final CompareAttempt
	firstEdit := 0
	for n := 1; n <= CompareAttempts; n++ {
		runID := fmt.Sprintf("compare-%s-%d-%s-a%d", m.cmp.Stamp, m.index, t.Key, n)
		m.progress(CompareProgress{Index: m.index, Models: len(m.cmp.Models), Model: m.ref, Task: t.Key, N: n, RunID: runID})
		bt := executor.BuilderTurn{Intent: d, Task: td, RunID: runID, Endpoint: e.ep, Answer: NoOneAnswersEvaluation, Documents: &docs, LastAttempt: last}
		out := e.executor(m.condition, cs, w).RunBuilderTurn(ctx, bt)
		switch {
		case out.Result.Ended == ai.EndAborted || ctx.Err() != nil:
			return ErrStopped
		case out.Result.Ended == ai.EndProvider:
			return refuse(refusal.Failed, "%s gave no answer in run %s of the comparison: %s The comparison stopped; the models that finished are kept.",
				m.ref, runID, out.Result.Sentence)
		}
		if _, err := keepTurn(dir, fmt.Sprintf("turn-a%d.json", n), runID, out); err != nil {
			return err
		}
		workflow, err := w.workflowCompleted(ctx, a.ID, ex, out)
		if err != nil || ctx.Err() != nil {
			return stopped(err)
		}
		if n > 1 && !out.Record.Built {
			// What it observes would be the judging of the attempt before.
			workflow = false
		}
		jctx := origin.WithIdentity(ctx, origin.Identity{RunID: runID, CallID: runID + ":judge", AppID: a.ID})
		working, why, err := w.judgeExample(jctx, a.ID, ex, "The task's example")
		if err != nil || ctx.Err() != nil {
			return stopped(err)
		}
		f := figures(out.Result.Calls)
		at := CompareAttempt{Model: m.ref, Task: t.Key, Attempt: n, RunID: runID, Dir: dir, Ended: string(out.Result.Ended),
			Calls: len(out.Result.Calls), WorkingCode: working, Workflow: workflow, Judgement: why, FirstEdit: f.FirstEdit,
			InputTokens: out.Result.Usage.Input, OutputTokens: out.Result.Usage.Output, TokensReported: !out.Result.Usage.Partial}
		for _, c := range out.Result.Calls {
			if c.FromText != "" {
				at.FromText++
			}
			if c.InvalidInput {
				at.InvalidInputs++
			}
		}
		if firstEdit == 0 && f.FirstEdit > 0 {
			firstEdit = before + f.FirstEdit
		}
		before += at.Calls
		row.Attempts++
		row.FromText += at.FromText
		row.InvalidInputs += at.InvalidInputs
		row.Tokens += at.InputTokens + at.OutputTokens
		row.TokensReported = row.TokensReported && at.TokensReported
		m.cmp.Attempts = append(m.cmp.Attempts, at)
		if err := m.cmp.keep(); err != nil {
			return err
		}
		m.progress(CompareProgress{Index: m.index, Models: len(m.cmp.Models), Model: m.ref, Task: t.Key, N: n, RunID: runID, Done: true, Attempt: &at})
		final = at
		if working {
			break
		}
		last = why
	}
	row.Tasks++
	if final.WorkingCode {
		row.WorkingCode++
	}
	if final.Workflow {
		row.Workflow++
	}
	if firstEdit > 0 {
		row.FirstEditTasks++
		row.FirstEditCalls += firstEdit
	}
	return nil
}

// keep writes the comparison's JSON into its folder.
func (c Comparison) keep() error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("replay: the comparison: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(c.Dir, comparisonFile), append(b, '\n')); err != nil {
		return fmt.Errorf("replay: the comparison: %w", err)
	}
	return nil
}
