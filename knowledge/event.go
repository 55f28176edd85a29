package knowledge

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"autoapp/intent/refusal"
	"autoapp/knowledge/origin"
)

// Level is an event's level, as the events table stores it.
type Level string

// The levels, least severe first.
const (
	LevelDebug Level = "debug"
	LevelInfo  Level = "info"
	LevelWarn  Level = "warn"
	LevelError Level = "error"
)

// Levels lists the levels, least severe first.
var Levels = []Level{LevelDebug, LevelInfo, LevelWarn, LevelError}

func (l Level) known() bool { return slices.Contains(Levels, l) }

// atLeast lists the levels at or above l, most severe first.
func (l Level) atLeast() []Level {
	i := slices.Index(Levels, l)
	out := slices.Clone(Levels[i:])
	slices.Reverse(out)
	return out
}

// LevelOf is the level an slog level is stored as: anything below Info is
// debug, below Warn info, below Error warn, and the rest error.
func LevelOf(l slog.Level) Level {
	switch {
	case l < slog.LevelInfo:
		return LevelDebug
	case l < slog.LevelWarn:
		return LevelInfo
	case l < slog.LevelError:
		return LevelWarn
	default:
		return LevelError
	}
}

// NoGit is the revision of a workspace that is not a git repository of its
// own.
const NoGit = "no-git"

// Event is one line of the log. Its identity fields are NULL (not Valid)
// for a line that had no origin, and stay so.
type Event struct {
	ID        int64
	At        time.Time
	Level     Level
	Message   string
	RunID     sql.NullString
	CallID    sql.NullString
	AppID     sql.NullString
	ReleaseID sql.NullString
	Revision  sql.NullString
	Attrs     map[string]any
}

// Identity is the event's identity, with NULL as "".
func (e Event) Identity() origin.Identity {
	return origin.Identity{RunID: e.RunID.String, CallID: e.CallID.String, AppID: e.AppID.String,
		ReleaseID: e.ReleaseID.String, Revision: e.Revision.String}
}

// stamped is e with the identity of ctx, and now when e has no time.
func stamped(ctx context.Context, e Event, now time.Time) Event {
	id := origin.IdentityFrom(ctx)
	e.RunID, e.CallID, e.AppID = nullable(id.RunID), nullable(id.CallID), nullable(id.AppID)
	e.ReleaseID, e.Revision = nullable(id.ReleaseID), nullable(id.Revision)
	if e.At.IsZero() {
		e.At = now
	}
	return e
}

func nullable(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// Append writes one event. Its level, message, attributes and time (now
// when zero) come from e; its identity comes from ctx (origin.WithIdentity), and
// e's own identity fields are not consulted, so a row can only carry the
// identity of the code that wrote it.
func (s *Store) Append(ctx context.Context, e Event) error {
	e = stamped(ctx, e, s.now())
	if !e.Level.known() {
		return refuse(refusal.Invalid, "An event's level is one of debug, info, warn or error, not %q.", e.Level)
	}
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("knowledge: append event: %w", err)
	}
	defer tx.Rollback()
	if err := insertEvent(ctx, tx, e, attrsJSON(e.Attrs)); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("knowledge: append event: %w", err)
	}
	return nil
}

func insertEvent(ctx context.Context, tx *sqlx.Tx, e Event, attrs string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO events (at, level, message, run_id, call_id, app_id, release_id, revision, attrs)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.At.UnixMilli(), e.Level, e.Message, e.RunID, e.CallID, e.AppID, e.ReleaseID, e.Revision, attrs)
	if err != nil {
		return fmt.Errorf("knowledge: append event: %w", err)
	}
	return nil
}

