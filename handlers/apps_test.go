package handlers_test

import (
	"context"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"autoapp/intent/app"
	"autoapp/intent/workspace"
	"autoapp/knowledge"
)

// validManifest is a manifest the owner might write for the static template.
const validManifest = `{
  "name": "Notes",
  "build": [
    {"name": "check", "command": ["test", "-s", "site/index.html"], "timeout": "20s"}
  ],
  "preview": {"static": "site"},
  "acceptance": "acceptance/"
}
`

// wantText checks the page shows text as a person reads it: the page
// escapes quotes and angle brackets.
func wantText(t testing.TB, r *response, text string) {
	t.Helper()
	wantSentence(t, r, html.EscapeString(text))
}

// createApp makes an application from the static template through the form.
func createApp(t *testing.T, b *browser, id, name string) {
	t.Helper()
	r := b.post("/apps", url.Values{"id": {id}, "name": {name}, "template": {"static"}})
	wantRedirect(t, r, "/apps/"+id)
}

var (
	workspacePattern = regexp.MustCompile(`Workspace <code>([^<]+)</code>`)
	manifestPattern  = regexp.MustCompile(`(?s)<textarea [^>]*name="manifest"[^>]*>(.*?)</textarea>`)
	releasePattern   = regexp.MustCompile(`data-testid="release-([^"]+)"`)
)

// find is the first group of pattern on the page, as the person reads it.
func find(t *testing.T, r *response, pattern *regexp.Regexp, what string) string {
	t.Helper()
	m := pattern.FindStringSubmatch(r.body)
	if m == nil {
		t.Fatalf("the page shows no %s; body: %.500s", what, r.body)
	}
	return html.UnescapeString(m[1])
}

// manifestOnDisk is the autoapp.json of the workspace the application's page names.
func manifestOnDisk(t *testing.T, b *browser, id string) string {
	t.Helper()
	r := b.get("/apps/" + id)
	wantStatus(t, r, fiber.StatusOK)
	raw, err := os.ReadFile(filepath.Join(find(t, r, workspacePattern, "workspace"), app.ManifestFile))
	if err != nil {
		t.Fatalf("read the manifest: %v", err)
	}
	return string(raw)
}

// builtApp is an owner with Notes made from the static template, built
// and checked once, and the release that build recorded.
func builtApp(t *testing.T) (*server, *browser, string) {
	t.Helper()
	s, ada := withOwner(t)
	createApp(t, ada, appID, appName)
	wantRedirect(t, ada.post("/apps/"+appID+"/cycle", nil), "/apps/"+appID+"#candidate")
	ended(t, ada, 30*time.Second)
	r := ada.get("/apps/" + appID)
	wantStatus(t, r, fiber.StatusOK)
	return s, ada, find(t, r, releasePattern, "release")
}

func TestAFreshOwnerHasNoApplications(t *testing.T) {
	t.Parallel()
	_, ada := withOwner(t)
	r := ada.get("/apps")
	wantStatus(t, r, fiber.StatusOK)
	wantSentence(t, r, "No applications yet.")
	if strings.Contains(ada.get("/backlog").body, `data-testid="selected-app"`) {
		t.Fatal("the rail shows a selected application before there is any")
	}
}

func TestCreatingAnApplicationFromATemplate(t *testing.T) {
	t.Parallel()
	s, ada := withOwner(t)
	r := ada.post("/apps", url.Values{"id": {"notes"}, "name": {"My Notes"}, "template": {"static"}})
	wantRedirect(t, r, "/apps/notes")

	t.Run("its page shows the name, no build yet and the manifest", func(t *testing.T) {
		r := ada.get("/apps/notes")
		wantStatus(t, r, fiber.StatusOK)
		wantSentence(t, r, "<h1>My Notes ")
		wantSentence(t, r, "Not built yet.")
		wantSentence(t, r, "No release yet")
		shown := find(t, r, manifestPattern, "manifest")
		if !strings.Contains(shown, `"static": "site"`) {
			t.Fatalf("the manifest shown is not the static template's:\n%s", shown)
		}
		if onDisk := manifestOnDisk(t, ada, "notes"); shown != onDisk {
			t.Fatalf("the page shows\n%s\nbut the workspace holds\n%s", shown, onDisk)
		}
	})
	t.Run("it is listed and selected", func(t *testing.T) {
		r := ada.get("/apps")
		wantStatus(t, r, fiber.StatusOK)
		if strings.Contains(r.body, "No applications yet.") {
			t.Fatal("the list still says there are no applications")
		}
		wantSentence(t, r, `data-testid="app-notes"`)
		wantSentence(t, r, `<span class="chip">selected</span>`)
	})
	t.Run("the rail names it on other pages", func(t *testing.T) {
		for _, b := range map[string]*browser{"this browser": ada, "another sign-in": s.signedIn(t)} {
			r := b.get("/backlog")
			wantStatus(t, r, fiber.StatusOK)
			wantSentence(t, r, `href="/apps/notes" data-testid="selected-app">My Notes</a>`)
		}
	})
	t.Run("the same id again is a conflict", func(t *testing.T) {
		r := ada.post("/apps", url.Values{"id": {"notes"}, "name": {"Other Notes"}, "template": {"static"}})
		wantStatus(t, r, fiber.StatusConflict)
		wantText(t, r, `An application called "notes" already exists.`)
		wantSentence(t, r, `value="Other Notes"`)
		wantSentence(t, ada.get("/apps/notes"), "<h1>My Notes ")
	})
}

