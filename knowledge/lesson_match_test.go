package knowledge_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"autoapp/knowledge"
)

func servedIDs(t *testing.T, s *lessonStore, q knowledge.MatchQuery) ([]int64, []knowledge.Served) {
	t.Helper()
	served, err := s.lessons.Match(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(served))
	for i, sv := range served {
		ids[i] = sv.Lesson.ID
	}
	return ids, served
}

func TestMatch(t *testing.T) {
	ctx := context.Background()

	t.Run("one shared word is not served, two are", func(t *testing.T) {
		s := openLessonStore(t)
		one := s.write("Every migration needs a matching down file.", knowledge.Applies{})
		two := s.write("A tags filter needs an index on the tags column.", knowledge.Applies{})
		ids, _ := servedIDs(t, s, knowledge.MatchQuery{Words: "Add tags to notes and a filter by tag"})
		if !slices.Equal(ids, []int64{two}) {
			t.Fatalf("served %v, want only %d (not %d)", ids, two, one)
		}
		ids, _ = servedIDs(t, s, knowledge.MatchQuery{Words: "list the notes"})
		if len(ids) != 0 {
			t.Fatalf("served %v for words sharing nothing twice", ids)
		}
	})

	t.Run("file overlap comes before words", func(t *testing.T) {
		s := openLessonStore(t)
		words := s.write("A tags filter needs an index on the tags column.", knowledge.Applies{})
		related := s.add("Keep the notes query in one place.", knowledge.Applies{Files: []string{"src/notes.ts"}})
		ids, served := servedIDs(t, s, knowledge.MatchQuery{Files: []string{"src/notes.ts"}, Words: "tags filter"})
		if !slices.Equal(ids, []int64{related, words}) {
			t.Fatalf("served %v, want %v", ids, []int64{related, words})
		}
		if served[0].Reason != "related:src/notes.ts" || served[0].Label != "(provisional)" ||
			served[0].Line() != fmt.Sprintf("[lesson %d] Keep the notes query in one place. (provisional)", related) {
			t.Fatalf("related serving: %+v %q", served[0], served[0].Line())
		}
		if served[1].Reason != knowledge.ReasonWords || served[1].Label != "" {
			t.Fatalf("words serving: %+v", served[1])
		}
	})

	t.Run("at most two related", func(t *testing.T) {
		s := openLessonStore(t)
		for i := range 3 {
			s.write(fmt.Sprintf("Lesson %d about the notes file.", i), knowledge.Applies{Files: []string{"src/notes.ts"}})
		}
		_, served := servedIDs(t, s, knowledge.MatchQuery{Files: []string{"src/notes.ts"}})
		if len(served) != 2 {
			t.Fatalf("served %d related lessons, want 2", len(served))
		}
	})

	t.Run("pinned first, at most three, never twice", func(t *testing.T) {
		s := openLessonStore(t)
		pinned := s.write("Tags filter work keeps the tags column indexed.", knowledge.Applies{Files: []string{"src/tags.ts"}})
		if err := s.lessons.Pin(ctx, pinned, true); err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			s.write(fmt.Sprintf("Tags filter lesson number %d.", i), knowledge.Applies{})
		}
		ids, served := servedIDs(t, s, knowledge.MatchQuery{Files: []string{"src/tags.ts"}, Words: "tags filter"})
		if len(ids) != 3 || ids[0] != pinned || served[0].Reason != knowledge.ReasonPinned {
			t.Fatalf("served %v (%+v), want the pinned %d first of three", ids, served, pinned)
		}
		if slices.Contains(ids[1:], pinned) {
			t.Fatalf("served the pinned lesson twice: %v", ids)
		}
	})

	t.Run("retired and superseded never, review labelled", func(t *testing.T) {
		s := openLessonStore(t)
		retired := s.write("A tags filter needs an index on the tags column.", knowledge.Applies{Files: []string{"src/tags.ts"}})
		if err := s.lessons.Pin(ctx, retired, true); err != nil {
			t.Fatal(err)
		}
		if err := s.lessons.Retire(ctx, retired, "ann"); err != nil {
			t.Fatal(err)
		}
		old := s.add("The tags filter reads tags lowercased.", knowledge.Applies{})
		newer, err := s.lessons.Replace(ctx, old, "The tags filter compares tags lowercased on both sides.", "ann")
		if err != nil {
			t.Fatal(err)
		}
		flagged := s.add("Filter tags in SQL, never in the handler, for tags lists.", knowledge.Applies{})
		if err := s.lessons.Flag(ctx, flagged, knowledge.FlagRecurring); err != nil {
			t.Fatal(err)
		}
		ids, served := servedIDs(t, s, knowledge.MatchQuery{Files: []string{"src/tags.ts"}, Words: "tags filter"})
		if slices.Contains(ids, retired) || slices.Contains(ids, old) {
			t.Fatalf("served %v, which holds a retired (%d) or superseded (%d) lesson", ids, retired, old)
		}
		if !slices.Equal(ids, []int64{newer, flagged}) {
			t.Fatalf("served %v, want %v", ids, []int64{newer, flagged})
		}
		if served[1].Label != "(provisional) (needs review: recurring)" {
			t.Fatalf("label %q", served[1].Label)
		}
	})

	t.Run("hints name exactly the stage", func(t *testing.T) {
		s := openLessonStore(t)
		compile := s.add("A package imported and never used fails compile.", knowledge.Applies{Stage: "compile"})
		s.add("An unused import is flagged by vet too.", knowledge.Applies{Stage: "vet"})
		s.add("An unused import hides elsewhere.", knowledge.Applies{})
		hints, err := s.lessons.Hints(ctx, "compile", []string{`main.go:3: "os" imported and not used`})
		if err != nil {
			t.Fatal(err)
		}
		if len(hints) != 1 || hints[0].Lesson.ID != compile || hints[0].Reason != knowledge.ReasonHint {
			t.Fatalf("hints %+v, want only %d", hints, compile)
		}
	})
}

