package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// A turn commits every accepted edit, and each git process costs a few
// milliseconds to start on a small machine, more than everything else the
// host does for a trivial task. So the host makes its own commits as git
// would — the blobs, the trees, the commit, the branch, its reflog and the
// index — when the repository is one it can read for certain: the one
// `git init` made, untouched by configuration or attributes that change
// what git would store. Whenever anything is not as expected, it answers
// "not here" before writing a thing, and git does the commit.

// plainRepository says the repository's configuration is the one git init
// writes here and nothing else: no filters, no line-ending conversion, no
// other object format, no attributes, no excludes file.
func plainRepository(root files) bool {
	info, err := root.root.Lstat(".git")
	if err != nil || !info.IsDir() {
		return false // a worktree's or a submodule's .git file
	}
	config, ok := readSmall(root, ".git/config")
	if !ok {
		return false
	}
	want := map[string]string{"repositoryformatversion": "0", "filemode": "true", "bare": "false", "logallrefupdates": "true"}
	section := ""
	for line := range strings.Lines(config) {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			section = line
		default:
			key, value, ok := strings.Cut(line, "=")
			if section != "[core]" || !ok || want[strings.ToLower(strings.TrimSpace(key))] != strings.TrimSpace(value) {
				return false
			}
		}
	}
	if _, err := root.root.Lstat(".git/info/attributes"); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	return true
}

// excludesNothing says .git/info/exclude, when there, holds only comments
// and empty lines, as git init writes it.
func excludesNothing(root files) bool {
	text, ok := readSmall(root, ".git/info/exclude")
	if !ok {
		_, err := root.root.Lstat(".git/info/exclude")
		return errors.Is(err, fs.ErrNotExist)
	}
	for line := range strings.Lines(text) {
		if line = strings.TrimSpace(line); line != "" && line[0] != '#' {
			return false
		}
	}
	return true
}

// ignoresNothing says git ignores nothing in the repository but what a
// .gitignore may: it is plain and its info/exclude excludes nothing.
func (w *Workspace) ignoresNothing() bool {
	return plainRepository(w.files) && excludesNothing(w.files)
}

// noIgnoreFile says no .gitignore is in the cleaned path p's folder or
// any folder above it: in a repository that ignoresNothing, git cannot
// ignore p, and is not asked.
func (w *Workspace) noIgnoreFile(p string) bool {
	for dir := path.Dir(p); ; dir = path.Dir(dir) {
		name := ".gitignore"
		if dir != "." {
			name = dir + "/.gitignore"
		}
		if _, err := w.root.Lstat(name); !errors.Is(err, fs.ErrNotExist) {
			return false
		}
		if dir == "." {
			return true
		}
	}
}

// branchOf is the branch HEAD names, when HEAD is a plain symbolic ref.
func branchOf(root files) (string, bool) {
	head, ok := readSmall(root, ".git/HEAD")
	if !ok {
		return "", false
	}
	ref, isRef := strings.CutPrefix(strings.TrimSpace(head), "ref: ")
	if !isRef || !refName(ref) {
		return "", false
	}
	return ref, true
}

// refValue is the commit ref names now, loose or packed.
func refValue(root files, ref string) (string, bool) {
	if hash, ok := readSmall(root, ".git/"+ref); ok {
		return strings.TrimSpace(hash), true
	}
	if _, err := root.root.Lstat(".git/" + ref); !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	return packedRef(root, ref)
}

// errNotNative says a commit is git's to make; nothing was written.
var errNotNative = errors.New("workspace: git makes this commit")

