// Package preview shows a release of an application on its own loopback
// port: either the manifest's command, given $PORT and confined like a
// build, or a static folder the host serves itself. One preview runs per
// application. The person opens it at <app>.localhost:<port>, a host name
// of its own, so the browser never sends it the console's cookies (which
// belong to the console's host, whatever its port); the host itself asks
// it at 127.0.0.1.
package preview

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"autoapp/executor/build"
	"autoapp/intent/app"
	"autoapp/intent/refusal"
)

func refuse(code refusal.Code, format string, args ...any) *refusal.Error {
	return refusal.Errorf(code, format, args...)
}

// Info describes a running preview. A preview is identified by its
// release and the time it was spawned.
type Info struct {
	AppID     string    `json:"appId"`
	Release   string    `json:"release"`
	SpawnedAt time.Time `json:"spawnedAt"`
	// URL is where the host reaches it: the same as Link, the preview's own
	// name, which the host dials at 127.0.0.1 (acceptance.LoopbackTransport).
	URL string `json:"url"`
	// Link is where the person opens it: a host name of its own.
	Link string `json:"link"`
	Port int    `json:"port"`
	// PID leads the preview's process group; 0 for a static preview.
	PID    int  `json:"pid"`
	Static bool `json:"static"`
}

// running is one preview that answered and has not been stopped.
type running struct {
	info Info
	// output is the command's recent output; empty for a static preview.
	output func() string
	// ended is closed when the preview is gone, stopped or not.
	ended <-chan struct{}
	// stop ends the preview and returns once it has ended.
	stop func()
	// why, once it has ended, says what ended it when the host knows: a
	// limit of the sandbox. Nil or "" otherwise.
	why func() string
}

// Manager runs at most one preview per application. It is safe for
// concurrent use.
type Manager struct {
	now  func() time.Time
	log  *slog.Logger
	jail build.Starter

	// quit ends every start in progress when StopAll is called.
	quit    context.Context
	cancel  context.CancelFunc
	starts  sync.WaitGroup
	mu      sync.Mutex
	closed  bool
	running map[string]*running
	// endings says, per application, why its last preview ended by
	// itself, when the host knows.
	endings map[string]string
	// turns keeps one start or stop at a time per application.
	turns map[string]*sync.Mutex
}

// NewManager builds a manager with a clock, a log (nil discards) and the
// jail that starts preview commands.
func NewManager(now func() time.Time, log *slog.Logger, jail build.Starter) *Manager {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	quit, cancel := context.WithCancel(context.Background())
	return &Manager{
		now:     now,
		log:     log,
		jail:    jail,
		quit:    quit,
		cancel:  cancel,
		running: map[string]*running{},
		endings: map[string]string{},
		turns:   map[string]*sync.Mutex{},
	}
}

// Start shows release of the application appID from its workspace dir, as
// p says, after stopping the preview already running for it. It returns
// once the preview answers an HTTP request, or fails with a sentence that
// quotes the preview's last output.
func (m *Manager) Start(ctx context.Context, appID, dir string, p app.Preview, release string) (Info, error) {
	switch {
	case appID == "":
		return Info{}, refuse(refusal.Invalid, "Name the application whose preview to start.")
	case len(p.Command) == 0 && p.Static == "":
		return Info{}, refuse(refusal.Invalid, "The manifest gives neither a preview command nor a static folder.")
	case len(p.Command) > 0 && p.Static != "":
		return Info{}, refuse(refusal.Invalid, "The manifest gives both a preview command and a static folder; give one.")
	}

	turn := m.turn(appID)
	turn.Lock()
	defer turn.Unlock()

	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return Info{}, refuse(refusal.Failed, "The server is shutting down, so no preview can start.")
	}
	m.starts.Add(1)
	m.mu.Unlock()
	defer m.starts.Done()

	m.stopLocked(ctx, appID)

	// StopAll ends a start in progress as well.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(m.quit, cancel)()

	var r *running
	var err error
	if p.Static != "" {
		r, err = m.startStatic(appID, dir, p.Static, release)
	} else {
		r, err = m.startCommand(ctx, appID, dir, p, release)
	}
	if err != nil {
		return Info{}, err
	}

	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		r.stop()
		return Info{}, refuse(refusal.Failed, "The server is shutting down, so no preview can start.")
	}
	m.running[appID] = r
	delete(m.endings, appID)
	m.mu.Unlock()
	go m.watch(appID, r)

	// Under the caller's identity: a turn's cycle names its run and call.
	m.log.InfoContext(ctx, "preview started", "app", appID, "release", release, "url", r.info.URL, "pid", r.info.PID, "static", r.info.Static)
	return r.info, nil
}

