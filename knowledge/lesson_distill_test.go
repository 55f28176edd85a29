package knowledge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"autoapp/intent/refusal"
	"autoapp/knowledge"
	"autoapp/knowledge/origin"
)

// resolvedCase opens a build case of app at stage compile and resolves it
// with a passing build.
func (s *lessonStore) resolvedCase(app string) knowledge.Case {
	s.t.Helper()
	ctx := context.Background()
	opened, _, err := s.cases.Build(ctx, failedBuild(app, "r1", problem("compile", `"os" imported and not used`)))
	if err != nil || len(opened) != 1 {
		s.t.Fatalf("open a case: %v, %v", opened, err)
	}
	if _, _, err := s.cases.Build(ctx, passedBuild(app, "r2")); err != nil {
		s.t.Fatal(err)
	}
	c, err := s.cases.Get(ctx, opened[0])
	if err != nil || !c.Resolved() {
		s.t.Fatalf("case %+v, %v", c, err)
	}
	return c
}

// answer is an Ask that answers with the JSON given, as the scripted model
// would, and records what it was asked.
type answer struct {
	json     string
	err      error
	asked    int
	messages []string
}

func (a *answer) ask(_ context.Context, instructions, message string, schema json.RawMessage, out any) error {
	a.asked++
	a.messages = append(a.messages, message)
	if instructions == "" || !json.Valid(schema) {
		return errors.New("no instructions or schema")
	}
	if a.err != nil {
		return a.err
	}
	return json.Unmarshal([]byte(a.json), out)
}

