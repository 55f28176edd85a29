package workspace

import (
	"archive/tar"
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"autoapp/intent/delivery"
	"autoapp/intent/refusal"
)

// Limits of what the host hands over.
const (
	// MaxArtifactBytes is the largest file an artifact may be.
	MaxArtifactBytes = 1 << 20
	// MaxArchiveBytes is the most file content one workspace download holds,
	// counted before compression.
	MaxArchiveBytes = 64 << 20
)

// Git's modes of the entries of a tree.
const (
	modeFile       = "100644"
	modeExecutable = "100755"
	modeSymlink    = "120000"
	modeSubmodule  = "160000"
	modeTree       = "040000"
)

// treeEntry is one line of git ls-tree -l.
type treeEntry struct {
	mode, kind, oid string
	size            int64 // -1 for a tree or a submodule
	path            string
}

// Commit returns the full hash of the commit rev names.
func (w *Workspace) Commit(ctx context.Context, rev string) (string, error) {
	commit, prob, err := w.commitOf(ctx, "revision", rev)
	if err != nil {
		return "", err
	}
	if prob != nil {
		return "", refusal.Problems{*prob}
	}
	return commit, nil
}

// Blob returns the file at p as the commit rev holds it. Only a regular
// file committed there, inside the workspace, of at most MaxArtifactBytes
// is returned; anything else is refused with a sentence for the person.
func (w *Workspace) Blob(ctx context.Context, rev, p string) (delivery.Blob, error) {
	clean, prob := cleanPath("path", p, forReading, false)
	if prob != nil {
		return delivery.Blob{}, refusal.Problems{{Field: "path", Message: asSentence(prob.Message)}}
	}
	commit, err := w.Commit(ctx, rev)
	if err != nil {
		return delivery.Blob{}, err
	}
	refuse := func(format string, args ...any) (delivery.Blob, error) {
		return delivery.Blob{}, refusal.Problems{{Field: "path", Message: fmt.Sprintf(format, args...)}}
	}
	e, err := w.entryAt(ctx, commit, clean)
	if err != nil {
		return delivery.Blob{}, err
	}
	switch {
	case e == nil:
		return refuse("%s is not committed at %s.", clean, shortRev(commit))
	case e.mode == modeSymlink:
		return refuse("%s is a symbolic link, not a file.", clean)
	case e.mode == modeSubmodule:
		return refuse("%s is a submodule, not a file.", clean)
	case e.kind == "tree":
		return refuse("%s is a folder.", clean)
	case e.kind != "blob" || (e.mode != modeFile && e.mode != modeExecutable):
		return refuse("%s is not a regular file.", clean)
	case e.size > MaxArtifactBytes:
		return refuse("%s is %s; an artifact is at most %d MiB.", clean, sizeText(e.size), MaxArtifactBytes>>20)
	}
	data, err := w.blobContent(ctx, *e)
	if err != nil {
		return delivery.Blob{}, err
	}
	sum := sha256.Sum256(data)
	return delivery.Blob{Path: clean, Data: data, Size: e.size, SHA256: hex.EncodeToString(sum[:]), Mode: e.mode}, nil
}

// entryAt is the entry of the cleaned path p in commit's tree, as git
// ls-tree lists it; nil when the commit holds nothing there.
func (w *Workspace) entryAt(ctx context.Context, commit, p string) (*treeEntry, error) {
	out, err := runGit(ctx, w.dir, hostSign(w.now()), "ls-tree", "-z", "-l", "--full-tree", commit, "--", p)
	if err != nil {
		return nil, fmt.Errorf("workspace: blob %s: %w", p, err)
	}
	entries, err := parseTree(out)
	if err != nil {
		return nil, fmt.Errorf("workspace: blob %s: %w", p, err)
	}
	for i := range entries {
		if entries[i].path == p {
			return &entries[i], nil
		}
	}
	return nil, nil
}

// blobContent is the content of the blob e names, of at most
// MaxArtifactBytes, as git stores it.
func (w *Workspace) blobContent(ctx context.Context, e treeEntry) ([]byte, error) {
	var buf bytes.Buffer
	lb := &limitedBuffer{max: MaxArtifactBytes, buf: &buf}
	if err := streamGit(ctx, w.dir, hostSign(w.now()), nil, nil, lb, "cat-file", "blob", e.oid); err != nil {
		return nil, fmt.Errorf("workspace: blob %s: %w", e.path, err)
	}
	if lb.total != e.size {
		return nil, fmt.Errorf("workspace: blob %s: git gave %d bytes of a %d-byte blob", e.path, lb.total, e.size)
	}
	return buf.Bytes(), nil
}

