package knowledge_test

import (
	"context"
	"slices"
	"testing"

	"autoapp/knowledge"
)

// versions are the corpus versions that name lesson id, oldest first.
func (s *lessonStore) versions(id int64) []knowledge.CorpusVersion {
	s.t.Helper()
	vs, err := s.lessons.Versions(context.Background(), id)
	if err != nil {
		s.t.Fatal(err)
	}
	return vs
}

func (s *lessonStore) corpusVersion() int64 {
	s.t.Helper()
	v, err := s.lessons.CorpusVersion(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	return v
}

// Every review action, and every lesson the distiller keeps, writes one
// corpus version, numbered up from 1, with who made it and what it was; a
// lesson says the version it entered the index at and the one it left it
// at.
func TestEveryChangeToTheLessonsWritesOneCorpusVersion(t *testing.T) {
	ctx := context.Background()
	s := openLessonStore(t)
	if v := s.corpusVersion(); v != 0 {
		t.Fatalf("a new store is at corpus version %d, want 0", v)
	}
	step := func(want int64, what string) {
		t.Helper()
		if v := s.corpusVersion(); v != want {
			t.Fatalf("after %s the corpus is at version %d, want %d", what, v, want)
		}
	}

	distilled := s.distilledFromEdits(t, "source.edit main.go").LessonID
	step(1, "a distillation")
	written := s.write("Keep each handler in its own file.", knowledge.Applies{})
	step(2, "a written lesson")
	if err := s.lessons.Confirm(ctx, distilled, "ann"); err != nil {
		t.Fatal(err)
	}
	step(3, "a confirmation")
	replacement, err := s.lessons.Replace(ctx, written, "Keep each route's handler in its own file.", "bob")
	if err != nil {
		t.Fatal(err)
	}
	step(4, "a replacement")
	if err := s.lessons.Flag(ctx, distilled, knowledge.FlagRecurring); err != nil {
		t.Fatal(err)
	}
	if err := s.lessons.Retire(ctx, distilled, "cy"); err != nil {
		t.Fatal(err)
	}
	step(5, "a retirement")
	// Retiring records who and when, and clears the flag, as confirming does.
	if l := s.get(distilled); l.RetiredBy != "cy" || l.RetiredAt.IsZero() || len(l.Flags) != 0 {
		t.Errorf("the retired lesson: by %q at %v, flags %v; want cy, a time and no flag", l.RetiredBy, l.RetiredAt, l.Flags)
	}
	// A refused action writes none.
	if err := s.lessons.Retire(ctx, distilled, "cy"); err == nil {
		t.Fatal("retiring a retired lesson was not refused")
	}
	step(5, "a refused retirement")

	type seen struct {
		version       int64
		actor, change string
	}
	got := func(id int64) []seen {
		var out []seen
		for _, v := range s.versions(id) {
			if v.At.IsZero() || v.Summary == "" {
				t.Errorf("version %d has no time or summary: %+v", v.Version, v)
			}
			out = append(out, seen{v.Version, v.Actor, v.Change})
		}
		return out
	}
	for _, tc := range []struct {
		name          string
		id            int64
		want          []seen
		entered, left int64
	}{
		{"the distilled lesson", distilled, []seen{{1, "distiller", "distill"}, {3, "ann", "confirm"}, {5, "cy", "retire"}}, 1, 5},
		{"the written lesson", written, []seen{{2, "ann", "write"}, {4, "bob", "replace"}}, 2, 4},
		{"its replacement", replacement, []seen{{4, "bob", "replace"}}, 4, 0},
	} {
		if g := got(tc.id); !slices.Equal(g, tc.want) {
			t.Errorf("%s's versions = %v, want %v", tc.name, g, tc.want)
		}
		l := s.get(tc.id)
		if l.EnteredVersion != tc.entered || l.LeftVersion != tc.left {
			t.Errorf("%s entered at %d and left at %d, want %d and %d", tc.name, l.EnteredVersion, l.LeftVersion, tc.entered, tc.left)
		}
	}
	if l := s.get(written); !l.InIndexAt(3) || l.InIndexAt(4) || l.InIndexAt(1) {
		t.Errorf("the written lesson (versions 2 to 4) in the index at 1, 3, 4: %v %v %v", l.InIndexAt(1), l.InIndexAt(3), l.InIndexAt(4))
	}
	if _, err := s.store.DB().Write.ExecContext(ctx, `UPDATE corpus_versions SET actor = 'mallory'`); err == nil {
		t.Error("a corpus version was changed")
	}
}

// A distillation that supersedes a provisional lesson is one version: the
// new lesson enters the index at it and the old one leaves at it.
func TestASupersessionIsOneCorpusVersion(t *testing.T) {
	ctx := context.Background()
	s := openLessonStore(t)
	old := s.distilledFromEdits(t).LessonID
	c := s.resolvedCase("notes")
	a := &answer{json: `{"explanation": "The same unused import.", "knowable": "same_as",
		"lesson": "Remove an import the moment its last use is deleted.", "same_as": 1}`}
	out, err := s.lessons.Distill(ctx, c, a.ask)
	if err != nil || out.LessonID == 0 {
		t.Fatalf("distill: %+v %v", out, err)
	}
	if v := s.corpusVersion(); v != 2 {
		t.Fatalf("the corpus is at %d after a distillation and a supersession, want 2", v)
	}
	if o, n := s.get(old), s.get(out.LessonID); o.LeftVersion != 2 || n.EnteredVersion != 2 || o.Status != knowledge.LessonSuperseded {
		t.Errorf("old %s left at %d, new entered at %d; want superseded, 2 and 2", o.Status, o.LeftVersion, n.EnteredVersion)
	}
	if vs := s.versions(out.LessonID); len(vs) != 1 || vs[0].Change != knowledge.ChangeSupersede || vs[0].Actor != knowledge.ActorDistiller {
		t.Errorf("the new lesson's versions = %+v", vs)
	}
}

// A turn's contexts row, and a case the turn opened, name the corpus
// version the turn was served from; a case opened outside a recorded turn
// names the version in force when it opened.
func TestTurnsAndCasesNameTheCorpusVersionTheyWereServedFrom(t *testing.T) {
	ctx := context.Background()
	s := openLessonStore(t)
	s.write("Keep each handler in its own file.", knowledge.Applies{})
	s.write("Name a migration by its number.", knowledge.Applies{})

	turnID, err := s.store.RecordTurn(ctx, knowledge.Turn{AppID: "notes", RunID: "run-7", Kind: knowledge.TurnBuilder,
		Instructions: "build", Request: "add tags", Documents: []knowledge.DeliveredDoc{{Ref: "lessons:notes", Text: "- lesson 1"}}})
	if err != nil {
		t.Fatal(err)
	}
	// A version written after the turn was served does not move its row.
	s.write("Keep the lockfile.", knowledge.Applies{})
	rows, err := s.store.Turns(ctx, knowledge.TurnQuery{})
	if err != nil || len(rows) != 1 || rows[0].CorpusVersion != 2 {
		t.Fatalf("the turn's row names corpus version %+v (%v), want 2", rows, err)
	}

	obs := failedBuild("notes", "run-7", problem("compile", `"os" imported and not used`))
	obs.ContextID = turnID
	opened, _, err := s.cases.Build(ctx, obs)
	if err != nil || len(opened) != 1 {
		t.Fatalf("open a case: %v %v", opened, err)
	}
	if c := s.caseOf(opened[0]); c.CorpusVersion != 2 {
		t.Errorf("the turn's case names corpus version %d, want the turn's 2", c.CorpusVersion)
	}
	outside, _, err := s.cases.Build(ctx, failedBuild("notes", "owner-1", problem("vet", "printf: wrong verb")))
	if err != nil || len(outside) != 1 {
		t.Fatalf("open a case: %v %v", outside, err)
	}
	if c := s.caseOf(outside[0]); c.CorpusVersion != 3 {
		t.Errorf("a case outside a turn names corpus version %d, want the one in force, 3", c.CorpusVersion)
	}
}

func (s *lessonStore) caseOf(id int64) knowledge.Case {
	s.t.Helper()
	c, err := s.cases.Get(context.Background(), id)
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}
