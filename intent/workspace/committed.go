package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"

	"autoapp/intent/app"
	"autoapp/intent/refusal"
)

// MaxManifestBytes is the largest autoapp.json the host reads.
const MaxManifestBytes = 256 << 10

// obeyOnlyCommitted ends every sentence about a working tree's manifest
// the host does not obey.
const obeyOnlyCommitted = "the host obeys only the committed manifest"

// Manifest reads the manifest the host obeys: autoapp.json as HEAD's
// commit holds it, its text, the manifest and its problems. The working
// tree's autoapp.json must hold the same bytes. One that differs — the
// engineer's code rewrote it, which the engineer's tools refuse, or put a
// link, a named pipe or nothing in its place — is named as a problem, so
// that nothing is built from it, and the text and the manifest answered
// are still HEAD's: nothing the working tree holds is obeyed or shown. A
// HEAD without autoapp.json has no manifest.
func (w *Workspace) Manifest(ctx context.Context) ([]byte, app.Manifest, refusal.Problems, error) {
	head, err := w.Head(ctx)
	if err != nil {
		return nil, app.Manifest{}, nil, err
	}
	c, err := w.committedManifest(ctx, head)
	if err != nil {
		return nil, app.Manifest{}, nil, err
	}
	working, rerr := w.ReadFile(app.ManifestFile, MaxManifestBytes)
	var re *ReadError
	if rerr != nil && !errors.As(rerr, &re) {
		return nil, app.Manifest{}, nil, rerr
	}
	switch {
	case c.absent && errors.Is(rerr, fs.ErrNotExist):
		return nil, app.Manifest{}, refusal.Problems{{Message: "the workspace has no autoapp.json"}}, nil
	case c.absent:
		return nil, app.Manifest{}, refusal.Problems{{Message: app.ManifestFile + " is not committed at HEAD; " + obeyOnlyCommitted}}, nil
	case c.problem != "":
		return nil, app.Manifest{}, refusal.Problems{{Message: c.problem}}, nil
	}
	m, ps := app.ParseManifest(c.raw)
	switch {
	case errors.Is(rerr, fs.ErrNotExist):
		ps = append(ps, refusal.Problem{Message: app.ManifestFile + " is not in the workspace, though HEAD commits one; " + obeyOnlyCommitted})
	case re != nil:
		ps = append(ps, refusal.Problem{Message: app.ManifestFile + " in the workspace " + re.Reason + "; " + obeyOnlyCommitted})
	case !bytes.Equal(working, c.raw):
		ps = append(ps, refusal.Problem{Message: app.ManifestFile + " in the workspace differs from the one committed at HEAD; " + obeyOnlyCommitted})
	}
	return c.raw, m, ps, nil
}

// committedFile is autoapp.json as one commit holds it: its bytes, or
// that the commit holds none, or why what it holds is no manifest.
type committedFile struct {
	commit  string
	raw     []byte
	absent  bool
	problem string
}

// committed keeps each workspace's manifest at its last HEAD: the host
// reads the manifest at every build and every page, and HEAD moves only
// with a commit.
var committed sync.Map // real directory → committedFile

// committedManifest is autoapp.json as the commit head holds it: read
// from the loose objects when they are there (the host's commits until
// git packs them), else from git.
func (w *Workspace) committedManifest(ctx context.Context, head string) (committedFile, error) {
	if c, ok := committed.Load(w.dir); ok && c.(committedFile).commit == head {
		return c.(committedFile), nil
	}
	c, ok := w.looseManifest(head)
	if !ok {
		var err error
		if c, err = w.gitManifest(ctx, head); err != nil {
			return committedFile{}, err
		}
	}
	committed.Store(w.dir, c)
	return c, nil
}

// looseManifest reads autoapp.json at head from the loose objects; false
// when any of them is not loose.
func (w *Workspace) looseManifest(head string) (committedFile, bool) {
	c := committedFile{commit: head}
	id, ok := parseObjectID(head)
	if !ok {
		return c, false
	}
	tree, ok := commitTree(w.files, id)
	if !ok {
		return c, false
	}
	items, ok := looseTree(w.files, tree)
	if !ok {
		return c, false
	}
	i := slices.IndexFunc(items, func(it treeItem) bool { return it.name == app.ManifestFile })
	if i < 0 {
		c.absent = true
		return c, true
	}
	switch it := items[i]; it.mode {
	case gitFile, gitExec:
		raw, ok := looseBlob(w.files, it.id)
		if !ok {
			return c, false
		}
		c.raw = raw
		if len(raw) > MaxManifestBytes {
			c.raw, c.problem = nil, committedTooLarge(int64(len(raw)))
		}
	default:
		c.problem = app.ManifestFile + " is committed at HEAD as " + kindOfGitMode(it.mode) + ", not a file; " + obeyOnlyCommitted
	}
	return c, true
}

// gitManifest reads autoapp.json at head with git.
func (w *Workspace) gitManifest(ctx context.Context, head string) (committedFile, error) {
	c := committedFile{commit: head}
	e, err := w.entryAt(ctx, head, app.ManifestFile)
	switch {
	case err != nil:
		return c, err
	case e == nil:
		c.absent = true
	case e.kind != "blob" || (e.mode != modeFile && e.mode != modeExecutable):
		c.problem = app.ManifestFile + " is committed at HEAD as " + kindOfGitEntry(*e) + ", not a file; " + obeyOnlyCommitted
	case e.size > MaxManifestBytes:
		c.problem = committedTooLarge(e.size)
	default:
		if c.raw, err = w.blobContent(ctx, *e); err != nil {
			return c, err
		}
	}
	return c, nil
}

func committedTooLarge(n int64) string {
	return fmt.Sprintf("%s is committed at HEAD as %s, and the host reads a manifest of at most %s", app.ManifestFile, sizeText(n), limitText(MaxManifestBytes))
}

// kindOfGitMode names what a tree entry of mode is, for a sentence.
func kindOfGitMode(mode uint32) string {
	switch mode {
	case gitLink:
		return "a symbolic link"
	case gitGitlink:
		return "a submodule"
	case gitTree:
		return "a folder"
	}
	return "something other than a file"
}

// kindOfGitEntry names what git ls-tree listed, for a sentence.
func kindOfGitEntry(e treeEntry) string {
	switch {
	case e.mode == modeSymlink:
		return "a symbolic link"
	case e.mode == modeSubmodule:
		return "a submodule"
	case e.kind == "tree":
		return "a folder"
	}
	return "something other than a file"
}
