// Package origin is where a row of the knowledge store comes from: the
// identity of the turn and call that wrote it, and the position (release
// and revision) of the application as the turn moves it. The model layer
// and the executor carry it in a context; the knowledge store reads it.
// It holds no store, so whoever carries an origin links no database.
package origin

import (
	"cmp"
	"context"
	"sync"
)

// Identity is who a row was written for: the run and call of the turn's own
// envelope, the application, its release and the workspace revision. An
// empty field is stored as NULL.
type Identity struct {
	RunID     string
	CallID    string
	AppID     string
	ReleaseID string
	Revision  string
}

type identityKey struct{}

// WithIdentity returns ctx carrying id: every row written under it takes id.
// The caller builds id from what the host knows (the run loop's envelope,
// the workspace's HEAD), never from what a model said.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom is the identity ctx carries, empty when it carries none.
// When ctx carries a Position, its release and revision are the ones the
// position holds now.
func IdentityFrom(ctx context.Context) Identity {
	if ctx == nil {
		return Identity{}
	}
	id, _ := ctx.Value(identityKey{}).(Identity)
	if release, revision := PositionFrom(ctx).At(); release != "" || revision != "" {
		id.ReleaseID, id.Revision = cmp.Or(release, id.ReleaseID), cmp.Or(revision, id.Revision)
	}
	return id
}

// WithCall returns ctx with its identity's call set to callID, the rest
// kept: the rows a tool call writes name the call the run loop gave it.
func WithCall(ctx context.Context, callID string) context.Context {
	id, _ := ctx.Value(identityKey{}).(Identity)
	id.CallID = callID
	return context.WithValue(ctx, identityKey{}, id)
}

// Position is where an application stands while a turn runs: the release
// its candidate holds and the revision its workspace's HEAD is at. The turn
// moves it as it learns of a change (an edit's commit, a build's release),
// so a row written under it takes the release and revision of the moment
// it is written without anyone asking git. The nil Position holds nothing
// and moves nowhere. It is safe for concurrent use.
type Position struct {
	mu                sync.Mutex
	release, revision string
}

// NewPosition is a position at release and revision, as a turn starts.
func NewPosition(release, revision string) *Position {
	return &Position{release: release, revision: revision}
}

// Committed moves the position to the revision a commit made.
func (p *Position) Committed(revision string) {
	if p == nil || revision == "" {
		return
	}
	p.mu.Lock()
	p.revision = revision
	p.mu.Unlock()
}

// Released moves the position to the release a build that passed made.
func (p *Position) Released(release string) {
	if p == nil || release == "" {
		return
	}
	p.mu.Lock()
	p.release = release
	p.mu.Unlock()
}

// At is the release and revision the position holds now.
func (p *Position) At() (release, revision string) {
	if p == nil {
		return "", ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.release, p.revision
}

type positionKey struct{}

// WithPosition returns ctx carrying p: every row written under it takes
// the release and revision p holds when it is written.
func WithPosition(ctx context.Context, p *Position) context.Context {
	return context.WithValue(ctx, positionKey{}, p)
}

// PositionFrom is the position ctx carries, nil when it carries none.
func PositionFrom(ctx context.Context) *Position {
	if ctx == nil {
		return nil
	}
	p, _ := ctx.Value(positionKey{}).(*Position)
	return p
}
