package spend

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"autoapp/intent"
)

// Intents is what the guard needs of the backlog: each intent's own cap
// and how long its runs have run (*intent.Service).
type Intents interface {
	IntentCap(ctx context.Context, intentID int64) (intent.Cap, bool, error)
	RanFor(ctx context.Context, intentID int64) (time.Duration, error)
}

// Recorder writes the usage rows (*intent.UsageBook).
type Recorder interface {
	RecordUsage(ctx context.Context, u intent.Usage) error
}

// Guard answers, before every request to a model, how much the request may
// use under the caps in force: the intent's (its own, or the default of
// Settings) and the day's. It counts what the usage rows hold (partial
// floors included) and every turn still running in this server, which
// tells it its usage as it asks; it is the usage rows' writer too, so a
// turn stops being counted live once its row is written.
type Guard struct {
	book    *Book
	intents Intents
	rows    Recorder
	now     func() time.Time

	mu   sync.Mutex
	live map[string]Live
}

// NewGuard builds the guard over the book, the backlog and the usage rows'
// writer.
func NewGuard(book *Book, intents Intents, rows Recorder, now func() time.Time) *Guard {
	return &Guard{book: book, intents: intents, rows: rows, now: now, live: map[string]Live{}}
}

// Ask is one request about to be sent.
type Ask struct {
	// IntentID is the intent the turn spends for; 0 for none (a chat turn
	// before its request has an intent): only the day's cap holds.
	IntentID int64
	RunID    string
	AppID    string
	Kind     string
	Model    string
	// UsedInput and UsedOutput are what the turn's completed steps used.
	UsedInput, UsedOutput int64
	// Input is the request's input tokens, estimated.
	Input int64
}

// Room is what the request may use.
type Room struct {
	// Refused is why it may not be sent at all.
	Refused string
	// Output is the most output tokens it may stream; below 0 for no cap
	// in tokens or money.
	Output int64
	// Until is when a cap in time is reached; zero for none.
	Until time.Time
	// limits are the caps in force, to say which one a cut request crossed.
	limits []limit
	now    func() time.Time
}

// Reached is the sentence for a request cut at its room, given the turn's
// usage with the cut request's floor counted: the first cap that usage
// crosses, else the cap in time that has passed.
func (r Room) Reached(usedInput, usedOutput int64) string {
	for _, l := range r.limits {
		if l.until.IsZero() && l.crossed(usedInput, usedOutput) {
			return l.sentence(usedInput, usedOutput)
		}
	}
	for _, l := range r.limits {
		if !l.until.IsZero() && !r.now().Before(l.until) {
			return l.sentence(usedInput, usedOutput)
		}
	}
	if len(r.limits) > 0 {
		return r.limits[0].sentence(usedInput, usedOutput)
	}
	return "A cap was reached."
}

// limit is one cap in force for a request.
type limit struct {
	// left is how many output tokens the request may stream after the
	// turn's usage and its input: 0 or less leaves none, and unbounded
	// sets no bound.
	left func(usedIn, usedOut, input int64) int64
	// until is when a cap in time is reached; zero for a cap that is not.
	until time.Time
	// crossed says the turn's usage is past the cap; sentence says so.
	crossed  func(usedIn, usedOut int64) bool
	sentence func(usedIn, usedOut int64) string
}

// unbounded is the room of a cap that does not bound the request's
// tokens (a cap in money on an unpriced model that has not been reached).
const unbounded = math.MaxInt64

// RecordUsage writes the turn's usage row; from then on the row counts and
// the turn is no longer counted live.
func (g *Guard) RecordUsage(ctx context.Context, u intent.Usage) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	err := g.rows.RecordUsage(ctx, u)
	delete(g.live, u.RunID)
	return err
}

// Room answers the request's room. An error reading what was spent is an
// error: the caller refuses the request rather than guess.
// The turn is counted live from then on, with what it used so far, until
// its usage row is written.
func (g *Guard) Room(ctx context.Context, a Ask) (Room, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.live[a.RunID] = Live{RunID: a.RunID, AppID: a.AppID, Kind: a.Kind, Model: a.Model, Input: a.UsedInput, Output: a.UsedOutput}
	return g.room(ctx, a)
}

