// Package handlers is the Fiber app: the routes, the middleware that guards
// them (security headers, CSRF, the owner's session) and thin handlers that
// parse a request, call one service method and render one component.
package handlers

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"

	"autoapp/executor"
	"autoapp/executor/candidate"
	"autoapp/intent/app"
	"autoapp/intent/owner"
	"autoapp/intent/refusal"
)

// Owners is what the handlers need of the owner service.
type Owners interface {
	Exists(ctx context.Context) (bool, error)
	Create(ctx context.Context, name, password, again string) error
	SignIn(ctx context.Context, name, password string, from owner.Client) (owner.SignedIn, error)
	Session(ctx context.Context, id string) (owner.Owner, error)
	SignOut(ctx context.Context, id string) error
}

// Apps is what the handlers need of the applications.
type Apps interface {
	List(ctx context.Context) ([]app.App, error)
	Get(ctx context.Context, id string) (app.App, error)
	CreateFromTemplate(ctx context.Context, id, name, template string) (app.App, error)
	Register(ctx context.Context, id, name, source string) (app.App, error)
	Manifest(id string) ([]byte, app.Manifest, refusal.Problems, error)
	Releases(ctx context.Context, id string, limit int) ([]app.Release, error)
	Selected(ctx context.Context) (string, error)
	Select(ctx context.Context, id string) error
	WorkspaceDir(id string) string
}

// Candidates is what the handlers read of the build, preview and checks.
type Candidates interface {
	Observe(ctx context.Context, appID string) (candidate.Observed, error)
	PreviewURL(appID string) (string, bool)
	RunDiffs(ctx context.Context, appID string, runIDs []string) ([]string, error)
}

// Actions are the owner's actions on an application's page, each refused
// while a run changes the application, and a run while the owner's build
// goes (*executor.Executor). Build and check and Start preview return at
// once and go on in the background.
type Actions interface {
	BuildAndCheck(ctx context.Context, appID string) error
	StartPreview(ctx context.Context, appID string) error
	StopPreview(ctx context.Context, appID string) error
	SaveManifest(ctx context.Context, appID string, raw []byte) error
	Activate(ctx context.Context, appID, releaseID string) error
	// OwnerAction is the build and check or preview start going, or the
	// last that ended.
	OwnerAction(appID string) (executor.OwnerAction, bool)
}

// Deps are the services the routes call.
type Deps struct {
	// Hosts are the "host:port" names this server answers at (see
	// CanonicalHost); a request for any other Host is refused with 421.
	// The first is the one the refusal names. New panics when the list is
	// empty or a name has no port: no names must not mean every name.
	Hosts []string
	// TrustedProxies are the addresses (IPs or ranges, see
	// ParseTrustedProxy) of the proxies in front of this server whose
	// X-Forwarded-Host, -Proto and -For are believed. None are unless
	// named; New panics on one it cannot read.
	TrustedProxies []string

	Owners     Owners
	Apps       Apps
	Candidates Candidates
	Actions    Actions
	Backlog    Backlog
	// Attention and Interventions are the backlog's reads of its pages and
	// the owner's interventions.
	Attention     Attention
	Interventions Interventions
	Providers     Providers
	Runs          Runs
	Deliveries    Deliveries
	Chats         Chats
	Requests      Requests
	Gate          Gate
	Knowledge     Knowledge
	Cases         Cases
	Lessons       Lessons
	Servings      Servings
	// LessonReplays reads a lesson's page and replays it; nil shows no
	// lesson's page.
	LessonReplays LessonReplays
	// Overview answers what needs the person and what the turns cost;
	// nil shows neither.
	Overview Overview
	// IntentPages reads what an intent's page shows; required.
	IntentPages IntentPages
	// Prices are prices.json, edited in Settings; nil offers no form.
	Prices Prices
	// Sandbox is how builds and previews run, and the owner's choice.
	Sandbox Sandbox
	// Limits are the turn limits of limits.json, set in Settings.
	Limits Limits
	// Now is the clock the pages tell elapsed times by; required.
	Now func() time.Time
	// Quit stops the launcher gracefully, as SIGTERM does.
	Quit func()
	Log  *slog.Logger
	// Version is shown by /healthz.
	Version string
}

