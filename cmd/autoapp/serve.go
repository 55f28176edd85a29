package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"time"

	"autoapp/executor/builder"
	"autoapp/handlers"
	"autoapp/knowledge"
)

// shutdownGrace is how long in-flight requests get to finish on SIGTERM.
const shutdownGrace = 10 * time.Second

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "./data", "the data folder")
	addr := fs.String("addr", "127.0.0.1:8080", "the address to listen on")
	var remote allowRemote
	fs.Var(&remote, "allow-remote", "allow listening on an address other machines can reach; =NAME,… also answers at those names")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // the usage was asked for, and printed
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "autoapp serve: unexpected argument %q.\n", fs.Arg(0))
		return 2
	}
	if err := checkLoopback(*addr, remote.allowed); err != nil {
		fmt.Fprintf(stderr, "autoapp serve: %v\n", err)
		return 2
	}

	st, err := openRoot(*root)
	if err != nil {
		fmt.Fprintf(stderr, "autoapp serve: %v\n", err)
		return 1
	}
	defer st.close()
	// One server per data folder: the lock is held until serve returns, and
	// `knowledge confirm|retire` look for it before writing.
	release, err := knowledge.AcquireServerLock(st.root)
	if err != nil {
		fmt.Fprintf(stderr, "autoapp serve: %v\n", err)
		return 1
	}
	defer release()

	// The server's log goes to the knowledge store's event log, and to stderr.
	log := slog.New(st.knowledge.Handler(slog.LevelInfo, slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	l, err := st.launcher(log)
	if err != nil {
		fmt.Fprintf(stderr, "autoapp serve: %v\n", err)
		return 1
	}
	// The engineer's code runs confined; a machine that cannot confine says
	// so at once, and nothing is built until the owner chooses otherwise.
	if st := l.sandbox.State(); !st.Confined() {
		fmt.Fprintf(stderr, "autoapp serve: %s\n", st.Sentence())
		log.Warn(st.Sentence())
	}
	// Previews are child processes: none outlives the server.
	defer l.previews.StopAll()
	// A restart interrupts and never resumes: a turn cut short may have
	// left half a change, and the person decides what happens next.
	if tasks, intents, err := l.backlog.Recover(ctx); err != nil {
		fmt.Fprintf(stderr, "autoapp serve: recovering the runs the last launcher left: %v\n", err)
		return 1
	} else if tasks+intents > 0 {
		log.Info("the launcher stopped with a run going", "tasks interrupted", tasks, "intents stopped", intents)
	}
	// Recovery is a safe boundary: interventions sent before the stop are
	// applied (each intent keeps the stop it is in, as held), and those
	// applied just before a crash are only acknowledged.
	if n, err := l.backlog.ApplyAllInterventions(ctx); err != nil {
		fmt.Fprintf(stderr, "autoapp serve: applying the interventions the last launcher left: %v\n", err)
		return 1
	} else if n > 0 {
		log.Info("interventions sent before the stop were applied", "applied", n)
	}
	// A done intent the last launcher stopped before delivering is delivered now.
	if n, err := l.runs.DeliverMissing(ctx); err != nil {
		log.Error("the deliveries the last launcher left undone could not be made", "err", err)
	} else if n > 0 {
		log.Info("done intents the last launcher left undelivered were delivered", "delivered", n)
	}
	// Lessons learned under other instructions or another version ask for review.
	if n, err := l.lessons.Review(ctx, builder.InstructionsHash(), version); err != nil {
		log.Error("the lessons could not be reviewed", "err", err)
	} else if n > 0 {
		log.Info("lessons need review", "flagged", n)
	}
	// The relationship index is derived: rebuilt on open, and whenever an attempt ends.
	if _, err := knowledge.RebuildLinks(ctx, st.knowledge.DB(), l.backlog); err != nil {
		log.Error("the knowledge links could not be rebuilt", "err", err)
	}
	if _, err := l.chats.Recover(ctx); err != nil {
		fmt.Fprintf(stderr, "autoapp serve: recovering the chat turns the last launcher left: %v\n", err)
		return 1
	}
	// Quit in Settings stops the server as a signal does.
	ctx, quit := context.WithCancel(ctx)
	defer quit()
	// Listen first: the names the Host check accepts carry the real port,
	// known only now when --addr asks for port 0.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "autoapp serve: %v\n", listenError(*addr, err))
		return 1
	}
	hosts, err := acceptedHosts(*addr, ln.Addr().(*net.TCPAddr).Port, remote.names)
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "autoapp serve: %v\n", err)
		return 2
	}
	app := handlers.New(handlers.Deps{Hosts: hosts, Quit: quit, Owners: l.owners, Apps: l.apps, Candidates: l.candidates, Backlog: l.backlog, Providers: l.providers, Runs: l.runs, Deliveries: l.deliveries, Chats: l.chats, Requests: l.requests, Gate: l.gate, Knowledge: st.knowledge, Cases: l.cases, Lessons: l.lessons, Servings: l.servings, Overview: l.overview, Prices: l.spend, Sandbox: l.sandbox, Limits: l.limits, Now: time.Now, Log: log, Version: version})
	fmt.Fprintf(stdout, "Autoapp is serving http://%s (data in %s). Stop it with Ctrl-C.\n", ln.Addr(), st.root)
	if remote.allowed {
		fmt.Fprintf(stdout, "It answers at %s; a request for any other name is refused.\n", strings.Join(hosts, ", "))
	}

	served := make(chan error, 1)
	go func() { served <- app.Listener(ln) }()
	select {
	case err := <-served:
		if err != nil {
			fmt.Fprintf(stderr, "autoapp serve: the server stopped: %v\n", err)
			return 1
		}
		return 0
	case <-ctx.Done():
	}
	fmt.Fprintln(stdout, "Shutting down: stopping the run, finishing the requests in flight.")
	l.runs.Shutdown()
	l.chats.Shutdown()
	if err := app.ShutdownWithTimeout(shutdownGrace); err != nil {
		fmt.Fprintf(stderr, "autoapp serve: shutdown: %v\n", err)
	}
	<-served
	l.previews.StopAll()
	if err := st.close(); err != nil {
		fmt.Fprintf(stderr, "autoapp serve: closing the stores: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "Stopped.")
	return 0
}

// checkLoopback refuses an address other machines could reach unless the
// owner asked for it.
func checkLoopback(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not an address of the form HOST:PORT (for example 127.0.0.1:8080)", addr)
	}
	if allowRemote || isLoopback(host) {
		return nil
	}
	shown := host
	if shown == "" {
		shown = "every interface"
	}
	return fmt.Errorf("refusing to listen on %s: other machines could reach the sign-in page and the engineer's controls there; "+
		"listen on 127.0.0.1 (the default), or pass --allow-remote if you mean it and have put TLS in front", shown)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s is already in use by another program; stop it or choose another port with --addr", addr)
	}
	if errors.Is(err, syscall.EACCES) {
		return fmt.Errorf("this user may not listen on %s; choose a port above 1023 with --addr", addr)
	}
	return fmt.Errorf("cannot listen on %s: %v", addr, err)
}
