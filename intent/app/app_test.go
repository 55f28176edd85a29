package app_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"autoapp/intent/app"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
	"autoapp/migrations"
	"autoapp/migrations/migrationstest"
)

func newService(t *testing.T) (*app.Service, *migrations.DB, string) {
	t.Helper()
	root := t.TempDir()
	db := migrationstest.IntentsIn(t, root)
	return app.NewService(db, root, time.Now, workspace.Repositories{Now: time.Now}), db, root
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func code(err error) refusal.Code {
	var ae *refusal.Error
	if errors.As(err, &ae) {
		return ae.Code
	}
	return ""
}

func TestCreateFromATemplateMakesACommittedWorkspace(t *testing.T) {
	svc, _, root := newService(t)
	ctx := context.Background()
	a, err := svc.CreateFromTemplate(ctx, "svc", "My service", "goservice")
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "My service" || a.Origin != "template:goservice" {
		t.Fatalf("app: %+v", a)
	}
	dir := filepath.Join(root, "apps", "svc", "workspace")
	if svc.WorkspaceDir("svc") != dir {
		t.Fatalf("workspace dir %s", svc.WorkspaceDir("svc"))
	}
	for _, f := range []string{"main.go", "go.mod", ".gitignore", "autoapp.json", "acceptance/0001-health.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s is missing: %v", f, err)
		}
	}
	if n := gitOut(t, dir, "rev-list", "--count", "HEAD"); n != "1" {
		t.Fatalf("%s commits, want the one initial commit", n)
	}
	if status := gitOut(t, dir, "status", "--porcelain"); status != "" {
		t.Fatalf("the initial commit left files out:\n%s", status)
	}
	_, m, problems, err := svc.Manifest("svc")
	if err != nil || len(problems) > 0 || m.Name != "Go service" {
		t.Fatalf("manifest %+v problems %v err %v", m, problems, err)
	}
}

