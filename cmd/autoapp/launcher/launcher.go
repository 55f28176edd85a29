// Package launcher is the composition root: it opens a data folder's two
// stores and builds every service over them, once, with one clock and one
// log. `autoapp serve` runs what it builds, the commands that change the
// stores use it, and the tests boot the same program through it.
package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"autoapp/executor"
	"autoapp/executor/ai"
	"autoapp/executor/ai/provider"
	"autoapp/executor/build/gocache"
	"autoapp/executor/builder"
	"autoapp/executor/candidate"
	"autoapp/executor/chat"
	"autoapp/executor/gate"
	"autoapp/executor/overview"
	"autoapp/executor/preview"
	"autoapp/executor/replay"
	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/delivery"
	"autoapp/intent/notice"
	"autoapp/intent/owner"
	"autoapp/intent/request"
	"autoapp/intent/spend"
	"autoapp/intent/workspace"
	"autoapp/intent/workspace/sandbox"
	"autoapp/knowledge"
	"autoapp/migrations"
)

// Version is the launcher's version, set at build time with
// -ldflags "-X autoapp/cmd/autoapp/launcher.Version=…".
var Version = "dev"

// Options are what a caller may choose beyond the root, the clock and the
// log. The zero value is what `autoapp serve` runs.
type Options struct {
	// Limits, when set, replaces limits.json as the source of each turn's
	// limits (a test that needs limits finer than minutes).
	Limits func() ai.Limits
	// AdviceTimeout bounds the planning model's answer about a failed
	// task; zero is the idle limit in force.
	AdviceTimeout time.Duration
	// Quiet keeps the log out of the knowledge store's event log: the
	// given log alone hears it.
	Quiet bool
	// PasswordCost is argon2id's cost for the owner's password; zero is
	// OWASP's. Tests that sign in hundreds of times set a cheaper one.
	PasswordCost owner.HashParams
	// GoCache is the folder of the standard library every Go build
	// shares (gocache); "" is the user's, gocache.DefaultDir.
	GoCache string
}

// Launcher is every service over one data folder.
type Launcher struct {
	Root string
	Now  func() time.Time
	// Log writes to the knowledge store's event log and to the log New
	// was given.
	Log *slog.Logger

	Intents   *migrations.DB
	Knowledge *knowledge.Store

	Owners  *owner.Service
	Apps    *app.Service
	Sandbox *sandbox.Guard
	// GoCache is the standard library the host compiles once and every
	// Go build reads; nil when this user has no cache folder.
	GoCache    *gocache.Shared
	Limits     *ai.LimitsFile
	Previews   *preview.Manager
	Candidates *candidate.Service
	// Backlog, Interventions, ChatTurns, Attention and Usage are the
	// backlog's services over the intents store (intent.New).
	Backlog       *intent.Service
	Interventions *intent.Interventions
	ChatTurns     *intent.ChatTurns
	Attention     *intent.Attention
	Usage         *intent.UsageBook
	Providers     *provider.Registry
	Runs          *executor.Executor
	Deliveries    *delivery.Service
	Requests      *request.Service
	Chats         *chat.Service
	Gate          *gate.Gate
	Cases         *knowledge.Cases
	Lessons       *knowledge.Lessons
	Servings      *knowledge.Servings
	Spend         *spend.Book
	// Caps is the guard of every request to a model (the intent's and the
	// day's caps); it writes the usage rows.
	Caps *spend.Guard
	// Notices are what runs needed of the owner; Webhook sends them
	// (notifications.json) once serve listens, at Base's links.
	Notices  *intent.Notices
	Webhook  notice.Webhook
	Base     string
	Overview *overview.Service
	// Replays runs the engineer again on a case, with its lesson and
	// without, for the person who confirms it.
	Replays *replay.Harness
	// LessonReplays is replay as the Knowledge page offers it: a lesson's
	// evidence, and Replay this lesson in the background, held by the
	// executor as a run is (one run or one replay at a time).
	LessonReplays *replay.Service

	limits   func() ai.Limits
	closed   sync.Once
	closeErr error

	// The upkeep a start leaves until the server answers (startUpkeep),
	// stopped by Close.
	upkeep     sync.Once
	upkeepStop context.CancelFunc
	upkeepDone chan struct{}
}

