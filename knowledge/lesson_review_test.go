package knowledge_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"autoapp/knowledge"
)

// The instructions of the turns below, and their hashes as lessons record them.
const (
	oldInstructions = "Build the change, then check it."
	newInstructions = "Build every change with candidate.cycle."
)

// sigCompile is the failure the lessons of the review tests are about.
var sigCompile = problem("compile", `"os" imported and not used`)

// reviewed is a lesson store with servings, whose turns record the
// instructions they ran under.
type reviewed struct {
	*lessonStore
	servings *knowledge.Servings
	runs     int
}

func openReviewed(t *testing.T) *reviewed {
	s := openLessonStore(t)
	return &reviewed{lessonStore: s, servings: knowledge.NewServings(s.store.DB(), func() time.Time { return s.at })}
}

// lesson keeps a provisional lesson about sigCompile, written for the
// instructions hash and by the server version given.
func (r *reviewed) lesson(hash, version string) int64 {
	r.t.Helper()
	r.at = r.at.Add(time.Minute)
	id, err := r.lessons.Add(context.Background(), knowledge.Lesson{Text: "Remove an import with its last use.", CaseID: 1,
		Applies: knowledge.Applies{Stage: "compile", Signature: sigCompile.Signature}, InstructionsHash: hash, ServerVersion: version})
	if err != nil {
		r.t.Fatal(err)
	}
	return id
}

// serve gives lesson id to a new builder turn run under instructions, and
// lets the turn's first build close it: recurred when the build fails
// with the lesson's failure, resolved when it passes.
func (r *reviewed) serve(id int64, instructions, outcome string) {
	r.t.Helper()
	ctx := context.Background()
	r.runs++
	r.at = r.at.Add(time.Minute)
	run := fmt.Sprintf("intent-1-0001-tags-a%d", r.runs)
	turn, err := r.store.RecordTurn(ctx, knowledge.Turn{AppID: "notes", RunID: run, Kind: knowledge.TurnBuilder, Instructions: instructions})
	if err != nil {
		r.t.Fatal(err)
	}
	if err := r.servings.Record(ctx, run, turn, []knowledge.Served{{Lesson: r.get(id), Reason: knowledge.ReasonWords}}, nil); err != nil {
		r.t.Fatal(err)
	}
	obs := knowledge.BuildObservation(passedBuild("notes", run))
	if outcome == knowledge.OutcomeRecurred {
		obs = knowledge.BuildObservation(failedBuild("notes", run, sigCompile))
	}
	if err := r.servings.Close(ctx, "notes", run, obs); err != nil {
		r.t.Fatal(err)
	}
	if got, err := r.servings.ForRun(ctx, run); err != nil || len(got) != 1 || got[0].Outcome != outcome {
		r.t.Fatalf("the serving closed as %+v, want %s", got, outcome)
	}
}

// serveCut chooses lesson id for a new builder turn whose budget cut its
// line, and lets the turn's first build meet the lesson's failure again
// (recurred) or pass (resolved): the serving is kept not included and
// nothing closes it.
func (r *reviewed) serveCut(id int64, outcome string) {
	r.t.Helper()
	ctx := context.Background()
	r.runs++
	r.at = r.at.Add(time.Minute)
	run := fmt.Sprintf("intent-1-0001-tags-a%d", r.runs)
	turn, err := r.store.RecordTurn(ctx, knowledge.Turn{AppID: "notes", RunID: run, Kind: knowledge.TurnBuilder, Instructions: newInstructions})
	if err != nil {
		r.t.Fatal(err)
	}
	if err := r.servings.Record(ctx, run, turn, nil, []knowledge.Served{{Lesson: r.get(id), Reason: knowledge.ReasonWords}}); err != nil {
		r.t.Fatal(err)
	}
	obs := knowledge.BuildObservation(passedBuild("notes", run))
	if outcome == knowledge.OutcomeRecurred {
		obs = knowledge.BuildObservation(failedBuild("notes", run, sigCompile))
	}
	if err := r.servings.Close(ctx, "notes", run, obs); err != nil {
		r.t.Fatal(err)
	}
	if err := r.servings.End(ctx, run); err != nil {
		r.t.Fatal(err)
	}
	if got, err := r.servings.ForRun(ctx, run); err != nil || len(got) != 1 || got[0].Included || got[0].Outcome != "" {
		r.t.Fatalf("the cut serving is %+v, want it not included and open", got)
	}
}

// review runs the start's review with the new instructions and version
// 1.3.0 and answers the lesson's flags.
func (r *reviewed) review(id int64) []string {
	r.t.Helper()
	r.at = r.at.Add(time.Minute)
	before := r.get(id)
	if _, err := r.lessons.Review(context.Background(), knowledge.Hash(newInstructions), "1.3.0"); err != nil {
		r.t.Fatal(err)
	}
	after := r.get(id)
	if after.Status != before.Status {
		r.t.Fatalf("review moved lesson %d from %s to %s", id, before.Status, after.Status)
	}
	return after.Flags
}

