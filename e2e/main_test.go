// Package e2e drives Debian's Chromium through playwright-go against the real
// autoapp binary, started on a random loopback port with a temporary root.
// A browser that cannot start fails the run: these tests never skip.
package e2e

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

var (
	binary  string
	pw      *playwright.Playwright
	browser playwright.Browser
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "autoapp-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: cannot make a temporary folder:", err)
		return 1
	}
	defer os.RemoveAll(dir)

	binary = filepath.Join(dir, "autoapp")
	build := exec.Command("go", "build", "-o", binary, "../cmd/autoapp")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: cannot build the autoapp binary:", err)
		return 1
	}

	driver := os.Getenv("PLAYWRIGHT_DRIVER_PATH")
	if driver == "" {
		driver, _ = filepath.Abs("../.pw-driver")
	}
	chromium := os.Getenv("AUTOAPP_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	pw, err = playwright.Run(&playwright.RunOptions{DriverDirectory: driver, SkipInstallBrowsers: true, Verbose: false})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: FAIL: cannot start the Playwright driver in %s (make test installs it): %v\n", driver, err)
		return 1
	}
	defer pw.Stop()
	browser, err = pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath: playwright.String(chromium),
		Headless:       playwright.Bool(true),
		Args: []string{"--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--no-first-run"},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: FAIL: cannot start Chromium at %s (make test installs it): %v\n", chromium, err)
		return 1
	}
	defer browser.Close()
	return m.Run()
}

// server is one autoapp process with its own root.
type server struct {
	URL     string
	Root    string
	cmd     *exec.Cmd
	out     *strings.Builder
	stopped sync.Once
}

var servingLine = regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+)`)

// startServer runs `autoapp serve` on a random port with a new root and
// stops it with SIGTERM when the test ends, failing the test unless it shuts
// down cleanly.
func startServer(t *testing.T) *server {
	t.Helper()
	return startServerAt(t, t.TempDir())
}

// startServerAt is startServer over an existing root, as a restart is.
func startServerAt(t *testing.T, root string) *server {
	t.Helper()
	cmd := exec.Command(binary, "serve", "--root", root, "--addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &strings.Builder{}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start autoapp serve: %v", err)
	}
	lines := bufio.NewReader(stdout)
	found := make(chan string, 1)
	go func() {
		for {
			line, err := lines.ReadString('\n')
			if m := servingLine.FindStringSubmatch(line); m != nil {
				found <- m[1]
				break
			}
			if err != nil {
				close(found)
				return
			}
		}
		io.Copy(io.Discard, lines)
	}()
	s := &server{Root: root, cmd: cmd, out: out}
	select {
	case url, ok := <-found:
		if !ok {
			cmd.Wait()
			t.Fatalf("autoapp serve exited before serving: %s", out)
		}
		s.URL = url
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("autoapp serve did not start within 20s: %s", out)
	}
	t.Cleanup(func() { s.stop(t) })
	return s
}

// kill ends the server with SIGKILL, as a crash would, and waits for it.
func (s *server) kill(t *testing.T) {
	s.stopped.Do(func() {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	})
}

// stop sends SIGTERM and waits for a clean exit, once.
func (s *server) stop(t *testing.T) {
	s.stopped.Do(func() {
		s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- s.cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("autoapp serve did not stop cleanly on SIGTERM: %v\n%s", err, s.out)
			}
		case <-time.After(15 * time.Second):
			s.cmd.Process.Kill()
			t.Errorf("autoapp serve ignored SIGTERM for 15s")
		}
	})
}

// newPage opens a fresh browser context (no cookies) and fails the test on
// any console error the page logs: a CSP violation, a missing file.
func newPage(t *testing.T) playwright.Page {
	t.Helper()
	ctx, err := browser.NewContext()
	if err != nil {
		t.Fatalf("new browser context: %v", err)
	}
	t.Cleanup(func() { ctx.Close() })
	ctx.SetDefaultTimeout(10000)
	page, err := ctx.NewPage()
	if err != nil {
		t.Fatalf("new page: %v", err)
	}
	page.OnConsole(func(m playwright.ConsoleMessage) {
		// A refused form or fetch answers 4xx on purpose and Chromium logs
		// that; a missing script, style or image is caught below instead.
		if m.Type() == "error" && !strings.HasPrefix(m.Text(), "Failed to load resource: the server responded with a status of 4") {
			t.Errorf("console error on %s: %s", page.URL(), m.Text())
		}
	})
	page.OnResponse(func(r playwright.Response) {
		switch r.Request().ResourceType() {
		case "document", "fetch", "xhr":
		default:
			if r.Status() >= 400 {
				t.Errorf("%s %s answered %d", r.Request().ResourceType(), r.URL(), r.Status())
			}
		}
	})
	return page
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
