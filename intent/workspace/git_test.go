package workspace_test

import (
	"context"
	"crypto/sha1"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"autoapp/intent/workspace"
)

func TestShortStat(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, map[string]string{"app.go": appGo})
	rev1 := head(t, w)
	edited, err := w.Edit(t.Context(), "app.go", []workspace.Hunk{{Find: "\tx := 1\n\ty := 2\n", Replace: "\tx := 10\n\ty := 20\n"}}, workspace.CommitMeta{})
	if err != nil {
		t.Fatal(err)
	}
	created, err := w.Change(t.Context(), []workspace.FileChange{{Path: "tags.go", Action: workspace.Create, Content: "package main\n\nvar tags []string\n"}}, workspace.CommitMeta{})
	if err != nil {
		t.Fatal(err)
	}
	rev2, rev3 := edited.Revision, created.Revision

	tests := []struct {
		name     string
		from, to string
		want     workspace.Stat
	}{
		{"one edit", rev1, rev2, workspace.Stat{Files: 1, Insertions: 2, Deletions: 2, ChangedLines: 4}},
		{"a created file", rev2, rev3, workspace.Stat{Files: 1, Insertions: 3, ChangedLines: 3}},
		{"both", rev1, rev3, workspace.Stat{Files: 2, Insertions: 5, Deletions: 2, ChangedLines: 7}},
		{"backwards", rev3, rev1, workspace.Stat{Files: 2, Insertions: 2, Deletions: 5, ChangedLines: 7}},
		{"no change", rev2, rev2, workspace.Stat{}},
		{"a short revision", rev1[:10], "HEAD", workspace.Stat{Files: 2, Insertions: 5, Deletions: 2, ChangedLines: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := w.ShortStat(t.Context(), tt.from, tt.to)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ShortStat = %+v, want %+v", got, tt.want)
			}
		})
	}
	if created.Stat != tests[1].want {
		t.Errorf("the change's own stat = %+v, want %+v", created.Stat, tests[1].want)
	}

	refusals := []struct {
		name, from, to, field, text string
	}{
		{"unknown revision", "0123456789abcdef", rev1, "from", "not a commit"},
		{"an option", rev1, "--output=/tmp/x", "to", "not a revision"},
		{"empty", "", rev1, "from", "give a revision"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			_, err := w.ShortStat(t.Context(), tt.from, tt.to)
			wantProblem(t, err, tt.field, tt.text)
		})
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, map[string]string{"app.go": appGo})
	rev1 := head(t, w)
	small, err := w.Edit(t.Context(), "app.go", []workspace.Hunk{{Find: "y := 2", Replace: "y := 20"}}, workspace.CommitMeta{})
	if err != nil {
		t.Fatal(err)
	}
	big, err := w.Change(t.Context(), []workspace.FileChange{{Path: "big.txt", Action: workspace.Create, Content: numbered("a fairly long line of text", 20000)}}, workspace.CommitMeta{})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("small", func(t *testing.T) {
		d, err := w.Diff(t.Context(), rev1, small.Revision)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"--- a/app.go", "+++ b/app.go", "-\ty := 2\n", "+\ty := 20\n"} {
			if !strings.Contains(d, want) {
				t.Errorf("diff lacks %q:\n%s", want, d)
			}
		}
	})
	t.Run("cut at the cap", func(t *testing.T) {
		d, err := w.Diff(t.Context(), small.Revision, big.Revision)
		if err != nil {
			t.Fatal(err)
		}
		if len(d) > workspace.MaxDiffBytes+200 || !strings.HasSuffix(d, "and at most 256 KiB is shown.]\n") {
			t.Errorf("diff is %d bytes, ends %q", len(d), d[max(0, len(d)-120):])
		}
	})
	t.Run("unknown revision", func(t *testing.T) {
		_, err := w.Diff(t.Context(), rev1, "nope")
		wantProblem(t, err, "to", "not a commit")
	})
}

func TestGitStopsWhenItsContextEnds(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, map[string]string{"app.go": appGo})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := workspace.Git(ctx, w.Dir(), "log", "--format=%H"); err == nil {
		t.Fatal("git ran under a context that had ended")
	}
	if _, err := w.Head(ctx); err == nil {
		t.Fatal("Head read the workspace under a context that had ended")
	}
}

func TestCloneCopiesTheRepository(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, map[string]string{"app.go": appGo})
	dir := filepath.Join(t.TempDir(), "workspace")
	if err := workspace.Clone(t.Context(), w.Dir(), dir); err != nil {
		t.Fatal(err)
	}
	c, err := workspace.Open(dir, clock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, want := head(t, c), head(t, w); got != want {
		t.Fatalf("the clone is at %s, its source at %s", got, want)
	}
	if err := workspace.Clone(t.Context(), w.Dir(), dir); err == nil {
		t.Fatal("a clone into a folder that exists was made")
	}
}

