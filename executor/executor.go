package executor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/ai/provider"
	"autoapp/executor/candidate"
	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/delivery"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
	"autoapp/intent/spend"
	"autoapp/intent/workspace"
	"autoapp/knowledge"
	"autoapp/migrations"
)

// Sentences the person sees when a run stops.
const (
	StoppedByPerson = "Stopped by the person."
	// LauncherStopped is the reason a shutdown gives the intent it stops.
	LauncherStopped = intent.LauncherStopped
	// MaxQuestions a builder may ask about one task.
	MaxQuestions = 2
)

func refuse(code refusal.Code, format string, args ...any) *refusal.Error {
	return refusal.Errorf(code, format, args...)
}

// Models resolves model references to endpoints; the provider registry.
type Models interface {
	Resolve(ctx context.Context, ref string) (provider.Endpoint, error)
	DefaultModel() string
}

// Apps is what the executor needs of the applications: where each one's
// folder and workspace are, its manifest, and the owner's own writes
// (*app.Service). A replay gives a run folder of its own instead.
type Apps interface {
	Get(ctx context.Context, id string) (app.App, error)
	Dir(id string) string
	WorkspaceDir(id string) string
	Manifest(id string) ([]byte, app.Manifest, refusal.Problems, error)
	SaveManifest(ctx context.Context, id string, raw []byte) error
	Activate(ctx context.Context, id, releaseID string) error
}

// Deps are what the executor works with.
type Deps struct {
	Backlog *intent.Service
	// Interventions are applied at each safe boundary of a run.
	Interventions *intent.Interventions
	// Usage gets each turn's usage row.
	Usage      UsageBook
	Apps       Apps
	Candidates *candidate.Service
	Models     Models
	Log        *slog.Logger
	Now        func() time.Time
	// Limits are the limits of each builder turn, read as it starts
	// (limits.json); nil, or a zero field, takes the AI layer's defaults.
	Limits func() ai.Limits
	// AdviceTimeout bounds the planning model's answer about a failed
	// task; zero is the idle limit in force (a question makes no tool call).
	AdviceTimeout time.Duration
	// Deliveries records what a done intent hands over; nil delivers nothing.
	Deliveries Deliveries
	// Requests holds each request's journal and the guided gate; nil when
	// intents are made without a request (fixtures).
	Requests Requests
	// Books are where each turn's record writes its knowledge (its
	// contexts row, the edits and cases, the servings, what the attempt
	// left); a nil book keeps nothing of its kind.
	Books Books
	// Distill, when set, is called after each builder turn: the cases the
	// turn resolved are asked about and their lessons kept.
	Distill func(ctx context.Context)
	// Lessons are matched for each builder turn and given to it as the
	// lessons:<appId> document, and read by its knowledge.show; nil gives
	// none.
	Lessons LessonBook
	// Caps answer each request's room under the intent's and the day's
	// caps, and refuse a run that could not spend anything; nil caps
	// nothing.
	Caps Caps
	// RunsAtOnce is how many intents may run at once, each of a
	// different application (Settings → Runs at once); a replay counts as
	// one. nil, or below 1, is one: seed 000's one run per launcher.
	RunsAtOnce func() int
	// TaskContext is the path of task-context.json, read for every
	// builder turn; "" is <root>/launcher/task-context.json beside the
	// applications' folder.
	TaskContext string
}

// LessonBook answers the lessons a turn is given and reads one
// (*knowledge.Lessons).
type LessonBook interface {
	Match(ctx context.Context, q knowledge.MatchQuery) ([]knowledge.Served, error)
	Get(ctx context.Context, id int64) (knowledge.Lesson, error)
}

// ServingBook records servings (*knowledge.Servings).
type ServingBook interface {
	Record(ctx context.Context, runID string, contextID int64, included, cut []knowledge.Served) error
	End(ctx context.Context, runID string) error
}

// AttemptBook keeps and reads what each attempt at a task left
// (*knowledge.Store).
type AttemptBook interface {
	RecordAttempt(ctx context.Context, runID, appID string, f knowledge.AttemptFacts) error
	RecordDiagnosis(ctx context.Context, runID, appID, diagnosis string) error
	AttemptFacts(ctx context.Context, runIDs []string) (map[string]knowledge.AttemptFacts, error)
}

// CaseBook appends an edit to the application's open cases.
type CaseBook interface {
	AppendEdit(ctx context.Context, appID, runID, summary string) error
}