// nativeCommit commits the working tree's files at paths on top of prev,
// HEAD's commit, as `git commit -- <paths>` would with the index in step
// with HEAD: the message cleaned as git does, authored by sign and
// committed by the host at the same time. It answers errNotNative, having
// written nothing, when the repository is not one it can read for
// certain; changed is false when the paths hold what prev has.
func (w *Workspace) nativeCommit(ctx context.Context, prev string, paths []string, sign signature, message string) (rev string, stat Stat, changed bool, err error) {
	if !plainRepository(w.files) {
		return "", Stat{}, false, errNotNative
	}
	ref, ok := branchOf(w.files)
	if !ok {
		return "", Stat{}, false, errNotNative
	}
	parent, ok := parseObjectID(prev)
	if !ok {
		return "", Stat{}, false, errNotNative
	}
	objects, ok := openObjects(w.root)
	if !ok {
		return "", Stat{}, false, errNotNative
	}
	defer objects.Close()
	headTree, ok := commitTree(w.files, parent)
	if !ok {
		return "", Stat{}, false, errNotNative
	}
	// The index's lock keeps git out while the host writes, as it keeps
	// one git from another.
	lock, err := w.root.OpenFile(".git/index.lock", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", Stat{}, false, errNotNative
	}
	locked := true
	defer func() {
		if locked {
			lock.Close()
			w.root.Remove(".git/index.lock")
		}
	}()
	ix, ok := readIndex(w.files)
	// The index must be HEAD's tree exactly (its cache of the top tree
	// says so), so that committing it with the paths changed is what git
	// commits with only those paths.
	if !ok || ix.trees[""].count != len(ix.entries) || ix.trees[""].id != headTree {
		return "", Stat{}, false, errNotNative
	}
	for _, e := range ix.entries {
		if path.Base(e.path) == ".gitattributes" {
			return "", Stat{}, false, errNotNative
		}
	}

	// The new entries, and the contents before and after, for the stat.
	type change struct {
		before, after []byte
		added         bool
		deleted       bool
	}
	var changes []change
	touched := map[string]bool{"": true}
	next := gitIndex{entries: slices.Clone(ix.entries)}
	for _, p := range paths {
		if path.Base(p) == ".gitattributes" || next.hasUnder(p) {
			return "", Stat{}, false, errNotNative // attributes, or a folder in the index
		}
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if next.has(dir) {
				return "", Stat{}, false, errNotNative // a file where a folder goes
			}
		}
		i, had := next.find(p)
		entries := next.entries
		var c change
		if had {
			e := entries[i]
			if e.mode != gitFile && e.mode != gitExec {
				return "", Stat{}, false, errNotNative
			}
			if c.before, ok = looseBlob(w.files, e.id); !ok {
				return "", Stat{}, false, errNotNative
			}
		}
		info, err := w.root.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if !had {
				continue
			}
			c.deleted = true
			next.entries = slices.Delete(entries, i, i+1)
		case err != nil || !info.Mode().IsRegular() || info.Size() > maxObject:
			return "", Stat{}, false, errNotNative
		default:
			content, err := w.files.readFile(p, maxObject)
			if err != nil {
				return "", Stat{}, false, errNotNative
			}
			id, err := writeLoose(objects, "blob", content)
			if err != nil {
				return "", Stat{}, false, fmt.Errorf("workspace: %w", err)
			}
			e, ok := entryOf(p, info, id)
			if !ok {
				return "", Stat{}, false, errNotNative
			}
			if had {
				switch {
				case entries[i].id == id && entries[i].mode == e.mode:
					entries[i] = e // the same file, looked at again
					continue
				case entries[i].mode != e.mode:
					return "", Stat{}, false, errNotNative // git's summary counts a mode
				}
				entries[i] = e
			} else {
				next.entries = slices.Insert(entries, i, e)
				c.added = true
			}
			c.after = content
		}
		changes = append(changes, c)
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			touched[dir] = true
		}
	}
	var added, deleted bool
	for _, c := range changes {
		added, deleted = added || c.added, deleted || c.deleted
	}
	if added && deleted {
		// git would look for renames in its summary: its count, not ours.
		return "", Stat{}, false, errNotNative
	}

	nodes, err := buildTrees(objects, next.entries, ix.trees, touched)
	if err != nil {
		return "", Stat{}, false, err
	}
	if nodes[0].id == headTree {
		return "", Stat{}, false, nil
	}
	exact := true
	for _, c := range changes {
		exact = stat.count(c.before, c.after) && exact
	}
	if stat.Files == 0 {
		return "", Stat{}, false, nil
	}

	committer := signature{HostName, HostEmail, sign.when}
	commit, err := writeLoose(objects, "commit", encodeCommit(nodes[0].id, parent, sign, committer, message))
	if err != nil {
		return "", Stat{}, false, fmt.Errorf("workspace: %w", err)
	}
	if _, err := lock.Write(next.encode(nodes)); err != nil {
		return "", Stat{}, false, fmt.Errorf("workspace: %w", err)
	}
	if err := lock.Close(); err != nil {
		return "", Stat{}, false, fmt.Errorf("workspace: %w", err)
	}
	if err := w.moveRef(ref, prev, commit.String(), committer, message); err != nil {
		return "", Stat{}, false, err
	}
	locked = false
	if err := w.root.Rename(".git/index.lock", ".git/index"); err != nil {
		return "", Stat{}, false, fmt.Errorf("workspace: the commit %s is made, but the index was not written: %w", commit, err)
	}
	if !exact {
		if stat, err = w.ShortStat(ctx, prev, commit.String()); err != nil {
			return "", Stat{}, false, err
		}
	}
	return commit.String(), stat, true, nil
}

