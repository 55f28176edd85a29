package e2e

import (
	"net/url"
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// TestAnApplicationFromTheStaticTemplatePassesItsExample creates an
// application from the static template, builds and checks it from its page,
// opens its preview on its own origin, then stops and starts the preview.
func TestAnApplicationFromTheStaticTemplatePassesItsExample(t *testing.T) {
	s := startServer(t)
	page := newPage(t)
	createOwner(t, page, s)

	must(t, page.GetByTestId("rail-apps").Click())
	must(t, expect.Locator(page.GetByTestId("apps-empty")).ToContainText("No applications yet."))
	form := page.GetByTestId("create-app")
	must(t, form.GetByLabel("Static site").Check())
	must(t, form.GetByLabel("Id").Fill("site"))
	must(t, form.GetByLabel("Name").Fill("My site"))
	must(t, form.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Create the application"}).Click())

	must(t, expect.Page(page).ToHaveURL(s.URL+"/apps/site"))
	must(t, expect.Locator(page.GetByRole("heading", playwright.PageGetByRoleOptions{Level: playwright.Int(1)})).ToContainText("My site"))
	must(t, expect.Locator(page.GetByTestId("selected-app")).ToHaveText("My site"))
	must(t, expect.Locator(page.GetByTestId("not-built")).ToBeVisible())
	must(t, expect.Locator(page.GetByTestId("manifest")).ToHaveValue(regexp.MustCompile(`"static": "site"`)))

	// Build and check: the template's one example passes.
	must(t, page.GetByTestId("cycle").Click())
	must(t, expect.Locator(page.GetByTestId("checks-summary")).ToHaveText("Passed 1 of 1."))
	// It went on in the background; once it ended, the page stopped asking.
	must(t, expect.Locator(page.GetByTestId("app-live")).ToHaveAttribute("data-polling", "false"))
	must(t, expect.Locator(page.GetByTestId("candidate-going")).ToHaveCount(0))
	check := page.GetByTestId("check-0001-home-page")
	must(t, expect.Locator(check).ToHaveAttribute("data-passed", "true"))
	must(t, expect.Locator(check).ToContainText("The home page shows its heading"))
	must(t, expect.Locator(page.GetByTestId("build-state")).ToContainText("Built"))
	must(t, expect.Locator(page.GetByTestId("releases")).ToBeVisible())

	// The preview runs on its own origin and shows the site.
	link := page.GetByTestId("preview-link")
	must(t, expect.Locator(link).ToBeVisible())
	href, err := link.GetAttribute("href")
	must(t, err)
	previewURL, err := url.Parse(href)
	must(t, err)
	console, _ := url.Parse(s.URL)
	if previewURL.Hostname() == console.Hostname() || previewURL.Hostname() != "site.localhost" {
		t.Fatalf("the preview %s is not on a host name of its own (the console is %s)", href, s.URL)
	}
	site := newPage(t)
	_, err = site.Goto(href)
	must(t, err)
	must(t, expect.Locator(site.GetByRole("heading", playwright.PageGetByRoleOptions{Name: "A new site"})).ToBeVisible())

	// Stop: the preview is gone and the checks belong to an earlier preview.
	must(t, page.GetByTestId("preview-stop").Click())
	must(t, expect.Locator(page.GetByTestId("preview-stopped")).ToHaveText("No preview is running."))
	must(t, expect.Locator(page.GetByTestId("checks-note")).ToHaveText("Passed 1 of 1 for an earlier preview; run the checks again."))
	if _, err := site.Reload(); err == nil {
		t.Fatalf("the stopped preview at %s still answers", href)
	}

	// Start it again.
	must(t, page.GetByTestId("preview-start").Click())
	must(t, expect.Locator(page.GetByTestId("preview-running")).ToBeVisible())
	must(t, expect.Locator(page.GetByTestId("preview-link")).ToHaveText(regexp.MustCompile(`^http://site\.localhost:\d+/$`)))

	// The owner makes the release current.
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Make current"}).Click())
	must(t, expect.Locator(page.GetByTestId("current-release")).ToHaveText("current"))

	// The application is listed and selected.
	must(t, page.GetByTestId("rail-apps").Click())
	must(t, expect.Locator(page.GetByTestId("app-site")).ToContainText("selected"))
	must(t, expect.Locator(page.GetByTestId("app-site").GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "http://site.localhost:"})).ToBeVisible())
}
