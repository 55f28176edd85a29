package handlers

import (
	"fmt"
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"autoapp/executor/overview"
	"autoapp/views"
)

// boardPages are the selected application's board and its polled columns
// (Overview, Apps, Providers).
type boardPages struct{ frame }

// boardPage is the selected application's board.
func (h *boardPages) boardPage(c *fiber.Ctx) error {
	b, err := h.board(c)
	if err != nil {
		return err
	}
	s, err := h.page(c, "Board", "board")
	if err != nil {
		return err
	}
	return render(c, views.BoardPage(s, b))
}

// boardLive is the polled columns.
func (h *boardPages) boardLive(c *fiber.Ctx) error {
	b, err := h.board(c)
	if err != nil {
		return err
	}
	return render(c, views.BoardLive(b))
}

// board reads the board the query asks for: one call, then the view.
func (h *boardPages) board(c *fiber.Ctx) (views.BoardView, error) {
	ctx := c.UserContext()
	appID, err := h.Apps.Selected(ctx)
	if err != nil {
		return views.BoardView{}, err
	}
	q := overview.BoardQuery{AppID: appID, All: c.Query("apps") == "all", Label: c.Query("label")}
	q.Intent, _ = strconv.ParseInt(c.Query("intent"), 10, 64)
	b, err := h.Overview.Board(ctx, q)
	if err != nil {
		return views.BoardView{}, err
	}
	v := boardView(b, q, h.Providers.DefaultModel())
	v.Selected = appID
	return v, nil
}

func boardView(b overview.Board, q overview.BoardQuery, settingsModel string) views.BoardView {
	v := views.BoardView{AppID: b.AppID, All: b.All, Labels: b.Labels, Label: q.Label, Polling: b.Running, OlderIntents: b.OlderIntents}
	for _, r := range b.Runs {
		v.Runs = append(v.Runs, views.BoardRunView{IntentID: r.IntentID, AppID: r.AppID, Slug: r.Slug, Stage: r.Stage})
	}
	if q.Intent != 0 {
		v.Intent = strconv.FormatInt(q.Intent, 10)
	}
	for _, id := range b.Intents {
		v.Intents = append(v.Intents, strconv.FormatInt(id, 10))
	}
	query := url.Values{}
	if b.All {
		query.Set("apps", "all")
	}
	if v.Intent != "" {
		query.Set("intent", v.Intent)
	}
	if q.Label != "" {
		query.Set("label", q.Label)
	}
	if len(query) > 0 {
		v.Query = "?" + query.Encode()
	}
	for _, col := range overview.BoardColumns {
		cv := views.BoardColumnView{Key: col.Key, Title: col.Title, Hidden: b.Hidden[col.Key]}
		for _, c := range b.Columns[col.Key] {
			model := c.Model
			if model == "" {
				model = settingsModel + " (the Settings model)"
				if settingsModel == "" {
					model = "no model chosen"
				}
			}
			in := fmt.Sprintf("intent #%d", c.IntentID)
			if b.All {
				in += " of " + c.AppID
			}
			cv.Cards = append(cv.Cards, views.CardView{ID: strconv.FormatInt(c.TaskID, 10), Href: fmt.Sprintf("/backlog/tasks/%d", c.TaskID), Slug: c.Slug, Title: c.Title,
				Intent: in, Status: c.Status, Tier: c.Tier, Model: model, Labels: c.Labels,
				Criteria: fmt.Sprintf("%d of %d criteria passing", c.Passing, c.Criteria), Spend: spendView(c.Spend), Cap: c.Cap, Why: c.Why, Advice: c.Advice})
		}
		v.Columns = append(v.Columns, cv)
	}
	return v
}
