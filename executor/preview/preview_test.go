package preview_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"autoapp/executor/acceptance"
	"autoapp/executor/preview"
	"autoapp/intent/app"
	"autoapp/intent/refusal"
	"autoapp/intent/timetest"
	"autoapp/intent/workspace/sandbox"
)

// server is a tiny Go HTTP server built once for every test: it listens on
// 127.0.0.1:$PORT, says hello on / and shows its environment on /env.
var server string

const serverSource = `package main

import (
	"fmt"
	"net/http"
	"os"
	"strings"
)

func main() {
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello from preview")
	})
	http.HandleFunc("/cookies", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "autoapp_session", Value: "planted"})
		http.SetCookie(w, &http.Cookie{Name: "own", Value: "kept"})
		fmt.Fprint(w, "cookie: "+r.Header.Get("Cookie")+"\nhost: "+r.Host)
	})
	http.HandleFunc("/env", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, strings.Join(os.Environ(), "\n"))
	})
	fmt.Println("listening on", os.Getenv("PORT"))
	if err := http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), nil); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
}
`

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "preview-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	for name, text := range map[string]string{"go.mod": "module server\n\ngo 1.22\n", "main.go": serverSource} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	cmd := exec.Command("go", "build", "-o", "server", ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the test server: %v\n%s", err, out)
		return 1
	}
	server = filepath.Join(dir, "server")
	return m.Run()
}

func clock() time.Time { return time.Date(2026, 11, 30, 7, 15, 2, 0, time.UTC) }

func newManager(t *testing.T) *preview.Manager {
	t.Helper()
	m := preview.NewManager(clock, slog.New(slog.NewTextHandler(t.Output(), nil)), sandbox.NewGuard(t.TempDir(), sandbox.Probe()))
	t.Cleanup(m.StopAll)
	return m
}

func command(argv ...string) app.Preview {
	return app.Preview{Command: argv, StartTimeout: app.Duration{Duration: 20 * time.Second}}
}

