package knowledge

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"autoapp/intent/refusal"
	"autoapp/migrations"
)

// The states of a lesson. Provisional and confirmed lessons are served;
// retired and superseded ones are kept for the record and never served.
const (
	LessonProvisional = "provisional"
	LessonConfirmed   = "confirmed"
	LessonRetired     = "retired"
	LessonSuperseded  = "superseded"
)

// Where a lesson came from: distilled from a case by the model, or curated
// (written by a person).
const (
	OriginDistilled = "distilled"
	OriginCurated   = "curated"
)

// The review flags: why a person should look at a lesson again. A flag
// never changes a lesson's status; Confirm clears them. Review raises the
// first three on start.
const (
	// FlagRecurring: served three times for a failure that came back,
	// and never once resolved, since it was last reviewed.
	FlagRecurring = "recurring"
	// FlagInstructionsChanged: written for other instructions than the
	// running ones, and recurred twice since in turns given other ones.
	FlagInstructionsChanged = "instructions_changed"
	// FlagAutoappUpgraded: distilled by a launcher of another minor
	// version, and never reviewed.
	FlagAutoappUpgraded = "autoapp_upgraded"
	// FlagSuperseded: a newer lesson names the same cause.
	FlagSuperseded = "superseded"
)

// DefaultLessonLimit is how many lessons List answers when asked for none
// in particular; MaxLessonLimit is the most it answers.
const (
	DefaultLessonLimit = 100
	MaxLessonLimit     = 1000
)

// Applies says where a lesson applies: the build stage, the files and
// routes, and the failure's signature. Every part may be empty.
type Applies struct {
	Stage     string   `json:"stage,omitempty"`
	Files     []string `json:"files,omitempty"`
	Routes    []string `json:"routes,omitempty"`
	Signature string   `json:"signature,omitempty"`
}

// Lesson is one thing the engineer should know. Its text never changes; a
// correction is a new lesson that supersedes it.
type Lesson struct {
	ID     int64  `json:"id"`
	Text   string `json:"text"`
	Status string `json:"status"`
	Origin string `json:"origin"`
	// CaseID is the case it was distilled from; 0 for a curated lesson
	// written from nothing.
	CaseID           int64     `json:"caseId,omitempty"`
	Applies          Applies   `json:"applies"`
	InstructionsHash string    `json:"instructionsHash,omitempty"`
	ServerVersion    string    `json:"serverVersion,omitempty"`
	CreatedAt        time.Time `json:"createdAt"`
	ConfirmedAt      time.Time `json:"confirmedAt,omitzero"`
	ConfirmedBy      string    `json:"confirmedBy,omitempty"`
	RetiredAt        time.Time `json:"retiredAt,omitzero"`
	RetiredBy        string    `json:"retiredBy,omitempty"`
	SupersededBy     int64     `json:"supersededBy,omitempty"`
	// Supersedes is the lesson this one was written to supersede: its
	// replacement by a person, or the distiller's answer that a case had
	// the same cause. 0 for none.
	Supersedes int64 `json:"supersedes,omitempty"`
	Pinned     bool  `json:"pinned"`
	// MethodUnclear is true for what a method_unclear answer of the
	// distiller kept: its text says what about the way of working was
	// unclear. It is shown and can be retired, and is never served.
	MethodUnclear bool `json:"methodUnclear,omitempty"`
	// Flags are the review flags it carries, empty when it needs none.
	Flags []string `json:"flags,omitempty"`
	// EnteredVersion is the corpus version the lesson entered the index
	// at (0 for a lesson kept before versions were counted); LeftVersion
	// the one it left at, when it is retired or superseded.
	EnteredVersion int64 `json:"enteredVersion"`
	LeftVersion    int64 `json:"leftVersion,omitempty"`
}

// InIndexAt reports whether the lesson was in the index at corpus version
// v: it had entered by then and had not yet left.
func (l Lesson) InIndexAt(v int64) bool {
	return l.EnteredVersion <= v && (l.InService() || l.LeftVersion > v)
}

// NeedsReview reports whether a person should look at the lesson again.
func (l Lesson) NeedsReview() bool { return len(l.Flags) > 0 }

