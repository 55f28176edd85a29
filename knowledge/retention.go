package knowledge

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// Retention's pace: a pass deletes in batches of RetainBatch rows, each in
// a transaction of its own, so a write waits at most one batch behind it;
// the server runs a pass at start and then every RetainEvery.
const (
	RetainBatch = 2000
	RetainEvery = time.Hour
)

// Retained counts what one pass of retention deleted, and how it held the
// write lock: in Batches transactions, the longest for Longest.
type Retained struct {
	Events  int64
	Blobs   int64
	Batches int
	Longest time.Duration
}

// blobReferences lists every hash the contexts after the one numbered ?
// refer to (0: every context), every check case's example steps, and
// every replay's manifest. A blob in it is
// kept whatever its age; a table that comes to refer to blobs adds its
// column here. No row writes NULL into these columns, and NOT IN needs
// that. Replays are few, and a replay's manifest is written before its
// first row, so every batch reads them all.
const blobReferences = `SELECT instructions_hash FROM contexts WHERE id > ?
	UNION SELECT json_extract(d.value, '$.hash') FROM contexts, json_each(contexts.documents) AS d
	WHERE contexts.id > ? AND json_extract(d.value, '$.hash') IS NOT NULL
	UNION SELECT example_steps FROM cases WHERE example_steps IS NOT NULL
	UNION SELECT manifest_hash FROM replays`

// Retain applies retention: events older than RetainFor, then the oldest
// (by id, the order they were written) beyond the cap; blobs older than
// RetainFor that nothing refers to. Contexts are never deleted. It deletes
// in batches of RetainBatch, each its own transaction, and reads what to
// delete outside them; it stops between batches when ctx ends. The server
// runs it in the background (StartRetention).
func (s *Store) Retain(ctx context.Context) (Retained, error) {
	var r Retained
	cutoff := s.now().Add(-RetainFor).UnixMilli()

	n, err := s.deleteBatches(ctx, &r,
		`DELETE FROM events WHERE id IN (SELECT id FROM events WHERE at < ? ORDER BY at LIMIT ?)`, cutoff)
	r.Events += n
	if err != nil {
		return r, fmt.Errorf("knowledge: retention of old events: %w", err)
	}
	// The id of the newest event beyond the cap, when there is one; every
	// event up to it goes. Events written meanwhile come after it.
	var last int64
	err = s.db.Read.GetContext(ctx, &last, `SELECT id FROM events ORDER BY id DESC LIMIT 1 OFFSET ?`, s.opts.MaxEvents)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return r, fmt.Errorf("knowledge: retention of events beyond %d: %w", s.opts.MaxEvents, err)
	default:
		n, err := s.deleteBatches(ctx, &r,
			`DELETE FROM events WHERE id IN (SELECT id FROM events WHERE id <= ? ORDER BY id LIMIT ?)`, last)
		r.Events += n
		if err != nil {
			return r, fmt.Errorf("knowledge: retention of events beyond %d: %w", s.opts.MaxEvents, err)
		}
	}

	n, err = s.deleteOldBlobs(ctx, &r, cutoff)
	r.Blobs = n
	if err != nil {
		return r, fmt.Errorf("knowledge: retention of blobs: %w", err)
	}
	return r, nil
}

// deleteBatches runs del (whose last parameter is the batch size) with
// args, a transaction each time, until a batch deletes fewer than
// RetainBatch rows, and answers how many went.
func (s *Store) deleteBatches(ctx context.Context, r *Retained, del string, args ...any) (int64, error) {
	var total int64
	for {
		var n int64
		err := s.batch(ctx, r, func(tx *sqlx.Tx) error {
			res, err := tx.ExecContext(ctx, del, append(args, RetainBatch)...)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		total += n
		if err != nil || n < RetainBatch {
			return total, err
		}
	}
}

// deleteOldBlobs deletes the blobs older than cutoff that nothing refers
// to. Which they are is read outside the write lock, with the newest
// context then; each batch checks again only the contexts written since,
// which are the only ones that can have come to refer to one (contexts are
// append-only).
func (s *Store) deleteOldBlobs(ctx context.Context, r *Retained, cutoff int64) (int64, error) {
	var (
		hashes []string
		seen   int64
	)
	read, err := s.db.Read.BeginTxx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer read.Rollback()
	if err := read.GetContext(ctx, &seen, `SELECT coalesce(max(id), 0) FROM contexts`); err != nil {
		return 0, err
	}
	if err := read.SelectContext(ctx, &hashes,
		`SELECT hash FROM blobs WHERE created_at < ? AND hash NOT IN (`+blobReferences+`) ORDER BY hash`, cutoff, 0, 0); err != nil {
		return 0, err
	}
	read.Rollback()

	var total int64
	for len(hashes) > 0 {
		batch := hashes[:min(len(hashes), RetainBatch)]
		hashes = hashes[len(batch):]
		err := s.batch(ctx, r, func(tx *sqlx.Tx) error {
			res, err := tx.ExecContext(ctx, `DELETE FROM blobs WHERE hash IN (SELECT value FROM json_each(?))
				AND hash NOT IN (`+blobReferences+`)`, jsonList(batch), seen, seen)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			total += n
			return err
		})
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// batch runs del in a write transaction of its own, once ctx allows, and
// counts how long it held the write lock.
func (s *Store) batch(ctx context.Context, r *Retained, del func(*sqlx.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	began := s.now()
	if err := del(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	r.Batches++
	r.Longest = max(r.Longest, s.now().Sub(began))
	return nil
}

// StartRetention runs Retain in the background: a pass now, then one every
// interval, until the store closes (Close waits for the batch in hand).
// after, when set, hears how each pass went. Start-up does not wait for
// it; a second call changes nothing.
func (s *Store) StartRetention(every time.Duration, after func(Retained, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.retainDone != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.retainStop, s.retainDone = cancel, done
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			r, err := s.Retain(ctx)
			if ctx.Err() != nil {
				return
			}
			if after != nil {
				after(r, err)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}
