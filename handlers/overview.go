package handlers

import (
	"context"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"

	"autoapp/executor/overview"
	"autoapp/intent"
	"autoapp/intent/spend"
	"autoapp/views"
)

// Overview is what the handlers need of the overview: one read that
// writes nothing.
type Overview interface {
	Read(ctx context.Context) (overview.Overview, error)
	NeedCount(ctx context.Context) (int, error)
	Task(ctx context.Context, t intent.TaskDetail) (overview.IntentSpend, error)
	Spend(ctx context.Context, days int) (spend.Report, error)
	Board(ctx context.Context, q overview.BoardQuery) (overview.Board, error)
}

// spendDays is how many days the Overview page reports.
const spendDays = 30

// overviewPages are the Overview page and its polled panel (Overview).
type overviewPages struct{ frame }

func (h *overviewPages) overviewPage(c *fiber.Ctx) error {
	if h.Overview == nil {
		return fiber.NewError(fiber.StatusNotFound, "This launcher keeps no overview.")
	}
	ctx := c.UserContext()
	o, err := h.Overview.Read(ctx)
	if err != nil {
		return err
	}
	r, err := h.Overview.Spend(ctx, spendDays)
	if err != nil {
		return err
	}
	s, err := h.pageMarked(c, "Overview", "backlog", o.Needs.Total())
	if err != nil {
		return err
	}
	return render(c, views.OverviewPage(s, views.OverviewPageView{Overview: overviewView(o), Spend: reportView(r)}))
}

// overviewLive is the polled panel.
func (h *overviewPages) overviewLive(c *fiber.Ctx) error {
	if h.Overview == nil {
		return fiber.NewError(fiber.StatusNotFound, "This launcher keeps no overview.")
	}
	o, err := h.Overview.Read(c.UserContext())
	if err != nil {
		return err
	}
	return render(c, views.OverviewPanel(shell(c, "", "backlog"), overviewView(o)))
}

// needNoun names one need of a kind, for "and 3 more failed tasks".
var needNoun = map[overview.NeedKind][2]string{
	overview.NeedQuestion:       {"question at the gate", "questions at the gate"},
	overview.NeedAnswer:         {"task that asked", "tasks that asked"},
	overview.NeedFailed:         {"failed task", "failed tasks"},
	overview.NeedFeedback:       {"intent waiting for feedback", "intents waiting for feedback"},
	overview.NeedRelease:        {"release to make current", "releases to make current"},
	overview.NeedApproval:       {"plan waiting for approval", "plans waiting for approval"},
	overview.NeedDraftQuestions: {"draft with questions", "drafts with questions"},
	overview.NeedCap:            {"intent stopped at a cap", "intents stopped at a cap"},
}

func spendView(t spend.Total) views.SpendView {
	return views.SpendView{Cost: t.CostText(), Tokens: t.TokensText(), Unpriced: t.UnpricedText(), Turns: t.Turns}
}