// moveRef moves the branch ref from prev to next under its lock, as git
// does, and appends the move to its reflog and HEAD's when they are kept.
func (w *Workspace) moveRef(ref, prev, next string, committer signature, message string) error {
	lockName := ".git/" + ref + ".lock"
	lock, err := w.root.OpenFile(lockName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("workspace: the branch %s is locked by another git: %w", ref, err)
	}
	defer w.root.Remove(lockName)
	if now, ok := refValue(w.files, ref); !ok || now != prev {
		lock.Close()
		return fmt.Errorf("workspace: the branch %s moved while the host committed", ref)
	}
	_, err = lock.WriteString(next + "\n")
	if cerr := lock.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	subject, _, _ := strings.Cut(message, "\n")
	line := fmt.Sprintf("%s %s %s\tcommit: %s\n", prev, next, ident(committer), subject)
	for _, log := range []string{".git/logs/" + ref, ".git/logs/HEAD"} {
		w.appendLog(log, line)
	}
	if err := w.root.Rename(lockName, ".git/"+ref); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	return nil
}

// appendLog appends line to the reflog at name when it is a regular file
// there: a named pipe in its place is not waited on, nor a link followed.
func (w *Workspace) appendLog(name, line string) {
	f, err := w.root.OpenFile(name, os.O_WRONLY|os.O_APPEND|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_NOCTTY, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
		f.WriteString(line)
	}
}

// maxTreeDepth bounds how deep the host's own writer and counter go into
// folders: a path of the index is at most maxIndexPath bytes, so no
// folder of a workspace is deeper; a deeper one is git's to handle.
const maxTreeDepth = maxIndexPath / 2

// treeNode is one folder's tree: its name in its parent ("" for the
// top), how many entries it holds in all, how many folders directly, and
// the tree object's name. buildTrees lists them as the index caches them:
// a folder, then each of its folders in turn.
type treeNode struct {
	name     string
	count    int
	subtrees int
	id       objectID
}

// buildTrees writes the trees of entries, top first. A folder not touched
// whose tree the index caches keeps it.
func buildTrees(objects *os.Root, entries []indexEntry, cache map[string]cachedTree, touched map[string]bool) ([]treeNode, error) {
	var build func(dir, name string, entries []indexEntry, depth int) ([]treeNode, error)
	build = func(dir, name string, entries []indexEntry, depth int) ([]treeNode, error) {
		if depth > maxTreeDepth {
			return nil, errNotNative
		}
		prefix := ""
		if dir != "" {
			prefix = dir + "/"
		}
		var items []treeItem
		var children [][]treeNode
		for i := 0; i < len(entries); {
			rest := entries[i].path[len(prefix):]
			sub, _, nested := strings.Cut(rest, "/")
			if sub == "" {
				// An empty name would be the folder itself, again: the
				// index was read only when no path holds one.
				return nil, errNotNative
			}
			if !nested {
				items = append(items, treeItem{name: rest, mode: entries[i].mode, id: entries[i].id})
				i++
				continue
			}
			j := i + 1
			for j < len(entries) && strings.HasPrefix(entries[j].path[len(prefix):], sub+"/") {
				j++
			}
			subDir := prefix + sub
			nodes, err := build(subDir, sub, entries[i:j], depth+1)
			if err != nil {
				return nil, err
			}
			items = append(items, treeItem{name: sub, mode: gitTree, id: nodes[0].id})
			children = append(children, nodes)
			i = j
		}
		node := treeNode{name: name, count: len(entries), subtrees: len(children)}
		if c, ok := cache[dir]; ok && !touched[dir] && c.count == len(entries) {
			node.id = c.id
		} else {
			id, err := writeLoose(objects, "tree", encodeTree(items))
			if err != nil {
				return nil, fmt.Errorf("workspace: %w", err)
			}
			node.id = id
		}
		// The index lists a folder's folders shortest name first.
		slices.SortFunc(children, func(a, b []treeNode) int {
			if len(a[0].name) != len(b[0].name) {
				return len(a[0].name) - len(b[0].name)
			}
			return strings.Compare(a[0].name, b[0].name)
		})
		out := []treeNode{node}
		for _, c := range children {
			out = append(out, c...)
		}
		return out, nil
	}
	return build("", "", entries, 0)
}

