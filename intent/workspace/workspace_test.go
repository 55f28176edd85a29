package workspace_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
)

// clock is the fixed time every test workspace commits at.
func clock() time.Time { return time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC) }

// newWorkspace makes a real git repository in a temp folder holding files,
// with its first commit, and opens it.
func newWorkspace(t *testing.T, files map[string]string) *workspace.Workspace {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	if _, err := workspace.InitRepository(t.Context(), dir, "Create application", clock); err != nil {
		t.Fatalf("InitRepository: %v", err)
	}
	w, err := workspace.Open(dir, clock)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// git runs git in dir for a test to look at the repository.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func head(t *testing.T, w *workspace.Workspace) string {
	t.Helper()
	h, err := w.Head(t.Context())
	if err != nil {
		t.Fatalf("Head: %v", err)
	}
	return h
}

// wantProblem fails unless err is Problems with one for field whose
// sentence contains text.
func wantProblem(t *testing.T, err error, field, text string) {
	t.Helper()
	ps, ok := workspace.AsProblems(err)
	if !ok {
		t.Fatalf("error = %v, want problems naming %s", err, field)
	}
	for _, p := range ps {
		if p.Field == field && strings.Contains(p.Message, text) {
			return
		}
	}
	t.Fatalf("problems = %q, want %s: …%s…", ps.Error(), field, text)
}

// wantUntouched fails unless the workspace is still at rev, with nothing
// changed, staged or added.
func wantUntouched(t *testing.T, w *workspace.Workspace, rev string) {
	t.Helper()
	if got := head(t, w); got != rev {
		t.Errorf("HEAD moved from %s to %s", rev, got)
	}
	if st := git(t, w.Dir(), "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("workspace changed:\n%s", st)
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	writeFiles(t, repo, map[string]string{"sub/a.txt": "a\n"})
	if _, err := workspace.InitRepository(t.Context(), repo, "Create application", clock); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		dir     string
		wantErr bool
	}{
		{"top of a repository", repo, false},
		{"folder that is no repository", t.TempDir(), true},
		{"folder inside a repository", filepath.Join(repo, "sub"), true},
		{"missing folder", filepath.Join(repo, "nope"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := workspace.Open(tt.dir, clock)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Open error = %v, want error %v", err, tt.wantErr)
			}
			if w != nil {
				w.Close()
			}
		})
	}
}

func TestInitRepository(t *testing.T) {
	t.Parallel()
	t.Run("first commit holds the files", func(t *testing.T) {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"autoapp.json": "{}\n", "web/index.html": "<h1>Hi</h1>\n"})
		rev, err := workspace.InitRepository(t.Context(), dir, "Create application from the static site template", clock)
		if err != nil {
			t.Fatal(err)
		}
		if got := git(t, dir, "rev-parse", "HEAD"); got != rev {
			t.Errorf("revision = %s, HEAD = %s", rev, got)
		}
		if got := git(t, dir, "ls-files"); got != "autoapp.json\nweb/index.html" {
			t.Errorf("committed files = %q", got)
		}
		want := "Autoapp host <host@autoapp.local>|Create application from the static site template|1741064767"
		if got := git(t, dir, "log", "-1", "--format=%an <%ae>|%s|%at"); got != want {
			t.Errorf("commit = %q, want %q", got, want)
		}
	})
	t.Run("already a repository", func(t *testing.T) {
		w := newWorkspace(t, map[string]string{"a.txt": "a\n"})
		if _, err := workspace.InitRepository(t.Context(), w.Dir(), "again", clock); err == nil {
			t.Fatal("InitRepository of a repository succeeded")
		}
	})
	t.Run("no message", func(t *testing.T) {
		_, err := workspace.InitRepository(t.Context(), t.TempDir(), " ", clock)
		wantProblem(t, err, "message", "give the first commit a message")
	})
}

func TestProblemsAreErrors(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, map[string]string{"a.txt": "a\n"})
	_, err := w.Read("../x", 0, 0)
	var ps refusal.Problems
	if !errors.As(err, &ps) || len(ps) != 1 || ps[0].Field != "path" {
		t.Fatalf("error = %#v, want one problem naming path", err)
	}
}
