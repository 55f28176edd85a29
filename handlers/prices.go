package handlers

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"autoapp/intent"
	"autoapp/intent/spend"
	"autoapp/views"
)

// Prices is what Settings needs of prices.json.
type Prices interface {
	Prices() spend.Loaded
	SavePrices(rows []spend.Row, caps spend.CapsForm) (spend.Prices, error)
}

// maxPriceRows bounds the rows a prices form may post.
const maxPriceRows = 500

// emptyPriceRows are offered below the saved prices for new ones.
const emptyPriceRows = 3

// pricesView is the prices form: as typed after a refusal, else as saved,
// with empty rows for new prices.
func (h *settingsPages) pricesView(ctx context.Context, typed *views.PricesView) *views.PricesView {
	if h.Prices == nil {
		return nil
	}
	l := h.Prices.Prices()
	v := &views.PricesView{Problem: l.Problem, Missing: l.Missing}
	if typed != nil {
		// As typed, row for row, so the refusal's row numbers point at them.
		v.Rows, v.Budget, v.DayTokens, v.Intent = typed.Rows, typed.Budget, typed.DayTokens, typed.Intent
	} else {
		models := make([]string, 0, len(l.Models))
		for m := range l.Models {
			models = append(models, m)
		}
		sort.Strings(models)
		for _, m := range models {
			p := l.Models[m]
			v.Rows = append(v.Rows, views.PriceRow{Model: m, Input: price(p.Input), Output: price(p.Output)})
		}
		if l.DayBudget != nil {
			v.Budget = price(*l.DayBudget)
		}
		if l.DayTokens != nil {
			v.DayTokens = strconv.FormatInt(*l.DayTokens, 10)
		}
		f := l.IntentCap.Form()
		v.Intent = views.CapFields{Dollars: f.Dollars, Tokens: f.Tokens, Minutes: f.Minutes}
		for range emptyPriceRows {
			v.Rows = append(v.Rows, views.PriceRow{})
		}
	}
	if h.Overview != nil {
		if r, err := h.Overview.Spend(ctx, spendDays); err == nil {
			for _, m := range r.ByModel {
				if _, ok := l.Of(m.Name); !ok {
					v.Used = append(v.Used, m.Name)
				}
			}
		}
	}
	return v
}

// capFields are a cap's fields as posted under prefix (intent_dollars, …).
func capFields(c *fiber.Ctx, prefix string) views.CapFields {
	return views.CapFields{Dollars: strings.TrimSpace(c.FormValue(prefix + "dollars")), Tokens: strings.TrimSpace(c.FormValue(prefix + "tokens")),
		Minutes: strings.TrimSpace(c.FormValue(prefix + "minutes"))}
}

func price(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// pricesSave checks and writes prices.json.
func (h *settingsPages) pricesSave(c *fiber.Ctx) error {
	if h.Prices == nil {
		return fiber.NewError(fiber.StatusNotFound, "This launcher keeps no prices.")
	}
	n, err := strconv.Atoi(c.FormValue("rows"))
	if err != nil || n < 0 || n > maxPriceRows {
		return fiber.NewError(fiber.StatusBadRequest, "This form is out of date; reload the page and try again.")
	}
	typed := &views.PricesView{Budget: strings.TrimSpace(c.FormValue("budget_day")), DayTokens: strings.TrimSpace(c.FormValue("day_tokens")),
		Intent: capFields(c, "intent_")}
	var rows []spend.Row
	for i := range n {
		is := strconv.Itoa(i)
		r := spend.Row{Model: c.FormValue("model_" + is), Input: c.FormValue("input_" + is), Output: c.FormValue("output_" + is)}
		rows = append(rows, r)
		typed.Rows = append(typed.Rows, views.PriceRow{Model: r.Model, Input: r.Input, Output: r.Output})
	}
	_, err = h.Prices.SavePrices(rows, spend.CapsForm{Day: typed.Budget, DayTokens: typed.DayTokens, Intent: intent.CapForm(typed.Intent)})
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderSettings(c, settingsNotes{refusal: views.Refusal{At: "prices", Sentence: sentence}, typedPrices: typed})
	}
	if err != nil {
		return err
	}
	return c.Redirect("/settings#prices", fiber.StatusSeeOther)
}
