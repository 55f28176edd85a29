package knowledge_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"autoapp/intent/refusal"
	"autoapp/intent/timetest"
	"autoapp/knowledge"
)

// env is a knowledge store in a temporary root, with the real migrations.
type env struct {
	path  string
	clock *timetest.Clock
	store *knowledge.Store
}

// mustOpen opens a fresh store; it is closed when the test ends.
func mustOpen(tb testing.TB, opts ...knowledge.Options) *env {
	tb.Helper()
	e := &env{path: filepath.Join(tb.TempDir(), "launcher", "knowledge.sqlite"), clock: timetest.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))}
	e.open(tb, opts...)
	return e
}

// open opens the store at e.path again.
func (e *env) open(tb testing.TB, opts ...knowledge.Options) {
	tb.Helper()
	s, err := knowledge.Open(e.path, e.clock.Now, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	e.store = s
	tb.Cleanup(func() { s.Close() })
}

// reopen closes the store (flushing the log handler) and opens it again.
func (e *env) reopen(tb testing.TB, opts ...knowledge.Options) {
	tb.Helper()
	if err := e.store.Close(); err != nil {
		tb.Fatal(err)
	}
	e.open(tb, opts...)
}

func count(tb testing.TB, s *knowledge.Store, query string, args ...any) int {
	tb.Helper()
	var n int
	if err := s.DB().Read.Get(&n, query, args...); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return n
}

func wantCode(tb testing.TB, err error, code refusal.Code) {
	tb.Helper()
	var ke *refusal.Error
	if !errors.As(err, &ke) || ke.Code != code {
		tb.Fatalf("err = %v, want a refusal.Error with code %s", err, code)
	}
}