// workspaceDir is a workspace folder inside a test folder of its own, so
// the .home beside it goes away with the test. It holds the test server as
// ./server: a confined preview runs only programs of the toolchain and of
// its own application folder.
func workspaceDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "workspace")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(server, filepath.Join(dir, "server")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestStartCommandAnswersAndStopEndsItsProcessGroup(t *testing.T) {
	m := newManager(t)
	// The shell leads the group and the server is its child: only killing
	// the whole group frees the port.
	p := command("sh", "-c", "./server & wait")
	info, err := m.Start(context.Background(), "app1", workspaceDir(t), p, "r20261130-071502-1a2b3c4")
	if err != nil {
		t.Fatal(err)
	}

	want := preview.Info{
		AppID:     "app1",
		Release:   "r20261130-071502-1a2b3c4",
		SpawnedAt: clock(),
		URL:       fmt.Sprintf("http://app1.localhost:%d/", info.Port),
		Link:      fmt.Sprintf("http://app1.localhost:%d/", info.Port),
		Port:      info.Port,
		PID:       info.PID,
	}
	if info != want || info.Port == 0 || info.PID == 0 {
		t.Errorf("Info = %+v, want %+v with a port and a pid", info, want)
	}
	if status, body := get(t, info.URL); status != http.StatusOK || body != "hello from preview" {
		t.Errorf("GET / = %d %q, want the server's hello", status, body)
	}
	if got, ok := m.Status("app1"); !ok || got != info {
		t.Errorf("Status = %+v, %v; want %+v, true", got, ok, info)
	}
	if out, ok := m.Output("app1"); !ok || !strings.Contains(out, "listening on ") {
		t.Errorf("Output = %q, %v; want the server's first line", out, ok)
	}

	if err := m.Stop(context.Background(), "app1"); err != nil {
		t.Fatal(err)
	}
	timetest.WaitFor(t, 5*time.Second, "the port to stop answering", func() bool { return !answers(info.URL) })
	if _, ok := m.Status("app1"); ok {
		t.Error("Status reports a preview after Stop")
	}
	if err := m.Stop(context.Background(), "app1"); !hasCode(err, refusal.NotRunning) {
		t.Errorf("Stop again = %v, want %s", err, refusal.NotRunning)
	}
}

func TestStatusForgetsAPreviewKilledFromOutside(t *testing.T) {
	m := newManager(t)
	info, err := m.Start(context.Background(), "app1", workspaceDir(t), command("./server"), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(info.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	timetest.WaitFor(t, 5*time.Second, "Status to report nothing running", func() bool {
		_, ok := m.Status("app1")
		return !ok
	})
	if err := m.Stop(context.Background(), "app1"); !hasCode(err, refusal.NotRunning) {
		t.Errorf("Stop = %v, want %s", err, refusal.NotRunning)
	}
}

func TestStartCommandThatNeverListensTimesOut(t *testing.T) {
	m := newManager(t)
	dir := workspaceDir(t)
	p := app.Preview{
		Command:      []string{"sh", "-c", "sleep 30.4242 & echo warming up; wait"},
		StartTimeout: app.Duration{Duration: 300 * time.Millisecond},
	}
	_, err := m.Start(context.Background(), "app1", dir, p, "r1")
	if !hasCode(err, refusal.Failed) {
		t.Fatalf("Start = %v, want %s", err, refusal.Failed)
	}
	sentence := regexp.MustCompile(`^The preview did not answer on port \d+ within 300ms; its last output: warming up$`)
	if !sentence.MatchString(err.Error()) {
		t.Errorf("error = %q, want it to match %s", err, sentence)
	}
	if _, ok := m.Status("app1"); ok {
		t.Error("Status reports a preview that never answered")
	}
	// Its pid is its namespace's: find it by what it runs.
	timetest.WaitFor(t, 5*time.Second, "the preview's child to be killed", func() bool {
		out, _ := exec.Command("pgrep", "-f", "sleep 30.4242").Output()
		return len(strings.TrimSpace(string(out))) == 0
	})
}

func TestStartCommandThatExitsSaysSo(t *testing.T) {
	m := newManager(t)
	_, err := m.Start(context.Background(), "app1", workspaceDir(t), command("sh", "-c", "echo 'cannot open database' >&2; exit 2"), "r1")
	if !hasCode(err, refusal.Failed) {
		t.Fatalf("Start = %v, want %s", err, refusal.Failed)
	}
	sentence := regexp.MustCompile(`^The preview stopped \(exit status 2\) before it answered on port \d+; its last output: cannot open database$`)
	if !sentence.MatchString(err.Error()) {
		t.Errorf("error = %q, want it to match %s", err, sentence)
	}
}

func TestStartRefusesWhatCannotStart(t *testing.T) {
	tests := []struct {
		name string
		p    app.Preview
	}{
		{"nothing to run", app.Preview{}},
		{"both command and folder", app.Preview{Command: []string{"true"}, Static: "site"}},
		{"no such program", command("no-such-program-autoapp")},
		{"no such folder", app.Preview{Static: "site"}},
		{"folder outside the workspace", app.Preview{Static: "../elsewhere"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t)
			if _, err := m.Start(context.Background(), "app1", workspaceDir(t), tt.p, "r1"); !hasCode(err, refusal.Invalid) {
				t.Errorf("Start = %v, want %s", err, refusal.Invalid)
			}
		})
	}
}

func TestCommandEnvironmentHoldsNoHostSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "secret-value-123")
	m := newManager(t)
	info, err := m.Start(context.Background(), "app1", workspaceDir(t), command("./server"), "r1")
	if err != nil {
		t.Fatal(err)
	}
	_, env := get(t, info.URL+"env")
	if strings.Contains(env, "OPENAI_API_KEY") || strings.Contains(env, "secret-value-123") {
		t.Errorf("the preview saw the host's key; environment:\n%s", env)
	}
	// The preview's own port, in its own network, is not the one the
	// host serves it on.
	if strings.Contains(env, "PORT="+strconv.Itoa(info.Port)+"\n") {
		t.Errorf("the preview listens on the host's port %d itself:\n%s", info.Port, env)
	}
	for _, want := range []string{"PORT=", "LANG=C.UTF-8", "HOME="} {
		if !strings.Contains(env, want) {
			t.Errorf("environment lacks %s:\n%s", want, env)
		}
	}
}

