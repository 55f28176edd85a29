package workspace

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"autoapp/intent/workspace/sandbox"
)

// HeadName is what HEAD of the repository at dir names: the branch it is
// on (refs/heads/main), or the full hash of the commit it is detached at
// (also for a branch whose name FromBundle would not take).
func HeadName(ctx context.Context, dir string) (string, error) {
	out, err := Git(ctx, dir, "symbolic-ref", "-q", "HEAD")
	if ref := strings.TrimSpace(string(out)); err == nil && refName(ref) {
		return ref, nil
	}
	if err != nil && exitCode(err) != 1 {
		return "", fmt.Errorf("workspace: head: %w", err)
	}
	out, err = Git(ctx, dir, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", fmt.Errorf("workspace: head: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Bundle writes every ref of the repository at dir (its branches, its
// tags, HEAD) and every commit they reach to w, as `git bundle create
// --all` makes a bundle. It reads the refs once, so commits made while it
// runs are either in the bundle whole or not at all. git runs as the
// workspace's own commands do, for at most cloneTimeout.
func Bundle(ctx context.Context, dir string, w io.Writer) error {
	if err := checkGitFiles(dir); err != nil {
		return err
	}
	run := inWorkspace(dir)
	run.timeout = cloneTimeout
	if err := run.stream(ctx, hostSign(time.Unix(0, 0)), nil, nil, w, "bundle", "create", "--quiet", "-", "--all"); err != nil {
		return fmt.Errorf("workspace: bundle %s: %w", dir, err)
	}
	return nil
}

// FromBundle makes dir, which must not exist yet, the repository the
// bundle at path holds: every ref the bundle carries, under its own name
// (a branch a branch, a tag a tag), HEAD naming head as HeadName answered
// it, and the index and the working tree as HEAD's commit has them. git
// runs confined to reading the bundle's folder and writing dir.
func FromBundle(ctx context.Context, path, dir, head string) error {
	if !refName(head) && !objectName(head) {
		return fmt.Errorf("workspace: %q is neither a branch nor a commit", head)
	}
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("workspace: %s is there already", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	sign := hostSign(time.Unix(0, 0))
	if _, err := runGit(ctx, dir, sign, "init", "-q"); err != nil {
		return fmt.Errorf("workspace: init %s: %w", dir, err)
	}
	fetch := gitRun{dir: dir, timeout: cloneTimeout,
		policy: sandbox.Policy{Read: []string{filepath.Dir(path)}, Write: []string{dir}, Net: sandbox.NetNone}}
	// The new repository's unborn branch is HEAD's: --update-head-ok lets
	// the fetch write it.
	if err := fetch.stream(ctx, sign, nil, nil, io.Discard, "fetch", "--quiet", "--no-tags", "--update-head-ok", "--", path, "refs/*:refs/*"); err != nil {
		return fmt.Errorf("workspace: %s cannot be read: %w", path, err)
	}
	setHead := []string{"symbolic-ref", "HEAD", head}
	if objectName(head) {
		setHead = []string{"update-ref", "--no-deref", "HEAD", head}
	}
	if _, err := runGit(ctx, dir, sign, setHead...); err != nil {
		return fmt.Errorf("workspace: HEAD of %s: %w", dir, err)
	}
	if _, err := runGit(ctx, dir, sign, "reset", "--quiet", "--hard", "HEAD"); err != nil {
		return fmt.Errorf("workspace: the working tree of %s: %w", dir, err)
	}
	return nil
}
