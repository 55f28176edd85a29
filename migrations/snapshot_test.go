package migrations_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"autoapp/migrations"
)

// TestASnapshotHoldsWholeTransactionsWhileAnotherWrites: a writer commits
// pairs of rows without pause while the store is copied; the copy holds
// an even number of them, is at the store's migration version, and the
// store itself is left as SQLite had it.
func TestASnapshotHoldsWholeTransactionsWhileAnotherWrites(t *testing.T) {
	for _, set := range []migrations.Set{migrations.Intents, migrations.Knowledge} {
		t.Run(string(set), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, string(set)+".sqlite")
			db := open(t, path, set)
			if _, err := db.Write.Exec(`CREATE TABLE pairs (n INTEGER NOT NULL)`); err != nil {
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
