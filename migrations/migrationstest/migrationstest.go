// Package migrationstest opens the two stores for tests: a real SQLite
// file with the real migrations applied, closed when the test ends. Tests
// use these rather than a fake of the stores.
package migrationstest

import (
	"path/filepath"
	"testing"

	"autoapp/migrations"
)

// Intents opens a new intents store in a temporary folder.
func Intents(tb testing.TB) *migrations.DB {
	tb.Helper()
	return IntentsIn(tb, tb.TempDir())
}

// IntentsIn opens the intents store of the data folder root, where serve
// keeps it (<root>/launcher/intents.sqlite), making it when there is none.
func IntentsIn(tb testing.TB, root string) *migrations.DB {
	tb.Helper()
	return open(tb, filepath.Join(root, "launcher", "intents.sqlite"), migrations.Intents)
}

// Knowledge opens a new knowledge store's database in a temporary folder,
// as NewCases and NewLessons take it; knowledge.Open is the store as serve
// opens it.
func Knowledge(tb testing.TB) *migrations.DB {
	tb.Helper()
	return open(tb, filepath.Join(tb.TempDir(), "launcher", "knowledge.sqlite"), migrations.Knowledge)
}

func open(tb testing.TB, path string, set migrations.Set) *migrations.DB {
	tb.Helper()
	db, err := migrations.Open(path, set)
	if err != nil {
		tb.Fatalf("open %s: %v", filepath.Base(path), err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}