// InService reports whether the lesson is provisional or confirmed: not
// retired and not superseded.
func (l Lesson) InService() bool {
	return l.Status == LessonProvisional || l.Status == LessonConfirmed
}

// Servable reports whether the lesson may be given to a turn: in service,
// and not what a method_unclear answer kept.
func (l Lesson) Servable() bool { return l.InService() && !l.MethodUnclear }

// Confirmable is the rule for confirming the lesson: a provisional one, or
// a confirmed one carrying review flags, that may be served. When not, the
// refusal says why; the Knowledge page offers Confirm by the same rule.
func (l Lesson) Confirmable() error {
	switch {
	case l.MethodUnclear:
		return refuse(refusal.Conflict, "Lesson %d says only that the way of working was unclear; it is never served, so there is nothing to confirm. Retire it once you have read it.", l.ID)
	case l.Status == LessonConfirmed && !l.NeedsReview():
		return refuse(refusal.Conflict, "Lesson %d is confirmed already and needs no review.", l.ID)
	case !canMoveLesson(l.Status, LessonConfirmed):
		return refuse(refusal.Conflict, "Lesson %d is %s; only a provisional or confirmed lesson can be confirmed.", l.ID, l.Status)
	}
	return nil
}

// Lessons keeps, reviews and matches lessons in the knowledge store. It
// needs only the store's database, so it can be built beside the Store.
type Lessons struct {
	db    *migrations.DB
	now   func() time.Time
	cases *Cases

	// running is what a lesson distilled now records when its case does
	// not say.
	running Running
}

// Running is the hash of the builder's instructions running now and the
// server's version: a lesson distilled records them when its case does
// not say (a case opened during a turn names no contexts row, since the
// row is written when the turn ends).
type Running struct {
	InstructionsHash, ServerVersion string
}

// NewLessons keeps lessons in db (the knowledge store, migrated), stamping
// them with now; running is what this process runs.
func NewLessons(db *migrations.DB, now func() time.Time, running Running) *Lessons {
	running.InstructionsHash = strings.TrimSpace(running.InstructionsHash)
	running.ServerVersion = strings.TrimSpace(running.ServerVersion)
	return &Lessons{db: db, now: now, cases: NewCases(db, now), running: running}
}

// LessonQuery selects lessons for List. The zero value lists the newest
// provisional and confirmed lessons.
type LessonQuery struct {
	Status        string // "" for provisional and confirmed; one status otherwise
	NeedsReview   bool   // only lessons carrying a review flag
	MethodUnclear bool   // only what method_unclear answers kept
	Limit         int    // 0 for DefaultLessonLimit; at most MaxLessonLimit
}

// lessonColumns are the columns lessonRow reads, in the order of its fields.
const lessonColumns = `id, text, status, origin, case_id, applies_stage, applies_files, applies_routes,
	applies_signature, instructions_hash, server_version, created_at, confirmed_at, confirmed_by,
	retired_at, retired_by, superseded_by, supersedes, pinned, method_unclear, flags,
	entered_version, left_version`

// lessonRow is a lessons row as SQLite holds it.
type lessonRow struct {
	ID               int64          `db:"id"`
	Text             string         `db:"text"`
	Status           string         `db:"status"`
	Origin           string         `db:"origin"`
	CaseID           sql.NullInt64  `db:"case_id"`
	Stage            string         `db:"applies_stage"`
	Files            string         `db:"applies_files"`
	Routes           string         `db:"applies_routes"`
	Signature        string         `db:"applies_signature"`
	InstructionsHash string         `db:"instructions_hash"`
	ServerVersion    string         `db:"server_version"`
	CreatedAt        int64          `db:"created_at"`
	ConfirmedAt      sql.NullInt64  `db:"confirmed_at"`
	ConfirmedBy      sql.NullString `db:"confirmed_by"`
	RetiredAt        sql.NullInt64  `db:"retired_at"`
	RetiredBy        sql.NullString `db:"retired_by"`
	SupersededBy     sql.NullInt64  `db:"superseded_by"`
	Supersedes       sql.NullInt64  `db:"supersedes"`
	Pinned           bool           `db:"pinned"`
	MethodUnclear    bool           `db:"method_unclear"`
	Flags            string         `db:"flags"`
	EnteredVersion   int64          `db:"entered_version"`
	LeftVersion      sql.NullInt64  `db:"left_version"`
}

