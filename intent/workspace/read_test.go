package workspace_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"autoapp/intent/workspace"

	"golang.org/x/sys/unix"
)

// numbered returns n lines "<prefix> 1" … "<prefix> n", each ending in \n.
func numbered(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %d\n", prefix, i)
	}
	return b.String()
}

func TestList(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, map[string]string{
		"autoapp.json":     "{}\n",
		"main.go":          "package main\n",
		"handlers/tags.go": "package handlers\n",
	})
	tests := []struct {
		name string
		dir  string
		want []workspace.Entry
	}{
		{"top leaves out .git", "", []workspace.Entry{
			{Name: "autoapp.json", Path: "autoapp.json", Size: 3},
			{Name: "handlers", Path: "handlers", Dir: true},
			{Name: "main.go", Path: "main.go", Size: 13},
		}},
		{"folder", "handlers/", []workspace.Entry{
			{Name: "tags.go", Path: "handlers/tags.go", Size: 17},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := w.List(tt.dir)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("List(%q) = %+v, want %+v", tt.dir, got, tt.want)
			}
		})
	}

	refusals := []struct {
		name, dir, text string
	}{
		{"missing folder", "nope", "there is no folder"},
		{"a file", "main.go", "is a file"},
		{"inside .git", ".git", "inside .git"},
		{"leaves the workspace", "..", "leaves the workspace"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			_, err := w.List(tt.dir)
			wantProblem(t, err, "dir", tt.text)
		})
	}
}

