package workspace_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"autoapp/intent/workspace"
)

const appGo = `package main

func main() {
	x := 1
	y := 2
	println(x + y)
}

func other() {
	x := 1
	x := 1
	_ = x
}
`

func readFile(t *testing.T, w *workspace.Workspace, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.Dir(), filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEditCommits(t *testing.T) {
	// The host user's git identity and configuration must not matter.
	home := t.TempDir()
	writeFiles(t, home, map[string]string{".gitconfig": "[user]\n\tname = Host User\n\temail = user@example.com\n[commit]\n\tgpgsign = true\n"})
	t.Setenv("HOME", home)
	t.Setenv("GIT_AUTHOR_NAME", "Someone Else")
	t.Setenv("GIT_COMMITTER_EMAIL", "someone@example.com")

	tests := []struct {
		name        string
		meta        workspace.CommitMeta
		wantSubject string
	}{
		{"run and call", workspace.CommitMeta{RunID: "intent-3-add-tags-a1", CallID: "c7"}, "source.edit app.go (run intent-3-add-tags-a1, call c7)"},
		{"run only", workspace.CommitMeta{RunID: "intent-3-add-tags-a1"}, "source.edit app.go (run intent-3-add-tags-a1)"},
		{"neither", workspace.CommitMeta{}, "source.edit app.go"},
		{"a line break in an id", workspace.CommitMeta{CallID: "c7\nSigned-off-by: x"}, "source.edit app.go (call c7Signed-off-by: x)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t, map[string]string{"app.go": appGo})
			// The repository's own hooks do not run for the host's commits.
			writeFiles(t, w.Dir(), map[string]string{
				".git/hooks/pre-commit":  "#!/bin/sh\nexit 1\n",
				".git/hooks/post-commit": "#!/bin/sh\ntouch hooked\n",
			})
			for _, hook := range []string{"pre-commit", "post-commit"} {
				if err := os.Chmod(filepath.Join(w.Dir(), ".git", "hooks", hook), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			before := head(t, w)
			res, err := w.Edit(t.Context(), "app.go", []workspace.Hunk{
				{Find: "\ty := 2\n", Replace: "\ty := 3\n"},
				{Find: "println(x + y)", Replace: "println(x * y)\n\tprintln(\"done\")"},
			}, tt.meta)
			if err != nil {
				t.Fatal(err)
			}
			after := head(t, w)
			if after == before || res.Revision != after || res.Previous != before {
				t.Errorf("result %+v; HEAD went from %s to %s", res, before, after)
			}
			if !reflect.DeepEqual(res.Files, []string{"app.go"}) {
				t.Errorf("files = %v", res.Files)
			}
			if want := (workspace.Stat{Files: 1, Insertions: 3, Deletions: 2, ChangedLines: 5}); res.Stat != want {
				t.Errorf("stat = %+v, want %+v", res.Stat, want)
			}
			want := strings.Replace(strings.Replace(appGo, "y := 2", "y := 3", 1), "println(x + y)", "println(x * y)\n\tprintln(\"done\")", 1)
			if got := readFile(t, w, "app.go"); got != want {
				t.Errorf("app.go =\n%s\nwant\n%s", got, want)
			}
			log := git(t, w.Dir(), "log", "-1", "--format=%an <%ae>|%cn <%ce>|%at|%ct|%s|%G?")
			wantLog := "Autoapp engineer <engineer@autoapp.local>|Autoapp host <host@autoapp.local>|1741064767|1741064767|" + tt.wantSubject + "|N"
			if log != wantLog {
				t.Errorf("commit = %q\nwant     %q", log, wantLog)
			}
			if got := git(t, w.Dir(), "rev-parse", "HEAD~1"); got != before {
				t.Errorf("parent = %s, want %s", got, before)
			}
			wantUntouched(t, w, after)
		})
	}
}

func TestEditRefusesHunks(t *testing.T) {
	t.Parallel()
	ok := workspace.Hunk{Find: "y := 2", Replace: "y := 3"}
	tests := []struct {
		name  string
		path  string
		hunks []workspace.Hunk
		field string
		text  string
	}{
		{"find matches nothing", "app.go", []workspace.Hunk{ok, {Find: "z := 9", Replace: "z := 8"}},
			"hunks[1].find", "matches nothing in app.go"},
		{"find matches twice", "app.go", []workspace.Hunk{ok, {Find: "func ", Replace: "fn "}},
			"hunks[1].find", "matches 2 places; include more surrounding lines so it matches one"},
		{"find matches three places", "app.go", []workspace.Hunk{ok, {Find: "println", Replace: "print"}, {Find: "x := 1", Replace: "x := 5"}},
			"hunks[2].find", "matches 3 places; include more surrounding lines so it matches one"},
		{"hunks overlap", "app.go", []workspace.Hunk{{Find: "y := 2\n\tprintln", Replace: "y := 3\n\tprintln"}, ok},
			"hunks[1].find", "overlaps hunks[0]"},
		{"empty find", "app.go", []workspace.Hunk{ok, {Find: "", Replace: "x"}},
			"hunks[1].find", "give the exact text"},
		{"replace equals find", "app.go", []workspace.Hunk{{Find: "y := 2", Replace: "y := 2"}},
			"hunks[0].replace", "nothing would change"},
		{"no hunks", "app.go", nil, "hunks", "give at least one hunk"},
		{"missing file", "nope.go", []workspace.Hunk{ok}, "path", "there is no file"},
		{"a folder", "web", []workspace.Hunk{ok}, "path", "is a folder"},
		{"a binary file", "logo.png", []workspace.Hunk{{Find: "PNG", Replace: "GIF"}}, "path", "binary"},
		{"an ignored file", "debug.log", []workspace.Hunk{{Find: "y := 2", Replace: "y := 3"}}, "path", "ignored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorkspace(t, map[string]string{
				"app.go":         appGo,
				"web/index.html": "<p>hi</p>\n",
				"logo.png":       "\x89PNG\x00\x00",
				".gitignore":     "*.log\n",
			})
			writeFiles(t, w.Dir(), map[string]string{"debug.log": "y := 2\n"})
			before := head(t, w)
			_, err := w.Edit(t.Context(), tt.path, tt.hunks, workspace.CommitMeta{RunID: "r1", CallID: "c1"})
			wantProblem(t, err, tt.field, tt.text)
			if got := readFile(t, w, "app.go"); got != appGo {
				t.Errorf("app.go changed:\n%s", got)
			}
			if got := head(t, w); got != before {
				t.Errorf("HEAD moved from %s to %s", before, got)
			}
			if st := git(t, w.Dir(), "status", "--porcelain"); st != "" {
				t.Errorf("workspace changed:\n%s", st)
			}
		})
	}

	t.Run("every bad hunk is named", func(t *testing.T) {
		t.Parallel()
		w := newWorkspace(t, map[string]string{"app.go": appGo})
		_, err := w.Edit(t.Context(), "app.go", []workspace.Hunk{{Find: "nope", Replace: "x"}, ok, {Find: "x := 1", Replace: "x := 2"}}, workspace.CommitMeta{})
		wantProblem(t, err, "hunks[0].find", "matches nothing")
		wantProblem(t, err, "hunks[2].find", "matches 3 places")
	})

	t.Run("a CRLF file gets a hint", func(t *testing.T) {
		t.Parallel()
		w := newWorkspace(t, map[string]string{"win.txt": "a\r\nb\r\n"})
		_, err := w.Edit(t.Context(), "win.txt", []workspace.Hunk{{Find: "a\nb", Replace: "c"}}, workspace.CommitMeta{})
		wantProblem(t, err, "hunks[0].find", `end with \r\n`)
	})
}

