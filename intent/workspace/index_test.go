package workspace

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTheIndexReadsAsGitListsIt: what the host reads of git's index
// itself — which paths git tracks, and as what — is what git ls-files
// lists, in every state git leaves it in; an index the host does not
// read (a split index, version 4, a merge's stages) is git's to list, and
// the paths the host asks about are still answered as git answers.
func TestTheIndexReadsAsGitListsIt(t *testing.T) {
	t.Parallel()
	gitPath := machineGit(t)
	dir := t.TempDir()
	for name, body := range map[string]string{"a.txt": "a\n", "site/index.html": "<h1>Hi</h1>\n", "run.sh": "#!/bin/sh\n", "a-b.txt": "ab\n"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	os.Chmod(filepath.Join(dir, "run.sh"), 0o755)
	w, _ := initAndOpen(t, dir)
	blob := gitAt(t, gitPath, dir, nil, "rev-parse", "HEAD:a.txt")
	run := func(args ...string) func() {
		return func() { gitAt(t, gitPath, dir, nil, args...) }
	}
	asked := []string{"a.txt", "site/index.html", "run.sh", "link", "sub", "new.txt", "site", "gone.txt"}
	for _, c := range []struct {
		name  string
		do    func()
		plain bool // the host reads it itself
	}{
		{"as the first commit left it", func() {}, true},
		{"a file, a link and a submodule added", func() {
			os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new\n"), 0o644)
			os.Symlink("a.txt", filepath.Join(dir, "link"))
			gitAt(t, gitPath, dir, nil, "add", "new.txt", "link")
			gitAt(t, gitPath, dir, nil, "update-index", "--add", "--cacheinfo", "160000,"+gitAt(t, gitPath, dir, nil, "rev-parse", "HEAD")+",sub")
		}, true},
		{"a file removed", run("rm", "-q", "--cached", "a-b.txt"), true},
		{"a mode changed", run("update-index", "--chmod=-x", "run.sh"), true},
		{"the untracked cache kept", func() {
			gitAt(t, gitPath, dir, nil, "update-index", "--untracked-cache")
			gitAt(t, gitPath, dir, []string{"GIT_LITERAL_PATHSPECS=0"}, "status", "--porcelain")
		}, true},
		{"written again with the cache of trees", run("write-tree"), true},
		{"version 4", run("update-index", "--index-version", "4"), false},
		{"version 2 again", run("update-index", "--index-version", "2"), true},
		{"split", run("update-index", "--split-index"), false},
		{"whole again", run("update-index", "--no-split-index"), true},
		{"a merge's stages", func() {
			in := "0 " + strings.Repeat("0", 40) + "\ta.txt\n" +
				"100644 " + blob + " 1\ta.txt\n100644 " + blob + " 2\ta.txt\n100644 " + blob + " 3\ta.txt\n"
			cmd := exec.Command(gitPath, "update-index", "--index-info")
			cmd.Dir, cmd.Env, cmd.Stdin = dir, gitEnv(hostSign(testClock())), strings.NewReader(in)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("update-index --index-info: %v\n%s", err, out)
			}
		}, false},
	} {
		c.do()
		ix, ok := readIndex(w.files)
		if ok != c.plain {
			t.Fatalf("%s: the host read the index itself: %v, want %v", c.name, ok, c.plain)
		}
		listed := gitAt(t, gitPath, dir, nil, "ls-files", "-s") + "\n"
		if ok {
			var got, want []string
			for _, e := range ix.entries {
				got = append(got, fmt.Sprintf("%06o %s", e.mode, e.path))
			}
			for line := range strings.Lines(listed) {
				meta, p, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
				want = append(want, strings.Fields(meta)[0]+" "+p)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: the host reads %q, git lists %q", c.name, got, want)
			}
		}
		tracked, err := w.tracked(t.Context(), asked)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range asked {
			if want := strings.Contains("\n"+listed, "\t"+p+"\n"); tracked[p] != want {
				t.Errorf("%s: %s tracked = %v, git lists it: %v", c.name, p, tracked[p], want)
			}
		}
	}
}
