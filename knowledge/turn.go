package knowledge

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"autoapp/intent/refusal"
	"autoapp/knowledge/origin"
)

// TurnKind says what a turn was for.
type TurnKind string

// The kinds of turn.
const (
	TurnChat     TurnKind = "chat"
	TurnPlanning TurnKind = "planning"
	TurnBuilder  TurnKind = "builder"
	TurnAdvice   TurnKind = "advice"
	TurnDistill  TurnKind = "distill"
)

// TurnKinds lists the kinds of turn.
var TurnKinds = []TurnKind{TurnChat, TurnPlanning, TurnBuilder, TurnAdvice, TurnDistill}

func (k TurnKind) known() bool { return slices.Contains(TurnKinds, k) }

// DeliveredDoc is one document as a turn was given it.
type DeliveredDoc struct {
	// Ref names the document for the record (digest:notes, knowledge:case-12).
	Ref   string
	Title string
	// Text is exactly what the turn was given, after any cut.
	Text string
	// Cut is true when the budget cut the document short.
	Cut bool
}

// Turn is what RecordTurn keeps of one turn.
type Turn struct {
	// At is when the turn started; now when zero.
	At    time.Time
	AppID string
	// RunID is the run of the turn's own envelope; empty for none.
	RunID string
	Kind  TurnKind
	// Instructions is the text the turn ran under; only its hash is on the
	// row, and the text is kept as a blob.
	Instructions string
	// Request is the words the turn was about.
	Request   string
	Documents []DeliveredDoc
}

// DocumentRef is a delivered document as a contexts row lists it: its text
// is the blob Hash.
type DocumentRef struct {
	Ref   string `json:"ref"`
	Title string `json:"title"`
	Hash  string `json:"hash"`
	// Bytes is the length of the delivered text in bytes, Delivered in
	// characters.
	Bytes     int  `json:"bytes"`
	Cut       bool `json:"cut"`
	Delivered int  `json:"delivered"`
}

// TurnRow is one contexts row. The turn's edits, builds, checks, cases and
// servings are read from their own tables and are not part of it.
type TurnRow struct {
	ID               int64
	At               time.Time
	AppID            string
	RunID            string
	Kind             TurnKind
	InstructionsHash string
	Request          string
	Documents        []DocumentRef
	// CallID, ReleaseID and Revision are the rest of the identity the row
	// was written under: the turn's own call (<runId>:turn) and where the
	// application stood as its documents were delivered; "" for none.
	CallID, ReleaseID, Revision string
	// CorpusVersion is the corpus version its lessons were served from
	// (0 before any lesson changed, and for a turn recorded before
	// versions were counted).
	CorpusVersion int64
}

// DocumentText is a delivered document with its text as delivered.
type DocumentText struct {
	DocumentRef
	Text string
}

// Hash is the SHA-256 of text in hex: the key a blob is kept under.
func Hash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// putBlob keeps text as a blob and returns its hash; a text already kept is
// not written again.
func putBlob(ctx context.Context, tx *sqlx.Tx, text string, now time.Time) (string, error) {
	hash := Hash(text)
	_, err := tx.ExecContext(ctx, `INSERT INTO blobs (hash, text, bytes, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (hash) DO NOTHING`, hash, text, len(text), now.UnixMilli())
	if err != nil {
		return "", fmt.Errorf("knowledge: keeping a blob: %w", err)
	}
	return hash, nil
}

// Blob is the text kept under hash.
func (s *Store) Blob(ctx context.Context, hash string) (string, error) {
	return readBlob(ctx, s.db.Read, hash)
}

// readBlob is the text kept under hash, read through q.
func readBlob(ctx context.Context, q sqlx.QueryerContext, hash string) (string, error) {
	var text string
	err := sqlx.GetContext(ctx, q, &text, `SELECT text FROM blobs WHERE hash = ?`, hash)
	if errors.Is(err, sql.ErrNoRows) {
		return "", refuse(refusal.NotFound, "No text is kept under %s.", hash)
	}
	if err != nil {
		return "", fmt.Errorf("knowledge: reading blob %s: %w", hash, err)
	}
	return text, nil
}

