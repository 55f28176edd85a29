package workspace

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// craftedWorkspace is a workspace with a first commit of a.txt and
// site/index.html, opened.
func craftedWorkspace(t *testing.T) (*Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "site"), 0o755)
	os.WriteFile(filepath.Join(dir, "site", "index.html"), []byte("<h1>Hi</h1>\n"), 0o644)
	rev, err := InitRepository(t.Context(), dir, "Create application", nativeClock)
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(dir, nativeClock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, rev
}

// craftIndex rewrites the workspace's index as the engineer's code can:
// HEAD's entries and one more at p, in git's order, with a cache of trees
// that says the index is HEAD's tree, so that a writer taking the index at
// its word would commit it.
func craftIndex(t *testing.T, w *Workspace, rev, p string) {
	t.Helper()
	ix, ok := readIndex(w.files)
	if !ok {
		t.Fatal("the index git wrote is not readable")
	}
	id, _ := parseObjectID(rev)
	headTree, ok := commitTree(w.files, id)
	if !ok {
		t.Fatal("HEAD's tree is not readable")
	}
	e := ix.entries[0]
	e.path = p
	ix.entries = append(ix.entries, e)
	slices.SortFunc(ix.entries, func(a, b indexEntry) int { return strings.Compare(a.path, b.path) })
	b := ix.encode([]treeNode{{name: "", count: len(ix.entries), id: headTree}})
	if err := os.WriteFile(filepath.Join(w.Dir(), ".git", "index"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestACraftedIndexIsRefused: an index whose entries name a path no
// commit may hold — absolute, with an empty name, going up, inside .git
// in any case, longer than a path can be — makes the next edit answer a
// sentence: the server does not crash, and nothing is committed, by the
// host's own writer or by git.
func TestACraftedIndexIsRefused(t *testing.T) {
	gitPath := machineGit(t)
	for _, p := range []string{
		"/rt-crash",
		"../x",
		"../../../owner/escape",
		".git/config",
		"a/.GIT/b",
		"a//b",
		"./a",
		"site/../../x",
		strings.Repeat("d/", 3000) + "x",
	} {
		name := p
		if len(name) > 40 {
			name = "a path of 6001 bytes"
		}
		t.Run(name, func(t *testing.T) {
			w, rev := craftedWorkspace(t)
			craftIndex(t, w, rev, p)
			edits := []struct {
				what string
				do   func() error
			}{
				{"edit", func() error {
					_, err := w.Edit(t.Context(), "a.txt", []Hunk{{Find: "a", Replace: "A"}}, CommitMeta{})
					return err
				}},
				{"change", func() error {
					_, err := w.Change(t.Context(), []FileChange{{Path: "b.txt", Action: Create, Content: "b\n"}}, CommitMeta{})
					return err
				}},
				{"the owner's file", func() error {
					os.WriteFile(filepath.Join(w.Dir(), "a.txt"), []byte("owner\n"), 0o644)
					return w.CommitOwnerFile(t.Context(), "a.txt", "The owner's edit")
				}},
			}
			for _, edit := range edits {
				var err error
				within(t, edit.what, func() { err = edit.do() })
				ps, ok := AsProblems(err)
				if !ok {
					t.Fatalf("%s: %v, want a sentence naming the index's path", edit.what, err)
				}
				if msg := ps.Error(); !strings.Contains(msg, "index") || !strings.Contains(msg, "committed nothing") {
					t.Errorf("%s: %q", edit.what, msg)
				}
			}
			if got := gitAt(t, gitPath, w.Dir(), nil, "rev-parse", "HEAD"); got != rev {
				t.Fatalf("HEAD moved from %s to %s", rev, got)
			}
			if got := gitAt(t, gitPath, w.Dir(), nil, "ls-tree", "-r", "--name-only", "HEAD"); got != "a.txt\nsite/index.html" {
				t.Fatalf("HEAD holds %q", got)
			}
		})
	}
}

// commitTrees writes a commit on top of parent whose top tree holds the
// files at paths (each a.txt's content), trees made for every folder as
// named, so that a name may be "..", ".git" or hold a slash, as the
// engineer's code can write them; and returns the commit's name.
func commitTrees(t *testing.T, w *Workspace, parent string, names [][]string) string {
	t.Helper()
	objects, ok := openObjects(w.root)
	if !ok {
		t.Fatal("no objects folder")
	}
	defer objects.Close()
	blob, err := writeLoose(objects, "blob", []byte("escaped\n"))
	if err != nil {
		t.Fatal(err)
	}
	var top []treeItem
	for _, parts := range names {
		id := blob
		mode := uint32(gitFile)
		for i := len(parts) - 1; i > 0; i-- {
			if id, err = writeLoose(objects, "tree", encodeTree([]treeItem{{name: parts[i], mode: mode, id: id}})); err != nil {
				t.Fatal(err)
			}
			mode = gitTree
		}
		top = append(top, treeItem{name: parts[0], mode: mode, id: id})
	}
	tree, err := writeLoose(objects, "tree", encodeTree(top))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := parseObjectID(parent)
	sign := hostSign(nativeClock())
	commit, err := writeLoose(objects, "commit", encodeCommit(tree, p, sign, sign, "crafted\n"))
	if err != nil {
		t.Fatal(err)
	}
	return commit.String()
}

// TestTheArchiveRefusesAPathThatLeavesItsFolder: a commit the engineer's
// code made by hand, whose tree holds a path going up, inside .git or
// absolute, is not handed over as an archive: unpacking it would write
// outside its folder or into a repository's own files.
func TestTheArchiveRefusesAPathThatLeavesItsFolder(t *testing.T) {
	t.Parallel()
	w, rev := craftedWorkspace(t)
	for _, c := range []struct {
		names [][]string
		path  string
	}{
		{[][]string{{"..", "..", "..", "owner", "escape"}}, "../../../owner/escape"},
		{[][]string{{"up", "..", "..", "x"}}, "up/../../x"},
		{[][]string{{".git", "config"}}, ".git/config"},
		{[][]string{{"a", ".GIT", "hooks", "post-checkout"}}, "a/.GIT/hooks/post-checkout"},
		{[][]string{{"/abs"}}, "/abs"},
		{[][]string{{"a/../../b"}}, "a/../../b"},
	} {
		t.Run(c.path, func(t *testing.T) {
			commit := commitTrees(t, w, rev, c.names)
			var out bytes.Buffer
			err := w.Archive(t.Context(), commit, &out)
			ps, ok := AsProblems(err)
			if !ok {
				t.Fatalf("Archive = %v, want a sentence", err)
			}
			if msg := ps.Error(); !strings.Contains(msg, c.path) {
				t.Errorf("the sentence %q does not name %s", msg, c.path)
			}
			if out.Len() != 0 {
				t.Errorf("%d bytes of the archive were written", out.Len())
			}
		})
	}
	// The commit itself is handed over as it was.
	var out bytes.Buffer
	if err := w.Archive(t.Context(), rev, &out); err != nil {
		t.Fatal(err)
	}
}
