package workspace_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
)

// TestPathsRefused tries every operation on every path that must not be
// reached, and checks the refusal names the field and nothing changed,
// inside the workspace or out.
func TestPathsRefused(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.txt": "secret\n"})
	secret := filepath.Join(outside, "secret.txt")

	w := newWorkspace(t, map[string]string{
		"app.go":       "package main\n",
		"autoapp.json": `{"name": "tags"}` + "\n",
	})
	rel, err := filepath.Rel(w.Dir(), secret)
	if err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{
		"link-abs": secret,  // an absolute link out
		"link-rel": rel,     // a relative link out
		"link-dir": outside, // a folder link out
	} {
		if err := os.Symlink(to, filepath.Join(w.Dir(), link)); err != nil {
			t.Fatal(err)
		}
	}
	git(t, w.Dir(), "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
	git(t, w.Dir(), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "links")
	before := head(t, w)

	type operation struct {
		name  string
		field string
		do    func(p string) error
	}
	meta := workspace.CommitMeta{RunID: "r1", CallID: "c1"}
	read := operation{"read", "path", func(p string) error { _, err := w.Read(p, 0, 0); return err }}
	edit := operation{"edit", "path", func(p string) error {
		_, err := w.Edit(t.Context(), p, []workspace.Hunk{{Find: "secret", Replace: "stolen"}}, meta)
		return err
	}}
	change := func(action workspace.FileAction) operation {
		return operation{string(action), "files[1].path", func(p string) error {
			content := "stolen\n"
			if action == workspace.Delete {
				content = ""
			}
			_, err := w.Change(t.Context(), []workspace.FileChange{
				{Path: "fine.txt", Action: workspace.Create, Content: "fine\n"},
				{Path: p, Action: action, Content: content},
			}, meta)
			return err
		}}
	}
	create, overwrite, remove := change(workspace.Create), change(workspace.Overwrite), change(workspace.Delete)
	writes := []operation{edit, create, overwrite, remove}
	all := append([]operation{read}, writes...)

	tests := []struct {
		name string
		path string
		ops  []operation
		text string
	}{
		{"dot-dot", "../secret.txt", all, "leaves the workspace"},
		{"dot-dot after a folder", "web/../../secret.txt", all, "leaves the workspace"},
		{"absolute", secret, all, "is absolute"},
		{"backslash", `web\app.go`, all, "backslash"},
		{"a control character", "app\n.go", all, "control character"},
		{".git/config", ".git/config", all, "inside .git"},
		{"a nested .git", "vendor/x/.git/config", all, "inside .git"},
		{"a symlink to an absolute path outside", "link-abs", all, "symbolic link"},
		{"a symlink to a relative path outside", "link-rel", all, "symbolic link"},
		{"through a folder symlink outside", "link-dir/secret.txt", all, "symbolic link"},
		{"a new file through a folder symlink", "link-dir/new.txt", []operation{create}, "symbolic link"},
		{"the manifest", "autoapp.json", writes, "manifest"},
		{"the manifest by another spelling", "./AUTOAPP.json", []operation{create}, "manifest"},
	}
	for _, tt := range tests {
		for _, op := range tt.ops {
			t.Run(tt.name+"/"+op.name, func(t *testing.T) {
				wantProblem(t, op.do(tt.path), op.field, tt.text)
			})
		}
	}

	t.Run("search and list do not follow links out", func(t *testing.T) {
		wantProblem(t, func() error { _, err := w.Search("secret", false, "link-dir"); return err }(), "under", "symbolic link")
		wantProblem(t, func() error { _, err := w.List("link-dir"); return err }(), "dir", "symbolic link")
		res, err := w.Search("secret", false, "")
		if err != nil || len(res.Matches) != 0 {
			t.Errorf("Search(secret) = %+v, %v; want no match", res, err)
		}
	})
	t.Run("the manifest may be read", func(t *testing.T) {
		r, err := w.Read("autoapp.json", 0, 0)
		if err != nil || r.Total != 1 {
			t.Fatalf("Read(autoapp.json) = %+v, %v", r, err)
		}
	})
	t.Run("nothing changed", func(t *testing.T) {
		wantUntouched(t, w, before)
		if b, err := os.ReadFile(secret); err != nil || string(b) != "secret\n" {
			t.Errorf("secret.txt = %q, %v", b, err)
		}
		entries, err := os.ReadDir(outside)
		if err != nil || len(entries) != 1 {
			t.Errorf("outside holds %v, %v; want only secret.txt", entries, err)
		}
	})
}

// TestSubmodulePathsRefused writes into a real submodule in each state it
// can be in, and checks every write is refused with one sentence, never
// git's own text, and nothing changed.
func TestSubmodulePathsRefused(t *testing.T) {
	t.Parallel()
	states := []struct {
		name    string
		prepare func(t *testing.T, dir string)
	}{
		{"initialised", func(t *testing.T, dir string) {}},
		{"deinitialised", func(t *testing.T, dir string) {
			git(t, dir, "submodule", "--quiet", "deinit", "-f", "--", "sub")
		}},
		{"emptied", func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, "sub")); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"folder removed", func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, "sub")); err != nil {
				t.Fatal(err)
			}
		}},
		// Out of the index, the submodule is still the commit's.
		{"removal staged", func(t *testing.T, dir string) {
			git(t, dir, "rm", "-q", "--cached", "sub")
		}},
	}
	for _, st := range states {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			w := withSubmodule(t)
			dir := w.Dir()
			st.prepare(t, dir)
			before := head(t, w)
			status := git(t, dir, "status", "--porcelain", "--untracked-files=all")
			meta := workspace.CommitMeta{RunID: "r1", CallID: "c1"}
			type operation struct {
				name, field string
				do          func(p string) error
			}
			ops := []operation{{"edit", "path", func(p string) error {
				_, err := w.Edit(t.Context(), p, []workspace.Hunk{{Find: "lib", Replace: "changed"}}, meta)
				return err
			}}}
			for _, action := range []workspace.FileAction{workspace.Create, workspace.Overwrite, workspace.Delete} {
				ops = append(ops, operation{string(action), "files[1].path", func(p string) error {
					content := "changed\n"
					if action == workspace.Delete {
						content = ""
					}
					_, err := w.Change(t.Context(), []workspace.FileChange{
						{Path: "fine.txt", Action: workspace.Create, Content: "fine\n"},
						{Path: p, Action: action, Content: content},
					}, meta)
					return err
				}})
			}
			for _, p := range []string{"sub/x.txt", "sub/deeper/y.txt"} {
				for _, op := range ops {
					err := op.do(p)
					want := refusal.Problems{{Field: op.field, Message: p + " is inside the submodule sub: the engineer cannot change it."}}
					if ps, _ := workspace.AsProblems(err); !reflect.DeepEqual(ps, want) {
						t.Errorf("%s %s: error = %v\nwant %v", op.name, p, err, want)
					}
				}
			}
			if got := head(t, w); got != before {
				t.Errorf("HEAD moved from %s to %s", before, got)
			}
			if got := git(t, dir, "status", "--porcelain", "--untracked-files=all"); got != status {
				t.Errorf("status = %q, want it kept at %q", got, status)
			}
		})
	}

	t.Run("a file beside the submodule is written", func(t *testing.T) {
		t.Parallel()
		w := withSubmodule(t)
		res, err := w.Change(t.Context(), []workspace.FileChange{
			{Path: "subway/x.txt", Action: workspace.Create, Content: "beside\n"},
			{Path: "app.go", Action: workspace.Overwrite, Content: "package main\n\nfunc main() {}\n"},
		}, workspace.CommitMeta{})
		if err != nil {
			t.Fatal(err)
		}
		wantUntouched(t, w, res.Revision)
	})
}

// withSubmodule makes a workspace whose commit holds the submodule sub,
// cloned from another repository whose one file is x.txt.
func withSubmodule(t *testing.T) *workspace.Workspace {
	t.Helper()
	lib := t.TempDir()
	writeFiles(t, lib, map[string]string{"x.txt": "lib\n"})
	if _, err := workspace.InitRepository(t.Context(), lib, "Create the library", clock); err != nil {
		t.Fatal(err)
	}
	w := newWorkspace(t, map[string]string{"app.go": "package main\n"})
	git(t, w.Dir(), "-c", "protocol.file.allow=always", "submodule", "--quiet", "add", lib, "sub")
	git(t, w.Dir(), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a submodule")
	if _, err := os.Lstat(filepath.Join(w.Dir(), "sub", ".git")); err != nil {
		t.Fatalf("the submodule is not initialised: %v", err)
	}
	return w
}