// Deliveries records a done intent's artifacts.
type Deliveries interface {
	Deliver(ctx context.Context, in delivery.Input) (delivery.Delivery, error)
	Prepare(ctx context.Context, in delivery.Input) (delivery.Delivery, error)
	Undelivered(ctx context.Context) ([]int64, error)
}

// Requests is what the executor needs of the requests: the guided gate,
// and the journal entries a run writes.
type Requests interface {
	ForIntent(ctx context.Context, intentID int64) (request.State, error)
	Delivered(ctx context.Context, id int64) (request.State, error)
}

// Executor runs the intents of this server: at most Deps.RunsAtOnce at a
// time, never two of one application.
type Executor struct {
	d  Deps
	mu sync.Mutex
	// runs are the runs going, by intent.
	runs map[int64]*run
	// closed refuses new runs once the server shuts down.
	closed bool
	// actions are the owner's actions by application (see OwnerAction);
	// clicks counts them, to name each one's run.
	actions map[string]*action
	clicks  int
	// replay is the replay going, or nil: it holds the executor as a run
	// does (see StartReplay).
	replay *replaying
}

// run is one intent running.
type run struct {
	intentID int64
	appID    string
	cancel   context.CancelCauseFunc
	done     chan struct{}
	// answer, when set, is what a builder's question is answered with
	// while the turn goes on: a turn run on its own (RunBuilderTurn) has
	// no person to wait for.
	answer string
	// given, when set, is which documents a turn run on its own is given
	// in place of task-context.json.
	given *TurnDocuments
	// history and message, when set, are the earlier messages and the
	// message a turn run on its own is given in place of the task's
	// message alone; heard hears of each of its tool calls as it
	// completes.
	history []ai.Message
	message string
	heard   func(ai.Call)
	// ws is the application's workspace, opened once as the run starts
	// and closed as it ends: every turn, verdict and document of the run
	// reads and commits through it. nil when it could not be opened.
	ws *workspace.Workspace

	mu       sync.Mutex
	progress Progress
}

// Progress is what the intent's page shows while a run goes.
type Progress struct {
	IntentID int64
	TaskID   int64
	Slug     string
	// Turn is the turn of this run, from 1; Counted the attempts of this
	// run that counted towards the policy's limit. The limits are per run.
	Turn      int
	Counted   int
	RunID     string
	Started   time.Time
	Stage     string
	LastTool  string
	Passed    int
	Total     int
	Refusal   string
	Usage     ai.Usage
	HostBuild bool
	// LastEnded is why the task's last attempt did not complete, for a
	// retry; "" on its first.
	LastEnded string
	// Model is what the turn's model is doing now (see ai.Progress).
	Model ai.Progress
}

// errStopped and errShutdown are the causes a run's context is cancelled with.
var (
	errStopped  = errors.New(StoppedByPerson)
	errShutdown = errors.New(LauncherStopped)
)

// New builds the executor.
func New(d Deps) *Executor {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		panic("executor: Deps.Now, the clock, is required")
	}
	if d.Usage == nil {
		panic("executor: Deps.Usage, where each turn's usage row goes, is required")
	}
	if d.Limits == nil {
		d.Limits = func() ai.Limits { return ai.Limits{} }
	}
	if d.TaskContext == "" && d.Apps != nil {
		d.TaskContext = filepath.Join(filepath.Dir(d.Apps.Dir("")), "launcher", TaskContextFile)
	}
	return &Executor{d: d, runs: map[int64]*run{}}
}

// Run is one intent running, and its application.
type Run struct {
	IntentID int64
	AppID    string
}

// atOnce is how many runs may go at once now.
func (e *Executor) atOnce() int {
	if e.d.RunsAtOnce == nil {
		return 1
	}
	return max(e.d.RunsAtOnce(), 1)
}

// goingLocked are the runs going, in the order of their intents; the
// caller holds e.mu.
func (e *Executor) goingLocked() []Run {
	out := make([]Run, 0, len(e.runs))
	for _, r := range e.runs {
		out = append(out, Run{IntentID: r.intentID, AppID: r.appID})
	}
	slices.SortFunc(out, func(a, b Run) int { return cmp.Compare(a.IntentID, b.IntentID) })
	return out
}