func (r *reviewed) confirm(id int64) {
	r.t.Helper()
	r.at = r.at.Add(time.Minute)
	if err := r.lessons.Confirm(context.Background(), id, "ann"); err != nil {
		r.t.Fatal(err)
	}
}

func TestReviewFlagsRecurringOnlyForAFailureThatCameBackThreeTimesAndNeverResolved(t *testing.T) {
	current := knowledge.Hash(newInstructions)
	for _, tc := range []struct {
		name    string
		history func(r *reviewed, id int64)
		flagged bool
	}{
		{"served three times and recurred each time", func(r *reviewed, id int64) {
			for range 3 {
				r.serve(id, newInstructions, knowledge.OutcomeRecurred)
			}
		}, true},
		{"recurred twice", func(r *reviewed, id int64) {
			for range 2 {
				r.serve(id, newInstructions, knowledge.OutcomeRecurred)
			}
		}, false},
		{"recurred three times and resolved once", func(r *reviewed, id int64) {
			r.serve(id, newInstructions, knowledge.OutcomeRecurred)
			r.serve(id, newInstructions, knowledge.OutcomeResolved)
			r.serve(id, newInstructions, knowledge.OutcomeRecurred)
			r.serve(id, newInstructions, knowledge.OutcomeRecurred)
		}, false},
		{"recurred twice, and came back a third time in a turn whose budget cut it", func(r *reviewed, id int64) {
			for range 2 {
				r.serve(id, newInstructions, knowledge.OutcomeRecurred)
			}
			r.serveCut(id, knowledge.OutcomeRecurred)
		}, false},
		{"recurred three times, and the build passed in a turn whose budget cut it", func(r *reviewed, id int64) {
			for range 3 {
				r.serve(id, newInstructions, knowledge.OutcomeRecurred)
			}
			r.serveCut(id, knowledge.OutcomeResolved)
		}, true},
		{"recurred three times before a person confirmed it", func(r *reviewed, id int64) {
			for range 3 {
				r.serve(id, newInstructions, knowledge.OutcomeRecurred)
			}
			r.confirm(id)
		}, false},
		{"recurred three times since a person confirmed it", func(r *reviewed, id int64) {
			r.serve(id, newInstructions, knowledge.OutcomeResolved)
			r.confirm(id)
			for range 3 {
				r.serve(id, newInstructions, knowledge.OutcomeRecurred)
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := openReviewed(t)
			// Written for the running instructions and version: only
			// recurring can be raised.
			id := r.lesson(current, "1.3.0")
			tc.history(r, id)
			flags := r.review(id)
			if got := slices.Contains(flags, knowledge.FlagRecurring); got != tc.flagged || len(flags) > btoi(tc.flagged) {
				t.Fatalf("flags %v, want recurring %v and nothing else", flags, tc.flagged)
			}
		})
	}
}

func TestReviewFlagsInstructionsChangedOnlyWhenItRecurredTwiceSince(t *testing.T) {
	old, current := knowledge.Hash(oldInstructions), knowledge.Hash(newInstructions)
	for _, tc := range []struct {
		name    string
		hash    string
		history func(r *reviewed, id int64)
		flagged bool
	}{
		{"other instructions, recurred twice under the running ones", old, func(r *reviewed, id int64) {
			r.serve(id, newInstructions, knowledge.OutcomeRecurred)
			r.serve(id, newInstructions, knowledge.OutcomeRecurred)
		}, true},
		{"other instructions, never served", old, func(*reviewed, int64) {}, false},
		{"other instructions, resolved twice", old, func(r *reviewed, id int64) {
			r.serve(id, newInstructions, knowledge.OutcomeResolved)
			r.serve(id, newInstructions, knowledge.OutcomeResolved)
		}, false},
		{"other instructions, recurred once", old, func(r *reviewed, id int64) {
			r.serve(id, newInstructions, knowledge.OutcomeRecurred)
			r.serve(id, newInstructions, knowledge.OutcomeResolved)
		}, false},
		{"other instructions, recurred twice under its own", old, func(r *reviewed, id int64) {
			r.serve(id, oldInstructions, knowledge.OutcomeRecurred)
			r.serve(id, oldInstructions, knowledge.OutcomeRecurred)
			r.serve(id, newInstructions, knowledge.OutcomeResolved)
		}, false},
		{"other instructions, recurred twice before a person confirmed it", old, func(r *reviewed, id int64) {
			r.serve(id, newInstructions, knowledge.OutcomeRecurred)
			r.serve(id, newInstructions, knowledge.OutcomeRecurred)
			r.confirm(id)
		}, false},
		{"the running instructions, recurred twice", current, func(r *reviewed, id int64) {
			r.serve(id, newInstructions, knowledge.OutcomeRecurred)
			r.serve(id, newInstructions, knowledge.OutcomeRecurred)
		}, false},
		{"no instructions recorded, recurred twice", "", func(r *reviewed, id int64) {
			r.serve(id, newInstructions, knowledge.OutcomeRecurred)
			r.serve(id, newInstructions, knowledge.OutcomeRecurred)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := openReviewed(t)
			id := r.lesson(tc.hash, "1.3.0")
			tc.history(r, id)
			flags := r.review(id)
			if got := slices.Contains(flags, knowledge.FlagInstructionsChanged); got != tc.flagged || len(flags) > btoi(tc.flagged) {
				t.Fatalf("flags %v, want instructions_changed %v and nothing else", flags, tc.flagged)
			}
		})
	}
}

func TestReviewFlagsAutoappUpgradedOnlyOnALessonNoPersonReviewed(t *testing.T) {
	current := knowledge.Hash(newInstructions)
	for _, tc := range []struct {
		name    string
		version string
		confirm bool
		flagged bool
	}{
		{"distilled by another minor version", "1.2.4", false, true},
		{"distilled by another major version", "0.3.0", false, true},
		{"distilled by a development build", "dev", false, true},
		{"distilled by another patch of the same minor version", "1.3.7", false, false},
		{"distilled by the running version", "1.3.0", false, false},
		{"distilled by another minor version and confirmed", "1.2.4", true, false},
		{"recording no version", "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := openReviewed(t)
			id := r.lesson(current, tc.version)
			if tc.confirm {
				r.confirm(id)
			}
			flags := r.review(id)
			if got := slices.Contains(flags, knowledge.FlagAutoappUpgraded); got != tc.flagged || len(flags) > btoi(tc.flagged) {
				t.Fatalf("flags %v, want autoapp_upgraded %v and nothing else", flags, tc.flagged)
			}
		})
	}

	t.Run("a lesson written by a person", func(t *testing.T) {
		r := openReviewed(t)
		id := r.write("Keep the heading in site/index.html.", knowledge.Applies{})
		if flags := r.review(id); len(flags) != 0 {
			t.Fatalf("flags %v on a lesson its writer reviewed", flags)
		}
	})
}