func TestAnApplicationThatCannotBeMadeIsRefusedWithItsSentence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		target   string
		form     url.Values
		status   int
		sentence string
	}{
		{
			name:     "an id with capitals and a space",
			target:   "/apps",
			form:     url.Values{"id": {"Bad Id"}, "name": {"My Notes"}, "template": {"static"}},
			status:   fiber.StatusUnprocessableEntity,
			sentence: `The id "Bad Id" may only hold lowercase words and digits joined by dashes, such as notes or shop-2.`,
		},
		{
			name:     "no id",
			target:   "/apps",
			form:     url.Values{"id": {"  "}, "name": {"My Notes"}, "template": {"static"}},
			status:   fiber.StatusUnprocessableEntity,
			sentence: "Give the application an id",
		},
		{
			name:     "a template that does not exist",
			target:   "/apps",
			form:     url.Values{"id": {"notes"}, "name": {"My Notes"}, "template": {"rails"}},
			status:   fiber.StatusUnprocessableEntity,
			sentence: `There is no template called "rails".`,
		},
		{
			name:     "a register with a relative folder",
			target:   "/apps/register",
			form:     url.Values{"id": {"notes"}, "name": {"My Notes"}, "source": {"projects/notes"}},
			status:   fiber.StatusUnprocessableEntity,
			sentence: "Give the folder as an absolute path.",
		},
		{
			name:     "a register of a folder that is not git",
			target:   "/apps/register",
			form:     url.Values{"id": {"notes"}, "name": {"My Notes"}, "source": {"/"}},
			status:   fiber.StatusUnprocessableEntity,
			sentence: "/ is not a git repository (it has no .git folder).",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, ada := withOwner(t)
			r := ada.post(tt.target, tt.form)
			wantStatus(t, r, tt.status)
			wantText(t, r, tt.sentence)
			wantSentence(t, r, `value="My Notes"`)
			if src := tt.form.Get("source"); src != "" {
				wantSentence(t, r, `value="`+src+`"`)
			}
			wantSentence(t, ada.get("/apps"), "No applications yet.")
		})
	}
}

