// Package workspace is what the host does to an application's git
// workspace: the source operations the engineer's tools call, the commits
// that record every accepted change, and the reads of what a revision
// holds. It implements what the domain asks of git (app.Repositories,
// delivery.Workspace) over the one hardened runner.
package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"autoapp/intent/refusal"
)

// Limits of the source operations. They keep one tool call's answer small
// enough for a model's context and a runaway input from costing the host.
const (
	// MaxReadLines is the most lines one Read returns.
	MaxReadLines = 2000
	// MaxReadBytes is the most text one Read returns.
	MaxReadBytes = 256 << 10
	// MaxFileBytes is the largest file Read, Search and Edit look into.
	MaxFileBytes = 8 << 20
	// MaxWriteBytes is the most content one file of a Change may carry.
	MaxWriteBytes = 1 << 20
	// MaxMatches is the most matches one Search returns.
	MaxMatches = 200
	// MaxMatchText is the most of a matching line a Match carries.
	MaxMatchText = 300
	// MaxQuery is the longest search query.
	MaxQuery = 1000
	// MaxHunks is the most hunks one Edit may carry.
	MaxHunks = 100
	// MaxChangeFiles is the most files one Change may touch.
	MaxChangeFiles = 50
	// MaxPath is the longest path the engineer may name.
	MaxPath = 1024
	// MaxDiffBytes is the most of a diff Diff returns.
	MaxDiffBytes = 256 << 10
)

// Workspace is an application's git workspace, opened so that no operation
// can reach outside it: every file is reached through an os.Root, which
// refuses paths and symbolic links that leave the directory.
type Workspace struct {
	dir   string
	root  *os.Root
	files files
	now   func() time.Time

	// writing serialises Edit and Change: each writes files, then commits
	// them, and two at once would share git's index. It is the directory's,
	// shared by every Workspace open on it (a run's and an owner's save).
	writing *writeLock
	closed  sync.Once
}

// writeLock is a directory's one lock for its writes, held by every
// Workspace open on it and forgotten once the last of them closes.
type writeLock struct {
	sync.Mutex
	real string
	open int // guarded by writersMu
}

var (
	writersMu sync.Mutex
	writers   = map[string]*writeLock{} // real directory → its writes' lock, while a Workspace is open on it
)

// holdWriteLock is real's write lock, counted as held by one more Workspace.
func holdWriteLock(real string) *writeLock {
	writersMu.Lock()
	defer writersMu.Unlock()
	l := writers[real]
	if l == nil {
		l = &writeLock{real: real}
		writers[real] = l
	}
	l.open++
	return l
}

// release counts one Workspace fewer holding l; the last forgets it.
func (l *writeLock) release() {
	writersMu.Lock()
	defer writersMu.Unlock()
	if l.open--; l.open == 0 {
		delete(writers, l.real)
	}
}

// checked is what Open has checked of a directory: that it is the top of
// a git repository, as it was then (the directory and its .git, compared
// by identity, since every commit touches .git's time). Opening a
// workspace again — each run, chat turn and owner's action does, and a
// page's read of HEAD at most once a second — then costs a few system
// calls, not a git process. It holds one entry a folder ever opened.
type checked struct {
	dir, git os.FileInfo
}

var opened sync.Map // real directory → checked

// sameEntry says two looks at one path saw the same file or directory,
// of the same type and mode: one removed and made again is another.
func sameEntry(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Mode() == b.Mode()
}

// Open opens the git workspace at dir, which must be the top of a git
// repository. now dates the commits the host makes.
func Open(dir string, now func() time.Time) (*Workspace, error) {
	if now == nil {
		return nil, errors.New("workspace: no clock given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	real, dirInfo, err := resolve(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	gitInfo, gitErr := os.Lstat(filepath.Join(real, ".git"))
	c, ok := opened.Load(real)
	if !ok || gitErr != nil || !sameEntry(c.(checked).dir, dirInfo) || !sameEntry(c.(checked).git, gitInfo) {
		if err := isTop(dir, real, now); err != nil {
			opened.Delete(real)
			return nil, err
		}
		if gitErr == nil {
			opened.Store(real, checked{dir: dirInfo, git: gitInfo})
		}
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	return &Workspace{dir: real, root: root, files: openFiles(real, root), now: now, writing: holdWriteLock(real)}, nil
}

// resolve is the directory abs names, with symbolic links resolved, and
// what it is.
func resolve(abs string) (string, os.FileInfo, error) {
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", nil, err
	}
	info, err := os.Stat(real)
	if err != nil {
		return "", nil, err
	}
	return real, info, nil
}

// isTop checks with git that real (dir, resolved) is the top of a git
// repository.
func isTop(dir, real string, now func() time.Time) error {
	out, err := runGit(context.Background(), real, hostSign(now()), "rev-parse", "--show-toplevel")
	if err != nil {
		return fmt.Errorf("workspace: %s is not a git repository: %w", dir, err)
	}
	top, err := filepath.EvalSymlinks(strings.TrimSpace(string(out)))
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	if top != real {
		return fmt.Errorf("workspace: %s is inside the git repository at %s, not its top", dir, top)
	}
	return nil
}

// Dir is the workspace's directory, with symbolic links resolved.
func (w *Workspace) Dir() string { return w.dir }

// Close releases the workspace's directory handle.
func (w *Workspace) Close() error {
	w.closed.Do(w.writing.release)
	w.files.close()
	if err := w.root.Close(); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	return nil
}

// firstError returns err when the host failed, else the engineer's
// problems, else nil (a nil refusal.Problems would be a non-nil error).
func firstError(err error, ps refusal.Problems) error {
	switch {
	case err != nil:
		return err
	case len(ps) > 0:
		return ps
	}
	return nil
}

// AsProblems reports the named problems inside err, if it carries any.
func AsProblems(err error) (refusal.Problems, bool) {
	var ps refusal.Problems
	if errors.As(err, &ps) {
		return ps, true
	}
	return nil, false
}
