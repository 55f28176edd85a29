package launcher

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"autoapp/handlers"
	"autoapp/handlers/control"
)

// ShutdownGrace is how long in-flight requests get to finish on a stop.
const ShutdownGrace = 10 * time.Second

// Site is where the web application answers: the HOST:PORT names it
// serves, and the addresses of the proxies in front of it whose forwarded
// headers it believes (none unless named).
type Site struct {
	Hosts          []string
	TrustedProxies []string
	// Door, when set, is the control socket's listener (control.Listen):
	// `autoapp mcp` asks the server for chat turns and runs through it.
	// Serve answers on it, and closes it when the stop begins.
	Door net.Listener
}

// App is the web application over the services, answering only at the
// site's names; quit, when set, is what Quit in Settings calls.
func (l *Launcher) App(site Site, quit func()) *fiber.App {
	return handlers.New(handlers.Deps{Hosts: site.Hosts, TrustedProxies: site.TrustedProxies, Quit: quit, Owners: l.Owners, Apps: l.Apps, Candidates: l.Candidates,
		Actions: l.Runs, Backlog: l.Backlog, Attention: l.Attention, Interventions: l.Interventions, Providers: l.Providers, Runs: l.Runs, Deliveries: l.Deliveries, Chats: l.Chats, Requests: l.Requests,
		Gate: l.Gate, Knowledge: l.Knowledge, Cases: l.Cases, Lessons: l.Lessons, Servings: l.Servings, LessonReplays: l.LessonReplays, Comparisons: l.LessonReplays, Overview: l.Overview, IntentPages: l.Overview,
		Prices: l.Spend, Sandbox: l.Sandbox, Limits: l.Limits, Notices: l.Notices, Webhook: l.Webhook, Now: l.Now, Log: l.Log, Version: Version})
}

// Serve answers on ln at the site until ctx ends or Quit is pressed, then
// stops the run or the replay and the chat turns, gives the requests in
// flight ShutdownGrace to finish and stops the previews; stopping, when
// set, hears that the stop began. Once it answers, the upkeep a start
// leaves (the links index, retention) begins in the background. It does
// not close the stores (Close stops the upkeep). Call Recover first.
func (l *Launcher) Serve(ctx context.Context, ln net.Listener, site Site, stopping func()) error {
	ctx, quit := context.WithCancel(ctx)
	defer quit()
	// The webhook's links point at the console as its first name says.
	if len(site.Hosts) > 0 {
		l.Base = "http://" + site.Hosts[0]
	} else {
		l.Base = "http://" + ln.Addr().String()
	}
	app := l.App(site, quit)
	app.Hooks().OnListen(func(fiber.ListenData) error {
		l.startUpkeep()
		return nil
	})
	// The door `autoapp mcp` asks for a chat turn or a run through.
	doorCtx, closeDoor := context.WithCancel(context.Background())
	door := make(chan struct{})
	if site.Door == nil {
		close(door)
	} else {
		go func() {
			defer close(door)
			if err := control.Serve(doorCtx, site.Door, control.Local{Chats: l.Chats, Runs: l.Runs}, l.Log); err != nil && !errors.Is(err, http.ErrServerClosed) {
				l.Log.Error("the control socket stopped", "err", err)
			}
		}()
	}
	defer func() { closeDoor(); <-door }()
	served := make(chan error, 1)
	go func() { served <- app.Listener(ln) }()
	select {
	case err := <-served:
		l.Previews.StopAll()
		if err != nil {
			return fmt.Errorf("the server stopped: %v", err)
		}
		return nil
	case <-ctx.Done():
	}
	if stopping != nil {
		stopping()
	}
	// Nothing asks for a turn or a run once the stop began.
	closeDoor()
	<-door
	l.Runs.Shutdown()
	l.Chats.Shutdown()
	var shutdown error
	if err := app.ShutdownWithTimeout(ShutdownGrace); err != nil {
		shutdown = fmt.Errorf("shutdown: %v", err)
	}
	<-served
	l.Previews.StopAll()
	return shutdown
}
