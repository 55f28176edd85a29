package workspace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"autoapp/intent/refusal"
)

// Entry is one name in a folder.
type Entry struct {
	// Name is the entry's own name; Path is the path from the workspace's
	// top, as the other operations take it.
	Name string `json:"name"`
	Path string `json:"path"`
	Dir  bool   `json:"dir"`
	// Size is a file's size in bytes; 0 for a folder.
	Size int64 `json:"size"`
	// Link says the entry is a symbolic link, which the engineer may read
	// through (when it stays inside) but never write through.
	Link bool `json:"link,omitempty"`
}

// List returns the entries of the folder dir ("" or "." for the top), in
// name order, leaving out .git.
func (w *Workspace) List(dir string) ([]Entry, error) {
	p, prob := cleanPath("dir", dir, forReading, true)
	if prob != nil {
		return nil, refusal.Problems{*prob}
	}
	f, err := w.openSource(p)
	if err != nil {
		return nil, refusal.Problems{*w.openProblem("dir", p, "folder", err)}
	}
	defer f.Close()
	info, err := f.Stat()
	switch {
	case err != nil:
		return nil, fmt.Errorf("workspace: %w", err)
	case info.Mode().IsRegular():
		return nil, refusal.Problems{{Field: "dir", Message: fmt.Sprintf("%q is a file; read it instead", p)}}
	case !info.IsDir():
		return nil, refusal.Problems{{Field: "dir", Message: fmt.Sprintf("%q is %s, not a folder", p, kindOf(info.Mode()))}}
	}
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("workspace: list %s: %w", p, err)
	}
	entries := make([]Entry, 0, len(des))
	for _, de := range des {
		if strings.EqualFold(de.Name(), ".git") {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue // removed since the folder was read
		}
		e := Entry{
			Name: de.Name(),
			Path: path.Join(p, de.Name()),
			Dir:  de.IsDir(),
			Link: de.Type()&fs.ModeSymlink != 0,
		}
		if !e.Dir {
			e.Size = info.Size()
		}
		entries = append(entries, e)
	}
	// ReadDir of an *os.File does not promise an order.
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return entries, nil
}

// ReadResult is the part of a file one Read returns.
type ReadResult struct {
	Path string `json:"path"`
	// From and To are the first and last lines returned (1-based,
	// inclusive); both are 0 when the file is empty.
	From int `json:"from"`
	To   int `json:"to"`
	// Total is the number of lines in the file.
	Total int `json:"total"`
	// Text is the lines returned, each prefixed by its number and a tab.
	Text string `json:"text"`
	// Lines is the lines returned as they are, without their line breaks.
	Lines []string `json:"-"`
	// Cut says the read stopped before the lines asked for, at
	// MaxReadLines or MaxReadBytes; Note says where to go on from.
	Cut  bool   `json:"cut"`
	Note string `json:"note,omitempty"`
}

// Read returns lines from to to (1-based, inclusive) of the file at p.
// from 0 means the first line, to 0 the last; a read returns at most
// MaxReadLines lines and MaxReadBytes of text and says when it was cut.
func (w *Workspace) Read(p string, from, to int) (ReadResult, error) {
	var ps refusal.Problems
	clean, prob := cleanPath("path", p, forReading, false)
	if prob != nil {
		ps = append(ps, *prob)
	}
	if from < 0 {
		ps = append(ps, refusal.Problem{Field: "from", Message: "lines count from 1; give 1 (or 0) to start at the top"})
	}
	if to < 0 {
		ps = append(ps, refusal.Problem{Field: "to", Message: "give the last line to read, or 0 to read to the end"})
	}
	if to > 0 && from > to {
		ps = append(ps, refusal.Problem{Field: "to", Message: fmt.Sprintf("%d comes before from (%d)", to, from)})
	}
	if len(ps) > 0 {
		return ReadResult{}, ps
	}
	if from == 0 {
		from = 1
	}

	f, prob, err := w.openText("path", clean)
	if err != nil {
		return ReadResult{}, err
	}
	if prob != nil {
		return ReadResult{}, refusal.Problems{*prob}
	}
	defer f.Close()

	r := ReadResult{Path: clean}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), MaxFileBytes+1)
	budget := MaxReadBytes
	var text strings.Builder
	for sc.Scan() {
		r.Total++
		n := r.Total
		if n < from || (to > 0 && n > to) || r.Cut {
			continue
		}
		line := sc.Text()
		switch {
		case len(r.Lines) == MaxReadLines:
			r.Cut = true
			r.Note = fmt.Sprintf("Showing at most %d lines a read; read from line %d for more.", MaxReadLines, n)
			continue
		case len(line)+1 > budget && len(r.Lines) > 0:
			r.Cut = true
			r.Note = fmt.Sprintf("Showing at most %d KiB a read; read from line %d for more.", MaxReadBytes>>10, n)
			continue
		case len(line)+1 > budget:
			line = cutUTF8(line, budget-1)
			r.Cut = true
			r.Note = fmt.Sprintf("Line %d is longer than %d KiB; only its start is shown.", n, MaxReadBytes>>10)
		}
		budget -= len(line) + 1
		r.Lines = append(r.Lines, line)
	}
	if err := sc.Err(); err != nil {
		return ReadResult{}, fmt.Errorf("workspace: read %s: %w", clean, err)
	}
	if r.Total == 0 {
		if from > 1 {
			return ReadResult{}, refusal.Problems{{Field: "from", Message: fmt.Sprintf("%q is empty", clean)}}
		}
		return r, nil
	}
	if from > r.Total {
		return ReadResult{}, refusal.Problems{{Field: "from", Message: fmt.Sprintf("%q has %d lines", clean, r.Total)}}
	}
	r.From = from
	r.To = from + len(r.Lines) - 1
	width := len(strconv.Itoa(r.To))
	for i, line := range r.Lines {
		fmt.Fprintf(&text, "%*d\t%s\n", width, from+i, line)
	}
	r.Text = text.String()
	return r, nil
}