func (r lessonRow) toLesson() (Lesson, error) {
	l := Lesson{
		ID: r.ID, Text: r.Text, Status: r.Status, Origin: r.Origin, CaseID: r.CaseID.Int64,
		Applies:          Applies{Stage: r.Stage, Signature: r.Signature},
		InstructionsHash: r.InstructionsHash, ServerVersion: r.ServerVersion,
		CreatedAt: time.UnixMilli(r.CreatedAt), ConfirmedBy: r.ConfirmedBy.String,
		SupersededBy: r.SupersededBy.Int64, Supersedes: r.Supersedes.Int64, Pinned: r.Pinned,
		RetiredBy: r.RetiredBy.String, MethodUnclear: r.MethodUnclear,
		EnteredVersion: r.EnteredVersion, LeftVersion: r.LeftVersion.Int64,
	}
	if r.ConfirmedAt.Valid {
		l.ConfirmedAt = time.UnixMilli(r.ConfirmedAt.Int64)
	}
	if r.RetiredAt.Valid {
		l.RetiredAt = time.UnixMilli(r.RetiredAt.Int64)
	}
	for _, f := range []struct {
		raw string
		to  *[]string
	}{{r.Files, &l.Applies.Files}, {r.Routes, &l.Applies.Routes}, {r.Flags, &l.Flags}} {
		if err := json.Unmarshal([]byte(f.raw), f.to); err != nil {
			return Lesson{}, fmt.Errorf("knowledge: lesson %d: %w", r.ID, err)
		}
	}
	if len(l.Applies.Files) == 0 {
		l.Applies.Files = nil
	}
	if len(l.Applies.Routes) == 0 {
		l.Applies.Routes = nil
	}
	if len(l.Flags) == 0 {
		l.Flags = nil
	}
	return l, nil
}