func TestDistill(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		answer     string
		lesson     bool   // a provisional lesson is added
		dropped    bool   // the lesson was refused by the filter
		sameAs     bool   // the existing lesson is flagged recurring
		wantErr    string // the question failed; nothing is written
		wantKnowab string
	}{
		{name: "lesson", answer: `{"explanation":"An import was left after its use was removed.","knowable":"lesson","lesson":"Remove an import together with its last use.","same_as":0}`, lesson: true, wantKnowab: knowledge.KnowableLesson},
		{name: "lesson with a path is dropped", answer: `{"explanation":"The file was edited in place.","knowable":"lesson","lesson":"Never edit /home/ann/app/main.go by hand.","same_as":0}`, dropped: true, wantKnowab: knowledge.KnowableLesson},
		{name: "same_as", answer: `{"explanation":"The same unused import again.","knowable":"same_as","lesson":"","same_as":EXISTING}`, sameAs: true, wantKnowab: knowledge.KnowableSameAs},
		{name: "specific", answer: `{"explanation":"A typo in this one file.","knowable":"specific","lesson":"","same_as":0}`, wantKnowab: knowledge.KnowableSpecific},
		{name: "not_knowable", answer: `{"explanation":"Nothing said the package was renamed.","knowable":"not_knowable","lesson":"","same_as":0}`, wantKnowab: knowledge.KnowableNotKnowable},
		{name: "environment", answer: `{"explanation":"The disk was full.","knowable":"environment","lesson":"","same_as":0}`, wantKnowab: knowledge.KnowableEnvironment},
		{name: "method_unclear", answer: `{"explanation":"The engineer never built before checking.","knowable":"method_unclear","lesson":"","same_as":0}`, lesson: true, wantKnowab: knowledge.KnowableMethodUnclear},
		{name: "malformed json", answer: `{"explanation":`, wantErr: "question failed"},
		{name: "unknown answer", answer: `{"explanation":"x","knowable":"maybe","lesson":"","same_as":0}`, wantErr: "not an answer"},
		{name: "lesson without text", answer: `{"explanation":"x","knowable":"lesson","lesson":" ","same_as":0}`, wantErr: "without its text"},
		{name: "same_as without id", answer: `{"explanation":"x","knowable":"same_as","lesson":"","same_as":0}`, wantErr: "without a lesson"},
		{name: "same_as a missing lesson", answer: `{"explanation":"x","knowable":"same_as","lesson":"","same_as":999}`, wantErr: "names lesson 999"},
		{name: "no explanation", answer: `{"explanation":"","knowable":"specific","lesson":"","same_as":0}`, wantErr: "no explanation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openLessonStore(t)
			existing := s.write("Remove an unused import before building.", knowledge.Applies{Stage: "compile"})
			c := s.resolvedCase("notes")
			a := &answer{json: strings.ReplaceAll(tc.answer, "EXISTING", "1")}
			out, err := s.lessons.Distill(ctx, c, a.ask)
			got, _ := s.cases.Get(ctx, c.ID)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				if got.Diagnosis != "" {
					t.Fatalf("a failed question wrote a diagnosis: %q", got.Diagnosis)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.asked != 1 || !strings.Contains(a.messages[0], `"os" imported and not used`) {
				t.Fatalf("asked %d times: %q", a.asked, a.messages)
			}
			var written knowledge.Outcome
			if err := json.Unmarshal([]byte(got.Diagnosis), &written); err != nil || written.Explanation == "" || written.Knowable != tc.wantKnowab {
				t.Fatalf("diagnosis %q (%v), want the explanation and %s", got.Diagnosis, err, tc.wantKnowab)
			}
			if got.DistillState != knowledge.DistillDone {
				t.Fatalf("distill state %q", got.DistillState)
			}
			all, _ := s.lessons.List(ctx, knowledge.LessonQuery{})
			if tc.lesson {
				l := s.get(out.LessonID)
				if l.Status != knowledge.LessonProvisional || l.CaseID != c.ID || l.Applies.Stage != "compile" ||
					l.Applies.Signature != c.Signature || l.ServerVersion != c.ServerVersion || written.LessonID != l.ID {
					t.Fatalf("lesson %+v from case %+v", l, c)
				}
			} else if len(all) != 1 || out.LessonID != 0 {
				t.Fatalf("lessons %+v, outcome %+v: want no new lesson", all, out)
			}
			if tc.dropped && (out.Dropped == "" || written.Dropped == "") {
				t.Fatalf("outcome %+v: want the lesson dropped", out)
			}
			flagged := slices.Contains(s.get(existing).Flags, knowledge.FlagRecurring)
			if flagged != tc.sameAs || (tc.sameAs && out.SameAs != existing) {
				t.Fatalf("existing lesson flagged %v, outcome %+v", flagged, out)
			}

			// A second question about the same case is a no-op.
			again, err := s.lessons.Distill(ctx, got, a.ask)
			if err != nil || !again.Skipped || a.asked != 1 {
				t.Fatalf("second distillation: %+v, %v, asked %d", again, err, a.asked)
			}
		})
	}
}

func TestDistillQueuedRetriesThenFails(t *testing.T) {
	ctx := context.Background()
	s := openLessonStore(t)
	c := s.resolvedCase("notes")
	broken := &answer{err: errors.New("the model timed out")}
	for try := 1; try <= 3; try++ {
		out, err := s.lessons.DistillQueued(ctx, broken.ask, 3)
		if err == nil || len(out) != 0 {
			t.Fatalf("try %d: %+v, %v; want the failure", try, out, err)
		}
		got, _ := s.cases.Get(ctx, c.ID)
		want := knowledge.DistillQueued
		if try == 3 {
			want = knowledge.DistillFailed
		}
		if got.DistillState != want || got.DistillTries != try || got.Diagnosis != "" {
			t.Fatalf("try %d: state %q, tries %d, diagnosis %q", try, got.DistillState, got.DistillTries, got.Diagnosis)
		}
	}
	// A failed case is not asked again.
	out, err := s.lessons.DistillQueued(ctx, broken.ask, 3)
	if err != nil || len(out) != 0 || broken.asked != 3 {
		t.Fatalf("after failing: %+v, %v, asked %d", out, err, broken.asked)
	}
}

