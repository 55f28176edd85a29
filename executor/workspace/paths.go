package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"syscall"
	"unicode"
)

// pathUse says what an operation means to do at a path.
type pathUse int

const (
	forReading pathUse = iota
	forWriting
)

// cleanPath applies the rules every path the engineer names obeys, and
// returns it cleaned ("." for the top). allowTop lets the path name the
// workspace itself, as List and Search do.
func cleanPath(field, p string, use pathUse, allowTop bool) (string, *Problem) {
	refuse := func(format string, args ...any) (string, *Problem) {
		return "", &Problem{Field: field, Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case p == "" && allowTop:
		return ".", nil
	case strings.TrimSpace(p) == "":
		return refuse("give a path from the workspace's top, such as \"src/app.go\"")
	case len(p) > MaxPath:
		return refuse("at most %d characters", MaxPath)
	case strings.IndexFunc(p, unicode.IsControl) >= 0:
		return refuse("%q contains a control character", p)
	case strings.Contains(p, "\\"):
		return refuse("%q has a backslash; write folders with / between them", p)
	case strings.HasPrefix(p, "/"):
		return refuse("%q is absolute; give a path from the workspace's top, such as \"src/app.go\"", p)
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return refuse("%q leaves the workspace", p)
	}
	if c == "." && !allowTop {
		return refuse("%q names the workspace itself; give a file", p)
	}
	for _, part := range strings.Split(c, "/") {
		if strings.EqualFold(part, ".git") {
			return refuse("%q is inside .git, which only the host touches", p)
		}
	}
	// EqualFold because on a case-insensitive disk AUTOAPP.JSON is the manifest.
	if use == forWriting && strings.EqualFold(c, ManifestFile) {
		return refuse("%s is the application's manifest; the engineer may read it, only the owner changes it", ManifestFile)
	}
	return c, nil
}

// linkOnTheWay returns the first symbolic link met on the way to the
// cleaned path p, or "" when there is none (or the walk stops at a
// missing name).
func (w *Workspace) linkOnTheWay(p string) string {
	if p == "." {
		return ""
	}
	parts := strings.Split(p, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		info, err := w.root.Lstat(prefix)
		if err != nil {
			return ""
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return prefix
		}
	}
	return ""
}

// openProblem turns the error of opening the cleaned path p for reading
// into a sentence for the engineer; kind is "file" or "folder".
func (w *Workspace) openProblem(field, p, kind string, err error) *Problem {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return &Problem{Field: field, Message: fmt.Sprintf("there is no %s %q", kind, p)}
	}
	if link := w.linkOnTheWay(p); link != "" {
		return &Problem{Field: field, Message: fmt.Sprintf("%q goes through the symbolic link %q, which points outside the workspace", p, link)}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &Problem{Field: field, Message: fmt.Sprintf("%q cannot be opened: %v", p, err)}
}

// target is what a write will find at a path: whether the file is there,
// and its mode, and the first folder the write has to create.
type target struct {
	exists   bool
	mode     fs.FileMode
	firstNew string // the first missing folder on the way, "" when none is
}

// writeTarget checks the cleaned path p before a write: no symbolic link
// on the way or at the end, every name on the way a folder, and the file,
// when there, a regular file. The write itself still goes through os.Root.
func (w *Workspace) writeTarget(field, p string) (target, *Problem, error) {
	refuse := func(format string, args ...any) (target, *Problem, error) {
		return target{}, &Problem{Field: field, Message: fmt.Sprintf(format, args...)}, nil
	}
	parts := strings.Split(p, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		last := i == len(parts)-1
		info, err := w.root.Lstat(prefix)
		if errors.Is(err, fs.ErrNotExist) {
			t := target{}
			if !last {
				t.firstNew = prefix
			}
			return t, nil, nil
		}
		if err != nil {
			return target{}, nil, fmt.Errorf("workspace: %w", err)
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			if last {
				return refuse("%q is a symbolic link; the engineer writes only real files", p)
			}
			return refuse("%q goes through the symbolic link %q; the engineer writes only inside real folders", p, prefix)
		case !last && !info.IsDir():
			return refuse("%q cannot be written: %q is a file, not a folder", p, prefix)
		case !last && w.isRepository(prefix):
			return refuse("%q is inside %q, a git repository of its own; the host commits only to the workspace's", p, prefix)
		case last && info.IsDir():
			return refuse("%q is a folder, not a file", p)
		case last && !info.Mode().IsRegular():
			return refuse("%q is not a regular file", p)
		case last:
			return target{exists: true, mode: info.Mode().Perm()}, nil, nil
		}
	}
	return target{}, nil, nil
}

// isRepository says the folder at the cleaned path p holds a .git of its
// own: a nested repository, whose files the workspace's git does not add.
func (w *Workspace) isRepository(p string) bool {
	_, err := w.root.Lstat(p + "/.git")
	return err == nil
}
