package gocache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Shared is the host's cache of the standard library, in a folder no
// application writes: the host fills it (Warm) and every Go build reads
// it through the cache program (Build).
type Shared struct {
	dir  string
	self string

	mu      sync.Mutex
	warmed  bool
	warming chan struct{} // open while a warm-up runs
	err     error         // the last warm-up's failure
	failed  time.Time     // when it failed
}

// retryAfter is how long a failed warm-up is not tried again: each build
// in between compiles its own standard library rather than wait for a
// warm-up that would likely fail the same way.
const retryAfter = 10 * time.Minute

// Open is the shared cache in dir, served by this program's own file,
// which a confined build may run. Nothing is written until Warm.
func Open(dir string) (*Shared, error) {
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return nil, fmt.Errorf("gocache: this program cannot find its own file: %w", err)
	}
	return &Shared{dir: filepath.Clean(dir), self: self}, nil
}

// DefaultDir is where the host keeps it: autoapp/go-std in the user's
// cache folder, one for every data folder of this user, since what is in
// it is the toolchain's own.
func DefaultDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("gocache: %w", err)
	}
	return filepath.Join(d, "autoapp", "go-std"), nil
}

// Waits says a build would wait for a warm-up now: this process has not
// warmed the shared folder, and no warm-up failed in the last retryAfter.
func (s *Shared) Waits() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.warmed && (s.err == nil || time.Since(s.failed) >= retryAfter)
}

// Dir is the shared folder.
func (s *Shared) Dir() string { return s.dir }

// Setup is what a build adds to run with the shared cache: the variable
// that names the cache program, the folder it reads and the program it
// runs.
type Setup struct {
	Env      []string
	Read     []string
	Programs []string
}

// Build is the setup of a build whose own cache is own: lookups go to own
// and then to the shared folder, and whatever the build puts goes to own.
// It is empty when the program's or a folder's path cannot be written in
// GOCACHEPROG (it holds both kinds of quotes); the build then uses its own
// GOCACHE alone.
func (s *Shared) Build(own string) Setup {
	prog, ok := command(s.self, Flag, own, s.dir)
	if !ok {
		return Setup{}
	}
	return Setup{Env: []string{"GOCACHEPROG=" + prog}, Read: []string{s.dir}, Programs: []string{s.self}}
}

// Warm builds the standard library as the host, into the shared folder,
// with goBin and the environment env gives for a scratch folder of the
// host's (a build's environment, its folders in scratch). It runs once
// for this process when it succeeds. Callers wait for the one warm-up in
// progress, each as long as its ctx allows; the warm-up itself goes on
// (for at most warmTimeout), since what it builds serves every later
// build. Another process warming the same folder is waited for through a
// lock on the folder. Once warm, a warm-up finds everything there and
// takes about a second. A failed warm-up is answered again, not retried,
// for retryAfter.
func (s *Shared) Warm(ctx context.Context, goBin string, env func(scratch string) []string) error {
	s.mu.Lock()
	if s.warmed {
		s.mu.Unlock()
		return nil
	}
	if s.warming == nil && s.err != nil && time.Since(s.failed) < retryAfter {
		err := s.err
		s.mu.Unlock()
		return err
	}
	if s.warming == nil {
		done := make(chan struct{})
		s.warming = done
		go func() {
			err := s.warm(goBin, env)
			s.mu.Lock()
			s.warmed, s.err, s.failed, s.warming = err == nil, err, time.Now(), nil
			s.mu.Unlock()
			close(done)
		}()
	}
	done := s.warming
	s.mu.Unlock()
	select {
	case <-done:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.warmed {
			return nil
		}
		return s.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// warmTimeout bounds one warm-up: the standard library takes one to two
// minutes on a small machine.
const warmTimeout = 15 * time.Minute

func (s *Shared) warm(goBin string, env func(scratch string) []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), warmTimeout)
	defer cancel()
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("gocache: %w", err)
	}
	unlock, err := lockDir(ctx, s.dir)
	if err != nil {
		return err
	}
	defer unlock()
	prog, ok := command(s.self, Flag, s.dir)
	if !ok {
		return fmt.Errorf("gocache: the path %s cannot be named in GOCACHEPROG", s.self)
	}
	scratch, err := os.MkdirTemp("", "autoapp-go-std-")
	if err != nil {
		return fmt.Errorf("gocache: %w", err)
	}
	defer os.RemoveAll(scratch)
	// The host's own go settings file is not read: a build reads none.
	environ := append(withoutCache(env(scratch)), "GOENV=off", "GOCACHE="+filepath.Join(scratch, "go-build"), "GOCACHEPROG="+prog)
	run := func(dir string, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir, cmd.Env = dir, environ
		// Ends with the server, however it ends.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("gocache: go %s: %v: %s", strings.Join(args, " "), err, lastLines(stderr.String(), 5))
		}
		return out, nil
	}
	list, err := run(scratch, "list", "-e", "-f", "{{if ne .Name \"main\"}}{{.ImportPath}}{{end}}", "std")
	if err != nil {
		return err
	}
	// A program that imports every package of the standard library a
	// program may import: vetting it compiles them all and computes the
	// facts go vet keeps of each, which is what a build's go build and go
	// vet ask the cache for.
	warm := filepath.Join(scratch, "warm")
	if err := os.MkdirAll(warm, 0o755); err != nil {
		return fmt.Errorf("gocache: %w", err)
	}
	if err := os.WriteFile(filepath.Join(warm, "go.mod"), []byte("module autoappwarm\n\ngo 1.22\n"), 0o644); err != nil {
		return fmt.Errorf("gocache: %w", err)
	}
	if err := os.WriteFile(filepath.Join(warm, "main.go"), importingAll(string(list)), 0o644); err != nil {
		return fmt.Errorf("gocache: %w", err)
	}
	if _, err := run(warm, "vet", "."); err != nil {
		return err
	}
	return nil
}

// importingAll is a main package importing each package of list (one
// import path a line) that a program may import: none internal, none
// vendored.
func importingAll(list string) []byte {
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n")
	for _, p := range strings.Fields(list) {
		if p == "unsafe" || strings.HasPrefix(p, "vendor/") || p == "internal" || strings.HasPrefix(p, "internal/") ||
			strings.Contains(p, "/internal/") || strings.HasSuffix(p, "/internal") {
			continue
		}
		fmt.Fprintf(&b, "\t_ %q\n", p)
	}
	b.WriteString(")\n\nfunc main() {}\n")
	return []byte(b.String())
}

// withoutCache is env without the variables warm sets itself.
func withoutCache(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GOCACHE=") && !strings.HasPrefix(kv, "GOCACHEPROG=") {
			out = append(out, kv)
		}
	}
	return out
}

// lockDir holds an exclusive lock on dir/.lock until unlock, waiting for
// another holder as long as ctx allows.
func lockDir(ctx context.Context, dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("gocache: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("gocache: locking %s: %w", dir, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("gocache: waiting for another warm-up: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// command writes args as GOCACHEPROG is read (cmd/go splits it on spaces,
// taking '…' or "…" whole); false when an argument that needs quoting
// holds both quotes.
func command(args ...string) (string, bool) {
	parts := make([]string, len(args))
	for i, a := range args {
		plain := a != "" && !strings.ContainsAny(a, " \t\n\r") && a[0] != '\'' && a[0] != '"'
		switch {
		case plain:
			parts[i] = a
		case !strings.Contains(a, "'"):
			parts[i] = "'" + a + "'"
		case !strings.Contains(a, `"`):
			parts[i] = `"` + a + `"`
		default:
			return "", false
		}
	}
	return strings.Join(parts, " "), true
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
