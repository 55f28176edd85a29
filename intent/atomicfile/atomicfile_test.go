package atomicfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"autoapp/intent/atomicfile"
)

func TestWriteReplacesTheFileWhole(t *testing.T) {
	for name, write := range map[string]func(string, []byte) error{"Write": atomicfile.Write, "Replace": atomicfile.Replace} {
		t.Run(name, func(t *testing.T) { replacesWhole(t, write) })
	}
}

func replacesWhole(t *testing.T, write func(string, []byte) error) {
	dir := filepath.Join(t.TempDir(), "launcher")
	path := filepath.Join(dir, "limits.json")
	for _, text := range []string{"{\"first\": true}\n", "{}\n"} {
		if err := write(path, []byte(text)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != text {
			t.Fatalf("the file holds %q, %v; want %q", b, err, text)
		}
	}
	for p, want := range map[string]os.FileMode{path: 0o600, dir: 0o700} {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got&^want != 0 {
			t.Errorf("%s has mode %v; want at most %v", p, got, want)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("the folder holds %v, %v; want only the file", entries, err)
	}
}

// A settings file read through Kept is read again only when it changed,
// and every change shows on the next Get: a write through Write, an edit
// in place, its removal.
func TestKeptSeesEveryChangeOfTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "launcher", "limits.json")
	reads := 0
	k := atomicfile.NewKept(path, func(b []byte, err error) string {
		reads++
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "missing"
		case err != nil:
			return "unreadable"
		}
		return string(b)
	})
	want := func(v string, n int) {
		t.Helper()
		if got := k.Get(); got != v || reads != n {
			t.Fatalf("Get = %q after %d reads; want %q after %d", got, reads, v, n)
		}
	}
	want("missing", 1)
	want("missing", 1)
	write := func(text string) {
		t.Helper()
		if err := atomicfile.Write(path, []byte(text)); err != nil {
			t.Fatal(err)
		}
	}
	write("{\"idle\": 8}")
	want("{\"idle\": 8}", 2)
	want("{\"idle\": 8}", 2)
	write("{\"idle\": 9}") // the same size, a new file
	want("{\"idle\": 9}", 3)
	// Edits in place: another size, then the same size at a later time.
	if err := os.WriteFile(path, []byte("{\"idle\": 10}"), 0o600); err != nil {
		t.Fatal(err)
	}
	want("{\"idle\": 10}", 4)
	if err := os.WriteFile(path, []byte("{\"idle\": 11}"), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	want("{\"idle\": 11}", 5)
	want("{\"idle\": 11}", 5)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	want("missing", 6)
	// A file that cannot be read is read again each time.
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	want("unreadable", 7)
	want("unreadable", 8)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	write("{\"idle\": 8}")
	want("{\"idle\": 8}", 9)
}