// binaryContent is what git takes for binary: a NUL in the first 8,000
// bytes.
func binaryContent(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}

// nativeShortStat is ShortStat of two loose commits, counted by the host:
// false when anything in the way is git's to count — a packed object, a
// file added where another went (a rename, for git), a changed mode, a
// submodule or a link, attributes on the way, a change too large to
// count cheaply.
func (w *Workspace) nativeShortStat(from, to string) (Stat, bool) {
	a, okA := parseObjectID(from)
	b, okB := parseObjectID(to)
	if !okA || !okB || !plainRepository(w.files) {
		return Stat{}, false
	}
	ta, okA := commitTree(w.files, a)
	tb, okB := commitTree(w.files, b)
	if !okA || !okB {
		return Stat{}, false
	}
	var stat Stat
	var added, deleted bool
	// walk compares two trees; a zero name is a tree that is not there.
	var walk func(x, y objectID, depth int) bool
	walk = func(x, y objectID, depth int) bool {
		if x == y {
			return true
		}
		if depth > maxTreeDepth {
			return false
		}
		var xs, ys []treeItem
		for _, side := range []struct {
			id    objectID
			items *[]treeItem
		}{{x, &xs}, {y, &ys}} {
			if side.id == (objectID{}) {
				continue
			}
			items, ok := looseTree(w.files, side.id)
			if !ok {
				return false
			}
			*side.items = items
		}
		byName := map[string][2]treeItem{}
		for _, it := range xs {
			byName[it.name] = [2]treeItem{it, {}}
		}
		for _, it := range ys {
			pair := byName[it.name]
			pair[1] = it
			byName[it.name] = pair
		}
		for name, pair := range byName {
			old, cur := pair[0], pair[1]
			switch {
			case name == ".gitattributes":
				return false
			case old.mode == cur.mode && old.id == cur.id:
			case (old.mode == gitTree || old.mode == 0) && (cur.mode == gitTree || cur.mode == 0):
				if !walk(old.id, cur.id, depth+1) {
					return false
				}
			case old.mode != 0 && cur.mode != 0 && old.mode != cur.mode,
				old.mode == gitTree || cur.mode == gitTree,
				old.mode == gitLink || cur.mode == gitLink || old.mode == gitGitlink || cur.mode == gitGitlink:
				return false
			default:
				var before, after []byte
				var ok bool
				if added = added || old.mode == 0; old.mode != 0 {
					if before, ok = looseBlob(w.files, old.id); !ok {
						return false
					}
				}
				if deleted = deleted || cur.mode == 0; cur.mode != 0 {
					if after, ok = looseBlob(w.files, cur.id); !ok {
						return false
					}
				}
				if !stat.count(before, after) {
					return false
				}
			}
		}
		return true
	}
	if !walk(ta, tb, 0) || added && deleted {
		return Stat{}, false
	}
	return stat, true
}

// count adds a file changed from before to after (nil when absent), as
// git's stat counts it: a binary file changes no lines. false when the
// change is too large to count cheaply.
func (s *Stat) count(before, after []byte) bool {
	s.Files++
	if binaryContent(before) || binaryContent(after) {
		return true
	}
	ins, del, ok := lineChanges(before, after)
	s.Insertions += ins
	s.Deletions += del
	s.ChangedLines = s.Insertions + s.Deletions
	return ok
}

// looseBlob is the content of the loose blob id.
func looseBlob(root files, id objectID) ([]byte, bool) {
	kind, content, ok := readLoose(root, id)
	return content, ok && kind == "blob"
}

// looseTree reads the loose tree object id.
func looseTree(root files, id objectID) ([]treeItem, bool) {
	kind, content, ok := readLoose(root, id)
	if !ok || kind != "tree" {
		return nil, false
	}
	return decodeTree(content)
}
