package spend

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"autoapp/intent"
	"autoapp/intent/atomicfile"
	"autoapp/intent/refusal"
	"autoapp/migrations"
)

// Book reads the usage rows of intents.sqlite and prices them with
// prices.json as it is at each read (kept while it is the same). It writes
// nothing but the prices file.
type Book struct {
	db     *migrations.DB
	path   string
	now    func() time.Time
	prices *atomicfile.Kept[Loaded]
	// kept keeps the sums of the rows of the days asked for, and the
	// samples of each application, while the backlog does not change.
	kept *intent.Kept
}

// New builds the book over the intents store; root is the data folder,
// whose launcher/prices.json holds the prices.
func New(db *migrations.DB, root string, now func() time.Time) *Book {
	path := filepath.Join(root, "launcher", File)
	return &Book{db: db, path: path, now: now, prices: atomicfile.NewKept(path, loaded), kept: intent.NewKept(db)}
}

// Path is where prices.json is.
func (b *Book) Path() string { return b.path }

// Prices reads prices.json as it is now.
func (b *Book) Prices() Loaded {
	l := b.prices.Get()
	// What the reader changes of its copy is its own.
	l.Models = maps.Clone(l.Models)
	if l.DayBudget != nil {
		day := *l.DayBudget
		l.DayBudget = &day
	}
	if l.DayTokens != nil {
		n := *l.DayTokens
		l.DayTokens = &n
	}
	l.IntentCap = l.IntentCap.Clone()
	return l
}

// SavePrices checks the prices form and, when every row is right, writes
// prices.json atomically; a refusal names each problem in one sentence.
func (b *Book) SavePrices(rows []Row, caps CapsForm) (Prices, error) {
	p, problems := Parse(rows, caps)
	if problems != nil {
		return Prices{}, &refusal.Error{Code: refusal.Invalid, Message: "The prices were not saved. " + problems.Error() + "."}
	}
	if err := Save(b.path, p); err != nil {
		return Prices{}, err
	}
	return p, nil
}

// Live is a turn running now: what its completed steps have used so far,
// held in memory until the turn's row replaces it. It makes any total it
// is part of a floor. Every read below takes the turns running now, one
// per run going (none, when nothing runs).
type Live struct {
	RunID, AppID, Kind, Model string
	Input, Output             int64
}

// Turn is one turn's usage, priced: a usage row, or the running turn.
type Turn struct {
	intent.Usage
	Total Total
	// Live is the running turn, read from memory.
	Live bool
}

// usageRow is a usage row as SQLite holds it.
type usageRow struct {
	ID      int64  `db:"id"`
	At      int64  `db:"at"`
	Kind    string `db:"kind"`
	RunID   string `db:"run_id"`
	AppID   string `db:"app_id"`
	Model   string `db:"model"`
	Input   int64  `db:"input_tokens"`
	Output  int64  `db:"output_tokens"`
	Partial bool   `db:"partial"`
}

// prefixEnd is the least string above every string that starts with
// prefix, so that run_id >= prefix AND run_id < prefixEnd(prefix) is a
// range the usage_run index answers.
func prefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\xff"
}

// Turns are the turns whose run id starts with prefix ("intent-7-" is every
// turn of intent #7: its builders' and the advice about its tasks), oldest
// first, each priced; a running turn is added when it belongs and its row
// is not written yet.
func (b *Book) Turns(ctx context.Context, prefix string, live []Live) ([]Turn, Loaded, error) {
	if prefix == "" {
		return nil, Loaded{}, fmt.Errorf("spend: turns: an empty prefix would read every row")
	}
	prices := b.Prices()
	var rows []usageRow
	if err := b.db.Read.SelectContext(ctx, &rows,
		`SELECT id, at, kind, run_id, app_id, model, input_tokens, output_tokens, partial
		 FROM usage WHERE run_id >= ? AND run_id < ? ORDER BY at, id`, prefix, prefixEnd(prefix)); err != nil {
		return nil, prices, fmt.Errorf("spend: turns: %w", err)
	}
	out := make([]Turn, 0, len(rows)+len(live))
	written := map[string]bool{}
	for _, r := range rows {
		t := Turn{Usage: intent.Usage{ID: r.ID, At: time.UnixMilli(r.At), Kind: r.Kind, RunID: r.RunID, AppID: r.AppID,
			Model: r.Model, Input: int(r.Input), Output: int(r.Output), Partial: r.Partial}}
		t.Total.add(r.Model, r.Input, r.Output, r.Partial, 1, prices.Prices)
		out = append(out, t)
		written[r.RunID] = true
	}
	for _, l := range live {
		if written[l.RunID] || !strings.HasPrefix(l.RunID, prefix) {
			continue
		}
		t := Turn{Live: true, Usage: intent.Usage{At: b.now(), Kind: l.Kind, RunID: l.RunID, AppID: l.AppID,
			Model: l.Model, Input: int(l.Input), Output: int(l.Output), Partial: true}}
		t.Total.add(l.Model, l.Input, l.Output, true, 1, prices.Prices)
		out = append(out, t)
	}
	return out, prices, nil
}

