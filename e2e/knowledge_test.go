package e2e

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/playwright-community/playwright-go"

	"autoapp/executor/ai/scripted"
	"autoapp/intent/plan"
)

// lessonText is what the distiller learns from the greeting task's failed
// check.
const lessonText = "Make the page say what an example expects before cycling, or the check fails."

// TestKnowledgeLearnsFromAFailureAndTheOwnerConfirmsItOnAReplay runs a task
// whose first attempt writes an example the page does not pass yet (a case
// opens) and whose second attempt repairs it (the case is resolved); the
// distiller draws a provisional lesson. The owner opens it in the
// Knowledge page, replays it there (the engineer given the lesson makes
// the page say it, without it does nothing), follows the replay until its
// table shows, and confirms the lesson with that table in front of them.
func TestKnowledgeLearnsFromAFailureAndTheOwnerConfirmsItOnAReplay(t *testing.T) {
	s, model, page := signedInWithModel(t, "engineer")

	in := planFor(t, s, "Greet notes readers.", plan.Task{Title: "Greet the readers", Priority: "high", Labels: []string{"copy"},
		EstimatedLines: 5, Risk: "normal", Reasoning: "low", Summary: "A greeting.",
		Criteria: []plan.Criterion{{Text: "The home page says Hello notes"}}, NoFailurePath: "a static page refuses nothing"})

	prefix := "intent-" + strconv.FormatInt(in.ID, 10) + "-0001-greet-the-readers-a"
	sayHello := scripted.Reply{ToolCalls: []scripted.Call{edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p>Hello notes</p>")}}
	model.On(scripted.RunID(prefix+"1"),
		scripted.Reply{ToolCalls: []scripted.Call{change("acceptance/0001-greet-the-readers-c1.json", example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "The example is written."})
	model.On(scripted.RunID(prefix+"2"),
		sayHello,
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "The page says Hello notes now."})
	model.On(scripted.Contains("You are the distiller of Autoapp"),
		scripted.Reply{Text: `{"explanation": "The example expected text the page did not have yet.", "knowable": "lesson", "lesson": "` + lessonText + `", "same_as": 0}`})

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
	// The distiller was asked about it as the turn ended: done, and the
	// lesson it drew is linked.
	must(t, expect.Locator(cases.GetByTestId("case-distill")).ToContainText("done"))
	must(t, expect.Locator(cases.GetByTestId("case-lesson")).ToHaveText("lesson 1"))
	_, err = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "knowledge-cases.png")), FullPage: playwright.Bool(true)})
	must(t, err)

	// The provisional lesson, opened from the list: nothing has replayed it.
	must(t, page.GetByTestId("tab-lessons").Click())
	lesson := page.Locator("section.lesson").First()
	must(t, expect.Locator(lesson).ToContainText("Make the page say what an example expects before cycling"))
	must(t, expect.Locator(lesson.GetByTestId("lesson-status")).ToHaveText("provisional"))
	must(t, page.GetByTestId("reviewing-as").Fill("Ada the reviewer"))
	must(t, lesson.GetByTestId("open-lesson").Click())
	must(t, expect.Locator(page.GetByTestId("replay-none")).ToHaveText("No replay has been run."))

	// Replay this lesson asks first, saying what it spends; given the
	// lesson, the engineer makes the page say it, and without it does nothing.
	// The first run waits on the model until the page has seen it go.
	gate := scripted.NewGate(t)
	var with []scripted.Reply
	for range 3 {
		with = append(with, sayHello, scripted.Reply{ToolCalls: []scripted.Call{cycle}}, scripted.Reply{Text: "Done."})
	}
	with[0].Before = gate.Hold
	model.On(scripted.Mentions(lessonText), with...)
	model.On(scripted.Any(), scripted.Reply{Text: "Nothing to do."}, scripted.Reply{Text: "Nothing to do."}, scripted.Reply{Text: "Nothing to do."})
	replay := page.GetByTestId("replay")
	must(t, replay.Locator("summary").Click())
	must(t, expect.Locator(replay.GetByTestId("replay-spend")).ToContainText("It spends 6 turns of the engineer: 3 with the lesson and 3 without it"))
	accessible(t, page, "knowledge-lesson-replay-asks")
	must(t, replay.GetByTestId("replay-confirm").Click())

	// It goes in the background; the page follows it, and the table shows
	// when it ends, without a reload.
	gate.Wait(t)
	must(t, expect.Locator(page.GetByTestId("replay-now")).ToHaveText("Now: run 1 of 6, with the lesson."))
	must(t, expect.Locator(page.GetByTestId("replay-live")).ToHaveAttribute("data-polling", "true"))
	_, err = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "knowledge-lesson-replay-going.png")), FullPage: playwright.Bool(true)})
	must(t, err)
	_, err = page.Evaluate(`() => { window.autoappSamePage = true; }`)
	must(t, err)
	gate.Open()
	must(t, expect.Locator(page.GetByTestId("replay-live")).ToHaveAttribute("data-polling", "false", playwright.LocatorAssertionsToHaveAttributeOptions{Timeout: playwright.Float(120000)}))
	same, err := page.Evaluate(`() => window.autoappSamePage === true`)
	must(t, err)
	if same != true {
		t.Fatal("the page was reloaded to show the replay's table")
	}
	live := page.GetByTestId("replay-live")
	arms := live.GetByTestId("replay-arms")
	// Runs and passed of each arm; the verdict is the cell beside them.
	must(t, expect.Locator(arms.GetByTestId("arm-with").Locator("td:not([data-testid])")).ToHaveText([]string{"3", "3"}))
	must(t, expect.Locator(arms.GetByTestId("arm-without").Locator("td")).ToHaveText([]string{"3", "0"}))
	must(t, expect.Locator(live.GetByTestId("replay-verdict")).ToContainText("The lesson helped: with it 3 of 3 runs passed, without it 0 of 3."))
	must(t, expect.Locator(live.GetByTestId("replay-runs").Locator("tbody tr")).ToHaveCount(6))
	must(t, expect.Locator(live.GetByTestId("replay-regression")).ToHaveText("Regression: no other resolved case of site has a confirmed lesson."))
	accessibleWideAndNarrow(t, page, "knowledge-lesson-replayed")

	// Confirm shows the same table first; the reviewer named confirms it.
	confirm := page.GetByTestId("confirm")
	must(t, confirm.Locator("summary").Click())
	must(t, expect.Locator(confirm.GetByTestId("replay-verdict")).ToContainText("The lesson helped"))
	_, err = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "knowledge-lesson-confirm.png")), FullPage: playwright.Bool(true)})
	must(t, err)
	must(t, confirm.GetByTestId("confirm-yes").Click())
	lesson = page.Locator("section.lesson").First()
	must(t, expect.Locator(lesson.GetByTestId("lesson-status")).ToHaveText("confirmed"))
	must(t, expect.Locator(lesson).ToContainText("confirmed by Ada the reviewer"))
	// Its page says when it entered the index, and that no turn was
	// served it yet (a replay writes no serving).
	must(t, expect.Locator(page.GetByTestId("lesson-counts")).ToHaveCount(0))
	must(t, expect.Locator(page.GetByTestId("lesson-index")).ToHaveText("In the index since corpus version 1."))
	must(t, expect.Locator(page.GetByTestId("lesson-versions").Locator("li")).ToHaveCount(2))
	must(t, expect.Locator(page.GetByTestId("lesson-versions")).ToContainText("Lesson 1 was confirmed by Ada the reviewer."))
	_, err = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(shots(t), "knowledge-lesson-counts.png")), FullPage: playwright.Bool(true)})
	must(t, err)

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