func TestRead(t *testing.T) {
	t.Parallel()
	wide := strings.Repeat(strings.Repeat("w", 999)+"\n", 300) // 300,000 bytes
	w := newWorkspace(t, map[string]string{
		"autoapp.json": `{"name": "tags"}` + "\n",
		"ten.txt":      numbered("line", 10),
		"big.txt":      numbered("line", 3000),
		"wide.txt":     wide,
		"long.txt":     strings.Repeat("x", 300<<10) + "\n",
		"noeol.txt":    "a\nb",
		"empty.txt":    "",
		"bin.dat":      "PK\x00\x01text",
		"src/app.go":   "package app\n",
	})
	tests := []struct {
		name      string
		path      string
		from, to  int
		wantFrom  int
		wantTo    int
		wantTotal int
		wantCut   bool
		wantText  string // a prefix of Text
		wantNote  string // a part of Note
	}{
		{"whole file", "ten.txt", 0, 0, 1, 10, 10, false, " 1\tline 1\n 2\tline 2\n", ""},
		{"a range", "ten.txt", 3, 5, 3, 5, 10, false, "3\tline 3\n4\tline 4\n5\tline 5\n", ""},
		{"to past the end", "ten.txt", 8, 50, 8, 10, 10, false, " 8\tline 8\n", ""},
		{"one line", "ten.txt", 10, 10, 10, 10, 10, false, "10\tline 10\n", ""},
		{"cut at the line cap", "big.txt", 0, 0, 1, 2000, 3000, true, "   1\tline 1\n", "read from line 2001"},
		{"rest after the line cap", "big.txt", 2001, 0, 2001, 3000, 3000, false, "2001\tline 2001\n", ""},
		{"cut at the byte cap", "wide.txt", 1, 0, 1, 262, 300, true, "  1\twww", "read from line 263"},
		{"a line longer than the byte cap", "long.txt", 0, 0, 1, 1, 1, true, "1\txxx", "only its start"},
		{"last line without a line break", "noeol.txt", 0, 0, 1, 2, 2, false, "1\ta\n2\tb\n", ""},
		{"empty file", "empty.txt", 0, 0, 0, 0, 0, false, "", ""},
		{"the manifest may be read", "autoapp.json", 0, 0, 1, 1, 1, false, "1\t{\"name\": \"tags\"}\n", ""},
		{"a path that needs cleaning", "./src//app.go", 0, 0, 1, 1, 1, false, "1\tpackage app\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := w.Read(tt.path, tt.from, tt.to)
			if err != nil {
				t.Fatal(err)
			}
			if r.From != tt.wantFrom || r.To != tt.wantTo || r.Total != tt.wantTotal || r.Cut != tt.wantCut {
				t.Errorf("from %d to %d of %d, cut %v; want from %d to %d of %d, cut %v",
					r.From, r.To, r.Total, r.Cut, tt.wantFrom, tt.wantTo, tt.wantTotal, tt.wantCut)
			}
			if !strings.HasPrefix(r.Text, tt.wantText) {
				t.Errorf("text starts %q, want %q", r.Text[:min(len(r.Text), 40)], tt.wantText)
			}
			if tt.wantNote != "" && !strings.Contains(r.Note, tt.wantNote) {
				t.Errorf("note = %q, want …%s…", r.Note, tt.wantNote)
			}
			if r.To > 0 && len(r.Lines) != r.To-r.From+1 {
				t.Errorf("%d raw lines for lines %d to %d", len(r.Lines), r.From, r.To)
			}
			if len(r.Text) > workspace.MaxReadBytes+r.To*6 {
				t.Errorf("text is %d bytes, over the cap", len(r.Text))
			}
		})
	}

	refusals := []struct {
		name     string
		path     string
		from, to int
		field    string
		text     string
	}{
		{"from past the end", "ten.txt", 11, 0, "from", "has 10 lines"},
		{"from in an empty file", "empty.txt", 2, 0, "from", "is empty"},
		{"to before from", "ten.txt", 5, 3, "to", "comes before from"},
		{"negative from", "ten.txt", -1, 0, "from", "lines count from 1"},
		{"negative to", "ten.txt", 0, -4, "to", "give the last line"},
		{"missing file", "nope.txt", 0, 0, "path", "there is no file"},
		{"missing folder", "nope/a.txt", 0, 0, "path", "there is no file"},
		{"under a file", "ten.txt/a", 0, 0, "path", "there is no file"},
		{"a folder", "src", 0, 0, "path", "is a folder"},
		{"a binary file", "bin.dat", 0, 0, "path", "binary"},
		{"no path", "", 0, 0, "path", "give a path"},
		{"the top", ".", 0, 0, "path", "names the workspace itself"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			_, err := w.Read(tt.path, tt.from, tt.to)
			wantProblem(t, err, tt.field, tt.text)
		})
	}
}

