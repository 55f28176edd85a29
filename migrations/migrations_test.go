package migrations_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"autoapp/migrations"
)

func open(t *testing.T, path string, set migrations.Set) *migrations.DB {
	t.Helper()
	db, err := migrations.Open(path, set)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestPragmasAreInForceOnBothPools(t *testing.T) {
	for _, set := range []migrations.Set{migrations.Intents, migrations.Knowledge} {
		t.Run(string(set), func(t *testing.T) {
			db := open(t, filepath.Join(t.TempDir(), string(set)+".sqlite"), set)
			for pool, conn := range map[string]interface {
				Get(dest any, query string, args ...any) error
			}{"write": db.Write, "read": db.Read} {
				want := map[string]string{
					"journal_mode": "wal",
					"foreign_keys": "1",
					"busy_timeout": "5000",
					"synchronous":  "1", // NORMAL
				}
				for pragma, value := range want {
					var got string
					if err := conn.Get(&got, "PRAGMA "+pragma); err != nil {
						t.Fatalf("%s pool: PRAGMA %s: %v", pool, pragma, err)
					}
					if got != value {
						t.Errorf("%s pool: PRAGMA %s = %q, want %q", pool, pragma, got, value)
					}
				}
			}
		})
	}
}

func TestFreshRootMigratesAndReopeningChangesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intents.sqlite")
	db, err := migrations.Open(path, migrations.Intents)
	if err != nil {
		t.Fatal(err)
	}
	var version int
	var dirty bool
	if err := db.Read.QueryRow(`SELECT version, dirty FROM schema_migrations`).Scan(&version, &dirty); err != nil {
		t.Fatal(err)
	}
	if version < 1 || dirty {
		t.Fatalf("after the first open: version %d dirty %v", version, dirty)
	}
	if _, err := db.Write.Exec(`INSERT INTO sessions (id_hash, created_at, last_seen_at) VALUES ('x', 1, 1)`); err != nil {
		t.Fatalf("the migrated table takes a row: %v", err)
	}
	db.Close()

	for i := 0; i < 2; i++ {
		again, err := migrations.Open(path, migrations.Intents)
		if err != nil {
			t.Fatalf("reopen %d: %v", i, err)
		}
		var v2 int
		var n int
		if err := again.Read.Get(&v2, `SELECT version FROM schema_migrations`); err != nil {
			t.Fatal(err)
		}
		if err := again.Read.Get(&n, `SELECT count(*) FROM sessions`); err != nil {
			t.Fatal(err)
		}
		again.Close()
		if v2 != version || n != 1 {
			t.Fatalf("reopen %d: version %d (want %d), %d sessions (want 1)", i, v2, version, n)
		}
	}
}

func TestReadPoolCannotWrite(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "intents.sqlite"), migrations.Intents)
	_, err := db.Read.Exec(`INSERT INTO sessions (id_hash, created_at, last_seen_at) VALUES ('x', 1, 1)`)
	if err == nil {
		t.Fatal("the read pool wrote a row")
	}
}

func TestFTS5IsCompiledIn(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "knowledge.sqlite"), migrations.Knowledge)
	if _, err := db.Write.Exec(`CREATE VIRTUAL TABLE probe USING fts5(body)`); err != nil {
		t.Fatalf("FTS5 is missing (build with -tags sqlite_fts5, as the Makefile does): %v", err)
	}
	if _, err := db.Write.Exec(`INSERT INTO probe (body) VALUES ('the build failed at stage vet')`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.Read.Get(&n, `SELECT count(*) FROM probe WHERE probe MATCH 'stage'`); err != nil || n != 1 {
		t.Fatalf("match: %d rows, %v", n, err)
	}
}

