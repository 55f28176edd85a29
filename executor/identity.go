package executor

import (
	"context"

	"autoapp/intent/app"
	"autoapp/intent/workspace"
	"autoapp/knowledge"
	"autoapp/knowledge/origin"
)

// The call part of the request ids of what the host does for a builder
// turn outside the turn's own tool calls, after <runId>:.
const (
	// VerdictCall names the rows written as the attempt is judged, before
	// the turn starts and after it ends.
	VerdictCall = "verdict"
	// HostBuildCall names the host's build of what a turn left unbuilt.
	HostBuildCall = "host-build"
	// AdviceCall names the planning model's advice on a failed task.
	AdviceCall = "advice"
)

// Places is what a turn's identity reads of an application (*app.Service).
type Places interface {
	Get(ctx context.Context, id string) (app.App, error)
}

// PositionAt is where appID stands as a turn starts: the release its
// candidate holds (its last build that passed), else the application's
// current release, and the revision its workspace ws is at, or
// knowledge.NoGit when there is none (ws nil: it could not be opened).
// It reads HEAD once; the turn's edits and builds move it on from there.
func PositionAt(ctx context.Context, cands CandidateStates, apps Places, appID string, ws *workspace.Workspace) *origin.Position {
	var release string
	if cands != nil {
		if st, err := cands.State(appID); err == nil && st.Build != nil && st.Build.Release != nil {
			release = st.Build.Release.ID
		}
	}
	if release == "" {
		if a, err := apps.Get(ctx, appID); err == nil {
			release = a.CurrentRelease
		}
	}
	revision := knowledge.NoGit
	if ws != nil {
		if head, err := ws.Head(ctx); err == nil {
			revision = head
		}
	}
	return origin.NewPosition(release, revision)
}

// attemptContext is ctx carrying the identity of the attempt runID at
// appID, its rows named <runId>:<call>, and its position.
func attemptContext(ctx context.Context, runID, appID, call string, pos *origin.Position) context.Context {
	ctx = origin.WithIdentity(ctx, origin.Identity{RunID: runID, CallID: runID + ":" + call, AppID: appID})
	return origin.WithPosition(ctx, pos)
}
