package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// ReadError is a file of a workspace the host would not read, and why, as
// a sentence for the person: a symbolic link on the way, not a regular
// file, larger than the host reads, or not there (then errors.Is says
// fs.ErrNotExist), or a path outside the workspace (fs.ErrInvalid).
type ReadError struct {
	// Path is the file's path from the workspace's top, as it was named.
	Path string
	// Reason is what the file is, after its path: "is a named pipe, not
	// a regular file".
	Reason string
	rule   string
	err    error
}

func (e *ReadError) Error() string {
	if e.rule == "" {
		return e.Path + " " + e.Reason
	}
	return e.Path + " " + e.Reason + "; " + e.rule
}

// Unwrap is fs.ErrNotExist for a missing file, fs.ErrInvalid for a path
// outside the workspace, and nil otherwise.
func (e *ReadError) Unwrap() error { return e.err }

// readError turns what opening name answered into a *ReadError where it
// is a refusal, and leaves any other error as it is.
func readError(name string, err error) error {
	var ke *kindError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &ReadError{Path: name, Reason: "is not in the workspace", err: fs.ErrNotExist}
	case errors.Is(err, errThroughLink):
		return &ReadError{Path: name, Reason: "is a symbolic link, or inside a folder that is one", rule: "the host reads no file through a link"}
	case errors.As(err, &ke):
		return &ReadError{Path: name, Reason: "is " + kindOf(ke.mode) + ", not a regular file", rule: "the host reads only regular files"}
	}
	return fmt.Errorf("workspace: read %s: %w", name, err)
}

// hostPath checks a path the host names, from the workspace's top: no
// way out of it and nothing in .git, which the host reads only as git's
// own files. "." is the top.
func hostPath(name string) error {
	if !fs.ValidPath(name) {
		return &ReadError{Path: name, Reason: "is outside the workspace", err: fs.ErrInvalid}
	}
	for part := range strings.SplitSeq(name, "/") {
		if strings.EqualFold(part, ".git") {
			return &ReadError{Path: name, Reason: "is inside .git", rule: "the host reads only the application's files", err: fs.ErrInvalid}
		}
	}
	return nil
}

// ReadFile reads the regular file at name, a path from the workspace's
// top, whole, when it holds at most max bytes. It never reads through a
// symbolic link (inside the workspace or out of it), nor anything but a
// regular file — a named pipe, a device or a socket is refused at once,
// never waited on. Every refusal is a *ReadError, whose text is a
// sentence that says which rule and, for a large file, the limit.
func (w *Workspace) ReadFile(name string, max int64) ([]byte, error) {
	if err := hostPath(name); err != nil {
		return nil, err
	}
	return w.files.readFile(name, max)
}

// FS is the workspace as a file system to read, on the rules of ReadFile:
// Open opens a regular file or a folder, never through a link, and a
// folder lists its entries in name order (ReadDir). The size of a file is
// for its reader to bound.
func (w *Workspace) FS() fs.FS { return hostFS{w.files} }

type hostFS struct{ files files }

// Open opens a regular file or a folder.
func (h hostFS) Open(name string) (fs.File, error) {
	if err := hostPath(name); err != nil {
		return nil, err
	}
	file, info, err := h.files.open(name)
	if err != nil {
		return nil, readError(name, err)
	}
	if !info.Mode().IsRegular() && !info.IsDir() {
		file.Close()
		return nil, readError(name, &kindError{mode: info.Mode()})
	}
	return file, nil
}

// ReadDir lists the folder name in name order.
func (h hostFS) ReadDir(name string) ([]fs.DirEntry, error) {
	f, err := h.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	file := f.(*os.File)
	if info, err := file.Stat(); err != nil || !info.IsDir() {
		return nil, &ReadError{Path: name, Reason: "is not a folder", err: fs.ErrInvalid}
	}
	entries, err := file.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("workspace: list %s: %w", name, err)
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}