func TestChange(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, map[string]string{
		"app.go":  appGo,
		"old.txt": "old\n",
		"run.sh":  "#!/bin/sh\necho hi\n",
	})
	if err := os.Chmod(filepath.Join(w.Dir(), "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, w.Dir(), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "executable")
	before := head(t, w)

	res, err := w.Change(t.Context(), []workspace.FileChange{
		{Path: "web/static/new.css", Action: workspace.Create, Content: "body {}\n"},
		{Path: "run.sh", Action: workspace.Overwrite, Content: "#!/bin/sh\necho hello\n"},
		{Path: "old.txt", Action: workspace.Delete},
	}, workspace.CommitMeta{RunID: "r1", CallID: "c2"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Previous != before || res.Revision != head(t, w) || res.Revision == before {
		t.Errorf("result %+v; HEAD was %s", res, before)
	}
	if want := []string{"web/static/new.css", "run.sh", "old.txt"}; !reflect.DeepEqual(res.Files, want) {
		t.Errorf("files = %v, want %v", res.Files, want)
	}
	if got := readFile(t, w, "web/static/new.css"); got != "body {}\n" {
		t.Errorf("new.css = %q", got)
	}
	if got := readFile(t, w, "run.sh"); got != "#!/bin/sh\necho hello\n" {
		t.Errorf("run.sh = %q", got)
	}
	if info, err := os.Stat(filepath.Join(w.Dir(), "run.sh")); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("run.sh mode = %v, %v; want it kept at 0755", info.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(w.Dir(), "old.txt")); !os.IsNotExist(err) {
		t.Errorf("old.txt still there: %v", err)
	}
	wantLog := "Autoapp engineer <engineer@autoapp.local>|source.change create web/static/new.css, overwrite run.sh, delete old.txt (run r1, call c2)"
	if got := git(t, w.Dir(), "log", "-1", "--format=%an <%ae>|%s"); got != wantLog {
		t.Errorf("commit = %q\nwant     %q", got, wantLog)
	}
	if got := git(t, w.Dir(), "diff", "--name-status", before, "HEAD"); got != "D\told.txt\nM\trun.sh\nA\tweb/static/new.css" {
		t.Errorf("committed changes:\n%s", got)
	}
	wantUntouched(t, w, res.Revision)
}

func TestChangeRefuses(t *testing.T) {
	t.Parallel()
	good := workspace.FileChange{Path: "web/new.html", Action: workspace.Create, Content: "<p>new</p>\n"}
	tests := []struct {
		name  string
		files []workspace.FileChange
		field string
		text  string
	}{
		{"create of a file that exists", []workspace.FileChange{good, {Path: "app.go", Action: workspace.Create, Content: "x"}},
			"files[1].path", "already exists"},
		{"overwrite of a missing file", []workspace.FileChange{good, {Path: "nope.go", Action: workspace.Overwrite, Content: "x"}},
			"files[1].path", "there is no file"},
		{"delete of a missing file", []workspace.FileChange{{Path: "nope.go", Action: workspace.Delete}, good},
			"files[0].path", "there is no file"},
		{"delete of a folder", []workspace.FileChange{{Path: "web", Action: workspace.Delete}},
			"files[0].path", "is a folder"},
		{"a path named twice", []workspace.FileChange{good, {Path: "./web/new.html", Action: workspace.Overwrite}},
			"files[1].path", "named twice"},
		{"one path inside another", []workspace.FileChange{good, {Path: "web/new.html/x", Action: workspace.Create}},
			"files[1].path", "one is inside the other"},
		{"under a file", []workspace.FileChange{{Path: "app.go/x", Action: workspace.Create}},
			"files[0].path", "is a file, not a folder"},
		{"no action", []workspace.FileChange{good, {Path: "b.txt"}},
			"files[1].action", "give the action"},
		{"an unknown action", []workspace.FileChange{{Path: "b.txt", Action: "rename"}},
			"files[0].action", `"rename" is not an action`},
		{"a delete with content", []workspace.FileChange{{Path: "app.go", Action: workspace.Delete, Content: "x"}},
			"files[0].content", "takes no content"},
		{"content over the cap", []workspace.FileChange{{Path: "big.txt", Action: workspace.Create, Content: strings.Repeat("x", workspace.MaxWriteBytes+1)}},
			"files[0].content", "at most"},
		{"no files", nil, "files", "give at least one file"},
		{"an ignored path", []workspace.FileChange{good, {Path: "debug.log", Action: workspace.Create, Content: "x"}},
			"files[1].path", "ignored"},
		{"nothing changes", []workspace.FileChange{{Path: "app.go", Action: workspace.Overwrite, Content: appGo}},
			"files", "leaves every file as it is"},
		{"inside a nested repository", []workspace.FileChange{{Path: "vendor/lib/x.go", Action: workspace.Create, Content: "x"}},
			"files[0].path", "a git repository of its own"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorkspace(t, map[string]string{
				"app.go":        appGo,
				"web/index.htm": "<p>hi</p>\n",
				".gitignore":    "*.log\n",
			})
			if err := os.MkdirAll(filepath.Join(w.Dir(), "vendor", "lib", ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			before := head(t, w)
			_, err := w.Change(t.Context(), tt.files, workspace.CommitMeta{RunID: "r1"})
			wantProblem(t, err, tt.field, tt.text)
			wantUntouched(t, w, before)
			if got := readFile(t, w, "app.go"); got != appGo {
				t.Errorf("app.go changed:\n%s", got)
			}
			if _, err := os.Stat(filepath.Join(w.Dir(), "web", "new.html")); !os.IsNotExist(err) {
				t.Errorf("web/new.html was written: %v", err)
			}
		})
	}
}

func TestChangePutsFilesBackWhenGitFails(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, map[string]string{"app.go": appGo})
	before := head(t, w)
	// Another git process holds the index, so git add fails.
	lock := filepath.Join(w.Dir(), ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := w.Change(t.Context(), []workspace.FileChange{
		{Path: "app.go", Action: workspace.Overwrite, Content: "package main\n"},
		{Path: "web/new/page.html", Action: workspace.Create, Content: "<p>new</p>\n"},
	}, workspace.CommitMeta{})
	if err == nil {
		t.Fatal("Change succeeded with the index locked")
	}
	if _, ok := workspace.AsProblems(err); ok {
		t.Fatalf("error = %v, want a host error, not problems", err)
	}
	if got := readFile(t, w, "app.go"); got != appGo {
		t.Errorf("app.go not put back:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(w.Dir(), "web")); !os.IsNotExist(err) {
		t.Errorf("web/ left behind: %v", err)
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	wantUntouched(t, w, before)
}

// TestAnUntrackedGitattributesIsObeyedAsGitObeysIt: a .gitattributes the
// engineer's build or preview wrote, never committed, still tells git how
// to store a file (here: text, line ends made LF in the repository). An
// edit through the host stores the blob git stores for the file, and git
// finds the file as committed afterwards, even once it looks at its
// content again (a build touched it).
func TestAnUntrackedGitattributesIsObeyedAsGitObeysIt(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, map[string]string{"site/index.html": "<h1>Hi</h1>\n"})
	dir := w.Dir()
	writeFiles(t, dir, map[string]string{".gitattributes": "* text eol=crlf\n"})
	sameAsGit := func(when, p string) {
		t.Helper()
		if got, want := git(t, dir, "rev-parse", "HEAD:"+p), git(t, dir, "hash-object", "--path="+p, p); got != want {
			t.Errorf("%s: HEAD holds %s as %s (%q), git stores %s", when, p, got, git(t, dir, "cat-file", "blob", got), want)
		}
		// A build touches the file: git must read it again to compare.
		later := time.Now().Add(time.Minute)
		if err := os.Chtimes(filepath.Join(dir, p), later, later); err != nil {
			t.Fatal(err)
		}
		if st := git(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "?? .gitattributes" {
			t.Errorf("%s: git status says\n%s\nwant only the untracked .gitattributes", when, st)
		}
	}
	if _, err := w.Change(t.Context(), []workspace.FileChange{
		{Path: "site/about.html", Action: workspace.Create, Content: "<h1>About</h1>\r\n<p>Us.</p>\r\n"},
	}, workspace.CommitMeta{}); err != nil {
		t.Fatal(err)
	}
	sameAsGit("a file created", "site/about.html")
	if _, err := w.Edit(t.Context(), "site/about.html", []workspace.Hunk{{Find: "<p>Us.</p>", Replace: "<p>All of us.</p>"}}, workspace.CommitMeta{}); err != nil {
		t.Fatal(err)
	}
	sameAsGit("a file edited", "site/about.html")
	if _, err := w.Change(t.Context(), []workspace.FileChange{
		{Path: "site/index.html", Action: workspace.Overwrite, Content: "<h1>Hello</h1>\r\n"},
	}, workspace.CommitMeta{}); err != nil {
		t.Fatal(err)
	}
	sameAsGit("a committed file overwritten", "site/index.html")
}
