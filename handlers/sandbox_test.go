package handlers_test

import (
	"net/url"
	"testing"

	"github.com/gofiber/fiber/v2"
)

func TestTheOwnerTurnsTheSandboxOffAndOnInSettings(t *testing.T) {
	t.Parallel()
	_, b := withOwner(t)
	r := b.get("/apps")
	wantStatus(t, r, fiber.StatusOK)
	wantSentence(t, r, `data-confined="true"`)
	wantSentence(t, r, "Builds and previews run in a sandbox (bubblewrap and Landlock")
	settings := b.get("/settings")
	for _, limit := range []string{"256 processes at once", "2 GiB of memory in all", "10 minutes of CPU time a process", "files of at most 1 GiB"} {
		wantSentence(t, settings, limit)
	}

	wantRedirect(t, b.post("/settings/sandbox", url.Values{"unconfined": {"1"}}), "/settings#sandbox")
	r = b.get("/apps")
	wantSentence(t, r, `data-confined="false"`)
	wantSentence(t, r, "Builds and previews run unconfined, as you chose in Settings")
	r = b.get("/settings")
	wantSentence(t, r, `name="unconfined" value="1" checked`)

	wantRedirect(t, b.post("/settings/sandbox", url.Values{}), "/settings#sandbox")
	wantSentence(t, b.get("/apps"), `data-confined="true"`)
}

func TestSettingsListsTheToolchainsTheSandboxSees(t *testing.T) {
	t.Parallel()
	_, b := withOwner(t)
	r := b.get("/settings")
	wantStatus(t, r, fiber.StatusOK)
	// The tests run with a go on PATH: it is listed with its version.
	wantSentence(t, r, `data-testid="toolchain-go"><code>go</code> go1.`)
	for _, p := range []string{"python3", "node", "npm"} {
		wantSentence(t, r, `data-testid="toolchain-`+p+`"`)
	}
}
