package workspace_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"autoapp/intent/workspace"
)

// commitAll commits everything in the workspace as a person would, and
// returns the new HEAD.
func commitAll(t *testing.T, w *workspace.Workspace, message string) string {
	t.Helper()
	git(t, w.Dir(), "add", "-A")
	git(t, w.Dir(), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)
	return head(t, w)
}

// gitBytes is what git prints for args, byte for byte.
func gitBytes(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestBlob(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, map[string]string{
		"site/index.html": "<h1>Hello</h1>\n",
		"site/style.css":  "h1 { color: red }\n",
		// The tree's attributes change what a checkout or git archive
		// shows, never the blob.
		".gitattributes":   "*.html eol=crlf\n",
		"exactly-1MiB.bin": strings.Repeat("x", workspace.MaxArtifactBytes),
		"big.bin":          strings.Repeat("y", workspace.MaxArtifactBytes*13/10),
		"bin/run.sh":       "#!/bin/sh\necho run\n",
	})
	dir := w.Dir()
	if err := os.Chmod(filepath.Join(dir, "bin/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("index.html", filepath.Join(dir, "site/link.html")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("site", filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	commitAll(t, w, "links and an executable")
	// A submodule is a gitlink: a commit of another repository named in the tree.
	git(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+head(t, w)+",vendored")
	git(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a submodule")
	rev := head(t, w)
	short := rev[:12]
	writeFiles(t, dir, map[string]string{"notes.txt": "not committed\n", "site/index.html": "<h1>Edited, not committed</h1>\n"})

	t.Run("regular file is the blob's bytes", func(t *testing.T) {
		b, err := w.Blob(t.Context(), rev, "site/index.html")
		if err != nil {
			t.Fatal(err)
		}
		want := gitBytes(t, dir, "cat-file", "blob", rev+":site/index.html")
		if !bytes.Equal(b.Data, want) || string(want) != "<h1>Hello</h1>\n" {
			t.Errorf("data = %q, want the blob %q", b.Data, want)
		}
		if b.SHA256 != sha(want) || b.Size != int64(len(want)) || b.Path != "site/index.html" || b.Mode != "100644" {
			t.Errorf("blob = %+v, want sha256 %s size %d", b, sha(want), len(want))
		}
	})
	t.Run("executable keeps its mode", func(t *testing.T) {
		b, err := w.Blob(t.Context(), rev, "bin/run.sh")
		if err != nil {
			t.Fatal(err)
		}
		if b.Mode != "100755" {
			t.Errorf("mode = %s, want 100755", b.Mode)
		}
	})
	t.Run("exactly 1 MiB is allowed", func(t *testing.T) {
		b, err := w.Blob(t.Context(), rev, "exactly-1MiB.bin")
		if err != nil {
			t.Fatal(err)
		}
		if b.Size != workspace.MaxArtifactBytes || len(b.Data) != workspace.MaxArtifactBytes {
			t.Errorf("size = %d, data %d bytes", b.Size, len(b.Data))
		}
	})
	t.Run("a path is cleaned", func(t *testing.T) {
		b, err := w.Blob(t.Context(), "HEAD", "./site//style.css")
		if err != nil {
			t.Fatal(err)
		}
		if b.Path != "site/style.css" {
			t.Errorf("path = %q", b.Path)
		}
	})

	refused := []struct {
		name, rev, path, field, sentence string
	}{
		{"symbolic link", rev, "site/link.html", "path", "site/link.html is a symbolic link, not a file."},
		{"through a symbolic link", rev, "linked/index.html", "path", "linked/index.html is not committed at " + short + "."},
		{"uncommitted file", rev, "notes.txt", "path", "notes.txt is not committed at " + short + "."},
		{"folder", rev, "site", "path", "site is a folder."},
		{"submodule", rev, "vendored", "path", "vendored is a submodule, not a file."},
		{"over 1 MiB", rev, "big.bin", "path", "big.bin is 1.3 MiB; an artifact is at most 1 MiB."},
		{"outside with ..", rev, "../x", "path", `"../x" leaves the workspace.`},
		{"outside through a folder", rev, "site/../../x", "path", "leaves the workspace."},
		{"absolute", rev, "/etc/passwd", "path", `"/etc/passwd" is absolute`},
		{"inside .git", rev, ".git/config", "path", "inside .git"},
		{"empty path", rev, "", "path", "Give a path"},
		{"unknown revision", "0123456789abcdef", "site/index.html", "revision", "not a commit"},
		{"option as revision", "--output=x", "site/index.html", "revision", "is not a revision"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			b, err := w.Blob(t.Context(), tt.rev, tt.path)
			wantProblem(t, err, tt.field, tt.sentence)
			if b.Data != nil {
				t.Errorf("a refused blob carries %d bytes", len(b.Data))
			}
		})
	}

	t.Run("an earlier revision gives its own bytes", func(t *testing.T) {
		writeFiles(t, dir, map[string]string{"notes.txt": "", "site/index.html": "<h1>Later</h1>\n"})
		later := commitAll(t, w, "later")
		old, err := w.Blob(t.Context(), rev, "site/index.html")
		if err != nil {
			t.Fatal(err)
		}
		now, err := w.Blob(t.Context(), later, "site/index.html")
		if err != nil {
			t.Fatal(err)
		}
		if string(old.Data) != "<h1>Hello</h1>\n" || string(now.Data) != "<h1>Later</h1>\n" {
			t.Errorf("at %s: %q; at %s: %q", short, old.Data, later[:12], now.Data)
		}
	})
}

func TestCommit(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, map[string]string{"a.txt": "a\n"})
	got, err := w.Commit(t.Context(), "HEAD")
	if err != nil || got != head(t, w) {
		t.Fatalf("Commit(HEAD) = %q, %v; want %s", got, err, head(t, w))
	}
	_, err = w.Commit(t.Context(), "nope")
	wantProblem(t, err, "revision", "not a commit")
}

// entry is one member of a tar.gz as a test compares it.
type entry struct {
	kind byte
	mode int64
	body string // a file's bytes, or a link's target
}

func readArchive(t *testing.T, b []byte) map[string]entry {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	tr := tar.NewReader(zr)
	got := map[string]entry{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not a tar: %v", err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeSymlink {
			body = []byte(h.Linkname)
		}
		got[h.Name] = entry{kind: h.Typeflag, mode: h.Mode, body: string(body)}
	}
	if _, err := io.ReadAll(zr); err != nil {
		t.Fatalf("gzip: %v", err)
	}
	return got
}

