package control_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"autoapp/handlers/control"
	"autoapp/intent"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
)

// acts records what the server was asked, and refuses a run of intent 2.
type acts struct {
	said    []request.Say
	saidVia []intent.Via
	started []int64
}

func (a *acts) Say(ctx context.Context, appID string, w request.Say) (request.State, error) {
	a.said, a.saidVia = append(a.said, w), append(a.saidVia, intent.ViaOf(ctx))
	return request.State{ID: 7, AppID: appID, Text: w.Text, Mode: w.Mode, Revision: 1}, nil
}

func (a *acts) Start(ctx context.Context, intentID int64) error {
	if intentID == 2 {
		return refusal.Errorf(refusal.Conflict, "Intent #2 is running; wait for it to end or stop it first.")
	}
	if intentID == 3 {
		return errors.New("disk on fire")
	}
	a.started = append(a.started, intentID)
	return nil
}

// serving is a data folder with its server's door open, until the test ends.
func serving(t *testing.T) (string, *acts) {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "launcher"), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := control.Listen(root)
	if err != nil {
		t.Fatal(err)
	}
	a := &acts{}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- control.Serve(ctx, ln, a, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	t.Cleanup(func() { stop(); <-done })
	return root, a
}

// upAt says a server holds every folder.
func upAt(string) (bool, error) { return true, nil }

// TestTheClientAsksTheServingLauncherAndGetsItsAnswerOrItsRefusal: the
// owner's words and a run reach the server's acts with where they came
// from; a refusal arrives as the same code and sentence; a failure that
// is not one arrives as a sentence, never its text; the socket is the
// owner's alone.
func TestTheClientAsksTheServingLauncherAndGetsItsAnswerOrItsRefusal(t *testing.T) {
	root, a := serving(t)
	c := &control.Client{Root: root, Serving: upAt}
	ctx := intent.WithVia(context.Background(), intent.ViaMCP)

	st, err := c.Say(ctx, "notes", request.Say{Text: "Add tags", Mode: request.ModeGuided, Op: "op-1"})
	if err != nil {
		t.Fatal(err)
	}
	if st.ID != 7 || st.AppID != "notes" || st.Text != "Add tags" || st.Mode != "guided" {
		t.Errorf("the answer = %+v", st)
	}
	if len(a.said) != 1 || a.said[0].Op != "op-1" || a.saidVia[0] != intent.ViaMCP {
		t.Errorf("the server was asked %+v via %v", a.said, a.saidVia)
	}
	if err := c.Start(ctx, 1); err != nil || len(a.started) != 1 || a.started[0] != 1 {
		t.Fatalf("Start: %v, started %v", err, a.started)
	}
	err = c.Start(ctx, 2)
	if re, ok := refusal.As(err); !ok || re.Code != refusal.Conflict || re.Message != "Intent #2 is running; wait for it to end or stop it first." {
		t.Errorf("a refusal arrived as %#v", err)
	}
	err = c.Start(ctx, 3)
	if re, ok := refusal.As(err); !ok || strings.Contains(re.Message, "fire") || !strings.Contains(re.Message, "its log has the detail") {
		t.Errorf("a failure arrived as %#v", err)
	}
	fi, err := os.Stat(control.SocketPath(root))
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("the socket: %v, %v; want a socket of mode 0600", fi.Mode(), err)
	}
}

// TestWithNoServerTheClientSaysToStartOne: no server holds the folder,
// and the sentence says what to run.
func TestWithNoServerTheClientSaysToStartOne(t *testing.T) {
	root := t.TempDir()
	c := &control.Client{Root: root, Serving: func(string) (bool, error) { return false, nil }}
	err := c.Start(context.Background(), 1)
	want := "The launcher is not serving at " + root + "; start `autoapp serve --root " + root + "` to run it."
	if re, ok := refusal.As(err); !ok || re.Message != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	// A server that holds the folder but has no door says so.
	c.Serving = upAt
	err = c.Start(context.Background(), 1)
	if re, ok := refusal.As(err); !ok || !strings.Contains(re.Message, "could not be reached") {
		t.Fatalf("got %v", err)
	}
}

// TestASocketLeftByAStoppedServerIsReplacedAndALiveOneRefused.
func TestASocketLeftByAStoppedServerIsReplacedAndALiveOneRefused(t *testing.T) {
	root, _ := serving(t)
	if _, err := control.Listen(root); err == nil || !strings.Contains(err.Error(), "another server answers") {
		t.Fatalf("a second door on a live one: %v", err)
	}
	stale := t.TempDir()
	os.MkdirAll(filepath.Join(stale, "launcher"), 0o700)
	if err := os.WriteFile(control.SocketPath(stale), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := control.Listen(stale)
	if err != nil {
		t.Fatalf("a stale file was not replaced: %v", err)
	}
	ln.Close()
	if _, err := os.Stat(control.SocketPath(stale)); !os.IsNotExist(err) {
		t.Errorf("closing the door left the socket (%v)", err)
	}
}
