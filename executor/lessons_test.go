package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"autoapp/executor"
	"autoapp/executor/ai/scripted"
	"autoapp/intent"
	"autoapp/knowledge"
)

// lessonHost is a host whose builder turns are given the lessons of a
// knowledge store, record their contexts and servings, and whose builds and
// checks close them.
type lessonHost struct {
	*host
	store    *knowledge.Store
	lessons  *knowledge.Lessons
	servings *knowledge.Servings
}

func newLessonHost(t *testing.T) *lessonHost {
	t.Helper()
	h := newHost(t)
	return &lessonHost{host: h, store: h.launcher.Knowledge, lessons: h.launcher.Lessons, servings: h.launcher.Servings}
}

// runHeading runs the heading task to completion and answers its run id.
func (lh *lessonHost) runHeading(t *testing.T) string {
	t.Helper()
	id := lh.plan(t, heading())
	run := runID(id, "0001-change-the-heading", 1)
	lh.model.On(scripted.RunID(run),
		scripted.Reply{ToolCalls: []scripted.Call{change("acceptance/0001-change-the-heading-c1.json",
			example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{edit("site/index.html", "<h1>A new site</h1>", "<h1>A new site</h1>\n    <p>Hello notes</p>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	if err := lh.exec.Start(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if d := lh.wait(t, id); d.Status != intent.IntentDone {
		t.Fatalf("intent %s (%s)", d.Status, d.StopReason)
	}
	return run
}

// headingMendedByAnEdit scripts the first attempt of intent id's heading
// task: its example fails the first check (a case opens), an edit of
// site/index.html mends it (the case is resolved), and the distiller
// draws a lesson from it.
func (lh *lessonHost) headingMendedByAnEdit(id int64) {
	lh.model.On(scripted.Contains(distillAsked), scripted.Reply{Text: `{"explanation":"The check failed until the greeting was added.",` +
		`"knowable":"lesson","lesson":"Keep the greeting markup whole when rewriting.","same_as":0}`})
	first := runID(id, headingSlug, 1)
	lh.model.On(scripted.RunID(first),
		scripted.Reply{ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{ToolCalls: []scripted.Call{addLine("Hello notes")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
}

// documentsOf is the documents block the turn's first request carried.
func documentsOf(t *testing.T, h *host, run string) string {
	t.Helper()
	reqs := turnRequests(h, run)
	if len(reqs) == 0 {
		t.Fatalf("the model heard nothing of %s", run)
	}
	for _, m := range reqs[0].Messages {
		if m.Role == "user" && strings.Contains(m.Content, "<document ref=") {
			return m.Content
		}
	}
	return ""
}

func TestABuilderTurnIsGivenItsLessonsAndTheirServingsAreClosed(t *testing.T) {
	ctx := context.Background()
	lh := newLessonHost(t)
	// Shares "home", "page" and "greets" with the task; the other shares
	// one word only and is not given.
	lesson, err := lh.lessons.Write(ctx, "The home page greets readers from site/index.html; keep its heading there.", "ann", knowledge.Applies{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lh.lessons.Write(ctx, "A tags filter needs an index on the notes column.", "ann", knowledge.Applies{}); err != nil {
		t.Fatal(err)
	}
	run := lh.runHeading(t)

	docs := documentsOf(t, lh.host, run)
	at := strings.Index(docs, `<document ref="lessons:site"`)
	if at < 0 || !strings.Contains(docs, "- [lesson 1] The home page greets readers") || strings.Contains(docs, "[lesson 2]") {
		t.Fatalf("the turn's documents:\n%s", docs)
	}
	if in, ev := strings.Index(docs, `<document ref="intent:site"`), strings.Index(docs, `<document ref="evidence:site"`); in < 0 || ev < in || at < ev {
		t.Fatalf("the lessons document does not come last, after the intent and the evidence:\n%s", docs)
	}

	got, err := lh.servings.ForRun(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	turns, err := lh.store.Turns(ctx, knowledge.TurnQuery{AppID: "site"})
	if err != nil || len(turns) != 1 {
		t.Fatalf("turns: %+v %v", turns, err)
	}
	// A lesson naming no stage or signature: the turn's first build says
	// nothing about it.
	if len(got) != 1 || got[0].LessonID != lesson || got[0].Reason != knowledge.ReasonWords || got[0].ContextID != turns[0].ID ||
		got[0].Outcome != knowledge.OutcomeInconclusive || got[0].ClosedByRun != run {
		t.Fatalf("servings: %+v", got)
	}
}

func TestTaskContextTurnsTheLessonsOff(t *testing.T) {
	ctx := context.Background()
	lh := newLessonHost(t)
	if _, err := lh.lessons.Write(ctx, "The home page greets readers from site/index.html; keep its heading there.", "ann", knowledge.Applies{}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(lh.root, "launcher", executor.TaskContextFile)
	if err := os.WriteFile(path, []byte(`{"attempts": false, "lessons": false}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := lh.runHeading(t)
	if docs := documentsOf(t, lh.host, run); strings.Contains(docs, "lessons:site") || !strings.Contains(docs, "intent:site") {
		t.Fatalf("the turn's documents:\n%s", docs)
	}
	if got, err := lh.servings.ForRun(ctx, run); err != nil || len(got) != 0 {
		t.Fatalf("servings: %+v %v", got, err)
	}
}

// overwrite writes site/index.html whole.
func overwrite(content string) scripted.Call {
	args, _ := json.Marshal(map[string]any{"files": []map[string]string{{"path": "site/index.html", "action": "overwrite", "content": content}}})
	return scripted.Call{Name: "source_change", Args: string(args)}
}

func TestAFailedBuildCarriesItsHintsAndOpensACaseWithTheRequestAndModel(t *testing.T) {
	ctx := context.Background()
	lh := newLessonHost(t)
	cases := lh.launcher.Cases
	hint, err := lh.lessons.Write(ctx, "The check stage fails when site/index.html is empty: keep the page whole.", "ann", knowledge.Applies{Stage: "check"})
	if err != nil {
		t.Fatal(err)
	}
	// Shares the same words, but names another stage: never a hint.
	if _, err := lh.lessons.Write(ctx, "The compile stage fails when a check is empty.", "ann", knowledge.Applies{Stage: "compile"}); err != nil {
		t.Fatal(err)
	}
	id := lh.plan(t, heading())
	run := runID(id, "0001-change-the-heading", 1)
	lh.model.On(scripted.RunID(run),
		scripted.Reply{ToolCalls: []scripted.Call{change("acceptance/0001-change-the-heading-c1.json",
			example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{ToolCalls: []scripted.Call{overwrite("")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{ToolCalls: []scripted.Call{overwrite("<h1>A new site</h1>\n<p>Hello notes</p>\n")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	if err := lh.exec.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	if d := lh.wait(t, id); d.Status != intent.IntentDone {
		t.Fatalf("intent %s (%s)", d.Status, d.StopReason)
	}

	// The model read the hint in the failed build's answer, and only there.
	reqs := turnRequests(lh.host, run)
	line := fmt.Sprintf("hint %d: The check stage fails", hint)
	heard := -1
	for i, r := range reqs {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, line) && strings.Contains(m.Content, "knowledge.show") {
				heard = i
			}
			if strings.Contains(m.Content, "The compile stage fails") {
				t.Fatalf("a lesson of another stage was hinted: %s", m.Content)
			}
		}
		if heard >= 0 {
			break
		}
	}
	if heard != 4 {
		t.Fatalf("the hint was first heard in request %d of %d, want 4 (after the failed build)", heard, len(reqs))
	}

	// One serving, as a hint, closed by the build that passed.
	got, err := lh.servings.ForRun(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].LessonID != hint || got[0].Reason != knowledge.ReasonHint || got[0].Outcome != knowledge.OutcomeResolved {
		t.Fatalf("servings: %+v", got)
	}

	// The build case records the turn's request and model, and the
	// revision the previous build built.
	all, err := cases.List(ctx, knowledge.CaseQuery{AppID: "site"})
	if err != nil {
		t.Fatal(err)
	}
	var build *knowledge.Case
	for i := range all {
		if all[i].Kind == knowledge.CaseBuild {
			build = &all[i]
		}
	}
	if build == nil {
		t.Fatalf("no build case among %+v", all)
	}
	if build.Request != "0001-change-the-heading: Change the heading" || build.Model != "scripted:builder" ||
		build.OpenedRunID != run || !build.Resolved() {
		t.Fatalf("build case: request %q model %q run %q resolved %v", build.Request, build.Model, build.OpenedRunID, build.Resolved())
	}
	st, err := lh.cands.State("site")
	if err != nil {
		t.Fatal(err)
	}
	if build.RevisionBefore == "" || build.RevisionBefore == build.ResolvedRevision || build.RevisionBefore == st.Build.Revision {
		t.Fatalf("revision before %q, resolved at %q, last built %q", build.RevisionBefore, build.ResolvedRevision, st.Build.Revision)
	}
}

func TestADistilledLessonIsRelatedToATaskThatLocksAFileItsCaseEdited(t *testing.T) {
	ctx := context.Background()
	lh := newLessonHost(t)
	// The distiller learns a lesson from the heading's check case; it
	// shares no two words with the about page's task.
	second := about()
	second.Locks = []string{"site/index.html"}
	id := lh.plan(t, heading(), second)
	// The first check fails, the edit to site/index.html mends it: a case
	// opened and resolved, whose window edited that file.
	lh.headingMendedByAnEdit(id)
	next := runID(id, aboutSlug, 1)
	lh.model.On(scripted.RunID(next),
		scripted.Reply{ToolCalls: []scripted.Call{
			change("acceptance/0002-add-an-about-page-c1.json", example("The about page says About notes", "/about.html", "About notes")),
			change("site/about.html", "<!DOCTYPE html><title>About</title><h1>About notes</h1>")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	if err := lh.exec.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	if d := lh.wait(t, id); d.Status != intent.IntentDone {
		t.Fatalf("intent %s (%s)", d.Status, d.StopReason)
	}

	lessons, err := lh.lessons.List(ctx, knowledge.LessonQuery{})
	if err != nil || len(lessons) != 1 {
		t.Fatalf("lessons %+v %v", lessons, err)
	}
	l := lessons[0]
	if l.Origin != knowledge.OriginDistilled || len(l.Applies.Files) != 1 || l.Applies.Files[0] != "site/index.html" {
		t.Fatalf("the distilled lesson applies to %+v, want the file its case's edits touched", l.Applies)
	}

	// The about page's task locks that file: it is given the lesson as
	// related, and the serving says through which file.
	line := fmt.Sprintf("- [lesson %d] Keep the greeting markup whole when rewriting. (provisional)", l.ID)
	if docs := documentsOf(t, lh.host, next); !strings.Contains(docs, line) {
		t.Fatalf("the about task's documents lack %q:\n%s", line, docs)
	}
	got, err := lh.servings.ForRun(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].LessonID != l.ID || got[0].Reason != knowledge.ReasonRelated || got[0].RelatedFile != "site/index.html" {
		t.Fatalf("servings of the about task: %+v", got)
	}
}

// The distiller is shown, as they were kept and never read from the
// workspace, the instructions and every document the turn that met the
// failure was given, the acceptance example's steps, the edits with how
// each hunk matched, both revisions and releases, and the application's
// events while the case was open.
func TestTheDistillerIsShownTheTurnThatMetTheFailureAsItWas(t *testing.T) {
	ctx := context.Background()
	lh := newLessonHost(t)
	id := lh.plan(t, heading())
	lh.headingMendedByAnEdit(id)
	if err := lh.exec.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	if d := lh.wait(t, id); d.Status != intent.IntentDone {
		t.Fatalf("intent %s (%s)", d.Status, d.StopReason)
	}
	var asked string
	for _, r := range lh.model.Requests() {
		for _, m := range r.Messages {
			if m.Role == "system" && strings.Contains(m.Content, distillAsked) {
				asked = r.Messages[len(r.Messages)-1].Content
			}
		}
	}
	if asked == "" {
		t.Fatal("the distiller was not asked")
	}
	cases, err := lh.launcher.Cases.List(ctx, knowledge.CaseQuery{})
	if err != nil || len(cases) != 1 {
		t.Fatalf("cases %+v %v", cases, err)
	}
	c := cases[0]
	turn, docs, err := lh.store.Turn(ctx, c.ContextID)
	if err != nil || len(docs) == 0 {
		t.Fatalf("the case's turn %+v, %d documents, %v", turn, len(docs), err)
	}
	instructions, err := lh.store.Blob(ctx, turn.InstructionsHash)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		// The instructions and every document, exactly as delivered.
		instructions,
		// The acceptance example's steps, as they were run.
		`"path": "/"`, `"Hello notes"`,
		// The edits, with how each hunk matched.
		`hunk 1 matched site/index.html:`, `exactly once: find "<h1>A new site</h1>" replace "<h1>A new site</h1>\n <p>Hello notes</p>"`,
		// Both revisions and releases.
		"before the repair: revision " + c.RevisionBefore, "after it: revision " + c.ResolvedRevision,
		// The application's events while the case was open.
		"The last events of site while the case was open",
		fmt.Sprintf("corpus version %d", c.CorpusVersion),
	}
	for _, d := range docs {
		want = append(want, fmt.Sprintf("Document %s", d.Ref), d.Text)
	}
	for _, w := range want {
		if !strings.Contains(asked, w) {
			t.Errorf("the distiller's question lacks %q", w)
		}
	}
	if t.Failed() {
		t.Logf("the question:\n%s", asked)
	}
	if c.ExampleSteps == "" || c.ResolvedRelease == "" {
		t.Errorf("the case keeps no example steps (%q) or resolving release (%q)", c.ExampleSteps, c.ResolvedRelease)
	}
}