// fullLocked is why no other run (or replay) can start now because as
// many go as Settings allows, or nil; the caller holds e.mu. what is "an
// intent" or "a replay", for the sentence.
func (e *Executor) fullLocked(what string) error {
	n := e.atOnce()
	going := len(e.runs)
	if e.replay != nil {
		going++
	}
	if going < n {
		return nil
	}
	if n == 1 {
		if e.replay != nil {
			return refuse(refusal.Conflict, "%s is going; %s can run once it ends.", e.replay.what, what)
		}
		r := e.goingLocked()[0]
		return refuse(refusal.Conflict, "Intent #%d is running; wait for it to end or stop it first.", r.IntentID)
	}
	var names []string
	for _, r := range e.goingLocked() {
		names = append(names, fmt.Sprintf("intent #%d of %s", r.IntentID, r.AppID))
	}
	if e.replay != nil {
		names = append(names, strings.ToLower(e.replay.what[:1])+e.replay.what[1:])
	}
	return refuse(refusal.Conflict, "%d runs are going (%s), as many as Settings → Runs at once allows; wait for one to end, stop one, or raise the number.",
		going, strings.Join(names, ", "))
}

// Start runs the intent, as Run in the Backlog asks, and returns at once.
// Each refusal is a sentence.
func (e *Executor) Start(ctx context.Context, intentID int64) error {
	d, err := e.d.Backlog.Get(ctx, intentID)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return refuse(refusal.Conflict, "The launcher is shutting down; nothing can start.")
	}
	if _, ok := e.runs[intentID]; ok {
		return refuse(refusal.Conflict, "Intent #%d is running already.", intentID)
	}
	// With one run at once, the sentence is seed 000's whichever
	// application runs; with more, the running application is named first.
	if e.atOnce() == 1 {
		if err := e.fullLocked("an intent"); err != nil {
			return err
		}
	}
	for _, r := range e.runs {
		if r.appID == d.AppID {
			return refuse(refusal.Conflict, "Intent #%d of %s is running; an application runs one intent at a time, so wait for it to end or stop it first.", r.intentID, r.appID)
		}
	}
	if err := e.fullLocked("an intent"); err != nil {
		return err
	}
	if a := e.actions[d.AppID]; a != nil && a.Going() {
		return candidate.AlreadyRunning(d.AppID)
	}
	if err := e.checkModels(ctx, d); err != nil {
		return err
	}
	// A run its cap or the day's would stop at its first request does not
	// start: the owner raises the cap first.
	if refused := CheckCaps(ctx, e.d.Caps, spend.Ask{IntentID: intentID, RunID: fmt.Sprintf("intent-%d-run", intentID), AppID: d.AppID,
		Kind: intent.KindBuilder, Model: e.d.Models.DefaultModel()}, e.d.Log); refused != "" {
		return refuse(refusal.Conflict, "%s", refused)
	}
	// A run builds and previews the engineer's code: never unconfined
	// unless the owner chose so.
	if err := e.d.Candidates.Ready(); err != nil {
		return err
	}
	// The guided gate and the request's run entry are checked and written
	// in the transaction that starts the run (the backlog's run hook).
	if err := e.d.Backlog.BeginRun(ctx, intentID); err != nil {
		return err
	}
	e.d.Log.Info("the run started", "intent", intentID, "app", d.AppID)
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	r := &run{intentID: intentID, appID: d.AppID, cancel: cancel, done: make(chan struct{})}
	r.progress.IntentID = intentID
	e.runs[intentID] = r
	// What the owner's last action said is the run's to change now.
	delete(e.actions, d.AppID)
	go func() {
		defer close(r.done)
		defer func() {
			e.mu.Lock()
			if e.runs[intentID] == r {
				delete(e.runs, intentID)
			}
			e.mu.Unlock()
		}()
		ws, err := workspace.Open(e.d.Apps.WorkspaceDir(d.AppID), e.d.Now)
		if err != nil {
			e.d.Log.Error("the workspace could not be opened for the run", "app", d.AppID, "err", err)
		} else {
			r.ws = ws
			defer ws.Close()
		}
		e.loop(runCtx, r)
		e.maintain(d.AppID, r.ws)
	}()
	return nil
}

// maintain lets git keep the application's repository in order once its
// run has ended, before another can start: never during a turn, where a
// commit would otherwise start it (see workspace.Maintain).
func (e *Executor) maintain(appID string, ws *workspace.Workspace) {
	if ws == nil {
		return
	}
	if err := ws.Maintain(context.Background()); err != nil {
		e.d.Log.Warn("git could not keep the repository in order after the run", "app", appID, "err", err)
	}
}