func TestDistillQueuedSucceedsOnALaterTry(t *testing.T) {
	ctx := context.Background()
	s := openLessonStore(t)
	c := s.resolvedCase("notes")
	a := &answer{err: errors.New("the model timed out")}
	if _, err := s.lessons.DistillQueued(ctx, a.ask, 0); err == nil {
		t.Fatal("want the first failure")
	}
	a.err = nil
	a.json = `{"explanation":"An import was left after its use was removed.","knowable":"lesson","lesson":"Remove an import together with its last use.","same_as":0}`
	out, err := s.lessons.DistillQueued(ctx, a.ask, 0)
	if err != nil || len(out) != 1 || out[0].CaseID != c.ID || out[0].LessonID == 0 {
		t.Fatalf("%+v, %v", out, err)
	}
	got, _ := s.cases.Get(ctx, c.ID)
	if got.DistillState != knowledge.DistillDone || got.DistillTries != 2 {
		t.Fatalf("state %q, tries %d", got.DistillState, got.DistillTries)
	}
	// Nothing is left to ask.
	if out, err := s.lessons.DistillQueued(ctx, a.ask, 0); err != nil || len(out) != 0 || a.asked != 2 {
		t.Fatalf("%+v, %v, asked %d", out, err, a.asked)
	}
}

func TestDistillSameAsSupersedesTheLessonItNames(t *testing.T) {
	ctx := context.Background()
	const restated = "Remove an import in the same edit as its last use."
	for _, tc := range []struct {
		name string
		// confirmed: the existing lesson was confirmed by a person.
		confirmed bool
		text      string
		// supersedes: a new provisional lesson supersedes the existing one.
		supersedes bool
	}{
		{name: "a provisional lesson is superseded", text: restated, supersedes: true},
		{name: "a confirmed lesson keeps its status and is flagged", confirmed: true, text: restated, supersedes: true},
		{name: "without a restated lesson it is flagged recurring", text: ""},
		{name: "a restated lesson naming a path is dropped", text: "Remove imports in /home/ann/app/main.go with their use."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openLessonStore(t)
			var existing int64
			if tc.confirmed {
				existing = s.write("Remove an unused import before building.", knowledge.Applies{Stage: "compile"})
			} else {
				existing = s.add("Remove an unused import before building.", knowledge.Applies{Stage: "compile"})
			}
			c := s.resolvedCase("notes")
			text, _ := json.Marshal(tc.text)
			a := &answer{json: `{"explanation":"The same unused import again.","knowable":"same_as","lesson":` + string(text) + `,"same_as":1}`}
			out, err := s.lessons.Distill(ctx, c, a.ask)
			if err != nil {
				t.Fatal(err)
			}
			old := s.get(existing)
			if out.SameAs != existing {
				t.Fatalf("outcome %+v", out)
			}
			if !tc.supersedes {
				if out.LessonID != 0 || !slices.Contains(old.Flags, knowledge.FlagRecurring) || !old.Servable() {
					t.Fatalf("outcome %+v, existing lesson %+v: want it flagged recurring and nothing new", out, old)
				}
				if (tc.text != "") != (out.Dropped != "") {
					t.Fatalf("dropped %q", out.Dropped)
				}
				return
			}
			l := s.get(out.LessonID)
			if l.Text != restated || l.Status != knowledge.LessonProvisional || l.Supersedes != existing || l.CaseID != c.ID {
				t.Fatalf("the new lesson %+v", l)
			}
			if tc.confirmed {
				if old.Status != knowledge.LessonConfirmed || !slices.Contains(old.Flags, knowledge.FlagSuperseded) || old.SupersededBy != 0 {
					t.Fatalf("the confirmed lesson %+v: want it confirmed still and flagged superseded", old)
				}
			} else if old.Status != knowledge.LessonSuperseded || old.SupersededBy != l.ID || old.Servable() {
				t.Fatalf("the provisional lesson %+v: want it superseded by %d", old, l.ID)
			}
			// The new lesson is served in the old one's place.
			served, err := s.lessons.Match(ctx, knowledge.MatchQuery{Words: "remove an unused import before building"})
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, sv := range served {
				ids = append(ids, sv.Lesson.ID)
			}
			if !slices.Contains(ids, l.ID) || slices.Contains(ids, existing) != tc.confirmed {
				t.Fatalf("served %v", ids)
			}
			// What a lesson supersedes never changes.
			if _, err := s.store.DB().Write.Exec(`UPDATE lessons SET supersedes = NULL WHERE id = ?`, l.ID); err == nil {
				t.Fatal("a lesson's supersedes was changed")
			}
		})
	}
}