func TestStartStaticServesOnlyItsFolder(t *testing.T) {
	dir := workspaceDir(t)
	files := map[string]string{
		"secret.txt":          "top secret",
		"site/index.html":     "<h1>Welcome</h1>",
		"site/.env":           "TOKEN=abc",
		"site/docs/guide.txt": "the guide",
		"site/docs/.hidden":   "hidden",
	}
	for name, text := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../secret.txt", filepath.Join(dir, "site", "leak.txt")); err != nil {
		t.Fatal(err)
	}

	m := newManager(t)
	info, err := m.Start(context.Background(), "app1", dir, app.Preview{Static: "site"}, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if !info.Static || info.PID != 0 || info.Port == 0 || info.URL != fmt.Sprintf("http://app1.localhost:%d/", info.Port) {
		t.Errorf("Info = %+v, want a static preview on its own port", info)
	}

	tests := []struct {
		path       string
		wantStatus int
		wantBody   string // must appear
	}{
		{"/", http.StatusOK, "<h1>Welcome</h1>"},
		{"/docs/guide.txt", http.StatusOK, "the guide"},
		{"/docs/", http.StatusOK, "guide.txt"},
		{"/.env", http.StatusNotFound, ""},
		{"/docs/.hidden", http.StatusNotFound, ""},
		{"/../secret.txt", http.StatusBadRequest, ""},
		{"/docs/%2e%2e/%2e%2e/secret.txt", http.StatusBadRequest, ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			status, body := get(t, strings.TrimSuffix(info.URL, "/")+tt.path)
			if status != tt.wantStatus || !strings.Contains(body, tt.wantBody) {
				t.Errorf("GET %s = %d %q, want %d with %q", tt.path, status, body, tt.wantStatus, tt.wantBody)
			}
			for _, hidden := range []string{"top secret", "TOKEN=abc", ".hidden", ".env"} {
				if strings.Contains(body, hidden) {
					t.Errorf("GET %s shows %q", tt.path, hidden)
				}
			}
		})
	}
	t.Run("symlink out of the folder", func(t *testing.T) {
		status, body := get(t, info.URL+"leak.txt")
		if status != http.StatusForbidden || strings.Contains(body, "top secret") {
			t.Errorf("GET /leak.txt = %d %q, want 403", status, body)

		}
	})

	if err := m.Stop(context.Background(), "app1"); err != nil {
		t.Fatal(err)
	}
	timetest.WaitFor(t, 5*time.Second, "the static listener to close", func() bool { return !answers(info.URL) })
}

