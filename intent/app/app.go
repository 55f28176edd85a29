// Package app keeps the applications: each one an id, a name and a git
// workspace under <root>/apps/<id>/workspace, made from a template embedded
// in the binary or cloned from a git folder that holds an autoapp.json. It
// also records releases, the owner's activations, and which application
// was selected last.
package app

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"autoapp/intent/atomicfile"
	"autoapp/intent/refusal"
	"autoapp/migrations"
)

//go:embed all:templates
var templates embed.FS

func refuse(code refusal.Code, format string, args ...any) *refusal.Error {
	return refusal.Errorf(code, format, args...)
}

// App is one application.
type App struct {
	ID             string `db:"id"`
	Name           string `db:"name"`
	Origin         string `db:"origin"`
	CreatedAt      int64  `db:"created_at"`
	CurrentRelease string `db:"current_release_id"`
}

// Release is a successful build.
type Release struct {
	ID       string `db:"id"`
	AppID    string `db:"app_id"`
	Revision string `db:"revision"`
	BuiltAt  int64  `db:"built_at"`
}

// Template is a starting point for a new application.
type Template struct {
	Key, Title, About string
}

// Templates lists the built-in templates.
var Templates = []Template{
	{"static", "Static site", "An index.html the host serves as the preview, with one passing acceptance example."},
	{"goservice", "Go HTTP service", "A small Go service built with this machine's go and run with PORT set, with one passing acceptance example."},
}

var idPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// CheckID validates an application id: lowercase words and digits joined by dashes.
func CheckID(id string) error {
	switch {
	case id == "":
		return refuse(refusal.Invalid, "Give the application an id: lowercase words and digits joined by dashes, such as notes or shop-2.")
	case len(id) > 40:
		return refuse(refusal.Invalid, "The id %q is longer than 40 characters.", id)
	case !idPattern.MatchString(id):
		return refuse(refusal.Invalid, "The id %q may only hold lowercase words and digits joined by dashes, such as notes or shop-2.", id)
	}
	return nil
}

// Service keeps the applications of one root.
type Service struct {
	db    *migrations.DB
	root  string
	now   func() time.Time
	repos Repositories
}

// Repositories is what the applications need of git: a new workspace, a
// clone, a committed file, the manifest the host obeys and the owner's
// commit. The workspace package is one (workspace.Repositories), over the
// one hardened runner; the launcher gives it to NewService.
type Repositories interface {
	// Init makes dir, which holds a template's files, a repository whose
	// first commit, with message, holds them.
	Init(ctx context.Context, dir, message string) error
	// Clone clones the repository at source into dir.
	Clone(ctx context.Context, source, dir string) error
	// HeadFile is path as the HEAD of the repository at dir commits it.
	HeadFile(ctx context.Context, dir, path string) ([]byte, error)
	// Manifest reads the manifest the host obeys in the workspace at dir
	// (Service.Manifest says which); a folder that is not there has none.
	Manifest(ctx context.Context, dir string) ([]byte, Manifest, refusal.Problems, error)
	// CommitOwnerFile commits, as the owner, what path in the workspace at
	// dir now holds.
	CommitOwnerFile(ctx context.Context, dir, path, message string) error
}

// NewService builds the service over the intents store; root is the data
// folder, and repos the git its workspaces are kept with.
func NewService(db *migrations.DB, root string, now func() time.Time, repos Repositories) *Service {
	return &Service{db: db, root: root, now: now, repos: repos}
}

// Dir is the folder of an application: <root>/apps/<id>.
func (s *Service) Dir(id string) string { return filepath.Join(s.root, "apps", id) }

// WorkspaceDir is the application's git workspace.
func (s *Service) WorkspaceDir(id string) string { return filepath.Join(s.Dir(id), "workspace") }