func TestADistilledLessonAppliesToTheFilesItsCaseEdited(t *testing.T) {
	ctx := context.Background()
	s := openLessonStore(t)
	out := s.distilledFromEdits(t, "source.edit src/notes.ts", "source.change change src/tags.ts, src/views.ts",
		"source.change create views/tags.templ, modify src/notes.ts and 2 more", "build notes")
	want := []string{"src/notes.ts", "src/tags.ts", "src/views.ts", "views/tags.templ"}
	if got := s.get(out.LessonID).Applies.Files; !slices.Equal(got, want) {
		t.Fatalf("the lesson applies to %v, want the files its case's edits touched %v", got, want)
	}

	// Related to a task of the case's application that names one of them,
	// never to another application's file of the same name.
	served, err := s.lessons.Match(ctx, knowledge.MatchQuery{AppID: "notes", Files: []string{"src/views.ts"}})
	if err != nil || len(served) != 1 || served[0].Lesson.ID != out.LessonID || served[0].Reason != "related:src/views.ts" {
		t.Fatalf("served %+v %v", served, err)
	}
	if served, err := s.lessons.Match(ctx, knowledge.MatchQuery{AppID: "blog", Files: []string{"src/views.ts"}}); err != nil || len(served) != 0 {
		t.Fatalf("another application's task was served %+v %v", served, err)
	}
}

