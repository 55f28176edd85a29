package knowledge_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"autoapp/intent/refusal"
	"autoapp/knowledge"
)

// lockRoot is a data folder with its launcher folder, as openRoot makes it.
func lockRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "launcher"), 0o700); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestServerLockIsHeldByOneAtATime(t *testing.T) {
	root := lockRoot(t)
	if running, err := knowledge.ServerRunning(root); err != nil || running {
		t.Fatalf("before any server: running %v, %v", running, err)
	}
	release, err := knowledge.AcquireServerLock(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, knowledge.ServerLockFile))
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("the lock file holds %q (%v), want this pid", b, err)
	}
	if running, err := knowledge.ServerRunning(root); err != nil || !running {
		t.Fatalf("while held: running %v, %v", running, err)
	}

	// A second acquire opens the file again: flock locks belong to the open
	// file, so it contends as another process would.
	_, err = knowledge.AcquireServerLock(root)
	var ke *refusal.Error
	if !errors.As(err, &ke) || ke.Code != knowledge.EServing {
		t.Fatalf("second acquire: %v, want EServing", err)
	}
	want := fmt.Sprintf("Another autoapp serve is running from %s (pid %d); stop it first.", root, os.Getpid())
	if ke.Message != want {
		t.Fatalf("refusal %q, want %q", ke.Message, want)
	}

	if err := release(); err != nil {
		t.Fatal(err)
	}
	if err := release(); err != nil {
		t.Fatalf("a second release: %v", err)
	}
	if running, err := knowledge.ServerRunning(root); err != nil || running {
		t.Fatalf("after release: running %v, %v", running, err)
	}
	again, err := knowledge.AcquireServerLock(root)
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	if err := again(); err != nil {
		t.Fatal(err)
	}
}

func TestServerRunningLeavesTheLockFree(t *testing.T) {
	root := lockRoot(t)
	release, err := knowledge.AcquireServerLock(root)
	if err != nil {
		t.Fatal(err)
	}
	release()
	// Looking takes a shared lock and drops it; a server must still start.
	for range 3 {
		if running, err := knowledge.ServerRunning(root); err != nil || running {
			t.Fatalf("running %v, %v", running, err)
		}
	}
	release, err = knowledge.AcquireServerLock(root)
	if err != nil {
		t.Fatalf("acquire after looking: %v", err)
	}
	release()
}

func TestServerLockNeedsTheLauncherFolder(t *testing.T) {
	_, err := knowledge.AcquireServerLock(filepath.Join(t.TempDir(), "missing"))
	if err == nil {
		t.Fatal("acquired a lock in a folder that does not exist")
	}
	if running, err := knowledge.ServerRunning(filepath.Join(t.TempDir(), "missing")); err != nil || running {
		t.Fatalf("a missing folder: running %v, %v", running, err)
	}
}
