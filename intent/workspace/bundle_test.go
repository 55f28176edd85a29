package workspace_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"autoapp/intent/workspace"
)

// TestABundleMakesTheSameRepositoryAgain is a differential test against
// git itself: a repository with two branches, a tag, and HEAD on the
// second branch is bundled and made again from the bundle; git names the
// same refs at the same commits, the same history, HEAD on the same
// branch and a clean working tree, and the workspace opens.
func TestABundleMakesTheSameRepositoryAgain(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, map[string]string{"app.go": appGo})
	dir := w.Dir()
	git(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "tag", "-a", "v1", "-m", "The first release")
	git(t, dir, "checkout", "-q", "-b", "tags")
	writeFiles(t, dir, map[string]string{"tags.go": "package main\n\nvar tags []string\n"})
	git(t, dir, "add", "tags.go")
	git(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "Tags")
	git(t, dir, "branch", "kept", "HEAD~1")

	var bundle bytes.Buffer
	if err := workspace.Bundle(t.Context(), dir, &bundle); err != nil {
		t.Fatal(err)
	}
	headName, err := workspace.HeadName(t.Context(), dir)
	if err != nil || headName != "refs/heads/tags" {
		t.Fatalf("HeadName = %q, %v; want refs/heads/tags", headName, err)
	}
	path := filepath.Join(t.TempDir(), "workspace.bundle")
	if err := os.WriteFile(path, bundle.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(t.TempDir(), "workspace")
	if err := workspace.FromBundle(t.Context(), path, again, headName); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"for-each-ref", "--format=%(refname) %(objectname) %(objecttype)"},
		{"log", "--all", "--format=%H %P %an %ad %s"},
		{"symbolic-ref", "HEAD"},
		{"ls-files", "-s"},
	} {
		if got, want := git(t, again, args...), git(t, dir, args...); got != want {
			t.Errorf("git %v answers\n%s\nin the repository made from the bundle, and\n%s\nin the original", args, got, want)
		}
	}
	if got := git(t, again, "status", "--porcelain"); got != "" {
		t.Errorf("the working tree is not HEAD's:\n%s", got)
	}
	if b, err := os.ReadFile(filepath.Join(again, "tags.go")); err != nil || string(b) != "package main\n\nvar tags []string\n" {
		t.Errorf("tags.go is %q, %v", b, err)
	}
	c, err := workspace.Open(again, clock)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()

	if err := workspace.FromBundle(t.Context(), path, again, headName); err == nil {
		t.Fatal("a repository was made over one that is there")
	}
	if err := workspace.FromBundle(t.Context(), path, filepath.Join(t.TempDir(), "w"), "--upload-pack=x"); err == nil {
		t.Fatal("a HEAD that is neither a branch nor a commit was taken")
	}
}

// TestADetachedHeadComesBackDetached: HeadName names the commit, and the
// repository made from the bundle is at it, detached.
func TestADetachedHeadComesBackDetached(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, map[string]string{"app.go": appGo})
	dir := w.Dir()
	rev := head(t, w)
	git(t, dir, "checkout", "-q", "--detach")
	headName, err := workspace.HeadName(t.Context(), dir)
	if err != nil || headName != rev {
		t.Fatalf("HeadName = %q, %v; want %s", headName, err, rev)
	}
	path := filepath.Join(t.TempDir(), "b")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := workspace.Bundle(t.Context(), dir, f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	again := filepath.Join(t.TempDir(), "workspace")
	if err := workspace.FromBundle(t.Context(), path, again, headName); err != nil {
		t.Fatal(err)
	}
	if got := git(t, again, "rev-parse", "HEAD"); got != rev {
		t.Fatalf("HEAD is %s, want %s", got, rev)
	}
	if out, err := workspace.Git(t.Context(), again, "symbolic-ref", "-q", "HEAD"); err == nil {
		t.Fatalf("HEAD names a branch: %s", out)
	}
}
