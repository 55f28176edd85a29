// Package candidate is what the host last built, previewed and checked of
// an application, kept in <root>/apps/<appId>/candidate.json on every
// change, and the cycle that applies a change, builds, starts the preview
// and runs the acceptance examples, returning what to do next.
package candidate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"autoapp/executor/acceptance"
	"autoapp/executor/build"
	"autoapp/executor/build/gocache"
	"autoapp/executor/preview"
	"autoapp/intent/app"
	"autoapp/intent/atomicfile"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
)

// File is the candidate state's name in the application's folder.
const File = "candidate.json"

// Sentences the application page shows after a restart.
const (
	PreviewStoppedByRestart = "The preview stopped when the launcher restarted."
	PreviewStoppedOnItsOwn  = "The preview stopped on its own: it exited or was killed."
	EditedSinceBuild        = "Edited since this build."
)

// State is candidate.json.
type State struct {
	AppID   string         `json:"appId"`
	Build   *BuildRecord   `json:"build,omitempty"`
	Preview *PreviewRecord `json:"preview,omitempty"`
	Checks  *ChecksRecord  `json:"checks,omitempty"`
	Cycle   *CycleRecord   `json:"cycle,omitempty"`
	Updated time.Time      `json:"updated"`
}

// BuildRecord is the last build.
type BuildRecord struct {
	Revision  string          `json:"revision"`
	At        time.Time       `json:"at"`
	OK        bool            `json:"ok"`
	StagesRun []string        `json:"stagesRun"`
	NotRun    []string        `json:"notRun,omitempty"`
	Problems  []build.Problem `json:"problems,omitempty"`
	// Failures are the problems' signatures.
	Failures []string `json:"failures,omitempty"`
	// Release is the last build that passed; it survives a failed build.
	Release *build.Release `json:"release,omitempty"`
}

// PreviewRecord is the preview the host started last.
type PreviewRecord struct {
	Release   string    `json:"release"`
	SpawnedAt time.Time `json:"spawnedAt"`
	URL       string    `json:"url"`
	// Link is where the person opens it (see preview.Link).
	Link    string `json:"link,omitempty"`
	Running bool   `json:"running"`
	// Problem is why it did not start, when it did not.
	Problem string `json:"problem,omitempty"`
}

// ChecksRecord is the last run of the acceptance examples, with the
// preview it ran on.
type ChecksRecord struct {
	Release          string              `json:"release"`
	PreviewSpawnedAt time.Time           `json:"previewSpawnedAt"`
	At               time.Time           `json:"at"`
	Results          []acceptance.Result `json:"results"`
	Passed           int                 `json:"passed"`
	// Failures are the failed examples' signatures.
	Failures []string `json:"failures,omitempty"`
}

// CycleRecord is where the last cycle stopped and what comes next.
type CycleRecord struct {
	Step     string    `json:"step"`
	Revision string    `json:"revision"`
	Release  string    `json:"release,omitempty"`
	Failures []string  `json:"failures,omitempty"`
	Next     string    `json:"next"`
	At       time.Time `json:"at"`
}

// The steps a cycle records.
const (
	StepPatched       = "patched"
	StepPatchRefused  = "patch refused"
	StepBuilt         = "built"
	StepBuildFailed   = "build failed"
	StepPreviewed     = "previewed"
	StepPreviewFailed = "preview failed"
	StepChecked       = "checked"
)

// Apps is what the candidate needs of the applications.
type Apps interface {
	Get(ctx context.Context, id string) (app.App, error)
	Dir(id string) string
	WorkspaceDir(id string) string
	Manifest(id string) ([]byte, app.Manifest, refusal.Problems, error)
	// RecordRelease keeps a build as a release and answers its id, which
	// is the build's own even when one revision was built twice in a second.
	RecordRelease(ctx context.Context, r app.Release) (string, error)
}

// Jail starts the processes of an application's build as the owner chose,
// and refuses before anything starts when nothing of the engineer's may
// run; *sandbox.Guard is the one the server uses.
type Jail interface {
	build.Starter
	Ready() error
}

// Service builds, previews and checks applications and keeps their state.
type Service struct {
	apps     Apps
	previews *preview.Manager
	jail     Jail
	// goCache serves each Go build the standard library the host
	// compiled once; nil compiles it in each application's own cache.
	goCache *gocache.Shared
	now     func() time.Time
	// started tells a preview that died with the last process from one
	// that died in this one.
	started time.Time

	mu    sync.Mutex
	busy  map[string]*sync.Mutex
	heads map[string]headRead
	// observer hears of the builds and checks of the owner's actions, for
	// the knowledge's cases; a turn's calls name their own (By.Observer).
	observer Observer
}

// Observer hears what every build and every run of the checks found; the
// knowledge store opens and resolves its cases from it. The context
// carries the identity of the turn that asked, if any.
type Observer interface {
	// Built hears a build of revision; before is the revision the
	// application's previous build built (revision itself when none did).
	Built(ctx context.Context, appID, revision, before string, out build.Result)
	Checked(ctx context.Context, appID, revision string, results []acceptance.Result)
}

