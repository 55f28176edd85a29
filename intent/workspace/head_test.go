package workspace_test

import (
	"os"
	"path/filepath"
	"testing"

	"autoapp/intent/workspace"
)

// Head reads the repository's files rather than start git, and says what
// git says in every state a workspace can be in: after a commit, on a
// detached HEAD, after git packs its refs and objects, on a branch with
// an odd name, and when the files were rewritten to name a commit that
// is not there.
func TestHeadSaysWhatGitSays(t *testing.T) {
	w := newWorkspace(t, map[string]string{"index.html": "<h1>Hi</h1>\n"})
	dir := w.Dir()
	same := func(when string) {
		t.Helper()
		if got, want := head(t, w), git(t, dir, "rev-parse", "--verify", "HEAD^{commit}"); got != want {
			t.Fatalf("%s: Head = %s, git says %s", when, got, want)
		}
	}
	same("after the first commit")

	writeFiles(t, dir, map[string]string{"about.html": "<h1>About</h1>\n"})
	git(t, dir, "add", "-A")
	git(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "About")
	same("after a commit")

	git(t, dir, "checkout", "-q", "--detach", "HEAD~1")
	same("on a detached HEAD")
	git(t, dir, "checkout", "-q", "-")

	git(t, dir, "checkout", "-q", "-b", "feature/tags.v2")
	same("on a branch with slashes and dots")

	git(t, dir, "gc", "-q", "--prune=now")
	same("after git packed its refs and objects")

	// A branch file rewritten to name a commit that does not exist: git
	// refuses it, and so does Head.
	git(t, dir, "checkout", "-q", "-b", "broken")
	if err := os.WriteFile(filepath.Join(dir, ".git", "refs", "heads", "broken"), []byte("0123456789012345678901234567890123456789\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if h, err := w.Head(t.Context()); err == nil {
		t.Fatalf("Head on a branch naming no commit = %s, want an error as git gives", h)
	}
}

// Open remembers a directory it checked, and checks again whatever
// changed: a repository whose .git went, or another folder put where the
// workspace was, is no workspace.
func TestOpenChecksAgainWhatChanged(t *testing.T) {
	w := newWorkspace(t, map[string]string{"index.html": "<h1>Hi</h1>\n"})
	dir := w.Dir()
	again, err := workspace.Open(dir, clock)
	if err != nil {
		t.Fatalf("opening the workspace again: %v", err)
	}
	again.Close()

	if err := os.Rename(filepath.Join(dir, ".git"), filepath.Join(dir, "git-was-here")); err != nil {
		t.Fatal(err)
	}
	if _, err := workspace.Open(dir, clock); err == nil {
		t.Fatal("a folder whose .git went opened as a workspace")
	}
	if err := os.Rename(filepath.Join(dir, "git-was-here"), filepath.Join(dir, ".git")); err != nil {
		t.Fatal(err)
	}
	if ws, err := workspace.Open(dir, clock); err != nil {
		t.Fatalf("the repository back in place: %v", err)
	} else {
		ws.Close()
	}

	// Another folder, no repository, where the workspace was.
	if err := os.Rename(dir, dir+"-old"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := workspace.Open(dir, clock); err == nil {
		t.Fatal("a folder holding an empty .git where the workspace was opened as a workspace")
	}
}

// A full hash is resolved from the repository's files only when it names
// a commit: a file's hash is no revision to compare, as git says.
func TestAHashThatIsNoCommitIsNoRevision(t *testing.T) {
	w := newWorkspace(t, map[string]string{"index.html": "<h1>Hi</h1>\n"})
	blob := git(t, w.Dir(), "hash-object", "-w", "index.html")
	if _, err := w.ShortStat(t.Context(), blob, head(t, w)); err == nil {
		t.Fatalf("ShortStat from the file's hash %s answered", blob)
	}
	if _, err := w.ShortStat(t.Context(), head(t, w), head(t, w)); err != nil {
		t.Fatalf("ShortStat from the head to itself: %v", err)
	}
}