func TestAWrittenLessonNamesTheFilesItAppliesTo(t *testing.T) {
	ctx := context.Background()
	s := openLessonStore(t)
	id, err := s.lessons.Write(ctx, "Keep the heading in one place.", "ann", knowledge.Applies{Files: []string{" site/index.html ", "./site/about.html", "site/index.html"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.get(id).Applies.Files; !slices.Equal(got, []string{"site/index.html", "site/about.html"}) {
		t.Fatalf("files %v", got)
	}
	// A lesson written by hand comes from no application's case: it is
	// related to any task that names one of its files.
	served, err := s.lessons.Match(ctx, knowledge.MatchQuery{AppID: "blog", Files: []string{"site/about.html"}})
	if err != nil || len(served) != 1 || served[0].Reason != "related:site/about.html" {
		t.Fatalf("served %+v %v", served, err)
	}
	for _, bad := range []string{"/home/ann/site/index.html", "../site/index.html", "site/../../x", `site\\index.html`} {
		if _, err := s.lessons.Write(ctx, "Keep the heading in one place.", "ann", knowledge.Applies{Files: []string{bad}}); caseCode(err) != refusal.Invalid {
			t.Errorf("a file %q was taken: %v", bad, err)
		}
	}
}

// A case repaired through candidate.cycle alone (its hunks applied by the
// cycle) keeps the files the cycle changed: the lesson it teaches is
// served as related to a task that locks one of them.
func TestALessonFromACycleEditedCaseAppliesToTheCyclesFiles(t *testing.T) {
	ctx := context.Background()
	s := openLessonStore(t)
	out := s.distilledFromEdits(t, "candidate.cycle src/notes.ts", "candidate.cycle src/tags.ts, src/notes.ts")
	if got, want := s.get(out.LessonID).Applies.Files, []string{"src/notes.ts", "src/tags.ts"}; !slices.Equal(got, want) {
		t.Fatalf("the lesson applies to %v, want the files the cycle changed %v", got, want)
	}
	served, err := s.lessons.Match(ctx, knowledge.MatchQuery{AppID: "notes", Files: []string{"src/tags.ts"}})
	if err != nil || len(served) != 1 || served[0].Reason != "related:src/tags.ts" {
		t.Fatalf("served %+v %v", served, err)
	}
}

// distilledFromEdits opens a compile case of notes in run r1, keeps the
// edit lines given, resolves it with a passing build in r2, and distills
// the lesson an unused import teaches.
func (s *lessonStore) distilledFromEdits(t *testing.T, edits ...string) knowledge.Outcome {
	t.Helper()
	ctx := context.Background()
	opened, _, err := s.cases.Build(ctx, failedBuild("notes", "r1", problem("compile", `"os" imported and not used`)))
	if err != nil || len(opened) != 1 {
		t.Fatalf("open a case: %v, %v", opened, err)
	}
	for _, edit := range edits {
		if err := s.cases.AppendEdit(ctx, "notes", "r1", edit); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.cases.Build(ctx, passedBuild("notes", "r2")); err != nil {
		t.Fatal(err)
	}
	c, err := s.cases.Get(ctx, opened[0])
	if err != nil || !c.Resolved() {
		t.Fatalf("case %+v, %v", c, err)
	}
	a := &answer{json: `{"explanation": "An import was left unused.", "knowable": "lesson",
		"lesson": "Remove an import as soon as its last use goes.", "same_as": 0}`}
	out, err := s.lessons.Distill(ctx, c, a.ask)
	if err != nil || out.LessonID == 0 {
		t.Fatalf("distill: %+v %v", out, err)
	}
	return out
}

// The distiller is shown the application's events while the case was
// open, oldest first and no others; when the question would pass the
// budget the oldest events go first, the question says so and the log
// says what was cut.
func TestTheDistillersQuestionKeepsTheNewestEventsWithinItsBudget(t *testing.T) {
	ctx := context.Background()
	s := openLessonStore(t)
	at := func(app, message string) {
		t.Helper()
		s.at = s.at.Add(time.Second)
		if err := s.store.Append(origin.WithIdentity(ctx, origin.Identity{AppID: app}), knowledge.Event{Level: knowledge.LevelInfo, Message: message}); err != nil {
			t.Fatal(err)
		}
	}
	at("notes", "before the case opened")
	s.at = s.at.Add(time.Second)
	opened, _, err := s.cases.Build(ctx, failedBuild("notes", "r1", problem("compile", `"os" imported and not used`)))
	if err != nil || len(opened) != 1 {
		t.Fatalf("open a case: %v, %v", opened, err)
	}
	// Enough events to pass the budget twice over, each one numbered.
	long := strings.Repeat("x", 1000)
	n := 2 * knowledge.DistillBudget / 1000
	for i := range n {
		at("notes", fmt.Sprintf("event %03d %s", i, long))
		if i == 0 {
			at("site", "another application's event")
		}
	}
	if _, _, err := s.cases.Build(ctx, passedBuild("notes", "r2")); err != nil {
		t.Fatal(err)
	}
	at("notes", "after the case was resolved")
	c, err := s.cases.Get(ctx, opened[0])
	if err != nil {
		t.Fatal(err)
	}
	a := &answer{json: `{"explanation": "An import was left unused.", "knowable": "not_knowable", "lesson": "", "same_as": 0}`}
	if _, err := s.lessons.Distill(ctx, c, a.ask); err != nil {
		t.Fatal(err)
	}
	asked := a.messages[0]
	if got := utf8.RuneCountInString(asked); got > knowledge.DistillBudget {
		t.Errorf("the question holds %d characters, over the budget of %d", got, knowledge.DistillBudget)
	}
	newest := fmt.Sprintf("event %03d", n-1)
	for _, never := range []string{"before the case opened", "another application's event", "after the case was resolved", "event 000"} {
		if strings.Contains(asked, never) {
			t.Errorf("the question holds %q", never)
		}
	}
	if !strings.Contains(asked, newest) || !strings.Contains(asked, "older events were left out to keep within the budget") {
		t.Errorf("the question lacks the newest event or the sentence on the cut:\n%.2000s", asked)
	}
	if strings.Index(asked, fmt.Sprintf("event %03d", n-2)) > strings.Index(asked, newest) {
		t.Error("the events are not oldest first")
	}
	events, err := s.store.Log(ctx, knowledge.LogQuery{AppID: "notes", Limit: 1})
	if err != nil || len(events) != 1 || !strings.Contains(events[0].Message, fmt.Sprintf("The distiller's question about case %d left out the ", c.ID)) ||
		!strings.Contains(events[0].Message, "oldest events") {
		t.Errorf("the log does not say what was cut: %+v %v", events, err)
	}
}

// A lesson about the same failure is shown to the distiller with whether
// it was in the index when the turn that met the failure was served, and
// whether that turn was given it.
func TestTheDistillerIsToldWhetherAnExistingLessonWasThereAndDelivered(t *testing.T) {
	ctx := context.Background()
	sig := "compile:unused-import"
	for _, tc := range []struct {
		name              string
		before, delivered bool
		inIndex, wasGiven string
	}{
		{"written after the turn was served", false, false, "no", "no"},
		{"in the index, not given", true, false, "yes", "no"},
		{"in the index and given", true, true, "yes", "yes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openLessonStore(t)
			var lesson int64
			write := func() {
				lesson = s.write("Remove an import with its last use.", knowledge.Applies{Stage: "compile", Signature: sig})
			}
			if tc.before {
				write()
			}
			turn, err := s.store.RecordTurn(ctx, knowledge.Turn{AppID: "notes", RunID: "r1", Kind: knowledge.TurnBuilder,
				Instructions: "build", Request: "add tags", Documents: []knowledge.DeliveredDoc{{Ref: "digest:notes", Text: "Application: notes"}}})
			if err != nil {
				t.Fatal(err)
			}
			if !tc.before {
				write()
			}
			if tc.delivered {
				sv := knowledge.NewServings(s.store.DB(), func() time.Time { return s.at })
				if err := sv.Record(ctx, "r1", turn, []knowledge.Served{{Lesson: s.get(lesson), Reason: knowledge.ReasonWords}}, nil); err != nil {
					t.Fatal(err)
				}
			}
			obs := failedBuild("notes", "r1", knowledge.BuildProblem{Stage: "compile", Message: `main.go:3: "os" imported and not used`, Signature: sig})
			obs.ContextID = turn
			opened, _, err := s.cases.Build(ctx, obs)
			if err != nil || len(opened) != 1 {
				t.Fatalf("open: %v %v", opened, err)
			}
			if _, _, err := s.cases.Build(ctx, passedBuild("notes", "r2")); err != nil {
				t.Fatal(err)
			}
			c, err := s.cases.Get(ctx, opened[0])
			if err != nil {
				t.Fatal(err)
			}
			a := &answer{json: `{"explanation": "An import was left unused.", "knowable": "not_knowable", "lesson": "", "same_as": 0}`}
			if _, err := s.lessons.Distill(ctx, c, a.ask); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("- lesson %d (confirmed): Remove an import with its last use.\n  In the index at the turn's corpus version: %s. Among the documents delivered to the turn: %s.",
				lesson, tc.inIndex, tc.wasGiven)
			if !strings.Contains(a.messages[0], want) {
				t.Errorf("the question lacks %q:\n%s", want, a.messages[0])
			}
			if !strings.Contains(a.messages[0], "Document digest:notes:\n<<<\nApplication: notes\n>>>") {
				t.Errorf("the question lacks the turn's document as delivered:\n%s", a.messages[0])
			}
		})
	}
}
