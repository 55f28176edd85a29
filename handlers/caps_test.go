package handlers_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

func TestTheCapFormKeepsTheOwnersCapAndNamesEveryProblem(t *testing.T) {
	t.Parallel()
	s, ada := withApp(t)
	in, _ := s.submitted(t, "Change the page")
	// Nothing set: the page says so and offers the form.
	r := ada.get(intentPath(in.ID))
	wantWithin(t, element(t, r, `data-testid="cap-line"`, "</p>"), "No cap: nothing but you stops what this intent spends.")
	wantWithin(t, element(t, r, `data-testid="cap-source"`, "</p>"), "The default from")

	r = ada.post(intentPath(in.ID)+"/cap", url.Values{"cap_dollars": {"0"}, "cap_tokens": {"many"}, "cap_minutes": {"-5"}})
	wantStatus(t, r, fiber.StatusUnprocessableEntity)
	refusal := element(t, r, `data-testid="refusal-cap"`, "</p>")
	for _, want := range []string{"US dollars: a cap in dollars must be above 0", `tokens: "many" is not a whole number of tokens`, "minutes of running: a cap in minutes must be above 0"} {
		wantWithin(t, refusal, want)
	}
	if _, set, err := s.backlog.IntentCap(context.Background(), in.ID); err != nil || set {
		t.Fatalf("a refused cap was kept (%v)", err)
	}

	wantRedirect(t, ada.post(intentPath(in.ID)+"/cap", url.Values{"cap_dollars": {"$0.50"}, "cap_tokens": {"200,000"}, "cap_minutes": {""}}), intentPath(in.ID))
	r = ada.get(intentPath(in.ID))
	wantWithin(t, element(t, r, `data-testid="cap-line"`, "</p>"), "Spent of its cap: 0 of 200,000 tokens · $0.00 of $0.50")
	wantWithin(t, element(t, r, `data-testid="cap-source"`, "</p>"), "Set on this page.")
	if form := element(t, r, `data-testid="cap-form"`, "</form>"); !strings.Contains(form, `value="200000"`) || !strings.Contains(form, `value="0.5"`) {
		t.Errorf("the form does not show the cap as saved: %s", form)
	}
}
