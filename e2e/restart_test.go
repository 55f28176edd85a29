package e2e

import (
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// TestARestartKeepsTheCandidateAndSaysWhatStopped builds and checks a Go
// service, stops the server (which must stop the preview's process), moves
// the workspace's HEAD while it is down, starts a new server on the same
// root, and reads the application page: the owner is still signed in, and
// the page says the preview stopped with the restart, that the checks ran
// on an earlier preview, and that the workspace was edited since the build.
func TestARestartKeepsTheCandidateAndSaysWhatStopped(t *testing.T) {
	first := startServer(t)
	page := newPage(t)
	createOwner(t, page, first)

	_, err := page.Goto(first.URL + "/apps")
	must(t, err)
	form := page.GetByTestId("create-app")
	must(t, form.GetByLabel("Go HTTP service").Check())
	must(t, form.GetByLabel("Id").Fill("svc"))
	must(t, form.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Create the application"}).Click())
	must(t, expect.Page(page).ToHaveURL(first.URL+"/apps/svc"))
	must(t, page.GetByTestId("cycle").Click())
	must(t, expect.Locator(page.GetByTestId("checks-summary")).ToHaveText("Passed 1 of 1.", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(60000)}))
	previewURL, err := page.GetByTestId("preview-link").GetAttribute("href")
	must(t, err)
	if resp, err := http.Get(previewURL + "health"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the preview does not answer before the restart: %v", err)
	}

	first.stop(t)
	if resp, err := http.Get(previewURL + "health"); err == nil {
		resp.Body.Close()
		t.Fatalf("the preview at %s outlived the server", previewURL)
	}

	// A commit lands in the workspace while the launcher is down.
	ws := filepath.Join(first.Root, "apps", "svc", "workspace")
	git := exec.Command("git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--allow-empty", "-qm", "while it was down")
	git.Dir = ws
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v\n%s", err, out)
	}

	second := startServerAt(t, first.Root)
	_, err = page.Goto(second.URL + "/apps/svc")
	must(t, err)
	must(t, expect.Locator(page.GetByTestId("owner-name")).ToHaveText(ownerName))
	must(t, expect.Locator(page.GetByTestId("preview-note")).ToHaveText("The preview stopped when the launcher restarted."))
	must(t, expect.Locator(page.GetByTestId("checks-note")).ToHaveText("Passed 1 of 1 for an earlier preview; run the checks again."))
	must(t, expect.Locator(page.GetByTestId("edited")).ToHaveText("Edited since this build."))

	must(t, page.GetByTestId("preview-start").Click())
	must(t, expect.Locator(page.GetByTestId("preview-running")).ToBeVisible(playwright.LocatorAssertionsToBeVisibleOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.GetByTestId("preview-note")).ToHaveCount(0))
}
