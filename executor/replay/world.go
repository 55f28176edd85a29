package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"autoapp/executor"
	"autoapp/executor/candidate"
	"autoapp/executor/preview"
	"autoapp/intent/app"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
	"autoapp/knowledge"
)

// world is what one run builds, previews and checks with: its folder as
// the application's, a candidate service and previews of its own, and the
// case's store hearing every build and check.
type world struct {
	apps     *runApps
	previews *preview.Manager
	cands    *candidate.Service
}

// newWorld is the world of the run folder dir, whose workspace is made.
// With no store (an evaluation's warm-up build) nothing hears its builds.
func (h *Harness) newWorld(a app.App, dir string, cs *caseStore) *world {
	apps := &runApps{app: a, dir: dir, now: h.d.Now, releases: map[string]bool{}}
	log := slog.New(slog.DiscardHandler)
	if cs != nil {
		log = cs.log
	}
	previews := preview.NewManager(h.d.Now, log, h.d.Jail)
	var observer candidate.Observer
	if cs != nil {
		observer = cs.builds(h.d.Version)
	}
	cands := candidate.NewService(apps, previews, h.d.Jail, h.d.GoCache, h.d.Now, observer)
	return &world{apps: apps, previews: previews, cands: cands}
}

// close stops the run's preview.
func (w *world) close() { w.previews.StopAll() }

// runApps is a run folder standing for the application: its workspace is
// the run's clone, its candidate.json the run's own, and the releases it
// builds are kept in memory only: the launcher's releases never hear of a
// replay. Nothing here changes autoapp.json or activates anything.
type runApps struct {
	app app.App
	dir string
	now func() time.Time

	mu       sync.Mutex
	releases map[string]bool
}

func (a *runApps) Get(_ context.Context, id string) (app.App, error) {
	if id != a.app.ID {
		return app.App{}, refuse(refusal.NotFound, "There is no application called %q in this replay.", id)
	}
	return a.app, nil
}

func (a *runApps) Dir(string) string { return a.dir }

func (a *runApps) WorkspaceDir(string) string { return filepath.Join(a.dir, "workspace") }

func (a *runApps) Manifest(string) ([]byte, app.Manifest, refusal.Problems, error) {
	return workspace.Repositories{Now: a.now}.Manifest(context.Background(), a.WorkspaceDir(""))
}

func (a *runApps) RecordRelease(_ context.Context, r app.Release) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id := r.ID
	for n := 2; a.releases[id]; n++ {
		id = fmt.Sprintf("%s-%d", r.ID, n)
	}
	a.releases[id] = true
	return id, nil
}

func (a *runApps) SaveManifest(context.Context, string, []byte) error {
	return refuse(refusal.Conflict, "A replay never changes autoapp.json.")
}

func (a *runApps) Activate(context.Context, string, string) error {
	return refuse(refusal.Conflict, "A replay never activates a release.")
}

// corpus is a replay's frozen lessons: given whole on every turn, and the
// only ones knowledge.show reads.
type corpus []knowledge.Lesson

func (c corpus) Match(context.Context, knowledge.MatchQuery) ([]knowledge.Served, error) {
	out := make([]knowledge.Served, len(c))
	for i, l := range c {
		out[i] = knowledge.ServeAs(l, knowledge.ReasonPinned)
	}
	return out, nil
}

func (c corpus) Get(_ context.Context, id int64) (knowledge.Lesson, error) {
	for _, l := range c {
		if l.ID == id {
			return l, nil
		}
	}
	return knowledge.Lesson{}, refuse(refusal.NotFound, "There is no lesson %d.", id)
}

// folder makes the next run folder of case caseID's arm and answers its
// number: one past every number a finished run or a folder took.
func (h *Harness) folder(ctx context.Context, caseID int64, arm string) (int, string, error) {
	last, err := h.d.Replays.LastRun(ctx, caseID, arm)
	if err != nil {
		return 0, "", err
	}
	armDir := filepath.Join(h.caseDir(caseID), arm)
	if err := os.MkdirAll(armDir, 0o700); err != nil {
		return 0, "", fmt.Errorf("replay: %w", err)
	}
	entries, err := os.ReadDir(armDir)
	if err != nil {
		return 0, "", fmt.Errorf("replay: %w", err)
	}
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > last {
			last = n
		}
	}
	for n := last + 1; ; n++ {
		dir := filepath.Join(armDir, strconv.Itoa(n))
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			return n, dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return 0, "", fmt.Errorf("replay: %w", err)
		}
	}
}

// prune removes the oldest run folders of the case kept in caseDir beyond
// keep, oldest by when each was last written.
func prune(caseDir string, keep int) error {
	type runFolder struct {
		path string
		mod  time.Time
	}
	var all []runFolder
	for _, arm := range []string{knowledge.ArmWith, knowledge.ArmWithout, knowledge.ArmRegression} {
		entries, err := os.ReadDir(filepath.Join(caseDir, arm))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err != nil || !e.IsDir() {
				continue
			}
			info, err := e.Info()
			if err != nil {
				return fmt.Errorf("replay: %w", err)
			}
			all = append(all, runFolder{path: filepath.Join(caseDir, arm, e.Name()), mod: info.ModTime()})
		}
	}
	if len(all) <= keep {
		return nil
	}
	slices.SortFunc(all, func(a, b runFolder) int {
		if c := b.mod.Compare(a.mod); c != 0 {
			return c
		}
		return compareNatural(b.path, a.path)
	})
	for _, f := range all[keep:] {
		if err := removeTree(f.path); err != nil {
			return err
		}
	}
	return nil
}

// compareNatural orders two run folder paths of one case: by arm, then by
// number.
func compareNatural(a, b string) int {
	if da, db := filepath.Dir(a), filepath.Dir(b); da != db {
		if da < db {
			return -1
		}
		return 1
	}
	na, _ := strconv.Atoi(filepath.Base(a))
	nb, _ := strconv.Atoi(filepath.Base(b))
	return na - nb
}

// removeTree removes dir and everything in it, read-only folders too (Go's
// module cache makes its folders read-only).
func removeTree(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("replay: removing an old run folder: %w", err)
	}
	return nil
}

// writeTaskContext keeps in the run folder what its turns were given of
// the parts task-context.json turns off: never the attempts document, and
// lessons only in an arm given some. The launcher's own file is not read.
func writeTaskContext(dir string, lessons bool) error {
	tc := map[string]bool{"attempts": false}
	if !lessons {
		tc["lessons"] = false
	}
	b, err := json.MarshalIndent(tc, "", "  ")
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, executor.TaskContextFile), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	return nil
}
