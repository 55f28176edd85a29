// Package control is the running server's door for the launcher's own
// processes on the same machine. `autoapp mcp` reads the stores itself and
// writes what any process may write (a receipt, an answer, an approval),
// but a chat turn and a run live in the process that serves: it asks the
// server for those here.
//
// The door is a Unix socket in the data folder, <root>/launcher/control.sock,
// made by `autoapp serve` and removed when it stops. It is the owner's as
// the stores beside it are: the folder is the owner's alone, the socket's
// mode is 0600, and a connection from a process of another user is closed
// before it is read (the kernel's peer credentials). The engineer's code
// never sees it: the sandbox holds no part of <root>/launcher.
//
// Each act is one HTTP request over the socket, a JSON body in and out; a
// refusal travels as its code and sentence and arrives as the same
// refusal. It knows nothing of what the acts do.
package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"autoapp/intent"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
)

// SocketFile is the socket, relative to the data folder.
const SocketFile = "launcher/control.sock"

// maxSocketPath is the longest path a Unix socket may have on Linux
// (sun_path holds 108 bytes with the terminating NUL).
const maxSocketPath = 107

// maxBody bounds a request's body: a request's text is at most 32 KiB.
const maxBody = 1 << 20

// Acts are what the server does for a caller: the services that hold its
// chat turns and its runs.
type Acts interface {
	// Say journals the owner's words and starts the engineer's turn on
	// them (chat.Service.Say).
	Say(ctx context.Context, appID string, w request.Say) (request.State, error)
	// Start starts the intent's run (executor.Executor.Start).
	Start(ctx context.Context, intentID int64) error
}

// The bodies on the wire.
type (
	sayIn struct {
		App string      `json:"app"`
		Say request.Say `json:"say"`
		Via intent.Via  `json:"via"`
	}
	sayOut struct {
		State request.State `json:"state"`
	}
	startIn struct {
		Intent int64      `json:"intent"`
		Via    intent.Via `json:"via"`
	}
	refusalOut struct {
		Error struct {
			Code    refusal.Code `json:"code"`
			Message string       `json:"message"`
		} `json:"error"`
	}
)

// SocketPath is the socket of the data folder root.
func SocketPath(root string) string { return filepath.Join(root, SocketFile) }