// Check is why a turn, a question or a run asked as a would be refused
// now, or "": Room without counting anything live, for what has not
// begun (Run, a chat turn) or asks once (the advice, a distillation).
func (g *Guard) Check(ctx context.Context, a Ask) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r, err := g.room(ctx, a)
	return r.Refused, err
}

// room is Room's answer; the caller holds g.mu.
func (g *Guard) room(ctx context.Context, a Ask) (Room, error) {
	prices := g.book.Prices()
	price, priced := prices.Of(a.Model)
	var limits []limit
	if a.IntentID != 0 {
		c, set, err := g.intents.IntentCap(ctx, a.IntentID)
		if err != nil {
			return Room{}, err
		}
		if !set {
			c = prices.IntentCap
		}
		if !c.None() {
			spent, err := g.book.OfIntent(ctx, a.IntentID)
			if err != nil {
				return Room{}, err
			}
			spent = spent.Plus(g.liveTotal(prices.Prices, func(l Live) bool { return l.RunID != a.RunID && OfIntent(l.RunID, a.IntentID) }))
			who := fmt.Sprintf("Intent #%d reached its cap of ", a.IntentID)
			const then = " Raise the cap to go on, or leave it stopped."
			if c.Tokens != nil {
				limits = append(limits, tokenLimit(*c.Tokens, spent.Tokens(), func(cap, spent string) string {
					return who + cap + " tokens (spent " + spent + ")." + then
				}))
			}
			if c.Dollars != nil {
				limits = append(limits, moneyLimit(*c.Dollars, spent, price, priced, func(cap, spent string) string {
					return who + cap + " (spent " + spent + ")." + then
				}))
			}
			// Time is the run's: a chat turn about the intent runs no clock.
			if c.Minutes != nil && (a.Kind == intent.KindBuilder || a.Kind == intent.KindAdvice) {
				ran, err := g.intents.RanFor(ctx, a.IntentID)
				if err != nil {
					return Room{}, err
				}
				asked := g.now()
				capped := time.Duration(*c.Minutes * float64(time.Minute))
				minutes := *c.Minutes
				limits = append(limits, limit{until: asked.Add(capped - ran),
					crossed: func(int64, int64) bool { return ran+g.now().Sub(asked) >= capped },
					sentence: func(int64, int64) string {
						return who + Minutes(minutes) + " of running (ran " + Ran(ran+g.now().Sub(asked)) + ")." + then
					}})
			}
		}
	}
	if prices.DayTokens != nil || prices.DayBudget != nil {
		today, _, err := g.book.Today(ctx, nil)
		if err != nil {
			return Room{}, err
		}
		today = today.Plus(g.liveTotal(prices.Prices, func(l Live) bool { return l.RunID != a.RunID }))
		const then = " New runs and turns are refused until tomorrow, or until you raise the cap in Settings."
		if prices.DayTokens != nil {
			limits = append(limits, tokenLimit(*prices.DayTokens, today.Tokens(), func(cap, spent string) string {
				return "Today's cap of " + cap + " tokens is reached (spent " + spent + " today)." + then
			}))
		}
		if prices.DayBudget != nil {
			limits = append(limits, moneyLimit(*prices.DayBudget, today, price, priced, func(cap, spent string) string {
				return "Today's cap of " + cap + " is reached (spent " + spent + " today)." + then
			}))
		}
	}
	return room(limits, a, g.now), nil
}

// room is the least room the limits leave the request, or the first
// limit's refusal.
func room(limits []limit, a Ask, now func() time.Time) Room {
	r := Room{Output: -1, limits: limits, now: now}
	for _, l := range limits {
		if !l.until.IsZero() {
			if !now().Before(l.until) {
				r.Refused = l.sentence(a.UsedInput, a.UsedOutput)
				return r
			}
			if r.Until.IsZero() || l.until.Before(r.Until) {
				r.Until = l.until
			}
			continue
		}
		left := l.left(a.UsedInput, a.UsedOutput, a.Input)
		if left <= 0 {
			r.Refused = l.sentence(a.UsedInput, a.UsedOutput)
			if !l.crossed(a.UsedInput, a.UsedOutput) {
				r.Refused += " The next request alone would pass it."
			}
			return r
		}
		if left != unbounded && (r.Output < 0 || left < r.Output) {
			r.Output = left
		}
	}
	return r
}

