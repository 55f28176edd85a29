// Package replay is the harness that tests a lesson's claim before a
// person confirms it: that knowing it would have avoided a failure. It
// runs the engineer again on a case's request, from the revision the
// failure was met at, several times with the lesson and several times
// without it (interleaved), and judges each run by what failed: a build
// case passes when the build runs the failing stage and no problem carries
// the case's signature; a check case when the case's own acceptance
// example, by its content hash and never the workspace's copy, passes on a
// preview of what the run left. Then the regression set: every other
// resolved case of the application whose lesson is confirmed, replayed
// once with the new lesson. The verdict is printed beside the two arms and
// never applied; confirming stays a person's.
//
// What is held still is named in a manifest, written before anything runs
// and kept as a blob in the launcher's knowledge store; every result row
// (knowledge.Replays, one per finished run) names it. A run that did not
// finish — stopped, or its provider failed — leaves no row.
//
// Each run is a fresh git clone of the application's workspace at that
// revision, <root>/replay/<caseId>/<arm>/<n>/workspace, built, previewed
// and checked by a candidate service of its own in the same sandbox as
// any build, and its turn is the executor's builder turn
// (executor.RunBuilderTurn) with the launcher's limits but for the step
// cap and the time a turn is given, which the manifest fixes. The run's
// turns, cases and log lines (source replay) go to a store of the case's
// own, <root>/replay/<caseId>/knowledge.sqlite, where nothing is
// distilled; the launcher's store gains only the manifest and the replays
// rows, never a serving, a case or a context, so a replay can never be
// what a learning query learns from. Run folders are kept for a person to
// look at; the oldest beyond KeepRuns per case go on the next replay.
//
// The corpus is frozen: the with arm is given the lesson under test on
// every turn and nothing else, the without arm no lesson at all, the
// regression arm the new lesson and the case's own confirmed one.
// Orientation and task evidence stay on in all. The run answers the
// engineer itself: the builder's tools ask no one — edits, builds and
// previews yes, and there is no activation tool — and a question for the
// person is answered that no one will answer, so the turn goes on.
//
// The same harness measures the knowledge path itself (Evaluate): four
// tasks on the built-in templates, each under four conditions — no
// documents, the orientation digest, the documents a task's first turn is
// given, and those with every lesson of the launcher's store — each run a
// builder turn in a fresh workspace made from the template, judged from
// the evaluation's own copy of the task's example, and measured by what
// its turn's calls, builds, time and tokens were.
//
// From the Knowledge page (Service) a replay goes on in the background,
// held by the executor as a run is: one run or one replay at a time per
// launcher, stopped when the launcher stops, with what finished kept.
package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"time"

	"autoapp/executor"
	"autoapp/executor/ai"
	"autoapp/executor/ai/provider"
	"autoapp/executor/build/gocache"
	"autoapp/executor/builder"
	"autoapp/executor/candidate"
	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/refusal"
	"autoapp/knowledge"
)

// The numbers of a replay (DESIGN.md, "Numbers the seeds lost").
const (
	// StepCap is the most model calls a replay's turn makes.
	StepCap = 60
	// TurnLimit is the time a replay's turn is given; a run that runs out
	// of it is judged by what it left.
	TurnLimit = 20 * time.Minute
	// DefaultRuns is how many runs each arm makes unless asked; MaxRuns
	// the most it may be asked for.
	DefaultRuns = 3
	MaxRuns     = 10
	// KeepRuns is how many run folders a case keeps; the oldest beyond it
	// are removed when the next replay starts.
	KeepRuns = 20
)

// NoOneAnswers is what a replay's builder is told when it asks the person
// something: the turn goes on.
const NoOneAnswers = "No one answers questions in a replay: decide with what you have; the replay judges what the turn leaves."

// ErrStopped is returned with what finished when the replay's context
// ended before every run did: those runs are kept, the one cut short
// leaves nothing.
var ErrStopped = errors.New("the replay was stopped")

// Deps are what the harness works with: the launcher's own services.
type Deps struct {
	// Root is the data folder; run folders and the cases' stores go under
	// <root>/replay.
	Root string
	// Knowledge is the launcher's store: the case turns' contexts are read
	// from it.
	Knowledge *knowledge.Store
	Replays   *knowledge.Replays
	Cases     *knowledge.Cases
	Lessons   *knowledge.Lessons
	// Backlog finds the task a case's turn worked on.
	Backlog *intent.Service
	// Usage records the turns' usage as any turn's.
	Usage  executor.UsageBook
	Apps   *app.Service
	Models executor.Models
	// Catalogue lists the models the providers offer, for a comparison
	// that names one no provider has.
	Catalogue Catalogue
	// Scorecards keeps each comparison's rows, one a model.
	Scorecards *knowledge.Scorecards
	// Jail starts every build stage and preview, as the owner chose.
	Jail candidate.Jail
	// GoCache serves the clones' Go builds the shared standard library;
	// nil leaves each to compile its own.
	GoCache *gocache.Shared
	// Limits are the launcher's turn limits (limits.json); the step cap
	// and the turn's time are the replay's own.
	Limits  func() ai.Limits
	Now     func() time.Time
	Version string
}