func TestAFileThatIsNotADatabaseIsASentence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intents.sqlite")
	if err := os.WriteFile(path, []byte(strings.Repeat("not a database ", 512)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := migrations.Open(path, migrations.Intents)
	if err == nil {
		t.Fatal("opened a file that is not a database")
	}
	if !strings.Contains(err.Error(), path) {
		t.Fatalf("the error does not name the file: %v", err)
	}
}

func TestADirtyDatabaseSaysSo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intents.sqlite")
	db := open(t, path, migrations.Intents)
	if _, err := db.Write.Exec(`UPDATE schema_migrations SET dirty = 1`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err := migrations.Open(path, migrations.Intents)
	if err == nil {
		t.Fatal("opened a dirty database")
	}
	if !strings.Contains(err.Error(), "half-migrated") {
		t.Fatalf("the error does not say the database is half-migrated: %v", err)
	}
}

// TestConcurrentWritersNeverSeeALockedDatabase runs 8 goroutines that write
// in transactions (read, then write: the pattern that fails at once with
// SQLITE_BUSY under deferred transactions) for a few seconds, while readers
// read, and requires zero errors.
func TestConcurrentWritersNeverSeeALockedDatabase(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "intents.sqlite"), migrations.Intents)
	if _, err := db.Write.Exec(`CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Write.Exec(`INSERT INTO counter (id, n) VALUES (1, 0)`); err != nil {
		t.Fatal(err)
	}
	duration := 3 * time.Second
	if testing.Short() {
		duration = 500 * time.Millisecond
	}
	const writers, readers = 8, 4
	deadline := time.Now().Add(duration)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	writes := make([]int, writers)
	reads := make([]int, readers)
	var worst time.Duration
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for time.Now().Before(deadline) {
				start := time.Now()
				err := func() error {
					tx, err := db.Write.Beginx()
					if err != nil {
						return err
					}
					defer tx.Rollback()
					var n int
					if err := tx.Get(&n, `SELECT n FROM counter WHERE id = 1`); err != nil {
						return err
					}
					if _, err := tx.Exec(`UPDATE counter SET n = ? WHERE id = 1`, n+1); err != nil {
						return err
					}
					if _, err := tx.Exec(`INSERT INTO sign_in_failures (account, at) VALUES (?, ?)`, fmt.Sprint("w", w), n); err != nil {
						return err
					}
					return tx.Commit()
				}()
				took := time.Since(start)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					writes[w]++
				}
				if took > worst {
					worst = took
				}
				mu.Unlock()
			}
		}(w)
	}
	for r := 0; r < readers; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			for time.Now().Before(deadline) {
				var n int
				if err := db.Read.Get(&n, `SELECT count(*) FROM sign_in_failures`); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					continue
				}
				mu.Lock()
				reads[r]++
				mu.Unlock()
			}
		}(r)
	}
	wg.Wait()

	locked := 0
	for _, err := range errs {
		if strings.Contains(err.Error(), "locked") || strings.Contains(err.Error(), "busy") {
			locked++
		}
	}
	if len(errs) > 0 {
		t.Fatalf("%d errors (%d locked/busy), first: %v", len(errs), locked, errors.Join(errs[0]))
	}
	total, totalReads := 0, 0
	for _, n := range writes {
		if n == 0 {
			t.Errorf("a writer never got to write: %v", writes)
		}
		total += n
	}
	for _, n := range reads {
		totalReads += n
	}
	var n int
	if err := db.Read.Get(&n, `SELECT n FROM counter WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	if n != total {
		t.Fatalf("the counter says %d increments, the writers committed %d: a write was lost", n, total)
	}
	t.Logf("%d writers and %d readers for %v: %d write transactions (%.0f/s), %d reads, 0 locked errors, slowest write %v",
		writers, readers, duration, total, float64(total)/duration.Seconds(), totalReads, worst.Round(time.Millisecond))
}

// undoneTo is what takes a store of set, fully migrated, back to version:
// every later migration's down file, newest first, then the version.
func undoneTo(t *testing.T, set migrations.Set, version int) []string {
	t.Helper()
	downs, err := filepath.Glob(string(set) + "/*.down.sql")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(downs)
	slices.Reverse(downs)
	var stmts []string
	for _, d := range downs {
		if n, _ := strconv.Atoi(strings.SplitN(filepath.Base(d), "_", 2)[0]); n <= version {
			break
		}
		b, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, string(b))
	}
	return append(stmts, fmt.Sprintf(`UPDATE schema_migrations SET version = %d`, version))
}