// New makes sure root is a folder this process can write, opens and
// migrates both stores, and builds the services over them with the clock
// now. log hears everything the services log (nil discards); the event
// log records it too unless o.Quiet. Every error is one sentence. Close
// releases it all.
func New(root string, now func() time.Time, log *slog.Logger, o Options) (*Launcher, error) {
	if now == nil {
		return nil, fmt.Errorf("launcher: no clock given")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("the data folder %q is not a usable path: %v", root, err)
	}
	dir := filepath.Join(abs, "launcher")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the data folder %s: %v; choose another with --root or fix its permissions", dir, unwrapPath(err))
	}
	probe, err := os.CreateTemp(dir, ".write-probe-*")
	if err != nil {
		return nil, fmt.Errorf("cannot write to the data folder %s: %v; choose another with --root or fix its permissions", dir, unwrapPath(err))
	}
	probe.Close()
	os.Remove(probe.Name())

	// The machine's sandbox is probed by starting bubblewrap once, a few
	// milliseconds that need not wait for the stores: it runs while they
	// open, and build takes its answer.
	go sandbox.Probe()
	// The knowledge store opens first: it holds the log everything else writes to.
	ks, err := knowledge.Open(filepath.Join(dir, "knowledge.sqlite"), now)
	if err != nil {
		return nil, err
	}
	intents, err := migrations.Open(filepath.Join(dir, "intents.sqlite"), migrations.Intents)
	if err != nil {
		ks.Close()
		return nil, err
	}
	if !o.Quiet {
		log = slog.New(ks.Handler(slog.LevelInfo, log.Handler()))
	}
	l := &Launcher{Root: abs, Now: now, Log: log, Intents: intents, Knowledge: ks}
	if err := l.build(o); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// build wires the services.