// openSource opens the cleaned path p as the engineer's reads do: through
// the root, which follows a symbolic link only while it stays inside the
// workspace, and without waiting, so that a named pipe or a device is
// opened at once for the caller to refuse by its type.
func (w *Workspace) openSource(p string) (*os.File, error) {
	return w.root.OpenFile(p, openFlags&^unix.O_NOFOLLOW, 0)
}

// openText opens the cleaned path p for reading its text: a regular file
// of at most MaxFileBytes that is not binary.
func (w *Workspace) openText(field, p string) (io.ReadCloser, *refusal.Problem, error) {
	f, err := w.openSource(p)
	if err != nil {
		return nil, w.openProblem(field, p, "file", err), nil
	}
	refuse := func(format string, args ...any) (io.ReadCloser, *refusal.Problem, error) {
		f.Close()
		return nil, &refusal.Problem{Field: field, Message: fmt.Sprintf(format, args...)}, nil
	}
	info, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, nil, fmt.Errorf("workspace: %w", err)
	case info.IsDir():
		return refuse("%q is a folder; list it instead", p)
	case !info.Mode().IsRegular():
		return refuse("%q is %s, not a regular file", p, kindOf(info.Mode()))
	case info.Size() > MaxFileBytes:
		return refuse("%q is %s; the engineer reads and edits files up to %d MiB", p, sizeText(info.Size()), MaxFileBytes>>20)
	}
	br := bufio.NewReaderSize(f, 64<<10)
	head, err := br.Peek(8000)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		f.Close()
		return nil, nil, fmt.Errorf("workspace: read %s: %w", p, err)
	}
	if isBinary(head) {
		return refuse("%q is a binary file", p)
	}
	return struct {
		io.Reader
		io.Closer
	}{br, f}, nil, nil
}

// isBinary is git's rule: a NUL byte among the first 8000 bytes.
func isBinary(head []byte) bool {
	if len(head) > 8000 {
		head = head[:8000]
	}
	return bytes.IndexByte(head, 0) >= 0
}

// cutUTF8 returns at most n bytes of s, not splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// Match is one line that matched a search.
type Match struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	// Text is the matching line, cut at MaxMatchText bytes.
	Text string `json:"text"`
}

// SearchResult is what a Search found.
type SearchResult struct {
	Matches []Match `json:"matches"`
	// Capped says the search stopped at MaxMatches; there may be more.
	Capped bool `json:"capped"`
}

// Search finds the lines that contain query (or match it as a regular
// expression when regexp is set) in the text files under the folder or
// file under ("" for the whole workspace). It skips .git, binary files,
// files larger than MaxFileBytes, and symbolic links, and returns at most
// MaxMatches matches in path order.
func (w *Workspace) Search(query string, regexp bool, under string) (SearchResult, error) {
	res, err := w.SearchEach([]string{query}, regexp, under)
	if err != nil {
		return SearchResult{}, err
	}
	return res[0], nil
}

