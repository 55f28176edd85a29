package workspace

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"autoapp/intent/refusal"
)

// gitIndex is what the host reads of git's index (.git/index) without
// starting git, to know which paths git tracks and that none is a path
// no commit may hold: version 2 or 3, every entry at stage 0 and without
// the flags of a sparse or partial checkout. Anything else — version 4,
// a split or sparse index, a merge in progress — is not read, and git is
// asked instead. git writes the index; the engineer's code may have
// written it too: its checksum is checked, and nothing in it is trusted
// beyond its shape.
type gitIndex struct {
	entries []indexEntry
}

// indexEntry is one file of the index: its mode and path.
type indexEntry struct {
	mode uint32
	path string
}

// maxIndex bounds the index read: a workspace of many thousands of files.
const maxIndex = 64 << 20

// readIndex reads .git/index; false when it is absent or not as above,
// or holds a path no commit may hold.
func readIndex(root files) (gitIndex, bool) {
	ix, err := loadIndex(root)
	return ix, err == nil
}

// errNotPlainIndex says the index is not one the host reads: git is.
var errNotPlainIndex = errors.New("workspace: the index is git's to read")

// loadIndex reads .git/index: errNotPlainIndex when it is absent or not
// as gitIndex says, an *indexPathError when an entry's path is one no
// commit may hold.
func loadIndex(root files) (gitIndex, error) {
	b, ok := root.read(".git/index", maxIndex)
	if !ok {
		return gitIndex{}, errNotPlainIndex
	}
	return parseIndex(b)
}

// parseIndex reads the index's file b, as loadIndex says.
func parseIndex(b []byte) (gitIndex, error) {
	if len(b) < 12+sha1.Size || string(b[:4]) != "DIRC" {
		return gitIndex{}, errNotPlainIndex
	}
	body, sum := b[:len(b)-sha1.Size], b[len(b)-sha1.Size:]
	if got := sha1.Sum(body); !bytes.Equal(got[:], sum) {
		return gitIndex{}, errNotPlainIndex
	}
	version := binary.BigEndian.Uint32(b[4:8])
	if version != 2 && version != 3 {
		return gitIndex{}, errNotPlainIndex
	}
	n := binary.BigEndian.Uint32(b[8:12])
	var ix gitIndex
	off := 12
	prev := ""
	for range n {
		// Ten 32-bit fields (times, device, inode, mode, ids, size), the
		// object name, the flags, then the path, NUL-padded to 8 bytes.
		const fixed = 62
		if off+fixed > len(body) {
			return gitIndex{}, errNotPlainIndex
		}
		e := body[off:]
		ent := indexEntry{mode: binary.BigEndian.Uint32(e[24:28])}
		flags := binary.BigEndian.Uint16(e[60:62])
		// Extended flags (skip-worktree, intent-to-add) and stages other
		// than 0 (a merge) are git's to handle.
		if flags&0x4000 != 0 || flags&0x3000 != 0 {
			return gitIndex{}, errNotPlainIndex
		}
		nul := bytes.IndexByte(e[fixed:], 0)
		if nul < 0 {
			return gitIndex{}, errNotPlainIndex
		}
		ent.path = string(e[fixed : fixed+nul])
		if why := pathProblem(ent.path); why != "" {
			return gitIndex{}, &indexPathError{path: ent.path, why: why}
		}
		switch ent.mode {
		case gitFile, gitExec, gitLink, gitGitlink:
		default:
			return gitIndex{}, errNotPlainIndex
		}
		if ent.path <= prev && len(ix.entries) > 0 {
			return gitIndex{}, errNotPlainIndex // not in git's order
		}
		prev = ent.path
		ix.entries = append(ix.entries, ent)
		off += (fixed + nul + 8) &^ 7
	}
	for off < len(body) {
		if off+8 > len(body) {
			return gitIndex{}, errNotPlainIndex
		}
		sig := body[off]
		size := int(binary.BigEndian.Uint32(body[off+4 : off+8]))
		if size < 0 || off+8+size > len(body) {
			return gitIndex{}, errNotPlainIndex
		}
		// An extension whose name does not start with a capital letter
		// must be understood (a split or a sparse index); the others (the
		// cache of trees, the untracked cache…) only speed git up.
		if sig < 'A' || sig > 'Z' {
			return gitIndex{}, errNotPlainIndex
		}
		off += 8 + size
	}
	return ix, nil
}

// has says the index holds a file at p.
func (ix gitIndex) has(p string) bool {
	_, ok := ix.find(p)
	return ok
}

// hasUnder says the index holds a file inside the folder p.
func (ix gitIndex) hasUnder(p string) bool {
	i, _ := ix.find(p + "/")
	return i < len(ix.entries) && strings.HasPrefix(ix.entries[i].path, p+"/")
}

func (ix gitIndex) find(p string) (int, bool) {
	return slices.BinarySearchFunc(ix.entries, p, func(e indexEntry, p string) int { return strings.Compare(e.path, p) })
}

// maxIndexPath is the longest path the host takes from .git: Linux's
// PATH_MAX. No file of a working tree has a longer one.
const maxIndexPath = 4096

// pathProblem says why p, a path read from .git (an index's entry, a
// commit's listing), is one no commit and no archive may hold, or "" when
// it may be held: the engineer's code can write .git, and a path that is
// absolute, has an empty name, goes up with "..", or is inside .git (in
// any case, as a case-insensitive disk reads it) would lead the host, git
// or the person unpacking an archive outside the workspace or into a
// repository's own files.
func pathProblem(p string) string {
	switch {
	case p == "":
		return "is empty"
	case len(p) > maxIndexPath:
		return fmt.Sprintf("is longer than %d bytes", maxIndexPath)
	case strings.HasPrefix(p, "/"):
		return "is absolute"
	}
	for part := range strings.SplitSeq(p, "/") {
		switch {
		case part == "":
			return "has an empty name between its slashes"
		case part == "..":
			return "goes up out of its folder with .."
		case part == ".":
			return "has . for a name"
		case strings.EqualFold(part, ".git"):
			return "is inside .git"
		}
	}
	return ""
}

// indexPathError is an index holding a path no commit may hold.
type indexPathError struct{ path, why string }

func (e *indexPathError) Error() string {
	return fmt.Sprintf("the workspace's git index holds %s, which %s: no commit may hold such a path, so the host committed nothing "+
		"(git read-tree HEAD in the workspace puts the index back as HEAD has it)", quotedPath(e.path), e.why)
}

// quotedPath is a path quoted for a sentence, its middle left out when it
// is too long to read.
func quotedPath(p string) string {
	if len(p) > 80 {
		return strconv.Quote(cutUTF8(p, 40)) + "…" + strconv.Quote(p[len(p)-30:])
	}
	return strconv.Quote(p)
}

// checkIndex refuses, before an edit writes anything, an index holding a
// path no commit may hold (see pathProblem). The host reads the index
// itself when it can, else git lists it.
func (w *Workspace) checkIndex(ctx context.Context) error {
	_, err := loadIndex(w.files)
	var bad *indexPathError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &bad):
		return refusal.Problems{{Message: bad.Error()}}
	}
	out, err := runGit(ctx, w.dir, hostSign(w.now()), "ls-files", "-z")
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	for p := range strings.SplitSeq(string(out), "\x00") {
		if why := pathProblem(p); p != "" && why != "" {
			return refusal.Problems{{Message: (&indexPathError{path: p, why: why}).Error()}}
		}
	}
	return nil
}
