// Package delivery is the last step of an intent: the host exports the
// artifacts of the application from its workspace at the revision the
// intent completed at, and records them once, with the evidence that the
// work was done, in the deliveries table. It serves the bytes back exactly
// as git holds them. It knows nothing of HTTP.
package delivery

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"autoapp/intent/refusal"
	"autoapp/migrations"
)

// MaxPaths is the most artifact paths one delivery exports.
const MaxPaths = 100

// DefaultMedia is the media type of an artifact whose extension says none.
const DefaultMedia = "application/octet-stream"

func refuse(code refusal.Code, format string, args ...any) *refusal.Error {
	return refusal.Errorf(code, format, args...)
}

// Artifact is one file handed over: a regular file committed at the
// delivery's revision.
type Artifact struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Media is the media type its extension names, or DefaultMedia.
	Media string `json:"media"`
}

// Problem is an artifact path that could not be exported, and why.
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// TaskEvidence is one completed task and the hashes of its acceptance
// examples (criterion number → hash of the example's steps).
type TaskEvidence struct {
	Slug          string         `json:"slug"`
	ExampleHashes map[int]string `json:"exampleHashes"`
	// Revision is the revision its verdict was made at.
	Revision string `json:"revision,omitempty"`
}

// CheckEvidence is one acceptance example run against the release.
type CheckEvidence struct {
	ID     string `json:"id"`
	Hash   string `json:"hash"`
	Passed bool   `json:"passed"`
}

// Evidence is what the host observed that the intent was done.
type Evidence struct {
	Tasks  []TaskEvidence  `json:"tasks"`
	Checks []CheckEvidence `json:"checks"`
	// HeadAtDelivery is the workspace's HEAD when the delivery was made,
	// kept only when it had moved on from the revision the last verdict
	// was made at, which is what is delivered.
	HeadAtDelivery string `json:"headAtDelivery,omitempty"`
	// Needs says, a sentence each, what an HTML artifact loads that the
	// delivery does not carry, so a downloaded page may not work offline.
	Needs []string `json:"needs,omitempty"`
}

// Input is what the executor knows when an intent is done.
type Input struct {
	IntentID  int64
	AppID     string
	Revision  string // any name of the completing commit; stored as its full hash
	ReleaseID string // "" when no release was recorded
	// Paths are the manifest's artifact paths and any a task's plan names.
	Paths    []string
	Evidence Evidence
}

// Delivery is what was handed over for one intent.
type Delivery struct {
	IntentID  int64
	AppID     string
	At        time.Time // in UTC, to the millisecond
	Revision  string    // the full commit hash
	ReleaseID string
	Evidence  Evidence
	Artifacts []Artifact
	Problems  []Problem
}

// Artifact returns the delivery's artifact at p, and whether there is one.
func (d Delivery) Artifact(p string) (Artifact, bool) {
	for _, a := range d.Artifacts {
		if a.Path == p || a.Path == path.Clean(p) {
			return a, true
		}
	}
	return Artifact{}, false
}

// ArchiveName is the file name of the delivery's workspace download.
func (d Delivery) ArchiveName() string { return d.AppID + "-" + shortRev(d.Revision) + ".tar.gz" }

// Service records deliveries and serves their files.
type Service struct {
	db            *migrations.DB
	openWorkspace func(appID string) (Workspace, error)
	now           func() time.Time
}

// Blob is one regular file as a commit holds it: its bytes exactly as git
// stores them, never as the working tree or any .gitattributes shows them.
type Blob struct {
	Path string
	Data []byte
	Size int64
	// SHA256 is the hex SHA-256 of Data.
	SHA256 string
	// Mode is git's: "100644", or "100755" for an executable.
	Mode string
}

// Workspace is what a delivery reads of an application's workspace: the
// workspace package's git reads are one. A refusal for the person comes as
// refusal.Problems.
type Workspace interface {
	// Commit is the full hash of the commit rev names.
	Commit(ctx context.Context, rev string) (string, error)
	// Blob is the regular file at path as the commit rev holds it.
	Blob(ctx context.Context, rev, path string) (Blob, error)
	// Archive writes the whole tree at rev to w as a tar.gz.
	Archive(ctx context.Context, rev string, w io.Writer) error
	Close() error
}

// NewService builds the service over the intents store; openWorkspace
// opens an application's workspace (the service closes it after use).
func NewService(db *migrations.DB, openWorkspace func(appID string) (Workspace, error), now func() time.Time) *Service {
	if now == nil {
		panic("delivery: a clock is required")
	}
	return &Service{db: db, openWorkspace: openWorkspace, now: now}
}

