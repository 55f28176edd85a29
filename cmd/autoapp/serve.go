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
	"autoapp/knowledge"
)

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "./data", "the data folder")
	addr := fs.String("addr", "127.0.0.1:8080", "the address to listen on")
	var remote allowRemote
	fs.Var(&remote, "allow-remote", "allow listening on an address other machines can reach; =NAME,… also answers at those names")
	var proxies trustedProxies
	fs.Var(&proxies, "trusted-proxy", "with --allow-remote: believe the X-Forwarded-Host, -Proto and -For headers of requests from these addresses (IP,… or ranges such as 10.0.0.0/8)")
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
	if len(proxies) > 0 && !remote.allowed {
		fmt.Fprintln(stderr, "autoapp serve: --trusted-proxy needs --allow-remote with the names the proxy is reached at; "+
			"without it no forwarded header is believed")
		return 2
	}

	// The server's log goes to the knowledge store's event log, and to stderr.
	l, err := launcher.New(*root, clock, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo})), launcher.Options{})
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
	fmt.Fprintf(stdout, "Autoapp is serving http://%s (data in %s). Stop it with Ctrl-C.\n", ln.Addr(), l.Root)
	if remote.allowed {
		fmt.Fprintf(stdout, "It answers at %s; a request for any other name is refused.\n", strings.Join(hosts, ", "))
	}
	if len(proxies) > 0 {
		fmt.Fprintf(stdout, "It believes the X-Forwarded-Host, -Proto and -For headers of requests from %s only.\n", strings.Join(proxies, ", "))
	}
	err = l.Serve(ctx, ln, launcher.Site{Hosts: hosts, TrustedProxies: proxies}, func() {
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