// TestTheUpgradedFlagIsRenamedAutoappUpgraded: a store that 0012 finds
// with lessons flagged "upgraded" keeps them flagged, under the new name.
func TestTheUpgradedFlagIsRenamedAutoappUpgraded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "knowledge.sqlite")
	db := open(t, path, migrations.Knowledge)
	// The store as 0011 left it, and a lesson flagged by the old name.
	for _, stmt := range append(undoneTo(t, migrations.Knowledge, 11),
		`INSERT INTO lessons (text, status, origin, case_id, created_at, flags)
		 VALUES ('Build before checking.', 'provisional', 'distilled', 1, 0, '["recurring","upgraded"]')`) {
		if _, err := db.Write.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	db.Close()
	again := open(t, path, migrations.Knowledge)
	var flags string
	if err := again.Read.Get(&flags, `SELECT flags FROM lessons`); err != nil {
		t.Fatal(err)
	}
	if flags != `["recurring","autoapp_upgraded"]` {
		t.Fatalf("flags %s", flags)
	}
}

// TestTheJournalKeepsItsEntriesWhenItTakesWithdrawn: 0027 makes the request
// journal again to take 'withdrawn'; a store with a request, its entries
// and an owner's operation pointing at one keeps them all, the journal
// stays append-only, and a withdrawal entry is taken.
func TestTheJournalKeepsItsEntriesWhenItTakesWithdrawn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intents.sqlite")
	db := open(t, path, migrations.Intents)
	// The store as 0026 left it, in one transaction: the journal's rebuild
	// defers its foreign keys to the commit.
	tx := db.Write.MustBegin()
	for _, stmt := range append(undoneTo(t, migrations.Intents, 26),
		`INSERT INTO apps (id, name, origin, created_at) VALUES ('notes', 'notes', 'template:static', 0)`,
		`INSERT INTO requests (id, app_id, mode, created_at) VALUES (1, 'notes', 'guided', 0)`,
		`INSERT INTO request_journal (request_id, revision, kind, actor, at, body) VALUES (1, 1, 'request', 'owner', 0, '{"text":"Add tags"}')`,
		`INSERT INTO request_journal (request_id, revision, kind, actor, at, body) VALUES (1, 2, 'mode', 'owner', 0, '{"mode":"autonomous"}')`,
		`INSERT INTO request_ops (op_id, request_id, revision, result) VALUES ('op-1', 1, 2, '{}')`,
	) {
		if _, err := tx.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	db.Close()

	again := open(t, path, migrations.Intents)
	var entries []string
	if err := again.Read.Select(&entries, `SELECT revision || ' ' || kind || ' ' || body FROM request_journal ORDER BY revision`); err != nil {
		t.Fatal(err)
	}
	if want := []string{`1 request {"text":"Add tags"}`, `2 mode {"mode":"autonomous"}`}; !slices.Equal(entries, want) {
		t.Fatalf("entries %q, want %q", entries, want)
	}
	if _, err := again.Write.Exec(`INSERT INTO request_journal (request_id, revision, kind, actor, at, body) VALUES (1, 3, 'withdrawn', 'owner', 0, '{}')`); err != nil {
		t.Fatalf("a withdrawal entry: %v", err)
	}
	if _, err := again.Write.Exec(`DELETE FROM request_journal WHERE revision = 1`); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Fatalf("a delete from the journal: %v", err)
	}
	var ops int
	if err := again.Read.Get(&ops, `SELECT count(*) FROM request_ops o JOIN request_journal j ON j.request_id = o.request_id AND j.revision = o.revision`); err != nil || ops != 1 {
		t.Fatalf("%d operations still point at their entry (%v)", ops, err)
	}
}
