// Package handlers is the Fiber app: the routes, the middleware that guards
// them (security headers, CSRF, the owner's session) and thin handlers that
// parse a request, call one service method and render one component.
package handlers

import (
	"context"
	"errors"
	"log/slog"
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

// Deps are the services the routes call, listed once: New keeps the one
// Deps it is given, and every page's handlers read it through frame.
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
	// Comparisons are Settings → Compare models and each model's latest
	// scorecard row; nil offers neither.
	Comparisons Comparisons
	// Prices are prices.json, edited in Settings; nil offers no form.
	Prices Prices
	// Sandbox is how builds and previews run, and the owner's choice.
	Sandbox Sandbox
	// Limits are the turn limits of limits.json, set in Settings.
	Limits Limits
	// Notices are what runs needed of the owner, and Webhook where they
	// are sent; nil offers no notifications.
	Notices Notices
	Webhook Webhook
	// Now is the clock the pages tell elapsed times by; required.
	Now func() time.Time
	// Quit stops the launcher gracefully, as SIGTERM does.
	Quit func()
	Log  *slog.Logger
	// Version is shown by /healthz.
	Version string
}

// New builds the Fiber app with every route registered.
func New(d Deps) *fiber.App {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.Now == nil {
		panic("handlers: Deps.Now, the clock, is required")
	}
	if d.IntentPages == nil {
		panic("handlers: Deps.IntentPages, the intent page's read, is required")
	}
	// Every page reads the one Deps; each page's handlers are built once.
	f := frame{&d}
	var (
		owners    = &ownerPages{frame: f}
		apps      = &appPages{f}
		backlog   = &backlogPages{f}
		board     = &boardPages{f}
		overview  = &overviewPages{f}
		intents   = &intentPages{f}
		downloads = &deliveryDownloads{f}
		requests  = &requestPages{f}
		knowledge = &knowledgePages{f}
		lessons   = &lessonPages{f}
		settings  = &settingsPages{f}
	)
	app := fiber.New(fiber.Config{
		AppName:               "autoapp",
		DisableStartupMessage: true,
		ErrorHandler:          f.errorHandler,
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
	app.Get("/healthz", f.healthz)
	app.Get("/static/:name", staticFile)
	app.Get("/favicon.ico", favicon)
	app.Use(csrf)
	app.Use(owners.session)

	app.Get("/setup", owners.setupForm)
	app.Post("/setup", owners.setup)
	app.Get("/signin", owners.signInForm)
	app.Post("/signin", owners.signIn)
	app.Post("/signout", owners.signOut)

	app.Get("/", func(c *fiber.Ctx) error { return c.Redirect("/backlog", fiber.StatusSeeOther) })
	app.Get("/backlog", backlog.backlogList)
	app.Get("/board", board.boardPage)
	app.Get("/board/live", board.boardLive)
	app.Get("/overview", overview.overviewPage)
	app.Get("/overview/live", overview.overviewLive)
	app.Post("/backlog/models", backlog.backlogModels)
	app.Get("/backlog/intents/:id", intents.intentPage)
	app.Get("/backlog/intents/:id/live", intents.intentLive)
	app.Post("/backlog/intents/:id/withdraw", intents.intentWithdraw)
	app.Post("/backlog/intents/:id/run", intents.intentRun)
	app.Post("/backlog/intents/:id/cap", intents.intentCap)
	app.Post("/backlog/intents/:id/stop", intents.intentStop)
	app.Post("/backlog/intents/:id/interventions", intents.intentIntervene)
	app.Get("/backlog/intents/:id/delivery/artifact", downloads.deliveryArtifact)
	app.Get("/backlog/intents/:id/delivery/workspace.tar.gz", downloads.deliveryArchive)
	app.Post("/backlog/tasks/:id/answer", intents.taskAnswer)
	app.Get("/backlog/tasks/:id", intents.taskPage)
	app.Post("/backlog/tasks/:id/model", intents.taskModel)
	app.Post("/backlog/tasks/:id/remove", intents.taskRemove)
	app.Get("/request", requests.requestPage)
	app.Get("/request/live", requests.requestLive)
	app.Post("/request", requests.requestSend)
	app.Post("/request/answer", requests.requestAnswer)
	app.Post("/request/select", requests.requestSelect)
	app.Post("/request/questions/:qid/approve", requests.questionApprove)
	app.Post("/request/questions/:qid/deny", requests.questionDeny)
	app.Post("/backlog/intents/:id/approve", intents.intentApprove)
	app.Post("/backlog/intents/:id/approval/withdraw", intents.intentWithdrawApproval)
	app.Post("/backlog/intents/:id/mode", intents.intentMode)
	app.Post("/request/mode", requests.requestMode)
	app.Get("/knowledge", knowledge.knowledgeLog)
	app.Get("/knowledge/log", knowledge.knowledgeLogLines)
	app.Get("/knowledge/turns", knowledge.knowledgeTurns)
	app.Get("/knowledge/turns/:id", knowledge.knowledgeTurn)
	app.Get("/knowledge/cases", knowledge.knowledgeCases)
	app.Get("/knowledge/cases/:id", knowledge.knowledgeCase)
	app.Get("/knowledge/lessons", lessons.knowledgeLessons)
	app.Post("/knowledge/lessons", lessons.lessonNew)
	app.Get("/knowledge/lessons/:id", lessons.lessonPage)
	app.Get("/knowledge/lessons/:id/replay", lessons.lessonReplayLive)
	app.Post("/knowledge/lessons/:id/replay", lessons.lessonReplay)
	app.Post("/knowledge/lessons/:id/confirm", lessons.lessonConfirm)
	app.Post("/knowledge/lessons/:id/retire", lessons.lessonRetire)
	app.Post("/knowledge/lessons/:id/replace", lessons.lessonReplace)
	app.Get("/settings", settings.settingsPage)
	app.Post("/settings/providers", settings.providerSave)
	app.Post("/settings/providers/:name/on", settings.providerOn)
	app.Post("/settings/providers/:name/test", settings.providerTest)
	app.Post("/settings/providers/:name/remove", settings.providerRemove)
	app.Post("/settings/model", settings.settingsModel)
	app.Get("/settings/scorecard", settings.settingsScorecard)
	app.Post("/settings/compare", settings.settingsCompare)
	app.Post("/settings/tiers", settings.settingsTiers)
	app.Post("/settings/prices", settings.pricesSave)
	app.Post("/settings/sandbox", settings.sandboxSave)
	app.Post("/settings/limits", settings.limitsSave)
	app.Post("/settings/runs", settings.runsSave)
	app.Post("/settings/notifications", settings.notificationsSave)
	app.Post("/settings/notifications/test", settings.notificationsTest)
	app.Get("/notices", settings.noticesJSON)
	app.Post("/quit", settings.quitLauncher)

	app.Get("/apps", apps.appList)
	app.Post("/apps", apps.appCreate)
	app.Post("/apps/register", apps.appRegister)
	app.Get("/apps/:id", apps.appPage)
	app.Post("/apps/:id/select", apps.appSelect)
	app.Get("/apps/:id/live", apps.appLive)
	app.Post("/apps/:id/manifest", apps.appManifest)
	app.Post("/apps/:id/cycle", apps.appCycle)
	app.Post("/apps/:id/preview/start", apps.appPreviewStart)
	app.Post("/apps/:id/preview/stop", apps.appPreviewStop)
	app.Post("/apps/:id/activate", apps.appActivate)
	app.Use(func(c *fiber.Ctx) error {
		return fiber.NewError(fiber.StatusNotFound, "There is no page at this address.")
	})
	return app
}

func (f frame) healthz(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(fiber.Map{"ok": true, "version": f.Version})
}

// errorHandler turns every error into a status and a sentence: a refusal of
// the owner service keeps its sentence, anything else is logged and told as
// a plain failure.
func (f frame) errorHandler(c *fiber.Ctx, err error) error {
	status := fiber.StatusInternalServerError
	sentence := "Something went wrong on the server. The details are in its log."
	var fe *fiber.Error
	switch {
	case errors.As(err, &fe):
		status, sentence = fe.Code, fe.Message
	case isRefusal(err):
		status, sentence, _ = refused(err)
	default:
		f.Log.Error("request failed", "method", c.Method(), "path", c.Path(), "err", err)
	}
	if c.Get("HX-Request") == "true" {
		c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
		return c.Status(status).SendString(sentence)
	}
	return render(c.Status(status), errorPage(c, status, sentence))
}
