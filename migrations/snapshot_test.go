package migrations_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"autoapp/migrations"
)

// TestASnapshotHoldsWholeTransactionsWhileAnotherWrites: a writer commits
// pairs of rows without pause while the store is copied; the copy holds
// an even number of them and every row's rowid, is at the store's
// migration version, and is a file alone that reading leaves alone.
func TestASnapshotHoldsWholeTransactionsWhileAnotherWrites(t *testing.T) {
	for _, set := range []migrations.Set{migrations.Intents, migrations.Knowledge} {
		t.Run(string(set), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, string(set)+".sqlite")
			db := open(t, path, set)
			// A table with an implicit rowid, rows of it deleted: the
			// copy keeps each row's rowid.
			for _, q := range []string{`CREATE TABLE pairs (n INTEGER NOT NULL)`, `CREATE TABLE named (name TEXT PRIMARY KEY)`,
				`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300) INSERT INTO named SELECT printf('n%03d', 300 - i) FROM c`,
				`DELETE FROM named WHERE rowid % 3 = 0`} {
				if _, err := db.Write.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			var rowids string
			if err := db.Read.Get(&rowids, `SELECT group_concat(rowid || ':' || name) FROM (SELECT rowid, name FROM named ORDER BY rowid)`); err != nil {
				t.Fatal(err)
			}
			var stop atomic.Bool
			var wg sync.WaitGroup
			var written atomic.Int64
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; !stop.Load(); n++ {
					tx, err := db.Write.Begin()
					if err != nil {
						t.Error(err)
						return
					}
					tx.Exec(`INSERT INTO pairs (n) VALUES (?)`, n)
					tx.Exec(`INSERT INTO pairs (n) VALUES (?)`, n)
					if err := tx.Commit(); err != nil {
						t.Error(err)
						return
					}
					written.Add(1)
				}
			}()
			for written.Load() < 50 {
				runtime.Gosched()
			}
			dst := filepath.Join(dir, "copy.sqlite")
			err := migrations.Snapshot(context.Background(), path, dst)
			stop.Store(true)
			wg.Wait()
			if err != nil {
				t.Fatal(err)
			}
			cp, err := sql.Open("sqlite3", dst)
			if err != nil {
				t.Fatal(err)
			}
			defer cp.Close()
			var rows int
			if err := cp.QueryRow(`SELECT count(*) FROM pairs`).Scan(&rows); err != nil {
				t.Fatal(err)
			}
			if rows == 0 || rows%2 != 0 {
				t.Fatalf("the copy holds %d rows, want a whole number of pairs", rows)
			}
			var copied, mode string
			if err := cp.QueryRow(`SELECT group_concat(rowid || ':' || name) FROM (SELECT rowid, name FROM named ORDER BY rowid)`).Scan(&copied); err != nil {
				t.Fatal(err)
			}
			if copied != rowids {
				t.Fatalf("the copy's rowids are\n%s\nthe store's\n%s", copied, rowids)
			}
			if err := cp.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "delete" {
				t.Fatalf("the copy is in journal mode %q (%v), want delete: a file alone", mode, err)
			}
			latest, err := migrations.Latest(set)
			if err != nil {
				t.Fatal(err)
			}
			v, dirty, err := migrations.Version(dst)
			if err != nil || dirty || v != latest {
				t.Fatalf("the copy is at version %d (dirty %v, %v), want %d", v, dirty, err, latest)
			}
			if err := migrations.IntegrityCheck(dst); err != nil {
				t.Fatal(err)
			}
			cp.Close()
			for _, beside := range []string{"-wal", "-shm", "-journal"} {
				if _, err := os.Stat(dst + beside); err == nil {
					t.Errorf("reading the copy left %s beside it", filepath.Base(dst+beside))
				}
			}
			if err := migrations.Snapshot(context.Background(), path, dst); err == nil {
				t.Fatal("a second snapshot over the first was written")
			}
		})
	}
}

func TestLatestIsTheNewestMigration(t *testing.T) {
	for set, want := range map[migrations.Set]uint{migrations.Intents: 31, migrations.Knowledge: 18} {
		got, err := migrations.Latest(set)
		if err != nil || got < want {
			t.Errorf("Latest(%s) = %d, %v; want at least %d", set, got, err, want)
		}
	}
}