func overviewView(o overview.Overview) views.OverviewView {
	v := views.OverviewView{Today: spendView(o.Today), Polling: o.Running || len(o.InHand) > 0}
	for _, n := range o.Needs.List {
		nv := views.NeedView{Kind: string(n.Kind), AppID: n.AppID, Text: n.Text, Advice: n.Advice}
		switch n.Kind {
		case overview.NeedAnswer:
			nv.Href, nv.Action = fmt.Sprintf("/backlog/intents/%d", n.IntentID), "Answer it"
		case overview.NeedFailed:
			nv.Href, nv.Action = fmt.Sprintf("/backlog/intents/%d", n.IntentID), "Open the intent"
		case overview.NeedRelease:
			nv.Href, nv.Action = "/apps/"+n.AppID, "Open the application"
		case overview.NeedFeedback:
			nv.Href, nv.Action = fmt.Sprintf("/backlog/intents/%d", n.IntentID), "Open the intent"
		case overview.NeedApproval:
			nv.Href, nv.Action = fmt.Sprintf("/backlog/intents/%d", n.IntentID), "Review and approve the plan"
		case overview.NeedCap:
			nv.Href, nv.Action = fmt.Sprintf("/backlog/intents/%d#cap", n.IntentID), "Raise the cap"
		}
		v.Needs = append(v.Needs, nv)
	}
	for _, k := range []overview.NeedKind{overview.NeedQuestion, overview.NeedAnswer, overview.NeedFailed, overview.NeedFeedback, overview.NeedApproval, overview.NeedCap, overview.NeedDraftQuestions, overview.NeedRelease} {
		if more := o.Needs.More(k); more > 0 {
			v.More = append(v.More, views.NeedMoreView{Kind: string(k), Text: "and " + views.Count(more, "more "+needNoun[k][0], "more "+needNoun[k][1]) + "."})
		}
	}
	for _, p := range o.InHand {
		v.InHand = append(v.InHand, views.InHandView{IntentID: p.IntentID, AppID: p.AppID, Slug: p.Slug, RunID: p.RunID, Stage: p.Stage,
			LastTool: p.LastTool, Refusal: p.Refusal, HostBuild: p.HostBuild, Elapsed: duration(p.Elapsed), Limit: duration(p.Limit),
			Idle: duration(p.Idle), Model: p.Model.Sentence(o.At),
			Turn: p.Turn, MaxTurns: p.MaxTurns, Attempts: p.Attempts, MaxCounted: p.MaxCounted, Passed: p.Passed, Total: p.Total,
			Task: spendView(p.Task), Run: spendView(p.Run)})
	}
	if b := o.Prices.DayBudget; b != nil {
		v.Budget = spend.Dollars(*b) + " a day"
		v.OverBudget = o.Today.Cost != nil && *o.Today.Cost > *b
	}
	v.PricesNote = o.Prices.Problem
	for _, a := range o.Apps {
		av := views.AppOutlookView{ID: a.ID, Name: a.Name, State: a.State, Running: a.Running, Left: a.Left}
		switch {
		case a.Left == 0:
			av.Estimate = "Nothing left."
		case a.Estimate != nil:
			e := a.Estimate
			av.Estimate = fmt.Sprintf("About %s tokens and %s for %s (%s tokens and %s a task, from %d completed).",
				spend.Count(e.Tokens), duration(e.Time), views.Count(e.Left, "task", "tasks"), spend.Count(e.TokensPerTask), duration(e.TimePerTask), e.From)
		default:
			av.Estimate = fmt.Sprintf("No estimate yet: %d of %d tasks needed have completed with whole usage.", a.Samples, spend.MinSamples)
		}
		v.Apps = append(v.Apps, av)
	}
	return v
}

// duration says a span of time roughly, as a person would.
func duration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		m := int(d.Minutes())
		if s := int(d.Seconds()) % 60; s != 0 && m < 10 {
			return fmt.Sprintf("%d min %d s", m, s)
		}
		return fmt.Sprintf("%d min", m)
	}
	return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
}

// reportView shapes the spend of the last days, with a bar a day: of cost
// when anything in them is priced, else of tokens.
func reportView(r spend.Report) views.SpendReport {
	v := views.SpendReport{Days: len(r.Days), Period: spendView(r.Period), Today: spendView(r.Today)}
	byCost := r.Period.Cost != nil
	values := make([]float64, len(r.Days))
	titles := make([]string, len(r.Days))
	peak := 0.0
	for i, d := range r.Days {
		day := d.Start.Format("Mon 2 Jan")
		if byCost && d.Total.Cost != nil {
			values[i] = *d.Total.Cost
		} else if !byCost {
			values[i] = float64(d.Total.Tokens())
		}
		peak = max(peak, values[i])
		titles[i] = day + ": " + d.Total.CostText() + ", " + spend.Count(d.Total.Tokens()) + " tokens"
		if d.Total.UnpricedTokens > 0 && d.Total.Cost != nil {
			titles[i] += " (" + spend.Count(d.Total.UnpricedTokens) + " unpriced)"
		}
	}
	measure, top, label := "tokens", spend.Count(int64(peak))+" tokens", "Tokens used each day"
	if byCost {
		measure, top, label = "cost", spend.Dollars(peak), "Cost each day"
	}
	label += fmt.Sprintf(" of the last %d days; today %s.", len(r.Days), r.Today.CostText())
	first, last := "", "today"
	if len(r.Days) > 0 {
		first = r.Days[0].Start.Format("2 Jan")
	}
	v.Chart = views.NewChart(values, titles, measure, label, top, first, last)
	for _, l := range r.ByModel {
		v.ByModel = append(v.ByModel, views.SpendLine{Name: l.Name, Spend: spendView(l.Total)})
	}
	for _, l := range r.ByKind {
		v.ByKind = append(v.ByKind, views.SpendLine{Name: l.Name, Spend: spendView(l.Total)})
	}
	return v
}
