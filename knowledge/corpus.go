package knowledge

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// The changes a corpus version records: what was done to the lessons a
// turn can be served.
const (
	ChangeDistill   = "distill"   // the distiller kept a provisional lesson
	ChangeWrite     = "write"     // a person wrote a lesson
	ChangeConfirm   = "confirm"   // a person confirmed a lesson
	ChangeRetire    = "retire"    // a person retired a lesson
	ChangeReplace   = "replace"   // a person replaced a lesson with a new one
	ChangeSupersede = "supersede" // the distiller superseded a lesson with a new one
)

// ActorDistiller is who a distilled lesson's corpus version names.
const ActorDistiller = "distiller"

// CorpusVersion is one change to the lessons a turn can be served: its
// number, which only increases, who made it, when, and what it was. A
// turn's contexts row and a case name the version they were served from.
type CorpusVersion struct {
	Version  int64     `json:"version" db:"version"`
	At       time.Time `json:"at" db:"-"`
	Actor    string    `json:"actor" db:"actor"`
	Change   string    `json:"change" db:"change"`
	LessonID int64     `json:"lesson" db:"lesson_id"`
	Summary  string    `json:"summary" db:"summary"`
}

// currentVersion is the SQL of the corpus version in force: the newest,
// or 0 before any was written.
const currentVersion = `(SELECT coalesce(max(version), 0) FROM corpus_versions)`

// newVersion writes the one corpus version of a change, in the change's
// transaction, and answers its number.
func newVersion(ctx context.Context, tx *sqlx.Tx, at time.Time, actor, change string, lessonID int64, summary string) (int64, error) {
	res, err := tx.ExecContext(ctx,
		`INSERT INTO corpus_versions (at, actor, change, lesson_id, summary) VALUES (?, ?, ?, ?, ?)`,
		at.UnixMilli(), actor, change, lessonID, summary)
	if err != nil {
		return 0, fmt.Errorf("knowledge: a corpus version: %w", err)
	}
	return res.LastInsertId()
}

// enterIndex writes the version at which lesson id entered the index.
func enterIndex(ctx context.Context, tx *sqlx.Tx, id, version int64) error {
	if _, err := tx.ExecContext(ctx, `UPDATE lessons SET entered_version = ? WHERE id = ?`, version, id); err != nil {
		return fmt.Errorf("knowledge: lesson %d enters the index: %w", id, err)
	}
	return nil
}

// CorpusVersion is the corpus version in force now: the newest, or 0
// before any lesson changed.
func (s *Lessons) CorpusVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := s.db.Read.GetContext(ctx, &v, `SELECT `+currentVersion); err != nil {
		return 0, fmt.Errorf("knowledge: the corpus version: %w", err)
	}
	return v, nil
}

// Versions are the corpus versions that name lesson id, or that a change
// of another lesson wrote about it (a replacement or supersession of it),
// oldest first.
func (s *Lessons) Versions(ctx context.Context, id int64) ([]CorpusVersion, error) {
	var rows []struct {
		CorpusVersion
		At int64 `db:"at"`
	}
	if err := s.db.Read.SelectContext(ctx, &rows,
		`SELECT version, at, actor, change, lesson_id, summary FROM corpus_versions
		 WHERE lesson_id = ?
		    OR version = (SELECT left_version FROM lessons WHERE id = ?)
		 ORDER BY version`, id, id); err != nil {
		return nil, fmt.Errorf("knowledge: lesson %d's corpus versions: %w", id, err)
	}
	out := make([]CorpusVersion, len(rows))
	for i, r := range rows {
		out[i] = r.CorpusVersion
		out[i].At = time.UnixMilli(r.At)
	}
	return out, nil
}

// IndexSentence says at which corpus versions the lesson entered the index
// and left it.
func (l Lesson) IndexSentence() string {
	entered := fmt.Sprintf("corpus version %d", l.EnteredVersion)
	at := "at " + entered
	if l.EnteredVersion == 0 {
		entered, at = "before corpus versions were counted", "before corpus versions were counted"
	}
	switch {
	case l.MethodUnclear && l.InService():
		return fmt.Sprintf("Kept %s; never served.", at)
	case l.InService():
		return fmt.Sprintf("In the index since %s.", entered)
	case l.LeftVersion == 0:
		return fmt.Sprintf("Entered the index %s and left it (%s) before versions were counted.", at, l.Status)
	}
	return fmt.Sprintf("Entered the index %s; left it at corpus version %d (%s).", at, l.LeftVersion, l.Status)
}