// tokenLimit is a cap of most tokens, spent of them before the turn.
func tokenLimit(most, spent int64, say func(cap, spent string) string) limit {
	return limit{
		left:     func(in, out, input int64) int64 { return most - spent - in - out - input },
		crossed:  func(in, out int64) bool { return spent+in+out >= most },
		sentence: func(in, out int64) string { return say(Count(most), Count(spent+in+out)) },
	}
}

// moneyLimit is a cap of most dollars, spent of them (its priced part)
// before the turn, on a model at price: an unpriced model's tokens cost
// nothing it can count, so the cap holds it back only once reached.
func moneyLimit(most float64, spent Total, price Price, priced bool, say func(cap, spent string) string) limit {
	base := 0.0
	if spent.Cost != nil {
		base = *spent.Cost
	}
	cost := func(in, out int64) float64 {
		if !priced {
			return base
		}
		return base + price.Cost(in, out)
	}
	return limit{
		left: func(in, out, input int64) int64 {
			rem := most - cost(in+input, out)
			switch {
			case rem <= 0:
				return 0
			case !priced || price.Output == 0:
				return unbounded
			}
			return int64(rem / (price.Output / 1e6))
		},
		crossed:  func(in, out int64) bool { return cost(in, out) >= most },
		sentence: func(in, out int64) string { return say(Dollars(most), Dollars(cost(in, out))) },
	}
}

// liveTotal is what the turns running in this server that keep say have
// used so far, priced.
func (g *Guard) liveTotal(p Prices, keep func(Live) bool) Total {
	var t Total
	for _, l := range g.live {
		if keep(l) {
			t.add(l.Model, l.Input, l.Output, true, 1, p)
		}
	}
	return t
}

// OfIntent says runID is a turn of the intent's run: a builder's or the
// advice about one of its tasks ("intent-7-…").
func OfIntent(runID string, intentID int64) bool {
	prefix := intentPrefix(intentID)
	return len(runID) > len(prefix) && runID[:len(prefix)] == prefix
}

func intentPrefix(intentID int64) string { return "intent-" + strconv.FormatInt(intentID, 10) + "-" }

// OfIntentWith is OfIntent with the intent's running turns live, each
// counted until its row is written.
func (b *Book) OfIntentWith(ctx context.Context, intentID int64, live []Live) (Total, error) {
	t, err := b.OfIntent(ctx, intentID)
	if err != nil {
		return t, err
	}
	var mine []Live
	for _, l := range live {
		if OfIntent(l.RunID, intentID) {
			mine = append(mine, l)
		}
	}
	unwritten, err := b.unwritten(ctx, mine)
	if err != nil {
		return t, err
	}
	for _, l := range unwritten {
		t.add(l.Model, l.Input, l.Output, true, 1, b.Prices().Prices)
	}
	return t, nil
}

// OfIntent is what the intent spent: its run's turns ("intent-7-…") and
// the chat turns of its request, each priced.
func (b *Book) OfIntent(ctx context.Context, intentID int64) (Total, error) {
	prices := b.Prices()
	prefix := intentPrefix(intentID)
	var rows []usageRow
	if err := b.db.Read.SelectContext(ctx, &rows,
		`SELECT id, at, kind, run_id, app_id, model, input_tokens, output_tokens, partial FROM usage
		 WHERE (run_id >= ? AND run_id < ?)
		    OR run_id IN (SELECT c.run_id FROM chat_turns c JOIN requests r ON r.id = c.request_id WHERE r.intent_id = ?)`,
		prefix, prefixEnd(prefix), intentID); err != nil {
		return Total{}, fmt.Errorf("spend: what intent %d spent: %w", intentID, err)
	}
	var t Total
	for _, r := range rows {
		t.add(r.Model, r.Input, r.Output, r.Partial, 1, prices.Prices)
	}
	return t, nil
}

// Minutes says a cap in minutes: "90 minutes", "1 minute", "0.5 minutes".
func Minutes(m float64) string {
	if m == 1 {
		return "1 minute"
	}
	return strconv.FormatFloat(m, 'f', -1, 64) + " minutes"
}

// Ran says how long something ran: "12 s", "3 min 5 s", "2 h 4 min".
func Ran(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + " s"
	case d < time.Hour:
		return fmt.Sprintf("%d min %d s", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	return fmt.Sprintf("%d h %d min", int(d/time.Hour), int(d%time.Hour/time.Minute))
}
