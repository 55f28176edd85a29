package handlers_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"autoapp/intent"
	"autoapp/intent/delivery"
)

// delivered makes a static application, commits a file whose name needs
// quoting, opens an intent for it and delivers it at HEAD; it returns the
// intent, the delivery and the workspace.
func (s *server) delivered(t *testing.T) (int64, delivery.Delivery, string) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.apps.CreateFromTemplate(ctx, "site", "", "static"); err != nil {
		t.Fatal(err)
	}
	dir := s.apps.WorkspaceDir("site")
	odd := filepath.Join(dir, "site", `a "b" é.html`)
	if err := os.WriteFile(odd, []byte("<p>odd</p>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "an odd name")
	in, err := s.backlog.OpenDraft(ctx, "site", "A pomodoro timer page", intent.Analysis{Restated: []string{"A pomodoro timer page."}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.deliveries.Deliver(ctx, delivery.Input{IntentID: in.ID, AppID: "site", Revision: "HEAD",
		Paths: []string{"site/index.html", "site/style.css", `site/a "b" é.html`, "site/missing.html"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Artifacts) != 3 || len(d.Problems) != 1 {
		t.Fatalf("delivery = %+v", d)
	}
	return in.ID, d, dir
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// wantDownload fails unless r is a download of name and media.
func wantDownload(t *testing.T, r *response, disposition, media string) {
	t.Helper()
	if r.StatusCode != fiber.StatusOK {
		t.Fatalf("status = %d: %s", r.StatusCode, r.body)
	}
	for header, want := range map[string]string{
		"Content-Disposition":     disposition,
		"Content-Type":            media,
		"X-Content-Type-Options":  "nosniff",
		"Cache-Control":           "private, no-store",
		"Content-Security-Policy": "sandbox",
	} {
		if got := r.Header.Get(header); got != want {
			t.Errorf("%s = %q, want %q", header, got, want)
		}
	}
}

func TestDeliveryArtifact(t *testing.T) {
	t.Parallel()
	s, b := withOwner(t)
	id, d, dir := s.delivered(t)
	// The workspace moves on; the download stays the delivered blob.
	if err := os.WriteFile(filepath.Join(dir, "site", "index.html"), []byte("<h1>Later</h1>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "commit", "-qam", "later")

	artifact := func(p string) string {
		return fmt.Sprintf("/backlog/intents/%d/delivery/artifact?path=%s", id, url.QueryEscape(p))
	}
	for _, a := range d.Artifacts {
		t.Run(a.Path, func(t *testing.T) {
			r := b.get(artifact(a.Path))
			disposition := `attachment; filename="` + filepath.Base(a.Path) + `"`
			if strings.Contains(a.Path, "é") {
				disposition = `attachment; filename="a _b_ _.html"; filename*=UTF-8''a%20%22b%22%20%C3%A9.html`
			}
			wantDownload(t, r, disposition, a.Media)
			blob := gitIn(t, dir, "cat-file", "blob", d.Revision+":"+a.Path)
			sum := sha256.Sum256([]byte(r.body))
			if r.body != blob || hex.EncodeToString(sum[:]) != a.SHA256 {
				t.Errorf("body = %q, want the blob %q with SHA-256 %s", r.body, blob, a.SHA256)
			}
		})
	}

	refused := []struct {
		name, target string
		status       int
		sentence     string
	}{
		{"no path", fmt.Sprintf("/backlog/intents/%d/delivery/artifact", id), fiber.StatusBadRequest, "Name the artifact to download."},
		{"a path that is no artifact", artifact("autoapp.json"), fiber.StatusNotFound, "autoapp.json is not an artifact of the delivery of intent"},
		{"a path that could not be exported", artifact("site/missing.html"), fiber.StatusNotFound, "is not an artifact"},
		{"a path outside", artifact("../x"), fiber.StatusNotFound, "is not an artifact"},
		{"an intent not delivered", "/backlog/intents/999/delivery/artifact?path=site/index.html", fiber.StatusNotFound, "Intent 999 has not been delivered."},
		{"an id that is no number", "/backlog/intents/x/delivery/artifact?path=site/index.html", fiber.StatusNotFound, "There is no such intent or task."},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			r := b.get(tt.target)
			if r.StatusCode != tt.status || !strings.Contains(r.body, tt.sentence) {
				t.Fatalf("status %d, body %q; want %d with %q", r.StatusCode, r.body, tt.status, tt.sentence)
			}
			if r.Header.Get("Content-Disposition") != "" {
				t.Errorf("a refusal is served as a download")
			}
		})
	}

	t.Run("signed out", func(t *testing.T) {
		r := s.browser(t).get(artifact("site/index.html"))
		if r.StatusCode != fiber.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/signin") {
			t.Fatalf("status %d, location %q; want the sign-in page", r.StatusCode, r.Header.Get("Location"))
		}
	})
}

func TestDeliveryArchive(t *testing.T) {
	t.Parallel()
	s, b := withOwner(t)
	id, d, dir := s.delivered(t)
	short := d.Revision[:12]

	r := b.get(fmt.Sprintf("/backlog/intents/%d/delivery/workspace.tar.gz", id))
	wantDownload(t, r, `attachment; filename="site-`+short+`.tar.gz"`, "application/gzip")
	zr, err := gzip.NewReader(bytes.NewReader([]byte(r.body)))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	files := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		files[h.Name] = string(body)
	}
	for _, p := range []string{"autoapp.json", "site/index.html", "site/style.css"} {
		if got, want := files["site-"+short+"/"+p], gitIn(t, dir, "cat-file", "blob", d.Revision+":"+p); got != want {
			t.Errorf("%s in the archive = %q, want %q", p, got, want)
		}
	}

	r = b.get("/backlog/intents/999/delivery/workspace.tar.gz")
	if r.StatusCode != fiber.StatusNotFound || r.Header.Get("Content-Disposition") != "" {
		t.Errorf("an intent not delivered: status %d, disposition %q", r.StatusCode, r.Header.Get("Content-Disposition"))
	}

	t.Run("the panel says links are left out", func(t *testing.T) {
		// The panel is shown once the intent is done.
		s.moveIntent(t, id, intent.IntentRunning, intent.IntentDone)
		r := b.get(intentPath(id))
		href := fmt.Sprintf(`href="/backlog/intents/%d/delivery/workspace.tar.gz"`, id)
		if r.StatusCode != fiber.StatusOK || !strings.Contains(r.body, href) ||
			!strings.Contains(r.body, "Symbolic links are left out of the archive.") {
			t.Errorf("status %d; the intent page lacks the archive's link or its sentence about links:\n%s", r.StatusCode, r.body)
		}
	})
}

// TestTheDeliveryPanelShowsItsEvidenceAndAMovedWorkspace: the panel lists
// each completed task with the revision it was judged at and the examples
// it was held to (hashes on hover), says nothing was activated, and says
// so when the workspace had changed after the last verdict.
func TestTheDeliveryPanelShowsItsEvidenceAndAMovedWorkspace(t *testing.T) {
	t.Parallel()
	s, b := withOwner(t)
	ctx := context.Background()
	if _, err := s.apps.CreateFromTemplate(ctx, "site", "", "static"); err != nil {
		t.Fatal(err)
	}
	dir := s.apps.WorkspaceDir("site")
	judged := strings.TrimSpace(gitIn(t, dir, "rev-parse", "HEAD"))
	in, err := s.backlog.OpenDraft(ctx, "site", "A heading", intent.Analysis{Restated: []string{"A heading."}})
	if err != nil {
		t.Fatal(err)
	}
	hash := strings.Repeat("ab", 32)
	if _, err := s.deliveries.Deliver(ctx, delivery.Input{IntentID: in.ID, AppID: "site", Revision: judged,
		Paths: []string{"site/index.html"}, Evidence: delivery.Evidence{
			Tasks:          []delivery.TaskEvidence{{Slug: "0001-add-a-heading", ExampleHashes: map[int]string{1: hash}, Revision: judged}},
			HeadAtDelivery: strings.Repeat("c", 40),
			Needs:          []string{"site/index.html loads timer.js, which is not delivered; download the workspace archive to have it."}}}); err != nil {
		t.Fatal(err)
	}
	// Standing for a run that ended done (the panel shows a done intent's delivery).
	if _, err := s.db.Write.Exec(`UPDATE intents SET status = 'done' WHERE id = ?`, in.ID); err != nil {
		t.Fatal(err)
	}
	r := b.get(fmt.Sprintf("/backlog/intents/%d", in.ID))
	wantStatus(t, r, fiber.StatusOK)
	wantSentence(t, r, "The workspace changed after the last verdict; the delivery is of "+judged[:10]+", the revision the checks passed at.")
	wantSentence(t, r, "Nothing was activated.")
	wantSentence(t, r, "site/index.html loads timer.js, which is not delivered; download the workspace archive to have it.")
	wantSentence(t, r, `data-testid="evidence-0001-add-a-heading"`)
	wantSentence(t, r, "judged at <code>"+judged[:10]+"</code>")
	wantSentence(t, r, "<code>0001-add-a-heading-c1</code>")
	wantSentence(t, r, `title="`+hash+`"`)
}