// CreateFromTemplate makes a new application from a built-in template: the
// files are copied into a new workspace, which gets an initial commit.
func (s *Service) CreateFromTemplate(ctx context.Context, id, name, template string) (App, error) {
	if err := CheckID(id); err != nil {
		return App{}, err
	}
	if !isTemplate(template) {
		return App{}, refuse(refusal.Invalid, "There is no template called %q.", template)
	}
	return s.create(ctx, id, name, "template:"+template, func(dir string) error {
		if err := WriteTemplate(template, dir); err != nil {
			return err
		}
		return s.repos.Init(ctx, dir, "Start from the "+template+" template")
	})
}

// WriteTemplate writes the files of the built-in template into dir, which
// is to become a workspace: CreateFromTemplate's, or an evaluation's run
// that starts where a new application starts.
func WriteTemplate(template, dir string) error {
	sub, err := fs.Sub(templates, "templates/"+template)
	if err != nil || !isTemplate(template) {
		return refuse(refusal.Invalid, "There is no template called %q.", template)
	}
	return copyTemplate(sub, dir)
}

// Register makes an application from an existing git folder that holds an
// autoapp.json: the folder is cloned into the workspace and left untouched.
func (s *Service) Register(ctx context.Context, id, name, source string) (App, error) {
	if err := CheckID(id); err != nil {
		return App{}, err
	}
	source = strings.TrimSpace(source)
	if !filepath.IsAbs(source) {
		return App{}, refuse(refusal.Invalid, "Give the folder as an absolute path.")
	}
	if fi, err := os.Stat(filepath.Join(source, ".git")); err != nil || !fi.IsDir() {
		return App{}, refuse(refusal.Invalid, "%s is not a git repository (it has no .git folder).", source)
	}
	raw, err := s.repos.HeadFile(ctx, source, ManifestFile)
	if err != nil {
		return App{}, refuse(refusal.Invalid, "%s has no committed autoapp.json: commit a manifest there first.", source)
	}
	if _, problems := ParseManifest(raw); len(problems) > 0 {
		return App{}, &refusal.Error{Code: refusal.Invalid, Problems: problems,
			Message: "The autoapp.json in " + source + " has problems: " + problems.Error() + "."}
	}
	return s.create(ctx, id, name, source, func(dir string) error {
		return s.repos.Clone(ctx, source, dir)
	})
}

func (s *Service) create(ctx context.Context, id, name, origin string, fill func(dir string) error) (App, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		name = id
	}
	if len(name) > 100 {
		return App{}, refuse(refusal.Invalid, "The name is longer than 100 characters.")
	}
	var n int
	if err := s.db.Read.GetContext(ctx, &n, `SELECT count(*) FROM apps WHERE id = ?`, id); err != nil {
		return App{}, fmt.Errorf("app: create: %w", err)
	}
	if n > 0 {
		return App{}, refuse(refusal.Conflict, "An application called %q already exists.", id)
	}
	dir := s.WorkspaceDir(id)
	if _, err := os.Stat(s.Dir(id)); err == nil {
		return App{}, refuse(refusal.Conflict, "The folder %s already exists; move it away or choose another id.", s.Dir(id))
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return App{}, fmt.Errorf("app: create: %w", err)
	}
	if err := fill(dir); err != nil {
		os.RemoveAll(s.Dir(id))
		var ae *refusal.Error
		if errors.As(err, &ae) {
			return App{}, ae
		}
		return App{}, fmt.Errorf("app: create %s: %w", id, err)
	}
	a := App{ID: id, Name: name, Origin: origin, CreatedAt: s.now().UnixMilli()}
	if _, err := s.db.Write.ExecContext(ctx,
		`INSERT INTO apps (id, name, origin, created_at) VALUES (?, ?, ?, ?)`, a.ID, a.Name, a.Origin, a.CreatedAt); err != nil {
		os.RemoveAll(s.Dir(id))
		return App{}, fmt.Errorf("app: create: %w", err)
	}
	return a, nil
}

