package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"autoapp/knowledge"
)

// lessonsServer is the app with its owner signed in, and the launcher's
// own lessons and knowledge store for fixtures.
func lessonsServer(t *testing.T) (*server, *browser) {
	t.Helper()
	s := newServer(t)
	b := s.browser(t)
	b.get("/setup")
	if r := b.post("/setup", url.Values{"name": {ownerName}, "password": {password}, "again": {password}}); r.StatusCode != fiber.StatusSeeOther {
		t.Fatalf("setup answered %d: %s", r.StatusCode, r.body)
	}
	return s, b
}

// reviewLines are the log's lines that record a review, oldest first.
func reviewLines(t *testing.T, s *server) []string {
	t.Helper()
	events, err := s.launcher.Knowledge.Log(context.Background(), knowledge.LogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(events) - 1; i >= 0; i-- {
		if review, _ := events[i].Attrs["review"].(string); review != "" {
			out = append(out, fmt.Sprintf("%s by %v: %s", review, events[i].Attrs["by"], events[i].Message))
		}
	}
	return out
}

// lessonSection is the part of the Lessons page that shows lesson id.
func lessonSection(t *testing.T, page string, id int64) string {
	t.Helper()
	at := strings.Index(page, fmt.Sprintf(`data-testid="lesson-%d"`, id))
	if at < 0 {
		t.Fatalf("the page shows no lesson %d:\n%s", id, page)
	}
	end := strings.Index(page[at:], "</section>")
	return page[at : at+end]
}

func TestEveryReviewFromThePageWritesOneLogLineSayingWho(t *testing.T) {
	t.Parallel()
	s, b := lessonsServer(t)
	ctx := context.Background()
	lessons := s.launcher.Lessons
	distilled, err := lessons.Add(ctx, knowledge.Lesson{Text: "Build before checking the page.", CaseID: 1})
	if err != nil {
		t.Fatal(err)
	}
	b.get("/knowledge/lessons")

	// Each action answers with the Lessons page and writes one line more.
	step := func(path string, form url.Values, want string) {
		t.Helper()
		before := reviewLines(t, s)
		wantRedirect(t, b.post(path, form), "/knowledge/lessons")
		after := reviewLines(t, s)
		if len(after) != len(before)+1 || after[len(after)-1] != want {
			t.Fatalf("after %s the review lines are\n%s\nwant one more: %s", path, strings.Join(after, "\n"), want)
		}
	}
	step("/knowledge/lessons", url.Values{"text": {"Keep the greeting in the page's first paragraph."}, "by": {"Bea"},
		"files": {"site/index.html, site/about.html"}}, "write by Bea: Lesson 2 was written by Bea.")
	step(fmt.Sprintf("/knowledge/lessons/%d/confirm", distilled), url.Values{"by": {"Cy"}},
		fmt.Sprintf("confirm by Cy: Lesson %d was confirmed by Cy.", distilled))
	step("/knowledge/lessons/2/replace", url.Values{"text": {"Keep the greeting in the first paragraph of site/index.html."}, "by": {"Dee"}},
		"replace by Dee: Lesson 2 was replaced by lesson 3, written by Dee.")
	// "Reviewing as" left empty: the owner did it.
	step("/knowledge/lessons/3/retire", url.Values{"by": {""}}, "retire by "+ownerName+": Lesson 3 was retired by "+ownerName+".")

	written, err := lessons.Get(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(written.Applies.Files, []string{"site/index.html", "site/about.html"}) {
		t.Fatalf("the written lesson applies to %v", written.Applies.Files)
	}
	page := b.get("/knowledge/lessons?status=retired").body
	if section := lessonSection(t, page, 3); !strings.Contains(section, "site/index.html, site/about.html") || !strings.Contains(section, "retired by "+ownerName) {
		t.Fatalf("the retired replacement's section:\n%s", section)
	}

	// A refused write writes no line.
	before := reviewLines(t, s)
	r := b.post("/knowledge/lessons", url.Values{"text": {"Keep it."}, "by": {"Bea"}, "files": {"/home/bea/site/index.html"}})
	wantStatus(t, r, fiber.StatusUnprocessableEntity)
	wantSentence(t, r, "is a path inside the application&#39;s workspace")
	if after := reviewLines(t, s); len(after) != len(before) {
		t.Fatalf("a refused write was logged: %v", after)
	}
}

func TestTheLessonsViewShowsAMethodUnclearLessonThatCanOnlyBeRetired(t *testing.T) {
	t.Parallel()
	s, b := lessonsServer(t)
	ctx := context.Background()
	method, err := s.launcher.Lessons.Add(ctx, knowledge.Lesson{Text: "It was unclear when the checks run.", CaseID: 1, MethodUnclear: true})
	if err != nil {
		t.Fatal(err)
	}
	section := lessonSection(t, b.get("/knowledge/lessons").body, method)
	for _, want := range []string{"It was unclear when the checks run.", "method unclear", "never served", fmt.Sprintf("/knowledge/lessons/%d/retire", method)} {
		if !strings.Contains(section, want) {
			t.Errorf("the section lacks %q:\n%s", want, section)
		}
	}
	for _, never := range []string{"/confirm", "/replace"} {
		if strings.Contains(section, never) {
			t.Errorf("the section offers %s:\n%s", never, section)
		}
	}
	wantRedirect(t, b.post(fmt.Sprintf("/knowledge/lessons/%d/retire", method), url.Values{"by": {"Bea"}}), "/knowledge/lessons")
	if l, err := s.launcher.Lessons.Get(ctx, method); err != nil || l.Status != knowledge.LessonRetired || l.RetiredBy != "Bea" {
		t.Fatalf("after retiring: %+v %v", l, err)
	}
}

// The Cases list says where each case's distillation stands and links the
// lesson it produced; the Lessons page and a lesson's page count its
// servings by outcome and say at which corpus versions it entered the
// index.
func TestTheCasesSayTheirDistillationAndALessonItsCountsAndVersions(t *testing.T) {
	t.Parallel()
	s, b := lessonsServer(t)
	ctx := context.Background()
	l := s.launcher
	failed := knowledge.BuildObserved{AppID: "site", RunID: "run-1", StagesRun: []string{"check"}, ReleaseBefore: "rel-1",
		Problems: []knowledge.BuildProblem{{Stage: "check", Message: "site/index.html: no h1", Signature: "no-h1"}}}
	opened, _, err := l.Cases.Build(ctx, failed)
	if err != nil || len(opened) != 1 {
		t.Fatalf("opened %v, %v", opened, err)
	}
	if _, _, err := l.Cases.Build(ctx, knowledge.BuildObserved{AppID: "site", RunID: "run-2", StagesRun: []string{"check"}, OK: true, Release: "rel-2"}); err != nil {
		t.Fatal(err)
	}
	// The case's page says the releases either side of the repair.
	casePage := b.get(fmt.Sprintf("/knowledge/cases/%d", opened[0])).body
	for _, want := range []string{`data-testid="case-release-before">rel-1<`, `data-testid="case-release-after">rel-2<`, "served from corpus version 0"} {
		if !strings.Contains(casePage, want) {
			t.Errorf("the case's page lacks %q", want)
		}
	}
	// A second case stays open.
	failed.Problems[0].Signature, failed.Problems[0].Message = "no-title", "site/index.html: no title"
	if _, _, err := l.Cases.Build(ctx, failed); err != nil {
		t.Fatal(err)
	}
	if r := b.get("/knowledge/cases").body; !strings.Contains(r, "not yet: the case is open") {
		t.Errorf("the Cases list does not say the open case is not yet distilled:\n%s", r)
	}
	ask := func(_ context.Context, _, _ string, _ json.RawMessage, out any) error {
		return json.Unmarshal([]byte(`{"explanation": "The page lost its heading.", "knowable": "lesson",
			"lesson": "Keep the page's h1 when changing its body.", "same_as": 0}`), out)
	}
	outcomes, err := l.Lessons.DistillQueued(ctx, ask, 0)
	if err != nil || len(outcomes) != 1 || outcomes[0].LessonID == 0 {
		t.Fatalf("distilled %+v, %v", outcomes, err)
	}
	lesson := outcomes[0].LessonID
	row := caseRow(t, b.get("/knowledge/cases").body, opened[0])
	if !strings.Contains(row, `data-testid="case-signature">no-h1<`) {
		t.Errorf("the case's row does not show its signature:\n%s", row)
	}
	if !strings.Contains(row, `data-testid="case-distill">done, and drew`) || !strings.Contains(row, fmt.Sprintf(`href="/knowledge/lessons/%d" data-testid="case-lesson"`, lesson)) {
		t.Errorf("the distilled case's row does not say done with its lesson linked:\n%s", row)
	}

	served, err := l.Lessons.Get(ctx, lesson)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Servings.Record(ctx, "run-3", 0, []knowledge.Served{{Lesson: served, Reason: knowledge.ReasonWords}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.Servings.Close(ctx, "site", "run-3", knowledge.BuildObservation(knowledge.BuildObserved{AppID: "site", RunID: "run-3", StagesRun: []string{"check"}, OK: true})); err != nil {
		t.Fatal(err)
	}
	counts := "Servings: 1 resolved (of which unrelated by stage: 0), 0 recurred, 0 blocked, 0 inconclusive, 0 unrelated, 0 none."
	if section := lessonSection(t, b.get("/knowledge/lessons").body, lesson); !strings.Contains(section, counts) {
		t.Errorf("the Lessons page's section lacks %q:\n%s", counts, section)
	}
	wantRedirect(t, b.post(fmt.Sprintf("/knowledge/lessons/%d/confirm", lesson), url.Values{"by": {"Bea"}}), "/knowledge/lessons")
	page := b.get(fmt.Sprintf("/knowledge/lessons/%d", lesson)).body
	for _, want := range []string{counts, "In the index since corpus version 1.",
		"Corpus version 1, ", fmt.Sprintf("Lesson %d was distilled from case %d.", lesson, opened[0]),
		"Corpus version 2, ", fmt.Sprintf("Lesson %d was confirmed by Bea.", lesson)} {
		if !strings.Contains(page, want) {
			t.Errorf("the lesson's page lacks %q", want)
		}
	}
}

// caseRow is the Cases list's row of case id.
func caseRow(t *testing.T, page string, id int64) string {
	t.Helper()
	at := strings.Index(page, fmt.Sprintf(`data-testid="case-%d"`, id))
	if at < 0 {
		t.Fatalf("the list shows no case %d:\n%s", id, page)
	}
	end := strings.Index(page[at:], "</tr>")
	return page[at : at+end]
}