// RecordTurn writes one contexts row for t, keeping its instructions and
// each document's text as blobs, in one transaction, with the call,
// release and revision of ctx's identity. It returns the row's id.
//
// A turn with a run is recorded once: the executor records it as its
// documents are delivered, so that what its tools open can name the row,
// and again when it ends; recording the same turn again (the same run,
// kind, instructions, request and documents as delivered) writes nothing
// and answers the row already written.
func (s *Store) RecordTurn(ctx context.Context, t Turn) (int64, error) {
	if !t.Kind.known() {
		return 0, refuse(refusal.Invalid, "A turn's kind is one of chat, planning, builder, advice or distill, not %q.", t.Kind)
	}
	now := s.now()
	if t.At.IsZero() {
		t.At = now
	}
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("knowledge: recording a turn: %w", err)
	}
	defer tx.Rollback()
	instructions, err := putBlob(ctx, tx, t.Instructions, now)
	if err != nil {
		return 0, err
	}
	docs := make([]DocumentRef, 0, len(t.Documents))
	for i, d := range t.Documents {
		if d.Ref == "" {
			return 0, refuse(refusal.Invalid, "Document %d of the turn has no ref.", i+1)
		}
		hash, err := putBlob(ctx, tx, d.Text, now)
		if err != nil {
			return 0, err
		}
		docs = append(docs, DocumentRef{Ref: d.Ref, Title: d.Title, Hash: hash, Bytes: len(d.Text),
			Cut: d.Cut, Delivered: utf8.RuneCountInString(d.Text)})
	}
	documents, err := json.Marshal(docs)
	if err != nil {
		return 0, fmt.Errorf("knowledge: recording a turn: %w", err)
	}
	key := turnKey(t, instructions, documents)
	who := origin.IdentityFrom(ctx)
	// The lessons were read for the turn a moment ago: the version in
	// force now is the one they were served from.
	res, err := tx.ExecContext(ctx, `INSERT INTO contexts (at, app_id, run_id, kind, instructions_hash, request, documents, turn_key,
			call_id, release_id, revision, corpus_version)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, `+currentVersion+`)
		ON CONFLICT (turn_key) WHERE turn_key IS NOT NULL DO NOTHING`,
		t.At.UnixMilli(), nullable(t.AppID), nullable(t.RunID), t.Kind, instructions, t.Request, string(documents), key,
		nullable(who.CallID), nullable(who.ReleaseID), nullable(who.Revision))
	if err != nil {
		return 0, fmt.Errorf("knowledge: recording a turn: %w", err)
	}
	var id int64
	if n, err := res.RowsAffected(); err != nil {
		return 0, fmt.Errorf("knowledge: recording a turn: %w", err)
	} else if n == 0 {
		// Recorded before: the row already written stands.
		if err := tx.GetContext(ctx, &id, `SELECT id FROM contexts WHERE turn_key = ?`, key); err != nil {
			return 0, fmt.Errorf("knowledge: recording a turn: %w", err)
		}
	} else if id, err = res.LastInsertId(); err != nil {
		return 0, fmt.Errorf("knowledge: recording a turn: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("knowledge: recording a turn: %w", err)
	}
	return id, nil
}

// turnKey names a turn with a run by what its row records of it, so that
// recording it twice is one row; a turn with no run has none (NULL).
func turnKey(t Turn, instructions string, documents []byte) sql.NullString {
	if t.RunID == "" {
		return sql.NullString{}
	}
	h := sha256.New()
	for _, part := range []string{t.RunID, string(t.Kind), t.AppID, instructions, t.Request, string(documents)} {
		fmt.Fprintf(h, "%d:%s\n", len(part), part)
	}
	return sql.NullString{String: hex.EncodeToString(h.Sum(nil)), Valid: true}
}

// TurnQuery selects a page of turns, newest first.
type TurnQuery struct {
	// AppID keeps the turns of one application; "" keeps all.
	AppID string
	// Before, when not 0, shows only turns with a smaller id.
	Before int64
	// Limit is the page size: 50 when 0, at most 500.
	Limit int
}