// watch forgets a preview that ended without being stopped, such as a
// process that crashed or was killed from outside.
func (m *Manager) watch(appID string, r *running) {
	<-r.ended
	m.settle(appID, r)
}

// settle forgets r, which has ended, when it is still the application's
// running preview, and keeps why it ended. Status and EndedWhy settle
// too, so that a preview seen to have ended already says why, whether or
// not watch has woken yet.
func (m *Manager) settle(appID string, r *running) {
	why := ""
	if r.why != nil {
		why = r.why()
	}
	m.mu.Lock()
	unexpected := m.running[appID] == r
	if unexpected {
		delete(m.running, appID)
		m.endings[appID] = why
	}
	m.mu.Unlock()
	if unexpected {
		m.log.Warn("preview ended by itself", "app", appID, "release", r.info.Release, "pid", r.info.PID, "why", why)
	}
}

// endedOne is the application's running preview when it has ended but is
// not yet settled.
func (m *Manager) endedOne(appID string) *running {
	m.mu.Lock()
	r := m.running[appID]
	m.mu.Unlock()
	if r == nil {
		return nil
	}
	select {
	case <-r.ended:
		return r
	default:
		return nil
	}
}

// Stop ends the application's preview: its whole process group (SIGTERM,
// then SIGKILL after a short grace) or the host's listener for a static
// folder. It waits for a start in progress to finish first. Its log line
// carries the identity of ctx.
func (m *Manager) Stop(ctx context.Context, appID string) error {
	turn := m.turn(appID)
	turn.Lock()
	defer turn.Unlock()
	if !m.stopLocked(ctx, appID) {
		return refuse(refusal.NotRunning, "No preview is running for this application.")
	}
	return nil
}

// stopLocked stops the application's preview, if one runs, and reports
// whether one did. The caller holds the application's turn.
func (m *Manager) stopLocked(ctx context.Context, appID string) bool {
	m.mu.Lock()
	r := m.running[appID]
	delete(m.running, appID)
	m.mu.Unlock()
	if r == nil {
		return false
	}
	r.stop()
	m.log.InfoContext(ctx, "preview stopped", "app", appID, "release", r.info.Release, "pid", r.info.PID)
	return true
}

// Status is the application's running preview; false when none runs,
// including when its process died.
func (m *Manager) Status(appID string) (Info, bool) {
	if r := m.endedOne(appID); r != nil {
		m.settle(appID, r)
	}
	m.mu.Lock()
	r := m.running[appID]
	m.mu.Unlock()
	if r == nil {
		return Info{}, false
	}
	return r.info, true
}

// EndedWhy says why the application's last preview ended by itself, when
// the host knows (a limit of the sandbox stopped it); "" otherwise.
func (m *Manager) EndedWhy(appID string) string {
	if r := m.endedOne(appID); r != nil {
		m.settle(appID, r)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.endings[appID]
}

// Output is the recent output of the application's running preview.
func (m *Manager) Output(appID string) (string, bool) {
	m.mu.Lock()
	r := m.running[appID]
	m.mu.Unlock()
	if r == nil {
		return "", false
	}
	return r.output(), true
}

// StopAll stops every preview and refuses new ones, for server shutdown.
// Starts in progress are ended too.
func (m *Manager) StopAll() {
	m.mu.Lock()
	m.closed = true
	all := m.running
	m.running = map[string]*running{}
	m.mu.Unlock()
	m.cancel()

	var wg sync.WaitGroup
	for appID, r := range all {
		wg.Go(func() {
			r.stop()
			m.log.Info("preview stopped", "app", appID, "release", r.info.Release, "pid", r.info.PID)
		})
	}
	wg.Wait()
	m.starts.Wait()
}

// Link is the address at which the person opens the preview of appID
// listening on port: http://<appID>.localhost:<port>/. Browsers resolve
// every name under localhost to loopback, and keep cookies per host name,
// so none of the console's reaches it. An application id is a valid
// host label (lowercase words and digits joined by dashes).
func Link(appID string, port int) string {
	return fmt.Sprintf("http://%s.localhost:%d/", appID, port)
}

func (m *Manager) turn(appID string) *sync.Mutex {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.turns[appID]
	if t == nil {
		t = &sync.Mutex{}
		m.turns[appID] = t
	}
	return t
}