func (l *Launcher) build(o Options) error {
	now, log := l.Now, l.Log
	l.Owners = owner.NewService(l.Intents, now, o.PasswordCost)
	l.Apps = app.NewService(l.Intents, l.Root, now, workspace.Repositories{Now: now})
	// Every build stage and preview command runs confined, or as the owner chose.
	l.Sandbox = sandbox.NewGuard(l.Root, sandbox.Probe())
	l.Previews = preview.NewManager(now, log, l.Sandbox)
	// Go builds read the standard library the host compiled once, and
	// write only their own cache.
	l.GoCache = openGoCache(o.GoCache, log)
	l.Cases = knowledge.NewCases(l.Knowledge.DB(), now)
	// Distilled lessons record the instructions and the version they were learned under.
	l.Lessons = knowledge.NewLessons(l.Knowledge.DB(), now, knowledge.Running{InstructionsHash: builder.InstructionsHash(), ServerVersion: Version})
	// One Servings for both: it remembers each run's first build and check.
	l.Servings = knowledge.NewServings(l.Knowledge.DB(), now)
	// The cases of every build and check: the owner's are heard by the
	// candidates' observer, each turn's through the turn's record.
	builds := executor.CaseRecorder{Cases: l.Cases, Servings: l.Servings, Version: Version, Log: log}
	l.Candidates = candidate.NewService(l.Apps, l.Previews, l.Sandbox, l.GoCache, now, builds)
	// What every turn's record writes to.
	books := executor.Books{Turns: l.Knowledge, Cases: l.Cases, Servings: l.Servings, Attempts: l.Knowledge, Builds: builds, Log: log}
	// The backlog's writes keep the request each intent answers in their
	// own transactions (request.Journal), and each committed move that
	// ends an attempt feeds the relationship index (linksAfter).
	backlog := intent.New(l.Intents, l.Root, now, intent.Collaborators{Journal: request.Journal{}, Moved: l.linksAfter})
	l.Backlog, l.Interventions, l.ChatTurns, l.Attention, l.Usage = backlog.Backlog, backlog.Interventions, backlog.Chats, backlog.Attention, backlog.Usage
	providers, err := provider.NewRegistry(l.Root, now, nil, log)
	if err != nil {
		return err
	}
	l.Providers = providers
	l.Deliveries = delivery.NewService(l.Intents, func(id string) (delivery.Workspace, error) {
		ws, err := workspace.Open(l.Apps.WorkspaceDir(id), now)
		if err != nil {
			return nil, err
		}
		return ws, nil
	}, now)
	l.Requests = request.NewService(l.Intents, l.Backlog, now)
	// The turn limits of limits.json, read as each turn starts.
	l.Limits = ai.NewLimitsFile(l.Root)
	l.limits = l.Limits.Limits
	if o.Limits != nil {
		l.limits = o.Limits
	}
	// What the turns cost, and the caps every request to a model asks: the
	// guard writes the usage rows, so a turn counts live until its row does.
	l.Spend = spend.New(l.Intents, l.Root, now)
	l.Caps = spend.NewGuard(l.Spend, l.Backlog, l.Usage, now)
	l.Runs = executor.New(executor.Deps{Backlog: l.Backlog, Interventions: l.Interventions, Usage: l.Caps, Caps: l.Caps, Apps: l.Apps, Candidates: l.Candidates, Models: providers, Limits: l.limits, RunsAtOnce: l.Limits.RunsAtOnce,
		Log: log, Now: now, Deliveries: l.Deliveries, Requests: l.Requests, Books: books,
		Lessons: l.Lessons, AdviceTimeout: o.AdviceTimeout,
		Distill: l.distill})
	// A chat turn may make one small change directly, or start a run
	// when the person says to go ahead: each asks the person first.
	l.Gate = gate.New(now)
	// A chat turn is told what a builder's turn is told: the orientation,
	// the evidence for its words and their lessons, and hints beside a
	// failed build; its servings are kept like a builder turn's.
	l.Chats = chat.NewService(chat.Deps{Backlog: l.Backlog, ChatTurns: l.ChatTurns, Interventions: l.Interventions, Usage: l.Caps, Caps: l.Caps, Requests: l.Requests, Models: providers, Apps: l.Apps, Log: log, Now: now, Limits: l.limits,
		EditTools: chat.GatedEditTools(chat.EditConfig{Gate: l.Gate, Candidates: l.Candidates, Apps: l.Apps,
			Busy: l.Runs.Busy, Hints: l.Lessons, Log: log, Now: now}),
		Start: l.Runs.Start, Gate: l.Gate, Books: books, Distill: l.distill,
		Candidates: l.Candidates, Lessons: l.Lessons,
		TaskContext: filepath.Join(l.Root, "launcher", executor.TaskContextFile),
		// When a chat turn ends, its request's journal takes what the engineer did.
		AfterTurn: func(ctx context.Context, appID string, requestID int64) {
			if requestID == 0 {
				return
			}
			if _, err := l.Requests.Sync(ctx, requestID); err != nil {
				log.Error("the request's journal could not follow the turn", "request", requestID, "err", err)
			}
		}})
	// A replay runs builder turns as a run does, each in a clone of its
	// own; the launcher's store keeps only its manifest and its rows.
	l.Replays = replay.New(replay.Deps{Root: l.Root, Knowledge: l.Knowledge, Replays: knowledge.NewReplays(l.Knowledge.DB(), now),
		Cases: l.Cases, Lessons: l.Lessons, Backlog: l.Backlog, Usage: l.Usage, Apps: l.Apps, Models: providers, Catalogue: providers,
		Scorecards: knowledge.NewScorecards(l.Knowledge.DB()), Jail: l.Sandbox, GoCache: l.GoCache,
		Limits: l.limits, Now: now, Version: Version})
	l.LessonReplays = replay.NewService(l.Replays, l.Runs, l.Servings, log)
	// What runs needed of the owner, sent through the webhook.
	l.Notices = intent.NewNotices(l.Intents, now)
	l.Webhook.Book = notice.NewBook(l.Root)
	l.Webhook.Sender = notice.NewSender(l.Notices, l.Webhook.Book, func() string { return l.Base }, now, log)
	// What needs the person and what an intent's page shows: reads only.
	l.Overview = overview.New(overview.Deps{Backlog: l.Backlog, Attention: l.Attention, Feedback: l.Interventions, Apps: l.Apps, Candidates: l.Candidates, Runs: l.Runs,
		Questions: l.Gate, Spend: l.Spend, ModelOf: overview.ModelOf(providers), Limits: l.limits, Now: now,
		Models: providers, Requests: l.Requests, Deliveries: l.Deliveries, Chats: l.Chats})
	return nil
}

