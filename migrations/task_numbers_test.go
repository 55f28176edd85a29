package migrations

import (
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/database/sqlite3"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jmoiron/sqlx"
)

// migrateTo brings the intents store at path to version, no further.
func migrateTo(t *testing.T, path string, version uint) {
	t.Helper()
	w, err := sqlx.Open("sqlite3", dsn(path, true))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	sub, err := fs.Sub(files, string(Intents))
	if err != nil {
		t.Fatal(err)
	}
	src, err := iofs.New(sub, ".")
	if err != nil {
		t.Fatal(err)
	}
	drv, err := sqlite3.WithInstance(w.DB, &sqlite3.Config{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := migrate.NewWithInstance("iofs", src, "sqlite3", drv)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Migrate(version); err != nil {
		t.Fatal(err)
	}
}

func TestTaskNumbersAreFilledFromTheTasksBefore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intents.sqlite")
	migrateTo(t, path, 12)
	old, err := sqlx.Open("sqlite3", dsn(path, true))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO apps (id, name, origin, created_at) VALUES ('notes', 'Notes', 'template:static', 0), ('blog', 'Blog', 'template:static', 0), ('empty', 'Empty', 'template:static', 0)`,
		`INSERT INTO intents (id, app_id, status, request, created_at, updated_at) VALUES (1, 'notes', 'done', 'r', 0, 0), (2, 'blog', 'done', 'r', 0, 0)`,
		`INSERT INTO tasks (intent_id, app_id, slug, title, priority, estimated_lines, risk, reasoning, summary, created_at) VALUES
			(1, 'notes', '0003-a', 'a', 'medium', 1, 'normal', 'low', 's', 0),
			(1, 'notes', '0010-b', 'b', 'medium', 1, 'normal', 'low', 's', 0),
			(1, 'notes', '0002-c', 'c', 'medium', 1, 'normal', 'low', 's', 0),
			(2, 'blog', '0004-d', 'd', 'medium', 1, 'normal', 'low', 's', 0)`,
	} {
		if _, err := old.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	old.Close()

	db, err := Open(path, Intents)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows []struct {
		AppID string `db:"app_id"`
		Last  int    `db:"last"`
	}
	if err := db.Read.Select(&rows, `SELECT app_id, last FROM task_numbers ORDER BY app_id`); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].AppID != "blog" || rows[0].Last != 4 || rows[1].AppID != "notes" || rows[1].Last != 10 {
		t.Fatalf("task_numbers %+v, want blog 4 and notes 10", rows)
	}

	// A task inserted now raises its application's counter, a lower one does not lower it.
	if _, err := db.Write.Exec(`INSERT INTO tasks (intent_id, app_id, slug, title, priority, estimated_lines, risk, reasoning, summary, created_at) VALUES
		(2, 'blog', '10000-e', 'e', 'medium', 1, 'normal', 'low', 's', 0),
		(2, 'blog', '0005-f', 'f', 'medium', 1, 'normal', 'low', 's', 0)`); err != nil {
		t.Fatal(err)
	}
	var last int
	if err := db.Read.Get(&last, `SELECT last FROM task_numbers WHERE app_id = 'blog'`); err != nil || last != 10000 {
		t.Fatalf("blog's counter %d, %v; want 10000", last, err)
	}
}
