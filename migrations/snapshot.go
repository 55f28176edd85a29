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
// SQLite's VACUUM INTO reads inside one read transaction, so the copy
// holds every transaction committed before it began and nothing of a
// later one. The store is opened read-only and nothing of it changes.
func Snapshot(ctx context.Context, path, dst string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("migrations: there is no store at %s: %w", path, err)
	}
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("migrations: the copy %s is there already", dst)
	}
	db, err := sql.Open("sqlite3", readOnlyDSN(path))
	if err != nil {
		return fmt.Errorf("migrations: cannot open %s: %w", path, err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dst); err != nil {
		os.Remove(dst)
		return fmt.Errorf("migrations: copying %s: %w", path, err)
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
