package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"autoapp/executor/ai/scripted"
	"autoapp/executor/build"
	"autoapp/intent"
	"autoapp/intent/workspace"
	"autoapp/knowledge"
)

// emptyPageFailure is what the static template's check stage says of an
// empty site/index.html.
const emptyPageFailure = "stage check exited with status 1 and printed nothing"

// replayLesson is the lesson a replayable case taught.
const replayLesson = "Keep the home page whole: the check stage fails when the page is empty."

// replayable is a build case of notes that a task's turn met when it
// emptied the home page (at the workspace's revision), with the lesson it
// taught; the intent whose task met it is stopped, and can run again.
func (s *server) replayable(t *testing.T) (in intent.Intent, caseID, lessonID int64) {
	t.Helper()
	ctx := context.Background()
	in, tasks := s.submitted(t, "Change the page")
	s.moveIntent(t, in.ID, intent.IntentRunning)
	s.moveTask(t, tasks[0].ID, intent.TaskInQueue, intent.TaskInProgress, intent.TaskInterrupted)
	s.moveIntent(t, in.ID, intent.IntentStopped)
	ws, err := workspace.Open(s.apps.WorkspaceDir(appID), s.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	head, err := ws.Head(ctx)
	ws.Close()
	if err != nil {
		t.Fatal(err)
	}
	caseID = s.openCase(t, "run-"+fmt.Sprint(s.runs), head, "check", emptyPageFailure)
	if lessonID, err = s.launcher.Lessons.Add(ctx, knowledge.Lesson{CaseID: caseID, Text: replayLesson, Applies: knowledge.Applies{Stage: "check"}}); err != nil {
		t.Fatal(err)
	}
	return in, caseID, lessonID
}

// openCase records a failed build of notes by run at revision, as the
// candidate's observer does, and answers the case it opened.
func (s *server) openCase(t *testing.T, run, revision, stage, message string) int64 {
	t.Helper()
	opened, _, err := s.launcher.Cases.Build(context.Background(), knowledge.BuildObserved{AppID: appID, RunID: run, Revision: revision,
		Request: "0001-change-the-page: Change the page", Model: "scripted:builder", ServerVersion: "test", StagesRun: []string{stage},
		Problems: []knowledge.BuildProblem{{Stage: stage, Message: message, Signature: build.Signature(stage, message)}}})
	if err != nil || len(opened) != 1 {
		t.Fatalf("a failed build opened %v, %v", opened, err)
	}
	return opened[0]
}

// scriptArms scripts the page's replay, three runs an arm: given the
// lesson, a run keeps the page whole; without it, it empties it again.
// first, when set, runs before the first run's first answer.
func scriptArms(model *scripted.Server, first func()) {
	page := func(content string) scripted.Reply {
		args, _ := json.Marshal(map[string]any{"files": []map[string]string{{"path": "site/index.html", "action": "overwrite", "content": content}}})
		return scripted.Reply{ToolCalls: []scripted.Call{{Name: "source_change", Args: string(args)}}}
	}
	cycle := scripted.Reply{ToolCalls: []scripted.Call{{Name: "candidate_cycle", Args: `{}`}}}
	done := scripted.Reply{Text: "Done."}
	var with, without []scripted.Reply
	for range 3 {
		with = append(with, page("<h1>Notes</h1>\n<p>Tags soon.</p>\n"), cycle, done)
		without = append(without, page(""), cycle, done)
	}
	with[0].Before = first
	model.On(scripted.Mentions(replayLesson), with...)
	model.On(scripted.Any(), without...)
}

func lessonPath(id int64) string { return fmt.Sprintf("/knowledge/lessons/%d", id) }

// replayLive is the polled part of a lesson's page.
func replayLive(t testing.TB, b *browser, lessonID int64) *response {
	t.Helper()
	r := b.get(lessonPath(lessonID)+"/replay", "HX-Request", "true")
	wantStatus(t, r, fiber.StatusOK)
	return r
}

// wantReplayPolling checks the replay's live part asks again every two
// seconds, or renders without the trigger so the polling stops.
func wantReplayPolling(t testing.TB, r *response, lessonID int64, want bool) {
	t.Helper()
	live := element(t, r, `<div id="replay-live"`, ">")
	polls := strings.Contains(live, `hx-trigger="every 2s"`) && strings.Contains(live, `hx-get="`+lessonPath(lessonID)+`/replay"`)
	flag := strings.Contains(live, `data-polling="true"`)
	if polls != want || flag != want {
		t.Fatalf("the live part %s; want polling %v", live, want)
	}
	if !want && strings.Contains(r.body, "hx-trigger") {
		t.Fatal("a trigger is left elsewhere, so something still polls")
	}
}

// wantMarkup checks a part of a page holds the markup given.
func wantMarkup(t testing.TB, part, markup string) {
	t.Helper()
	if !strings.Contains(part, markup) {
		t.Fatalf("%s holds no %s", part, markup)
	}
}

func TestTheLessonPageSaysWhatAReplayWillSpendBeforeItRuns(t *testing.T) {
	t.Parallel()
	s, ada := withApp(t)
	ctx := context.Background()
	_, caseID, lessonID := s.replayable(t)

	r := ada.get(lessonPath(lessonID))
	wantStatus(t, r, fiber.StatusOK)
	wantWithin(t, element(t, r, `data-testid="replay-none"`, "</p>"), "No replay has been run.")
	wantWithin(t, element(t, r, `data-testid="replay-spend"`, "</p>"), fmt.Sprintf(
		"Replay lesson %d on case #%d? It spends 6 turns of the engineer: 3 with the lesson and 3 without it, interleaved, each from the revision the failure was met at. No other resolved case of notes has a confirmed lesson, so there is no regression set.",
		lessonID, caseID))
	// The confirmation shows that there is no replay to confirm on, and still confirms.
	wantWithin(t, element(t, r, `data-testid="confirm-no-replay"`, "</p>"), "No replay has been run; replay it first, or confirm it on other evidence you have.")
	if strings.Contains(r.body, "hx-trigger") {
		t.Fatal("the page polls while no replay goes")
	}

	t.Run("the regression set adds a turn a case", func(t *testing.T) {
		// Another case of notes, resolved, whose lesson a person confirmed.
		other := s.openCase(t, "run-1", "", "lint", "index.html:3: a heading is missing")
		if _, _, err := s.launcher.Cases.Build(ctx, knowledge.BuildObserved{AppID: appID, RunID: "run-1", StagesRun: []string{"lint"}, OK: true}); err != nil {
			t.Fatal(err)
		}
		id, err := s.launcher.Lessons.Add(ctx, knowledge.Lesson{CaseID: other, Text: "Give every page one heading."})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.launcher.Lessons.Confirm(ctx, id, "Bea"); err != nil {
			t.Fatal(err)
		}
		r := ada.get(lessonPath(lessonID))
		wantWithin(t, element(t, r, `data-testid="replay-spend"`, "</p>"),
			"It spends 7 turns of the engineer: 3 with the lesson and 3 without it, interleaved, each from the revision the failure was met at, then 1 for the regression set: the other resolved case of notes whose lesson is confirmed.")
	})

	t.Run("confirm still works with no replay", func(t *testing.T) {
		wantRedirect(t, ada.post(lessonPath(lessonID)+"/confirm", map[string][]string{"by": {"Cy"}, "from": {"lesson"}}), lessonPath(lessonID))
		if l, err := s.launcher.Lessons.Get(ctx, lessonID); err != nil || l.Status != knowledge.LessonConfirmed || l.ConfirmedBy != "Cy" {
			t.Fatalf("after confirming: %+v %v", l, err)
		}
	})

	t.Run("a lesson written by hand is not replayed from the page", func(t *testing.T) {
		id, err := s.launcher.Lessons.Write(ctx, "Keep the greeting in the first paragraph.", "Bea", knowledge.Applies{})
		if err != nil {
			t.Fatal(err)
		}
		r := ada.get(lessonPath(id))
		wantWithin(t, element(t, r, `data-testid="replay-cannot"`, "</p>"), fmt.Sprintf("Lesson %d was written by hand and comes from no case", id))
		if strings.Contains(r.body, `data-testid="replay-confirm"`) {
			t.Fatal("the page offers to replay a lesson written by hand")
		}
		r = ada.post(lessonPath(id)+"/replay", nil)
		wantStatus(t, r, fiber.StatusConflict)
		wantWithin(t, element(t, r, `data-testid="refusal-replay"`, "</p>"), "was written by hand and comes from no case")
	})
}

func TestReplayIsRefusedWhileARunGoes(t *testing.T) {
	t.Parallel()
	s, ada := withApp(t)
	_, _, lessonID := s.replayable(t)
	in, g := running(t, s, ada)
	defer g.Open()

	r := ada.post(lessonPath(lessonID)+"/replay", nil)
	wantStatus(t, r, fiber.StatusConflict)
	wantWithin(t, element(t, r, `data-testid="refusal-replay"`, "</p>"),
		fmt.Sprintf("Intent #%d is running; a replay can start once it ends, or once you stop it.", in.ID))
	wantReplayPolling(t, replayLive(t, ada, lessonID), lessonID, false)
	wantRedirect(t, ada.post(intentPath(in.ID)+"/stop", nil), intentPath(in.ID))
}

func TestAReplayFromThePageIsFollowedUntilItsTableShows(t *testing.T) {
	t.Parallel()
	s, ada := withApp(t)
	model := withModel(t, s)
	stopped, caseID, lessonID := s.replayable(t)
	g := scripted.NewGate(t)
	scriptArms(model, g.Hold)

	began := time.Now()
	wantRedirect(t, ada.post(lessonPath(lessonID)+"/replay", nil), lessonPath(lessonID))
	if took := time.Since(began); took > 5*time.Second {
		t.Fatalf("Replay answered after %s, want at once", took)
	}
	g.Wait(t)

	// While it goes, the live part says so and polls; nothing else can start.
	r := replayLive(t, ada, lessonID)
	wantReplayPolling(t, r, lessonID, true)
	wantWithin(t, element(t, r, `data-testid="replay-now"`, "</span>"), "Now: run 1 of 6, with the lesson.")
	if strings.Contains(r.body, `data-testid="replay-confirm"`) {
		t.Fatal("Replay this lesson is offered while the replay goes")
	}
	going := fmt.Sprintf("A replay of lesson %d is going", lessonID)
	r = ada.post(lessonPath(lessonID)+"/replay", nil)
	wantStatus(t, r, fiber.StatusConflict)
	wantSentence(t, r, going+"; one replay or comparison of models runs at a time, so wait for it to end.")
	r = ada.post(intentPath(stopped.ID)+"/run", nil)
	wantStatus(t, r, fiber.StatusConflict)
	wantWithin(t, element(t, r, `data-testid="refusal-run"`, "</p>"), going+"; an intent can run once it ends.")

	// Once it ends, the live part shows the table and stops polling; the
	// confirmation's copy of the table comes with it.
	g.Open()
	deadline := time.Now().Add(90 * time.Second)
	for {
		r = replayLive(t, ada, lessonID)
		if strings.Contains(r.body, `data-polling="false"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replay never ended: %.3000s", r.body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	wantReplayPolling(t, r, lessonID, false)
	with := element(t, r, `data-testid="arm-with"`, "</tr>")
	wantMarkup(t, with, "<td>3</td><td>3</td>")
	wantWithin(t, with, "The lesson helped: with it 3 of 3 runs passed, without it 0 of 3.")
	wantMarkup(t, element(t, r, `data-testid="arm-without"`, "</tr>"), "<td>3</td><td>0</td>")
	wantWithin(t, element(t, r, fmt.Sprintf(`data-testid="replay-run-replay-%d-without-3"`, caseID), "</tr>"),
		"failed again with the case's failure: "+emptyPageFailure)
	wantWithin(t, element(t, r, `data-testid="replay-regression"`, "</p>"), "Regression: no other resolved case of notes has a confirmed lesson.")
	wantMarkup(t, element(t, r, `<div id="confirm-evidence"`, ">"), `hx-swap-oob="true"`)
	wantWithin(t, element(t, r, `data-testid="confirm-evidence"`, "</table>"), "The lesson helped")

	// The page opened anew shows the same table in the confirmation.
	page := ada.get(lessonPath(lessonID) + "?confirm=1")
	wantMarkup(t, element(t, page, `<details class="confirm" id="confirm"`, ">"), " open")
	wantWithin(t, element(t, page, `data-testid="confirm-evidence"`, "</table>"), "The lesson helped: with it 3 of 3 runs passed, without it 0 of 3.")
}
