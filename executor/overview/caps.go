package overview

import (
	"context"
	"strings"
	"time"

	"autoapp/intent"
	"autoapp/intent/spend"
)

// CapState is an intent's cap as its page and its card show it: the cap
// in force (its own, or the default of Settings), and what was spent of
// it: its turns and its request's chat turns, the running turn included,
// and how long its runs have run.
type CapState struct {
	Cap   intent.Cap
	Own   bool
	Spent spend.Total
	Ran   time.Duration
}

// CapState reads intent id's cap and what was spent of it.
func (s *Service) CapState(ctx context.Context, id int64) (CapState, error) {
	var c CapState
	var err error
	if c.Cap, c.Own, err = s.d.Backlog.IntentCap(ctx, id); err != nil {
		return c, err
	}
	if !c.Own {
		c.Cap = s.d.Spend.Prices().IntentCap
	}
	var live []spend.Live
	if p, ok := s.d.Runs.Progress(id); ok && p.RunID != "" {
		t, err := s.d.Backlog.Task(ctx, p.TaskID)
		if err != nil {
			return c, err
		}
		live = []spend.Live{{RunID: p.RunID, Kind: intent.KindBuilder, Model: s.d.ModelOf(t.RunsOn), Input: int64(p.Usage.Input), Output: int64(p.Usage.Output)}}
	}
	if c.Spent, err = s.d.Spend.OfIntentWith(ctx, id, live); err != nil {
		return c, err
	}
	if c.Ran, err = s.d.Backlog.RanFor(ctx, id); err != nil {
		return c, err
	}
	return c, nil
}

// Line says the cap against what was spent of it, each part the cap
// names: "12,345 of 200,000 tokens · $0.12 of $0.50 · 3 min 5 s of 60
// minutes"; "" when nothing caps the intent.
func (c CapState) Line() string {
	var parts []string
	if c.Cap.Tokens != nil {
		parts = append(parts, spend.Count(c.Spent.Tokens())+" of "+spend.Count(*c.Cap.Tokens)+" tokens")
	}
	if c.Cap.Dollars != nil {
		spent := "$0.00"
		if c.Spent.Cost != nil {
			spent = spend.Dollars(*c.Spent.Cost)
		}
		parts = append(parts, spent+" of "+spend.Dollars(*c.Cap.Dollars))
	}
	if c.Cap.Minutes != nil {
		parts = append(parts, spend.Ran(c.Ran)+" of "+spend.Minutes(*c.Cap.Minutes))
	}
	line := strings.Join(parts, " · ")
	if line != "" && c.Spent.AtLeast {
		line = "at least " + line
	}
	return line
}
