package preview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"autoapp/executor/acceptance"
	"autoapp/executor/build"
	"autoapp/intent/app"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace/sandbox"
)

const (
	// maxOutput is how much of a preview's recent output is kept.
	maxOutput = 64 << 10
	// lastLines is how much of it a failure quotes.
	lastLines = 20
	// stopGrace is how long a preview has to end after SIGTERM before its
	// process group is killed.
	stopGrace = 3 * time.Second
	// drainWait bounds the wait for output once the process group is gone,
	// in case a process escaped it and still holds the pipe.
	drainWait = 2 * time.Second
	// askEvery and askWithin pace the requests that wait for a first answer.
	askEvery  = 50 * time.Millisecond
	askWithin = time.Second
)

// startCommand runs the manifest's command in dir with $PORT set to a port
// of its own, in a network of its own when confined, and serves it on a
// loopback listener of the host's, guarded by site; it waits until the
// preview answers there.
func (m *Manager) startCommand(ctx context.Context, appID, dir string, pv app.Preview, release string) (*running, error) {
	inner, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("preview: start: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("preview: start: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	env, cleanup, err := build.Environ(dir)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("preview: start: %w", err)
	}
	env = append(env, "PORT="+strconv.Itoa(inner))
	// It may listen on its own port and nowhere else.
	policy := sandbox.ForApp(dir)
	lim := sandbox.PreviewLimits
	policy.Net, policy.Port, policy.Limits = sandbox.NetBindOne, inner, &lim
	proc, err := spawn(m.jail, policy, dir, pv.Command, env, cleanup, &outputLog{log: m.log, preview: appID})
	if err != nil {
		ln.Close()
		cleanup()
		if se, ok := refusal.As(err); ok {
			return nil, refuse(refusal.Invalid, "%s", se.Message)
		}
		return nil, refuse(refusal.Invalid, "The preview command %s could not start: %v.", pv.Command[0], err)
	}
	srv := &http.Server{
		Handler:           site(appID, port, forwarder(proc.dial, inner)),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(m.log.Handler(), slog.LevelDebug),
	}
	served := make(chan struct{})
	go func() {
		_ = srv.Serve(ln)
		close(served)
	}()
	go func() {
		<-proc.exited
		_ = srv.Close()
	}()
	stop := func() {
		proc.stop()
		_ = srv.Close()
		<-served
	}

	info := Info{
		AppID:     appID,
		Release:   release,
		SpawnedAt: m.now(),
		URL:       Link(appID, port),
		Link:      Link(appID, port),
		Port:      port,
		PID:       proc.pid,
	}
	within := pv.StartWait()
	switch err := waitAnswer(ctx, info.URL, proc.exited, within); {
	case err == nil:
	case errors.Is(err, errEnded):
		_ = srv.Close()
		return nil, refuse(refusal.Failed, "The preview stopped (%s) before it answered on port %d; %s",
			proc.state, inner, lastOutput(proc.output))
	case errors.Is(err, errNoAnswer):
		stop()
		return nil, refuse(refusal.Failed, "The preview did not answer on port %d within %s; %s",
			inner, within, lastOutput(proc.output))
	default:
		stop()
		return nil, fmt.Errorf("preview: start: %w", err)
	}
	return &running{info: info, output: proc.output.Text, ended: proc.exited, stop: stop, why: func() string { return proc.limit }}, nil
}

// lastOutput ends a sentence with what the preview printed last.
func lastOutput(t *build.Tail) string {
	if last := build.LastOutput(t.String(), lastLines); last != "" {
		return "its last output: " + last
	}
	return "it printed nothing."
}

// freePort asks the system for a loopback port nobody listens on.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

var (
	errEnded    = errors.New("the preview ended")
	errNoAnswer = errors.New("the preview did not answer")
)