// BenchmarkMatch matches a turn against 100,000 lessons.
func BenchmarkMatch(b *testing.B) {
	s := openLessonStore(b)
	ctx := context.Background()
	words := []string{"tags", "filter", "notes", "items", "migration", "index", "column", "route",
		"handler", "preview", "build", "schema", "query", "table", "seed", "router", "import", "export"}
	tx, err := s.store.DB().Write.Beginx()
	if err != nil {
		b.Fatal(err)
	}
	for i := range 100_000 {
		text := fmt.Sprintf("Lesson %d: the %s %s needs the %s %s.", i,
			words[i%len(words)], words[(i/3)%len(words)], words[(i/7)%len(words)], words[(i/11)%len(words)])
		files := fmt.Sprintf(`["src/file%d.ts"]`, i%5000)
		status := "confirmed"
		if i%2 == 0 {
			status = "provisional"
		}
		if _, err := tx.Exec(`INSERT INTO lessons (text, status, origin, case_id, applies_stage, applies_files, created_at, confirmed_at, confirmed_by)
			VALUES (?, ?, 'distilled', ?, 'test', ?, 0, CASE WHEN ? = 'confirmed' THEN 0 END, CASE WHEN ? = 'confirmed' THEN 'ann' END)`,
			text, status, i+1, files, status, status); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	q := knowledge.MatchQuery{
		Files: []string{"src/file17.ts", "src/file4242.ts"},
		Words: "Add tags to notes and a filter by tag; the notes table gets a tags column with an index",
		Stage: "test",
	}
	b.ResetTimer()
	for b.Loop() {
		served, err := s.lessons.Match(ctx, q)
		if err != nil || len(served) != 3 {
			b.Fatalf("served %d, %v", len(served), err)
		}
	}
}