// Sum is the total of some turns.
func Sum(turns []Turn) Total {
	var t Total
	for _, u := range turns {
		t = t.Plus(u.Total)
	}
	return t
}

// unwritten are the running turns whose rows are not written yet, so
// that none is counted twice.
func (b *Book) unwritten(ctx context.Context, live []Live) ([]Live, error) {
	var out []Live
	for _, l := range live {
		var n int
		if err := b.db.Read.GetContext(ctx, &n, `SELECT count(*) FROM usage WHERE run_id = ?`, l.RunID); err != nil {
			return nil, fmt.Errorf("spend: the running turn: %w", err)
		}
		if n == 0 {
			out = append(out, l)
		}
	}
	return out, nil
}

// midnight is the start of t's day where t is.
func midnight(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
}

// Today is what today's turns used and cost, since local midnight, with
// the running turns.
func (b *Book) Today(ctx context.Context, live []Live) (Total, Loaded, error) {
	r, err := b.report(ctx, 1, live)
	return r.Today, r.Prices, err
}

// Day is one day's spend.
type Day struct {
	Start time.Time
	Total Total
}

// Line is the spend of one model or one kind of turn.
type Line struct {
	Name  string
	Total Total
}

// Report is the spend of the last days: each day (oldest first, today
// last), today, the whole period, per model and per kind of turn.
type Report struct {
	Days    []Day
	Today   Total
	Period  Total
	ByModel []Line
	ByKind  []Line
	Prices  Loaded
}

// Kinds are the kinds of turn in the order the pages list them.
var Kinds = []string{intent.KindChat, intent.KindPlanning, intent.KindBuilder, intent.KindAdvice, intent.KindDistill}

// Days reports the spend of the last n days, today included, with the
// running turns counted today.
func (b *Book) Days(ctx context.Context, n int, live []Live) (Report, error) {
	if n < 1 {
		n = 1
	}
	return b.report(ctx, n, live)
}

// dayGroup sums the usage rows of one day, model and kind.
type dayGroup struct {
	N       int    `db:"n"`
	Model   string `db:"model"`
	Kind    string `db:"kind"`
	Input   int64  `db:"i"`
	Output  int64  `db:"o"`
	Partial bool   `db:"p"`
	Rows    int    `db:"c"`
}