// Harness runs replays.
type Harness struct {
	d Deps
}

// New builds the harness.
func New(d Deps) *Harness {
	if d.Now == nil {
		panic("replay: Deps.Now, the clock, is required")
	}
	if d.Limits == nil {
		d.Limits = func() ai.Limits { return ai.Limits{} }
	}
	return &Harness{d: d}
}

// Options say what a replay tests.
type Options struct {
	// With is the lesson under test; 0 is the lesson distilled from the
	// case, and with none only the without arm runs.
	With int64
	// Runs is how many runs each arm makes; 0 is DefaultRuns.
	Runs int
}

// Progress is one run of a replay starting (Done false) or judged.
type Progress struct {
	// Index is the run's place among the replay's Total runs, from 1.
	Index, Total int
	CaseID       int64
	Arm          string
	// N numbers its folder, Dir, under the arm.
	N     int
	Dir   string
	RunID string
	Done  bool
	// Passed and Judgement are the run's, once Done.
	Passed    bool
	Judgement string
}

func refuse(code refusal.Code, format string, args ...any) error {
	return refusal.Errorf(code, format, args...)
}

// Replay replays case caseID as o says and answers what finished. Every
// refusal is a sentence; a replay stopped by ctx returns what finished
// with ErrStopped. progress, which may be nil, hears of each run as it
// starts and as it is judged.
func (h *Harness) Replay(ctx context.Context, caseID int64, o Options, progress func(Progress)) (Result, error) {
	b, err := h.begin(ctx, caseID, o)
	if err != nil {
		return Result{}, err
	}
	return h.run(ctx, b, progress)
}

// begun is a replay checked and planned, nothing of it written yet: what
// a replay refuses, begin has refused.
type begun struct {
	c      knowledge.Case
	lesson *knowledge.Lesson
	ep     provider.Endpoint
	m      Manifest
	plan   []step
}

// begin reads and checks what replaying case caseID as o says needs, and
// plans its runs; it writes nothing.
func (h *Harness) begin(ctx context.Context, caseID int64, o Options) (*begun, error) {
	runs := o.Runs
	switch {
	case runs == 0:
		runs = DefaultRuns
	case runs < 0 || runs > MaxRuns:
		return nil, refuse(refusal.Invalid, "Give between 1 and %d runs an arm.", MaxRuns)
	}
	c, err := h.d.Cases.Get(ctx, caseID)
	if err != nil {
		return nil, err
	}
	lesson, err := h.lessonUnderTest(ctx, c, o.With)
	if err != nil {
		return nil, err
	}
	if err := h.d.Jail.Ready(); err != nil {
		return nil, err
	}
	main, err := h.prepare(ctx, c)
	if err != nil {
		return nil, err
	}
	ref := c.Model
	if ref == "" {
		ref, _ = main.task.RunsOnWith(h.d.Models.DefaultModel())
	}
	if ref == "" {
		return nil, refuse(refusal.Conflict, "Case %d records no model and none is chosen in Settings: choose the Settings model first.", c.ID)
	}
	ep, err := h.d.Models.Resolve(ctx, ref)
	if err != nil {
		var pe *refusal.Error
		if errors.As(err, &pe) {
			return nil, refuse(refusal.Conflict, "The model case %d ran on, %s, cannot be used: %s", c.ID, ref, pe.Message)
		}
		return nil, err
	}

	b := &begun{c: c, lesson: lesson, ep: ep}
	b.m = Manifest{StartedAt: h.d.Now(), Version: h.d.Version, Case: main.entry, Runs: runs, StepCap: StepCap,
		TurnMinutes: int(TurnLimit / time.Minute), Model: ModelEntry{Ref: ref, Provider: ep.Provider, Model: ep.Model},
		Instructions: InstructionsEntry{Hash: builder.InstructionsHash(), Text: builder.Instructions}, Regression: []CaseEntry{}}
	var given []knowledge.Lesson
	if lesson != nil {
		b.m.Lesson = &LessonEntry{ID: lesson.ID, Status: lesson.Status, Origin: lesson.Origin, Text: lesson.Text}
		given = []knowledge.Lesson{*lesson}
	}
	for range runs {
		if lesson != nil {
			b.plan = append(b.plan, step{pc: main, arm: knowledge.ArmWith, given: given})
		}
		b.plan = append(b.plan, step{pc: main, arm: knowledge.ArmWithout})
	}
	if lesson == nil {
		return b, nil
	}
	set, err := h.d.Replays.RegressionSet(ctx, c.AppID, c.ID)
	if err != nil {
		return nil, err
	}
	for _, rc := range set {
		pc, err := h.prepare(ctx, rc.Case)
		if ke, ok := errors.AsType[*refusal.Error](err); ok {
			b.m.Skipped = append(b.m.Skipped, SkippedCase{ID: rc.Case.ID, Why: ke.Message})
			continue
		}
		if err != nil {
			return nil, err
		}
		ids := []int64{lesson.ID}
		lessons := []knowledge.Lesson{*lesson}
		if rc.Lesson.ID != lesson.ID {
			ids, lessons = append(ids, rc.Lesson.ID), append(lessons, rc.Lesson)
		}
		pc.entry.Given = ids
		b.m.Regression = append(b.m.Regression, pc.entry)
		b.plan = append(b.plan, step{pc: pc, arm: knowledge.ArmRegression, given: lessons})
	}
	return b, nil
}

