package handlers_test

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"autoapp/executor/ai/provider"
	"autoapp/executor/ai/scripted"
	"autoapp/knowledge"
)

// withTwoModels turns on a second provider beside withModel's, offering
// one model: scripted:builder and other:tiny.
func withTwoModels(t *testing.T, s *server) *scripted.Server {
	t.Helper()
	m := scripted.New(t)
	m.Models("tiny")
	if err := s.providers.Save(provider.Provider{Name: "other", BaseURL: m.URL(), On: true}, false); err != nil {
		t.Fatal(err)
	}
	return m
}

// scorecardRow is a model's row of Settings → Compare models.
func scorecardRow(t testing.TB, r *response, model string) string {
	t.Helper()
	return element(t, r, `<tr data-testid="scorecard-row" data-model="`+model+`"`, "</tr>")
}

func TestSettingsShowsEachModelsLatestScorecardBesideIt(t *testing.T) {
	t.Parallel()
	s, ada := withOwner(t)
	withModel(t, s)
	withTwoModels(t, s)

	// Nothing compared yet: every model is offered, each saying so.
	r := ada.get("/settings")
	wantStatus(t, r, fiber.StatusOK)
	for _, m := range []string{"scripted:builder", "other:tiny"} {
		wantWithin(t, scorecardRow(t, r, m), "Not compared yet.")
	}
	wantMarkup(t, element(t, r, `<section id="scorecard"`, ">"), `data-polling="false"`)

	ctx := context.Background()
	cards := knowledge.NewScorecards(s.launcher.Knowledge.DB())
	older := time.Date(2025, 2, 20, 10, 0, 0, 0, time.UTC)
	newer := time.Date(2025, 2, 28, 16, 30, 0, 0, time.UTC)
	for _, sc := range []knowledge.Score{
		{Model: "other:tiny", Stamp: "20250220-100000", Condition: "baseline", MeasuredAt: older, Tasks: 4, WorkingCode: 1, Workflow: 0,
			Attempts: 8, FirstEditCalls: 12, FirstEditTasks: 3, FromText: 9, InvalidInputs: 5, Tokens: 40000, WallMS: 300000},
		{Model: "other:tiny", Stamp: "20250228-163000", Condition: "baseline", MeasuredAt: newer, Tasks: 4, WorkingCode: 3, Workflow: 3,
			Attempts: 7, FirstEditCalls: 6, FirstEditTasks: 4, InvalidInputs: 1, Tokens: 20900, TokensReported: true, WallMS: 95500},
	} {
		if _, err := cards.Record(ctx, sc); err != nil {
			t.Fatal(err)
		}
	}

	r = ada.get("/settings")
	tiny := scorecardRow(t, r, "other:tiny")
	for _, cell := range []string{"<td>3 of 4</td><td>3 of 4</td><td>1.75</td><td>1.5</td><td>0</td><td>1</td><td>20,900</td><td>1m35s</td>"} {
		wantMarkup(t, tiny, cell)
	}
	wantWithin(t, tiny, "measured "+newer.Local().Format("2 Jan 2006 15:04")+" under baseline")
	if strings.Contains(tiny, "40,000") || strings.Contains(tiny, "1 of 4") {
		t.Fatalf("the older row shows beside the model: %s", tiny)
	}
	// The measured model comes first; the other still says it has none.
	table := element(t, r, `data-testid="scorecard-table"`, "</table>")
	if strings.Index(table, `data-model="other:tiny"`) > strings.Index(table, `data-model="scripted:builder"`) {
		t.Fatalf("the measured model is not first: %s", table)
	}
	wantWithin(t, scorecardRow(t, r, "scripted:builder"), "Not compared yet.")
}

func TestCompareModelsIsRefusedWithASentence(t *testing.T) {
	t.Parallel()
	s, ada := withApp(t)
	in, g := running(t, s, ada)
	defer g.Open()
	withTwoModels(t, s)

	for _, tc := range []struct {
		name   string
		models []string
		status int
		want   string
	}{
		{"one model", []string{"scripted:builder"}, fiber.StatusUnprocessableEntity, "Choose at least two models to compare."},
		{"no model", nil, fiber.StatusUnprocessableEntity, "Choose at least two models to compare."},
		{"a model no provider offers", []string{"scripted:builder", "other:huge"}, fiber.StatusUnprocessableEntity,
			"There is no model other:huge: the known models are scripted:builder, other:tiny."},
		{"a run holds the one place", []string{"scripted:builder", "other:tiny"}, fiber.StatusConflict,
			"Intent #" + strconv.FormatInt(in.ID, 10) + " is running; a comparison of models can start once it ends, or once you stop it."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ada.post("/settings/compare", url.Values{"models": tc.models})
			wantStatus(t, r, tc.status)
			wantWithin(t, element(t, r, `data-testid="refusal-compare"`, "</p>"), tc.want)
			// What was chosen stays chosen.
			for _, m := range tc.models {
				if strings.Contains(r.body, `data-model="`+m+`"`) {
					wantMarkup(t, scorecardRow(t, r, m), " checked")
				}
			}
		})
	}
	// Nothing started: the card does not poll.
	wantMarkup(t, element(t, ada.get("/settings/scorecard", "HX-Request", "true"), `<section id="scorecard"`, ">"), `data-polling="false"`)
	wantRedirect(t, ada.post(intentPath(in.ID)+"/stop", nil), intentPath(in.ID))
}

func TestACompareGoingHoldsTheRunsPlace(t *testing.T) {
	t.Parallel()
	s, ada := withApp(t)
	m := withModel(t, s)
	withTwoModels(t, s)
	g := scripted.NewGate(t)
	m.On(scripted.Any(), scripted.Reply{Before: g.Hold, Text: "Thinking."})
	stopped, _ := s.submitted(t, "Change the page")

	wantRedirect(t, ada.post("/settings/compare", url.Values{"models": {"scripted:builder", "other:tiny"}}), "/settings#scorecard")
	g.Wait(t)
	defer g.Open()

	// The card says what it is on, and polls.
	r := ada.get("/settings/scorecard", "HX-Request", "true")
	wantMarkup(t, element(t, r, `<section id="scorecard"`, ">"), `hx-trigger="every 2s"`)
	wantWithin(t, element(t, r, `data-testid="scorecard-status"`, "</p>"), "Now scripted:builder, site-about, attempt 1.")

	going := "A comparison of models is going"
	r = ada.post("/settings/compare", url.Values{"models": {"scripted:builder", "other:tiny"}})
	wantStatus(t, r, fiber.StatusConflict)
	wantWithin(t, element(t, r, `data-testid="refusal-compare"`, "</p>"), going+"; one replay or comparison of models runs at a time, so wait for it to end.")
	r = ada.post(intentPath(stopped.ID)+"/run", nil)
	wantStatus(t, r, fiber.StatusConflict)
	wantWithin(t, element(t, r, `data-testid="refusal-run"`, "</p>"), going+"; an intent can run once it ends.")
}