// Deliver exports each of in.Paths from the workspace at in.Revision and
// records the delivery of the intent. A path that is not a regular file
// committed there, inside the workspace, of at most 1 MiB is recorded as
// a problem with its sentence instead. An intent is delivered once: when
// it already was, Deliver returns that delivery unchanged and writes
// nothing.
func (s *Service) Deliver(ctx context.Context, in Input) (Delivery, error) {
	if in.IntentID <= 0 {
		return Delivery{}, refuse(refusal.Invalid, "Name the intent to deliver.")
	}
	if d, err := s.Get(ctx, in.IntentID); err == nil {
		return d, nil
	} else if !isNotFound(err) {
		return Delivery{}, err
	}
	d, err := s.Prepare(ctx, in)
	if err != nil {
		return Delivery{}, err
	}
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return Delivery{}, fmt.Errorf("delivery: deliver: %w", err)
	}
	defer tx.Rollback()
	if err := Record(ctx, tx, d); err != nil {
		return Delivery{}, err
	}
	// Delivered by another call since the first look: theirs stands.
	kept, err := load(ctx, tx, in.IntentID)
	if err != nil {
		return Delivery{}, err
	}
	if err := tx.Commit(); err != nil {
		return Delivery{}, fmt.Errorf("delivery: deliver intent %d: %w", d.IntentID, err)
	}
	return kept, nil
}

// Prepare exports each of in.Paths from the workspace at in.Revision, as
// Deliver does, and answers the delivery it would record, writing
// nothing: the caller records it with Record in the transaction that
// marks the intent done.
func (s *Service) Prepare(ctx context.Context, in Input) (Delivery, error) {
	switch {
	case in.IntentID <= 0:
		return Delivery{}, refuse(refusal.Invalid, "Name the intent to deliver.")
	case strings.TrimSpace(in.AppID) == "":
		return Delivery{}, refuse(refusal.Invalid, "Name the application of intent %d.", in.IntentID)
	case strings.TrimSpace(in.Revision) == "":
		return Delivery{}, refuse(refusal.Invalid, "Give the revision intent %d completed at.", in.IntentID)
	case len(in.Paths) > MaxPaths:
		return Delivery{}, refuse(refusal.Invalid, "A delivery exports at most %d artifacts; %d were named.", MaxPaths, len(in.Paths))
	}
	if err := s.checkInput(ctx, in); err != nil {
		return Delivery{}, err
	}

	ws, err := s.openWorkspace(in.AppID)
	if err != nil {
		return Delivery{}, fmt.Errorf("delivery: open the workspace of %s: %w", in.AppID, err)
	}
	defer ws.Close()
	commit, err := ws.Commit(ctx, in.Revision)
	if _, ok := asProblems(err); ok {
		return Delivery{}, refuse(refusal.Invalid, "%q is not a commit in the workspace of %s.", in.Revision, in.AppID)
	}
	if err != nil {
		return Delivery{}, fmt.Errorf("delivery: %w", err)
	}
	d := Delivery{
		IntentID:  in.IntentID,
		AppID:     in.AppID,
		At:        s.now().UTC().Truncate(time.Millisecond),
		Revision:  commit,
		ReleaseID: in.ReleaseID,
		Evidence:  cleanEvidence(in.Evidence),
		Artifacts: []Artifact{},
		Problems:  []Problem{},
	}
	// A path named twice (by the manifest and a task's plan) is exported once.
	exported, refused := map[string]bool{}, map[string]bool{}
	var pages []Blob
	for _, p := range in.Paths {
		b, err := ws.Blob(ctx, commit, p)
		if ps, ok := asProblems(err); ok {
			if !refused[p] {
				refused[p] = true
				d.Problems = append(d.Problems, Problem{Path: p, Message: sentences(ps)})
			}
			continue
		}
		if err != nil {
			return Delivery{}, fmt.Errorf("delivery: export %s: %w", p, err)
		}
		if exported[b.Path] {
			continue
		}
		exported[b.Path] = true
		d.Artifacts = append(d.Artifacts, Artifact{Path: b.Path, Size: b.Size, SHA256: b.SHA256, Media: mediaType(b.Path)})
		if strings.HasPrefix(mediaType(b.Path), "text/html") {
			pages = append(pages, b)
		}
	}
	for _, page := range pages {
		d.Evidence.Needs = append(d.Evidence.Needs, needs(page, exported)...)
	}

	return d, nil
}

