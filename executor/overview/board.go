package overview

import (
	"context"
	"slices"
	"strings"

	"autoapp/intent"
	"autoapp/intent/spend"
)

// The board's columns, in the order it shows them.
const (
	ColumnWaiting   = "waiting"   // needs an answer, failed, or a guided plan waiting for approval
	ColumnQueued    = "queued"    // in the queue (blocked or not), or interrupted
	ColumnProgress  = "progress"  // in progress
	ColumnProposed  = "proposed"  // proposed in a plan not yet run
	ColumnCompleted = "completed" // completed, the newest first
)

// BoardColumns are the columns with their headings, in order.
var BoardColumns = []struct{ Key, Title string }{
	{ColumnWaiting, "Waiting for you"},
	{ColumnQueued, "Queued and blocked"},
	{ColumnProgress, "In progress"},
	{ColumnCompleted, "Completed recently"},
	{ColumnProposed, "Proposed"},
}

// BoardRecent is how many tasks of finished intents "Completed recently"
// shows.
const BoardRecent = 20

// BoardIntents is how many live intents the board reads, the newest; an
// older one is shown when the filter asks for it.
const BoardIntents = 10

// BoardColumnCards is the most cards a column shows; the rest are counted
// (Hidden), for a filter to reach.
const BoardColumnCards = 40

// Card is one task on the board.
type Card struct {
	TaskID, IntentID int64
	// AppID is its intent's application.
	AppID       string
	Slug, Title string
	Column      string
	// Status is the task's own status ("blocked" for a blocked in-queue task).
	Status string
	Tier   string
	Labels []string
	// Model is the model it runs on ("" for the Settings model).
	Model string
	// Passing of Criteria have an example that passed.
	Passing, Criteria int
	Spend             spend.Total
	// Cap says what its intent spent of its cap, for a card in progress
	// (CapState.Line); "" when nothing caps it.
	Cap string
	// Why says why it waits for the person, for a card in Waiting.
	Why    string
	Advice string
	// runs are the runs whose usage is the card's: its attempts and the
	// advice about it.
	runs []string
}

// Board is the board of one application, or of all: its cards by column,
// and what the filters can choose.
type Board struct {
	// AppID is the application shown; "" when All.
	AppID   string
	All     bool
	Columns map[string][]Card
	// Intents and Labels are what the filters offer: every live intent and
	// label of the cards, before filtering.
	Intents []int64
	Labels  []string
	// OlderIntents counts the live intents older than those read, whose
	// cards the intent filter shows.
	OlderIntents int
	// Hidden counts, per column, the cards beyond BoardColumnCards.
	Hidden map[string]int
	// Running says a run of an application shown goes: the board
	// refreshes. Runs are those runs, with the task each has in hand.
	Running bool
	Runs    []BoardRun
}

// BoardRun is one run going on the board: its intent, application and
// the task in hand ("" between turns).
type BoardRun struct {
	IntentID int64
	AppID    string
	Slug     string
	Stage    string
}

// BoardQuery is the board of one application, or of all of them (All),
// narrowed to one intent or one label (zero: all).
type BoardQuery struct {
	AppID  string
	All    bool
	Intent int64
	Label  string
}

