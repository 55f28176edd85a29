package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"slices"
	"strings"
	"unicode"

	"autoapp/intent/refusal"
)

// Hunk is one exact find/replace in a file. Find must match exactly one
// place of the file as it is before the edit.
type Hunk struct {
	Find    string `json:"find"`
	Replace string `json:"replace"`
}

// CommitMeta names where a change came from, for its commit message.
type CommitMeta struct {
	RunID  string
	CallID string
	// Since, when it is a commit's full name, asks git to count the
	// change from it to the new commit in the same start as the commit
	// (the task's change so far), so that ShortStat from Since to the new
	// commit answers without starting git again.
	Since string
}

// EditResult is an accepted change: the commit that records it.
type EditResult struct {
	Revision string `json:"revision"`
	Previous string `json:"previous"`
	// Files are the paths the commit changed.
	Files []string `json:"files"`
	Stat  Stat     `json:"stat"`
	// Hunks say how each hunk of an edit matched: where its find text
	// was, in the file as it was before the edit. Kept for the record,
	// not written with the result.
	Hunks []HunkMatch `json:"-"`
}

// HunkMatch is how one hunk of an edit matched: its find text was found
// exactly once, starting at Line (1-based), and replaced by Replace.
type HunkMatch struct {
	Path          string
	Line          int
	Find, Replace string
}

// FileAction is what a Change does to one file.
type FileAction string

// The actions of a Change.
const (
	Create    FileAction = "create"    // the file must not exist
	Overwrite FileAction = "overwrite" // the file must exist
	Delete    FileAction = "delete"    // the file must exist
)

// FileChange is one file of a Change. Content is the whole new file; a
// delete carries none.
type FileChange struct {
	Path    string     `json:"path"`
	Action  FileAction `json:"action"`
	Content string     `json:"content,omitempty"`
}

// fileWrite is one planned write, with what it needs to be undone.
type fileWrite struct {
	path    string
	field   string // the input that names it, for a problem
	action  FileAction
	content []byte
	target  target
	old     []byte // the file before, when it existed
}

// Edit applies hunks to the file at p and commits the result. Every hunk
// is matched against the file as it is; when any hunk's find text matches
// nothing, more than one place, or overlaps another hunk, nothing is
// written and each such hunk is named.
func (w *Workspace) Edit(ctx context.Context, p string, hunks []Hunk, meta CommitMeta) (EditResult, error) {
	w.writing.Lock()
	defer w.writing.Unlock()

	var ps refusal.Problems
	clean, prob := cleanPath("path", p, forWriting, false)
	if prob != nil {
		ps = append(ps, *prob)
	}
	switch {
	case len(hunks) == 0:
		ps = append(ps, refusal.Problem{Field: "hunks", Message: "give at least one hunk: the exact text to find and its replacement"})
	case len(hunks) > MaxHunks:
		ps = append(ps, refusal.Problem{Field: "hunks", Message: fmt.Sprintf("at most %d hunks an edit", MaxHunks)})
	}
	for i, h := range hunks {
		switch {
		case h.Find == "":
			ps = append(ps, refusal.Problem{Field: fmt.Sprintf("hunks[%d].find", i), Message: "give the exact text to replace, copied from the file"})
		case h.Find == h.Replace:
			ps = append(ps, refusal.Problem{Field: fmt.Sprintf("hunks[%d].replace", i), Message: "is the same as find; nothing would change"})
		}
	}
	if len(ps) > 0 {
		return EditResult{}, ps
	}

	t, prob, err := w.writeTarget(ctx, "path", clean)
	if err != nil {
		return EditResult{}, err
	}
	if prob == nil && !t.exists {
		prob = &refusal.Problem{Field: "path", Message: fmt.Sprintf("there is no file %q; create it with a change", clean)}
	}
	if prob != nil {
		return EditResult{}, refusal.Problems{*prob}
	}
	old, prob, err := w.readText("path", clean)
	if err != nil {
		return EditResult{}, err
	}
	if prob != nil {
		return EditResult{}, refusal.Problems{*prob}
	}

	content, matched, ps := applyHunks(clean, string(old), hunks)
	if len(ps) > 0 {
		return EditResult{}, ps
	}
	if len(content) > MaxFileBytes {
		return EditResult{}, refusal.Problems{{Field: "hunks", Message: fmt.Sprintf("the edit would make %q larger than %d MiB", clean, MaxFileBytes>>20)}}
	}
	tracked, err := w.tracked(ctx, []string{clean})
	if err != nil {
		return EditResult{}, err
	}
	writes := []fileWrite{{path: clean, field: "path", action: Overwrite, content: []byte(content), target: t, old: old}}
	res, err := w.commitWrites(ctx, writes, tracked, "source.edit "+clean, "", "hunks", meta)
	if err == nil {
		res.Hunks = matched
	}
	return res, err
}

