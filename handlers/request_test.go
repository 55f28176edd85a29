package handlers_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// TestARefusedRequestWritesNothingAndKeepsWhatWasTyped: with no Settings
// model the engineer cannot be asked, so nothing is journaled, and the page
// shows the words and the mode back.
func TestARefusedRequestWritesNothingAndKeepsWhatWasTyped(t *testing.T) {
	s, b := withOwner(t)
	ctx := context.Background()
	if _, err := s.apps.CreateFromTemplate(ctx, "notes", "Notes", "static"); err != nil {
		t.Fatal(err)
	}
	if err := s.apps.Select(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	r := b.post("/request", url.Values{"text": {"Add tags to notes."}, "mode": {"guided"}, "op": {"op-refused-1"}})
	wantStatus(t, r, fiber.StatusConflict)
	wantSentence(t, r, "Add tags to notes.</textarea>")
	wantSentence(t, r, `value="guided" checked`)
	var entries int
	if err := s.db.Read.Get(&entries, `SELECT count(*) FROM request_journal`); err != nil || entries != 0 {
		t.Fatalf("%d journal entries (%v), want none: a refused request writes nothing", entries, err)
	}
}
