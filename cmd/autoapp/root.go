package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"autoapp/executor"
	"autoapp/executor/ai"
	"autoapp/executor/ai/provider"
	"autoapp/executor/builder"
	"autoapp/executor/candidate"
	"autoapp/executor/chat"
	"autoapp/executor/gate"
	"autoapp/executor/overview"
	"autoapp/executor/preview"
	"autoapp/executor/sandbox"
	"autoapp/executor/workspace"
	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/delivery"
	"autoapp/intent/owner"
	"autoapp/intent/request"
	"autoapp/intent/spend"
	"autoapp/knowledge"
	"autoapp/migrations"
)

// stores are the two databases under <root>/launcher.
type stores struct {
	root      string
	intents   *migrations.DB
	knowledge *knowledge.Store
}

// openRoot makes sure root is a folder this process can write, then opens
// and migrates both stores. Every error is one sentence.
func openRoot(root string) (*stores, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("the data folder %q is not a usable path: %v", root, err)
	}
	launcher := filepath.Join(abs, "launcher")
	if err := os.MkdirAll(launcher, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the data folder %s: %v; choose another with --root or fix its permissions", launcher, unwrapPath(err))
	}
	probe, err := os.CreateTemp(launcher, ".write-probe-*")
	if err != nil {
		return nil, fmt.Errorf("cannot write to the data folder %s: %v; choose another with --root or fix its permissions", launcher, unwrapPath(err))
	}
	probe.Close()
	os.Remove(probe.Name())

	// The knowledge store opens first: it holds the log everything else writes to.
	ks, err := knowledge.Open(filepath.Join(launcher, "knowledge.sqlite"), time.Now)
	if err != nil {
		return nil, err
	}
	intents, err := migrations.Open(filepath.Join(launcher, "intents.sqlite"), migrations.Intents)
	if err != nil {
		ks.Close()
		return nil, err
	}
	return &stores{root: abs, intents: intents, knowledge: ks}, nil
}

// requireData refuses a data folder that holds no Autoapp data, or whose
// stores are reached through a symbolic link, before anything is created
// there: a command that only reads, given a mistyped --root, must not make
// and migrate a new data folder.
func requireData(root string) error {
	abs, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("the data folder %q is not a usable path: %v", root, err)
	}
	launcher := filepath.Join(abs, "launcher")
	for _, p := range []string{launcher, filepath.Join(launcher, "intents.sqlite"), filepath.Join(launcher, "knowledge.sqlite")} {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			return fmt.Errorf("There is no Autoapp data in %s.", abs)
		case fi.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link; Autoapp reads only the real files of its data folder.", p)
		}
	}
	return nil
}

func (s *stores) close() error {
	// The intents store first: the knowledge store keeps the log to the end.
	err2 := s.intents.Close()
	err1 := s.knowledge.Close()
	if err1 != nil {
		return err1
	}
	return err2
}

func (s *stores) owners() *owner.Service {
	return owner.NewService(s.intents, time.Now)
}

// launcher is every service `autoapp serve` runs, built over the stores.
type launcher struct {
	owners     *owner.Service
	apps       *app.Service
	sandbox    *sandbox.Guard
	limits     *ai.LimitsFile
	previews   *preview.Manager
	candidates *candidate.Service
	backlog    *intent.Service
	providers  *provider.Registry
	runs       *executor.Executor
	deliveries *delivery.Service
	requests   *request.Service
	chats      *chat.Service
	gate       *gate.Gate
	cases      *knowledge.Cases
	lessons    *knowledge.Lessons
	servings   *knowledge.Servings
	spend      *spend.Book
	overview   *overview.Service
}