// contextRow is a contexts row as SQLite holds it.
type contextRow struct {
	ID               int64          `db:"id"`
	At               int64          `db:"at"`
	AppID            sql.NullString `db:"app_id"`
	RunID            sql.NullString `db:"run_id"`
	Kind             TurnKind       `db:"kind"`
	InstructionsHash string         `db:"instructions_hash"`
	Request          string         `db:"request"`
	Documents        string         `db:"documents"`
	CallID           sql.NullString `db:"call_id"`
	ReleaseID        sql.NullString `db:"release_id"`
	Revision         sql.NullString `db:"revision"`
	CorpusVersion    int64          `db:"corpus_version"`
}

const contextColumns = `id, at, app_id, run_id, kind, instructions_hash, request, documents, call_id, release_id, revision,
	coalesce(corpus_version, 0) AS corpus_version`

func (r contextRow) turn() (TurnRow, error) {
	t := TurnRow{ID: r.ID, At: time.UnixMilli(r.At), AppID: r.AppID.String, RunID: r.RunID.String,
		CallID: r.CallID.String, ReleaseID: r.ReleaseID.String, Revision: r.Revision.String,
		Kind: r.Kind, InstructionsHash: r.InstructionsHash, Request: r.Request, CorpusVersion: r.CorpusVersion}
	if err := json.Unmarshal([]byte(r.Documents), &t.Documents); err != nil {
		return t, fmt.Errorf("knowledge: turn %d: documents is not the JSON it should be: %w", r.ID, err)
	}
	return t, nil
}

// Turns reads one page of turns, newest first.
func (s *Store) Turns(ctx context.Context, q TurnQuery) ([]TurnRow, error) {
	limit := q.Limit
	switch {
	case limit <= 0:
		limit = 50
	case limit > 500:
		limit = 500
	}
	where, args := []string{}, []any{}
	if q.AppID != "" {
		where, args = append(where, "app_id = ?"), append(args, q.AppID)
	}
	if q.Before > 0 {
		where, args = append(where, "id < ?"), append(args, q.Before)
	}
	var rows []contextRow
	err := s.db.Read.SelectContext(ctx, &rows, `SELECT `+contextColumns+` FROM contexts`+whereClause(where)+
		` ORDER BY id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("knowledge: reading turns: %w", err)
	}
	out := make([]TurnRow, 0, len(rows))
	for _, r := range rows {
		t, err := r.turn()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// Turn reads one turn and each document's text as it was delivered, in the
// order the turn was given them.
func (s *Store) Turn(ctx context.Context, id int64) (TurnRow, []DocumentText, error) {
	return readTurn(ctx, s.db.Read, id)
}

// readTurn reads one contexts row and its documents' texts from db, in one
// read transaction.
func readTurn(ctx context.Context, db *sqlx.DB, id int64) (TurnRow, []DocumentText, error) {
	tx, err := db.BeginTxx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return TurnRow{}, nil, fmt.Errorf("knowledge: reading turn %d: %w", id, err)
	}
	defer tx.Rollback()
	var r contextRow
	err = tx.GetContext(ctx, &r, `SELECT `+contextColumns+` FROM contexts WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return TurnRow{}, nil, refuse(refusal.NotFound, "There is no turn %d.", id)
	}
	if err != nil {
		return TurnRow{}, nil, fmt.Errorf("knowledge: reading turn %d: %w", id, err)
	}
	t, err := r.turn()
	if err != nil {
		return TurnRow{}, nil, err
	}
	texts := make([]DocumentText, 0, len(t.Documents))
	for _, d := range t.Documents {
		var text string
		if err := tx.GetContext(ctx, &text, `SELECT text FROM blobs WHERE hash = ?`, d.Hash); err != nil {
			return TurnRow{}, nil, fmt.Errorf("knowledge: turn %d: the text of %s: %w", id, d.Ref, err)
		}
		texts = append(texts, DocumentText{DocumentRef: d, Text: text})
	}
	return t, texts, nil
}
