package knowledge_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"autoapp/knowledge"
)

// A lesson's counts are its servings by outcome; beside resolved, how many
// of those were hints whose lesson named another stage than the failure's.
func TestALessonsServingsAreCountedByOutcome(t *testing.T) {
	ctx := context.Background()
	s := openLessonStore(t)
	sv := knowledge.NewServings(s.store.DB(), func() time.Time { return s.at })
	id := s.add("Declare the tag field on the Note type before using it.", knowledge.Applies{Stage: "typecheck"})
	other := s.add("Run the migrations before the seed.", knowledge.Applies{Stage: "test"})
	never := s.add("Keep the lockfile.", knowledge.Applies{Stage: "install"})
	l := s.get(id)

	run := 0
	serve := func(o *knowledge.Observation, hintFor string, included bool) {
		t.Helper()
		run++
		runID := fmt.Sprintf("run-%d", run)
		var err error
		switch {
		case hintFor != "":
			err = sv.RecordHints(ctx, runID, []knowledge.Served{{Lesson: l, Reason: knowledge.ReasonHint, ForStage: hintFor}})
		case included:
			err = sv.Record(ctx, runID, 0, []knowledge.Served{{Lesson: l, Reason: knowledge.ReasonWords}}, nil)
		default:
			err = sv.Record(ctx, runID, 0, nil, []knowledge.Served{{Lesson: l, Reason: knowledge.ReasonWords}})
		}
		if err != nil {
			t.Fatal(err)
		}
		if o != nil {
			if err := sv.Close(ctx, "notes", runID, *o); err != nil {
				t.Fatal(err)
			}
			if err := sv.End(ctx, runID); err != nil {
				t.Fatal(err)
			}
		}
	}
	passed := built(true, []string{"install", "typecheck"})
	failed := built(false, []string{"install", "typecheck"}, problem("typecheck", "src/notes.ts:3: Cannot find name 'list'."))
	stopped := built(false, []string{"install"}, problem("install", "npm ci failed"))
	serve(&passed, "", true)          // resolved
	serve(&passed, "typecheck", true) // resolved, a hint of its own stage
	serve(&passed, "test", true)      // resolved, a hint beside a test failure: noise
	serve(&failed, "", true)          // unrelated
	serve(&stopped, "", true)         // blocked
	serve(nil, "", true)              // open
	serve(nil, "", false)             // cut by the budget

	counts, err := sv.Counts(ctx, id, other, never)
	if err != nil {
		t.Fatal(err)
	}
	want := knowledge.ServingCounts{Resolved: 3, ResolvedUnrelatedByStage: 1, Unrelated: 1, Blocked: 1, Open: 1, NotIncluded: 1}
	if counts[id] != want {
		t.Errorf("counts = %+v, want %+v", counts[id], want)
	}
	if got := counts[id].Short(); got != "3/0/1/1" {
		t.Errorf("short = %q, want resolved/recurred/blocked/unrelated 3/0/1/1", got)
	}
	if c, ok := counts[never]; ok || c != (knowledge.ServingCounts{}) {
		t.Errorf("a lesson never served has counts %+v", c)
	}
}
