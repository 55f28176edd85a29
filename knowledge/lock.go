package knowledge

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"autoapp/intent/refusal"
)

// ServerLockFile is the lock `autoapp serve` holds for as long as it serves
// from a data folder, relative to that folder. It holds the server's pid.
const ServerLockFile = "launcher/serve.lock"

// EServing refuses what cannot be done while a server serves from the data
// folder: a second server, or a change the running one would not see.
const EServing refusal.Code = "serving"

// AcquireServerLock takes the data folder root for this process's server:
// an exclusive flock on <root>/launcher/serve.lock, held until release is
// called (or the process ends), with the pid written into the file. While
// another process holds it, it is refused with EServing and a sentence
// naming that process. The folder <root>/launcher must exist.
//
// The lock belongs to the open file, so the kernel drops it when the
// process dies; a stale file left behind locks nothing.
func AcquireServerLock(root string) (release func() error, err error) {
	path := filepath.Join(root, ServerLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("knowledge: the server lock: %w", err)
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			if pid := lockHolder(f); pid > 0 {
				return nil, refuse(EServing, "Another autoapp serve is running from %s (pid %d); stop it first.", root, pid)
			}
			return nil, refuse(EServing, "Another autoapp serve is running from %s; stop it first.", root)
		}
		return nil, fmt.Errorf("knowledge: the server lock %s: %w", path, err)
	}
	// The pid is for the person reading a refusal; the lock is the flock.
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close() // closing drops the lock
		return nil, fmt.Errorf("knowledge: the server lock %s: %w", path, err)
	}
	var once sync.Once
	return func() error {
		var err error
		once.Do(func() {
			// Emptied first, so a reader never finds a pid that no longer serves.
			// The file stays: removing it could let two servers lock two files.
			f.Truncate(0)
			if err = flock(f, syscall.LOCK_UN); err != nil {
				f.Close()
				err = fmt.Errorf("knowledge: releasing the server lock: %w", err)
				return
			}
			if err = f.Close(); err != nil {
				err = fmt.Errorf("knowledge: releasing the server lock: %w", err)
			}
		})
		return err
	}, nil
}

// ServerRunning reports whether a server holds the data folder root (see
// AcquireServerLock). It only looks: the shared lock it tries is released
// at once, and a folder with no lock file has no server.
func ServerRunning(root string) (bool, error) {
	f, err := os.Open(filepath.Join(root, ServerLockFile))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("knowledge: the server lock: %w", err)
	}
	defer f.Close()
	err = flock(f, syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("knowledge: the server lock: %w", err)
	}
	if err := flock(f, syscall.LOCK_UN); err != nil {
		return false, fmt.Errorf("knowledge: the server lock: %w", err)
	}
	return false, nil
}

// flock is syscall.Flock on f, retried when a signal interrupts it.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// lockHolder reads the pid the server holding the lock wrote, 0 when there
// is none to read.
func lockHolder(f *os.File) int {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 32))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