func (b *Book) report(ctx context.Context, n int, live []Live) (Report, error) {
	prices := b.Prices()
	now := b.now()
	today := midnight(now)
	r := Report{Prices: prices, Days: make([]Day, n)}
	// The days' bounds are worked out here, where the time zone is known,
	// and passed as one JSON parameter: [[from, to), …] in milliseconds.
	bounds := make([][2]int64, n)
	for i := range n {
		start := today.AddDate(0, 0, i-(n-1))
		end := start.AddDate(0, 0, 1)
		r.Days[i].Start = start
		bounds[i] = [2]int64{start.UnixMilli(), end.UnixMilli()}
	}
	param, err := json.Marshal(bounds)
	if err != nil {
		return r, fmt.Errorf("spend: days: %w", err)
	}
	groups, err := intent.KeptRead(ctx, b.kept, "days "+string(param), slices.Clone[[]dayGroup], func(ctx context.Context) ([]dayGroup, error) {
		var groups []dayGroup
		err := b.db.Read.SelectContext(ctx, &groups,
			`WITH days (n, lo, hi) AS (
			     SELECT CAST(key AS INTEGER), json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))
			 SELECT days.n AS n, usage.model AS model, usage.kind AS kind,
			        SUM(usage.input_tokens) AS i, SUM(usage.output_tokens) AS o, MAX(usage.partial) AS p, COUNT(*) AS c
			 FROM days JOIN usage ON usage.at >= days.lo AND usage.at < days.hi
			 GROUP BY days.n, usage.model, usage.kind`, string(param))
		return groups, err
	})
	if err != nil {
		return r, fmt.Errorf("spend: days: %w", err)
	}
	byModel, byKind := map[string]*Total{}, map[string]*Total{}
	count := func(day int, model, kind string, in, out int64, partial bool, rows int) {
		r.Days[day].Total.add(model, in, out, partial, rows, prices.Prices)
		if byModel[model] == nil {
			byModel[model] = &Total{}
		}
		byModel[model].add(model, in, out, partial, rows, prices.Prices)
		if byKind[kind] == nil {
			byKind[kind] = &Total{}
		}
		byKind[kind].add(model, in, out, partial, rows, prices.Prices)
	}
	for _, g := range groups {
		count(g.N, g.Model, g.Kind, g.Input, g.Output, g.Partial, g.Rows)
	}
	unwritten, err := b.unwritten(ctx, live)
	if err != nil {
		return r, err
	}
	for _, l := range unwritten {
		count(n-1, l.Model, l.Kind, l.Input, l.Output, true, 1)
	}
	for _, d := range r.Days {
		r.Period = r.Period.Plus(d.Total)
	}
	r.Today = r.Days[n-1].Total
	for name, t := range byModel {
		r.ByModel = append(r.ByModel, Line{Name: name, Total: *t})
	}
	// The dearest first; unpriced ones after, by tokens.
	slices.SortFunc(r.ByModel, func(a, b Line) int {
		ac, bc := costOr(a.Total), costOr(b.Total)
		switch {
		case ac != bc && ac > bc:
			return -1
		case ac != bc:
			return 1
		case a.Total.Tokens() != b.Total.Tokens() && a.Total.Tokens() > b.Total.Tokens():
			return -1
		case a.Total.Tokens() != b.Total.Tokens():
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	for _, k := range Kinds {
		if t := byKind[k]; t != nil {
			r.ByKind = append(r.ByKind, Line{Name: k, Total: *t})
		}
	}
	return r, nil
}

func costOr(t Total) float64 {
	if t.Cost == nil {
		return -1
	}
	return *t.Cost
}

// maxRunsAsked is how many run ids one query of ByRuns names.
const maxRunsAsked = 500

// ByRuns is what each of runIDs used and cost, priced, a running turn
// added when it is one of them and its row is not written yet: a run id
// with no usage has no entry. It reads only those runs' rows.
func (b *Book) ByRuns(ctx context.Context, runIDs []string, live []Live) (map[string]Total, error) {
	prices := b.Prices()
	out := map[string]Total{}
	for start := 0; start < len(runIDs); start += maxRunsAsked {
		chunk := runIDs[start:min(start+maxRunsAsked, len(runIDs))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		var rows []usageRow
		if err := b.db.Read.SelectContext(ctx, &rows,
			`SELECT id, at, kind, run_id, app_id, model, input_tokens, output_tokens, partial
			 FROM usage WHERE run_id IN (?`+strings.Repeat(", ?", len(chunk)-1)+`)`, args...); err != nil {
			return nil, fmt.Errorf("spend: by runs: %w", err)
		}
		for _, r := range rows {
			t := out[r.RunID]
			t.add(r.Model, r.Input, r.Output, r.Partial, 1, prices.Prices)
			out[r.RunID] = t
		}
	}
	for _, l := range live {
		if _, written := out[l.RunID]; !written && slices.Contains(runIDs, l.RunID) {
			var t Total
			t.add(l.Model, l.Input, l.Output, true, 1, prices.Prices)
			out[l.RunID] = t
		}
	}
	return out, nil
}
