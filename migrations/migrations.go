// Package migrations holds the embedded SQL of the two stores and opens them:
// every store is a SQLite file reached through one writer connection and a
// separate read pool, with its migrations applied on open.
package migrations

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/database/sqlite3"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jmoiron/sqlx"

	// The driver registers itself as "sqlite3".
	_ "github.com/mattn/go-sqlite3"
)

//go:embed intents/*.sql knowledge/*.sql
var files embed.FS

// Set names the folder of migrations that belongs to one store.
type Set string

// The two stores.
const (
	Intents   Set = "intents"
	Knowledge Set = "knowledge"
)

// DB is one SQLite store: Write is a single connection that takes the write
// lock when a transaction begins (so concurrent writers queue instead of
// failing with SQLITE_BUSY), Read is a pool for everything else.
type DB struct {
	Write *sqlx.DB
	Read  *sqlx.DB
	Path  string
}

// Within is what a package may do in a transaction another package owns:
// read and write inside it. It cannot commit, roll back or begin: the use
// case that began the transaction decides whether all of it holds. A
// *sqlx.Tx is one; nothing exported takes the transaction itself.
type Within interface {
	sqlx.QueryerContext
	sqlx.ExecerContext
}

// readers is how many connections read a store at once.
const readers = 4

// dsn sets the pragmas through the query string that mattn/go-sqlite3 reads.
func dsn(path string, writer bool) string {
	q := url.Values{}
	q.Set("_busy_timeout", "5000")
	q.Set("_fk", "1")
	q.Set("_synchronous", "NORMAL")
	// Each connection keeps its prepared statements: a page's queries are
	// the same on every request, and preparing them was a tenth of a read.
	q.Set("_stmt_cache_size", "64")
	if writer {
		// The journal mode is the file's own, kept in it: the writer sets
		// it, and a reader leaves the file as it found it.
		q.Set("_journal_mode", "WAL")
		q.Set("_txlock", "immediate")
	} else {
		q.Set("_query_only", "1")
	}
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating when missing) the store at path and applies the
// migrations of set. Its errors are sentences a person can act on.
func Open(path string, set Set) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("migrations: cannot create the folder of %s: %w", path, err)
	}
	w, err := sqlx.Open("sqlite3", dsn(path, true))
	if err != nil {
		return nil, fmt.Errorf("migrations: cannot open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if err := w.Ping(); err != nil {
		w.Close()
		return nil, fmt.Errorf("migrations: cannot open %s: %w", path, err)
	}
	if err := migrateUp(w, set, path); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sqlx.Open("sqlite3", dsn(path, false))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("migrations: cannot open %s for reading: %w", path, err)
	}
	r.SetMaxOpenConns(readers)
	// Idle readers stay open, with their prepared statements.
	r.SetMaxIdleConns(readers)
	if err := r.Ping(); err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("migrations: cannot open %s for reading: %w", path, err)
	}
	return &DB{Write: w, Read: r, Path: path}, nil
}

// OpenReadOnly opens the existing store at path as it is, for a command
// that only reads: nothing is created, no migration runs, and both pools
// are query-only, so a write fails rather than happen.
func OpenReadOnly(path string) (*DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("migrations: there is no store at %s: %w", path, err)
	}
	r, err := sqlx.Open("sqlite3", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("migrations: cannot open %s for reading: %w", path, err)
	}
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	if err := r.Ping(); err != nil {
		r.Close()
		return nil, fmt.Errorf("migrations: cannot open %s for reading: %w", path, err)
	}
	return &DB{Write: r, Read: r, Path: path}, nil
}

// Close closes both pools.
func (db *DB) Close() error {
	if db.Write == db.Read {
		return db.Read.Close()
	}
	return errors.Join(db.Read.Close(), db.Write.Close())
}

func migrateUp(w *sqlx.DB, set Set, path string) error {
	sub, err := fs.Sub(files, string(set))
	if err != nil {
		return fmt.Errorf("migrations: no migrations for %s: %w", set, err)
	}
	src, err := iofs.New(sub, ".")
	if err != nil {
		return fmt.Errorf("migrations: cannot read the migrations of %s: %w", set, err)
	}
	drv, err := sqlite3.WithInstance(w.DB, &sqlite3.Config{})
	if err != nil {
		return fmt.Errorf("migrations: %s is not a database this server can use: %w", path, err)
	}
	m, err := migrate.NewWithInstance("iofs", src, "sqlite3", drv)
	if err != nil {
		return fmt.Errorf("migrations: cannot prepare the migrations of %s: %w", path, err)
	}
	// m.Close is not called: with WithInstance it would close w.
	err = m.Up()
	if err == nil || errors.Is(err, migrate.ErrNoChange) {
		return nil
	}
	var dirty migrate.ErrDirty
	if errors.As(err, &dirty) {
		return fmt.Errorf("migrations: %s was left half-migrated at version %d by an earlier failure; restore it from a backup or repair it by hand before starting again", path, dirty.Version)
	}
	version, isDirty, _ := m.Version()
	if isDirty {
		return fmt.Errorf("migrations: %s failed to migrate and is now marked dirty at version %d: %w", path, version, err)
	}
	return fmt.Errorf("migrations: %s failed to migrate: %w", path, err)
}
