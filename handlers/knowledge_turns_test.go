package handlers_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"autoapp/knowledge"
)

// knowledgeServer is the app over a fresh intents store and a knowledge
// store the test writes to, with its owner signed in.
func knowledgeServer(t *testing.T) (*knowledge.Store, *browser) {
	t.Helper()
	s := newServer(t)
	ks := s.launcher.Knowledge
	b := s.browser(t)
	b.get("/setup")
	if r := b.post("/setup", url.Values{"name": {ownerName}, "password": {password}, "again": {password}}); r.StatusCode != fiber.StatusSeeOther {
		t.Fatalf("setup answered %d: %s", r.StatusCode, r.body)
	}
	return ks, b
}

func TestTheTurnsViewShowsWhatEachTurnDid(t *testing.T) {
	t.Parallel()
	ks, b := knowledgeServer(t)
	ctx := context.Background()
	cases := knowledge.NewCases(ks.DB(), time.Now)
	const first, second = "intent-1-0001-greet-a1", "intent-1-0001-greet-a2"
	var turns []int64
	for _, run := range []string{first, second} {
		id, err := ks.RecordTurn(ctx, knowledge.Turn{AppID: "site", RunID: run, Kind: knowledge.TurnBuilder, Instructions: "Build.",
			Request: "0001-greet: Greet", Documents: []knowledge.DeliveredDoc{{Ref: "intent:site", Text: "one task"}}})
		if err != nil {
			t.Fatal(err)
		}
		turns = append(turns, id)
	}
	steps := []error{
		cases.AppendEdit(ctx, "site", first, "source.change change acceptance/0001-greet-c1.json"),
		cases.AppendEdit(ctx, "site", first, "source.edit site/index.html"),
	}
	_, _, err := cases.Build(ctx, knowledge.BuildObserved{AppID: "site", RunID: first, ContextID: turns[0], Revision: "r1", StagesRun: []string{"check"},
		Problems: []knowledge.BuildProblem{{Stage: "check", Message: "site/index.html: the page is empty", Signature: "empty-page"}}})
	steps = append(steps, err)
	_, _, err = cases.Build(ctx, knowledge.BuildObserved{AppID: "site", RunID: second, Revision: "r2", StagesRun: []string{"check"}, OK: true})
	steps = append(steps, err)
	_, _, err = cases.Checks(ctx, knowledge.ChecksObserved{AppID: "site", RunID: second, Revision: "r2",
		Results: []knowledge.ExampleResult{{ID: "0001-greet-c1", Hash: "h1", Passed: true}}})
	steps = append(steps, err)
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}

	page := b.get("/knowledge/turns").body
	row := func(run string) string {
		at := strings.Index(page, `data-testid="turn-`+run+`"`)
		if at < 0 {
			t.Fatalf("no row for %s:\n%s", run, page)
		}
		end := strings.Index(page[at:], "</tr>")
		return page[at : at+end]
	}
	one, two := row(first), row(second)
	for _, want := range []string{"2 edits", "source.edit site/index.html", "build failed at check: site/index.html", `title="failed at check: site/index.html: the page is empty"`,
		`href="/knowledge/cases/1"`, "opened case #1"} {
		if !strings.Contains(one, want) {
			t.Errorf("the first turn's row lacks %q:\n%s", want, one)
		}
	}
	for _, want := range []string{"build passed (check)", "checks 1 of 1 passed", "resolved case #1"} {
		if !strings.Contains(two, want) {
			t.Errorf("the second turn's row lacks %q:\n%s", want, two)
		}
	}
	if strings.Contains(two, "edit") || strings.Contains(one, "resolved case") {
		t.Errorf("one turn's work is shown on the other:\n%s\n%s", one, two)
	}

	// The turn's own page lists every edit.
	detail := b.get("/knowledge/turns/1").body
	for _, want := range []string{"What it did", "source.change change acceptance/0001-greet-c1.json\nsource.edit site/index.html", "opened case #1"} {
		if !strings.Contains(detail, want) {
			t.Errorf("the turn's page lacks %q:\n%s", want, detail)
		}
	}

	// The case links back to the turn that met it.
	if c := b.get("/knowledge/cases/1").body; !strings.Contains(c, `href="/knowledge/turns/1" data-testid="case-turn"`) {
		t.Errorf("the case's page does not link its turn:\n%s", c)
	}
}

func TestTheTurnsViewSaysWhichLessonTheBudgetCut(t *testing.T) {
	t.Parallel()
	ks, b := knowledgeServer(t)
	s := b.s
	ctx := context.Background()
	const run = "intent-1-0001-greet-a1"
	var lessons []knowledge.Lesson
	for _, text := range []string{"Keep the greeting in the first paragraph.", "Say hello once, in the heading."} {
		id, err := s.launcher.Lessons.Write(ctx, text, "Bea", knowledge.Applies{})
		if err != nil {
			t.Fatal(err)
		}
		l, err := s.launcher.Lessons.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		lessons = append(lessons, l)
	}
	turn, err := ks.RecordTurn(ctx, knowledge.Turn{AppID: "site", RunID: run, Kind: knowledge.TurnBuilder, Instructions: "Build.",
		Request: "0001-greet: Greet", Documents: []knowledge.DeliveredDoc{{Ref: "lessons:site", Text: "- [lesson 1] Keep the greeting", Cut: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.launcher.Servings.Record(ctx, run, turn, []knowledge.Served{{Lesson: lessons[0], Reason: knowledge.ReasonWords}},
		[]knowledge.Served{{Lesson: lessons[1], Reason: knowledge.ReasonWords}}); err != nil {
		t.Fatal(err)
	}

	page := b.get("/knowledge/turns").body
	for _, want := range []string{`<a href="/knowledge/lessons/1" class="chip" data-testid="served">lesson 1: open</a>`, `data-testid="served">lesson 2: not included</a>`,
		`class="chip cut" title="The budget cut this lesson's line before the model read it; it is never scored."`} {
		if !strings.Contains(page, want) {
			t.Errorf("the Turns view lacks %q:\n%s", want, page)
		}
	}
	if detail := b.get("/knowledge/turns/1").body; !strings.Contains(detail, "lesson 2: not included") ||
		!strings.Contains(detail, `data-testid="turn-instructions">Instructions <code>`) || !strings.Contains(detail, "lessons served from corpus version 2") {
		t.Errorf("the turn's page does not say lesson 2 was not included, the instructions' hash and the corpus version:\n%s", detail)
	}
	if lesson := b.get("/knowledge/lessons/2").body; !strings.Contains(lesson, "to "+run+" (words): not included") {
		t.Errorf("the lesson's page does not say its serving was not included:\n%s", lesson)
	}
	// The Lessons list counts what reached a model apart from what the
	// budget cut.
	list := b.get("/knowledge/lessons").body
	for _, want := range []string{"Served 1 time<", "Served 0 times; cut by the budget from 1 more turn<"} {
		if !strings.Contains(list, want) {
			t.Errorf("the Lessons list lacks %q:\n%s", want, list)
		}
	}
}
