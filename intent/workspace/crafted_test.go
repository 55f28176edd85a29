package workspace

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
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
	w, rev := initAndOpen(t, dir)
	return w, rev
}

// craftIndex rewrites the workspace's index as the engineer's code can:
// git's entries and one more at p (a copy of the first), in git's order,
// with a cache of trees that says the index is HEAD's tree, so that a
// writer taking the index at its word would commit it.
func craftIndex(t *testing.T, w *Workspace, rev, p string) {
	t.Helper()
	name := filepath.Join(w.Dir(), ".git", "index")
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if string(b[:4]) != "DIRC" {
		t.Fatal("the index git wrote is not an index")
	}
	// Each entry: 62 bytes, its path, NULs up to a multiple of 8.
	type entry struct {
		fixed []byte
		path  string
	}
	var entries []entry
	off := 12
	for range binary.BigEndian.Uint32(b[8:12]) {
		nul := bytes.IndexByte(b[off+62:], 0)
		entries = append(entries, entry{fixed: slices.Clone(b[off : off+62]), path: string(b[off+62 : off+62+nul])})
		off += (62 + nul + 8) &^ 7
	}
	extra := entry{fixed: slices.Clone(entries[0].fixed), path: p}
	binary.BigEndian.PutUint16(extra.fixed[60:], uint16(min(len(p), 0xfff)))
	entries = append(entries, extra)
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.path, b.path) })

	var out bytes.Buffer
	out.Write(b[:8])
	binary.Write(&out, binary.BigEndian, uint32(len(entries)))
	for _, e := range entries {
		n := out.Len()
		out.Write(e.fixed)
		out.WriteString(e.path)
		out.Write(make([]byte, (62+len(e.path)+8)&^7-(out.Len()-n)))
	}
	tree, err := hex.DecodeString(gitAt(t, machineGit(t), w.Dir(), nil, "rev-parse", rev+"^{tree}"))
	if err != nil {
		t.Fatal(err)
	}
	cache := fmt.Sprintf("\x00%d 0\n", len(entries)) + string(tree)
	out.WriteString("TREE")
	binary.Write(&out, binary.BigEndian, uint32(len(cache)))
	out.WriteString(cache)
	sum := sha1.Sum(out.Bytes())
	out.Write(sum[:])
	if err := os.WriteFile(name, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestACraftedIndexIsRefused: an index whose entries name a path no
// commit may hold — absolute, with an empty name, going up, inside .git
// in any case, longer than a path can be — makes the next edit answer a
// sentence: the server does not crash, and git commits nothing.
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
// engineer's code can write them (git hash-object --literally stores
// what git itself would refuse to make); and returns the commit's name.
func commitTrees(t *testing.T, w *Workspace, parent string, names [][]string) string {
	t.Helper()
	gitPath := machineGit(t)
	store := func(kind string, content []byte) string {
		t.Helper()
		cmd := exec.Command(gitPath, "hash-object", "--literally", "-t", kind, "-w", "--stdin")
		cmd.Dir = w.Dir()
		cmd.Env = gitEnv(hostSign(testClock()))
		cmd.Stdin = bytes.NewReader(content)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("hash-object: %v", err)
		}
		return strings.TrimSpace(string(out))
	}
	// tree is a tree object's content: "<mode> <name>\0<binary id>" each.
	tree := func(items [][3]string) []byte {
		var buf bytes.Buffer
		for _, it := range items {
			id, _ := hex.DecodeString(it[2])
			buf.WriteString(it[0] + " " + it[1] + "\x00")
			buf.Write(id)
		}
		return buf.Bytes()
	}
	blob := store("blob", []byte("escaped\n"))
	var top [][3]string
	for _, parts := range names {
		id, mode := blob, "100644"
		for i := len(parts) - 1; i > 0; i-- {
			id, mode = store("tree", tree([][3]string{{mode, parts[i], id}})), "40000"
		}
		top = append(top, [3]string{mode, parts[0], id})
	}
	slices.SortFunc(top, func(a, b [3]string) int { return strings.Compare(a[1], b[1]) })
	ident := "Autoapp host <host@autoapp.local> 1741064767 +0000"
	return store("commit", []byte("tree "+store("tree", tree(top))+"\nparent "+parent+"\nauthor "+ident+"\ncommitter "+ident+"\n\ncrafted\n"))
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
