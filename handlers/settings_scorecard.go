package handlers

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"autoapp/executor/replay"
	"autoapp/knowledge"
	"autoapp/views"
)

// Comparisons is what Settings needs of the comparisons of models
// (*replay.Service): each model's latest scorecard row, and Compare
// models, which goes on in the background.
type Comparisons interface {
	Scorecard(ctx context.Context) (replay.Scorecard, error)
	Compare(ctx context.Context, models []string) error
}

// settingsScorecard is the polled Compare models card.
func (h *settingsPages) settingsScorecard(c *fiber.Ctx) error {
	if h.Comparisons == nil {
		return fiber.NewError(fiber.StatusNotFound, "This launcher compares no models.")
	}
	v, err := h.scorecardView(c.UserContext(), nil, views.Refusal{})
	if err != nil {
		return err
	}
	return render(c, views.ScorecardCard(shell(c, "", "settings"), *v))
}

// settingsCompare starts Compare models with the models chosen, and shows
// Settings following it.
func (h *settingsPages) settingsCompare(c *fiber.Ctx) error {
	if h.Comparisons == nil {
		return fiber.NewError(fiber.StatusNotFound, "This launcher compares no models.")
	}
	var chosen []string
	for _, m := range c.Request().PostArgs().PeekMulti("models") {
		chosen = append(chosen, string(m))
	}
	err := h.Comparisons.Compare(c.UserContext(), chosen)
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderSettings(c, settingsNotes{refusal: views.Refusal{At: "compare", Sentence: sentence}, chosenModels: chosen})
	}
	if err != nil {
		return err
	}
	return c.Redirect("/settings#scorecard", fiber.StatusSeeOther)
}

// scorecardView shapes the Compare models card: chosen are the models a
// refused form chose, shown ticked again.
func (h *settingsPages) scorecardView(ctx context.Context, chosen []string, r views.Refusal) (*views.ScorecardView, error) {
	if h.Comparisons == nil {
		return nil, nil
	}
	// A provider slow to list its models leaves them out, as the page's
	// suggestions do.
	ctx, cancel := context.WithTimeout(ctx, offeredWait)
	defer cancel()
	sc, err := h.Comparisons.Scorecard(ctx)
	if err != nil {
		return nil, err
	}
	v := &views.ScorecardView{Attempts: replay.CompareAttempts, Tasks: 4, Condition: replay.DefaultCompareCondition, Refusal: r}
	if g := sc.Going; g != nil {
		v.Going = g.Going()
		v.Tasks, v.Condition = g.Tasks, g.Condition
		v.Status, v.Problem = comparisonStatus(*g, h.Now()), g.Problem
	}
	for _, m := range sc.Models {
		row := views.ScorecardRow{Model: m, Chosen: slices.Contains(chosen, m)}
		if s, ok := sc.Latest[m]; ok {
			row = scorecardRow(row, s)
		}
		v.Rows = append(v.Rows, row)
	}
	// The measured models first, the best ahead, then the rest as the
	// providers list them.
	slices.SortStableFunc(v.Rows, func(a, b views.ScorecardRow) int {
		sa, oka := sc.Latest[a.Model]
		sb, okb := sc.Latest[b.Model]
		switch {
		case oka && !okb:
			return -1
		case okb && !oka:
			return 1
		case oka && okb && sa.Better(sb):
			return -1
		case oka && okb && sb.Better(sa):
			return 1
		}
		return 0
	})
	return v, nil
}

// scorecardRow fills row with the cells of s.
func scorecardRow(row views.ScorecardRow, s knowledge.Score) views.ScorecardRow {
	row.Measured = "measured " + s.MeasuredAt.Local().Format("2 Jan 2006 15:04") + " under " + s.Condition
	row.WorkingCode = fmt.Sprintf("%d of %d", s.WorkingCode, s.Tasks)
	row.Workflow = fmt.Sprintf("%d of %d", s.Workflow, s.Tasks)
	row.Attempts = twoPlaces(s.AttemptsPerTask())
	row.FirstEdit = "—"
	if m, ok := s.FirstEdit(); ok {
		row.FirstEdit = twoPlaces(m)
		if s.FirstEditTasks < s.Tasks {
			row.FirstEdit += fmt.Sprintf(" (%d tasks)", s.FirstEditTasks)
		}
	}
	row.FromText, row.Invalid = strconv.Itoa(s.FromText), strconv.Itoa(s.InvalidInputs)
	switch {
	case s.TokensReported:
		row.Tokens = grouped(s.Tokens)
	case s.Tokens == 0:
		row.Tokens = "not reported"
	default:
		row.Tokens = "at least " + grouped(s.Tokens)
	}
	row.Wall = elapsed(time.Duration(s.WallMS) * time.Millisecond)
	return row
}

// comparisonStatus says in a sentence how the comparison started here
// stands.
func comparisonStatus(g replay.ComparisonGoing, now time.Time) string {
	models := strings.Join(g.Models, ", ")
	if !g.Going() {
		if g.Problem != "" {
			return ""
		}
		return fmt.Sprintf("The comparison of %s finished at %s; each model's row is below.", models, g.Ended.Local().Format("15:04"))
	}
	s := fmt.Sprintf("Comparing %s (%d of %d finished, %s so far).", models, len(g.Finished), len(g.Models), elapsed(now.Sub(g.Started)))
	if p := g.Now; p != nil {
		s += fmt.Sprintf(" Now %s, %s, attempt %d.", p.Model, p.Task, p.N)
	}
	return s
}

// twoPlaces is a mean to two places at most: "1", "1.5", "1.75".
func twoPlaces(m float64) string {
	return strconv.FormatFloat(math.Round(m*100)/100, 'f', -1, 64)
}

// grouped writes n with a comma between thousands: 12,100.
func grouped(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// elapsed is a duration as a person reads it: 42s, 3m04s, 1h02m.
func elapsed(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}