// Record writes the prepared delivery d inside the transaction that
// finishes its intent (intent.Service.Finish); an intent delivered
// already keeps its delivery.
func Record(ctx context.Context, w migrations.Within, d Delivery) error {
	if _, err := w.ExecContext(ctx,
		`INSERT INTO deliveries (intent_id, app_id, at, revision, release_id, evidence, artifacts, problems)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		 ON CONFLICT (intent_id) DO NOTHING`,
		d.IntentID, d.AppID, d.At.UnixMilli(), d.Revision, sql.NullString{String: d.ReleaseID, Valid: d.ReleaseID != ""},
		jsonText(d.Evidence), jsonText(d.Artifacts), jsonText(d.Problems)); err != nil {
		return fmt.Errorf("delivery: deliver intent %d: %w", d.IntentID, err)
	}
	return nil
}

// checkInput refuses an intent that does not exist or is another
// application's, and a release that is not the application's.
func (s *Service) checkInput(ctx context.Context, in Input) error {
	var appID string
	err := s.db.Read.GetContext(ctx, &appID, `SELECT app_id FROM intents WHERE id = ?`, in.IntentID)
	if errors.Is(err, sql.ErrNoRows) {
		return refuse(refusal.NotFound, "There is no intent %d.", in.IntentID)
	}
	if err != nil {
		return fmt.Errorf("delivery: intent %d: %w", in.IntentID, err)
	}
	if appID != in.AppID {
		return refuse(refusal.Invalid, "Intent %d belongs to %s, not %s.", in.IntentID, appID, in.AppID)
	}
	if in.ReleaseID == "" {
		return nil
	}
	var n int
	if err := s.db.Read.GetContext(ctx, &n, `SELECT count(*) FROM releases WHERE id = ? AND app_id = ?`, in.ReleaseID, in.AppID); err != nil {
		return fmt.Errorf("delivery: release %s: %w", in.ReleaseID, err)
	}
	if n == 0 {
		return refuse(refusal.Invalid, "There is no release %q of %s.", in.ReleaseID, in.AppID)
	}
	return nil
}

// Undelivered are the done intents that have no delivery: a launcher
// that stopped between marking one done and delivering it left them so.
func (s *Service) Undelivered(ctx context.Context) ([]int64, error) {
	var ids []int64
	if err := s.db.Read.SelectContext(ctx, &ids, `SELECT i.id FROM intents i
		LEFT JOIN deliveries d ON d.intent_id = i.id
		WHERE i.status = 'done' AND d.intent_id IS NULL ORDER BY i.id`); err != nil {
		return nil, fmt.Errorf("delivery: undelivered: %w", err)
	}
	return ids, nil
}

// Get returns the delivery of an intent.
func (s *Service) Get(ctx context.Context, intentID int64) (Delivery, error) {
	tx, err := s.db.Read.BeginTxx(ctx, nil)
	if err != nil {
		return Delivery{}, fmt.Errorf("delivery: intent %d: %w", intentID, err)
	}
	defer tx.Rollback()
	return load(ctx, tx, intentID)
}

// Artifact returns the artifact at p of an intent's delivery, read again
// from git at the delivery's revision: the bytes are the blob's, and they
// are refused unless their SHA-256 is still the one recorded.
func (s *Service) Artifact(ctx context.Context, intentID int64, p string) (Blob, Artifact, error) {
	d, err := s.Get(ctx, intentID)
	if err != nil {
		return Blob{}, Artifact{}, err
	}
	a, ok := d.Artifact(p)
	if !ok {
		return Blob{}, Artifact{}, refuse(refusal.NotFound, "%s is not an artifact of the delivery of intent %d.", p, intentID)
	}
	ws, err := s.openWorkspace(d.AppID)
	if err != nil {
		return Blob{}, Artifact{}, fmt.Errorf("delivery: open the workspace of %s: %w", d.AppID, err)
	}
	defer ws.Close()
	b, err := ws.Blob(ctx, d.Revision, a.Path)
	if ps, ok := asProblems(err); ok {
		return Blob{}, Artifact{}, refuse(refusal.Conflict, "%s can no longer be read at %s: %s",
			a.Path, shortRev(d.Revision), sentences(ps))
	}
	if err != nil {
		return Blob{}, Artifact{}, fmt.Errorf("delivery: read %s: %w", a.Path, err)
	}
	if b.SHA256 != a.SHA256 || b.Size != a.Size {
		return Blob{}, Artifact{}, refuse(refusal.Conflict, "%s at %s is no longer the file that was delivered: its SHA-256 changed.",
			a.Path, shortRev(d.Revision))
	}
	return b, a, nil
}