// checkModels refuses a run when some task would have no model at all.
func (e *Executor) checkModels(ctx context.Context, d intent.IntentDetail) error {
	settings := e.d.Models.DefaultModel()
	for _, t := range d.Tasks {
		switch t.Status {
		case intent.TaskCompleted, intent.TaskRemoved:
			continue
		}
		if m, _ := t.RunsOnWith(settings); m == "" {
			return refuse(refusal.Conflict, "No model is set up for %s: choose the Settings model in Settings.", t.Slug)
		}
	}
	return nil
}

// Stop aborts the turn in hand: its task is interrupted, the intent
// stopped by the person, and the preview left as it is. It returns once
// the run has stopped.
func (e *Executor) Stop(intentID int64) error {
	e.mu.Lock()
	r := e.runs[intentID]
	e.mu.Unlock()
	if r == nil {
		return refuse(refusal.Conflict, "Intent #%d is not running.", intentID)
	}
	r.cancel(errStopped)
	<-r.done
	return nil
}

// Shutdown interrupts the task in hand of every run and stops its intent,
// as stopping the launcher does, stops the owner's actions and the replay
// going (what finished of it is kept), and refuses new runs, actions and
// replays.
func (e *Executor) Shutdown() {
	e.mu.Lock()
	e.closed = true
	going := slices.Collect(maps.Values(e.runs))
	e.mu.Unlock()
	e.stopActions()
	e.stopReplay()
	for _, r := range going {
		r.cancel(errShutdown)
	}
	for _, r := range going {
		<-r.done
	}
}

// Running are the intents running, in the order of their numbers.
func (e *Executor) Running() []Run {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.goingLocked()
}

// RunningOf says which intent of the application runs, if one does.
func (e *Executor) RunningOf(appID string) (int64, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.runs {
		if r.appID == appID {
			return r.intentID, true
		}
	}
	return 0, false
}

// Busy refuses the owner's writes to an application while a run changes it.
func (e *Executor) Busy(appID string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.busyLocked(appID)
}

