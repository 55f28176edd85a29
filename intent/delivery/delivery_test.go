package delivery_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"mime"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/delivery"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
	"autoapp/intent/workspace"
	"autoapp/migrations"
	"autoapp/migrations/migrationstest"
)

// clock is the time every test stands at.
func clock() time.Time { return time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC) }

// env is a real intents store in a temporary root, a static application
// made from its template, and a draft intent for it.
type env struct {
	svc      *delivery.Service
	db       *migrations.DB
	apps     *app.Service
	intentID int64
	dir      string // the application's workspace
}

const appID = "site"

func mustOpen(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	db := migrationstest.IntentsIn(t, root)
	apps := app.NewService(db, root, clock, workspace.Repositories{Now: clock})
	if _, err := apps.CreateFromTemplate(ctx, appID, "", "static"); err != nil {
		t.Fatal(err)
	}
	in, err := intent.NewService(db, root, clock, intent.Collaborators{Journal: request.Journal{}}).OpenDraft(ctx, appID, "A pomodoro timer page",
		intent.Analysis{Restated: []string{"A pomodoro timer page."}})
	if err != nil {
		t.Fatal(err)
	}
	open := func(id string) (delivery.Workspace, error) {
		ws, err := workspace.Open(apps.WorkspaceDir(id), clock)
		if err != nil {
			return nil, err
		}
		return ws, nil
	}
	return &env{svc: delivery.NewService(db, open, clock), db: db, apps: apps, intentID: in.ID, dir: apps.WorkspaceDir(appID)}
}

// git runs git in the workspace as a person would.
func (e *env) git(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Dir = e.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

func (e *env) head(t *testing.T) string { return strings.TrimSpace(e.git(t, "rev-parse", "HEAD")) }

// sha256sum is what sha256sum says of `git show <rev>:<path>`.
func (e *env) sha256sum(t *testing.T, rev, p string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", `git show "$1:$2" | sha256sum`, "sh", rev, p)
	cmd.Dir = e.dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sha256sum of %s:%s: %v", rev, p, err)
	}
	return strings.Fields(string(out))[0]
}

