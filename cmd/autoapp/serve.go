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

	"autoapp/cmd/autoapp/launcher"
	"autoapp/handlers/control"
	"autoapp/knowledge"
)

// serve runs the web server over the data folder until ctx ends.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, code, ok := parseServeArgs(args, stderr)
	if !ok {
		return code
	}
	// The server's log goes to the knowledge store's event log, and to stderr.
	l, err := launcher.New(o.root, clock, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo})), launcher.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "autoapp serve: %v\n", err)
		return 1
	}
	defer l.Close()
	// One server per data folder: the lock is held until serve returns, and
	// `knowledge confirm|retire` look for it before writing.
	release, err := knowledge.AcquireServerLock(l.Root)
	if err != nil {
		fmt.Fprintf(stderr, "autoapp serve: %v\n", err)
		return 1
	}
	defer release()
	// The engineer's code runs confined; a machine that cannot confine says
	// so at once, and nothing is built until the owner chooses otherwise.
	if st := l.Sandbox.State(); !st.Confined() {
		fmt.Fprintf(stderr, "autoapp serve: %s\n", st.Sentence())
		l.Log.Warn(st.Sentence())
	}
	if err := l.Recover(ctx); err != nil {
		fmt.Fprintf(stderr, "autoapp serve: %v\n", err)
		return 1
	}
	// Listen first: the names the Host check accepts carry the real port,
	// known only now when --addr asks for port 0.
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		fmt.Fprintf(stderr, "autoapp serve: %v\n", listenError(o.addr, err))
		return 1
	}
	hosts, err := acceptedHosts(o.addr, ln.Addr().(*net.TCPAddr).Port, o.remote.names)
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "autoapp serve: %v\n", err)
		return 2
	}
	// The door `autoapp mcp` asks for chat turns and runs through, open
	// before the server says it serves; without it the pages still serve.
	door, err := control.Listen(l.Root)
	if err != nil {
		fmt.Fprintf(stderr, "autoapp serve: `autoapp mcp` cannot ask this server for chat turns and runs: %v\n", err)
		l.Log.Warn("`autoapp mcp` cannot ask this server for chat turns and runs", "why", err.Error())
		door = nil
	}
	fmt.Fprintf(stdout, "Autoapp is serving http://%s (data in %s). Stop it with Ctrl-C.\n", ln.Addr(), l.Root)
	if o.remote.allowed {
		fmt.Fprintf(stdout, "It answers at %s; a request for any other name is refused.\n", strings.Join(hosts, ", "))
	}
	if len(o.proxies) > 0 {
		fmt.Fprintf(stdout, "It believes the X-Forwarded-Host, -Proto and -For headers of requests from %s only.\n", strings.Join(o.proxies, ", "))
	}
	err = l.Serve(ctx, ln, launcher.Site{Hosts: hosts, TrustedProxies: o.proxies, Door: door}, func() {
		fmt.Fprintln(stdout, "Shutting down: stopping the run, finishing the requests in flight.")
	})
	if err != nil {
		fmt.Fprintf(stderr, "autoapp serve: %v\n", err)
	}
	if cerr := l.Close(); cerr != nil {
		fmt.Fprintf(stderr, "autoapp serve: closing the stores: %v\n", cerr)
		return 1
	}
	if err != nil && !strings.HasPrefix(err.Error(), "shutdown:") {
		return 1
	}
	fmt.Fprintln(stdout, "Stopped.")
	return 0
}

// serveOptions is what the arguments of serve said.
type serveOptions struct {
	root, addr string
	remote     allowRemote
	proxies    trustedProxies
}

// parseServeArgs reads the arguments of serve and refuses an address or a
// proxy the owner did not allow. ok is false when serve ends here, with
// the exit code.
func parseServeArgs(args []string, stderr io.Writer) (o serveOptions, code int, ok bool) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.root, "root", "./data", "the data folder")
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "the address to listen on")
	fs.Var(&o.remote, "allow-remote", "allow listening on an address other machines can reach; =NAME,… also answers at those names")
	fs.Var(&o.proxies, "trusted-proxy", "with --allow-remote: believe the X-Forwarded-Host, -Proto and -For headers of requests from these addresses (IP,… or ranges such as 10.0.0.0/8)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, 0, false // the usage was asked for, and printed
		}
		return o, 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "autoapp serve: unexpected argument %q.\n", fs.Arg(0))
		return o, 2, false
	}
	if err := checkLoopback(o.addr, o.remote.allowed); err != nil {
		fmt.Fprintf(stderr, "autoapp serve: %v\n", err)
		return o, 2, false
	}
	if len(o.proxies) > 0 && !o.remote.allowed {
		fmt.Fprintln(stderr, "autoapp serve: --trusted-proxy needs --allow-remote with the names the proxy is reached at; "+
			"without it no forwarded header is believed")
		return o, 2, false
	}
	return o, 0, true
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