func TestArchive(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, map[string]string{
		"site/index.html":     "<h1>Hello</h1>\n",
		"site/css/style.css":  "h1 { color: red }\n",
		"hidden.txt":          "still handed over\n",
		".gitattributes":      "hidden.txt export-ignore\n*.html eol=crlf\nsubst.txt export-subst\n",
		"subst.txt":           "$Format:%H$\n",
		"bin/run.sh":          "#!/bin/sh\n",
		"acceptance/one.json": "{}\n",
	})
	dir := w.Dir()
	if err := os.Chmod(filepath.Join(dir, "bin/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	// No link is handed over, wherever it points: one that leaves the
	// tree would lead the person's unpacking to the host's files.
	outside := filepath.Join(t.TempDir(), "launcher", "providers.json")
	for link, to := range map[string]string{
		"home.html":          "site/index.html",
		"etc":                "/etc",
		"links/providers":    outside,
		"site/css/up.css":    "../../../outside.css",
		"bin/run-everywhere": "run.sh",
	} {
		name := filepath.Join(dir, filepath.FromSlash(link))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(to, name); err != nil {
			t.Fatal(err)
		}
	}
	rev := commitAll(t, w, "the files to hand over")
	if links := gitBytes(t, dir, "ls-tree", "-r", rev); bytes.Count(links, []byte("120000 blob")) != 5 {
		t.Fatalf("rev holds not the five links:\n%s", links)
	}
	// Later edits, committed and not, are not in the archive of rev.
	writeFiles(t, dir, map[string]string{"site/index.html": "<h1>Later</h1>\n", "later.txt": "later\n"})
	commitAll(t, w, "later")
	writeFiles(t, dir, map[string]string{"site/css/style.css": "uncommitted\n"})

	var out bytes.Buffer
	if err := w.Archive(t.Context(), rev, &out); err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Base(dir) + "-" + rev[:12] + "/"
	want := map[string]entry{
		prefix:                         {tar.TypeDir, 0o755, ""},
		prefix + "site/":               {tar.TypeDir, 0o755, ""},
		prefix + "site/css/":           {tar.TypeDir, 0o755, ""},
		prefix + "bin/":                {tar.TypeDir, 0o755, ""},
		prefix + "acceptance/":         {tar.TypeDir, 0o755, ""},
		prefix + "site/index.html":     {tar.TypeReg, 0o644, "<h1>Hello</h1>\n"},
		prefix + "site/css/style.css":  {tar.TypeReg, 0o644, "h1 { color: red }\n"},
		prefix + "hidden.txt":          {tar.TypeReg, 0o644, "still handed over\n"},
		prefix + ".gitattributes":      {tar.TypeReg, 0o644, "hidden.txt export-ignore\n*.html eol=crlf\nsubst.txt export-subst\n"},
		prefix + "subst.txt":           {tar.TypeReg, 0o644, "$Format:%H$\n"},
		prefix + "bin/run.sh":          {tar.TypeReg, 0o755, "#!/bin/sh\n"},
		prefix + "acceptance/one.json": {tar.TypeReg, 0o644, "{}\n"},
		"pax_global_header":            {tar.TypeXGlobalHeader, 0, ""},
	}
	got := readArchive(t, out.Bytes())
	for name, e := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("the archive lacks %s", name)
		} else if g != e {
			t.Errorf("%s = %+v, want %+v", name, g, e)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("the archive holds %s, which is no folder or file of rev", name)
		}
	}

	t.Run("git reads the commit back", func(t *testing.T) {
		zr, err := gzip.NewReader(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "get-tar-commit-id")
		cmd.Stdin = zr
		id, err := cmd.Output()
		if err != nil || strings.TrimSpace(string(id)) != rev {
			t.Errorf("get-tar-commit-id = %q, %v; want %s", id, err, rev)
		}
	})
	t.Run("the same revision gives the same bytes", func(t *testing.T) {
		var again bytes.Buffer
		if err := w.Archive(t.Context(), rev[:12], &again); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again.Bytes(), out.Bytes()) {
			t.Error("two archives of one revision differ")
		}
	})
	t.Run("unknown revision", func(t *testing.T) {
		var b bytes.Buffer
		wantProblem(t, w.Archive(t.Context(), "nope", &b), "revision", "not a commit")
		if b.Len() != 0 {
			t.Errorf("wrote %d bytes", b.Len())
		}
	})
	t.Run("a failing writer ends git", func(t *testing.T) {
		err := w.Archive(t.Context(), rev, failingWriter{})
		if !errors.Is(err, errBroken) {
			t.Errorf("error = %v, want the writer's", err)
		}
	})
}

var errBroken = errors.New("the connection broke")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errBroken }

func TestArchiveTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 65 MiB")
	}
	t.Parallel()
	w := newWorkspace(t, map[string]string{"small.txt": "small\n"})
	big := make([]byte, workspace.MaxArchiveBytes-len("small\n"))
	if err := os.WriteFile(filepath.Join(w.Dir(), "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	// A link is left out, so its target's length does not count.
	if err := os.Symlink("big.bin", filepath.Join(w.Dir(), "big-link")); err != nil {
		t.Fatal(err)
	}
	rev := commitAll(t, w, "exactly the limit, and a link")
	if err := w.Archive(t.Context(), rev, io.Discard); err != nil {
		t.Fatalf("the archive of exactly %d MiB of files: %v", workspace.MaxArchiveBytes>>20, err)
	}

	if err := os.WriteFile(filepath.Join(w.Dir(), "big.bin"), append(big, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	rev = commitAll(t, w, "too large")
	var out bytes.Buffer
	err := w.Archive(t.Context(), rev, &out)
	wantProblem(t, err, "revision", "; a download is at most 64 MiB.")
	if out.Len() != 0 {
		t.Errorf("a refused archive wrote %d bytes", out.Len())
	}
}
