package workspace

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// within runs f and fails the test when it has not returned after a
// second: no read of the host may wait on what the engineer's code made.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatalf("%s did not return within a second", what)
	}
}

// plantedWorkspace is a workspace whose files hold every trick the
// engineer's code can plant for the host to read: links out of the
// workspace (to the owner's keys, the server's environment, the shadow
// file, a device), links that stay inside, a named pipe, a socket, a
// device when the machine lets the test make one, and a large file. The
// secret is what the link to the owner's keys would hand over.
func plantedWorkspace(t *testing.T) (w *Workspace, secret string) {
	t.Helper()
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "launcher", "providers.json")
	secret = "sk-the-owners-key"
	files := map[string]string{
		"site/index.html": "<h1>Hello</h1>\n",
		"big.txt":         strings.Repeat("b", 2000),
		outside:           `{"apiKey": "` + secret + `"}`,
	}
	for name, body := range files {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, filepath.FromSlash(name))
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := InitRepository(t.Context(), dir, "Create application", testClock); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{
		"providers.json": outside,
		"up.json":        "../" + filepath.Base(filepath.Dir(dir)) + "/x",
		"environ":        "/proc/self/environ",
		"shadow":         "/etc/shadow",
		"zero":           "/dev/zero",
		"home.html":      "site/index.html",
		"linked":         "site",
	} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	// A character device like /dev/zero, where the machine lets root
	// make one.
	_ = unix.Mknod(filepath.Join(dir, "chardev"), unix.S_IFCHR|0o644, int(unix.Mkdev(1, 5)))
	w, err = Open(dir, testClock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, secret
}

// withoutOpenat2 makes w read as it does on a kernel without openat2:
// through its root, each name on the way looked at first.
func withoutOpenat2(w *Workspace) {
	if w.files.fd >= 0 {
		unix.Close(w.files.fd)
		w.files.fd = -1
	}
}

// TestTheHostReadsOnlyRegularFilesBeneathTheWorkspace: every read the host
// makes of a workspace's file refuses a link anywhere on the way (out of
// the workspace or not), anything but a regular file, and a file larger
// than it reads, with a sentence that says which; a named pipe or a
// device answers at once. So it is with openat2 and without.
func TestTheHostReadsOnlyRegularFilesBeneathTheWorkspace(t *testing.T) {
	for _, kernel := range []string{"openat2", "no openat2"} {
		t.Run(kernel, func(t *testing.T) {
			w, secret := plantedWorkspace(t)
			if kernel == "no openat2" {
				withoutOpenat2(w)
			}
			b, err := w.ReadFile("site/index.html", 1<<10)
			if err != nil || string(b) != "<h1>Hello</h1>\n" {
				t.Fatalf("ReadFile of a plain file = %q, %v", b, err)
			}
			if _, err := w.ReadFile("nope.txt", 1<<10); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
			}
			refusals := []struct{ name, text string }{
				{"providers.json", "symbolic link"},
				{"up.json", "symbolic link"},
				{"environ", "symbolic link"},
				{"shadow", "symbolic link"},
				{"zero", "symbolic link"},
				{"home.html", "symbolic link"},
				{"linked/index.html", "symbolic link"},
				{"pipe", "named pipe"},
				{"sock", "socket"},
				{"site", "folder"},
				{"big.txt", "at most 1 KiB"},
				{"../outside", "outside the workspace"},
				{"/etc/passwd", "outside the workspace"},
			}
			if info, err := os.Lstat(filepath.Join(w.Dir(), "chardev")); err == nil && info.Mode()&fs.ModeCharDevice != 0 {
				refusals = append(refusals, struct{ name, text string }{"chardev", "device"})
			}
			for _, r := range refusals {
				t.Run(r.name, func(t *testing.T) {
					var b []byte
					var err error
					within(t, "ReadFile "+r.name, func() { b, err = w.ReadFile(r.name, 1<<10) })
					checkRefusal(t, r.name, b, err, r.text, secret)
					within(t, "the FS's Open "+r.name, func() { b, err = fs.ReadFile(w.FS(), r.name) })
					if r.name == "site" {
						return // a folder opens, to be listed
					}
					if strings.HasPrefix(r.name, "/") || strings.HasPrefix(r.name, "..") {
						if err == nil {
							t.Fatalf("the FS opened %s", r.name)
						}
						return
					}
					if r.name == "big.txt" {
						return // the FS leaves the size to its reader
					}
					checkRefusal(t, r.name, b, err, r.text, secret)
				})
			}
			// A folder is listed through the same rule.
			if entries, err := fs.ReadDir(w.FS(), "site"); err != nil || len(entries) != 1 {
				t.Errorf("ReadDir(site) = %v, %v", entries, err)
			}
			var err2 error
			within(t, "ReadDir of a linked folder", func() { _, err2 = fs.ReadDir(w.FS(), "linked") })
			if err2 == nil || !strings.Contains(err2.Error(), "symbolic link") {
				t.Errorf("ReadDir of a linked folder: %v", err2)
			}
			within(t, "ReadDir of a pipe", func() { _, err2 = fs.ReadDir(w.FS(), "pipe") })
			if err2 == nil {
				t.Error("ReadDir of a named pipe answered no error")
			}
		})
	}
}