// waitAnswer asks url until anything answers it, whatever the status. It
// fails with errEnded when the process ends first and errNoAnswer when
// within passes first.
func waitAnswer(ctx context.Context, url string, ended <-chan struct{}, within time.Duration) error {
	wctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	client := &http.Client{
		Transport: acceptance.LoopbackTransport(),
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	defer client.CloseIdleConnections()

	tick := time.NewTicker(askEvery)
	defer tick.Stop()
	for {
		if answers(wctx, client, url) {
			return nil
		}
		select {
		case <-ended:
			return errEnded
		case <-wctx.Done():
			if err := ctx.Err(); err != nil {
				return err
			}
			return errNoAnswer
		case <-tick.C:
		}
	}
}

func answers(ctx context.Context, client *http.Client, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, askWithin)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.Header.Get(noAnswerHeader) == ""
}

// process is a preview command running as the leader of its own process
// group, so that stopping it stops everything it started.
type process struct {
	pid int
	// dial connects to the port the preview listens on.
	dial   func(ctx context.Context) (net.Conn, error)
	output *build.Tail
	// exited is closed once the leader has exited, its group has been
	// killed and its output read; state says how it ended.
	exited chan struct{}
	state  string
	// limit is the sentence of the limit that ended it, if one did.
	limit string

	// kill ends the preview and everything it started.
	kill func()

	mu   sync.Mutex
	gone bool // the leader was reaped: its pid may name another process
}

// spawn starts argv in dir through jail, confined to policy; cleanup runs
// once the process group is gone.
func spawn(jail build.Starter, policy sandbox.Policy, dir string, argv, env []string, cleanup func(), lines io.Writer) (*process, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// One pipe for both streams keeps their lines in order; as an *os.File
	// it lets Wait return when the leader exits.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = w, w
	sp, err := jail.Start(cmd, policy)
	if err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	w.Close()

	p := &process{pid: cmd.Process.Pid, dial: sp.Dial, output: build.NewTail(maxOutput), exited: make(chan struct{})}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(io.MultiWriter(p.output, lines), r)
	}()
	p.kill = sp.Stop
	go func() {
		err := sp.Wait()
		p.mu.Lock()
		// Nothing of the tree may outlive its leader.
		sp.Stop()
		p.gone = true
		p.mu.Unlock()

		drain := time.NewTimer(drainWait)
		select {
		case <-copied:
		case <-drain.C:
			r.Close()
			<-copied
		}
		drain.Stop()
		r.Close()
		cleanup()

		var limit *sandbox.LimitError
		switch {
		case errors.As(err, &limit):
			p.limit = limit.Sentence("the preview")
			p.state = strings.TrimSuffix(p.limit, ".")
		case err != nil:
			p.state = err.Error()
		default:
			p.state = "exit status 0"
		}
		close(p.exited)
	}()
	return p, nil
}

// signal sends sig to the whole process group while its leader lives.
func (p *process) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.gone {
		_ = syscall.Kill(-p.pid, sig)
	}
}

// stop asks the process group to end, kills it after stopGrace, and
// returns once it has ended.
func (p *process) stop() {
	p.signal(syscall.SIGTERM)
	grace := time.NewTimer(stopGrace)
	defer grace.Stop()
	select {
	case <-p.exited:
	case <-grace.C:
		p.kill()
		<-p.exited
	}
}

// maxLoggedLines bounds how much of one preview's output reaches the event
// log, so a chatty preview cannot push everything else out of it.
const maxLoggedLines = 1000

// outputLog writes a preview's output to the server's log a line at a
// time. The lines name the preview in an attribute but carry no run or
// application identity: they have no origin in a turn, and keep NULL.
type outputLog struct {
	log     *slog.Logger
	preview string
	partial []byte
	lines   int
}

func (o *outputLog) Write(p []byte) (int, error) {
	o.partial = append(o.partial, p...)
	for {
		i := bytes.IndexByte(o.partial, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimRight(string(o.partial[:i]), "\r")
		o.partial = o.partial[i+1:]
		o.emit(line)
	}
	if len(o.partial) > 4096 {
		o.emit(string(o.partial))
		o.partial = o.partial[:0]
	}
	return len(p), nil
}

func (o *outputLog) emit(line string) {
	o.lines++
	switch {
	case o.lines < maxLoggedLines:
		o.log.Info(line, "preview", o.preview)
	case o.lines == maxLoggedLines:
		o.log.Warn("the preview's output is cut here in the log; the rest is only in its own tail", "preview", o.preview)
	}
}