// Archive writes the whole workspace as the commit rev holds it to out, as
// a tar.gz whose files sit in one folder named after the workspace and the
// commit ("notes-1a2b3c4d5e6f/"). It refuses, before writing anything, when
// the files hold more than MaxArchiveBytes.
//
// The archive is written here rather than by git archive, which would apply
// the tree's own .gitattributes (export-ignore, export-subst, eol) and so
// hand over bytes that are not the committed ones.
//
// Symbolic links are left out: a link to /etc, or out of the folder, would
// reach the person's own files when they unpack it. A commit the
// engineer's code made by hand may hold any path: one that is absolute,
// goes up with "..", has an empty name or is inside .git (see
// pathProblem) refuses the whole archive with a sentence, so that what is
// handed over holds only regular files and the folders they are in.
func (w *Workspace) Archive(ctx context.Context, rev string, out io.Writer) error {
	commit, err := w.Commit(ctx, rev)
	if err != nil {
		return err
	}
	sign := hostSign(w.now())
	listing, err := runGit(ctx, w.dir, sign, "ls-tree", "-r", "-z", "-l", "--full-tree", commit)
	if err != nil {
		return fmt.Errorf("workspace: archive: %w", err)
	}
	entries, err := parseTree(listing)
	if err != nil {
		return fmt.Errorf("workspace: archive: %w", err)
	}
	// Before the size and the batch: a link is neither counted nor read.
	entries = slices.DeleteFunc(entries, func(e treeEntry) bool { return e.mode == modeSymlink })
	for _, e := range entries {
		if why := pathProblem(e.path); why != "" {
			return refusal.Problems{{Field: "revision", Message: fmt.Sprintf("The workspace at %s holds the path %s, which %s; "+
				"it is not handed over, since unpacking it would write outside its folder or into a repository's own files.",
				shortRev(commit), quotedPath(e.path), why)}}
		}
	}
	var total int64
	var batch strings.Builder
	for _, e := range entries {
		if e.kind == "blob" {
			total += e.size
			batch.WriteString(e.oid + "\n")
		}
	}
	if total > MaxArchiveBytes {
		return refusal.Problems{{Field: "revision", Message: fmt.Sprintf("The workspace at %s holds %s of files; a download is at most %d MiB.",
			shortRev(commit), sizeText(total), MaxArchiveBytes>>20)}}
	}
	when, err := runGit(ctx, w.dir, sign, "show", "-s", "--format=%ct", commit)
	if err != nil {
		return fmt.Errorf("workspace: archive: %w", err)
	}
	secs, err := strconv.ParseInt(strings.TrimSpace(string(when)), 10, 64)
	if err != nil {
		return fmt.Errorf("workspace: archive: the commit time %q: %w", when, err)
	}
	a := archive{
		prefix:  archiveFolder(w.dir) + "-" + shortRev(commit) + "/",
		commit:  commit,
		modTime: time.Unix(secs, 0).UTC(),
		entries: entries,
	}

	// git cat-file --batch streams every blob, in the listing's order, into
	// the tar writer. When writing fails, closing the pipe with the error
	// ends git too.
	pr, pw := io.Pipe()
	written := make(chan error, 1)
	go func() {
		err := a.write(pr, out)
		pr.CloseWithError(cmp.Or(err, errors.New("the archive ended before git did")))
		written <- err
	}()
	gitErr := streamGit(ctx, w.dir, sign, strings.NewReader(batch.String()), nil, pw, "cat-file", "--batch")
	pw.CloseWithError(cmp.Or(gitErr, io.EOF))
	if err := <-written; err != nil {
		return fmt.Errorf("workspace: archive: %w", err)
	}
	if gitErr != nil {
		return fmt.Errorf("workspace: archive: %w", gitErr)
	}
	return nil
}

// archive is one tar.gz being written from a commit's listing.
type archive struct {
	prefix  string
	commit  string
	modTime time.Time
	entries []treeEntry // no symbolic link among them
}

