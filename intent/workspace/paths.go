package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"syscall"
	"unicode"

	"autoapp/intent/app"
	"autoapp/intent/refusal"
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
func cleanPath(field, p string, use pathUse, allowTop bool) (string, *refusal.Problem) {
	refuse := func(format string, args ...any) (string, *refusal.Problem) {
		return "", &refusal.Problem{Field: field, Message: fmt.Sprintf(format, args...)}
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
	if use == forWriting && strings.EqualFold(c, app.ManifestFile) {
		return refuse("%s is the application's manifest; the engineer may read it, only the owner changes it", app.ManifestFile)
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
func (w *Workspace) openProblem(field, p, kind string, err error) *refusal.Problem {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return &refusal.Problem{Field: field, Message: fmt.Sprintf("there is no %s %q", kind, p)}
	}
	if link := w.linkOnTheWay(p); link != "" {
		return &refusal.Problem{Field: field, Message: fmt.Sprintf("%q goes through the symbolic link %q, which points outside the workspace", p, link)}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &refusal.Problem{Field: field, Message: fmt.Sprintf("%q cannot be opened: %v", p, err)}
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
func (w *Workspace) writeTarget(ctx context.Context, field, p string) (target, *refusal.Problem, error) {
	refuse := func(format string, args ...any) (target, *refusal.Problem, error) {
		return target{}, &refusal.Problem{Field: field, Message: fmt.Sprintf(format, args...)}, nil
	}
	parts := strings.Split(p, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		last := i == len(parts)-1
		info, err := w.root.Lstat(prefix)
		if errors.Is(err, fs.ErrNotExist) {
			t := target{}
			if !last {
				// A submodule whose folder is gone is still in the index,
				// where git add refuses to write into it. Only the index
				// is asked, so a new folder costs one git.
				sub, err := w.isSubmodule(ctx, prefix, false)
				if err != nil {
					return target{}, nil, err
				}
				if sub {
					return refuse("%s is inside the submodule %s: the engineer cannot change it.", p, prefix)
				}
				t.firstNew = prefix
			}
			return t, nil, nil
		}
		if err != nil {
			return target{}, nil, fmt.Errorf("workspace: %w", err)
		}
		if !last && info.IsDir() {
			kind, err := w.kindOfFolder(ctx, prefix)
			if err != nil {
				return target{}, nil, err
			}
			switch kind {
			case submoduleFolder:
				return refuse("%s is inside the submodule %s: the engineer cannot change it.", p, prefix)
			case repositoryFolder:
				return refuse("%q is inside %q, a git repository of its own; the host commits only to the workspace's", p, prefix)
			}
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			if last {
				return refuse("%q is a symbolic link; the engineer writes only real files", p)
			}
			return refuse("%q goes through the symbolic link %q; the engineer writes only inside real folders", p, prefix)
		case !last && !info.IsDir():
			return refuse("%q cannot be written: %q is a file, not a folder", p, prefix)
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

// folderKind is what the folder at the cleaned path p is to git.
type folderKind int

const (
	plainFolder      folderKind = iota
	submoduleFolder             // a gitlink of the workspace's commit or index
	repositoryFolder            // a repository of its own, which git does not add into
)

// kindOfFolder says what the folder at the cleaned path p is. Only a
// folder holding a .git (initialised) or nothing (not) can be a submodule,
// so only then is git asked: an ordinary write runs no git for it.
func (w *Workspace) kindOfFolder(ctx context.Context, p string) (folderKind, error) {
	_, err := w.root.Lstat(p + "/.git")
	hasGit := err == nil
	if !hasGit {
		empty, err := w.isEmpty(p)
		if err != nil || !empty {
			return plainFolder, err
		}
	}
	sub, err := w.isSubmodule(ctx, p, true)
	switch {
	case err != nil:
		return plainFolder, err
	case sub:
		return submoduleFolder, nil
	case hasGit:
		return repositoryFolder, nil
	}
	return plainFolder, nil
}

// isEmpty says the folder at the cleaned path p holds nothing.
func (w *Workspace) isEmpty(p string) (bool, error) {
	f, err := w.openSource(p)
	if err != nil {
		return false, fmt.Errorf("workspace: %w", err)
	}
	defer f.Close()
	_, err = f.ReadDir(1)
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("workspace: %w", err)
	}
	return false, nil
}

// isSubmodule says the index holds a gitlink at the cleaned path p, or,
// when head is set and the index knows nothing at p (the submodule's
// removal is staged, not committed), HEAD does.
func (w *Workspace) isSubmodule(ctx context.Context, p string, head bool) (bool, error) {
	if ix, ok := readIndex(w.files); ok {
		if i, found := ix.find(p); found {
			return ix.entries[i].mode == gitGitlink, nil
		}
		if !head || ix.hasUnder(p) {
			return false, nil
		}
	}
	out, err := runGit(ctx, w.dir, hostSign(w.now()), "ls-files", "-s", "-z", "--", p)
	if err != nil {
		return false, fmt.Errorf("workspace: %w", err)
	}
	if len(out) > 0 {
		// "<mode> <oid> <stage>\t<path>\0"; a gitlink is the one entry at p.
		for _, rec := range strings.Split(string(out), "\x00") {
			meta, name, ok := strings.Cut(rec, "\t")
			if ok && name == p {
				return strings.HasPrefix(meta, modeSubmodule+" "), nil
			}
		}
		return false, nil
	}
	if !head {
		return false, nil
	}
	out, err = runGit(ctx, w.dir, hostSign(w.now()), "ls-tree", "-z", "-l", "HEAD", "--", p)
	if err != nil {
		return false, fmt.Errorf("workspace: %w", err)
	}
	entries, err := parseTree(out)
	if err != nil {
		return false, fmt.Errorf("workspace: %w", err)
	}
	for _, e := range entries {
		if e.path == p {
			return e.mode == modeSubmodule, nil
		}
	}
	return false, nil
}