// linksAfter takes an attempt's rows into the relationship index once the
// move that ends it has committed: the index is derived, and a failure
// leaves it to the next pass.
func (l *Launcher) linksAfter(ctx context.Context, m intent.TaskMoved) {
	if !m.AttemptEnded() {
		return
	}
	if _, err := knowledge.UpdateLinks(ctx, l.Knowledge.DB(), l.Backlog, m.RunID); err != nil {
		l.Log.Error("the knowledge links could not be updated", "run", m.RunID, "err", err)
	}
}

// Close stops what runs (the run or the replay, the chat turns, the
// previews) and closes the stores, the intents store first: the knowledge
// store keeps the log to the end. A second Close answers what the first
// did.
func (l *Launcher) Close() error {
	l.closed.Do(func() { l.closeErr = l.close() })
	return l.closeErr
}

func (l *Launcher) close() error {
	// Nothing starts the upkeep from now on, and the pass in hand ends
	// with its transaction rolled back before the stores close.
	l.upkeep.Do(func() {})
	if l.upkeepDone != nil {
		l.upkeepStop()
		<-l.upkeepDone
	}
	if l.Runs != nil {
		l.Runs.Shutdown()
	}
	if l.Chats != nil {
		l.Chats.Shutdown()
	}
	if l.Previews != nil {
		l.Previews.StopAll()
	}
	err2 := l.Intents.Close()
	err1 := l.Knowledge.Close()
	if err1 != nil {
		return err1
	}
	return err2
}

// Recover is what a start does before it serves: a restart interrupts and
// never resumes; interventions sent before the stop are applied; a done
// intent left undelivered is delivered; lessons are reviewed; chat turns
// cut short are ended. What can wait (the links index, retention) waits
// until the server answers: Serve starts it. An error that leaves the
// stores unsure is returned; the rest is logged.
func (l *Launcher) Recover(ctx context.Context) error {
	log := l.Log
	// A turn cut short may have left half a change, and the person decides
	// what happens next.
	if tasks, intents, err := l.Backlog.Recover(ctx); err != nil {
		return fmt.Errorf("recovering the runs the last launcher left: %v", err)
	} else if tasks+intents > 0 {
		log.Info("the launcher stopped with a run going", "tasks interrupted", tasks, "intents stopped", intents)
	}
	// Recovery is a safe boundary: interventions sent before the stop are
	// applied (each intent keeps the stop it is in, as held), and those
	// applied just before a crash are only acknowledged.
	if n, err := l.Interventions.ApplyAllInterventions(ctx); err != nil {
		return fmt.Errorf("applying the interventions the last launcher left: %v", err)
	} else if n > 0 {
		log.Info("interventions sent before the stop were applied", "applied", n)
	}
	if n, err := l.Runs.DeliverMissing(ctx); err != nil {
		log.Error("the deliveries the last launcher left undone could not be made", "err", err)
	} else if n > 0 {
		log.Info("done intents the last launcher left undelivered were delivered", "delivered", n)
	}
	// Lessons learned under other instructions or another version ask for review.
	if n, err := l.Lessons.Review(ctx, builder.InstructionsHash(), Version); err != nil {
		log.Error("the lessons could not be reviewed", "err", err)
	} else if n > 0 {
		log.Info("lessons need review", "flagged", n)
	}
	if _, err := l.Chats.Recover(ctx); err != nil {
		return fmt.Errorf("recovering the chat turns the last launcher left: %v", err)
	}
	return nil
}

