package workspace

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// gitIndex is git's index (.git/index) as the host reads and writes it
// without starting git: version 2 or 3, every entry at stage 0 and
// without the flags of a sparse or partial checkout, and the cache of
// trees (the TREE extension) when it is there. Anything else — version
// 4, a split or sparse index, a merge in progress — is not read, and git
// is asked instead. The file may have been written by the engineer's
// code: its checksum is checked, and nothing in it is trusted beyond its
// shape.
type gitIndex struct {
	entries []indexEntry
	// trees are the cached trees, by folder ("" is the top); a folder not
	// there, or with a count of -1, is not cached.
	trees map[string]cachedTree
}

// indexEntry is one file of the index.
type indexEntry struct {
	ctimeS, ctimeN, mtimeS, mtimeN uint32
	dev, ino, mode, uid, gid, size uint32
	id                             objectID
	assumeValid                    bool
	path                           string
}

// cachedTree is a folder's tree as the index caches it: how many entries
// it covers and the tree object's name.
type cachedTree struct {
	count int
	id    objectID
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
	ix := gitIndex{trees: map[string]cachedTree{}}
	off := 12
	prev := ""
	for range n {
		const fixed = 62
		if off+fixed > len(body) {
			return gitIndex{}, errNotPlainIndex
		}
		e := body[off:]
		u := func(i int) uint32 { return binary.BigEndian.Uint32(e[4*i:]) }
		ent := indexEntry{ctimeS: u(0), ctimeN: u(1), mtimeS: u(2), mtimeN: u(3), dev: u(4), ino: u(5),
			mode: u(6), uid: u(7), gid: u(8), size: u(9)}
		copy(ent.id[:], e[40:60])
		flags := binary.BigEndian.Uint16(e[60:62])
		ent.assumeValid = flags&0x8000 != 0
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
		if ent.path == "" || ent.path <= prev && len(ix.entries) > 0 {
			return gitIndex{}, errNotPlainIndex // not in git's order: not ours to rewrite
		}
		prev = ent.path
		ix.entries = append(ix.entries, ent)
		off += (fixed + nul + 8) &^ 7
	}
	for off < len(body) {
		if off+8 > len(body) {
			return gitIndex{}, errNotPlainIndex
		}
		sig := string(body[off : off+4])
		size := int(binary.BigEndian.Uint32(body[off+4 : off+8]))
		if size < 0 || off+8+size > len(body) {
			return gitIndex{}, errNotPlainIndex
		}
		data := body[off+8 : off+8+size]
		switch {
		case sig == "TREE":
			if !parseTrees(data, ix.trees) {
				return gitIndex{}, errNotPlainIndex
			}
		case sig[0] < 'A' || sig[0] > 'Z':
			// An extension git requires to be understood (a split or a
			// sparse index).
			return gitIndex{}, errNotPlainIndex
		}
		off += 8 + size
	}
	return ix, nil
}

// parseTrees reads the TREE extension: each folder, depth first, as
// "<name>\0<count> <subtrees>\n" and, when count is not -1, its tree's
// name.
func parseTrees(data []byte, into map[string]cachedTree) bool {
	type frame struct {
		prefix string
		left   int
	}
	var stack []frame
	for len(data) > 0 {
		nul := bytes.IndexByte(data, 0)
		if nul < 0 {
			return false
		}
		name := string(data[:nul])
		data = data[nul+1:]
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return false
		}
		countText, subText, ok := strings.Cut(string(data[:nl]), " ")
		count, err1 := strconv.Atoi(countText)
		subs, err2 := strconv.Atoi(subText)
		if !ok || err1 != nil || err2 != nil || subs < 0 {
			return false
		}
		data = data[nl+1:]
		dir := name
		for len(stack) > 0 && stack[len(stack)-1].left == 0 {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			top.left--
			if top.prefix != "" {
				dir = top.prefix + "/" + name
			}
		} else if name != "" {
			return false
		}
		if count >= 0 {
			if len(data) < sha1.Size {
				return false
			}
			var id objectID
			copy(id[:], data[:sha1.Size])
			data = data[sha1.Size:]
			into[dir] = cachedTree{count: count, id: id}
		}
		stack = append(stack, frame{prefix: dir, left: subs})
	}
	return true
}

// encode is the index's file: version 2, its entries, the cache of
// trees, and the checksum.
func (ix gitIndex) encode(trees []treeNode) []byte {
	var buf bytes.Buffer
	buf.WriteString("DIRC")
	binary.Write(&buf, binary.BigEndian, uint32(2))
	binary.Write(&buf, binary.BigEndian, uint32(len(ix.entries)))
	for _, e := range ix.entries {
		start := buf.Len()
		for _, v := range []uint32{e.ctimeS, e.ctimeN, e.mtimeS, e.mtimeN, e.dev, e.ino, e.mode, e.uid, e.gid, e.size} {
			binary.Write(&buf, binary.BigEndian, v)
		}
		buf.Write(e.id[:])
		flags := uint16(min(len(e.path), 0xfff))
		if e.assumeValid {
			flags |= 0x8000
		}
		binary.Write(&buf, binary.BigEndian, flags)
		buf.WriteString(e.path)
		pad := (62 + len(e.path) + 8) &^ 7
		buf.Write(make([]byte, pad-(buf.Len()-start)))
	}
	if len(trees) > 0 {
		var ext bytes.Buffer
		for _, t := range trees {
			ext.WriteString(t.name)
			ext.WriteByte(0)
			ext.WriteString(strconv.Itoa(t.count) + " " + strconv.Itoa(t.subtrees) + "\n")
			ext.Write(t.id[:])
		}
		buf.WriteString("TREE")
		binary.Write(&buf, binary.BigEndian, uint32(ext.Len()))
		buf.Write(ext.Bytes())
	}
	sum := sha1.Sum(buf.Bytes())
	buf.Write(sum[:])
	return buf.Bytes()
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

// entryOf is the index entry of the file at p, whose look is info and
// content's object id.
func entryOf(p string, info os.FileInfo, id objectID) (indexEntry, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || !info.Mode().IsRegular() {
		return indexEntry{}, false
	}
	e := indexEntry{ctimeS: uint32(st.Ctim.Sec), ctimeN: uint32(st.Ctim.Nsec), mtimeS: uint32(st.Mtim.Sec), mtimeN: uint32(st.Mtim.Nsec),
		dev: uint32(st.Dev), ino: uint32(st.Ino), mode: gitFile, uid: st.Uid, gid: st.Gid, size: uint32(st.Size), id: id, path: p}
	if info.Mode().Perm()&0o100 != 0 {
		e.mode = gitExec
	}
	return e, true
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
		return Problems{{Message: bad.Error()}}
	}
	out, err := runGit(ctx, w.dir, hostSign(w.now()), "ls-files", "-z")
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	for p := range strings.SplitSeq(string(out), "\x00") {
		if why := pathProblem(p); p != "" && why != "" {
			return Problems{{Message: (&indexPathError{path: p, why: why}).Error()}}
		}
	}
	return nil
}
