package handlers_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gofiber/fiber/v2"

	"autoapp/intent"
)

// TestOpeningAPageSelectsNothing: a GET writes nothing. Opening another
// application's page, or one of its intents, leaves session.json with the
// application chosen last, while the rail names the one the page is about;
// choosing it from the Applications list (a POST) selects it.
func TestOpeningAPageSelectsNothing(t *testing.T) {
	t.Parallel()
	s, ada := withApp(t)
	ctx := context.Background()
	if _, err := s.apps.CreateFromTemplate(ctx, "shop", "Shop", "static"); err != nil {
		t.Fatal(err)
	}
	in, err := s.backlog.OpenDraft(ctx, "shop", "Add a cart", intent.Analysis{Restated: []string{"Add a cart."}})
	if err != nil {
		t.Fatal(err)
	}
	session := filepath.Join(s.launcher.Root, "launcher", "session.json")
	before, err := os.ReadFile(session)
	if err != nil {
		t.Fatal(err)
	}
	const railShop = `href="/apps/shop" data-testid="selected-app">Shop</a>`
	for _, target := range []string{"/apps/shop", intentPath(in.ID), intentPath(in.ID) + "/live"} {
		t.Run(target, func(t *testing.T) {
			r := ada.get(target)
			wantStatus(t, r, fiber.StatusOK)
			if after, err := os.ReadFile(session); err != nil || string(after) != string(before) {
				t.Fatalf("GET %s wrote session.json: %s, was %s (%v)", target, after, before, err)
			}
			if target != intentPath(in.ID)+"/live" {
				wantSentence(t, r, railShop)
			}
		})
	}
	wantSentence(t, ada.get("/backlog"), `href="/apps/notes" data-testid="selected-app">Notes</a>`)

	// Opening it from the list is the choice, and selects it.
	wantRedirect(t, ada.post("/apps/shop/select", nil), "/apps/shop")
	wantSentence(t, ada.get("/backlog"), railShop)
	wantSentence(t, ada.get("/apps"), `action="/apps/shop/select"`)
}