// Listen makes the socket of the data folder root and listens on it. A
// socket left by a server that stopped without removing it is replaced; one
// a server still answers on is refused. Every error is a sentence.
func Listen(root string) (net.Listener, error) {
	path := SocketPath(root)
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("the control socket's path %s has %d bytes, more than a Unix socket may have (%d); "+
			"choose a shorter data folder for `autoapp mcp` to reach this server", path, len(path), maxSocketPath)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("another server answers on %s; stop it first", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("the control socket %s left by a stopped server could not be removed: %v", path, err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on the control socket %s: %v", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("cannot make the control socket %s the owner's alone: %v", path, err)
	}
	return ownUser{ln.(*net.UnixListener)}, nil
}

// ownUser accepts only connections from processes of this process's user.
type ownUser struct{ *net.UnixListener }

func (l ownUser) Accept() (net.Conn, error) {
	for {
		c, err := l.AcceptUnix()
		if err != nil {
			return nil, err
		}
		if sameUser(c) {
			return c, nil
		}
		c.Close()
	}
}

// sameUser says the peer of c runs as this process's user.
func sameUser(c *net.UnixConn) bool {
	raw, err := c.SyscallConn()
	if err != nil {
		return false
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || credErr != nil {
		return false
	}
	return int(cred.Uid) == os.Getuid()
}

// Serve answers the acts on ln until ctx ends, then stops taking new ones,
// lets those in hand finish and removes the socket. A failure of an act
// that is not a refusal is logged and answered with a sentence.
func Serve(ctx context.Context, ln net.Listener, acts Acts, log *slog.Logger) error {
	h := &handler{acts: acts, log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /say", h.say)
	mux.HandleFunc("POST /start", h.start)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := srv.Shutdown(shut)
	<-done
	return err
}

// handler answers each act: it reads the body, calls one of the acts, and
// writes its answer.
type handler struct {
	acts Acts
	log  *slog.Logger
}

func (h *handler) say(w http.ResponseWriter, r *http.Request) {
	var in sayIn
	if !h.read(w, r, &in) {
		return
	}
	st, err := h.acts.Say(withVia(r.Context(), in.Via), in.App, in.Say)
	h.answer(w, err, sayOut{State: st})
}

func (h *handler) start(w http.ResponseWriter, r *http.Request) {
	var in startIn
	if !h.read(w, r, &in) {
		return
	}
	err := h.acts.Start(withVia(r.Context(), in.Via), in.Intent)
	h.answer(w, err, struct{}{})
}

// withVia is ctx saying where the act came from, as the caller says, when
// it is a way the launcher knows.
func withVia(ctx context.Context, v intent.Via) context.Context {
	for _, known := range intent.Vias {
		if v == known {
			return intent.WithVia(ctx, v)
		}
	}
	return intent.WithVia(ctx, intent.ViaMCP)
}

func (h *handler) read(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(v); err != nil {
		writeRefusal(w, refusal.Errorf(refusal.Invalid, "The launcher could not read the request: %v.", err))
		return false
	}
	return true
}

func (h *handler) answer(w http.ResponseWriter, err error, ok any) {
	if err == nil {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(ok)
		return
	}
	re, isRefusal := refusal.As(err)
	if !isRefusal {
		h.log.Error("an act asked of the server failed", "err", err)
		re = refusal.Errorf(refusal.Failed, "The launcher could not do it; its log has the detail.")
	}
	writeRefusal(w, re)
}

func writeRefusal(w http.ResponseWriter, re *refusal.Error) {
	var out refusalOut
	out.Error.Code, out.Error.Message = re.Code, re.Message
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(refusal.Status(re.Code))
	json.NewEncoder(w).Encode(out)
}

// Client asks the server that serves from Root for the acts, and refuses
// with a sentence when none serves there. Serving says whether a server
// holds Root (knowledge.ServerRunning).
type Client struct {
	Root    string
	Serving func(root string) (bool, error)
}

// Say asks the server to journal the owner's words and start the
// engineer's turn on them.
func (c *Client) Say(ctx context.Context, appID string, w request.Say) (request.State, error) {
	var out sayOut
	err := c.call(ctx, "/say", "send it to the engineer", sayIn{App: appID, Say: w, Via: intent.ViaOf(ctx)}, &out)
	return out.State, err
}

// Start asks the server to start the intent's run.
func (c *Client) Start(ctx context.Context, intentID int64) error {
	return c.call(ctx, "/start", "run it", startIn{Intent: intentID, Via: intent.ViaOf(ctx)}, &struct{}{})
}

// call posts in to the server's path and reads its answer into out; to
// says what a server is needed for, in the sentence for a launcher that is
// not serving.
func (c *Client) call(ctx context.Context, path, to string, in, out any) error {
	serving, err := c.Serving(c.Root)
	if err != nil {
		return err
	}
	if !serving {
		return refusal.Errorf(refusal.Conflict, "The launcher is not serving at %s; start `autoapp serve --root %s` to %s.", c.Root, c.Root, to)
	}
	socket := SocketPath(c.Root)
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}}}
	defer hc.CloseIdleConnections()
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://autoapp"+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return refusal.Errorf(refusal.Unavailable, "The launcher serving at %s could not be reached on %s (%v); restart `autoapp serve` to %s.",
			c.Root, socket, unwrapped(err), to)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode != http.StatusOK {
		var r refusalOut
		if err := dec.Decode(&r); err != nil || r.Error.Message == "" {
			return refusal.Errorf(refusal.Failed, "The launcher serving at %s answered %s.", c.Root, resp.Status)
		}
		return refusal.Errorf(r.Error.Code, "%s", r.Error.Message)
	}
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("control: the server's answer: %w", err)
	}
	return nil
}

// unwrapped is the innermost cause of a failed connection, which names
// what went wrong without the URL around it.
func unwrapped(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// Local is the acts as the server's own services do them: its chat turns
// and its executor.
type Local struct {
	Chats interface {
		Say(ctx context.Context, appID string, w request.Say) (request.State, error)
	}
	Runs interface {
		Start(ctx context.Context, intentID int64) error
	}
}

// Say is the chat turns' Say.
func (l Local) Say(ctx context.Context, appID string, w request.Say) (request.State, error) {
	return l.Chats.Say(ctx, appID, w)
}

// Start is the executor's Start.
func (l Local) Start(ctx context.Context, intentID int64) error { return l.Runs.Start(ctx, intentID) }
