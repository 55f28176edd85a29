package knowledge_test

import (
	"context"
	"slices"
	"testing"

	"autoapp/intent/refusal"
	"autoapp/knowledge"
)

func TestAMethodUnclearAnswerKeepsALessonThatIsNeverServed(t *testing.T) {
	ctx := context.Background()
	s := openLessonStore(t)
	c := s.resolvedCase("notes")
	a := &answer{json: `{"explanation": "The engineer edited the imports and never built before checking.", "knowable": "method_unclear",
		"lesson": "It was unclear whether an unused import is caught before or after the compile stage runs.", "same_as": 0}`}
	out, err := s.lessons.Distill(ctx, c, a.ask)
	if err != nil || out.LessonID == 0 || out.Knowable != knowledge.KnowableMethodUnclear {
		t.Fatalf("distill: %+v %v", out, err)
	}
	l := s.get(out.LessonID)
	if !l.MethodUnclear || l.Status != knowledge.LessonProvisional || l.CaseID != c.ID || l.Servable() ||
		l.Text != "It was unclear whether an unused import is caught before or after the compile stage runs." {
		t.Fatalf("the kept lesson: %+v", l)
	}

	// It is listed with the others, and alone when only those are asked for.
	all, err := s.lessons.List(ctx, knowledge.LessonQuery{})
	if err != nil || len(all) != 1 || all[0].ID != l.ID {
		t.Fatalf("listed %+v %v", all, err)
	}
	other := s.add("An unused import fails the compile stage; remove it with its last use.", knowledge.Applies{Stage: "compile"})
	method, err := s.lessons.List(ctx, knowledge.LessonQuery{MethodUnclear: true})
	if err != nil || len(method) != 1 || method[0].ID != l.ID {
		t.Fatalf("the method_unclear lessons: %+v %v", method, err)
	}

	// Never served: not for its words, not for its stage, not pinned.
	if err := s.lessons.Pin(ctx, l.ID, true); err != nil {
		t.Fatal(err)
	}
	served, err := s.lessons.Match(ctx, knowledge.MatchQuery{Words: "unused import caught compile stage runs", Stage: "compile"})
	if err != nil {
		t.Fatal(err)
	}
	for _, sv := range served {
		if sv.Lesson.ID == l.ID {
			t.Fatalf("the method_unclear lesson was served: %+v", served)
		}
	}
	if len(served) != 1 || served[0].Lesson.ID != other {
		t.Fatalf("served %+v, want only lesson %d", served, other)
	}
	hints, err := s.lessons.Hints(ctx, "compile", []string{`main.go:3: "os" imported and not used: unused import caught before the compile stage`})
	if err != nil || slices.ContainsFunc(hints, func(h knowledge.Served) bool { return h.Lesson.ID == l.ID }) {
		t.Fatalf("hints %+v %v", hints, err)
	}

	// Nothing to confirm or replace; it can be retired, by a person.
	wantCode(t, s.lessons.Confirm(ctx, l.ID, "ann"), refusal.Conflict)
	_, err = s.lessons.Replace(ctx, l.ID, "Build before checking.", "ann")
	wantCode(t, err, refusal.Conflict)
	if err := s.lessons.Retire(ctx, l.ID, "ann"); err != nil {
		t.Fatal(err)
	}
	if got := s.get(l.ID); got.Status != knowledge.LessonRetired || got.RetiredBy != "ann" || !got.MethodUnclear {
		t.Fatalf("retired: %+v", got)
	}
}

func TestAMethodUnclearAnswerWithoutTextKeepsItsExplanation(t *testing.T) {
	ctx := context.Background()
	s := openLessonStore(t)
	a := &answer{json: `{"explanation": "The engineer never built before checking.", "knowable": "method_unclear", "lesson": "", "same_as": 0}`}
	out, err := s.lessons.Distill(ctx, s.resolvedCase("notes"), a.ask)
	if err != nil || out.LessonID == 0 {
		t.Fatalf("distill: %+v %v", out, err)
	}
	if l := s.get(out.LessonID); !l.MethodUnclear || l.Text != "The engineer never built before checking." {
		t.Fatalf("the kept lesson: %+v", l)
	}
}