// startUpkeep starts, in the background, what a start leaves until the
// server answers: the relationship index catches up on what the last
// launcher left (rebuilt whole only when an older version wrote it, which
// on a long history takes longer than the rest of the start), then
// retention runs, at once and hourly, in small batches. Neither holds a
// request: the index is read and written in transactions of its own, and
// retention takes the write lock one batch at a time. Every write is a
// transaction, so a process killed during either loses nothing: the next
// start rebuilds or trims what is left. Close stops it; a second call, or
// one after Close, starts nothing.
func (l *Launcher) startUpkeep() {
	l.upkeep.Do(func() {
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		l.upkeepStop, l.upkeepDone = stop, done
		// The webhook's outbox is sent from now on; Close waits for it.
		sending := make(chan struct{})
		go func() {
			defer close(sending)
			l.Webhook.Run(ctx)
		}()
		go func() {
			defer close(done)
			defer func() { <-sending }()
			log := l.Log
			u, err := knowledge.UpdateLinks(ctx, l.Knowledge.DB(), l.Backlog)
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				log.Error("the knowledge links could not be updated", "err", err)
			case u.Rebuilt:
				log.Info("the knowledge links index was rebuilt", "links", u.Written)
			}
			// Retention runs from now on, hourly, in small batches; the
			// knowledge store's Close stops it.
			l.Knowledge.StartRetention(knowledge.RetainEvery, func(r knowledge.Retained, err error) {
				if err != nil {
					log.Error("retention could not finish its pass", "err", err)
				}
			})
		}()
	})
}

// distill asks the Settings model about each case a turn resolved, one
// structured question each within a minute, and keeps what it says; a
// question that fails is asked again after a later turn.
func (l *Launcher) distill(ctx context.Context) {
	ref := l.Providers.DefaultModel()
	if ref == "" {
		return
	}
	ask := func(ctx context.Context, instructions, message string, schema json.RawMessage, out any) error {
		// The day's cap holds distillation back too: the question waits
		// for a later turn.
		if capped := executor.CheckCaps(ctx, l.Caps, spend.Ask{RunID: "distill", Kind: intent.KindDistill, Model: ref,
			Input: int64(len(instructions)+len(message)) / 3}, l.Log); capped != "" {
			return errors.New(capped)
		}
		ep, err := l.Providers.Resolve(ctx, ref)
		if err != nil {
			return err
		}
		u, err := ai.Ask(ctx, l.Now, ai.Endpoint{Provider: ep.Provider, BaseURL: ep.BaseURL, APIKey: ep.APIKey, Model: ep.Model, ContextTokens: ep.ContextTokens},
			instructions, message, schema, knowledge.DistillTimeout, out)
		if rerr := l.Caps.RecordUsage(ctx, intent.Usage{Kind: intent.KindDistill, Model: ref,
			Input: u.Input, Output: u.Output, Partial: err != nil || u.Partial}); rerr != nil {
			l.Log.Error("usage row not written", "err", rerr)
		}
		return err
	}
	if _, err := l.Lessons.DistillQueued(ctx, ask, knowledge.DistillMaxTries); err != nil {
		l.Log.Warn("a case could not be distilled this time", "err", err)
	}
}

// unwrapPath drops the path an *os.PathError repeats.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// openGoCache is the shared standard library in dir, or in the user's
// cache folder when dir is ""; nil, said in the log, when there is none,
// and each application's build then compiles its own.
func openGoCache(dir string, log *slog.Logger) *gocache.Shared {
	if dir == "" {
		d, err := gocache.DefaultDir()
		if err != nil {
			log.Warn("no shared Go standard library: each application's first build compiles its own", "err", err)
			return nil
		}
		dir = d
	}
	c, err := gocache.Open(dir)
	if err != nil {
		log.Warn("no shared Go standard library: each application's first build compiles its own", "err", err)
		return nil
	}
	return c
}