func TestReviewFlagsOnceAndCountsWhatItFlagged(t *testing.T) {
	r := openReviewed(t)
	ctx := context.Background()
	upgraded := r.lesson(knowledge.Hash(newInstructions), "1.2.0")
	both := r.lesson(knowledge.Hash(oldInstructions), "1.3.0")
	for range 3 {
		r.serve(both, newInstructions, knowledge.OutcomeRecurred)
	}
	retired := r.lesson(knowledge.Hash(oldInstructions), "1.2.0")
	if err := r.lessons.Retire(ctx, retired, "ann"); err != nil {
		t.Fatal(err)
	}
	n, err := r.lessons.Review(ctx, knowledge.Hash(newInstructions), "1.3.0")
	if err != nil || n != 2 {
		t.Fatalf("review flagged %d lessons (%v), want 2", n, err)
	}
	if got := r.get(upgraded).Flags; !slices.Equal(got, []string{knowledge.FlagAutoappUpgraded}) {
		t.Fatalf("flags %v", got)
	}
	if got := r.get(both).Flags; !slices.Equal(got, []string{knowledge.FlagRecurring, knowledge.FlagInstructionsChanged}) {
		t.Fatalf("flags %v", got)
	}
	if got := r.get(retired); got.NeedsReview() || got.Status != knowledge.LessonRetired {
		t.Fatalf("a retired lesson was flagged: %+v", got)
	}
	if n, err := r.lessons.Review(ctx, knowledge.Hash(newInstructions), "1.3.0"); err != nil || n != 0 {
		t.Fatalf("the same start again flagged %d (%v)", n, err)
	}
	// A person's confirmation clears the flags, and the next start does
	// not raise them again from what came before it.
	r.confirm(upgraded)
	r.confirm(both)
	if n, err := r.lessons.Review(ctx, knowledge.Hash(newInstructions), "1.4.0"); err != nil || n != 0 {
		t.Fatalf("after the review, a start flagged %d (%v)", n, err)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestADistilledLessonRecordsTheRunningInstructionsAndVersion(t *testing.T) {
	ctx := context.Background()
	s := openLessonStore(t)
	s.lessons = knowledge.NewLessons(s.store.DB(), func() time.Time { return s.at }, knowledge.Running{InstructionsHash: "hash-of-instructions", ServerVersion: "9.9.9"})
	c := s.resolvedCase("notes")
	a := &answer{json: `{"explanation": "An import was left unused.", "knowable": "lesson",
		"lesson": "Remove an import as soon as its last use goes.", "same_as": 0}`}
	out, err := s.lessons.Distill(ctx, c, a.ask)
	if err != nil || out.LessonID == 0 {
		t.Fatalf("distill: %+v %v", out, err)
	}
	l := s.get(out.LessonID)
	// The case names no contexts row, so the running instructions stand;
	// the case's own server version wins over the running one.
	wantVersion := c.ServerVersion
	if wantVersion == "" {
		wantVersion = "9.9.9"
	}
	if l.InstructionsHash != "hash-of-instructions" || l.ServerVersion != wantVersion {
		t.Fatalf("lesson records instructions %q and version %q, want %q", l.InstructionsHash, l.ServerVersion, wantVersion)
	}
}

func TestHintsAreServingsTheNextBuildCloses(t *testing.T) {
	ctx := context.Background()
	s := openLessonStore(t)
	id := s.add("A package imported and never used fails the compile stage.", knowledge.Applies{Stage: "compile"})
	servings := knowledge.NewServings(s.store.DB(), func() time.Time { return s.at })
	failed := knowledge.BuildObservation(failedBuild("notes", "r1", problem("compile", `"os" imported and not used`)))
	if err := servings.Close(ctx, "notes", "run-1", failed); err != nil {
		t.Fatal(err)
	}
	hints, err := s.lessons.Hints(ctx, "compile", []string{`main.go:3:2: "os" imported and not used`})
	if err != nil || len(hints) != 1 || hints[0].Lesson.ID != id {
		t.Fatalf("hints %+v %v", hints, err)
	}
	if err := servings.RecordHints(ctx, "run-1", hints); err != nil {
		t.Fatal(err)
	}
	// The failed build the hint stood beside does not close it.
	got, err := servings.ForRun(ctx, "run-1")
	if err != nil || len(got) != 1 || got[0].Reason != knowledge.ReasonHint || got[0].Outcome != "" {
		t.Fatalf("servings after the hint: %+v %v", got, err)
	}
	if err := servings.Close(ctx, "notes", "run-1", knowledge.BuildObservation(passedBuild("notes", "r2"))); err != nil {
		t.Fatal(err)
	}
	if got, _ := servings.ForRun(ctx, "run-1"); got[0].Outcome != knowledge.OutcomeResolved {
		t.Fatalf("the next build closed the hint as %q", got[0].Outcome)
	}
	words := hints[0]
	words.Reason = knowledge.ReasonWords
	if err := servings.RecordHints(ctx, "run-1", []knowledge.Served{words}); err == nil {
		t.Fatal("a lesson served for its words was recorded as a hint")
	}
}

func TestEveryReviewWritesOneLogLineSayingWhoDidWhatToWhichLesson(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	lessons := knowledge.NewLessons(e.store.DB(), e.clock.Now, knowledge.Running{})
	distilled, err := lessons.Add(ctx, knowledge.Lesson{Text: "Build before checking the page.", CaseID: 1})
	if err != nil {
		t.Fatal(err)
	}
	first, err := lessons.Write(ctx, "Keep the heading in site/index.html.", "ann", knowledge.Applies{})
	if err != nil {
		t.Fatal(err)
	}
	if err := lessons.Confirm(ctx, distilled, "cy"); err != nil {
		t.Fatal(err)
	}
	second, err := lessons.Replace(ctx, first, "Keep the heading and the title in site/index.html.", "bob")
	if err != nil {
		t.Fatal(err)
	}
	if err := lessons.Retire(ctx, second, "dee"); err != nil {
		t.Fatal(err)
	}
	events, err := e.store.Log(ctx, knowledge.LogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	type line struct {
		message, review, by string
		lesson              float64
	}
	var got []line
	for i := len(events) - 1; i >= 0; i-- {
		ev := events[i]
		review, _ := ev.Attrs["review"].(string)
		by, _ := ev.Attrs["by"].(string)
		lesson, _ := ev.Attrs["lesson"].(float64)
		got = append(got, line{ev.Message, review, by, lesson})
	}
	want := []line{
		{fmt.Sprintf("Lesson %d was written by ann.", first), "write", "ann", float64(first)},
		{fmt.Sprintf("Lesson %d was confirmed by cy.", distilled), "confirm", "cy", float64(distilled)},
		{fmt.Sprintf("Lesson %d was replaced by lesson %d, written by bob.", first, second), "replace", "bob", float64(first)},
		{fmt.Sprintf("Lesson %d was retired by dee.", second), "retire", "dee", float64(second)},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the log says\n%+v\nwant\n%+v", got, want)
	}
}