func (e *env) write(t *testing.T, p string, data []byte) {
	t.Helper()
	full := filepath.Join(e.dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (e *env) commitAll(t *testing.T, message string) string {
	t.Helper()
	e.git(t, "add", "-A")
	e.git(t, "commit", "-qm", message)
	return e.head(t)
}

func (e *env) input(rev string, paths ...string) delivery.Input {
	return delivery.Input{
		IntentID: e.intentID, AppID: appID, Revision: rev, Paths: paths,
		Evidence: delivery.Evidence{
			Tasks:  []delivery.TaskEvidence{{Slug: "0001-pomodoro", ExampleHashes: map[int]string{1: "h1", 2: "h2"}}},
			Checks: []delivery.CheckEvidence{{ID: "0001-home-page", Hash: "c1", Passed: true}},
		},
	}
}

// wantRefusal fails unless err is a *refusal.Error of code whose sentence
// contains text.
func wantRefusal(t *testing.T, err error, code refusal.Code, text string) {
	t.Helper()
	var de *refusal.Error
	if !errors.As(err, &de) || de.Code != code || !strings.Contains(de.Message, text) {
		t.Fatalf("error = %v, want %s: …%s…", err, code, text)
	}
}

func TestDeliverStaticTemplate(t *testing.T) {
	t.Parallel()
	e := mustOpen(t)
	ctx := context.Background()
	rev := e.head(t)

	d, err := e.svc.Deliver(ctx, e.input("HEAD", "site/index.html", "site/style.css"))
	if err != nil {
		t.Fatal(err)
	}
	if d.IntentID != e.intentID || d.AppID != appID || d.Revision != rev || !d.At.Equal(clock()) || d.ReleaseID != "" {
		t.Errorf("delivery = %+v, want intent %d at %s", d, e.intentID, rev)
	}
	if len(d.Problems) != 0 {
		t.Errorf("problems = %+v", d.Problems)
	}
	want := []delivery.Artifact{
		{Path: "site/index.html", Media: mime.TypeByExtension(".html")},
		{Path: "site/style.css", Media: mime.TypeByExtension(".css")},
	}
	for i := range want {
		blob := e.git(t, "show", "HEAD:"+want[i].Path)
		want[i].Size = int64(len(blob))
		want[i].SHA256 = e.sha256sum(t, "HEAD", want[i].Path)
	}
	if !reflect.DeepEqual(d.Artifacts, want) {
		t.Errorf("artifacts = %+v\nwant        %+v", d.Artifacts, want)
	}
	if !strings.HasPrefix(d.Artifacts[0].Media, "text/html") || !strings.HasPrefix(d.Artifacts[1].Media, "text/css") {
		t.Errorf("media = %q, %q", d.Artifacts[0].Media, d.Artifacts[1].Media)
	}

	got, err := e.svc.Get(ctx, e.intentID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, d) {
		t.Errorf("Get = %+v\nDeliver gave %+v", got, d)
	}
}

func TestDeliverOnce(t *testing.T) {
	t.Parallel()
	e := mustOpen(t)
	ctx := context.Background()
	first, err := e.svc.Deliver(ctx, e.input("HEAD", "site/index.html", "site/style.css"))
	if err != nil {
		t.Fatal(err)
	}
	// The workspace moves on; a retry names another revision and other paths.
	e.write(t, "site/index.html", []byte("<h1>Later</h1>\n"))
	later := e.commitAll(t, "later")
	in := e.input(later, "site/index.html")
	in.Evidence = delivery.Evidence{}
	again, err := e.svc.Deliver(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, first) {
		t.Errorf("second Deliver = %+v\nwant the first %+v", again, first)
	}
	var n int
	if err := e.db.Read.Get(&n, `SELECT count(*) FROM deliveries`); err != nil || n != 1 {
		t.Errorf("deliveries = %d, %v; want 1", n, err)
	}
}

func TestDeliverRecordsProblems(t *testing.T) {
	t.Parallel()
	e := mustOpen(t)
	ctx := context.Background()
	if err := os.Symlink("index.html", filepath.Join(e.dir, "site/link.html")); err != nil {
		t.Fatal(err)
	}
	e.write(t, "site/big.bin", bytes.Repeat([]byte("x"), workspace.MaxArtifactBytes*13/10))
	rev := e.commitAll(t, "a link and a large file")
	e.write(t, "site/draft.html", []byte("<p>not committed</p>\n"))
	short := rev[:12]

	d, err := e.svc.Deliver(ctx, e.input(rev,
		"site/index.html", "site/link.html", "../x", "/etc/passwd", "site/big.bin", "site/draft.html", "site",
		"site/index.html", "./site/index.html", "../x"))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Artifacts) != 1 || d.Artifacts[0].Path != "site/index.html" {
		t.Errorf("artifacts = %+v, want only site/index.html, once", d.Artifacts)
	}
	want := []delivery.Problem{
		{Path: "site/link.html", Message: "site/link.html is a symbolic link, not a file."},
		{Path: "../x", Message: `"../x" leaves the workspace.`},
		{Path: "/etc/passwd", Message: `"/etc/passwd" is absolute; give a path from the workspace's top, such as "src/app.go".`},
		{Path: "site/big.bin", Message: "site/big.bin is 1.3 MiB; an artifact is at most 1 MiB."},
		{Path: "site/draft.html", Message: "site/draft.html is not committed at " + short + "."},
		{Path: "site", Message: "site is a folder."},
	}
	if !reflect.DeepEqual(d.Problems, want) {
		t.Errorf("problems = %+v\nwant       %+v", d.Problems, want)
	}
	for _, p := range []string{"site/link.html", "site/big.bin", "site/draft.html", "../x"} {
		_, _, err := e.svc.Artifact(ctx, e.intentID, p)
		wantRefusal(t, err, refusal.NotFound, "is not an artifact of the delivery of intent")
	}
}

func TestDeliverRefuses(t *testing.T) {
	t.Parallel()
	e := mustOpen(t)
	ctx := context.Background()
	if _, err := e.apps.CreateFromTemplate(ctx, "other", "", "static"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(*delivery.Input)
		code refusal.Code
		text string
	}{
		{"no intent", func(in *delivery.Input) { in.IntentID = 0 }, refusal.Invalid, "Name the intent"},
		{"unknown intent", func(in *delivery.Input) { in.IntentID = 999 }, refusal.NotFound, "There is no intent 999."},
		{"no application", func(in *delivery.Input) { in.AppID = "" }, refusal.Invalid, "Name the application"},
		{"another application's intent", func(in *delivery.Input) { in.AppID = "other" }, refusal.Invalid, "belongs to site, not other"},
		{"no revision", func(in *delivery.Input) { in.Revision = " " }, refusal.Invalid, "Give the revision"},
		{"unknown revision", func(in *delivery.Input) { in.Revision = "0123456789abcdef" }, refusal.Invalid, `"0123456789abcdef" is not a commit in the workspace of site.`},
		{"unknown release", func(in *delivery.Input) { in.ReleaseID = "r-nope" }, refusal.Invalid, `There is no release "r-nope" of site.`},
		{"too many paths", func(in *delivery.Input) { in.Paths = make([]string, delivery.MaxPaths+1) }, refusal.Invalid, "at most 100 artifacts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := e.input("HEAD", "site/index.html")
			tt.edit(&in)
			_, err := e.svc.Deliver(ctx, in)
			wantRefusal(t, err, tt.code, tt.text)
		})
	}
	_, err := e.svc.Get(ctx, e.intentID)
	wantRefusal(t, err, refusal.NotFound, "has not been delivered")
}

