package spend_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"autoapp/intent"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
	"autoapp/intent/spend"
	"autoapp/intent/timetest"
	"autoapp/migrations"
	"autoapp/migrations/migrationstest"
)

// env is a real intents store in a temporary root, the backlog over it
// and the book that prices its usage rows.
type env struct {
	db        *migrations.DB
	root      string
	clock     *timetest.Clock
	backlog   *intent.Service
	usageBook *intent.UsageBook
	book      *spend.Book
}

func mustOpen(tb testing.TB) *env {
	tb.Helper()
	root := tb.TempDir()
	db := migrationstest.IntentsIn(tb, root)
	c := timetest.NewClock(time.Date(2026, 3, 10, 15, 0, 0, 0, time.UTC))
	all := intent.New(db, root, c.Now, intent.Collaborators{Journal: request.Journal{}})
	return &env{db: db, root: root, clock: c, backlog: all.Backlog, usageBook: all.Usage, book: spend.New(db, root, c.Now)}
}

// prices writes prices.json by hand, as the person might.
func (e *env) prices(tb testing.TB, text string) {
	tb.Helper()
	if err := os.WriteFile(e.book.Path(), []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func (e *env) usage(tb testing.TB, u intent.Usage) {
	tb.Helper()
	if err := e.usageBook.RecordUsage(context.Background(), u); err != nil {
		tb.Fatal(err)
	}
}

func (e *env) today(tb testing.TB, live ...spend.Live) spend.Total {
	tb.Helper()
	t, _, err := e.book.Today(context.Background(), live)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func costOf(tb testing.TB, t spend.Total) float64 {
	tb.Helper()
	if t.Cost == nil {
		tb.Fatalf("no cost in %+v", t)
	}
	return *t.Cost
}

func TestCostIsWorkedOutWhenReadSoCorrectingAPriceCorrectsEarlierDays(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	yesterday := e.clock.Now().AddDate(0, 0, -1)
	e.usage(t, intent.Usage{At: yesterday, Kind: intent.KindBuilder, RunID: "intent-1-0001-a-a1", Model: "openrouter:z-ai/glm-5.3", Input: 1_000_000, Output: 200_000})
	e.usage(t, intent.Usage{Kind: intent.KindChat, RunID: "chat-site-1", Model: "openrouter:z-ai/glm-5.3", Input: 500_000, Output: 100_000})

	for _, p := range []struct{ in, out float64 }{{0.6, 2.2}, {1.5, 4}} {
		e.prices(t, fmt.Sprintf(`{"z-ai/glm-5.3": {"input": %g, "output": %g}, "budget": {"day": 10}}`, p.in, p.out))
		r, err := e.book.Days(ctx, 30, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantYesterday := (1_000_000*p.in + 200_000*p.out) / 1e6
		wantToday := (500_000*p.in + 100_000*p.out) / 1e6
		if got := costOf(t, r.Days[28].Total); !near(got, wantYesterday) {
			t.Errorf("at %v: yesterday cost %v, want %v", p, got, wantYesterday)
		}
		if got := costOf(t, r.Today); !near(got, wantToday) {
			t.Errorf("at %v: today cost %v, want %v", p, got, wantToday)
		}
		if got := costOf(t, r.Period); !near(got, wantYesterday+wantToday) {
			t.Errorf("at %v: 30 days cost %v, want %v", p, got, wantYesterday+wantToday)
		}
		if r.Prices.DayBudget == nil || *r.Prices.DayBudget != 10 {
			t.Errorf("the budget was not read: %+v", r.Prices)
		}
		if len(r.ByKind) != 2 || r.ByKind[0].Name != intent.KindChat || r.ByKind[1].Name != intent.KindBuilder {
			t.Errorf("per kind: %+v", r.ByKind)
		}
		if len(r.ByModel) != 1 || !near(costOf(t, r.ByModel[0].Total), wantYesterday+wantToday) {
			t.Errorf("per model: %+v", r.ByModel)
		}
	}
}

func TestATotalWithAPartialRowOrARunningTurnIsAFloor(t *testing.T) {
	e := mustOpen(t)
	e.prices(t, `{"m": {"input": 1, "output": 2}}`)
	e.usage(t, intent.Usage{Kind: intent.KindBuilder, RunID: "intent-1-0001-a-a1", Model: "m", Input: 1000, Output: 100})
	whole := e.today(t)
	if whole.AtLeast || whole.CostText() != spend.Dollars(costOf(t, whole)) {
		t.Fatalf("a whole row made a floor: %+v %q", whole, whole.CostText())
	}

	e.usage(t, intent.Usage{Kind: intent.KindAdvice, RunID: "intent-1-0001-a-advice", Model: "m", Input: 300, Output: 0, Partial: true})
	floor := e.today(t)
	if !floor.AtLeast || !strings.HasPrefix(floor.CostText(), "at least $") {
		t.Fatalf("a partial row did not make a floor: %+v %q", floor, floor.CostText())
	}
	if want := (1300*1.0 + 100*2.0) / 1e6; !near(costOf(t, floor), want) {
		t.Fatalf("floor cost %v, want %v", *floor.Cost, want)
	}

	// A running turn counts what its steps used so far, once: when its
	// row is written, the row replaces it.
	e2 := mustOpen(t)
	e2.prices(t, `{"m": {"input": 1, "output": 2}}`)
	e2.usage(t, intent.Usage{Kind: intent.KindBuilder, RunID: "intent-1-0001-a-a1", Model: "m", Input: 1000, Output: 100})
	live := spend.Live{RunID: "intent-1-0002-b-a1", Kind: intent.KindBuilder, Model: "m", Input: 400, Output: 40}
	running := e2.today(t, live)
	if !running.AtLeast || running.Input != 1400 || running.Output != 140 || running.Turns != 2 {
		t.Fatalf("with the running turn: %+v", running)
	}
	e2.usage(t, intent.Usage{Kind: intent.KindBuilder, RunID: live.RunID, Model: "m", Input: 500, Output: 50})
	ended := e2.today(t, live)
	if ended.AtLeast || ended.Input != 1500 || ended.Turns != 2 {
		t.Fatalf("the row did not replace the running turn: %+v", ended)
	}
	turns, _, err := e2.book.Turns(context.Background(), "intent-1-", []spend.Live{{RunID: "intent-1-0003-c-a1", Model: "m", Input: 7}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(turns); n != 3 || !turns[2].Live || !spend.Sum(turns).AtLeast {
		t.Fatalf("the intent's turns with the running one: %+v", turns)
	}
}

func TestUnpricedTokensAreCountedAndNothingPricedIsNullNotZero(t *testing.T) {
	e := mustOpen(t)
	e.usage(t, intent.Usage{Kind: intent.KindChat, Model: "ollama:qwen3:27b", Input: 1200, Output: 300})
	e.usage(t, intent.Usage{Kind: intent.KindChat, Model: "gpt-5-mini", Input: 50, Output: 5})

	// No prices.json at all: tokens, no cost.
	none := e.today(t)
	if none.Cost != nil || none.CostText() != "—" || none.UnpricedTokens != none.Tokens() || none.Tokens() != 1555 {
		t.Fatalf("nothing priced: %+v %q", none, none.CostText())
	}
	b, err := json.Marshal(none)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"cost":null`) {
		t.Fatalf("nothing priced must be null: %s", b)
	}

	// One model priced: its cost, and the other's tokens said.
	e.prices(t, `{"gpt-5-mini": {"input": 0.25, "output": 2}}`)
	some := e.today(t)
	if want := (50*0.25 + 5*2.0) / 1e6; !near(costOf(t, some), want) {
		t.Fatalf("cost %v, want %v", *some.Cost, want)
	}
	if some.UnpricedTokens != 1500 || !strings.Contains(some.UnpricedText(), "1,500 tokens") {
		t.Fatalf("unpriced: %+v %q", some, some.UnpricedText())
	}

	// A price of zero is a cost of $0.00, not nothing.
	e.prices(t, `{"qwen3:27b": {"input": 0, "output": 0}, "gpt-5-mini": {"input": 0, "output": 0}}`)
	free := e.today(t)
	if free.Cost == nil || *free.Cost != 0 || free.CostText() != "$0.00" || free.UnpricedTokens != 0 {
		t.Fatalf("priced at zero: %+v %q", free, free.CostText())
	}
}

func TestAnUnreadablePricesFilePricesNothingAndSaysWhy(t *testing.T) {
	cases := []struct {
		name, text, says string
	}{
		{"not JSON", "{\n  \"m\": {\"input\": 1,,\n}", "line 2"},
		{"a price missing", `{"m": {"input": 1}}`, `"m" must be`},
		{"a negative price", `{"m": {"input": -1, "output": 1}}`, "below 0"},
		{"an unknown field", `{"m": {"input": 1, "output": 1, "cached": 1}}`, `"m" must be`},
		{"a budget of nothing", `{"m": {"input": 1, "output": 1}, "budget": {"day": 0}}`, "above 0"},
		{"a model with a space", `{"my model": {"input": 1, "output": 1}}`, "space"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := mustOpen(t)
			e.usage(t, intent.Usage{Kind: intent.KindChat, Model: "m", Input: 10, Output: 10})
			e.prices(t, c.text)
			total, loaded, err := e.book.Today(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if total.Cost != nil || total.UnpricedTokens != 20 {
				t.Fatalf("an unreadable file priced something: %+v", total)
			}
			if !strings.Contains(loaded.Problem, spend.File+" could not be read") || !strings.Contains(loaded.Problem, c.says) {
				t.Fatalf("the problem %q does not say %q", loaded.Problem, c.says)
			}
		})
	}
	e := mustOpen(t)
	if l := e.book.Prices(); !l.Missing || l.Problem != "" {
		t.Fatalf("a missing file: %+v", l)
	}
}

func TestThePricesFormNamesEveryProblem(t *testing.T) {
	cases := []struct {
		name   string
		rows   []spend.Row
		budget string
		says   []string
	}{
		{"a price that is not a number", []spend.Row{{"m", "cheap", "1"}}, "", []string{`row 1 (m): input "cheap" is not a number of dollars`}},
		{"a missing output", []spend.Row{{"m", "1", ""}}, "", []string{"row 1 (m): output is missing"}},
		{"a negative price", []spend.Row{{"m", "-1", "1"}}, "", []string{"row 1 (m): input cannot be below 0"}},
		{"prices without a model", []spend.Row{{"", "1", "1"}}, "", []string{"row 1: name the model"}},
		{"a model twice", []spend.Row{{"m", "1", "1"}, {"m", "2", "2"}}, "", []string{"row 2 (m): row 1 prices it already"}},
		{"a model called budget", []spend.Row{{"budget", "1", "1"}}, "", []string{`row 1 (budget): "budget" holds the caps`}},
		{"a budget of zero", []spend.Row{{"m", "1", "1"}}, "0", []string{"the day's US dollars: the day's cap must be above 0"}},
		{"two problems at once", []spend.Row{{"a", "x", "1"}, {"b", "1", "-2"}}, "lots", []string{"row 1 (a)", "row 2 (b)", "the day's US dollars: the day's cap \"lots\""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := mustOpen(t)
			_, err := e.book.SavePrices(c.rows, spend.CapsForm{Day: c.budget})
			var ie *refusal.Error
			if !errors.As(err, &ie) || ie.Code != refusal.Invalid {
				t.Fatalf("want an invalid refusal, got %v", err)
			}
			for _, s := range c.says {
				if !strings.Contains(ie.Message, s) {
					t.Errorf("%q does not say %q", ie.Message, s)
				}
			}
			if _, err := os.Stat(e.book.Path()); !os.IsNotExist(err) {
				t.Errorf("a refused form wrote %s", spend.File)
			}
		})
	}
}

func TestSavedPricesAreWrittenAtomicallyAndReadBack(t *testing.T) {
	e := mustOpen(t)
	rows := []spend.Row{{"z-ai/glm-5.3", "0.6", "2.2"}, {"", "", ""}, {"ollama:qwen3:27b", "0", "$0"}}
	p, err := e.book.SavePrices(rows, spend.CapsForm{Day: "10"})
	if err != nil {
		t.Fatal(err)
	}
	// The file the person would read: the seed's shape.
	b, err := os.ReadFile(e.book.Path())
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", spend.File, err, b)
	}
	if fmt.Sprint(raw["budget"]) != "map[day:10]" || fmt.Sprint(raw["z-ai/glm-5.3"]) != "map[input:0.6 output:2.2]" {
		t.Fatalf("the file: %s", b)
	}
	l := e.book.Prices()
	if l.Problem != "" || len(l.Models) != 2 || l.Models["z-ai/glm-5.3"] != p.Models["z-ai/glm-5.3"] || *l.DayBudget != 10 {
		t.Fatalf("read back: %+v", l)
	}

	// Atomic: the new file replaces the old one by a rename, so a reader
	// holding the old one still reads it whole, and no temporary is left.
	keep := filepath.Join(t.TempDir(), "old.json")
	if err := os.Link(e.book.Path(), keep); err != nil {
		t.Fatal(err)
	}
	if _, err := e.book.SavePrices([]spend.Row{{"m", "1", "1"}}, spend.CapsForm{}); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(keep)
	if err != nil || string(old) != string(b) {
		t.Fatalf("the old file was written in place: %s", old)
	}
	entries, err := os.ReadDir(filepath.Dir(e.book.Path()))
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if strings.HasPrefix(en.Name(), "."+spend.File) {
			t.Errorf("a temporary file was left: %s", en.Name())
		}
	}
	if l := e.book.Prices(); len(l.Models) != 1 || l.DayBudget != nil {
		t.Fatalf("after the second save: %+v", l)
	}
}

func TestThePriceOfAModelIsFoundByItsReferenceOrItsId(t *testing.T) {
	p := spend.Prices{Models: map[string]spend.Price{"z-ai/glm-5.3": {Input: 1}, "ollama:qwen3:27b": {Input: 2}}}
	for ref, want := range map[string]float64{"openrouter:z-ai/glm-5.3": 1, "z-ai/glm-5.3": 1, "ollama:qwen3:27b": 2} {
		if got, ok := p.Of(ref); !ok || got.Input != want {
			t.Errorf("%s: %v %v, want %v", ref, got, ok, want)
		}
	}
	for _, ref := range []string{"qwen3:27b", "vllm:qwen3:27b", "glm-5.3"} {
		if _, ok := p.Of(ref); ok {
			t.Errorf("%s was priced", ref)
		}
	}
}

// addTask plans one task of the intent.
func (e *env) addTask(tb testing.TB, in intent.Intent, title string) intent.Task {
	tb.Helper()
	ctx := context.Background()
	task, err := e.backlog.AddTask(ctx, in.ID, plan.Task{Title: title, Priority: "medium", Labels: []string{"views"},
		EstimatedLines: 10, Risk: "normal", Reasoning: "low", Summary: "A change.",
		Criteria: []plan.Criterion{{Text: "It shows."}}, NoFailurePath: "nothing to refuse"})
	if err != nil {
		tb.Fatal(err)
	}
	return task
}

type turn struct {
	took          time.Duration
	input, output int
	partial       bool
}

// run moves a queued task through its turns as the executor would: each
// turn in progress for its duration, with a usage row when it ends, and
// the last completes it when complete is set.
func (e *env) run(tb testing.TB, in intent.Intent, task intent.Task, turns []turn, complete bool) {
	tb.Helper()
	ctx := context.Background()
	for i, tu := range turns {
		runID := fmt.Sprintf("intent-%d-%s-a%d", in.ID, task.Slug, i+1)
		if err := e.backlog.MoveTask(ctx, task.ID, intent.TaskInProgress, intent.Move{Reason: "its turn", RunID: runID, Actor: intent.ActorExecutor}); err != nil {
			tb.Fatal(err)
		}
		e.clock.Set(e.clock.Now().Add(tu.took))
		e.usage(tb, intent.Usage{Kind: intent.KindBuilder, RunID: runID, AppID: in.AppID, Model: "m", Input: tu.input, Output: tu.output, Partial: tu.partial})
		to := intent.TaskInQueue
		if i == len(turns)-1 && complete {
			to = intent.TaskCompleted
		}
		if err := e.backlog.MoveTask(ctx, task.ID, to, intent.Move{Reason: "judged", RunID: runID, Actor: intent.ActorExecutor}); err != nil {
			tb.Fatal(err)
		}
	}
}

func TestTheEstimateNeedsTwoTasksCompletedWithWholeRows(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	if _, err := e.db.Write.Exec(`INSERT INTO apps (id, name, origin, created_at) VALUES ('site', 'Site', 'template:static', 0)`); err != nil {
		t.Fatal(err)
	}
	in, err := e.backlog.OpenDraft(ctx, "site", "Change the site.", intent.Analysis{Restated: []string{"Change it."}})
	if err != nil {
		t.Fatal(err)
	}
	titles := []string{"First change", "Second change", "Third change", "Fourth change", "Fifth change"}
	tasks := make([]intent.Task, len(titles))
	for i, title := range titles {
		tasks[i] = e.addTask(t, in, title)
	}
	if err := e.backlog.Submit(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.backlog.BeginRun(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	estimate := func(left int) (spend.Estimate, bool) {
		t.Helper()
		samples, err := e.book.Samples(ctx, "site")
		if err != nil {
			t.Fatal(err)
		}
		return spend.EstimateLeft(samples, left)
	}
	if _, ok := estimate(5); ok {
		t.Fatal("an estimate with no task completed")
	}

	// One whole task: not yet.
	first := []turn{{took: 4 * time.Minute, input: 3000, output: 500}, {took: 2 * time.Minute, input: 1000, output: 100}}
	e.run(t, in, tasks[0], first, true)
	if est, ok := estimate(4); ok || est.From != 1 {
		t.Fatalf("an estimate from one task: %+v %v", est, ok)
	}
	// A task completed with a partial row does not count.
	e.run(t, in, tasks[1], []turn{{took: time.Minute, input: 10, output: 1, partial: true}, {took: time.Minute, input: 10, output: 1}}, true)
	if est, ok := estimate(3); ok || est.From != 1 {
		t.Fatalf("a partial task counted: %+v %v", est, ok)
	}
	// Nor does a task that has not completed.
	e.run(t, in, tasks[3], []turn{{took: 9 * time.Minute, input: 9000, output: 900}}, false)
	if _, ok := estimate(3); ok {
		t.Fatal("a task not completed counted")
	}
	// The second whole task: tokens and time per task, extrapolated.
	second := []turn{{took: 10 * time.Minute, input: 6000, output: 1400}}
	e.run(t, in, tasks[2], second, true)
	est, ok := estimate(2)
	if !ok || est.From != 2 {
		t.Fatalf("no estimate from two whole tasks: %+v", est)
	}
	var tokens int64
	var took time.Duration
	for _, tu := range append(first, second...) {
		tokens += int64(tu.input + tu.output)
		took += tu.took
	}
	if est.TokensPerTask != tokens/2 || est.Tokens != tokens/2*2 || est.TimePerTask != took/2 || est.Time != took {
		t.Fatalf("estimate %+v from %d tokens and %v over two tasks", est, tokens, took)
	}
}

// prices.json is kept between reads while it is the same; a save, an edit
// by hand and its removal each show on the next read, and what a reader
// changes in its prices is not in the next read.
func TestAChangeOfThePricesShowsOnTheNextRead(t *testing.T) {
	e := mustOpen(t)
	want := func(input float64, missing bool) {
		t.Helper()
		l := e.book.Prices()
		if l.Missing != missing || l.Models["m"].Input != input {
			t.Fatalf("prices %+v; want m at %v, missing %v", l, input, missing)
		}
		if l.Models != nil {
			l.Models["m"] = spend.Price{Input: 99}
			*l.DayBudget = 99
		}
	}
	want(0, true)
	if _, err := e.book.SavePrices([]spend.Row{{"m", "1", "1"}}, spend.CapsForm{Day: "5"}); err != nil {
		t.Fatal(err)
	}
	want(1, false)
	want(1, false)
	if l := e.book.Prices(); *l.DayBudget != 5 {
		t.Fatalf("a reader's budget reached the next read: %v", *l.DayBudget)
	}
	e.prices(t, `{"m": {"input": 2.5, "output": 1}, "budget": {"day": 5}}`)
	want(2.5, false)
	if err := os.Remove(e.book.Path()); err != nil {
		t.Fatal(err)
	}
	want(0, true)
}

// Today's spend is read again after every usage row, written by this
// server or by a command beside it, and after midnight: what the rail and
// the Overview show is the store as it is.
func TestTodaysSpendFollowsEveryRowAndTheDay(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	db, err := migrations.Open(e.db.Path, migrations.Intents)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	beside := intent.New(db, e.root, e.clock.Now, intent.Collaborators{Journal: request.Journal{}}).Usage
	want := func(turns int) {
		t.Helper()
		if got := e.today(t); got.Turns != turns {
			t.Fatalf("today counts %d turns, want %d", got.Turns, turns)
		}
	}
	want(0)
	e.usage(t, intent.Usage{Kind: intent.KindChat, Model: "m", Input: 100, Output: 10})
	want(1)
	if err := beside.RecordUsage(ctx, intent.Usage{Kind: intent.KindBuilder, RunID: "run-1", Model: "m", Input: 200, Output: 20}); err != nil {
		t.Fatal(err)
	}
	want(2)
	e.clock.Set(e.clock.Now().Add(10 * time.Hour)) // past midnight
	want(0)
	r, err := e.book.Days(ctx, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Days[0].Total.Turns != 2 || r.Period.Turns != 2 {
		t.Fatalf("yesterday counts %d turns and the two days %d, want 2 and 2", r.Days[0].Total.Turns, r.Period.Turns)
	}
}