func toLessons(rows []lessonRow) ([]Lesson, error) {
	out := make([]Lesson, 0, len(rows))
	for _, r := range rows {
		l, err := r.toLesson()
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// jsonList is list as a JSON array, never null.
func jsonList(list []string) string {
	if list == nil {
		list = []string{}
	}
	b, _ := json.Marshal(list) // a []string always marshals
	return string(b)
}

// cleanList drops blank entries and repeats, keeping the order.
func cleanList(list []string) []string {
	var out []string
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Get reads one lesson.
func (s *Lessons) Get(ctx context.Context, id int64) (Lesson, error) {
	return getLesson(ctx, s.db.Read, id)
}

// getLesson reads lesson id through q, the read pool or a transaction.
func getLesson(ctx context.Context, q sqlx.QueryerContext, id int64) (Lesson, error) {
	var r lessonRow
	err := sqlx.GetContext(ctx, q, &r, `SELECT `+lessonColumns+` FROM lessons WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Lesson{}, refuse(refusal.NotFound, "There is no lesson %d.", id)
	}
	if err != nil {
		return Lesson{}, fmt.Errorf("knowledge: lesson %d: %w", id, err)
	}
	return r.toLesson()
}

// List answers the lessons q selects, newest first.
func (s *Lessons) List(ctx context.Context, q LessonQuery) ([]Lesson, error) {
	switch {
	case q.Limit < 0:
		return nil, refuse(refusal.Invalid, "A limit cannot be negative.")
	case q.Limit == 0:
		q.Limit = DefaultLessonLimit
	case q.Limit > MaxLessonLimit:
		q.Limit = MaxLessonLimit
	}
	query := `SELECT ` + lessonColumns + ` FROM lessons`
	var args []any
	switch q.Status {
	case "":
		query += ` WHERE status IN ('provisional', 'confirmed')`
	case LessonProvisional, LessonConfirmed, LessonRetired, LessonSuperseded:
		query += ` WHERE status = ?`
		args = append(args, q.Status)
	default:
		return nil, refuse(refusal.Invalid, "%q is not a status of a lesson.", q.Status)
	}
	if q.NeedsReview {
		query += ` AND flags <> '[]'`
	}
	if q.MethodUnclear {
		query += ` AND method_unclear = 1`
	}
	query += ` ORDER BY id DESC LIMIT ?`
	args = append(args, q.Limit)
	var rows []lessonRow
	if err := s.db.Read.SelectContext(ctx, &rows, query, args...); err != nil {
		return nil, fmt.Errorf("knowledge: lessons: %w", err)
	}
	return toLessons(rows)
}

// Add keeps l as a new provisional lesson distilled from case l.CaseID and
// answers its id, marked method_unclear when l says so. Status, times,
// review and supersession fields of l are ignored. A text that names a
// path on this machine, an address with a port or anything shaped like a
// secret is refused (see CheckLessonText).
func (s *Lessons) Add(ctx context.Context, l Lesson) (int64, error) {
	if l.CaseID <= 0 {
		return 0, refuse(refusal.Invalid, "A distilled lesson needs the case it was distilled from.")
	}
	l.Status, l.Origin = LessonProvisional, OriginDistilled
	return s.insert(ctx, l)
}

// Write keeps text as a lesson a person wrote: curated, and confirmed at
// once by its writer, by. The files it applies to are paths inside the
// application's workspace; one that is not is refused.
func (s *Lessons) Write(ctx context.Context, text, by string, applies Applies) (int64, error) {
	by = strings.TrimSpace(by)
	if by == "" {
		return 0, refuse(refusal.Invalid, "A written lesson needs the name of the person who wrote it.")
	}
	files, err := workspaceFiles(applies.Files)
	if err != nil {
		return 0, err
	}
	applies.Files = files
	return s.insert(ctx, Lesson{
		Text: text, Status: LessonConfirmed, Origin: OriginCurated, Applies: applies,
		ConfirmedBy: by, ConfirmedAt: s.now(),
	})
}

func (s *Lessons) insert(ctx context.Context, l Lesson) (int64, error) {
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("knowledge: add a lesson: %w", err)
	}
	defer tx.Rollback()
	id, err := insertLesson(ctx, tx, s.now(), l)
	if err != nil {
		return 0, err
	}
	actor, change, summary := ActorDistiller, ChangeDistill, fmt.Sprintf("Lesson %d was distilled from case %d.", id, l.CaseID)
	if l.Origin == OriginCurated {
		actor, change, summary = l.ConfirmedBy, ChangeWrite, fmt.Sprintf("Lesson %d was written by %s.", id, l.ConfirmedBy)
		if err := reviewEvent(ctx, tx, s.now(), "write", id, l.ConfirmedBy, summary, nil); err != nil {
			return 0, err
		}
	}
	version, err := newVersion(ctx, tx, s.now(), actor, change, id, summary)
	if err != nil {
		return 0, err
	}
	if err := enterIndex(ctx, tx, id, version); err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("knowledge: add a lesson: %w", err)
	}
	return id, nil
}

// workspaceFiles are files as paths inside an application's workspace,
// without a leading "./", blanks and repeats dropped; a path that leaves
// the workspace or names this machine's folders is refused.
func workspaceFiles(files []string) ([]string, error) {
	var out []string
	for _, f := range files {
		p := strings.TrimPrefix(strings.TrimSpace(f), "./")
		if p == "" {
			continue
		}
		if strings.HasPrefix(p, "/") || strings.Contains(p, `\`) || strings.Contains(p, ":") ||
			slices.Contains(strings.Split(p, "/"), "..") {
			return nil, refuse(refusal.Invalid, "A lesson's file is a path inside the application's workspace, such as src/app.ts; %q is not.", strings.TrimSpace(f))
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// reviewEvent writes the one log line a review writes, in its
// transaction: who did what (confirm, retire, write, replace) to which
// lesson. more are further attributes.
func reviewEvent(ctx context.Context, tx *sqlx.Tx, at time.Time, review string, lesson int64, by, line string, more map[string]any) error {
	attrs := map[string]any{"review": review, "lesson": lesson, "by": by}
	maps.Copy(attrs, more)
	return insertEvent(ctx, tx, Event{At: at, Level: LevelInfo, Message: line}, attrsJSON(attrs))
}

// insertLesson checks l's text and inserts it as it stands, created at.
func insertLesson(ctx context.Context, tx *sqlx.Tx, at time.Time, l Lesson) (int64, error) {
	l.Text = strings.TrimSpace(l.Text)
	if err := CheckLessonText(l.Text); err != nil {
		return 0, err
	}
	caseID := sql.NullInt64{Int64: l.CaseID, Valid: l.CaseID > 0}
	supersedes := sql.NullInt64{Int64: l.Supersedes, Valid: l.Supersedes > 0}
	var confirmedAt sql.NullInt64
	var confirmedBy sql.NullString
	if l.Status == LessonConfirmed {
		confirmedAt = sql.NullInt64{Int64: l.ConfirmedAt.UnixMilli(), Valid: true}
		confirmedBy = sql.NullString{String: l.ConfirmedBy, Valid: true}
	}
	res, err := tx.ExecContext(ctx,
		`INSERT INTO lessons (text, status, origin, case_id, applies_stage, applies_files, applies_routes,
			applies_signature, instructions_hash, server_version, created_at, confirmed_at, confirmed_by, supersedes, pinned, method_unclear)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		l.Text, l.Status, l.Origin, caseID, strings.TrimSpace(l.Applies.Stage),
		jsonList(cleanList(l.Applies.Files)), jsonList(cleanList(l.Applies.Routes)),
		strings.TrimSpace(l.Applies.Signature), l.InstructionsHash, l.ServerVersion,
		at.UnixMilli(), confirmedAt, confirmedBy, supersedes, l.Pinned, l.MethodUnclear)
	if err != nil {
		return 0, fmt.Errorf("knowledge: add a lesson: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("knowledge: add a lesson: %w", err)
	}
	return id, nil
}

// Confirm records that by has confirmed lesson id: a provisional lesson
// becomes confirmed, and a confirmed one carrying review flags is
// confirmed again with its flags cleared. Confirming a confirmed lesson
// that needs no review, or one retired or superseded, is refused with
// refusal.Conflict.
func (s *Lessons) Confirm(ctx context.Context, id int64, by string) error {
	by = strings.TrimSpace(by)
	if by == "" {
		return refuse(refusal.Invalid, "Confirming a lesson needs the name of the person confirming it.")
	}
	return s.change(ctx, id, "confirm", func(tx *sqlx.Tx, l Lesson) error {
		if err := l.Confirmable(); err != nil {
			return err
		}
		v, err := newVersion(ctx, tx, s.now(), by, ChangeConfirm, l.ID, fmt.Sprintf("Lesson %d was confirmed by %s.", l.ID, by))
		if err != nil {
			return err
		}
		return moveLesson(ctx, tx, s.now(), l, LessonConfirmed, lessonStamp{by: by, version: v})
	})
}

// Retire records that by takes lesson id out of service for good. Only a
// provisional or a confirmed lesson can be retired; anything else is
// refused with refusal.Conflict.
func (s *Lessons) Retire(ctx context.Context, id int64, by string) error {
	by = strings.TrimSpace(by)
	if by == "" {
		return refuse(refusal.Invalid, "Retiring a lesson needs the name of the person retiring it.")
	}
	return s.change(ctx, id, "retire", func(tx *sqlx.Tx, l Lesson) error {
		if !canMoveLesson(l.Status, LessonRetired) {
			return refuse(refusal.Conflict, "Lesson %d is %s already; only a provisional or confirmed lesson can be retired.", id, l.Status)
		}
		v, err := newVersion(ctx, tx, s.now(), by, ChangeRetire, l.ID, fmt.Sprintf("Lesson %d was retired by %s.", l.ID, by))
		if err != nil {
			return err
		}
		return moveLesson(ctx, tx, s.now(), l, LessonRetired, lessonStamp{by: by, version: v})
	})
}

// Flag marks lesson id with a review flag; a flag it carries already is
// left as it is.
func (s *Lessons) Flag(ctx context.Context, id int64, flag string) error {
	switch flag {
	case FlagRecurring, FlagInstructionsChanged, FlagAutoappUpgraded, FlagSuperseded:
	default:
		return refuse(refusal.Invalid, "%q is not a review flag.", flag)
	}
	return s.change(ctx, id, "flag", func(tx *sqlx.Tx, l Lesson) error {
		return flagLesson(ctx, tx, l, flag)
	})
}

// flagLesson adds flag to l's flags, in tx.
func flagLesson(ctx context.Context, tx *sqlx.Tx, l Lesson, flag string) error {
	if slices.Contains(l.Flags, flag) {
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE lessons SET flags = ? WHERE id = ?`,
		jsonList(append(slices.Clone(l.Flags), flag)), l.ID)
	return err
}

// Pin makes lesson id served to every turn (pinned true) or not.
func (s *Lessons) Pin(ctx context.Context, id int64, pinned bool) error {
	return s.change(ctx, id, "pin", func(tx *sqlx.Tx, l Lesson) error {
		_, err := tx.ExecContext(ctx, `UPDATE lessons SET pinned = ? WHERE id = ?`, pinned, id)
		return err
	})
}

// Replace keeps text as a new lesson that supersedes lesson id, in one
// transaction: the new lesson is curated and confirmed by by, applies
// where the old one did, keeps its case and records what it supersedes;
// the old one becomes superseded and is never served again. It answers the
// new lesson's id.
func (s *Lessons) Replace(ctx context.Context, id int64, text, by string) (int64, error) {
	by = strings.TrimSpace(by)
	if by == "" {
		return 0, refuse(refusal.Invalid, "Replacing a lesson needs the name of the person replacing it.")
	}
	var newID int64
	err := s.change(ctx, id, "replace", func(tx *sqlx.Tx, old Lesson) error {
		switch {
		case !canMoveLesson(old.Status, LessonSuperseded):
			return refuse(refusal.Conflict, "Lesson %d is %s; only a provisional or confirmed lesson can be replaced.", id, old.Status)
		case old.MethodUnclear:
			return refuse(refusal.Conflict, "Lesson %d says only that the way of working was unclear; it is never served, so there is nothing to replace. Write a lesson, and retire this one.", id)
		}
		var err error
		newID, err = insertLesson(ctx, tx, s.now(), Lesson{
			Text: text, Status: LessonConfirmed, Origin: OriginCurated, CaseID: old.CaseID,
			Applies: old.Applies, InstructionsHash: old.InstructionsHash, ServerVersion: old.ServerVersion,
			ConfirmedAt: s.now(), ConfirmedBy: by, Pinned: old.Pinned, Supersedes: old.ID,
		})
		if err != nil {
			return err
		}
		v, err := newVersion(ctx, tx, s.now(), by, ChangeReplace, newID,
			fmt.Sprintf("Lesson %d replaced lesson %d, written by %s.", newID, old.ID, by))
		if err != nil {
			return err
		}
		if err := enterIndex(ctx, tx, newID, v); err != nil {
			return err
		}
		return moveLesson(ctx, tx, s.now(), old, LessonSuperseded, lessonStamp{supersededBy: newID, by: by, version: v})
	})
	if err != nil {
		return 0, err
	}
	return newID, nil
}

// lessonMoves is the table of a lesson's moves, from → to. A lesson is
// kept as it was written; only its status moves. Confirming a confirmed
// lesson again clears its review flags.
var lessonMoves = map[string][]string{
	LessonProvisional: {LessonConfirmed, LessonRetired, LessonSuperseded},
	LessonConfirmed:   {LessonConfirmed, LessonRetired, LessonSuperseded},
}

// canMoveLesson reports whether the table allows a lesson to move from one
// status to another.
func canMoveLesson(from, to string) bool { return slices.Contains(lessonMoves[from], to) }

// lessonStamp is what a move records besides the status: who confirmed,
// retired or replaced the lesson, which lesson supersedes it, and the
// corpus version the move is part of (the one a retired or superseded
// lesson left the index at).
type lessonStamp struct {
	by           string
	supersededBy int64
	version      int64
}

// moveLesson is the only writer of lessons.status and of the columns a move
// stamps (confirmed_at, confirmed_by, retired_at, retired_by, superseded_by), in the
// caller's transaction; l is the lesson as read in it. It refuses a move the
// table does not allow, a confirmation again of a lesson that needs no
// review, and a lesson that moved meanwhile.
func moveLesson(ctx context.Context, tx *sqlx.Tx, now time.Time, l Lesson, to string, stamp lessonStamp) error {
	switch {
	case !canMoveLesson(l.Status, to):
		return refuse(refusal.Conflict, "A lesson cannot move from %s to %s.", l.Status, to)
	case l.Status == to && !l.NeedsReview():
		return refuse(refusal.Conflict, "Lesson %d is %s already.", l.ID, to)
	}
	var res sql.Result
	var err error
	switch to {
	case LessonConfirmed:
		res, err = tx.ExecContext(ctx,
			`UPDATE lessons SET status = ?, confirmed_at = ?, confirmed_by = ?, flags = '[]' WHERE id = ? AND status = ?`,
			to, now.UnixMilli(), stamp.by, l.ID, l.Status)
	case LessonRetired:
		res, err = tx.ExecContext(ctx, `UPDATE lessons SET status = ?, retired_at = ?, retired_by = ?, left_version = ?, flags = '[]' WHERE id = ? AND status = ?`,
			to, now.UnixMilli(), sql.NullString{String: stamp.by, Valid: stamp.by != ""}, stamp.version, l.ID, l.Status)
	case LessonSuperseded:
		res, err = tx.ExecContext(ctx, `UPDATE lessons SET status = ?, superseded_by = ?, left_version = ? WHERE id = ? AND status = ?`,
			to, stamp.supersededBy, stamp.version, l.ID, l.Status)
	}
	if err != nil {
		return fmt.Errorf("knowledge: move lesson %d: %w", l.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("knowledge: move lesson %d: %w", l.ID, err)
	} else if n == 0 {
		return refuse(refusal.Conflict, "Lesson %d moved meanwhile: it is no longer %s.", l.ID, l.Status)
	}
	// Every review says in the log who did what to which lesson, in the
	// same transaction; the distiller's supersession says what replaced it.
	switch {
	case to == LessonConfirmed:
		return reviewEvent(ctx, tx, now, "confirm", l.ID, stamp.by, fmt.Sprintf("Lesson %d was confirmed by %s.", l.ID, stamp.by), nil)
	case to == LessonRetired:
		return reviewEvent(ctx, tx, now, "retire", l.ID, stamp.by, fmt.Sprintf("Lesson %d was retired by %s.", l.ID, stamp.by), nil)
	case stamp.by != "":
		return reviewEvent(ctx, tx, now, "replace", l.ID, stamp.by,
			fmt.Sprintf("Lesson %d was replaced by lesson %d, written by %s.", l.ID, stamp.supersededBy, stamp.by),
			map[string]any{"by_lesson": stamp.supersededBy})
	}
	return insertEvent(ctx, tx, Event{At: now, Level: LevelInfo, Message: fmt.Sprintf("Lesson %d was replaced by lesson %d.", l.ID, stamp.supersededBy)},
		attrsJSON(map[string]any{"lesson": l.ID, "by_lesson": stamp.supersededBy}))
}

// change reads lesson id in a write transaction, lets apply change it, and
// commits. A *refusal.Error from apply is answered as it is.
func (s *Lessons) change(ctx context.Context, id int64, what string, apply func(*sqlx.Tx, Lesson) error) error {
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("knowledge: %s lesson %d: %w", what, id, err)
	}
	defer tx.Rollback()
	l, err := getLesson(ctx, tx, id)
	if err != nil {
		return err
	}
	if err := apply(tx, l); err != nil {
		if _, ok := errors.AsType[*refusal.Error](err); ok {
			return err
		}
		return fmt.Errorf("knowledge: %s lesson %d: %w", what, id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("knowledge: %s lesson %d: %w", what, id, err)
	}
	return nil
}
