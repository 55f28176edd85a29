package e2e

import (
	"strconv"
	"testing"

	"github.com/playwright-community/playwright-go"

	"autoapp/executor/ai/scripted"
	"autoapp/intent/plan"
)

// TestKnowledgeLearnsFromAFailureTheNextAttemptRepairs runs a task whose first
// attempt writes an example the page does not pass yet (a case opens) and
// whose second attempt repairs it (the case is resolved); the distiller
// draws a provisional lesson, which the owner sees and confirms in the
// Knowledge page.
func TestKnowledgeLearnsFromAFailureTheNextAttemptRepairs(t *testing.T) {
	s, model, page := signedInWithModel(t, "engineer")

	in := planFor(t, s, "Greet notes readers.", plan.Task{Title: "Greet the readers", Priority: "high", Labels: []string{"copy"},
		EstimatedLines: 5, Risk: "normal", Reasoning: "low", Summary: "A greeting.",
		Criteria: []plan.Criterion{{Text: "The home page says Hello notes"}}, NoFailurePath: "a static page refuses nothing"})

	prefix := "intent-" + strconv.FormatInt(in.ID, 10) + "-0001-greet-the-readers-a"
	model.On(scripted.RunID(prefix+"1"),
		scripted.Reply{ToolCalls: []scripted.Call{change("acceptance/0001-greet-the-readers-c1.json", example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "The example is written."})
	model.On(scripted.RunID(prefix+"2"),
		scripted.Reply{ToolCalls: []scripted.Call{edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p>Hello notes</p>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "The page says Hello notes now."})
	model.On(scripted.Contains("You are the distiller of Autoapp"),
		scripted.Reply{Text: `{"explanation": "The example expected text the page did not have yet.", "knowable": "lesson", "lesson": "Make the page say what an example expects before cycling, or the check fails.", "same_as": 0}`})

	_, err := page.Goto(s.URL + "/backlog/intents/" + strconv.FormatInt(in.ID, 10))
	must(t, err)
	must(t, page.GetByTestId("run").Locator("summary").Click())
	must(t, page.GetByTestId("run-confirm").Click())
	must(t, expect.Locator(page.GetByTestId("intent-status")).ToContainText("done", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(60000)}))

	// The case: opened by the first attempt, resolved by the second.
	_, err = page.Goto(s.URL + "/knowledge/cases")
	must(t, err)
	cases := page.GetByTestId("cases")
	must(t, expect.Locator(cases).ToContainText("0001-greet-the-readers-c1"))
	must(t, expect.Locator(cases).ToContainText(prefix+"1"))
	must(t, expect.Locator(cases.GetByTestId("case-resolved")).ToHaveCount(1))
	must(t, expect.Locator(cases).ToContainText(prefix+"2"))

	// The provisional lesson, confirmed through the page by the reviewer named.
	must(t, page.GetByTestId("tab-lessons").Click())
	lesson := page.Locator("section.lesson").First()
	must(t, expect.Locator(lesson).ToContainText("Make the page say what an example expects before cycling"))
	must(t, expect.Locator(lesson.GetByTestId("lesson-status")).ToHaveText("provisional"))
	must(t, page.GetByTestId("reviewing-as").Fill("Ada the reviewer"))
	must(t, lesson.GetByTestId("confirm-lesson").Click())
	lesson = page.Locator("section.lesson").First()
	must(t, expect.Locator(lesson.GetByTestId("lesson-status")).ToHaveText("confirmed"))
	must(t, expect.Locator(lesson).ToContainText("confirmed by Ada the reviewer"))

	// The Turns: each attempt's row says what it did; the first opened the
	// case, the second resolved it.
	must(t, page.GetByTestId("tab-turns").Click())
	first := page.GetByTestId("turn-" + prefix + "1").GetByTestId("turn-work")
	must(t, expect.Locator(first.GetByTestId("work-edit")).ToHaveText("1 edit"))
	must(t, expect.Locator(first.GetByTestId("work-build")).ToContainText("build passed"))
	must(t, expect.Locator(first.GetByTestId("work-checks")).ToContainText("failed: 0001-greet-the-readers-c1"))
	must(t, expect.Locator(first.GetByTestId("work-opened")).ToContainText("opened case #"))
	second := page.GetByTestId("turn-" + prefix + "2").GetByTestId("turn-work")
	must(t, expect.Locator(second.GetByTestId("work-checks")).ToContainText("passed"))
	must(t, second.GetByTestId("work-resolved").Click())
	must(t, expect.Locator(page.GetByTestId("case")).ToContainText("0001-greet-the-readers-c1"))
	// The case names the turn it was met in, whose row says it opened it.
	must(t, page.GetByTestId("case-turn").Click())
	must(t, expect.Locator(page.GetByTestId("turn-work")).ToContainText("opened case #"))
}