// List returns the applications by id.
func (s *Service) List(ctx context.Context) ([]App, error) {
	var apps []App
	if err := s.db.Read.SelectContext(ctx, &apps,
		`SELECT id, name, origin, created_at, coalesce(current_release_id, '') AS current_release_id FROM apps ORDER BY id`); err != nil {
		return nil, fmt.Errorf("app: list: %w", err)
	}
	return apps, nil
}

// Get returns one application.
func (s *Service) Get(ctx context.Context, id string) (App, error) {
	var a App
	err := s.db.Read.GetContext(ctx, &a,
		`SELECT id, name, origin, created_at, coalesce(current_release_id, '') AS current_release_id FROM apps WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return a, refuse(refusal.NotFound, "There is no application called %q.", id)
	}
	if err != nil {
		return a, fmt.Errorf("app: get: %w", err)
	}
	return a, nil
}

// Manifest reads the manifest the host obeys for the application: its
// workspace's autoapp.json as HEAD commits it, the raw text, the parsed
// manifest, and its problems (none when it can be used), among them a
// working tree's autoapp.json that is not the committed one.
func (s *Service) Manifest(id string) ([]byte, Manifest, refusal.Problems, error) {
	// No caller waits on this with a context of its own; git, when it is
	// asked, is bounded by its own timeout.
	raw, m, problems, err := s.repos.Manifest(context.Background(), s.WorkspaceDir(id))
	if err != nil {
		return nil, Manifest{}, nil, fmt.Errorf("app: manifest: %w", err)
	}
	return raw, m, problems, nil
}

// TemplateManifest is the manifest of the built-in template, as the
// binary holds it.
func TemplateManifest(template string) (Manifest, error) {
	if !isTemplate(template) {
		return Manifest{}, refuse(refusal.Invalid, "There is no template called %q.", template)
	}
	raw, err := fs.ReadFile(templates, "templates/"+template+"/"+ManifestFile)
	if err != nil {
		return Manifest{}, fmt.Errorf("app: the %s template: %w", template, err)
	}
	m, problems := ParseManifest(raw)
	if len(problems) > 0 {
		return Manifest{}, fmt.Errorf("app: the %s template's manifest: %w", template, problems)
	}
	return m, nil
}

// SaveManifest replaces autoapp.json with what the owner wrote, when it is
// valid, and commits it as the owner. Only the owner's page calls this.
func (s *Service) SaveManifest(ctx context.Context, id string, raw []byte) error {
	if _, err := s.Get(ctx, id); err != nil {
		return err
	}
	if _, problems := ParseManifest(raw); len(problems) > 0 {
		return &refusal.Error{Code: refusal.Invalid, Problems: problems, Message: "The manifest was not saved: " + problems.Error() + "."}
	}
	dir := s.WorkspaceDir(id)
	if err := atomicfile.Write(filepath.Join(dir, ManifestFile), raw); err != nil {
		return fmt.Errorf("app: save manifest: %w", err)
	}
	if err := s.repos.CommitOwnerFile(ctx, dir, ManifestFile, "The owner edited autoapp.json"); err != nil {
		return fmt.Errorf("app: save manifest: %w", err)
	}
	return nil
}

// RecordRelease stores a successful build. The same revision built twice
// within a second has the same id and is one release.
func (s *Service) RecordRelease(ctx context.Context, r Release) (string, error) {
	// Every build is a release of its own: an id taken already (the same
	// revision built in the same second) gets the first free "-2", "-3"…
	for n := 1; n <= maxReleasesASecond; n++ {
		id := r.ID
		if n > 1 {
			id = fmt.Sprintf("%s-%d", r.ID, n)
		}
		res, err := s.db.Write.ExecContext(ctx,
			`INSERT INTO releases (id, app_id, revision, built_at) VALUES (?, ?, ?, ?)
			 ON CONFLICT (id) DO NOTHING`, id, r.AppID, r.Revision, r.BuiltAt)
		if err != nil {
			return "", fmt.Errorf("app: record release: %w", err)
		}
		if added, err := res.RowsAffected(); err != nil {
			return "", fmt.Errorf("app: record release: %w", err)
		} else if added == 1 {
			return id, nil
		}
	}
	return "", fmt.Errorf("app: record release: %d builds of %s in one second", maxReleasesASecond, r.Revision)
}

// maxReleasesASecond bounds the builds of one revision a second can name.
const maxReleasesASecond = 1000

// Releases lists an application's releases, newest first, at most limit.
func (s *Service) Releases(ctx context.Context, id string, limit int) ([]Release, error) {
	var rs []Release
	if err := s.db.Read.SelectContext(ctx, &rs,
		`SELECT id, app_id, revision, built_at FROM releases WHERE app_id = ? ORDER BY built_at DESC, id DESC LIMIT ?`, id, limit); err != nil {
		return nil, fmt.Errorf("app: releases: %w", err)
	}
	return rs, nil
}

// Activate makes a release the application's current one. Only the owner
// does this; the activation is recorded.
func (s *Service) Activate(ctx context.Context, id, releaseID string) error {
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("app: activate: %w", err)
	}
	defer tx.Rollback()
	var current sql.NullString
	if err := tx.GetContext(ctx, &current, `SELECT current_release_id FROM apps WHERE id = ?`, id); errors.Is(err, sql.ErrNoRows) {
		return refuse(refusal.NotFound, "There is no application called %q.", id)
	} else if err != nil {
		return fmt.Errorf("app: activate: %w", err)
	}
	var n int
	if err := tx.GetContext(ctx, &n, `SELECT count(*) FROM releases WHERE id = ? AND app_id = ?`, releaseID, id); err != nil {
		return fmt.Errorf("app: activate: %w", err)
	}
	if n == 0 {
		return refuse(refusal.NotFound, "%s has no release %q.", id, releaseID)
	}
	if current.String == releaseID {
		return refuse(refusal.Conflict, "Release %s is already the current release of %s.", releaseID, id)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE apps SET current_release_id = ? WHERE id = ?`, releaseID, id); err != nil {
		return fmt.Errorf("app: activate: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO activations (app_id, release_id, at) VALUES (?, ?, ?)`,
		id, releaseID, s.now().UnixMilli()); err != nil {
		return fmt.Errorf("app: activate: %w", err)
	}
	return tx.Commit()
}

// session.json remembers the application selected last.
type sessionFile struct {
	App string `json:"app"`
}

func (s *Service) sessionPath() string { return filepath.Join(s.root, "launcher", "session.json") }

// Selected returns the application selected last, or "" when none is (or
// it no longer exists).
func (s *Service) Selected(ctx context.Context) (string, error) {
	b, err := os.ReadFile(s.sessionPath())
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("app: selected: %w", err)
	}
	var f sessionFile
	if json.Unmarshal(b, &f) != nil || f.App == "" {
		return "", nil
	}
	if _, err := s.Get(ctx, f.App); err != nil {
		return "", nil
	}
	return f.App, nil
}

// Select remembers id as the selected application. Selecting the one
// already selected writes nothing: pages call this on every view.
func (s *Service) Select(ctx context.Context, id string) error {
	if _, err := s.Get(ctx, id); err != nil {
		return err
	}
	if current, err := s.Selected(ctx); err == nil && current == id {
		return nil
	}
	b, _ := json.Marshal(sessionFile{App: id})
	return atomicfile.Write(s.sessionPath(), b)
}

func isTemplate(key string) bool {
	for _, t := range Templates {
		if t.Key == key {
			return true
		}
	}
	return false
}

// copyTemplate writes a template's files; a name ending in .tmpl loses the
// suffix (so Go files and go.mod are not part of this module), and
// gitignore.tmpl becomes .gitignore.
func copyTemplate(sub fs.FS, dir string) error {
	var names []string
	err := fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		names = append(names, p)
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, p := range names {
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		out := strings.TrimSuffix(p, ".tmpl")
		if filepath.Base(out) == "gitignore" {
			out = filepath.Join(filepath.Dir(out), ".gitignore")
		}
		target := filepath.Join(dir, filepath.FromSlash(out))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