func TestDeliverWithRelease(t *testing.T) {
	t.Parallel()
	e := mustOpen(t)
	ctx := context.Background()
	rev := e.head(t)
	if _, err := e.apps.RecordRelease(ctx, app.Release{ID: "r1", AppID: appID, Revision: rev, BuiltAt: clock().UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	// The page and the style it loads, so the page needs nothing more.
	in := e.input(rev[:7], "site/index.html", "site/style.css")
	in.ReleaseID = "r1"
	d, err := e.svc.Deliver(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.svc.Get(ctx, e.intentID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ReleaseID != "r1" || got.Revision != rev || !reflect.DeepEqual(got.Evidence, in.Evidence) || !reflect.DeepEqual(got, d) {
		t.Errorf("delivery = %+v", got)
	}
}

func TestDeliveriesAreAppendOnly(t *testing.T) {
	t.Parallel()
	e := mustOpen(t)
	if _, err := e.svc.Deliver(context.Background(), e.input("HEAD", "site/index.html")); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`UPDATE deliveries SET artifacts = '[]'`,
		`UPDATE deliveries SET revision = revision`,
		`DELETE FROM deliveries`,
	} {
		t.Run(stmt, func(t *testing.T) {
			_, err := e.db.Write.Exec(stmt)
			if err == nil || !strings.Contains(err.Error(), "deliveries are append-only") {
				t.Fatalf("%s: error = %v, want the trigger's refusal", stmt, err)
			}
		})
	}
	var artifacts string
	if err := e.db.Read.Get(&artifacts, `SELECT artifacts FROM deliveries`); err != nil || artifacts == "[]" {
		t.Errorf("artifacts = %q, %v; the row changed", artifacts, err)
	}
}

func TestArtifact(t *testing.T) {
	t.Parallel()
	e := mustOpen(t)
	ctx := context.Background()
	rev := e.head(t)
	if _, _, err := e.svc.Artifact(ctx, e.intentID, "site/index.html"); err == nil {
		t.Fatal("an artifact of an intent not delivered was served")
	}
	if _, err := e.svc.Deliver(ctx, e.input(rev, "site/index.html", "site/style.css")); err != nil {
		t.Fatal(err)
	}
	// The workspace moves on, committed and not: the delivery's bytes stay.
	e.write(t, "site/index.html", []byte("<h1>Later</h1>\n"))
	e.commitAll(t, "later")
	e.write(t, "site/style.css", []byte("uncommitted\n"))

	for _, p := range []string{"site/index.html", "site/style.css"} {
		t.Run(p, func(t *testing.T) {
			b, a, err := e.svc.Artifact(ctx, e.intentID, p)
			if err != nil {
				t.Fatal(err)
			}
			blob := e.git(t, "cat-file", "blob", rev+":"+p)
			if string(b.Data) != blob || a.SHA256 != b.SHA256 || a.SHA256 != e.sha256sum(t, rev, p) || a.Path != p {
				t.Errorf("artifact %+v served %q, want the blob %q", a, b.Data, blob)
			}
		})
	}
	t.Run("not an artifact", func(t *testing.T) {
		_, _, err := e.svc.Artifact(ctx, e.intentID, "autoapp.json")
		wantRefusal(t, err, refusal.NotFound, "autoapp.json is not an artifact of the delivery of intent")
	})
	t.Run("recorded SHA-256 differs", func(t *testing.T) {
		if _, err := e.db.Write.Exec(`DROP TRIGGER deliveries_no_update`); err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.Write.Exec(`UPDATE deliveries SET artifacts = json_set(artifacts, '$[0].sha256', 'beef')`); err != nil {
			t.Fatal(err)
		}
		_, _, err := e.svc.Artifact(ctx, e.intentID, "site/index.html")
		wantRefusal(t, err, refusal.Conflict, "is no longer the file that was delivered")
	})
}

func TestArchive(t *testing.T) {
	t.Parallel()
	e := mustOpen(t)
	ctx := context.Background()
	var none bytes.Buffer
	_, err := e.svc.Archive(ctx, e.intentID, &none)
	wantRefusal(t, err, refusal.NotFound, "has not been delivered")

	rev := e.head(t)
	if _, err := e.svc.Deliver(ctx, e.input(rev, "site/index.html")); err != nil {
		t.Fatal(err)
	}
	e.write(t, "site/later.html", []byte("later\n"))
	e.commitAll(t, "later")

	var out bytes.Buffer
	name, err := e.svc.Archive(ctx, e.intentID, &out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "site-" + rev[:12] + ".tar.gz"; name != want {
		t.Errorf("name = %q, want %q", name, want)
	}
	zr, err := gzip.NewReader(&out)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			b, _ := io.ReadAll(tr)
			files[h.Name] = string(b)
		}
	}
	top := "site-" + rev[:12] + "/"
	for _, p := range []string{"autoapp.json", "site/index.html", "site/style.css", "acceptance/0001-home-page.json"} {
		if files[top+p] != e.git(t, "cat-file", "blob", rev+":"+p) {
			t.Errorf("%s in the archive = %q", p, files[top+p])
		}
	}
	if _, ok := files[top+"site/later.html"]; ok {
		t.Error("the archive holds a file committed after the delivery")
	}
}

// TestAnHTMLArtifactSaysWhatItLoadsThatIsNotDelivered: a page that loads a
// script the delivery does not carry, a style it does, an image from the
// web and an inline one: the delivery says, a sentence each, what the page
// needs that is not in the artifacts.
func TestAnHTMLArtifactSaysWhatItLoadsThatIsNotDelivered(t *testing.T) {
	t.Parallel()
	e := mustOpen(t)
	e.write(t, "site/index.html", []byte(`<!DOCTYPE html><html><head><link rel="stylesheet" href="style.css">
<script src="timer.js"></script><script src="./timer.js"></script><link rel="icon" href="data:,"></head>
<body><img src="https://cdn.example/logo.png" alt=""><img src="img/bell.png?v=2#x" alt=""><a href="other.html">a link is no load</a></body></html>`))
	e.write(t, "site/timer.js", []byte("// not delivered\n"))
	rev := e.commitAll(t, "a page that loads things")
	d, err := e.svc.Deliver(context.Background(), e.input(rev, "site/index.html", "site/style.css"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"site/index.html loads timer.js, which is not delivered; download the workspace archive to have it.",
		"site/index.html loads https://cdn.example/logo.png from the web, so it works offline only without it.",
		"site/index.html loads img/bell.png, which is not delivered; download the workspace archive to have it.",
	}
	if !reflect.DeepEqual(d.Evidence.Needs, want) {
		t.Errorf("needs = %q\nwant    %q", d.Evidence.Needs, want)
	}
	got, err := e.svc.Get(context.Background(), e.intentID)
	if err != nil || !reflect.DeepEqual(got.Evidence.Needs, want) {
		t.Errorf("stored needs = %q (%v)", got.Evidence.Needs, err)
	}
}