// run keeps b's manifest, then runs its plan run by run until it is done
// or ctx ends.
func (h *Harness) run(ctx context.Context, b *begun, progress func(Progress)) (Result, error) {
	if progress == nil {
		progress = func(Progress) {}
	}
	// The manifest is kept before anything runs.
	text, err := json.MarshalIndent(b.m, "", "  ")
	if err != nil {
		return Result{}, fmt.Errorf("replay: the manifest: %w", err)
	}
	hash, err := h.d.Replays.KeepManifest(ctx, string(text))
	if err != nil {
		return Result{}, err
	}
	res := Result{ManifestHash: hash, Manifest: b.m}
	var lessonID int64
	if b.lesson != nil {
		lessonID = b.lesson.ID
	}
	limits := h.d.Limits()
	limits.Steps, limits.Wall = StepCap, TurnLimit
	r := &replayRun{h: h, hash: hash, of: b.c.ID, lesson: lessonID, ep: b.ep, limits: limits, total: len(b.plan),
		stores: map[int64]*caseStore{}, progress: progress}
	defer r.close()
	for i, st := range b.plan {
		if ctx.Err() != nil {
			res.Stopped = true
			break
		}
		run, err := r.run(ctx, i+1, st)
		if errors.Is(err, ErrStopped) {
			res.Stopped = true
			break
		}
		if err != nil {
			return res.tally(), err
		}
		res.Runs = append(res.Runs, run)
	}
	res = res.tally()
	if res.Stopped {
		return res, ErrStopped
	}
	return res, nil
}

// lessonUnderTest is lesson with, or the lesson distilled from c when
// with is 0; nil when c taught none.
func (h *Harness) lessonUnderTest(ctx context.Context, c knowledge.Case, with int64) (*knowledge.Lesson, error) {
	if with == 0 {
		l, ok, err := h.d.Replays.LessonOfCase(ctx, c.ID)
		if err != nil || !ok {
			return nil, err
		}
		return &l, nil
	}
	l, err := h.d.Lessons.Get(ctx, with)
	if err != nil {
		return nil, err
	}
	if !l.Servable() {
		return nil, refuse(refusal.Conflict, "Lesson %d is %s; only a provisional or confirmed lesson can be replayed.", l.ID, l.Status)
	}
	return &l, nil
}

// step is one run a replay plans: which case, which arm, which lessons.
type step struct {
	pc    *prepared
	arm   string
	given []knowledge.Lesson
}

// caseDir is where the runs of case id and its store are kept.
func (h *Harness) caseDir(id int64) string {
	return filepath.Join(h.d.Root, "replay", strconv.FormatInt(id, 10))
}

// caseStore is a case's own knowledge store, where its runs write.
type caseStore struct {
	store *knowledge.Store
	cases *knowledge.Cases
	log   *slog.Logger
	// servings, when set, keeps which lessons the store's turns were
	// given and what came of each: an evaluation's runs, whose hint
	// credit is read from them. A replay keeps none.
	servings *knowledge.Servings
}

// builds opens and resolves the store's cases from a run's builds and
// checks, as the launcher's own do.
func (cs *caseStore) builds(version string) executor.CaseRecorder {
	return executor.CaseRecorder{Cases: cs.cases, Servings: cs.servings, Version: version, Log: cs.log}
}

// books are where a replayed turn's record writes: the store's contexts
// rows and cases, the servings when the store keeps them, and no
// attempts.
func (cs *caseStore) books(version string) executor.Books {
	b := executor.Books{Turns: cs.store, Cases: cs.cases, Builds: cs.builds(version), Log: cs.log}
	if cs.servings != nil {
		b.Servings = cs.servings
	}
	return b
}

// openStore opens the store at path, a replay's case's
// (<root>/replay/<caseId>/knowledge.sqlite) or an evaluation's run's;
// every line logged there says where it came from: source replay or
// evaluate.
func (h *Harness) openStore(path, source string) (*caseStore, error) {
	ks, err := knowledge.Open(path, h.d.Now)
	if err != nil {
		return nil, err
	}
	log := slog.New(ks.Handler(slog.LevelInfo, slog.DiscardHandler)).With("source", source)
	return &caseStore{store: ks, cases: knowledge.NewCases(ks.DB(), h.d.Now), log: log}, nil
}
