package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

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