func (s *stores) launcher(log *slog.Logger) (*launcher, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &launcher{owners: s.owners(), apps: app.NewService(s.intents, s.root, time.Now)}
	// Every build stage and preview command runs confined, or as the owner chose.
	l.sandbox = sandbox.NewGuard(s.root, sandbox.Probe())
	l.previews = preview.NewManager(time.Now, log, l.sandbox)
	l.candidates = candidate.NewService(l.apps, l.previews, l.sandbox, time.Now)
	l.cases = knowledge.NewCases(s.knowledge.DB(), time.Now)
	l.lessons = knowledge.NewLessons(s.knowledge.DB(), time.Now)
	// Distilled lessons record the instructions and the version they were learned under.
	l.lessons.SetRunning(builder.InstructionsHash(), version)
	// One Servings for both: it remembers each run's first build and check.
	l.servings = knowledge.NewServings(s.knowledge.DB(), time.Now)
	l.candidates.SetObserver(executor.CaseRecorder{Cases: l.cases, Servings: l.servings, Candidates: l.candidates, Version: version, Log: log})
	l.backlog = intent.NewService(s.intents, s.root, time.Now)
	// The relationship index is derived: it follows each attempt, once the
	// move that ends it has committed.
	l.backlog.OnTaskMoved(func(ctx context.Context, m intent.TaskMoved) {
		if !m.AttemptEnded() {
			return
		}
		if _, err := knowledge.RebuildLinks(ctx, s.knowledge.DB(), l.backlog); err != nil {
			log.Error("the knowledge links could not be rebuilt", "run", m.RunID, "err", err)
		}
	})
	providers, err := provider.NewRegistry(s.root, time.Now, nil, log)
	if err != nil {
		return nil, err
	}
	l.providers = providers
	l.deliveries = delivery.NewService(s.intents, func(id string) (*workspace.Workspace, error) {
		return workspace.Open(l.apps.WorkspaceDir(id), time.Now)
	}, time.Now)
	l.requests = request.NewService(s.intents, l.backlog, time.Now)
	// Applied feedback voids the guided approval, in the same transaction.
	l.backlog.OnFeedback(l.requests.VoidApproval)
	// The turn limits of limits.json, read as each turn starts.
	l.limits = ai.NewLimitsFile(s.root)
	l.runs = executor.New(executor.Deps{Backlog: l.backlog, Apps: l.apps, Candidates: l.candidates, Models: providers, Limits: l.limits.Limits,
		Log: log, Now: time.Now, Deliveries: l.deliveries, Requests: l.requests, Turns: s.knowledge, Attempts: s.knowledge,
		Lessons: l.lessons, Servings: l.servings, Cases: l.cases,
		Distill: func(ctx context.Context) { distill(ctx, l, log) }})
	// A chat turn may make one small change directly, or start a run
	// when the person says to go ahead: each asks the person first.
	l.gate = gate.New(time.Now)
	l.chats = chat.NewService(chat.Deps{Backlog: l.backlog, Models: providers, Apps: l.apps, Log: log, Now: time.Now, Limits: l.limits.Limits,
		EditTools: chat.GatedEditTools(chat.EditConfig{Gate: l.gate, Candidates: l.candidates, Apps: l.apps,
			Busy: l.runs.Busy, Cases: l.cases, Log: log, Now: time.Now}),
		Start: l.runs.Start, Gate: l.gate, Turns: s.knowledge,
		// When a chat turn ends, its request's journal takes what the engineer did.
		AfterTurn: func(ctx context.Context, appID string, requestID int64) {
			if requestID == 0 {
				return
			}
			if _, err := l.requests.Sync(ctx, requestID); err != nil {
				log.Error("the request's journal could not follow the turn", "request", requestID, "err", err)
			}
		}})
	// What the turns cost and what needs the person: reads only.
	l.spend = spend.New(s.intents, s.root, time.Now)
	l.overview = overview.New(overview.Deps{Backlog: l.backlog, Apps: l.apps, Candidates: l.candidates, Runs: l.runs,
		Questions: l.gate, Spend: l.spend, ModelOf: overview.ModelOf(providers), Limits: l.limits.Limits, Now: time.Now})
	return l, nil
}

// unwrapPath drops the path an *os.PathError repeats.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// distill asks the Settings model about each case a turn resolved, one
// structured question each within a minute, and keeps what it says; a
// question that fails is asked again after a later turn.
func distill(ctx context.Context, l *launcher, log *slog.Logger) {
	ref := l.providers.DefaultModel()
	if ref == "" {
		return
	}
	ask := func(ctx context.Context, instructions, message string, schema json.RawMessage, out any) error {
		ep, err := l.providers.Resolve(ctx, ref)
		if err != nil {
			return err
		}
		u, err := ai.Ask(ctx, ai.Endpoint{Provider: ep.Provider, BaseURL: ep.BaseURL, APIKey: ep.APIKey, Model: ep.Model, ContextTokens: ep.ContextTokens},
			instructions, message, schema, knowledge.DistillTimeout, out)
		if rerr := l.backlog.RecordUsage(ctx, intent.Usage{Kind: intent.KindDistill, Model: ref,
			Input: u.Input, Output: u.Output, Partial: err != nil || u.Partial}); rerr != nil {
			log.Error("usage row not written", "err", rerr)
		}
		return err
	}
	if _, err := l.lessons.DistillQueued(ctx, ask, knowledge.DistillMaxTries); err != nil {
		log.Warn("a case could not be distilled this time", "err", err)
	}
}