// SearchEach is Search for several queries at once, in one walk of the
// workspace: the result of each is what Search would answer for it.
func (w *Workspace) SearchEach(queries []string, regexp bool, under string) ([]SearchResult, error) {
	var ps refusal.Problems
	matches := make([]func(string) bool, len(queries))
	for i, q := range queries {
		match, prob := matcher(q, regexp)
		if prob != nil {
			ps = append(ps, *prob)
		}
		matches[i] = match
	}
	start, prob := cleanPath("under", under, forReading, true)
	if prob != nil {
		ps = append(ps, *prob)
	}
	if len(ps) > 0 {
		return nil, ps
	}
	if _, err := w.root.Stat(start); err != nil {
		return nil, refusal.Problems{*w.openProblem("under", start, "file or folder", err)}
	}

	res := make([]SearchResult, len(queries))
	for i := range res {
		res[i].Matches = []Match{}
	}
	open := len(queries) // the queries not capped yet
	err := w.walkFiles(start, func(p string) (bool, error) {
		capped, err := w.searchFile(p, matches, res)
		if err != nil {
			return false, err
		}
		open -= capped
		return open > 0, nil
	})
	if err != nil {
		return nil, fmt.Errorf("workspace: search %s: %w", start, err)
	}
	return res, nil
}

// walkFiles calls visit with each regular file at or under the cleaned
// path start, in path order, going into no symbolic link and no .git; a
// folder that cannot be read is left out. visit answers whether to go
// on. Every folder is opened without waiting (see openSource), and the
// folders still to read are kept in a list, not in the stack, so that no
// depth of folders the engineer's code made can exhaust it.
func (w *Workspace) walkFiles(start string, visit func(p string) (bool, error)) error {
	type item struct {
		path string
		dir  bool
	}
	info, err := w.root.Stat(start)
	if err != nil {
		return err
	}
	todo := []item{{start, info.IsDir()}}
	if !info.IsDir() && !info.Mode().IsRegular() {
		return nil
	}
	for len(todo) > 0 {
		it := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if !it.dir {
			if more, err := visit(it.path); err != nil || !more {
				return err
			}
			continue
		}
		entries, err := w.readFolder(it.path)
		if err != nil {
			if it.path == start {
				return err
			}
			continue
		}
		// Last first, so that the first is taken next.
		for _, e := range slices.Backward(entries) {
			switch {
			case e.IsDir() && strings.EqualFold(e.Name(), ".git"):
			case e.IsDir(), e.Type().IsRegular():
				todo = append(todo, item{path.Join(it.path, e.Name()), e.IsDir()})
			}
		}
	}
	return nil
}

// readFolder lists the folder at the cleaned path p in name order.
func (w *Workspace) readFolder(p string) ([]fs.DirEntry, error) {
	f, err := w.openSource(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", p)
	}
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// matcher validates a search query and returns what tests a line.
func matcher(query string, isRegexp bool) (func(string) bool, *refusal.Problem) {
	refuse := func(format string, args ...any) (func(string) bool, *refusal.Problem) {
		return nil, &refusal.Problem{Field: "query", Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case query == "":
		return refuse("give the text to search for")
	case len(query) > MaxQuery:
		return refuse("at most %d characters", MaxQuery)
	case strings.ContainsAny(query, "\r\n"):
		return refuse("a search matches within one line; leave out the line break")
	}
	if !isRegexp {
		return func(line string) bool { return strings.Contains(line, query) }, nil
	}
	re, err := regexp.Compile(query)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return refuse("is not a regular expression: %s in `%s`", se.Code, se.Expr)
		}
		return refuse("is not a regular expression: %v", err)
	}
	return re.MatchString, nil
}

// searchFile adds the matching lines of the file at p to res, and says
// when res is full.
func (w *Workspace) searchFile(p string, matches []func(string) bool, res []SearchResult) (int, error) {
	f, prob, err := w.openText("under", p)
	if err != nil {
		return 0, err
	}
	if prob != nil {
		return 0, nil // binary, too large or gone: not searched
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), MaxFileBytes+1)
	n, capped := 0, 0
	for sc.Scan() {
		n++
		line := sc.Text()
		for i, match := range matches {
			if res[i].Capped || !match(line) {
				continue
			}
			if len(res[i].Matches) == MaxMatches {
				res[i].Capped = true
				capped++
				continue
			}
			text := line
			if len(text) > MaxMatchText {
				text = cutUTF8(text, MaxMatchText) + "…"
			}
			res[i].Matches = append(res[i].Matches, Match{Path: p, Line: n, Text: text})
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read %s: %w", p, err)
	}
	return capped, nil
}