// TestAStaticPreviewServesOnlyRegularFiles: a named pipe, a device or a
// socket the engineer's code put in the static folder answers 403 at
// once, never waited on nor streamed; a link that stays in the folder is
// served as it always was.
func TestAStaticPreviewServesOnlyRegularFiles(t *testing.T) {
	dir := workspaceDir(t)
	site := filepath.Join(dir, "site")
	if err := os.MkdirAll(site, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(site, "index.html"), []byte("<h1>Welcome</h1>"), 0o644)
	if err := os.Symlink("index.html", filepath.Join(site, "home.html")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(site, "pipe.html"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths := []string{"/pipe.html"}
	// A character device like /dev/zero, where the machine lets root make one.
	if syscall.Mknod(filepath.Join(site, "zero.html"), syscall.S_IFCHR|0o644, 1<<8|5) == nil {
		paths = append(paths, "/zero.html")
	}
	m := newManager(t)
	info, err := m.Start(context.Background(), "app1", dir, app.Preview{Static: "site"}, "r1")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		t.Run(p, func(t *testing.T) {
			client := &http.Client{Transport: acceptance.LoopbackTransport(), Timeout: time.Second}
			resp, err := client.Get(strings.TrimSuffix(info.URL, "/") + p)
			if err != nil {
				t.Fatalf("GET %s did not answer within a second: %v", p, err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("GET %s = %d, want 403", p, resp.StatusCode)
			}
		})
	}
	if status, body := get(t, info.URL+"home.html"); status != http.StatusOK || body != "<h1>Welcome</h1>" {
		t.Errorf("GET /home.html = %d %q, want the page it links to", status, body)
	}
}

func TestStartReplacesTheRunningPreview(t *testing.T) {
	dir := workspaceDir(t)
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := newManager(t)
	old, err := m.Start(context.Background(), "app1", dir, command("./server"), "r1")
	if err != nil {
		t.Fatal(err)
	}
	next, err := m.Start(context.Background(), "app1", dir, app.Preview{Static: "."}, "r2")
	if err != nil {
		t.Fatal(err)
	}
	timetest.WaitFor(t, 5*time.Second, "the old preview to stop answering", func() bool { return !answers(old.URL) })
	if got, ok := m.Status("app1"); !ok || got != next || got.Release != "r2" {
		t.Errorf("Status = %+v, %v; want the new preview %+v", got, ok, next)
	}
	if status, body := get(t, next.URL); status != http.StatusOK || body != "old" {
		t.Errorf("GET / = %d %q, want the static index", status, body)
	}
}

func TestStopAllStopsEveryPreview(t *testing.T) {
	m := newManager(t)
	staticDir := workspaceDir(t)
	if err := os.WriteFile(filepath.Join(staticDir, "index.html"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := m.Start(context.Background(), "a", workspaceDir(t), command("./server"), "r1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Start(context.Background(), "b", staticDir, app.Preview{Static: "."}, "r1")
	if err != nil {
		t.Fatal(err)
	}

	m.StopAll()
	for _, info := range []preview.Info{a, b} {
		timetest.WaitFor(t, 5*time.Second, "preview "+info.AppID+" to stop answering", func() bool { return !answers(info.URL) })
		if _, ok := m.Status(info.AppID); ok {
			t.Errorf("Status(%s) reports a preview after StopAll", info.AppID)
		}
	}
	if _, err := m.Start(context.Background(), "a", staticDir, app.Preview{Static: "."}, "r2"); !hasCode(err, refusal.Failed) {
		t.Errorf("Start after StopAll = %v, want %s", err, refusal.Failed)
	}
}

func TestStopAllEndsAStartInProgress(t *testing.T) {
	m := newManager(t)
	dir := workspaceDir(t)
	p := app.Preview{
		Command:      []string{"sh", "-c", "echo > started; exec sleep 30"},
		StartTimeout: app.Duration{Duration: time.Minute},
	}
	done := make(chan error, 1)
	go func() {
		_, err := m.Start(context.Background(), "app1", dir, p, "r1")
		done <- err
	}()
	timetest.WaitFor(t, 5*time.Second, "the preview command to run", func() bool {
		_, err := os.Stat(filepath.Join(dir, "started"))
		return err == nil
	})
	m.StopAll()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Start succeeded after StopAll")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("StopAll left a start waiting for its minute")
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	client := &http.Client{Transport: acceptance.LoopbackTransport(), Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func answers(url string) bool {
	client := &http.Client{Transport: acceptance.LoopbackTransport(), Timeout: time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

func hasCode(err error, code refusal.Code) bool {
	var e *refusal.Error
	return errors.As(err, &e) && e.Code == code
}

// BenchmarkPreviewStart starts and stops the test server as a preview,
// confined and unconfined (the owner's choice in Settings): the difference
// is what the sandbox costs a preview start.
func BenchmarkPreviewStart(b *testing.B) {
	if !sandbox.Probe().Confines() {
		b.Fatalf("this machine cannot confine: %s", sandbox.Probe().Why)
	}
	for _, name := range []string{"confined", "unconfined"} {
		b.Run(name, func(b *testing.B) {
			root := b.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "launcher"), 0o700); err != nil {
				b.Fatal(err)
			}
			g := sandbox.NewGuard(root, sandbox.Probe())
			if name == "unconfined" {
				if err := g.SetUnconfined(true); err != nil {
					b.Fatal(err)
				}
			}
			m := preview.NewManager(clock, nil, g)
			defer m.StopAll()
			dir := filepath.Join(b.TempDir(), "workspace")
			if err := os.Mkdir(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.Link(server, filepath.Join(dir, "server")); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := m.Start(context.Background(), "app1", dir, command("./server"), "r1"); err != nil {
					b.Fatal(err)
				}
				if err := m.Stop(context.Background(), "app1"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestAPreviewAnswersOnlyAtItsOwnNameAndNeverSeesTheConsolesCookies asks
// a preview at every loopback form of its port and at its own name with
// the console's cookies: only its own name is answered, the console's
// cookies are stripped on the way in, and one it sets is dropped on the
// way out. Its own cookies pass.
func TestAPreviewAnswersOnlyAtItsOwnNameAndNeverSeesTheConsolesCookies(t *testing.T) {
	m := newManager(t)
	info, err := m.Start(context.Background(), "app1", workspaceDir(t), command("./server"), "r1")
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: acceptance.LoopbackTransport(), Timeout: 5 * time.Second}
	port := strconv.Itoa(info.Port)
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port, "other.localhost:" + port, "app1.localhost"} {
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+port+"/cookies", nil)
		req.Host = host
		req.Header.Set("Cookie", "autoapp_session=s3cret")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMisdirectedRequest || strings.Contains(string(b), "s3cret") {
			t.Errorf("Host %s: %d %q, want 421 and nothing of the preview's", host, resp.StatusCode, b)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, info.Link+"cookies", nil)
	req.Header.Add("Cookie", "autoapp_session=s3cret; own=1; AUTOAPP_CSRF=c5rf")
	req.Header.Add("Cookie", "autoapp_csrf=c5rf")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "cookie: own=1\n") || strings.Contains(string(b), "s3cret") || strings.Contains(string(b), "c5rf") {
		t.Errorf("at its own name: %d %q, want only its own cookie", resp.StatusCode, b)
	}
	var set []string
	for _, c := range resp.Cookies() {
		set = append(set, c.Name)
	}
	if !slices.Equal(set, []string{"own"}) {
		t.Errorf("the answer sets cookies %v, want only its own", set)
	}
}

// TestAPreviewPastALimitIsStoppedAndSaysWhich starts a preview that, once
// it answers, starts 500 processes: the sandbox stops it, and the manager
// says which limit ended it.
func TestAPreviewPastALimitIsStoppedAndSaysWhich(t *testing.T) {
	m := newManager(t)
	p := command("sh", "-c", "./server & sleep 1; for i in $(seq 500); do sleep 30 & done; wait")
	if _, err := m.Start(context.Background(), "app1", workspaceDir(t), p, "r1"); err != nil {
		t.Fatal(err)
	}
	timetest.WaitFor(t, 20*time.Second, "the preview to be stopped", func() bool {
		_, ok := m.Status("app1")
		return !ok
	})
	if got, want := m.EndedWhy("app1"), "The preview started more than 256 processes and was stopped."; got != want {
		t.Errorf("EndedWhy = %q, want %q", got, want)
	}
}
