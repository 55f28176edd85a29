package workspace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"

	"autoapp/intent/app"
	"autoapp/intent/refusal"
)

// Repositories is the applications' git (an app.Repositories): every git
// it starts runs through the one hardened runner, as a workspace's do.
type Repositories struct {
	Now func() time.Time
}

var _ app.Repositories = Repositories{}

// Init makes dir a repository whose first commit, with message, holds its
// files.
func (r Repositories) Init(ctx context.Context, dir, message string) error {
	_, err := InitRepository(ctx, dir, message, r.Now)
	return err
}

// Clone clones the repository at source into dir.
func (Repositories) Clone(ctx context.Context, source, dir string) error {
	return Clone(ctx, source, dir)
}

// HeadFile is path as the HEAD of the repository at dir commits it.
func (Repositories) HeadFile(ctx context.Context, dir, path string) ([]byte, error) {
	return Git(ctx, dir, "show", "HEAD:"+path)
}

// Manifest reads the manifest the host obeys in the workspace at dir
// (Workspace.Manifest); a folder that is not there has none.
func (r Repositories) Manifest(ctx context.Context, dir string) ([]byte, app.Manifest, refusal.Problems, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, app.Manifest{}, refusal.Problems{{Message: "the workspace has no autoapp.json"}}, nil
	}
	ws, err := Open(dir, r.Now)
	if err != nil {
		return nil, app.Manifest{}, nil, err
	}
	defer ws.Close()
	return ws.Manifest(ctx)
}

// CommitOwnerFile commits, as the owner, what path in the workspace at dir
// now holds.
func (r Repositories) CommitOwnerFile(ctx context.Context, dir, path, message string) error {
	ws, err := Open(dir, r.Now)
	if err != nil {
		return err
	}
	defer ws.Close()
	return ws.CommitOwnerFile(ctx, path, message)
}