// applyHunks finds each hunk once in content and replaces them all; it
// answers, in the hunks' order, where each matched.
func applyHunks(file, content string, hunks []Hunk) (string, []HunkMatch, refusal.Problems) {
	type span struct{ hunk, start, end int }
	var ps refusal.Problems
	var spans []span
	for i, h := range hunks {
		field := fmt.Sprintf("hunks[%d].find", i)
		n, at := countMatches(content, h.Find, 100)
		switch {
		case n == 0:
			msg := fmt.Sprintf("matches nothing in %s; copy the text exactly as read, with its spaces and line breaks", file)
			if strings.Contains(content, "\r\n") && strings.Contains(h.Find, "\n") && !strings.Contains(h.Find, "\r\n") {
				msg += " (the file's lines end with \\r\\n)"
			}
			ps = append(ps, refusal.Problem{Field: field, Message: msg})
		case n >= 100:
			ps = append(ps, refusal.Problem{Field: field, Message: "matches 100 places or more; include more surrounding lines so it matches one"})
		case n > 1:
			ps = append(ps, refusal.Problem{Field: field, Message: fmt.Sprintf("matches %d places; include more surrounding lines so it matches one", n)})
		default:
			spans = append(spans, span{hunk: i, start: at, end: at + len(h.Find)})
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	for i := 1; i < len(spans); i++ {
		a, b := spans[i-1], spans[i]
		if b.start < a.end {
			later, earlier := max(a.hunk, b.hunk), min(a.hunk, b.hunk)
			ps = append(ps, refusal.Problem{Field: fmt.Sprintf("hunks[%d].find", later),
				Message: fmt.Sprintf("overlaps hunks[%d]; join the two into one hunk", earlier)})
		}
	}
	if len(ps) > 0 {
		slices.SortStableFunc(ps, func(a, b refusal.Problem) int { return strings.Compare(a.Field, b.Field) })
		return "", nil, ps
	}
	var out strings.Builder
	matched := make([]HunkMatch, len(hunks))
	pos := 0
	for _, s := range spans {
		h := hunks[s.hunk]
		matched[s.hunk] = HunkMatch{Path: file, Line: 1 + strings.Count(content[:s.start], "\n"), Find: h.Find, Replace: h.Replace}
		out.WriteString(content[pos:s.start])
		out.WriteString(h.Replace)
		pos = s.end
	}
	out.WriteString(content[pos:])
	return out.String(), matched, nil
}

// countMatches counts the places sub starts in s, overlapping ones too,
// up to limit, and returns where the first is.
func countMatches(s, sub string, limit int) (n, first int) {
	first = -1
	for i := 0; n < limit; {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			break
		}
		if first < 0 {
			first = i + j
		}
		n++
		i += j + 1
	}
	return n, first
}

// readText reads the whole text file at the cleaned path p.
func (w *Workspace) readText(field, p string) ([]byte, *refusal.Problem, error) {
	f, prob, err := w.openText(field, p)
	if err != nil || prob != nil {
		return nil, prob, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, fmt.Errorf("workspace: read %s: %w", p, err)
	}
	return b, nil, nil
}

// Change creates, overwrites and deletes files, and commits them in one
// commit. Create refuses a file that exists; overwrite and delete refuse
// one that does not; folders a created file needs are made. When any file
// is refused, nothing is written and each refusal is named.
func (w *Workspace) Change(ctx context.Context, files []FileChange, meta CommitMeta) (EditResult, error) {
	w.writing.Lock()
	defer w.writing.Unlock()

	var ps refusal.Problems
	add := func(field, format string, args ...any) {
		ps = append(ps, refusal.Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	switch {
	case len(files) == 0:
		add("files", "give at least one file to create, overwrite or delete")
	case len(files) > MaxChangeFiles:
		add("files", "at most %d files a change", MaxChangeFiles)
	}
	var writes []fileWrite
	seen := map[string]int{}
	for i, fc := range files {
		field := fmt.Sprintf("files[%d]", i)
		clean, prob := cleanPath(field+".path", fc.Path, forWriting, false)
		if prob != nil {
			ps = append(ps, *prob)
		}
		switch fc.Action {
		case Create, Overwrite, Delete:
		case "":
			add(field+".action", "give the action: create, overwrite or delete")
		default:
			add(field+".action", "%q is not an action; give create, overwrite or delete", fc.Action)
		}
		switch {
		case fc.Action == Delete && fc.Content != "":
			add(field+".content", "a delete takes no content")
		case len(fc.Content) > MaxWriteBytes:
			add(field+".content", "at most %d KiB a file", MaxWriteBytes>>10)
		}
		if prob != nil {
			continue
		}
		if j, ok := seen[clean]; ok {
			add(field+".path", "%q is named twice (files[%d] names it too)", clean, j)
			continue
		}
		seen[clean] = i
		for other, j := range seen {
			if strings.HasPrefix(clean, other+"/") || strings.HasPrefix(other, clean+"/") {
				add(field+".path", "%q and %q (files[%d]) cannot both be files; one is inside the other", clean, other, j)
			}
		}
		t, prob, err := w.writeTarget(ctx, field+".path", clean)
		if err != nil {
			return EditResult{}, err
		}
		switch {
		case prob != nil:
			ps = append(ps, *prob)
			continue
		case fc.Action == Create && t.exists:
			add(field+".path", "%q already exists; overwrite it, or edit it with hunks", clean)
			continue
		case (fc.Action == Overwrite || fc.Action == Delete) && !t.exists:
			add(field+".path", "there is no file %q", clean)
			continue
		}
		fw := fileWrite{path: clean, field: field + ".path", action: fc.Action, content: []byte(fc.Content), target: t}
		if t.exists {
			old, prob, err := w.readWhole(field+".path", clean)
			if err != nil {
				return EditResult{}, err
			}
			if prob != nil {
				ps = append(ps, *prob)
				continue
			}
			fw.old = old
		}
		writes = append(writes, fw)
	}
	if len(ps) > 0 {
		return EditResult{}, ps
	}
	paths := make([]string, len(writes))
	for i, fw := range writes {
		paths[i] = fw.path
	}
	tracked, err := w.tracked(ctx, paths)
	if err != nil {
		return EditResult{}, err
	}
	subject, body := changeMessage(writes)
	return w.commitWrites(ctx, writes, tracked, subject, body, "files", meta)
}

// readWhole reads a file a change replaces or deletes, so that the change
// can be undone; files larger than MaxFileBytes are refused.
func (w *Workspace) readWhole(field, p string) ([]byte, *refusal.Problem, error) {
	f, err := w.openSource(p)
	if err != nil {
		return nil, nil, fmt.Errorf("workspace: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("workspace: %w", err)
	case !info.Mode().IsRegular():
		return nil, &refusal.Problem{Field: field, Message: fmt.Sprintf("%q is %s, not a regular file", p, kindOf(info.Mode()))}, nil
	case info.Size() > MaxFileBytes:
		return nil, &refusal.Problem{Field: field, Message: fmt.Sprintf("%q is %s; the engineer changes files up to %d MiB", p, sizeText(info.Size()), MaxFileBytes>>20)}, nil
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("workspace: read %s: %w", p, err)
	}
	if len(b) > MaxFileBytes {
		return nil, &refusal.Problem{Field: field, Message: fmt.Sprintf("%q is larger than %d MiB; the engineer changes files up to %d MiB", p, MaxFileBytes>>20, MaxFileBytes>>20)}, nil
	}
	return b, nil, nil
}

// changeMessage is the commit subject and body of a Change.
func changeMessage(writes []fileWrite) (string, string) {
	parts := make([]string, len(writes))
	for i, fw := range writes {
		parts[i] = string(fw.action) + " " + fw.path
	}
	if len(parts) == 1 {
		return "source.change " + parts[0], ""
	}
	subject := "source.change " + strings.Join(parts, ", ")
	if len(parts) > 3 {
		subject = fmt.Sprintf("source.change %s and %d more", strings.Join(parts[:2], ", "), len(parts)-2)
	}
	return subject, strings.Join(parts, "\n")
}

// ignoredProblems names the written paths git ignores and does not track,
// when git add refused to add them: the host commits every change, and
// git will not add those. A tracked path is added whatever .gitignore
// says, so only the others are asked about.
func (w *Workspace) ignoredProblems(ctx context.Context, writes []fileWrite, tracked map[string]bool) (refusal.Problems, error) {
	var untracked []string
	for _, fw := range writes {
		if !tracked[fw.path] {
			untracked = append(untracked, fw.path)
		}
	}
	if len(untracked) == 0 {
		return nil, nil
	}
	// check-ignore reads names, not pathspecs, and refuses literal mode.
	in := strings.Join(untracked, "\x00") + "\x00"
	out, err := runGitInput(ctx, w.dir, hostSign(w.now()), strings.NewReader(in), []string{"GIT_LITERAL_PATHSPECS=0"},
		"check-ignore", "-z", "--stdin")
	if exitCode(err) == 1 {
		return nil, nil // none is ignored
	}
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	ignored := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		ignored[p] = true
	}
	var ps refusal.Problems
	for _, fw := range writes {
		if ignored[fw.path] {
			ps = append(ps, refusal.Problem{Field: fw.field, Message: fmt.Sprintf("%q is ignored by the workspace's .gitignore; the host commits every change, so it cannot change it", fw.path)})
		}
	}
	return ps, nil
}

// commitWrites writes the files and commits them with git, or, when
// anything fails before git made the commit, puts every file back as it
// was. noChangeField names the input when the writes leave every file as
// git has it. Once it begins, a cancelled ctx does not stop it half-way
// (a commit cut off, or files left unrestored): only each command's
// timeout does.
func (w *Workspace) commitWrites(ctx context.Context, writes []fileWrite, tracked map[string]bool, subject, body, noChangeField string, meta CommitMeta) (EditResult, error) {
	ctx = context.WithoutCancel(ctx)
	if err := w.checkIndex(ctx); err != nil {
		return EditResult{}, err
	}
	prev, err := w.Head(ctx)
	if err != nil {
		return EditResult{}, err
	}
	var done []fileWrite
	fail := func(err error) (EditResult, error) {
		if uerr := w.undo(ctx, done); uerr != nil {
			err = errors.Join(err, uerr)
		}
		return EditResult{}, err
	}
	for _, fw := range writes {
		done = append(done, fw)
		if err := w.write(fw); err != nil {
			return fail(fmt.Errorf("workspace: write %s: %w", fw.path, err))
		}
	}

	paths := pathsToCommit(writes, tracked)
	noChange := func() (EditResult, error) {
		return fail(refusal.Problems{{Field: noChangeField, Message: "the change leaves every file as it is in the last commit"}})
	}
	if len(paths) == 0 {
		return noChange()
	}
	// A commit on top of Since counts its change in its own summary.
	since := meta.Since
	if since == prev {
		since = ""
	}
	c, err := w.addAndCommit(ctx, engineerSign(w.now()), paths, !allTracked(paths, tracked), since, subject+meta.suffix(), body)
	switch {
	case err == nil:
	case c.failed == stepAdd:
		// git add refuses a path .gitignore ignores: say which.
		if ps, ierr := w.ignoredProblems(ctx, writes, tracked); ierr != nil || len(ps) > 0 {
			return fail(firstError(ierr, ps))
		}
		return fail(fmt.Errorf("workspace: %w", err))
	case exitCode(err) == 1: // commit's: the paths hold nothing to commit
		return noChange()
	default:
		// git may fail after it made the commit (writing the index, say):
		// the files are then what that commit holds, and stay so.
		if now, herr := w.Head(ctx); herr == nil && now != prev {
			return EditResult{}, fmt.Errorf("workspace: git made the commit %s of %s, then failed: %w", now, strings.Join(paths, ", "), err)
		}
		return fail(fmt.Errorf("workspace: commit: %w", err))
	}
	rev, err := w.Head(ctx)
	if err != nil {
		return EditResult{}, err
	}
	stat, err := commitStat(string(c.summary))
	if err != nil {
		return EditResult{}, err
	}
	switch {
	case c.since != nil:
		counts.Store(w.dir, countedChange{from: meta.Since, to: rev, stat: *c.since})
	case objectName(meta.Since) && meta.Since == prev:
		counts.Store(w.dir, countedChange{from: meta.Since, to: rev, stat: stat})
	}
	return EditResult{Revision: rev, Previous: prev, Files: paths, Stat: stat}, nil
}

// commitStat reads the shortstat line of a commit's summary (" 2 files
// changed, 3 insertions(+)"); a summary without one changed nothing.
func commitStat(summary string) (Stat, error) {
	for line := range strings.Lines(summary) {
		// The first line is "[main 1a2b3c4] <subject>", which the engineer's
		// words may fill.
		if !strings.HasPrefix(line, "[") && strings.Contains(line, " changed") && shortStatPart.MatchString(line) {
			return parseShortStat(line)
		}
	}
	return Stat{}, nil
}

func allTracked(paths []string, tracked map[string]bool) bool {
	for _, p := range paths {
		if !tracked[p] {
			return false
		}
	}
	return true
}

// tracked are those of paths git tracks, from one ls-files.
func (w *Workspace) tracked(ctx context.Context, paths []string) (map[string]bool, error) {
	if ix, ok := readIndex(w.files); ok {
		tracked := map[string]bool{}
		for _, p := range paths {
			if ix.has(p) {
				tracked[p] = true
			}
		}
		return tracked, nil
	}
	out, err := runGit(ctx, w.dir, hostSign(w.now()), append([]string{"ls-files", "-z", "--"}, paths...)...)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	tracked := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			tracked[p] = true
		}
	}
	return tracked, nil
}

// pathsToCommit are the written paths git can add: those on disk now and
// those it tracks (a deleted file it never tracked has nothing to commit).
// Writing changes no path's tracking, so tracked was read before.
func pathsToCommit(writes []fileWrite, tracked map[string]bool) []string {
	var paths []string
	for _, fw := range writes {
		if fw.action != Delete || tracked[fw.path] {
			paths = append(paths, fw.path)
		}
	}
	return paths
}

// write does one planned write. A file is written beside its place and
// renamed over it, so a reader never sees half of it.
func (w *Workspace) write(fw fileWrite) error {
	if fw.action == Delete {
		return w.root.Remove(fw.path)
	}
	if dir := path.Dir(fw.path); dir != "." {
		if err := w.root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	mode := fs.FileMode(0o644)
	if fw.target.exists {
		mode = fw.target.mode
	}
	tmp := path.Join(path.Dir(fw.path), fmt.Sprintf(".%s.autoapp-%08x", path.Base(fw.path), rand.Uint32()))
	f, err := w.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, bytes.NewReader(fw.content))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.root.Chmod(tmp, mode) // the umask may have narrowed it
	}
	if err == nil {
		err = w.root.Rename(tmp, fw.path)
	}
	if err != nil {
		w.root.Remove(tmp)
	}
	return err
}

