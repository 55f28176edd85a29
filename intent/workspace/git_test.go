package workspace_test

import (
	"context"
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