// attrsJSON is the attributes as the attrs column holds them. A value JSON
// cannot encode is kept as its printed form rather than losing the line.
func attrsJSON(attrs map[string]any) string {
	if len(attrs) == 0 {
		return "{}"
	}
	b, err := json.Marshal(attrs)
	if err == nil {
		return string(b)
	}
	printable := make(map[string]any, len(attrs))
	for k, v := range attrs {
		if _, err := json.Marshal(v); err != nil {
			v = fmt.Sprint(v)
		}
		printable[k] = v
	}
	b, err = json.Marshal(printable)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// LogQuery selects a page of the log, newest first.
type LogQuery struct {
	// Level is the least severe level shown; "" shows every level.
	Level string
	// AppID keeps the events of one application; "" keeps all.
	AppID string
	// RunID keeps the events of one run (a task's attempt, a chat turn);
	// "" keeps all.
	RunID string
	// Before, when not 0, shows only events with a smaller id: the next page
	// starts before the last id of this one.
	Before int64
	// Limit is the page size: 200 when 0, at most 1000.
	Limit int
}

// eventRow is an events row as SQLite holds it.
type eventRow struct {
	ID        int64          `db:"id"`
	At        int64          `db:"at"`
	Level     Level          `db:"level"`
	Message   string         `db:"message"`
	RunID     sql.NullString `db:"run_id"`
	CallID    sql.NullString `db:"call_id"`
	AppID     sql.NullString `db:"app_id"`
	ReleaseID sql.NullString `db:"release_id"`
	Revision  sql.NullString `db:"revision"`
	Attrs     string         `db:"attrs"`
}

const eventColumns = `id, at, level, message, run_id, call_id, app_id, release_id, revision, attrs`

func (r eventRow) event() (Event, error) {
	e := Event{ID: r.ID, At: time.UnixMilli(r.At), Level: r.Level, Message: r.Message, RunID: r.RunID,
		CallID: r.CallID, AppID: r.AppID, ReleaseID: r.ReleaseID, Revision: r.Revision}
	if err := json.Unmarshal([]byte(r.Attrs), &e.Attrs); err != nil {
		return e, fmt.Errorf("knowledge: event %d: attrs is not the JSON it should be: %w", r.ID, err)
	}
	return e, nil
}

// Log reads one page of events, newest first.
func (s *Store) Log(ctx context.Context, q LogQuery) ([]Event, error) {
	limit := q.Limit
	switch {
	case limit <= 0:
		limit = 200
	case limit > 1000:
		limit = 1000
	}
	least := Level(q.Level)
	if least == "" {
		least = LevelDebug
	}
	if !least.known() {
		return nil, refuse(refusal.Invalid, "A log level is one of debug, info, warn or error, not %q.", q.Level)
	}
	// One arm per level shown, each walking (level, id) or (app_id, level,
	// id) down from the newest id and stopping after limit rows; the arms
	// merge in id order. A single IN over the levels would read every row of
	// those levels to sort them. Without a level, (app_id, id) or the
	// primary key serves the page directly.
	where, args := []string{}, []any{}
	if q.AppID != "" {
		where, args = append(where, "app_id = ?"), append(args, q.AppID)
	}
	if q.RunID != "" {
		where, args = append(where, "run_id = ?"), append(args, q.RunID)
	}
	if q.Before > 0 {
		where, args = append(where, "id < ?"), append(args, q.Before)
	}
	var query string
	var all []any
	if least == LevelDebug {
		query = `SELECT ` + eventColumns + ` FROM events` + whereClause(where) + ` ORDER BY id DESC LIMIT ?`
		all = append(args, limit)
	} else {
		arms := []string{}
		for _, l := range least.atLeast() {
			arms = append(arms, `SELECT * FROM (SELECT `+eventColumns+` FROM events`+
				whereClause(append([]string{"level = ?"}, where...))+` ORDER BY id DESC LIMIT ?)`)
			all = append(append(append(all, l), args...), limit)
		}
		query = strings.Join(arms, ` UNION ALL `) + ` ORDER BY id DESC LIMIT ?`
		all = append(all, limit)
	}
	var rows []eventRow
	if err := s.db.Read.SelectContext(ctx, &rows, query, all...); err != nil {
		return nil, fmt.Errorf("knowledge: reading the log: %w", err)
	}
	out := make([]Event, 0, len(rows))
	for _, r := range rows {
		e, err := r.event()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func whereClause(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return ` WHERE ` + strings.Join(conds, ` AND `)
}
