package knowledge_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"autoapp/intent/refusal"
	"autoapp/knowledge"
)

// lessonStore is a real knowledge store in a temporary folder, opened as
// serve opens it, with a clock that moves only when told.
type lessonStore struct {
	t       testing.TB
	store   *knowledge.Store
	lessons *knowledge.Lessons
	cases   *knowledge.Cases
	at      time.Time
}

func openLessonStore(t testing.TB) *lessonStore {
	t.Helper()
	s := &lessonStore{t: t, at: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	now := func() time.Time { return s.at }
	store, err := knowledge.Open(filepath.Join(t.TempDir(), "knowledge.sqlite"), now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	s.store = store
	s.lessons = knowledge.NewLessons(store.DB(), now, knowledge.Running{})
	s.cases = knowledge.NewCases(store.DB(), now)
	return s
}

// add keeps text as a provisional lesson of case 1 applying as given.
func (s *lessonStore) add(text string, applies knowledge.Applies) int64 {
	s.t.Helper()
	s.at = s.at.Add(time.Second)
	id, err := s.lessons.Add(context.Background(), knowledge.Lesson{Text: text, CaseID: 1, Applies: applies})
	if err != nil {
		s.t.Fatalf("add %q: %v", text, err)
	}
	return id
}

// write keeps text as a curated lesson, confirmed by "ann".
func (s *lessonStore) write(text string, applies knowledge.Applies) int64 {
	s.t.Helper()
	s.at = s.at.Add(time.Second)
	id, err := s.lessons.Write(context.Background(), text, "ann", applies)
	if err != nil {
		s.t.Fatalf("write %q: %v", text, err)
	}
	return id
}

func (s *lessonStore) get(id int64) knowledge.Lesson {
	s.t.Helper()
	l, err := s.lessons.Get(context.Background(), id)
	if err != nil {
		s.t.Fatalf("get lesson %d: %v", id, err)
	}
	return l
}

func TestLessonTextIsNeverEditedInPlace(t *testing.T) {
	s := openLessonStore(t)
	id := s.add("Run the migrations before seeding the items table.", knowledge.Applies{Stage: "test", Files: []string{"db/seed.ts"}})
	for _, tc := range []struct{ name, stmt string }{
		{"text", `UPDATE lessons SET text = 'something else' WHERE id = ?`},
		{"origin", `UPDATE lessons SET origin = 'curated' WHERE id = ?`},
		{"case", `UPDATE lessons SET case_id = 2 WHERE id = ?`},
		{"created_at", `UPDATE lessons SET created_at = 0 WHERE id = ?`},
		{"applies", `UPDATE lessons SET applies_files = '[]' WHERE id = ?`},
		{"method_unclear", `UPDATE lessons SET method_unclear = 1 WHERE id = ?`},
		{"delete", `DELETE FROM lessons WHERE id = ?`},
		{"delete a file", `DELETE FROM lesson_files WHERE lesson_id = ?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.store.DB().Write.Exec(tc.stmt, id); err == nil {
				t.Fatalf("%s was allowed", tc.stmt)
			}
		})
	}
	if got := s.get(id); got.Text != "Run the migrations before seeding the items table." || got.Origin != knowledge.OriginDistilled {
		t.Fatalf("lesson changed: %+v", got)
	}
	// The bookkeeping stays writable.
	if _, err := s.store.DB().Write.Exec(`UPDATE lessons SET flags = '["recurring"]' WHERE id = ?`, id); err != nil {
		t.Fatalf("flags are writable: %v", err)
	}
}

func TestARetiredLessonStaysRetired(t *testing.T) {
	s := openLessonStore(t)
	id := s.add("Declare every route in the router file before using it.", knowledge.Applies{})
	if err := s.lessons.Retire(context.Background(), id, "ann"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.store.DB().Write.Exec(`UPDATE lessons SET status = 'provisional', retired_at = NULL WHERE id = ?`, id); err == nil {
		t.Fatal("a retired lesson was brought back")
	}
	if _, err := s.store.DB().Write.Exec(`UPDATE lessons SET retired_by = 'bob' WHERE id = ?`, id); err == nil {
		t.Fatal("who retired a lesson was changed")
	}
	if got := s.get(id); got.RetiredBy != "ann" {
		t.Fatalf("retired by %q", got.RetiredBy)
	}
}

func TestCheckLessonTextRefusesPathsPortsAndSecrets(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		refused    bool
	}{
		{"plain lesson", "Add the column in a migration before the handler reads it.", false},
		{"an application route", "The /api/items route must answer an empty list, not null.", false},
		{"a relative file", "Export the handler from src/routes/items.ts before registering it.", false},
		{"a url without a port", "Read the docs at https://example.com/guide before upgrading.", false},
		{"a word password", "Hash the password field before storing it.", false},
		{"home path", "The build reads /home/ann/project/.env first.", true},
		{"tmp path", "Clear /tmp/autoapp-build before building.", true},
		{"users path", "Config lives in /Users/ann/Library.", true},
		{"home-relative path", "Edit ~/.npmrc to add the registry.", true},
		{"windows drive", `The cache is in C:\Users\ann\AppData.`, true},
		{"localhost with port", "The preview listens on localhost:3000.", true},
		{"ip with port", "Point the client at 127.0.0.1:8080.", true},
		{"host with port", "Call host:1234 for the data.", true},
		{"url with port", "Open http://devbox.local:5173/ to see it.", true},
		{"openai key", "Use the key sk-abcdefghijklmnopqrstuvwx for the model.", true},
		{"password assignment", "Set password=hunter2 in the env file.", true},
		{"api_key", "Pass the api_key header on every call.", true},
		{"long hex", "The token is 0123456789abcdef0123456789abcdef01.", true},
		{"long base64", "Use dGhpcyBpcyBhIHNlY3JldCBrZXkgdGhhdDEyMzQ1Ng== as the key.", true},
		{"github token", "Push with ghp_abcdefghijklmnopqrstuvwxyz0123.", true},
		{"private key", "-----BEGIN RSA PRIVATE KEY----- goes in the file.", true},
		{"empty", "   ", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := knowledge.CheckLessonText(tc.text)
			if !tc.refused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			wantCode(t, err, refusal.Invalid)
		})
	}
	t.Run("add refuses too", func(t *testing.T) {
		s := openLessonStore(t)
		_, err := s.lessons.Add(context.Background(), knowledge.Lesson{Text: "Listen on localhost:3000.", CaseID: 1})
		wantCode(t, err, refusal.Invalid)
		if got, _ := s.lessons.List(context.Background(), knowledge.LessonQuery{}); len(got) != 0 {
			t.Fatalf("a refused lesson was kept: %+v", got)
		}
	})
}

func TestReplaceSupersedesInOneTransaction(t *testing.T) {
	s := openLessonStore(t)
	ctx := context.Background()
	old := s.add("Seed the items table after the migration.", knowledge.Applies{Stage: "test", Files: []string{"db/seed.ts"}, Signature: "sig-1"})
	newID, err := s.lessons.Replace(ctx, old, "Run migrations, then seed the items table, in the same script.", "bob")
	if err != nil {
		t.Fatal(err)
	}
	o, n := s.get(old), s.get(newID)
	if o.Status != knowledge.LessonSuperseded || o.SupersededBy != newID || o.Text != "Seed the items table after the migration." {
		t.Fatalf("old lesson: %+v", o)
	}
	if n.Status != knowledge.LessonConfirmed || n.Origin != knowledge.OriginCurated || n.ConfirmedBy != "bob" ||
		n.CaseID != o.CaseID || n.Applies.Signature != "sig-1" || n.Applies.Files[0] != "db/seed.ts" || n.Supersedes != old {
		t.Fatalf("new lesson: %+v", n)
	}
	t.Run("a superseded lesson cannot be replaced again", func(t *testing.T) {
		_, err := s.lessons.Replace(ctx, old, "Another seeding lesson for the items table.", "bob")
		wantCode(t, err, refusal.Conflict)
	})
	t.Run("a refused text leaves the old lesson as it was", func(t *testing.T) {
		_, err := s.lessons.Replace(ctx, newID, "Seed through localhost:5432 first.", "bob")
		wantCode(t, err, refusal.Invalid)
		if got := s.get(newID); got.Status != knowledge.LessonConfirmed || got.SupersededBy != 0 {
			t.Fatalf("the old lesson changed: %+v", got)
		}
		all, err := s.lessons.List(ctx, knowledge.LessonQuery{Status: knowledge.LessonConfirmed})
		if err != nil || len(all) != 1 {
			t.Fatalf("confirmed lessons: %+v, %v", all, err)
		}
	})
	t.Run("a missing lesson", func(t *testing.T) {
		_, err := s.lessons.Replace(ctx, 999, "Something about seeding the table.", "bob")
		wantCode(t, err, refusal.NotFound)
	})
}

func TestConfirmAndRetire(t *testing.T) {
	s := openLessonStore(t)
	ctx := context.Background()
	id := s.add("Import the router before mounting routes on it.", knowledge.Applies{})

	if err := s.lessons.Confirm(ctx, id, ""); err == nil {
		t.Fatal("confirmed without a name")
	}
	s.at = s.at.Add(time.Hour)
	if err := s.lessons.Confirm(ctx, id, "ann"); err != nil {
		t.Fatal(err)
	}
	l := s.get(id)
	if l.Status != knowledge.LessonConfirmed || l.ConfirmedBy != "ann" || !l.ConfirmedAt.Equal(s.at) {
		t.Fatalf("confirmed: %+v", l)
	}
	wantCode(t, s.lessons.Confirm(ctx, id, "ann"), refusal.Conflict)

	// A flagged confirmed lesson is confirmed again, which clears its flags.
	if err := s.lessons.Flag(ctx, id, knowledge.FlagAutoappUpgraded); err != nil {
		t.Fatal(err)
	}
	if flagged, _ := s.lessons.List(ctx, knowledge.LessonQuery{NeedsReview: true}); len(flagged) != 1 {
		t.Fatalf("needs review: %+v", flagged)
	}
	if err := s.lessons.Confirm(ctx, id, "bob"); err != nil {
		t.Fatal(err)
	}
	if l := s.get(id); l.NeedsReview() || l.ConfirmedBy != "bob" {
		t.Fatalf("reconfirmed: %+v", l)
	}

	if err := s.lessons.Retire(ctx, id, "ann"); err != nil {
		t.Fatal(err)
	}
	if l := s.get(id); l.Status != knowledge.LessonRetired || !l.RetiredAt.Equal(s.at) {
		t.Fatalf("retired: %+v", l)
	}
	wantCode(t, s.lessons.Retire(ctx, id, "ann"), refusal.Conflict)
	wantCode(t, s.lessons.Confirm(ctx, id, "ann"), refusal.Conflict)
	wantCode(t, s.lessons.Retire(ctx, 999, "ann"), refusal.NotFound)
	if listed, _ := s.lessons.List(ctx, knowledge.LessonQuery{}); len(listed) != 0 {
		t.Fatalf("a retired lesson is listed by default: %+v", listed)
	}
	if listed, _ := s.lessons.List(ctx, knowledge.LessonQuery{Status: knowledge.LessonRetired}); len(listed) != 1 {
		t.Fatalf("retired lessons: %+v", listed)
	}
	_, err := s.lessons.List(ctx, knowledge.LessonQuery{Status: "gone"})
	wantCode(t, err, refusal.Invalid)
}

// allowedLessonMoves is the table of a lesson's moves, written out again
// here so the test does not read the code's own. Confirming a confirmed
// lesson again is allowed only while it needs review.
var allowedLessonMoves = map[[2]string]bool{
	{knowledge.LessonProvisional, knowledge.LessonConfirmed}:  true,
	{knowledge.LessonProvisional, knowledge.LessonRetired}:    true,
	{knowledge.LessonProvisional, knowledge.LessonSuperseded}: true,
	{knowledge.LessonConfirmed, knowledge.LessonRetired}:      true,
	{knowledge.LessonConfirmed, knowledge.LessonSuperseded}:   true,
}

func TestLessonMovesEveryPair(t *testing.T) {
	ctx := context.Background()
	statuses := []string{knowledge.LessonProvisional, knowledge.LessonConfirmed, knowledge.LessonRetired, knowledge.LessonSuperseded}
	// move makes each move through the operation that makes it.
	move := func(s *lessonStore, id int64, to string) error {
		switch to {
		case knowledge.LessonConfirmed:
			return s.lessons.Confirm(ctx, id, "ann")
		case knowledge.LessonRetired:
			return s.lessons.Retire(ctx, id, "ann")
		case knowledge.LessonSuperseded:
			_, err := s.lessons.Replace(ctx, id, "Declare the handler's type before the route uses it.", "ann")
			return err
		}
		return nil
	}
	for _, from := range statuses {
		for _, to := range statuses[1:] {
			t.Run(from+" to "+to, func(t *testing.T) {
				s := openLessonStore(t)
				id := s.add("Import the router before mounting routes on it.", knowledge.Applies{})
				if from != knowledge.LessonProvisional {
					if err := move(s, id, from); err != nil {
						t.Fatal(err)
					}
				}
				s.at = s.at.Add(time.Hour)
				err := move(s, id, to)
				got := s.get(id)
				if !allowedLessonMoves[[2]string{from, to}] {
					wantCode(t, err, refusal.Conflict)
					if got.Status != from {
						t.Fatalf("a refused move left it %s, want %s", got.Status, from)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case got.Status != to,
					to == knowledge.LessonConfirmed && (got.ConfirmedBy != "ann" || !got.ConfirmedAt.Equal(s.at)),
					to == knowledge.LessonRetired && !got.RetiredAt.Equal(s.at),
					to == knowledge.LessonSuperseded && got.SupersededBy == 0:
					t.Fatalf("after the move: %+v", got)
				}
			})
		}
	}
}