type headRead struct {
	at       time.Time
	revision string
}

// NewService builds the candidates of the applications: jail starts every
// build stage, goCache (when not nil) serves their Go builds the shared
// standard library, and observer, when not nil, hears of the builds and
// checks of the owner's actions.
func NewService(apps Apps, previews *preview.Manager, jail Jail, goCache *gocache.Shared, now func() time.Time, observer Observer) *Service {
	return &Service{apps: apps, previews: previews, jail: jail, goCache: goCache, now: now, started: now(), observer: observer,
		busy: map[string]*sync.Mutex{}, heads: map[string]headRead{}}
}

func (s *Service) path(appID string) string { return filepath.Join(s.apps.Dir(appID), File) }

// State reads candidate.json; an application never built has an empty state.
func (s *Service) State(appID string) (State, error) {
	b, err := os.ReadFile(s.path(appID))
	if errors.Is(err, fs.ErrNotExist) {
		return State{AppID: appID}, nil
	}
	if err != nil {
		return State{}, fmt.Errorf("candidate: read: %w", err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return State{}, fmt.Errorf("candidate: %s is damaged: %w", s.path(appID), err)
	}
	return st, nil
}

func (s *Service) save(st *State) error {
	st.Updated = s.now()
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("candidate: write: %w", err)
	}
	if err := atomicfile.Replace(s.path(st.AppID), b); err != nil {
		return fmt.Errorf("candidate: write: %w", err)
	}
	return nil
}

// lock takes the application's turn; a second caller is refused with a
// sentence rather than left waiting behind a build.
func (s *Service) lock(appID string) (func(), error) {
	s.mu.Lock()
	m, ok := s.busy[appID]
	if !ok {
		m = &sync.Mutex{}
		s.busy[appID] = m
	}
	s.mu.Unlock()
	if !m.TryLock() {
		return nil, AlreadyRunning(appID)
	}
	return m.Unlock, nil
}

// AlreadyRunning is the refusal of an action on an application while a
// build, check or preview start of it runs.
func AlreadyRunning(appID string) *refusal.Error {
	return &refusal.Error{Code: refusal.Conflict, Message: "A build or check of " + appID + " is already running; wait for it to end."}
}

// Observed is the state with what the host sees now: whether the preview
// still runs, whether the checks ran on it, whether HEAD moved.
type Observed struct {
	State
	PreviewRunning bool
	// Live is the running preview, when PreviewRunning.
	Live preview.Info
	// PreviewNote explains a preview recorded as running that is not.
	PreviewNote string
	// ChecksNote says the checks ran on an earlier preview.
	ChecksNote string
	// Edited says HEAD moved on from the built revision.
	Edited bool
	Head   string
}

// ObserveNow is Observe with HEAD read afresh, for a verdict: what was
// cached for the page may be older than the turn's last edit.
func (s *Service) ObserveNow(ctx context.Context, appID string) (Observed, error) {
	s.mu.Lock()
	delete(s.heads, appID)
	s.mu.Unlock()
	return s.Observe(ctx, appID)
}

// Observe reads the state and compares it with what runs now. HEAD is read
// at most once a second per application.
func (s *Service) Observe(ctx context.Context, appID string) (Observed, error) {
	st, err := s.State(appID)
	if err != nil {
		return Observed{}, err
	}
	o := Observed{State: st}
	info, running := s.previews.Status(appID)
	if running && st.Preview != nil && info.Release == st.Preview.Release && info.SpawnedAt.Equal(st.Preview.SpawnedAt) {
		o.PreviewRunning, o.Live = true, info
	} else if st.Preview != nil && st.Preview.Running {
		if st.Preview.SpawnedAt.Before(s.started) {
			o.PreviewNote = PreviewStoppedByRestart
		} else {
			o.PreviewNote = PreviewStoppedOnItsOwn
			if why := s.previews.EndedWhy(appID); why != "" {
				o.PreviewNote = why
			}
		}
	}
	if c := st.Checks; c != nil {
		if !o.PreviewRunning || c.Release != o.Live.Release || !c.PreviewSpawnedAt.Equal(o.Live.SpawnedAt) {
			o.ChecksNote = fmt.Sprintf("Passed %d of %d for an earlier preview; run the checks again.", c.Passed, len(c.Results))
		}
	}
	// HEAD is a fact of the workspace, built or not: a verdict on an
	// application never built still says whether the turn changed it.
	head, err := s.head(ctx, appID)
	if err != nil {
		if st.Build != nil {
			return o, err
		}
		return o, nil
	}
	o.Head = head
	o.Edited = st.Build != nil && head != st.Build.Revision
	return o, nil
}