// Progress is the run's progress, when the intent runs.
func (e *Executor) Progress(intentID int64) (Progress, bool) {
	e.mu.Lock()
	r := e.runs[intentID]
	e.mu.Unlock()
	if r == nil {
		return Progress{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.progress, true
}

func (r *run) update(f func(p *Progress)) {
	r.mu.Lock()
	f(&r.progress)
	r.mu.Unlock()
}

// Answer is the person's answer to a task's question: the task is queued
// again; Run continues the intent.
func (e *Executor) Answer(ctx context.Context, taskID int64, answer string) error {
	return e.d.Backlog.AnswerTask(ctx, taskID, answer)
}

// loop runs the intent's tasks one at a time in run order until it is done
// or something stops it.
func (e *Executor) loop(ctx context.Context, r *run) {
	log := e.d.Log.With("intent", r.intentID, "app", r.appID)
	// Whatever ends the run, the interventions sent before it ended are
	// applied: an intent stopped or done keeps its state, recorded as held.
	defer e.boundary(context.WithoutCancel(ctx), r)
	for {
		if ctx.Err() != nil {
			e.stopIntent(r, stopCause(ctx))
			return
		}
		d, err := e.d.Backlog.Get(context.WithoutCancel(ctx), r.intentID)
		if err != nil {
			log.Error("the run could not read its intent", "err", err)
			e.stopIntent(r, "The run could not read its intent; the launcher's log has the detail.")
			return
		}
		if d.Status != intent.IntentRunning {
			// An intervention stopped it at a boundary inside the task.
			return
		}
		// A run whose every task completed is finished before anything
		// else: an intervention sent during the last turn finds it done
		// and is kept as applied to a finished run (the deferred boundary).
		next, waiting := nextTask(d)
		if next == nil && waiting == "" {
			if stop := e.finish(ctx, r, d); stop != "" {
				e.stopIntent(r, stop)
			}
			return
		}
		// A safe boundary: after the last verdict, before the next turn.
		// One that stops nothing changes nothing of the intent read above.
		if e.boundary(context.WithoutCancel(ctx), r) {
			return
		}
		if next == nil {
			e.stopIntent(r, waiting)
			return
		}
		if stop := e.runTask(ctx, r, d, *next); stop != "" {
			e.stopIntent(r, stop)
			return
		}
	}
}

// DeliverMissing delivers every done intent that has no delivery, as the
// run would have had the launcher not stopped between the two: the same
// export and the same journal entry, once. It answers how many it
// delivered; serve calls it as it starts.
func (e *Executor) DeliverMissing(ctx context.Context) (int, error) {
	if e.d.Deliveries == nil {
		return 0, nil
	}
	ids, err := e.d.Deliveries.Undelivered(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		d, err := e.d.Backlog.Get(ctx, id)
		if err != nil {
			return n, err
		}
		if e.deliver(ctx, d) {
			n++
		}
	}
	return n, nil
}

// finish marks the intent done, every task completed, and records its
// delivery in the same write. When that write fails the intent is not
// done: it stops with a sentence saying so, and Run finishes it.
func (e *Executor) finish(ctx context.Context, r *run, d intent.IntentDetail) string {
	ctx = context.WithoutCancel(ctx)
	var record func(ctx context.Context, w migrations.Within) error
	if e.d.Deliveries != nil {
		in, err := e.deliveryInput(ctx, d)
		var prepared delivery.Delivery
		if err == nil {
			prepared, err = e.d.Deliveries.Prepare(ctx, in)
		}
		if err != nil {
			e.d.Log.Error("the delivery could not be prepared", "intent", r.intentID, "err", err)
			return intent.UndeliveredReason(r.intentID)
		}
		record = func(ctx context.Context, w migrations.Within) error { return delivery.Record(ctx, w, prepared) }
	}
	if err := e.d.Backlog.Finish(ctx, r.intentID, "every task completed", record); err != nil {
		e.d.Log.Error("the intent could not be marked done and delivered", "intent", r.intentID, "err", err)
		return intent.UndeliveredReason(r.intentID)
	}
	e.d.Log.Info("the intent is done and its delivery made", "intent", r.intentID, "app", d.AppID)
	return ""
}

// nextTask is the first queued task in run order whose blockers completed;
// when none can run, waiting says why (or "" when every task is done).
func nextTask(d intent.IntentDetail) (*intent.BacklogTask, string) {
	var blocked []string
	for i, t := range d.Tasks {
		switch {
		case t.Status == intent.TaskInQueue && !t.Blocked:
			return &d.Tasks[i], ""
		case t.Status == intent.TaskInQueue:
			blocked = append(blocked, t.Slug)
		case t.Status != intent.TaskCompleted && t.Status != intent.TaskRemoved:
			blocked = append(blocked, t.Slug)
		}
	}
	if len(blocked) > 0 {
		return nil, "Nothing more can run: " + strings.Join(blocked, ", ") + " wait on tasks that did not complete."
	}
	return nil, ""
}

func stopCause(ctx context.Context) string {
	if errors.Is(context.Cause(ctx), errShutdown) {
		return LauncherStopped
	}
	return StoppedByPerson
}

// boundary applies the interventions the person sent the intent, as the
// executor does at every safe boundary: never while a model call is in
// flight. It answers whether they stopped the run.
func (e *Executor) boundary(ctx context.Context, r *run) bool {
	// What was applied holds even when its acknowledgement failed: the run
	// stops on it, and the next boundary (or start) acknowledges it.
	a, err := e.d.Interventions.ApplyInterventions(ctx, r.intentID)
	if err != nil {
		e.d.Log.Error("the interventions could not be applied or acknowledged", "intent", r.intentID, "err", err)
	}
	for _, rc := range a.Receipts {
		e.d.Log.Info("an intervention was applied", "intent", r.intentID, "kind", string(rc.Kind), "request", rc.ID, "order", rc.Order)
	}
	return a.Stopped
}

func (e *Executor) stopIntent(r *run, reason string) {
	ctx := context.Background()
	d, err := e.d.Backlog.Get(ctx, r.intentID)
	if err != nil || d.Status != intent.IntentRunning {
		return
	}
	if err := e.d.Backlog.MoveIntent(ctx, r.intentID, intent.IntentStopped, reason); err != nil {
		e.d.Log.Error("the intent could not be stopped", "intent", r.intentID, "err", err)
		return
	}
	e.d.Log.Info("the intent stopped", "intent", r.intentID, "app", d.AppID, "reason", reason)
}

// stageOf names what a tool call was doing, for the progress line.
func stageOf(tool string) string {
	switch tool {
	case "source.read", "source.list", "source.search", "spec.read":
		return "reading"
	case "source.edit", "source.change":
		return "editing"
	case "candidate.build":
		return "building"
	case "candidate.cycle":
		return "checking"
	case "intent.ask":
		return "asking"
	}
	return "working"
}

// headOf reads the revision of the run's workspace.
func headOf(ctx context.Context, ws *workspace.Workspace) (string, error) {
	if ws == nil {
		return "", errors.New("the workspace could not be opened for the run")
	}
	return ws.Head(ctx)
}

// request finds the request an intent answers, when there is one.
func (e *Executor) request(ctx context.Context, intentID int64) (request.State, bool, error) {
	if e.d.Requests == nil {
		return request.State{}, false, nil
	}
	st, err := e.d.Requests.ForIntent(ctx, intentID)
	var re *refusal.Error
	if errors.As(err, &re) && re.Code == refusal.NotFound {
		return request.State{}, false, nil
	}
	if err != nil {
		return request.State{}, false, err
	}
	return st, true, nil
}

// deliver exports a done intent's artifacts at the completing revision
// and records the delivery with its evidence, once, and the request's
// journal takes it: for a done intent a launcher from before done and
// delivery were one write left undelivered.
func (e *Executor) deliver(ctx context.Context, d intent.IntentDetail) bool {
	if e.d.Deliveries == nil {
		return false
	}
	log := e.d.Log.With("intent", d.ID)
	in, err := e.deliveryInput(ctx, d)
	if err != nil {
		log.Error("no delivery", "err", err)
		return false
	}
	if _, err := e.d.Deliveries.Deliver(ctx, in); err != nil {
		log.Error("the delivery could not be recorded", "err", err)
		return false
	}
	log.Info("the delivery was made", "app", d.AppID)
	if req, ok, err := e.request(ctx, d.ID); err == nil && ok {
		if _, err := e.d.Requests.Delivered(ctx, req.ID); err != nil {
			log.Error("the request's journal did not take the delivery", "err", err)
		}
	}
	return true
}

// deliveryInput is what the done intent hands over: the manifest's
// artifacts at the revision the last completed task was judged at, with the completed tasks' examples
// and the last checks as evidence.
func (e *Executor) deliveryInput(ctx context.Context, d intent.IntentDetail) (delivery.Input, error) {
	_, m, _, err := e.d.Apps.Manifest(d.AppID)
	if err != nil {
		return delivery.Input{}, fmt.Errorf("the manifest could not be read: %w", err)
	}
	o, err := e.d.Candidates.ObserveNow(ctx, d.AppID)
	if err != nil {
		return delivery.Input{}, fmt.Errorf("the candidate could not be read: %w", err)
	}
	in := delivery.Input{IntentID: d.ID, AppID: d.AppID, Revision: o.Head, Paths: m.Artifacts}
	if o.Build != nil && o.Build.Release != nil {
		in.ReleaseID = o.Build.Release.ID
	}
	done, err := e.d.Backlog.Get(ctx, d.ID)
	if err == nil {
		var last intent.Task
		for _, t := range done.Tasks {
			if t.Status == intent.TaskCompleted {
				in.Evidence.Tasks = append(in.Evidence.Tasks, delivery.TaskEvidence{Slug: t.Slug, ExampleHashes: t.ExampleHashes, Revision: t.RevAfter})
				if t.RevAfter != "" && !t.EndedAt.Before(last.EndedAt) {
					last = t.Task
				}
			}
		}
		// What is delivered is what was judged: the revision the last
		// completed task's verdict was made at, never a later HEAD (a
		// direct edit between the verdict and a delivery that had to wait).
		if last.RevAfter != "" {
			in.Revision = last.RevAfter
			if o.Head != "" && o.Head != last.RevAfter {
				in.Evidence.HeadAtDelivery = o.Head
			}
			if o.Build == nil || o.Build.Release == nil || o.Build.Release.Revision != last.RevAfter {
				in.ReleaseID = last.ReleaseID
			}
		}
	}
	if o.Checks != nil {
		for _, r := range o.Checks.Results {
			in.Evidence.Checks = append(in.Evidence.Checks, delivery.CheckEvidence{ID: r.ID, Hash: r.Hash, Passed: r.Passed})
		}
	}
	return in, nil
}