// Board reads the application's board in a fixed number of reads: its live
// intents' tasks and its newest completed ones, their spend, and the run's
// progress for the task in hand.
func (s *Service) Board(ctx context.Context, q BoardQuery) (Board, error) {
	b := Board{AppID: q.AppID, All: q.All, Columns: map[string][]Card{}, Hidden: map[string]int{}}
	appIDs := []string{q.AppID}
	if q.All {
		b.AppID = ""
		apps, err := s.d.Apps.List(ctx)
		if err != nil {
			return b, err
		}
		appIDs = appIDs[:0]
		for _, a := range apps {
			appIDs = append(appIDs, a.ID)
		}
	} else if q.AppID == "" {
		return b, nil
	}
	gs, err := s.going(ctx)
	if err != nil {
		return b, err
	}
	live := lives(gs)
	progress := map[int64]going{}
	for _, g := range gs {
		if slices.Contains(appIDs, g.AppID) {
			progress[g.IntentID] = g
			b.Runs = append(b.Runs, BoardRun{IntentID: g.IntentID, AppID: g.AppID, Slug: g.p.Slug, Stage: g.p.Stage})
		}
	}
	b.Running = len(b.Runs) > 0

	var cards []Card
	labels := map[string]bool{}
	for _, appID := range appIDs {
		rows, err := s.d.Attention.Board(ctx, appID, BoardRecent, BoardIntents, q.Intent)
		if err != nil {
			return b, err
		}
		b.Intents = append(b.Intents, rows.LiveIDs...)
		if q.Intent == 0 && len(rows.LiveIDs) > len(rows.Live) {
			b.OlderIntents += len(rows.LiveIDs) - len(rows.Live)
		}
		for _, d := range rows.Live {
			awaiting := s.awaitsApproval(ctx, d)
			for _, t := range d.Tasks {
				c, ok := card(d.ID, t, awaiting)
				if !ok {
					continue
				}
				c.AppID = appID
				if g, ok := progress[d.ID]; ok && g.p.TaskID == t.ID && g.p.Total > 0 {
					c.Passing, c.Criteria = g.p.Passed, g.p.Total
				}
				cards = append(cards, c)
			}
		}
		for _, t := range rows.Completed {
			c, _ := card(t.IntentID, t, false)
			c.AppID = appID
			cards = append(cards, c)
		}
	}
	if q.All {
		slices.Sort(b.Intents)
		slices.Reverse(b.Intents)
	}
	for _, c := range cards {
		for _, l := range c.Labels {
			labels[l] = true
		}
		if q.Intent != 0 && c.IntentID != q.Intent {
			continue
		}
		if q.Label != "" && !slices.Contains(c.Labels, q.Label) {
			continue
		}
		if len(b.Columns[c.Column]) == BoardColumnCards {
			b.Hidden[c.Column]++
			continue
		}
		b.Columns[c.Column] = append(b.Columns[c.Column], c)
	}
	// Spend, in one read of the runs the shown cards name.
	var runs []string
	type at struct {
		column string
		i      int
	}
	owner := map[string]at{}
	for col, cs := range b.Columns {
		for i, c := range cs {
			for _, id := range c.runs {
				runs = append(runs, id)
				owner[id] = at{col, i}
			}
		}
	}
	totals, err := s.d.Spend.ByRuns(ctx, runs, live)
	if err != nil {
		return b, err
	}
	for id, t := range totals {
		o := owner[id]
		b.Columns[o.column][o.i].Spend = b.Columns[o.column][o.i].Spend.Plus(t)
	}
	// The intent's cap, beside the task in hand.
	for i, c := range b.Columns[ColumnProgress] {
		st, err := s.CapState(ctx, c.IntentID)
		if err != nil {
			return b, err
		}
		b.Columns[ColumnProgress][i].Cap = st.Line()
	}
	b.Labels = slices.Sorted(func(yield func(string) bool) {
		for l := range labels {
			if !yield(l) {
				return
			}
		}
	})
	return b, nil
}

// awaitsApproval says the intent is a guided plan, submitted, waiting for
// the person's approval.
func (s *Service) awaitsApproval(ctx context.Context, d intent.IntentDetail) bool {
	if s.d.Requests == nil || d.BeingWritten() || (d.Status != intent.IntentDraft && d.Status != intent.IntentStopped) {
		return false
	}
	// Only a plan with proposed tasks can wait for approval: the others
	// need no read of their request's journal.
	proposed := false
	for _, t := range d.Tasks {
		proposed = proposed || t.Status == intent.TaskProposed
	}
	if !proposed {
		return false
	}
	st, err := s.d.Requests.ForIntent(ctx, d.ID)
	if err != nil {
		return false
	}
	return st.Approvable
}

// card is the task's card, and false for a task the board does not show
// (removed).
func card(intentID int64, t intent.BacklogTask, awaiting bool) (Card, bool) {
	c := Card{TaskID: t.ID, IntentID: intentID, Slug: t.Slug, Title: t.Title, Status: string(t.Status), Tier: t.Tier,
		Labels: t.Labels, Model: t.RunsOn, Criteria: len(t.Criteria), Advice: t.Advice,
		runs: append(slices.Clone(t.RunIDs), AdviceRunID(intentID, t.Slug))}
	for _, ok := range t.Passed() {
		if ok {
			c.Passing++
		}
	}
	switch t.Status {
	case intent.TaskRemoved:
		return c, false
	case intent.TaskNeedsAnswer:
		c.Column, c.Why = ColumnWaiting, "asks: "+t.Question
	case intent.TaskFailed:
		c.Column, c.Why = ColumnWaiting, "failed"
		if r := strings.TrimSpace(t.Reason); r != "" {
			c.Why += ": " + r
		}
	case intent.TaskInProgress:
		c.Column = ColumnProgress
	case intent.TaskCompleted:
		c.Column = ColumnCompleted
	case intent.TaskProposed:
		c.Column = ColumnProposed
		if awaiting {
			c.Column, c.Why = ColumnWaiting, "its plan waits for your approval"
		}
	default: // in-queue, interrupted
		c.Column = ColumnQueued
		if t.Blocked {
			c.Status = "blocked"
		}
	}
	return c, true
}