func (s *Service) head(ctx context.Context, appID string) (string, error) {
	now := s.now()
	s.mu.Lock()
	h, ok := s.heads[appID]
	s.mu.Unlock()
	if ok && now.Sub(h.at) < time.Second && !now.Before(h.at) {
		return h.revision, nil
	}
	ws, err := workspace.Open(s.apps.WorkspaceDir(appID), s.now)
	if err != nil {
		return "", fmt.Errorf("candidate: open workspace: %w", err)
	}
	defer ws.Close()
	rev, err := ws.Head(ctx)
	if err != nil {
		return "", fmt.Errorf("candidate: head: %w", err)
	}
	s.mu.Lock()
	s.heads[appID] = headRead{at: now, revision: rev}
	s.mu.Unlock()
	return rev, nil
}

// Ready refuses, with a sentence, when nothing of the engineer's may run
// on this machine as the owner chose (see sandbox.Guard).
func (s *Service) Ready() error { return s.jail.Ready() }

// PreviewURL is the address at which the person opens the application's
// running preview (its own host name, see preview.Link), if one runs. It
// reads no file, so a list of many applications stays cheap.
func (s *Service) PreviewURL(appID string) (string, bool) {
	info, ok := s.previews.Status(appID)
	return info.Link, ok
}

// StartPreview starts the last release's preview.
func (s *Service) StartPreview(ctx context.Context, appID string) (Observed, error) {
	unlock, err := s.lock(appID)
	if err != nil {
		return Observed{}, err
	}
	defer unlock()
	st, err := s.previewable(appID)
	if err != nil {
		return Observed{}, err
	}
	if _, err := s.startPreview(ctx, &st); err != nil {
		return Observed{}, err
	}
	return s.Observe(ctx, appID)
}

// previewable is the state of an application with a release to preview.
func (s *Service) previewable(appID string) (State, error) {
	st, err := s.State(appID)
	if err != nil {
		return State{}, err
	}
	if st.Build == nil || st.Build.Release == nil {
		return State{}, &refusal.Error{Code: refusal.Invalid, Message: "There is no release to preview yet: build it first."}
	}
	return st, nil
}

// startPreview starts the preview of st's release and records it; a
// preview that would not start is recorded with its sentence and returned
// as an error.
func (s *Service) startPreview(ctx context.Context, st *State) (preview.Info, error) {
	info, err := s.launchPreview(ctx, st)
	if err != nil {
		return info, err
	}
	return info, s.save(st)
}

// launchPreview is startPreview leaving the record of a started preview
// in st for the caller to save with what it records next (a cycle saves
// its step at once).
func (s *Service) launchPreview(ctx context.Context, st *State) (preview.Info, error) {
	_, m, problems, err := s.apps.Manifest(st.AppID)
	if err != nil {
		return preview.Info{}, err
	}
	if len(problems) > 0 {
		return preview.Info{}, &refusal.Error{Code: refusal.Invalid, Message: "The manifest has problems: " + problems.Error() + "."}
	}
	release := st.Build.Release.ID
	info, err := s.previews.Start(ctx, st.AppID, s.apps.WorkspaceDir(st.AppID), m.Preview, release)
	if err != nil {
		var pe *refusal.Error
		msg := err.Error()
		if errors.As(err, &pe) {
			msg = pe.Message
		}
		st.Preview = &PreviewRecord{Release: release, SpawnedAt: s.now(), Problem: msg}
		if serr := s.save(st); serr != nil {
			return preview.Info{}, serr
		}
		return preview.Info{}, &refusal.Error{Code: refusal.Invalid, Message: msg}
	}
	st.Preview = &PreviewRecord{Release: info.Release, SpawnedAt: info.SpawnedAt, URL: info.URL, Link: info.Link, Running: true}
	return info, nil
}

// StopPreview stops the application's preview.
func (s *Service) StopPreview(ctx context.Context, appID string) (Observed, error) {
	unlock, err := s.lock(appID)
	if err != nil {
		return Observed{}, err
	}
	defer unlock()
	st, err := s.State(appID)
	if err != nil {
		return Observed{}, err
	}
	if err := s.previews.Stop(ctx, appID); err != nil {
		var pe *refusal.Error
		if !errors.As(err, &pe) || pe.Code != refusal.NotRunning {
			return Observed{}, err
		}
	}
	if st.Preview != nil {
		st.Preview.Running = false
		if err := s.save(&st); err != nil {
			return Observed{}, err
		}
	}
	return s.Observe(ctx, appID)
}

// RunDiffs are the changes each run (attempt) committed to the
// application's workspace, in the order given; a run that committed
// nothing has "".
func (s *Service) RunDiffs(ctx context.Context, appID string, runIDs []string) ([]string, error) {
	ws, err := workspace.Open(s.apps.WorkspaceDir(appID), s.now)
	if err != nil {
		return nil, fmt.Errorf("candidate: open workspace: %w", err)
	}
	defer ws.Close()
	out := make([]string, len(runIDs))
	for i, id := range runIDs {
		if out[i], err = ws.RunDiff(ctx, id); err != nil {
			return nil, err
		}
	}
	return out, nil
}
