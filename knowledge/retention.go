package knowledge

import (
	"context"
	"fmt"
)

// Retained counts what one pass of retention deleted.
type Retained struct {
	Events int64
	Blobs  int64
}

// blobReferences lists every hash a row refers to. A blob in it is kept
// whatever its age; a table that comes to refer to blobs adds its column
// here. No row writes NULL into these columns, and NOT IN needs that.
const blobReferences = `SELECT instructions_hash FROM contexts
	UNION SELECT json_extract(d.value, '$.hash') FROM contexts, json_each(contexts.documents) AS d
	WHERE json_extract(d.value, '$.hash') IS NOT NULL`

// Retain applies retention in one transaction: events older than RetainFor,
// then the oldest (by id, the order they were written) beyond the cap;
// blobs older than RetainFor that nothing refers to. Contexts are never
// deleted. Open calls it; serve may call it again on a long run.
func (s *Store) Retain(ctx context.Context) (Retained, error) {
	var r Retained
	cutoff := s.now().Add(-RetainFor).UnixMilli()
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return r, fmt.Errorf("knowledge: retention: %w", err)
	}
	defer tx.Rollback()

	res, err := tx.ExecContext(ctx, `DELETE FROM events WHERE at < ?`, cutoff)
	if err != nil {
		return r, fmt.Errorf("knowledge: retention of old events: %w", err)
	}
	old, _ := res.RowsAffected()
	// The id of the newest event beyond the cap, when there is one; every
	// event up to it goes.
	res, err = tx.ExecContext(ctx, `DELETE FROM events WHERE id <= (
		SELECT id FROM events ORDER BY id DESC LIMIT 1 OFFSET ?)`, s.opts.MaxEvents)
	if err != nil {
		return r, fmt.Errorf("knowledge: retention of events beyond %d: %w", s.opts.MaxEvents, err)
	}
	beyond, _ := res.RowsAffected()
	r.Events = old + beyond

	res, err = tx.ExecContext(ctx, `DELETE FROM blobs WHERE created_at < ? AND hash NOT IN (`+blobReferences+`)`, cutoff)
	if err != nil {
		return r, fmt.Errorf("knowledge: retention of blobs: %w", err)
	}
	r.Blobs, _ = res.RowsAffected()
	if err := tx.Commit(); err != nil {
		return r, fmt.Errorf("knowledge: retention: %w", err)
	}
	return r, nil
}