func TestCreateRefusesWithASentence(t *testing.T) {
	svc, _, _ := newService(t)
	ctx := context.Background()
	if _, err := svc.CreateFromTemplate(ctx, "notes", "", "static"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, id, template string
		code               refusal.Code
		says               string
	}{
		{"an empty id", "", "static", refusal.Invalid, "Give the application an id"},
		{"capitals", "Notes", "static", refusal.Invalid, "lowercase words and digits"},
		{"a path", "../x", "static", refusal.Invalid, "lowercase words and digits"},
		{"a trailing dash", "notes-", "static", refusal.Invalid, "lowercase words and digits"},
		{"too long", strings.Repeat("a", 41), "static", refusal.Invalid, "longer than 40"},
		{"taken", "notes", "static", refusal.Conflict, `"notes" already exists`},
		{"no such template", "other", "rails", refusal.Invalid, `no template called "rails"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := svc.CreateFromTemplate(ctx, c.id, "", c.template)
			if code(err) != c.code || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("got %v (%s), want %s saying %q", err, code(err), c.code, c.says)
			}
		})
	}
	apps, err := svc.List(ctx)
	if err != nil || len(apps) != 1 {
		t.Fatalf("refusals made applications: %+v %v", apps, err)
	}
}

func TestRegisterClonesAGitFolderWithAManifest(t *testing.T) {
	svc, _, _ := newService(t)
	ctx := context.Background()
	src := t.TempDir()
	gitOut(t, src, "init", "-q")
	manifest := `{"name": "Mine", "build": [], "preview": {"static": "."}}`
	os.WriteFile(filepath.Join(src, "autoapp.json"), []byte(manifest), 0o644)
	os.WriteFile(filepath.Join(src, "index.html"), []byte("<h1>mine</h1>"), 0o644)

	if _, err := svc.Register(ctx, "mine", "", src); code(err) != refusal.Invalid || !strings.Contains(err.Error(), "no committed autoapp.json") {
		t.Fatalf("an uncommitted manifest: %v", err)
	}
	gitOut(t, src, "add", "-A")
	gitOut(t, src, "commit", "-qm", "start")
	before := gitOut(t, src, "rev-parse", "HEAD")

	a, err := svc.Register(ctx, "mine", "", src)
	if err != nil {
		t.Fatal(err)
	}
	if a.Origin != src || a.Name != "mine" {
		t.Fatalf("app: %+v", a)
	}
	if got := gitOut(t, svc.WorkspaceDir("mine"), "rev-parse", "HEAD"); got != before {
		t.Fatalf("the clone is at %s, the folder at %s", got, before)
	}
	if after := gitOut(t, src, "rev-parse", "HEAD"); after != before {
		t.Fatal("registering changed the original folder")
	}

	notGit := t.TempDir()
	if _, err := svc.Register(ctx, "other", "", notGit); code(err) != refusal.Invalid || !strings.Contains(err.Error(), "not a git repository") {
		t.Fatalf("a folder without .git: %v", err)
	}
	if _, err := svc.Register(ctx, "other", "", "relative/path"); code(err) != refusal.Invalid {
		t.Fatalf("a relative path: %v", err)
	}
	bad := t.TempDir()
	gitOut(t, bad, "init", "-q")
	os.WriteFile(filepath.Join(bad, "autoapp.json"), []byte(`{"name": "", "build": [{"name": "x", "command": [], "timeout": "1m"}], "preview": {}}`), 0o644)
	gitOut(t, bad, "add", "-A")
	gitOut(t, bad, "commit", "-qm", "bad")
	_, err = svc.Register(ctx, "bad", "", bad)
	var ae *refusal.Error
	if !errors.As(err, &ae) || len(ae.Problems) < 3 {
		t.Fatalf("a bad manifest: %v", err)
	}
	for _, field := range []string{"name", "build[0].command", "preview"} {
		if !strings.Contains(err.Error(), field+":") {
			t.Errorf("the refusal does not name %s: %v", field, err)
		}
	}
}

func TestTheOwnerEditsTheManifest(t *testing.T) {
	svc, _, _ := newService(t)
	ctx := context.Background()
	if _, err := svc.CreateFromTemplate(ctx, "site", "", "static"); err != nil {
		t.Fatal(err)
	}
	dir := svc.WorkspaceDir("site")
	head := gitOut(t, dir, "rev-parse", "HEAD")
	err := svc.SaveManifest(ctx, "site", []byte(`{"name": "Site", "build": [{"name": "a", "command": ["true"], "timeout": "forever"}], "preview": {"static": "../out"}}`))
	var ae *refusal.Error
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "build[0].timeout") || !strings.Contains(err.Error(), "preview.static") {
		t.Fatalf("an invalid manifest: %v", err)
	}
	if gitOut(t, dir, "rev-parse", "HEAD") != head {
		t.Fatal("a refused manifest was committed")
	}
	good := `{"name": "Renamed", "build": [], "preview": {"static": "site"}}`
	if err := svc.SaveManifest(ctx, "site", []byte(good)); err != nil {
		t.Fatal(err)
	}
	if gitOut(t, dir, "log", "-1", "--format=%an: %s") != "Owner: The owner edited autoapp.json" {
		t.Fatalf("commit: %s", gitOut(t, dir, "log", "-1", "--format=%an: %s"))
	}
	_, m, _, _ := svc.Manifest("site")
	if m.Name != "Renamed" {
		t.Fatalf("manifest name %q", m.Name)
	}
}

func TestOnlyTheOwnerActivatesAndEveryActivationIsKept(t *testing.T) {
	svc, db, _ := newService(t)
	ctx := context.Background()
	if _, err := svc.CreateFromTemplate(ctx, "site", "", "static"); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"r1", "r2"} {
		if _, err := svc.RecordRelease(ctx, app.Release{ID: id, AppID: "site", Revision: "abc", BuiltAt: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.Activate(ctx, "site", "r9"); code(err) != refusal.NotFound {
		t.Fatalf("an unknown release: %v", err)
	}
	if err := svc.Activate(ctx, "site", "r1"); err != nil {
		t.Fatal(err)
	}
	if err := svc.Activate(ctx, "site", "r1"); code(err) != refusal.Conflict || !strings.Contains(err.Error(), "already the current release") {
		t.Fatalf("activating the current release again: %v", err)
	}
	if err := svc.Activate(ctx, "site", "r2"); err != nil {
		t.Fatal(err)
	}
	a, _ := svc.Get(ctx, "site")
	if a.CurrentRelease != "r2" {
		t.Fatalf("current %q", a.CurrentRelease)
	}
	var n int
	db.Read.Get(&n, `SELECT count(*) FROM activations WHERE app_id = 'site'`)
	if n != 2 {
		t.Fatalf("%d activations recorded, want 2", n)
	}
	if _, err := db.Write.Exec(`UPDATE activations SET release_id = 'r1'`); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Fatalf("an activation was rewritten: %v", err)
	}
	if _, err := db.Write.Exec(`DELETE FROM activations`); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Fatalf("an activation was deleted: %v", err)
	}
}

func TestTheSelectedApplicationIsRemembered(t *testing.T) {
	svc, _, root := newService(t)
	ctx := context.Background()
	if got, err := svc.Selected(ctx); err != nil || got != "" {
		t.Fatalf("a fresh root selects %q %v", got, err)
	}
	if err := svc.Select(ctx, "nothing"); code(err) != refusal.NotFound {
		t.Fatalf("selecting an unknown application: %v", err)
	}
	svc.CreateFromTemplate(ctx, "one", "", "static")
	svc.CreateFromTemplate(ctx, "two", "", "static")
	if err := svc.Select(ctx, "two"); err != nil {
		t.Fatal(err)
	}
	if got, _ := svc.Selected(ctx); got != "two" {
		t.Fatalf("selected %q", got)
	}
	b, err := os.ReadFile(filepath.Join(root, "launcher", "session.json"))
	if err != nil || !strings.Contains(string(b), `"two"`) {
		t.Fatalf("session.json: %s %v", b, err)
	}
}

// TestTheManifestIsTheOneCommitted: the manifest an application's pages,
// builds and tools are given is autoapp.json as HEAD commits it. A link the
// engineer's code put in its place hands over nothing of what it points
// to, and a rewritten one is not obeyed: each is named as a problem.
func TestTheManifestIsTheOneCommitted(t *testing.T) {
	svc, _, root := newService(t)
	ctx := context.Background()
	if _, err := svc.CreateFromTemplate(ctx, "site", "", "static"); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(svc.WorkspaceDir("site"), "autoapp.json")
	committed, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(root, "launcher", "providers.json")
	os.MkdirAll(filepath.Dir(keys), 0o700)
	os.WriteFile(keys, []byte(`{"apiKey": "sk-the-owners-key"}`), 0o600)
	os.Remove(manifest)
	if err := os.Symlink("../../../launcher/providers.json", manifest); err != nil {
		t.Fatal(err)
	}
	raw, m, problems, err := svc.Manifest("site")
	if err != nil || strings.Contains(string(raw), "sk-") || string(raw) != string(committed) || m.Name == "" {
		t.Fatalf("a link to the keys: %q, %+v, %v", raw, m, err)
	}
	if len(problems) != 1 || !strings.Contains(problems[0].Message, "symbolic link") {
		t.Fatalf("problems %v", problems)
	}

	os.Remove(manifest)
	os.WriteFile(manifest, []byte(`{"name": "Site", "build": [{"name": "x", "command": ["sh", "-c", "id"], "timeout": "1m"}], "preview": {"static": "site"}}`), 0o644)
	raw, m, problems, err = svc.Manifest("site")
	if err != nil || string(raw) != string(committed) || len(m.Build) != 1 || m.Build[0].Name != "check" {
		t.Fatalf("a rewritten manifest is obeyed: %q, %+v, %v", raw, m, err)
	}
	want := "autoapp.json in the workspace differs from the one committed at HEAD; the host obeys only the committed manifest"
	if len(problems) != 1 || problems[0].Message != want {
		t.Fatalf("problems %v, want %q", problems, want)
	}
}
