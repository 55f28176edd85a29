package workspace

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testClock is the fixed time the tests of this package commit at.
func testClock() time.Time { return time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC) }

// machineGit is where the machine's git is.
func machineGit(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// initAndOpen makes dir, with the files already in it, an application's
// repository as the host does, and opens it for the test; it returns the
// workspace, closed when the test ends, and the first commit.
func initAndOpen(t *testing.T, dir string) (*Workspace, string) {
	t.Helper()
	rev, err := InitRepository(t.Context(), dir, "Create application", testClock)
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(dir, testClock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, rev
}

// gitAt runs the machine's git (its path found before the test hides it)
// in dir with the workspace's environment and more.
func gitAt(t *testing.T, gitPath, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(gitPath, append(append([]string{}, gitOptions...), args...)...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(engineerSign(testClock())), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestEveryKindOfChangeCommitsWhatGitWould makes each kind of change the
// engineer makes through Edit and Change, and makes the same change with
// git by hand in a copy of the repository taken just before: the two
// commits are the same object, the summaries count the same, and git
// finds the repository, its index and its reflog sound.
func TestEveryKindOfChangeCommitsWhatGitWould(t *testing.T) {
	gitPath := machineGit(t)
	cpPath, err := exec.LookPath("cp")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, body := range map[string]string{
		"site/index.html": "<h1>Hello</h1>\n<p>one</p>\n<p>two</p>\n",
		"app.go":          "package main\n\nfunc main() {}\n",
		"a/b/c.txt":       "c\n",
		"a/d.txt":         "d\n",
		"run.sh":          "#!/bin/sh\necho run\n",
		"a-b.txt":         "sorts between a and a/\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	w, _ := initAndOpen(t, dir)

	meta := CommitMeta{RunID: "intent-1-0001-x-a1", CallID: "intent-1-0001-x-a1:1"}
	steps := []struct {
		name string
		do   func() (EditResult, error)
	}{
		{"edit a line", func() (EditResult, error) {
			return w.Edit(t.Context(), "site/index.html", []Hunk{{Find: "<p>one</p>", Replace: "<p>uno</p>\n<p>eins</p>"}}, meta)
		}},
		{"create beside others", func() (EditResult, error) {
			return w.Change(t.Context(), []FileChange{{Path: "site/about.html", Action: Create, Content: "<p>about</p>\n"}}, meta)
		}},
		{"create in new folders", func() (EditResult, error) {
			return w.Change(t.Context(), []FileChange{{Path: "acceptance/deep/0001-x-c1.json", Action: Create, Content: `{"name": "x"}`}}, meta)
		}},
		{"overwrite, no last newline", func() (EditResult, error) {
			return w.Change(t.Context(), []FileChange{{Path: "app.go", Action: Overwrite, Content: "package main\n\nfunc main() { println(1) }"}}, meta)
		}},
		{"delete the last file of a folder", func() (EditResult, error) {
			return w.Change(t.Context(), []FileChange{{Path: "a/b/c.txt", Action: Delete}}, meta)
		}},
		{"two files at once", func() (EditResult, error) {
			return w.Change(t.Context(), []FileChange{
				{Path: "a/d.txt", Action: Overwrite, Content: "d\nd2\n"},
				{Path: "a/e.txt", Action: Create, Content: "e\n"},
			}, meta)
		}},
		{"an executable file keeps its mode", func() (EditResult, error) {
			return w.Edit(t.Context(), "run.sh", []Hunk{{Find: "echo run", Replace: "echo ran"}}, meta)
		}},
		{"binary content", func() (EditResult, error) {
			return w.Change(t.Context(), []FileChange{{Path: "site/pixel.bin", Action: Create, Content: "\x00\x01\x02"}}, meta)
		}},
		{"a file beside a folder of a longer name", func() (EditResult, error) {
			return w.Change(t.Context(), []FileChange{{Path: "a-b.txt", Action: Overwrite, Content: "still sorts\n"}}, meta)
		}},
	}
	revs := []string{gitAt(t, gitPath, dir, nil, "rev-parse", "HEAD")}
	for i, step := range steps {
		twin := filepath.Join(t.TempDir(), "twin")
		if out, err := exec.Command(cpPath, "-a", dir, twin).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v\n%s", err, out)
		}
		before := gitAt(t, gitPath, dir, nil, "rev-parse", "HEAD")
		res, err := step.do()
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		revs = append(revs, res.Revision)
		if res.Previous != before {
			t.Errorf("%s: previous = %s, want %s", step.name, res.Previous, before)
		}

		// The same change, made by git in the copy.
		raw := gitAt(t, gitPath, dir, nil, "cat-file", "commit", res.Revision)
		_, message, _ := strings.Cut(raw, "\n\n")
		msgFile := filepath.Join(t.TempDir(), "message")
		os.WriteFile(msgFile, []byte(message+"\n"), 0o644)
		for _, p := range res.Files {
			b, err := os.ReadFile(filepath.Join(dir, p))
			if os.IsNotExist(err) {
				os.Remove(filepath.Join(twin, p))
				continue
			}
			os.MkdirAll(filepath.Dir(filepath.Join(twin, p)), 0o755)
			info, _ := os.Stat(filepath.Join(dir, p))
			os.WriteFile(filepath.Join(twin, p), b, info.Mode().Perm())
			os.Chmod(filepath.Join(twin, p), info.Mode().Perm())
		}
		gitAt(t, gitPath, twin, nil, append([]string{"add", "-A", "--"}, res.Files...)...)
		gitAt(t, gitPath, twin, nil, append([]string{"commit", "-q", "--no-verify", "--cleanup=verbatim", "-F", msgFile, "--"}, res.Files...)...)
		if want := gitAt(t, gitPath, twin, nil, "rev-parse", "HEAD"); res.Revision != want {
			t.Errorf("%s: the host's commit is\n%s\ngit's is\n%s", step.name, raw, gitAt(t, gitPath, twin, nil, "cat-file", "commit", want))
		}
		stat := gitAt(t, gitPath, twin, nil, "diff", "--shortstat", "-M", before, "HEAD")
		if want, err := parseShortStat(stat); err != nil || res.Stat != want {
			t.Errorf("%s: stat = %+v, git counts %q", step.name, res.Stat, stat)
		}

		// git finds it all sound: the objects, the index (its cache of
		// trees too, which write-tree trusts), the branch's log.
		gitAt(t, gitPath, dir, nil, "fsck", "--strict", "--no-dangling")
		if st := gitAt(t, gitPath, dir, nil, "status", "--porcelain", "--untracked-files=all"); st != "" {
			t.Errorf("%s: the working tree differs from the commit:\n%s", step.name, st)
		}
		if got, want := gitAt(t, gitPath, dir, nil, "write-tree"), gitAt(t, gitPath, dir, nil, "rev-parse", "HEAD^{tree}"); got != want {
			t.Errorf("%s: the index's trees name %s, the commit %s", step.name, got, want)
		}
		if got, want := gitAt(t, gitPath, dir, nil, "ls-files", "-s"), gitAt(t, gitPath, twin, nil, "ls-files", "-s"); got != want {
			t.Errorf("%s: the index holds\n%s\ngit's\n%s", step.name, got, want)
		}
		if got := gitAt(t, gitPath, dir, nil, "reflog", "-1", "--format=%H %gs"); !strings.HasPrefix(got, res.Revision+" commit: source.") {
			t.Errorf("%s: the reflog's last line is %q", step.name, got)
		}
		if n := gitAt(t, gitPath, dir, nil, "rev-list", "--count", "HEAD"); n != fmt.Sprint(i+2) {
			t.Errorf("%s: %s commits, want %d", step.name, n, i+2)
		}
	}

	// What the first four steps changed, as ShortStat counts it.
	stat, err := w.ShortStat(t.Context(), revs[0], revs[4])
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := parseShortStat(gitAt(t, gitPath, dir, nil, "diff", "--shortstat", "-M", revs[0], revs[4])); stat != want {
		t.Errorf("ShortStat = %+v, git counts %+v", stat, want)
	}

	// A change that leaves the file as committed is refused as before.
	_, err = w.Change(t.Context(), []FileChange{{Path: "a/e.txt", Action: Overwrite, Content: "e\n"}}, meta)
	ps, ok := AsProblems(err)
	if !ok || len(ps) != 1 || !strings.Contains(ps[0].Message, "leaves every file as it is") {
		t.Fatalf("an edit that changes nothing = %v", err)
	}
}

// TestAnEditCommitsOnlyItsPathsWithGitsMeaning: in a repository whose
// index holds a staged change of another file, or whose attributes change
// what git stores, an edit is committed with git's meaning: only the
// edited path is committed, and the staged change stays staged.
func TestAnEditCommitsOnlyItsPathsWithGitsMeaning(t *testing.T) {
	t.Parallel()
	gitPath := machineGit(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b\n"), 0o644)
	w, _ := initAndOpen(t, dir)
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b staged\n"), 0o644)
	gitAt(t, gitPath, dir, nil, "add", "b.txt")
	res, err := w.Edit(t.Context(), "a.txt", []Hunk{{Find: "a", Replace: "A"}}, CommitMeta{})
	if err != nil {
		t.Fatal(err)
	}
	if got := gitAt(t, gitPath, dir, nil, "show", "--format=", "--name-only", res.Revision); got != "a.txt" {
		t.Errorf("the commit changed %q, want only a.txt", got)
	}
	if got := gitAt(t, gitPath, dir, nil, "diff", "--cached", "--name-only"); got != "b.txt" {
		t.Errorf("staged now: %q, want b.txt still staged", got)
	}

	// Attributes that turn line ends around: git stores what it stores.
	gitAt(t, gitPath, dir, nil, "reset", "-q")
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("*.txt text eol=crlf\n"), 0o644)
	gitAt(t, gitPath, dir, nil, "add", ".gitattributes")
	gitAt(t, gitPath, dir, nil, "commit", "-q", "-m", "attributes")
	w2, err := Open(dir, testClock)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	res, err = w2.Change(t.Context(), []FileChange{{Path: "c.txt", Action: Create, Content: "c1\r\nc2\r\n"}}, CommitMeta{})
	if err != nil {
		t.Fatal(err)
	}
	if got := gitAt(t, gitPath, dir, nil, "cat-file", "blob", res.Revision+":c.txt"); got != "c1\nc2" {
		t.Errorf("the commit stored %q, want git's normalised line ends", got)
	}
}