// write reads the blobs of a's entries, in order, from git cat-file
// --batch output, and writes the tar.gz to out.
func (a archive) write(batch io.Reader, out io.Writer) error {
	zw, err := gzip.NewWriterLevel(out, gzip.BestCompression)
	if err != nil {
		return err
	}
	zw.ModTime = a.modTime
	tw := tar.NewWriter(zw)
	// As git archive does: the commit in a pax comment, which
	// git get-tar-commit-id reads back.
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header",
		PAXRecords: map[string]string{"comment": a.commit}}); err != nil {
		return err
	}
	top := &tar.Header{Typeflag: tar.TypeDir, Name: a.prefix, Mode: 0o755, ModTime: a.modTime}
	if err := tw.WriteHeader(top); err != nil {
		return err
	}
	br := bufio.NewReaderSize(batch, 64<<10)
	dirs := map[string]bool{}
	for _, e := range a.entries {
		if err := a.writeDirs(tw, dirs, path.Dir(e.path)); err != nil {
			return err
		}
		if e.kind != "blob" {
			// A submodule is an empty folder, as git archive makes it.
			if err := a.writeDirs(tw, dirs, e.path); err != nil {
				return err
			}
			continue
		}
		if err := batchHeader(br, e); err != nil {
			return err
		}
		h := &tar.Header{Name: a.prefix + e.path, ModTime: a.modTime, Mode: 0o644, Typeflag: tar.TypeReg, Size: e.size}
		if e.mode == modeExecutable {
			h.Mode = 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := io.CopyN(tw, br, e.size); err != nil {
			return fmt.Errorf("copy %s: %w", e.path, err)
		}
		if b, err := br.ReadByte(); err != nil || b != '\n' {
			return fmt.Errorf("git cat-file: no line end after %s", e.oid)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// writeDirs writes the folder dir, and the folders it is in, once each.
func (a archive) writeDirs(tw *tar.Writer, done map[string]bool, dir string) error {
	if dir == "." || dir == "" || done[dir] {
		return nil
	}
	if err := a.writeDirs(tw, done, path.Dir(dir)); err != nil {
		return err
	}
	done[dir] = true
	return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: a.prefix + dir + "/", Mode: 0o755, ModTime: a.modTime})
}

// batchHeader reads git cat-file --batch's line before a blob's bytes:
// "<oid> blob <size>".
func batchHeader(br *bufio.Reader, e treeEntry) error {
	line, err := br.ReadString('\n')
	if err != nil {
		return fmt.Errorf("git cat-file: %w", err)
	}
	want := fmt.Sprintf("%s blob %d\n", e.oid, e.size)
	if line != want {
		return fmt.Errorf("git cat-file: read %q, want %q", strings.TrimSpace(line), strings.TrimSpace(want))
	}
	return nil
}

// parseTree reads git ls-tree -z -l: "<mode> <type> <oid> <size>\t<path>\0".
func parseTree(out []byte) ([]treeEntry, error) {
	var entries []treeEntry
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, p, ok := bytes.Cut(rec, []byte{'\t'})
		fields := strings.Fields(string(meta))
		if !ok || len(fields) != 4 {
			return nil, fmt.Errorf("cannot read the git ls-tree line %q", rec)
		}
		e := treeEntry{mode: fields[0], kind: fields[1], oid: fields[2], size: -1, path: string(p)}
		if fields[3] != "-" {
			n, err := strconv.ParseInt(fields[3], 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("cannot read the size in the git ls-tree line %q", rec)
			}
			e.size = n
		}
		if e.kind == "blob" && e.size < 0 {
			return nil, fmt.Errorf("git ls-tree gave no size for the blob %s", e.path)
		}
		if e.mode == modeTree && e.kind != "tree" {
			return nil, fmt.Errorf("git ls-tree gave a folder mode to the %s %s", e.kind, e.path)
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// archiveFolder names a workspace's download: its folder's name, or the
// name of the folder it is in when it is called "workspace", as an
// application's is (<root>/apps/<id>/workspace).
func archiveFolder(dir string) string {
	name := filepath.Base(dir)
	if name == "workspace" {
		if parent := filepath.Base(filepath.Dir(dir)); parent != "." && parent != string(filepath.Separator) {
			name = parent
		}
	}
	return name
}

// shortRev is the commit as the person is shown it.
func shortRev(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// asSentence makes one of the path rules' messages a sentence for the
// person: a capital first letter and a full stop.
func asSentence(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	s = string(r)
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}