func TestSearch(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, map[string]string{
		"main.go":          "package main\n\nfunc main() {\n\trun(a.b)\n}\n",
		"handlers/tags.go": "package handlers\n\nfunc Tags() {}\nfunc tagsHelper() {}\n",
		"bin.dat":          "func main\x00\n",
		"many.txt":         numbered("needle", 250),
		"few.txt":          numbered("pin", 200),
		"long.txt":         "func " + strings.Repeat("y", 1000) + "\n",
	})
	tests := []struct {
		name       string
		query      string
		regexp     bool
		under      string
		want       []string // path:line of each match
		wantCount  int      // when want is nil
		wantCapped bool
	}{
		{"literal", "func ", false, "", []string{"handlers/tags.go:3", "handlers/tags.go:4", "long.txt:1", "main.go:3"}, 0, false},
		{"literal with regexp characters", "run(a.b)", false, "", []string{"main.go:4"}, 0, false},
		{"regexp", `^func [A-Z]`, true, "", []string{"handlers/tags.go:3"}, 0, false},
		{"regexp dot is any character", `r.n\(`, true, "", []string{"main.go:4"}, 0, false},
		{"literal dot is a dot", `r.n(`, false, "", nil, 0, false},
		{"under a folder", "func", false, "handlers", []string{"handlers/tags.go:3", "handlers/tags.go:4"}, 0, false},
		{"under a file", "package", false, "main.go", []string{"main.go:1"}, 0, false},
		{"skips .git", "Create application", false, "", nil, 0, false},
		{"capped", "needle", false, "", nil, workspace.MaxMatches, true},
		{"exactly the cap is not capped", "pin", false, "", nil, workspace.MaxMatches, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := w.Search(tt.query, tt.regexp, tt.under)
			if err != nil {
				t.Fatal(err)
			}
			if res.Capped != tt.wantCapped {
				t.Errorf("capped = %v, want %v", res.Capped, tt.wantCapped)
			}
			if tt.want == nil && tt.wantCount > 0 {
				if len(res.Matches) != tt.wantCount {
					t.Errorf("%d matches, want %d", len(res.Matches), tt.wantCount)
				}
				return
			}
			got := []string{}
			for _, m := range res.Matches {
				got = append(got, fmt.Sprintf("%s:%d", m.Path, m.Line))
			}
			if tt.want == nil {
				tt.want = []string{}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("matches = %v, want %v", got, tt.want)
			}
		})
	}

	t.Run("a long line is cut", func(t *testing.T) {
		res, err := w.Search("yyy", false, "long.txt")
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Matches) != 1 || len(res.Matches[0].Text) > workspace.MaxMatchText+len("…") {
			t.Fatalf("matches = %+v", res.Matches)
		}
	})

	refusals := []struct {
		name, query string
		regexp      bool
		under       string
		field, text string
	}{
		{"no query", "", false, "", "query", "give the text"},
		{"a line break", "a\nb", false, "", "query", "within one line"},
		{"a broken regexp", "func (", true, "", "query", "is not a regular expression"},
		{"under outside", "x", false, "../", "under", "leaves the workspace"},
		{"under .git", "x", false, ".git", "under", "inside .git"},
		{"under missing", "x", false, "nope", "under", "there is no"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			_, err := w.Search(tt.query, tt.regexp, tt.under)
			wantProblem(t, err, tt.field, tt.text)
		})
	}
}

// TestTheEngineersReadsNeverWaitNorLeave: source.read, list and search
// answer at once for a named pipe the engineer's code planted, refuse a
// link out of the workspace, and read through a link that stays inside,
// as they always have.
func TestTheEngineersReadsNeverWaitNorLeave(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, map[string]string{"site/index.html": "<h1>Hi</h1>\n", "main.go": "package main\n"})
	dir := w.Dir()
	if err := unix.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, "site", "pipe.html"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"environ": "/proc/self/environ", "home.html": "site/index.html", "www": "site"} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	quickly := func(what string, f func() error) error {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- f() }()
		select {
		case err := <-done:
			return err
		case <-time.After(time.Second):
			t.Fatalf("%s did not answer within a second", what)
		}
		return nil
	}
	err := quickly("Read of a pipe", func() error { _, err := w.Read("pipe", 0, 0); return err })
	wantProblem(t, err, "path", "not a regular file")
	err = quickly("List of a pipe", func() error { _, err := w.List("pipe"); return err })
	wantProblem(t, err, "dir", "not a folder")
	err = quickly("Search beside pipes", func() error { _, err := w.Search("Hi", false, ""); return err })
	if err != nil {
		t.Fatal(err)
	}
	err = quickly("Edit of a pipe", func() error {
		_, err := w.Edit(t.Context(), "site/pipe.html", []workspace.Hunk{{Find: "a", Replace: "b"}}, workspace.CommitMeta{})
		return err
	})
	wantProblem(t, err, "path", "not a regular file")
	_, err = w.Read("environ", 0, 0)
	wantProblem(t, err, "path", "outside the workspace")
	for _, p := range []string{"home.html", "www/index.html"} {
		r, err := w.Read(p, 0, 0)
		if err != nil || r.Text != "1\t<h1>Hi</h1>\n" {
			t.Errorf("Read(%s) through a link inside = %q, %v", p, r.Text, err)
		}
	}
}