func checkRefusal(t *testing.T, name string, b []byte, err error, text, secret string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s was read: %q", name, b)
	}
	if strings.Contains(string(b), secret) || strings.Contains(err.Error(), secret) {
		t.Fatalf("%s handed over the owner's key", name)
	}
	var re *ReadError
	if !errors.As(err, &re) {
		t.Fatalf("%s: %v (%T), want a *ReadError", name, err, err)
	}
	if !strings.Contains(err.Error(), text) || !strings.Contains(err.Error(), name) {
		t.Fatalf("%s: %q, want a sentence naming it and saying …%s…", name, err, text)
	}
}

// TestGitsOwnFilesAreNeverWaitedOn: a named pipe (or a link) planted at
// .git/HEAD, the index, the branch or HEAD's log makes the host's edit
// answer an error at once, holding the workspace's lock for no longer;
// nothing is committed.
func TestGitsOwnFilesAreNeverWaitedOn(t *testing.T) {
	for _, name := range []string{".git/HEAD", ".git/index", ".git/refs/heads/main", ".git/config", ".git/packed-refs"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
			w, rev := initAndOpen(t, dir)
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
			if err := unix.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			var res EditResult
			var err error
			within(t, "an edit with a pipe at "+name, func() {
				res, err = w.Edit(t.Context(), "a.txt", []Hunk{{Find: "a", Replace: "A"}}, CommitMeta{})
			})
			// git makes every commit, and is never started on a pipe.
			if err == nil {
				t.Fatalf("the edit was committed as %s", res.Revision)
			}
			if err != nil && (!strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "named pipe")) {
				t.Errorf("the error %q does not say %s is a named pipe", err, name)
			}
			// git itself is not started on the repository.
			within(t, "a diff with a pipe at "+name, func() { _, err = w.Diff(t.Context(), rev, rev) })
			if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "named pipe") {
				t.Errorf("the diff answered %v, want that %s is a named pipe", err, name)
			}
			within(t, "Head with a pipe at "+name, func() { _, err = w.Head(t.Context()) })
			// The lock is free again: a second edit is not kept waiting.
			within(t, "a second edit", func() {
				w.Edit(t.Context(), "a.txt", []Hunk{{Find: "a", Replace: "A"}}, CommitMeta{})
			})
			os.Remove(p)
			if name == ".git/HEAD" {
				os.WriteFile(p, []byte("ref: refs/heads/main\n"), 0o644)
			}
			if name == ".git/refs/heads/main" {
				os.WriteFile(p, []byte(rev+"\n"), 0o644)
			}
			if name == ".git/config" {
				return // git init's config is gone; the rest is git's to say
			}
			if got := gitAt(t, machineGit(t), dir, nil, "rev-parse", "HEAD"); got != rev {
				t.Errorf("HEAD moved to %s", got)
			}
		})
	}
	t.Run("a pipe at HEAD's log", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
		w, _ := initAndOpen(t, dir)
		for _, log := range []string{".git/logs/HEAD", ".git/logs/refs/heads/main"} {
			p := filepath.Join(dir, filepath.FromSlash(log))
			os.Remove(p)
			if err := unix.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var err error
		within(t, "an edit with a pipe at HEAD's log", func() {
			_, err = w.Edit(t.Context(), "a.txt", []Hunk{{Find: "a", Replace: "A"}}, CommitMeta{})
		})
		if err != nil && !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("the edit: %v", err)
		}
	})
}