func TestRegisteringAGitFolderThatHoldsAManifest(t *testing.T) {
	t.Parallel()
	source := t.TempDir()
	files := map[string]string{app.ManifestFile: validManifest, "site/index.html": "<h1>Notes</h1>\n"}
	for name, body := range files {
		p := filepath.Join(source, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := workspace.InitRepository(t.Context(), source, "Notes", func() time.Time { return time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC) }); err != nil {
		t.Fatal(err)
	}
	_, ada := withOwner(t)
	r := ada.post("/apps/register", url.Values{"id": {"notes"}, "name": {"My Notes"}, "source": {source}})
	wantRedirect(t, r, "/apps/notes")
	r = ada.get("/apps/notes")
	wantStatus(t, r, fiber.StatusOK)
	wantSentence(t, r, "<h1>My Notes ")
	wantText(t, r, "made from "+source)
	if got := find(t, r, manifestPattern, "manifest"); got != validManifest {
		t.Fatalf("the page shows the manifest\n%s\nwant the folder's\n%s", got, validManifest)
	}
}

func TestAnApplicationThatDoesNotExistIsNotFound(t *testing.T) {
	t.Parallel()
	_, ada := withOwner(t)
	r := ada.get("/apps/nope")
	wantStatus(t, r, fiber.StatusNotFound)
	wantText(t, r, `There is no application called "nope".`)
}

func TestTheOwnerEditsTheManifest(t *testing.T) {
	t.Parallel()
	_, ada := withOwner(t)
	createApp(t, ada, "notes", "Notes")
	before := manifestOnDisk(t, ada, "notes")

	t.Run("an invalid manifest is not saved and the draft is kept", func(t *testing.T) {
		draft := `{"build": [{"name": "check", "command": ["true"], "timeout": "forever"}], "preview": {"static": "../site"}}`
		r := ada.post("/apps/notes/manifest", url.Values{"manifest": {draft}})
		wantStatus(t, r, fiber.StatusUnprocessableEntity)
		wantSentence(t, r, `data-testid="manifest-problems"`)
		for _, problem := range []string{
			"name: give the application a name",
			`build[0].timeout: "forever" is not a duration such as "90s" or "2m"`,
			`preview.static: "../site" leaves the workspace`,
		} {
			wantSentence(t, r, "<li>"+html.EscapeString(problem)+"</li>")
		}
		if got := find(t, r, manifestPattern, "manifest"); got != draft {
			t.Fatalf("the textarea holds\n%s\nwant the typed draft\n%s", got, draft)
		}
		if after := manifestOnDisk(t, ada, "notes"); after != before {
			t.Fatalf("the refused manifest changed the file:\n%s", after)
		}
	})
	t.Run("a manifest that is not JSON is not saved", func(t *testing.T) {
		r := ada.post("/apps/notes/manifest", url.Values{"manifest": {"name: Notes"}})
		wantStatus(t, r, fiber.StatusUnprocessableEntity)
		wantSentence(t, r, "autoapp.json is not valid JSON for a manifest")
		if after := manifestOnDisk(t, ada, "notes"); after != before {
			t.Fatalf("the refused manifest changed the file:\n%s", after)
		}
	})
	t.Run("a valid manifest is saved", func(t *testing.T) {
		wantRedirect(t, ada.post("/apps/notes/manifest", url.Values{"manifest": {validManifest}}), "/apps/notes")
		if after := manifestOnDisk(t, ada, "notes"); after != validManifest {
			t.Fatalf("the workspace holds\n%s\nwant what the owner saved\n%s", after, validManifest)
		}
		r := ada.get("/apps/notes")
		if got := find(t, r, manifestPattern, "manifest"); got != validManifest {
			t.Fatalf("the page shows\n%s\nwant the saved manifest", got)
		}
		if strings.Contains(r.body, `data-testid="manifest-problems"`) {
			t.Fatal("the page lists problems for the saved manifest")
		}
	})
	t.Run("of an application that does not exist", func(t *testing.T) {
		r := ada.post("/apps/nope/manifest", url.Values{"manifest": {validManifest}})
		wantStatus(t, r, fiber.StatusNotFound)
		wantText(t, r, `There is no application called "nope".`)
	})
}

func TestAPreviewNeedsABuildFirst(t *testing.T) {
	t.Parallel()
	_, ada := withOwner(t)
	createApp(t, ada, "notes", "Notes")
	r := ada.post("/apps/notes/preview/start", nil)
	wantStatus(t, r, fiber.StatusUnprocessableEntity)
	wantSentence(t, r, "There is no release to preview yet: build it first.")
	wantSentence(t, r, "Not built yet.")
}

func TestBuildAndCheckRecordsARelease(t *testing.T) {
	t.Parallel()
	_, ada := withOwner(t)
	createApp(t, ada, "notes", "Notes")
	wantRedirect(t, ada.post("/apps/notes/cycle", nil), "/apps/notes#candidate")
	ended(t, ada, 30*time.Second)

	r := ada.get("/apps/notes")
	wantStatus(t, r, fiber.StatusOK)
	if strings.Contains(r.body, "Not built yet.") {
		t.Fatal("the page still says the application was never built")
	}
	wantSentence(t, r, "Passed 1 of 1.")
	wantSentence(t, r, `data-testid="preview-running"`)
	release := find(t, r, releasePattern, "release")
	wantSentence(t, r, "Built <code>"+release+"</code>")
	if strings.Contains(r.body, `data-testid="current-release"`) {
		t.Fatal("a release is current before the owner made it so")
	}

	t.Run("the preview stops and starts again", func(t *testing.T) {
		wantRedirect(t, ada.post("/apps/notes/preview/stop", nil), "/apps/notes#candidate")
		wantSentence(t, ada.get("/apps/notes"), "No preview is running.")
		wantRedirect(t, ada.post("/apps/notes/preview/start", nil), "/apps/notes#candidate")
		wantSentence(t, ended(t, ada, 30*time.Second), "Running <code>"+release+"</code>")
	})
}

func TestTheOwnerMakesAReleaseCurrent(t *testing.T) {
	t.Parallel()
	_, ada, release := builtApp(t)

	t.Run("a release that does not exist", func(t *testing.T) {
		r := ada.post("/apps/notes/activate", url.Values{"release": {"r-nope"}})
		wantStatus(t, r, fiber.StatusNotFound)
		wantText(t, r, `notes has no release "r-nope".`)
		if strings.Contains(r.body, `data-testid="current-release"`) {
			t.Fatal("a refused activation shows a current release")
		}
	})
	t.Run("the release the build recorded", func(t *testing.T) {
		wantRedirect(t, ada.post("/apps/notes/activate", url.Values{"release": {release}}), "/apps/notes")
		r := ada.get("/apps/notes")
		wantSentence(t, r, `data-testid="current-release">current<`)
		wantSentence(t, ada.get("/apps"), "<code>"+release+"</code>")
	})
	t.Run("the release that is already current", func(t *testing.T) {
		r := ada.post("/apps/notes/activate", url.Values{"release": {release}})
		wantStatus(t, r, fiber.StatusConflict)
		wantSentence(t, r, "Release "+release+" is already the current release of notes.")
	})
}

func TestAnApplicationFormWithoutTheTokenIsRefused(t *testing.T) {
	t.Parallel()
	s, ada, release := builtApp(t)
	before := manifestOnDisk(t, ada, "notes")
	tests := []struct {
		name, target string
		form         url.Values
		// unchanged checks the refused post changed nothing a person would see.
		unchanged func(t *testing.T)
	}{
		{"create", "/apps", url.Values{"id": {"other"}, "template": {"static"}}, func(t *testing.T) {
			wantStatus(t, ada.get("/apps/other"), fiber.StatusNotFound)
		}},
		{"register", "/apps/register", url.Values{"id": {"other"}, "source": {"/tmp"}}, nil},
		{"manifest", "/apps/notes/manifest", url.Values{"manifest": {validManifest}}, func(t *testing.T) {
			if after := manifestOnDisk(t, ada, "notes"); after != before {
				t.Fatalf("the refused post changed the manifest:\n%s", after)
			}
		}},
		{"cycle", "/apps/notes/cycle", nil, nil},
		{"preview stop", "/apps/notes/preview/stop", nil, func(t *testing.T) {
			wantSentence(t, ada.get("/apps/notes"), `data-testid="preview-running"`)
		}},
		{"preview start", "/apps/notes/preview/start", nil, nil},
		{"activate", "/apps/notes/activate", url.Values{"release": {release}}, func(t *testing.T) {
			if strings.Contains(ada.get("/apps/notes").body, `data-testid="current-release"`) {
				t.Fatal("the refused post made the release current")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := s.signedIn(t)
			r := b.send(formRequest(tt.target, tt.form, "Origin", origin))
			wantStatus(t, r, fiber.StatusForbidden)
			wantSentence(t, r, noToken)
			if tt.unchanged != nil {
				tt.unchanged(t)
			}
		})
	}
}

// Each click of Build and check is a single-step run of its own: its work
// and the cases it opens name a run of their own, told apart from every
// other click's.
func TestEachBuildAndCheckIsARunOfItsOwn(t *testing.T) {
	t.Parallel()
	s, ada := withOwner(t)
	createApp(t, ada, "notes", "Notes")
	// An example the page does not pass: the first click opens its case.
	example := `{"title": "The home page greets", "steps": [{"method": "GET", "path": "/", "expect": {"contains": ["Hello readers"]}}]}`
	if err := os.WriteFile(filepath.Join(s.apps.WorkspaceDir("notes"), "acceptance", "0009-greet-c1.json"), []byte(example), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		wantRedirect(t, ada.post("/apps/notes/cycle", nil), "/apps/notes#candidate")
		ended(t, ada, 30*time.Second)
	}
	db := s.launcher.Knowledge.DB().Read
	var runs []string
	if err := db.Select(&runs, `SELECT run_id FROM run_work WHERE app_id = 'notes' AND kind = 'build' ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0] == runs[1] || !strings.HasPrefix(runs[0], "owner-") || !strings.HasPrefix(runs[1], "owner-") {
		t.Fatalf("the two clicks' builds were written under the runs %q, want two runs of their own named owner-…", runs)
	}
	cases, err := s.launcher.Cases.List(context.Background(), knowledge.CaseQuery{AppID: "notes"})
	if err != nil || len(cases) != 1 {
		t.Fatalf("cases %+v, %v", cases, err)
	}
	if cases[0].OpenedRunID != runs[0] {
		t.Errorf("the case was opened by run %q, want the first click's %q", cases[0].OpenedRunID, runs[0])
	}
}