// Archive writes the whole workspace at the delivery's revision to w as a
// tar.gz and returns the file name to offer it under. Nothing is written
// when it is refused.
func (s *Service) Archive(ctx context.Context, intentID int64, w io.Writer) (string, error) {
	d, err := s.Get(ctx, intentID)
	if err != nil {
		return "", err
	}
	ws, err := s.openWorkspace(d.AppID)
	if err != nil {
		return "", fmt.Errorf("delivery: open the workspace of %s: %w", d.AppID, err)
	}
	defer ws.Close()
	err = ws.Archive(ctx, d.Revision, w)
	if ps, ok := asProblems(err); ok {
		return "", refuse(refusal.Invalid, "%s", sentences(ps))
	}
	if err != nil {
		return "", fmt.Errorf("delivery: archive intent %d: %w", intentID, err)
	}
	return d.ArchiveName(), nil
}

// deliveryRow is a row of deliveries.
type deliveryRow struct {
	IntentID  int64          `db:"intent_id"`
	AppID     string         `db:"app_id"`
	At        int64          `db:"at"`
	Revision  string         `db:"revision"`
	ReleaseID sql.NullString `db:"release_id"`
	Evidence  string         `db:"evidence"`
	Artifacts string         `db:"artifacts"`
	Problems  string         `db:"problems"`
}

func load(ctx context.Context, tx *sqlx.Tx, intentID int64) (Delivery, error) {
	var r deliveryRow
	err := tx.GetContext(ctx, &r,
		`SELECT intent_id, app_id, at, revision, release_id, evidence, artifacts, problems
		 FROM deliveries WHERE intent_id = ?`, intentID)
	if errors.Is(err, sql.ErrNoRows) {
		return Delivery{}, refuse(refusal.NotFound, "Intent %d has not been delivered.", intentID)
	}
	if err != nil {
		return Delivery{}, fmt.Errorf("delivery: intent %d: %w", intentID, err)
	}
	d := Delivery{IntentID: r.IntentID, AppID: r.AppID, At: time.UnixMilli(r.At).UTC(), Revision: r.Revision, ReleaseID: r.ReleaseID.String}
	err = errors.Join(
		decode("evidence", r.Evidence, &d.Evidence),
		decode("artifacts", r.Artifacts, &d.Artifacts),
		decode("problems", r.Problems, &d.Problems),
	)
	if err != nil {
		return Delivery{}, fmt.Errorf("delivery: intent %d: %w", intentID, err)
	}
	d.Evidence = cleanEvidence(d.Evidence)
	d.Artifacts, d.Problems = list(d.Artifacts), list(d.Problems)
	return d, nil
}

func decode(column, text string, v any) error {
	if err := json.Unmarshal([]byte(text), v); err != nil {
		return fmt.Errorf("%s is not the JSON it should be: %w", column, err)
	}
	return nil
}

// jsonText is v as the JSON text a column holds.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// Only our own slices and structs of strings, numbers and maps come here.
		panic(fmt.Sprintf("delivery: cannot encode %T: %v", v, err))
	}
	return string(b)
}

// cleanEvidence gives every list and map a value, so the JSON holds [] and
// {} and never null.
func cleanEvidence(e Evidence) Evidence {
	out := Evidence{Tasks: make([]TaskEvidence, 0, len(e.Tasks)), Checks: list(e.Checks), HeadAtDelivery: e.HeadAtDelivery, Needs: e.Needs}
	for _, t := range e.Tasks {
		if t.ExampleHashes == nil {
			t.ExampleHashes = map[int]string{}
		}
		out.Tasks = append(out.Tasks, t)
	}
	return out
}

// list is s, or an empty list for nil.
func list[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// mediaType is the media type p's extension names.
func mediaType(p string) string {
	if t := mime.TypeByExtension(path.Ext(p)); t != "" {
		return t
	}
	return DefaultMedia
}

// sentences joins the workspace's sentences about one path.
func sentences(ps refusal.Problems) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.Message
	}
	return strings.Join(s, " ")
}

func shortRev(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

func isNotFound(err error) bool {
	var e *refusal.Error
	return errors.As(err, &e) && e.Code == refusal.NotFound
}

// asProblems is the refusal for the person a workspace's read answered.
func asProblems(err error) (refusal.Problems, bool) {
	var ps refusal.Problems
	return ps, errors.As(err, &ps)
}