// undo puts back the files of writes, last first, and unstages them.
func (w *Workspace) undo(ctx context.Context, done []fileWrite) error {
	var errs []error
	var paths []string
	for i := len(done) - 1; i >= 0; i-- {
		fw := done[i]
		paths = append(paths, fw.path)
		if fw.target.exists {
			back := fileWrite{path: fw.path, action: Overwrite, content: fw.old, target: fw.target}
			if err := w.write(back); err != nil {
				errs = append(errs, fmt.Errorf("workspace: put back %s: %w", fw.path, err))
			}
			continue
		}
		if err := w.root.Remove(fw.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("workspace: remove %s: %w", fw.path, err))
		}
		if fw.target.firstNew != "" {
			if err := w.root.RemoveAll(fw.target.firstNew); err != nil {
				errs = append(errs, fmt.Errorf("workspace: remove %s: %w", fw.target.firstNew, err))
			}
		}
	}
	// Unstage what git add may have staged; an error here means nothing was.
	runGit(ctx, w.dir, hostSign(w.now()), append([]string{"reset", "-q", "--"}, paths...)...)
	return errors.Join(errs...)
}

// suffix is " (run R, call C)" for the commit subject, or "".
func (m CommitMeta) suffix() string {
	var parts []string
	if id := commitID(m.RunID); id != "" {
		parts = append(parts, "run "+id)
	}
	if id := commitID(m.CallID); id != "" {
		parts = append(parts, "call "+id)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// commitID keeps an id to one short line.
func commitID(id string) string {
	id = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, id)
	return cutUTF8(strings.TrimSpace(id), 100)
}
