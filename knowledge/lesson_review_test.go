package knowledge_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"autoapp/knowledge"
)

func TestReviewFlagsLessonsWrittenForOtherInstructionsOrAnotherVersion(t *testing.T) {
	ctx := context.Background()
	s := openLessonStore(t)
	addWith := func(text, hash, version string) int64 {
		t.Helper()
		id, err := s.lessons.Add(ctx, knowledge.Lesson{Text: text, CaseID: 1, InstructionsHash: hash, ServerVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	current := addWith("Written for the running instructions and version.", "h2", "v2")
	oldHash := addWith("Written for earlier instructions.", "h1", "v2")
	oldVersion := addWith("Distilled by an earlier server.", "h2", "v1")
	both := addWith("Written long ago.", "h1", "v1")
	unknown := addWith("Recording neither.", "", "")
	retired := addWith("Retired, so never flagged.", "h1", "v1")
	if err := s.lessons.Retire(ctx, retired); err != nil {
		t.Fatal(err)
	}

	n, err := s.lessons.Review(ctx, "h2", "v2")
	if err != nil || n != 3 {
		t.Fatalf("review flagged %d (%v), want 3", n, err)
	}
	for _, tc := range []struct {
		name  string
		id    int64
		flags []string
	}{
		{"same instructions and version", current, nil},
		{"other instructions", oldHash, []string{knowledge.FlagInstructionsChanged}},
		{"another version", oldVersion, []string{knowledge.FlagUpgraded}},
		{"both", both, []string{knowledge.FlagInstructionsChanged, knowledge.FlagUpgraded}},
		{"recording neither", unknown, nil},
		{"retired", retired, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if l := s.get(tc.id); !slices.Equal(l.Flags, tc.flags) {
				t.Fatalf("flags %v, want %v", l.Flags, tc.flags)
			}
		})
	}

	// A person confirms one: the next start does not flag it again for
	// the same difference, nor anything else.
	if err := s.lessons.Confirm(ctx, both, "ann"); err != nil {
		t.Fatal(err)
	}
	if n, err := s.lessons.Review(ctx, "h2", "v2"); err != nil || n != 0 {
		t.Fatalf("the same start again flagged %d (%v)", n, err)
	}
	if l := s.get(both); l.NeedsReview() {
		t.Fatalf("a confirmed lesson was flagged again: %v", l.Flags)
	}
	// New instructions flag it again, and the two others written for h2
	// (the one flagged already is not counted); an empty version raises
	// nothing.
	if n, err := s.lessons.Review(ctx, "h3", ""); err != nil || n != 3 {
		t.Fatalf("new instructions flagged %d (%v), want 3", n, err)
	}
	if l := s.get(both); !slices.Equal(l.Flags, []string{knowledge.FlagInstructionsChanged}) {
		t.Fatalf("flags after new instructions: %v", l.Flags)
	}
}

func TestADistilledLessonRecordsTheRunningInstructionsAndVersion(t *testing.T) {
	ctx := context.Background()
	s := openLessonStore(t)
	s.lessons.SetRunning("hash-of-instructions", "9.9.9")
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
	lessons := knowledge.NewLessons(e.store.DB(), e.clock.now)
	first, err := lessons.Write(ctx, "Keep the heading in site/index.html.", "ann", knowledge.Applies{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := lessons.Replace(ctx, first, "Keep the heading and the title in site/index.html.", "bob")
	if err != nil {
		t.Fatal(err)
	}
	if err := lessons.Retire(ctx, second); err != nil {
		t.Fatal(err)
	}
	events, err := e.store.Log(ctx, knowledge.LogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := len(events) - 1; i >= 0; i-- {
		got = append(got, events[i].Message)
	}
	want := []string{
		fmt.Sprintf("Lesson %d was written by ann.", first),
		fmt.Sprintf("Lesson %d was replaced by lesson %d, written by bob.", first, second),
		fmt.Sprintf("Lesson %d was retired.", second),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the log says\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
