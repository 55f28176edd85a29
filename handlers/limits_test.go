package handlers_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

func TestTheLimitsAreSetInSettingsWithEveryProblemNamed(t *testing.T) {
	t.Parallel()
	_, b := withOwner(t)
	r := b.get("/settings")
	wantStatus(t, r, fiber.StatusOK)
	wantSentence(t, r, `name="idle_minutes" value="8"`)
	wantSentence(t, r, `name="turn_minutes" value="20"`)

	r = b.post("/settings/limits", url.Values{"idle_minutes": {"soon"}, "turn_minutes": {"0"}})
	wantStatus(t, r, fiber.StatusUnprocessableEntity)
	wantSentence(t, r, `idleMinutes: &#34;soon&#34; is not a number of minutes`)
	wantSentence(t, r, `value="soon"`)
	r = b.post("/settings/limits", url.Values{"idle_minutes": {"30"}, "turn_minutes": {"10"}})
	wantStatus(t, r, fiber.StatusUnprocessableEntity)
	wantSentence(t, r, "30 minutes without a tool call is longer than the turn (10 minutes)")

	wantRedirect(t, b.post("/settings/limits", url.Values{"idle_minutes": {"12.5"}, "turn_minutes": {"45"}}), "/settings#limits")
	r = b.get("/settings")
	wantSentence(t, r, `name="idle_minutes" value="12.5"`)
	wantSentence(t, r, `name="turn_minutes" value="45"`)
}

func TestRunsAtOnceIsSetInSettingsAndARefusalNamesTheProblem(t *testing.T) {
	t.Parallel()
	_, b := withOwner(t)
	r := b.get("/settings")
	wantStatus(t, r, fiber.StatusOK)
	wantSentence(t, r, `name="runs_at_once" type="number" min="1" max="8" value="1"`)

	r = b.post("/settings/runs", url.Values{"runs_at_once": {"12"}})
	wantStatus(t, r, fiber.StatusUnprocessableEntity)
	wantSentence(t, r, `Runs at once was not saved: &#34;12&#34; is not a whole number from 1 to 8.`)
	wantSentence(t, r, `value="12"`)

	wantRedirect(t, b.post("/settings/runs", url.Values{"runs_at_once": {"3"}}), "/settings#runs")
	r = b.get("/settings")
	wantSentence(t, r, `name="runs_at_once" type="number" min="1" max="8" value="3"`)
	// The turn limits saved after it keep it.
	wantRedirect(t, b.post("/settings/limits", url.Values{"idle_minutes": {"5"}, "turn_minutes": {"15"}}), "/settings#limits")
	wantSentence(t, b.get("/settings"), `value="3"`)
}

func TestReadingToolCallsWrittenAsTextIsAProviderSetting(t *testing.T) {
	t.Parallel()
	_, b := withOwner(t)
	r := b.get("/settings")
	wantSentence(t, r, `name="text_calls" value="1" checked`)
	wantRedirect(t, b.post("/settings/providers", url.Values{"name": {"ollama"}, "base_url": {"http://127.0.0.1:11434"}, "on": {"1"}}), "/settings?saved=provider&name=ollama")
	wantSentence(t, b.get("/settings"), "tool calls written as text are not read")
	wantRedirect(t, b.post("/settings/providers", url.Values{"editing": {"ollama"}, "name": {"ollama"}, "base_url": {"http://127.0.0.1:11434"},
		"on": {"1"}, "text_calls": {"1"}}), "/settings?saved=provider&name=ollama")
	if body := b.get("/settings"); strings.Contains(body.body, "tool calls written as text are not read") {
		t.Error("reading tool calls written as text was turned back on and the page still says it is off")
	}
}
