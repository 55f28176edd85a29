package intent

import (
	"context"
	"fmt"
	"sync"

	"autoapp/migrations"
)

// Kept keeps the last answers of reads of the intents store for as long as
// its backlog version (migration 0029: raised by a trigger on every change
// to the applications, intents, tasks, their events and runs, the
// interventions and the usage rows, by any process, in the change's own
// transaction) stays the same. A read whose tables are among those is
// answered from memory while nothing changed, for the cost of one row, so
// the pages every request renders (the rail's mark, the needs, the
// outlooks, today's spend) cost the same with ten intents and with years of
// them; the first read after a change reads the store again.
type Kept struct {
	db *migrations.DB
	mu sync.Mutex
	// at is the version the answers were read at; the version only grows.
	at      int64
	answers map[string]any
}

// NewKept keeps answers of reads of db, the intents store.
func NewKept(db *migrations.DB) *Kept {
	return &Kept{db: db, answers: map[string]any{}}
}

// version is the store's backlog version now.
func (k *Kept) version(ctx context.Context) (int64, error) {
	var v int64
	if err := k.db.Read.GetContext(ctx, &v, `SELECT version FROM backlog_version WHERE id = 1`); err != nil {
		return 0, fmt.Errorf("intent: the backlog's version: %w", err)
	}
	return v, nil
}

// KeptRead answers read's answer as the store holds it now under key: the
// one kept when the version has not moved since it was read, otherwise
// read's, which is kept. The version is read before the tables, so an
// answer is never older than the version it is kept at. clone copies what
// a caller could change of an answer (its slices and maps), so that no two
// callers share one.
func KeptRead[T any](ctx context.Context, k *Kept, key string, clone func(T) T, read func(context.Context) (T, error)) (T, error) {
	v, err := k.version(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	k.mu.Lock()
	kept, ok := k.answers[key]
	ok = ok && k.at == v
	k.mu.Unlock()
	if ok {
		return clone(kept.(T)), nil
	}
	answer, err := read(ctx)
	if err != nil {
		return answer, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case v > k.at:
		k.at, k.answers = v, map[string]any{key: clone(answer)}
	case v == k.at:
		k.answers[key] = clone(answer)
	}
	// An answer read at an older version than the kept ones is not kept.
	return answer, nil
}