// TestATasksChangeIsCountedAsItCommits: commits that name the revision a
// task began at (CommitMeta.Since) have git count the task's change with
// the commit, so that ShortStat from there to the last of them, asked
// from a workspace opened again, answers git's count without a git to
// start.
func TestATasksChangeIsCountedAsItCommits(t *testing.T) {
	w := newWorkspace(t, map[string]string{"app.go": appGo})
	began := head(t, w)
	meta := workspace.CommitMeta{RunID: "intent-1-0001-x-a1", Since: began}
	first, err := w.Change(t.Context(), []workspace.FileChange{{Path: "tags.go", Action: workspace.Create, Content: "package main\n\nvar tags []string\n"}}, meta)
	if err != nil {
		t.Fatal(err)
	}
	// The first commit's own summary is the task's change so far.
	path := os.Getenv("PATH")
	t.Setenv("PATH", t.TempDir())
	if got, err := w.ShortStat(t.Context(), began, first.Revision); err != nil || got != first.Stat || got.Files != 1 {
		t.Fatalf("ShortStat after the first commit = %+v, %v; its summary counted %+v", got, err, first.Stat)
	}
	t.Setenv("PATH", path)
	last, err := w.Edit(t.Context(), "app.go", []workspace.Hunk{{Find: "\tx := 1\n\ty := 2\n", Replace: "\tx := 10\n\ty := 20\n"}}, meta)
	if err != nil {
		t.Fatal(err)
	}
	want := workspace.Stat{Files: 2, Insertions: 5, Deletions: 2, ChangedLines: 7}
	if got := git(t, w.Dir(), "diff", "--shortstat", began, last.Revision); got != "2 files changed, 5 insertions(+), 2 deletions(-)" {
		t.Fatalf("git counts %q", got)
	}

	t.Setenv("PATH", t.TempDir()) // from here no git can start
	again, err := workspace.Open(w.Dir(), clock)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	got, err := again.ShortStat(t.Context(), began, last.Revision)
	if err != nil {
		t.Fatalf("ShortStat of the task's change: %v", err)
	}
	if got != want {
		t.Errorf("ShortStat = %+v, want %+v", got, want)
	}
	// Any other pair is git's to count.
	if _, err := again.ShortStat(t.Context(), last.Previous, last.Revision); err == nil {
		t.Error("ShortStat of another pair answered without git")
	}
}

// TestGitKeepsTheRepositoryInOrderOnlyWhenAsked: the host's commits never
// start git's maintenance, however many loose objects they leave; Maintain
// (which the executor calls when a run ends) lets git pack them, and the
// workspace reads and commits as before.
func TestGitKeepsTheRepositoryInOrderOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, map[string]string{"site/index.html": "<h1>Hi</h1>\n"})
	dir := w.Dir()
	// git gc --auto packs once it guesses 6,700 loose objects: 28 in the
	// folder objects/17, where objects whose name begins 17 go.
	var files []workspace.FileChange
	for i := 0; len(files) < 30; i++ {
		content := fmt.Sprintf("note %d\n", i)
		if sum := sha1.Sum(fmt.Appendf(nil, "blob %d\x00%s", len(content), content)); sum[0] == 0x17 {
			files = append(files, workspace.FileChange{Path: fmt.Sprintf("notes/%d.txt", i), Action: workspace.Create, Content: content})
		}
	}
	if _, err := w.Change(t.Context(), files, workspace.CommitMeta{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Edit(t.Context(), "site/index.html", []workspace.Hunk{{Find: "Hi", Replace: "Hello"}}, workspace.CommitMeta{}); err != nil {
		t.Fatal(err)
	}
	objects := func() (loose, packs int) {
		t.Helper()
		for line := range strings.Lines(git(t, dir, "count-objects", "-v")) {
			fmt.Sscanf(line, "count: %d", &loose)
			fmt.Sscanf(line, "packs: %d", &packs)
		}
		return loose, packs
	}
	if n, err := os.ReadDir(filepath.Join(dir, ".git", "objects", "17")); err != nil || len(n) < 30 {
		t.Fatalf("objects/17 holds %d objects (%v), want the 30 the commit made", len(n), err)
	}
	if loose, packs := objects(); loose < 30 || packs != 0 {
		t.Fatalf("after the commits: %d loose objects, %d packs; a commit started git's maintenance", loose, packs)
	}

	if err := w.Maintain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if loose, packs := objects(); loose != 0 || packs != 1 {
		t.Fatalf("after Maintain: %d loose objects, %d packs, want every object packed", loose, packs)
	}
	rev := git(t, dir, "rev-parse", "HEAD")
	if got := head(t, w); got != rev {
		t.Fatalf("Head = %s once packed, git says %s", got, rev)
	}
	if err := w.Maintain(t.Context()); err != nil {
		t.Fatalf("Maintain with nothing to do: %v", err)
	}
	res, err := w.Edit(t.Context(), "site/index.html", []workspace.Hunk{{Find: "Hello", Replace: "Hello again"}}, workspace.CommitMeta{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Previous != rev {
		t.Errorf("the edit after Maintain went on from %s, want %s", res.Previous, rev)
	}
	wantUntouched(t, w, res.Revision)
}
