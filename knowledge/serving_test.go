package knowledge_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"autoapp/executor/build"
	"autoapp/intent/refusal"
	"autoapp/knowledge"
)

const servedRun = "intent-1-0001-tags-a1"

// typeMessage is the typecheck failure the build lessons below are about.
const typeMessage = "src/tags.ts:12: Property 'tag' does not exist on type 'Note'."

func servingsOf(t *testing.T, sv *knowledge.Servings, run string) []knowledge.Serving {
	t.Helper()
	got, err := sv.ForRun(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func built(ok bool, stages []string, problems ...knowledge.BuildProblem) knowledge.Observation {
	return knowledge.BuildObservation(knowledge.BuildObserved{AppID: "notes", RunID: servedRun, OK: ok, StagesRun: stages, Problems: problems})
}

func checked(results ...knowledge.ExampleResult) knowledge.Observation {
	return knowledge.ChecksObservation(knowledge.ChecksObserved{AppID: "notes", RunID: servedRun, Results: results})
}

func TestServingOutcomes(t *testing.T) {
	ctx := context.Background()
	buildLesson := knowledge.Applies{Stage: "typecheck", Signature: build.Signature("typecheck", typeMessage)}
	stageLesson := knowledge.Applies{Stage: "typecheck"}
	checkLesson := knowledge.Applies{Signature: knowledge.CheckSignature("abc123")}
	otherProblem := problem("typecheck", "src/notes.ts:3: Cannot find name 'list'.")

	for _, tc := range []struct {
		name    string
		applies knowledge.Applies
		// seen are what the run observed, in order, before End.
		seen []knowledge.Observation
		want string
	}{
		{"resolved: the stage ran clean", buildLesson,
			[]knowledge.Observation{built(false, []string{"install", "typecheck", "test"}, problem("test", "1 failing"))}, knowledge.OutcomeResolved},
		{"resolved: the build passed", stageLesson,
			[]knowledge.Observation{built(true, []string{"install", "typecheck"})}, knowledge.OutcomeResolved},
		{"recurred: the same signature failed again", buildLesson,
			[]knowledge.Observation{built(false, []string{"install", "typecheck"},
				problem("typecheck", "src/tags.ts:40: Property 'label' does not exist on type 'Note'."))}, knowledge.OutcomeRecurred},
		{"blocked: the build stopped before the stage", buildLesson,
			[]knowledge.Observation{built(false, []string{"install"}, problem("install", "npm ci failed"))}, knowledge.OutcomeBlocked},
		{"unrelated: another failure at its stage", buildLesson,
			[]knowledge.Observation{built(false, []string{"install", "typecheck"}, otherProblem)}, knowledge.OutcomeUnrelated},
		{"a build never closes a check serving: inconclusive at the end", checkLesson,
			[]knowledge.Observation{built(true, []string{"install"})}, knowledge.OutcomeInconclusive},
		{"check resolved: the same content passed", checkLesson,
			[]knowledge.Observation{built(true, []string{"install"}), checked(knowledge.ExampleResult{ID: "0001-tags-c1", Hash: "abc123", Passed: true})}, knowledge.OutcomeResolved},
		{"check recurred: the same content failed", checkLesson,
			[]knowledge.Observation{checked(knowledge.ExampleResult{ID: "0001-tags-c2", Hash: "abc123", Failure: "status 500"})}, knowledge.OutcomeRecurred},
		{"check unrelated: another example failed", checkLesson,
			[]knowledge.Observation{checked(knowledge.ExampleResult{ID: "0002-x-c1", Hash: "fff", Failure: "status 404"})}, knowledge.OutcomeUnrelated},
		{"check inconclusive: its example did not run", checkLesson,
			[]knowledge.Observation{checked(knowledge.ExampleResult{ID: "0002-x-c1", Hash: "fff", Passed: true})}, knowledge.OutcomeInconclusive},
		{"a lesson naming neither stage nor signature is inconclusive", knowledge.Applies{},
			[]knowledge.Observation{built(false, []string{"install"}, problem("install", "x"))}, knowledge.OutcomeInconclusive},
		{"none: the turn ended with no build", buildLesson, nil, knowledge.OutcomeNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, recordFirst := range []bool{true, false} {
				s := openLessonStore(t)
				sv := knowledge.NewServings(s.store.DB(), func() time.Time { return s.at })
				id := s.add("Declare the tag field on the Note type before using it.", tc.applies)
				served := []knowledge.Served{{Lesson: s.get(id), Reason: knowledge.ReasonWords}}
				// The turn's builds come before the turn reports what it
				// delivered; a serving recorded first is closed as they come.
				if recordFirst {
					if err := sv.Record(ctx, servedRun, 7, served, nil); err != nil {
						t.Fatal(err)
					}
				}
				for _, o := range tc.seen {
					if err := sv.Close(ctx, "notes", servedRun, o); err != nil {
						t.Fatal(err)
					}
				}
				if !recordFirst {
					if err := sv.Record(ctx, servedRun, 7, served, nil); err != nil {
						t.Fatal(err)
					}
				}
				if err := sv.End(ctx, servedRun); err != nil {
					t.Fatal(err)
				}
				got := servingsOf(t, sv, servedRun)
				if len(got) != 1 {
					t.Fatalf("%d servings", len(got))
				}
				g := got[0]
				if g.Outcome != tc.want || g.ClosedByRun != servedRun || g.ClosedAt.IsZero() || g.LessonID != id || g.ContextID != 7 || g.Reason != "words" {
					t.Fatalf("recorded first %v: %+v, want outcome %s", recordFirst, g, tc.want)
				}
			}
		})
	}
}

func TestAServingIsClosedOnce(t *testing.T) {
	ctx := context.Background()
	s := openLessonStore(t)
	sv := knowledge.NewServings(s.store.DB(), func() time.Time { return s.at })
	sig := build.Signature("typecheck", typeMessage)
	id := s.add("Declare the tag field on the Note type before using it.", knowledge.Applies{Stage: "typecheck", Signature: sig})
	if err := sv.Record(ctx, servedRun, 0, []knowledge.Served{{Lesson: s.get(id), Reason: "related:src/tags.ts"}}, nil); err != nil {
		t.Fatal(err)
	}
	// The first build closes it; the later ones, and the end, change nothing.
	if err := sv.Close(ctx, "notes", servedRun, built(false, []string{"install", "typecheck"},
		problem("typecheck", typeMessage))); err != nil {
		t.Fatal(err)
	}
	if err := sv.Close(ctx, "notes", servedRun, built(true, []string{"install", "typecheck"})); err != nil {
		t.Fatal(err)
	}
	if err := sv.End(ctx, servedRun); err != nil {
		t.Fatal(err)
	}
	got := servingsOf(t, sv, servedRun)
	if len(got) != 1 || got[0].Outcome != knowledge.OutcomeRecurred || got[0].Reason != "related" || got[0].RelatedFile != "src/tags.ts" || got[0].ContextID != 0 {
		t.Fatalf("servings: %+v", got)
	}

	for _, tc := range []struct{ name, stmt string }{
		{"outcome", `UPDATE servings SET outcome = 'resolved' WHERE id = ?`},
		{"closed_by_run", `UPDATE servings SET closed_by_run = 'other' WHERE id = ?`},
		{"lesson", `UPDATE servings SET lesson_id = 2 WHERE id = ?`},
		{"delete", `DELETE FROM servings WHERE id = ?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.store.DB().Write.ExecContext(ctx, tc.stmt, got[0].ID); err == nil {
				t.Fatalf("%s was allowed", tc.stmt)
			}
		})
	}
}

func TestALessonTheBudgetCutIsKeptNotIncludedAndNeverScored(t *testing.T) {
	ctx := context.Background()
	sig := build.Signature("typecheck", typeMessage)
	for _, recordFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("recorded before the builds: %v", recordFirst), func(t *testing.T) {
			s := openLessonStore(t)
			sv := knowledge.NewServings(s.store.DB(), func() time.Time { return s.at })
			read := s.add("Declare the tag field on the Note type before using it.", knowledge.Applies{Stage: "typecheck", Signature: sig})
			cut := s.add("Declare every field of the Note type in src/types.ts.", knowledge.Applies{Stage: "typecheck", Signature: sig})
			record := func() {
				if err := sv.Record(ctx, servedRun, 7, []knowledge.Served{{Lesson: s.get(read), Reason: knowledge.ReasonWords}},
					[]knowledge.Served{{Lesson: s.get(cut), Reason: knowledge.ReasonWords}}); err != nil {
					t.Fatal(err)
				}
			}
			if recordFirst {
				record()
			}
			// The build meets both lessons' failure, and the checks run.
			for _, o := range []knowledge.Observation{built(false, []string{"install", "typecheck"}, problem("typecheck", typeMessage)),
				checked(knowledge.ExampleResult{ID: "0001-tags-c1", Hash: "abc123", Passed: true})} {
				if err := sv.Close(ctx, "notes", servedRun, o); err != nil {
					t.Fatal(err)
				}
			}
			if !recordFirst {
				record()
			}
			if err := sv.End(ctx, servedRun); err != nil {
				t.Fatal(err)
			}
			got := servingsOf(t, sv, servedRun)
			if len(got) != 2 || got[0].LessonID != read || !got[0].Included || got[0].Outcome != knowledge.OutcomeRecurred ||
				got[1].LessonID != cut || got[1].Included || got[1].Outcome != "" || !got[1].ClosedAt.IsZero() || got[1].ContextID != 7 {
				t.Fatalf("servings: %+v", got)
			}
			// Nothing scores the cut one or makes it included after the fact.
			for _, stmt := range []string{
				`UPDATE servings SET included = 1 WHERE id = ?`,
				`UPDATE servings SET outcome = 'recurred', closed_at = 1, closed_by_run = 'x' WHERE id = ?`,
			} {
				if _, err := s.store.DB().Write.ExecContext(ctx, stmt, got[1].ID); err == nil {
					t.Errorf("%s was allowed", stmt)
				}
			}
			if _, err := s.store.DB().Write.ExecContext(ctx, `UPDATE servings SET included = 0 WHERE id = ?`, got[0].ID); err == nil {
				t.Errorf("a served lesson was made not included")
			}
		})
	}
}

func TestServingsRecordRefuses(t *testing.T) {
	ctx := context.Background()
	s := openLessonStore(t)
	sv := knowledge.NewServings(s.store.DB(), func() time.Time { return s.at })
	id := s.add("Declare the tag field on the Note type before using it.", knowledge.Applies{})
	for _, tc := range []struct {
		name   string
		run    string
		served []knowledge.Served
	}{
		{"no run", "", []knowledge.Served{{Lesson: s.get(id), Reason: knowledge.ReasonPinned}}},
		{"no lesson", servedRun, []knowledge.Served{{Reason: knowledge.ReasonPinned}}},
		{"an unknown reason", servedRun, []knowledge.Served{{Lesson: s.get(id), Reason: "liked"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := sv.Record(ctx, tc.run, 0, tc.served, nil)
			if e, ok := errors.AsType[*refusal.Error](err); !ok || e.Code != refusal.Invalid {
				t.Fatalf("Record: %v", err)
			}
		})
	}
	if got := servingsOf(t, sv, servedRun); len(got) != 0 {
		t.Fatalf("servings written: %+v", got)
	}
}
