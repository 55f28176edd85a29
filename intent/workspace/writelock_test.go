package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

// Two workspaces open on one folder (a run's and the owner's save) share
// its one write lock, and the launcher forgets the lock once the last of
// them closes: a launcher serving many applications for months keeps no
// lock for a folder nothing has open.
func TestTheWriteLockIsTheFoldersWhileOpenAndForgottenAfter(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<h1>Notes</h1>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	first, _ := initAndOpen(t, dir)
	second, err := Open(dir, testClock)
	if err != nil {
		t.Fatal(err)
	}
	if first.writing != second.writing {
		t.Fatal("two workspaces open on one folder hold two write locks: their commits could share git's index at once")
	}
	held := func() bool {
		writersMu.Lock()
		defer writersMu.Unlock()
		return writers[first.dir] != nil
	}
	second.Close()
	second.Close() // a second Close releases nothing more
	if !held() {
		t.Fatal("the lock was forgotten while a workspace is still open on the folder")
	}
	first.Close()
	if held() {
		t.Fatal("the lock is kept after every workspace on the folder closed")
	}
	again, err := Open(dir, testClock)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if !held() || again.writing == first.writing {
		t.Fatal("a workspace opened again does not take a fresh lock")
	}
}