// Handlers holds the dependencies of every route.
type Handlers struct {
	owners        Owners
	apps          Apps
	candidates    Candidates
	actions       Actions
	backlog       Backlog
	attention     Attention
	interventions Interventions
	providers     Providers
	runs          Runs
	deliveries    Deliveries
	chats         Chats
	requests      Requests
	gate          Gate
	knowledge     Knowledge
	cases         Cases
	lessons       Lessons
	servings      Servings
	// lessonReplays reads a lesson's page, with its replay.
	lessonReplays LessonReplays
	overview      Overview
	prices        Prices
	sandbox       Sandbox
	limits        Limits
	now           func() time.Time
	quit          func()
	log           *slog.Logger
	version       string
	// intentPages reads an intent's page in one call.
	intentPages IntentPages
	// ownerExists is remembered once true: the owner is never deleted.
	ownerExists atomic.Bool
}

// New builds the Fiber app with every route registered.
func New(d Deps) *fiber.App {
	h := &Handlers{owners: d.Owners, apps: d.Apps, candidates: d.Candidates, actions: d.Actions, backlog: d.Backlog, attention: d.Attention, interventions: d.Interventions, providers: d.Providers, runs: d.Runs, deliveries: d.Deliveries, chats: d.Chats, requests: d.Requests, gate: d.Gate, knowledge: d.Knowledge, cases: d.Cases, lessons: d.Lessons, servings: d.Servings, lessonReplays: d.LessonReplays, overview: d.Overview, intentPages: d.IntentPages, prices: d.Prices, sandbox: d.Sandbox, limits: d.Limits, now: d.Now, quit: d.Quit, log: d.Log, version: d.Version}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.now == nil {
		panic("handlers: Deps.Now, the clock, is required")
	}
	if h.intentPages == nil {
		panic("handlers: Deps.IntentPages, the intent page's read, is required")
	}
	app := fiber.New(fiber.Config{
		AppName:               "autoapp",
		DisableStartupMessage: true,
		ErrorHandler:          h.errorHandler,
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          60 * time.Second,
		IdleTimeout:           120 * time.Second,
		BodyLimit:             4 << 20,
		// Values from a request are kept past it (an application id keys
		// the running previews), so they must not share fasthttp's buffers.
		Immutable: true,
		// With no TrustedProxies, Fiber's Hostname, Protocol and IP believe
		// nobody's forwarded headers: the Host check reads them, from the
		// proxies named, into the request's front.
		EnableTrustedProxyCheck: true,
	})
	// Before anything else: a request for another name gets nothing else.
	app.Use(newHostCheck(d.Hosts, newProxies(d.TrustedProxies)).handle)
	// A handler that panics answers 500 with a sentence; the server stays up.
	app.Use(recover.New())
	app.Use(securityHeaders)
	app.Get("/healthz", h.healthz)
	app.Get("/static/:name", staticFile)
	app.Get("/favicon.ico", favicon)
	app.Use(h.csrf)
	app.Use(h.session)

	app.Get("/setup", h.setupForm)
	app.Post("/setup", h.setup)
	app.Get("/signin", h.signInForm)
	app.Post("/signin", h.signIn)
	app.Post("/signout", h.signOut)

	app.Get("/", func(c *fiber.Ctx) error { return c.Redirect("/backlog", fiber.StatusSeeOther) })
	app.Get("/backlog", h.backlogList)
	app.Get("/board", h.boardPage)
	app.Get("/board/live", h.boardLive)
	app.Get("/overview", h.overviewPage)
	app.Get("/overview/live", h.overviewLive)
	app.Post("/backlog/models", h.backlogModels)
	app.Get("/backlog/intents/:id", h.intentPage)
	app.Get("/backlog/intents/:id/live", h.intentLive)
	app.Post("/backlog/intents/:id/withdraw", h.intentWithdraw)
	app.Post("/backlog/intents/:id/run", h.intentRun)
	app.Post("/backlog/intents/:id/stop", h.intentStop)
	app.Post("/backlog/intents/:id/interventions", h.intentIntervene)
	app.Get("/backlog/intents/:id/delivery/artifact", h.deliveryArtifact)
	app.Get("/backlog/intents/:id/delivery/workspace.tar.gz", h.deliveryArchive)
	app.Post("/backlog/tasks/:id/answer", h.taskAnswer)
	app.Get("/backlog/tasks/:id", h.taskPage)
	app.Post("/backlog/tasks/:id/model", h.taskModel)
	app.Post("/backlog/tasks/:id/remove", h.taskRemove)
	app.Get("/request", h.requestPage)
	app.Get("/request/live", h.requestLive)
	app.Post("/request", h.requestSend)
	app.Post("/request/answer", h.requestAnswer)
	app.Post("/request/select", h.requestSelect)
	app.Post("/request/questions/:qid/approve", h.questionApprove)
	app.Post("/request/questions/:qid/deny", h.questionDeny)
	app.Post("/backlog/intents/:id/approve", h.intentApprove)
	app.Post("/backlog/intents/:id/approval/withdraw", h.intentWithdrawApproval)
	app.Post("/backlog/intents/:id/mode", h.intentMode)
	app.Post("/request/mode", h.requestMode)
	app.Get("/knowledge", h.knowledgeLog)
	app.Get("/knowledge/log", h.knowledgeLogLines)
	app.Get("/knowledge/turns", h.knowledgeTurns)
	app.Get("/knowledge/turns/:id", h.knowledgeTurn)
	app.Get("/knowledge/cases", h.knowledgeCases)
	app.Get("/knowledge/cases/:id", h.knowledgeCase)
	app.Get("/knowledge/lessons", h.knowledgeLessons)
	app.Post("/knowledge/lessons", h.lessonNew)
	app.Get("/knowledge/lessons/:id", h.lessonPage)
	app.Get("/knowledge/lessons/:id/replay", h.lessonReplayLive)
	app.Post("/knowledge/lessons/:id/replay", h.lessonReplay)
	app.Post("/knowledge/lessons/:id/confirm", h.lessonConfirm)
	app.Post("/knowledge/lessons/:id/retire", h.lessonRetire)
	app.Post("/knowledge/lessons/:id/replace", h.lessonReplace)
	app.Get("/settings", h.settingsPage)
	app.Post("/settings/providers", h.providerSave)
	app.Post("/settings/providers/:name/on", h.providerOn)
	app.Post("/settings/providers/:name/test", h.providerTest)
	app.Post("/settings/providers/:name/remove", h.providerRemove)
	app.Post("/settings/model", h.settingsModel)
	app.Post("/settings/tiers", h.settingsTiers)
	app.Post("/settings/prices", h.pricesSave)
	app.Post("/settings/sandbox", h.sandboxSave)
	app.Post("/settings/limits", h.limitsSave)
	app.Post("/quit", h.quitLauncher)

	app.Get("/apps", h.appList)
	app.Post("/apps", h.appCreate)
	app.Post("/apps/register", h.appRegister)
	app.Get("/apps/:id", h.appPage)
	app.Post("/apps/:id/select", h.appSelect)
	app.Get("/apps/:id/live", h.appLive)
	app.Post("/apps/:id/manifest", h.appManifest)
	app.Post("/apps/:id/cycle", h.appCycle)
	app.Post("/apps/:id/preview/start", h.appPreviewStart)
	app.Post("/apps/:id/preview/stop", h.appPreviewStop)
	app.Post("/apps/:id/activate", h.appActivate)
	app.Use(func(c *fiber.Ctx) error {
		return fiber.NewError(fiber.StatusNotFound, "There is no page at this address.")
	})
	return app
}

func (h *Handlers) healthz(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(fiber.Map{"ok": true, "version": h.version})
}

// errorHandler turns every error into a status and a sentence: a refusal of
// the owner service keeps its sentence, anything else is logged and told as
// a plain failure.
func (h *Handlers) errorHandler(c *fiber.Ctx, err error) error {
	status := fiber.StatusInternalServerError
	sentence := "Something went wrong on the server. The details are in its log."
	var fe *fiber.Error
	switch {
	case errors.As(err, &fe):
		status, sentence = fe.Code, fe.Message
	case isRefusal(err):
		status, sentence, _ = refused(err)
	default:
		h.log.Error("request failed", "method", c.Method(), "path", c.Path(), "err", err)
	}
	if c.Get("HX-Request") == "true" {
		c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
		return c.Status(status).SendString(sentence)
	}
	return render(c.Status(status), errorPage(c, status, sentence))
}
