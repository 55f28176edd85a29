package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"autoapp/executor/candidate"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
	"autoapp/knowledge"
	"autoapp/knowledge/origin"
)

// The owner's own actions on an application (its page's Build and check,
// Start preview, Stop preview, Make current and the manifest) are decided
// under the executor's lock, as Start decides a run: one is refused while
// a run changes the application, and a run is refused while the owner's
// build and check or preview start goes, so the two never start together.
// A build and check or a preview start may take minutes: it answers at
// once and goes on in the background, like a run, one at a time per
// application, until it ends or the launcher stops.

// The owner's actions that go on in the background, named as their
// buttons are.
const (
	ActionBuildAndCheck = "Build and check"
	ActionStartPreview  = "Start preview"
)

// OwnerAction is the owner's build and check or preview start of an
// application: the one going, or the last one, ended.
type OwnerAction struct {
	AppID string
	// What is ActionBuildAndCheck or ActionStartPreview.
	What    string
	Started time.Time
	// Doing is what it does now, or did last.
	Doing candidate.Doing
	// Ended is zero while it goes.
	Ended time.Time
	// Problem says, when it ended, why it did not do its work; what it
	// did do is in the candidate's state.
	Problem string
}

// Going says it has not ended.
func (a OwnerAction) Going() bool { return a.Ended.IsZero() }

// action is an OwnerAction with what stops it.
type action struct {
	OwnerAction
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// BuildAndCheck builds the application's workspace as it is, starts its
// preview and runs its checks, as the owner asks on its page: refused at
// once, with a sentence, when it cannot begin; otherwise it returns at
// once and goes on in the background (see OwnerAction).
func (e *Executor) BuildAndCheck(ctx context.Context, appID string) error {
	return e.startAction(ctx, appID, ActionBuildAndCheck, e.d.Candidates.BeginCycle)
}

// StartPreview starts the preview of the application's last release in
// the background, as BuildAndCheck goes.
func (e *Executor) StartPreview(ctx context.Context, appID string) error {
	return e.startAction(ctx, appID, ActionStartPreview, e.d.Candidates.BeginPreview)
}

func (e *Executor) startAction(ctx context.Context, appID, what string, begin func(context.Context, string) (*candidate.Begun, error)) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return refuse(refusal.Conflict, "The launcher is shutting down; nothing can start.")
	}
	if err := e.busyLocked(appID); err != nil {
		return err
	}
	if a := e.actions[appID]; a != nil && a.Going() {
		return candidate.AlreadyRunning(appID)
	}
	// The click is a single-step run of its own: its rows are told apart
	// from every other click's and name where the application stood.
	ctx = e.ownerClick(ctx, appID)
	// It takes the application's turn, which a turn's own build or a chat
	// turn's change would also need.
	b, err := begin(ctx, appID)
	if err != nil {
		return err
	}
	actx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	a := &action{OwnerAction: OwnerAction{AppID: appID, What: what, Started: e.d.Now()}, cancel: cancel, done: make(chan struct{})}
	if e.actions == nil {
		e.actions = map[string]*action{}
	}
	e.actions[appID] = a
	go func() {
		defer close(a.done)
		defer cancel(nil)
		err := b.Run(actx, func(d candidate.Doing) {
			e.mu.Lock()
			a.Doing = d
			e.mu.Unlock()
		})
		problem := e.actionProblem(actx, a, err)
		e.mu.Lock()
		a.Ended, a.Problem = e.d.Now(), problem
		e.mu.Unlock()
	}()
	return nil
}

// actionProblem is the sentence for an action that ended with err.
func (e *Executor) actionProblem(ctx context.Context, a *action, err error) string {
	switch r, ok := refusal.As(err); {
	case err == nil && ctx.Err() == nil:
		return ""
	case errors.Is(context.Cause(ctx), errShutdown):
		return LauncherStopped
	case ok:
		return r.Message
	default:
		e.d.Log.Error("the owner's action failed", "app", a.AppID, "action", a.What, "err", err)
		return a.What + " could not finish; the launcher's log has the detail."
	}
}

// OwnerAction is the application's build and check or preview start that
// goes, or the last that ended since a run last started on it.
func (e *Executor) OwnerAction(appID string) (OwnerAction, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a := e.actions[appID]
	if a == nil {
		return OwnerAction{}, false
	}
	return a.OwnerAction, true
}

// StopPreview stops the application's preview, refused while a run
// changes the application (or the owner's build goes: see
// candidate.Service.StopPreview).
func (e *Executor) StopPreview(ctx context.Context, appID string) error {
	return e.byHand(appID, func() error {
		_, err := e.d.Candidates.StopPreview(ctx, appID)
		return err
	})
}

// SaveManifest saves the owner's manifest of the application, refused
// while a run changes the application.
func (e *Executor) SaveManifest(ctx context.Context, appID string, raw []byte) error {
	return e.byHand(appID, func() error { return e.d.Apps.SaveManifest(ctx, appID, raw) })
}

// Activate makes the release current, as the owner asks, refused while a
// run changes the application.
func (e *Executor) Activate(ctx context.Context, appID, releaseID string) error {
	return e.byHand(appID, func() error { return e.d.Apps.Activate(ctx, appID, releaseID) })
}

// byHand does a short write of the owner's under the executor's lock, so
// that no run starts on the application before it is done.
func (e *Executor) byHand(appID string, write func() error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.busyLocked(appID); err != nil {
		return err
	}
	return write()
}

// busyLocked refuses the owner's writes to an application while a run
// changes it; the caller holds e.mu.
func (e *Executor) busyLocked(appID string) error {
	for _, r := range e.runs {
		if r.appID == appID {
			return refuse(refusal.Conflict, "Intent #%d is running on %s; stop it before changing the application by hand.", r.intentID, appID)
		}
	}
	return nil
}

// stopActions cancels the owner's actions going, as the launcher stops,
// and waits for them to end.
func (e *Executor) stopActions() {
	e.mu.Lock()
	var going []*action
	for _, a := range e.actions {
		if a.Going() {
			going = append(going, a)
		}
	}
	e.mu.Unlock()
	for _, a := range going {
		a.cancel(errShutdown)
	}
	for _, a := range going {
		<-a.done
	}
}

// ownerClick is ctx carrying the identity of one click of the owner's on
// appID's page: a single-step run, "owner-<time>-<n>", whose call id is its
// run id, at the release the candidate holds and the revision the
// workspace's HEAD is at.
func (e *Executor) ownerClick(ctx context.Context, appID string) context.Context {
	e.clicks++
	runID := fmt.Sprintf("%s-%s-%d", OwnerRun, e.d.Now().UTC().Format("20060102T150405.000"), e.clicks)
	pos := PositionAt(ctx, e.d.Candidates, e.d.Apps, appID, nil)
	release, _ := pos.At()
	revision := knowledge.NoGit
	if head, err := workspace.Git(ctx, e.d.Apps.WorkspaceDir(appID), "rev-parse", "HEAD"); err == nil {
		revision = strings.TrimSpace(string(head))
	}
	ctx = origin.WithIdentity(ctx, origin.Identity{RunID: runID, CallID: runID, AppID: appID})
	return origin.WithPosition(ctx, origin.NewPosition(release, revision))
}

// IsOwnerRun reports whether runID names a click of the owner's (or the
// owner's builds before clicks had runs of their own).
func IsOwnerRun(runID string) bool {
	return runID == OwnerRun || strings.HasPrefix(runID, OwnerRun+"-")
}
