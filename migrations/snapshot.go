package migrations

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"strings"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// Latest is the newest version the set's embedded migrations reach: the
// version of a store this server has migrated.
func Latest(set Set) (uint, error) {
	names, err := fs.Glob(files, string(set)+"/*.up.sql")
	if err != nil {
		return 0, fmt.Errorf("migrations: the migrations of %s: %w", set, err)
	}
	var latest uint
	for _, name := range names {
		base := strings.TrimPrefix(name, string(set)+"/")
		digits, _, ok := strings.Cut(base, "_")
		if !ok {
			return 0, fmt.Errorf("migrations: %s names no version", name)
		}
		v, err := strconv.ParseUint(digits, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("migrations: %s names no version", name)
		}
		latest = max(latest, uint(v))
	}
	if latest == 0 {
		return 0, fmt.Errorf("migrations: there are no migrations for %s", set)
	}
	return latest, nil
}

// Version is the migration version the store at path records, and
// whether an earlier failure left it half-migrated there. It reads the
// file as it is, creating and migrating nothing.
func Version(path string) (uint, bool, error) {
	if _, err := os.Stat(path); err != nil {
		return 0, false, fmt.Errorf("migrations: there is no store at %s: %w", path, err)
	}
	db, err := sql.Open("sqlite3", readOnlyDSN(path))
	if err != nil {
		return 0, false, fmt.Errorf("migrations: cannot open %s: %w", path, err)
	}
	defer db.Close()
	var v int64
	var dirty bool
	err = db.QueryRow(`SELECT version, dirty FROM schema_migrations`).Scan(&v, &dirty)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("migrations: %s records no migration version: %w", path, err)
	}
	if v < 0 {
		return 0, dirty, nil
	}
	return uint(v), dirty, nil
}

// Snapshot writes to dst, which must not exist, a copy of the store at
// path as one moment left it, while other processes go on writing it:
// SQLite's online backup copies every page in one step, inside one read
// transaction, so the copy holds every transaction committed before it
// began and nothing of a later one, page for page (a row's rowid too,
// which task_runs' order is read by). The store is opened read-only and
// nothing of it changes; the copy is left in rollback journal mode, a
// file alone, which serve turns to WAL when it opens it.
func Snapshot(ctx context.Context, path, dst string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("migrations: there is no store at %s: %w", path, err)
	}
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("migrations: the copy %s is there already", dst)
	}
	if err := backup(ctx, path, dst); err != nil {
		os.Remove(dst)
		os.Remove(dst + "-journal")
		return fmt.Errorf("migrations: copying %s: %w", path, err)
	}
	return nil
}

func backup(ctx context.Context, path, dst string) error {
	src, err := sql.Open("sqlite3", readOnlyDSN(path))
	if err != nil {
		return err
	}
	defer src.Close()
	to, err := sql.Open("sqlite3", "file:"+dst+"?_journal_mode=DELETE")
	if err != nil {
		return err
	}
	defer to.Close()
	srcConn, err := src.Conn(ctx)
	if err != nil {
		return err
	}
	defer srcConn.Close()
	toConn, err := to.Conn(ctx)
	if err != nil {
		return err
	}
	defer toConn.Close()
	if err := toConn.Raw(func(toRaw any) error {
		return srcConn.Raw(func(srcRaw any) error {
			toSQLite, ok1 := toRaw.(*sqlite3.SQLiteConn)
			srcSQLite, ok2 := srcRaw.(*sqlite3.SQLiteConn)
			if !ok1 || !ok2 {
				return errors.New("the connections are not SQLite's")
			}
			b, err := toSQLite.Backup("main", srcSQLite, "main")
			if err != nil {
				return err
			}
			// -1: every page in one step, one read transaction.
			done, err := b.Step(-1)
			if ferr := b.Finish(); err == nil {
				err = ferr
			}
			if err == nil && !done {
				err = errors.New("the copy did not finish in one step")
			}
			return err
		})
	}); err != nil {
		return err
	}
	// The pages came with the store's WAL mode; the copy is a file alone.
	var mode string
	if err := toConn.QueryRowContext(ctx, `PRAGMA journal_mode = DELETE`).Scan(&mode); err != nil {
		return err
	}
	if mode != "delete" {
		return fmt.Errorf("the copy stayed in %s mode", mode)
	}
	return nil
}

// IntegrityCheck answers nil when SQLite finds the store at path whole
// (PRAGMA quick_check), and its first complaint otherwise.
func IntegrityCheck(path string) error {
	db, err := sql.Open("sqlite3", readOnlyDSN(path))
	if err != nil {
		return fmt.Errorf("migrations: cannot open %s: %w", path, err)
	}
	defer db.Close()
	var said string
	if err := db.QueryRow(`PRAGMA quick_check`).Scan(&said); err != nil {
		return fmt.Errorf("migrations: %s cannot be checked: %w", path, err)
	}
	if said != "ok" {
		return fmt.Errorf("migrations: %s is damaged: %s", path, said)
	}
	return nil
}

// readOnlyDSN opens path for reading only, waiting on a writer as the
// stores' own connections do.
func readOnlyDSN(path string) string {
	q := url.Values{}
	q.Set("mode", "ro")
	q.Set("_busy_timeout", "5000")
	return "file:" + path + "?" + q.Encode()
}
