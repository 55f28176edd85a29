package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"autoapp/executor/sandbox"
)

// Who the host's commits name. The engineer authors every accepted edit;
// the host commits it. The host authors a workspace's first commit.
const (
	EngineerName  = "Autoapp engineer"
	EngineerEmail = "engineer@autoapp.local"
	HostName      = "Autoapp host"
	HostEmail     = "host@autoapp.local"
	OwnerName     = "Owner"
	OwnerEmail    = "owner@autoapp.local"
)

// CommitOwnerFile commits the file at path, which the owner's page has
// just written, as the owner's edit with message. A file left as git has
// it commits nothing. Like every git command here it runs with no hooks
// and confined to the workspace.
func (w *Workspace) CommitOwnerFile(path, message string) error {
	w.writing.Lock()
	defer w.writing.Unlock()
	sign := signature{OwnerName, OwnerEmail, w.now()}
	if _, err := runGit(w.dir, sign, "add", "--", path); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	// diff --quiet exits 1 when something is staged, 0 when nothing is.
	_, err := runGit(w.dir, sign, "diff", "--cached", "--quiet", "--", path)
	switch {
	case err == nil:
		return nil
	case exitCode(err) != 1:
		return fmt.Errorf("workspace: %w", err)
	}
	if _, err := runGit(w.dir, sign, "commit", "-q", "--no-verify", "-m", message, "--", path); err != nil {
		return fmt.Errorf("workspace: commit: %w", err)
	}
	return nil
}

// gitTimeout bounds one git command; the workspace is local, so only a
// stuck disk or a huge repository comes near it.
const gitTimeout = 2 * time.Minute

// Git runs a read-only git command in dir as the workspace's own are run:
// the same options and environment, confined to dir. It returns what git
// wrote to stdout.
func Git(dir string, args ...string) ([]byte, error) {
	return runGit(dir, hostSign(time.Unix(0, 0)), args...)
}

// signature is whom a commit names as its author, and when it is made.
type signature struct {
	name, email string
	when        time.Time
}

func hostSign(t time.Time) signature     { return signature{HostName, HostEmail, t} }
func engineerSign(t time.Time) signature { return signature{EngineerName, EngineerEmail, t} }

// gitOptions make git behave the same whatever the repository's or the
// host user's configuration says: no hooks, no fsmonitor, no signing.
var gitOptions = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.quotePath=false",
	"-c", "commit.gpgSign=false",
	"-c", "init.defaultBranch=main",
}

// gitEnv is the environment of every git command: nothing of the host's
// (no keys, no GIT_ variables), no global or system configuration, no
// home to find any in, the C locale (so output parses), literal pathspecs
// (so a path is never a pattern), and the commit's people and dates.
func gitEnv(s signature) []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	date := fmt.Sprintf("@%d %s", s.when.Unix(), s.when.Format("-0700"))
	return []string{
		"PATH=" + path,
		"HOME=/nonexistent",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_LITERAL_PATHSPECS=1",
		"LC_ALL=C",
		"GIT_AUTHOR_NAME=" + s.name,
		"GIT_AUTHOR_EMAIL=" + s.email,
		"GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=" + HostName,
		"GIT_COMMITTER_EMAIL=" + HostEmail,
		"GIT_COMMITTER_DATE=" + date,
	}
}

// gitError is a git command that failed, with what it said.
type gitError struct {
	args   []string
	code   int // exit status, -1 when git did not run to the end
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	return fmt.Sprintf("git %s: %s", e.args[0], msg)
}

func (e *gitError) Unwrap() error { return e.err }

// exitCode is the exit status of a failed git command, or -1.
func exitCode(err error) int {
	var ge *gitError
	if errors.As(err, &ge) {
		return ge.code
	}
	return -1
}

// runGit runs git in dir and returns what it wrote to stdout.
func runGit(dir string, s signature, args ...string) ([]byte, error) {
	return runGitInput(dir, s, nil, nil, args...)
}

// runGitInput runs git in dir with stdin and more environment (which
// wins over gitEnv's), and returns what it wrote to stdout.
func runGitInput(dir string, s signature, stdin io.Reader, env []string, args ...string) ([]byte, error) {
	var out bytes.Buffer
	if err := streamGit(dir, s, stdin, env, &out, args...); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// streamGit runs git in dir, writing its stdout to stdout. git runs
// confined to dir whenever the machine can confine (see
// sandbox.StartHost): the repository's own configuration may have been
// written by the engineer's code, and may name programs git runs.
func streamGit(dir string, s signature, stdin io.Reader, env []string, stdout io.Writer, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, gitOptions...), args...)...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(s), env...)
	cmd.Stdin = stdin
	cmd.Stdout = stdout
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{max: 16 << 10, buf: &stderr}
	cmd.WaitDelay = 5 * time.Second
	err := sandbox.StartHost(cmd, sandbox.Policy{Write: []string{dir}, Net: sandbox.NetNone})
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return &gitError{args: args, code: code, stderr: stderr.String(), err: err}
	}
	return nil
}

// limitedBuffer keeps the first max bytes written to it and counts all.
type limitedBuffer struct {
	max   int
	buf   *bytes.Buffer
	total int64
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.total += int64(len(p))
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// Head returns the commit the workspace is at.
func (w *Workspace) Head() (string, error) {
	out, err := runGit(w.dir, hostSign(w.now()), "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", fmt.Errorf("workspace: head: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// commitOf resolves a revision the caller named into its commit hash.
func (w *Workspace) commitOf(field, rev string) (string, *Problem, error) {
	switch {
	case strings.TrimSpace(rev) == "":
		return "", &Problem{Field: field, Message: "give a revision"}, nil
	case len(rev) > 256 || strings.HasPrefix(rev, "-") || strings.IndexFunc(rev, unicode.IsSpace) >= 0 ||
		strings.IndexFunc(rev, unicode.IsControl) >= 0:
		return "", &Problem{Field: field, Message: fmt.Sprintf("%q is not a revision", rev)}, nil
	}
	out, err := runGit(w.dir, hostSign(w.now()), "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if exitCode(err) == 1 {
		return "", &Problem{Field: field, Message: fmt.Sprintf("%q is not a commit in this workspace", rev)}, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("workspace: %w", err)
	}
	return strings.TrimSpace(string(out)), nil, nil
}

// commitPair resolves the two ends of a comparison.
func (w *Workspace) commitPair(from, to string) (string, string, error) {
	var ps Problems
	a, prob, err := w.commitOf("from", from)
	if err != nil {
		return "", "", err
	}
	if prob != nil {
		ps = append(ps, *prob)
	}
	b, prob, err := w.commitOf("to", to)
	if err != nil {
		return "", "", err
	}
	if prob != nil {
		ps = append(ps, *prob)
	}
	if len(ps) > 0 {
		return "", "", ps
	}
	return a, b, nil
}

// Stat is the size of the change between two revisions.
type Stat struct {
	Files      int `json:"files"`
	Insertions int `json:"insertions"`
	Deletions  int `json:"deletions"`
	// ChangedLines is Insertions plus Deletions.
	ChangedLines int `json:"changedLines"`
}

// ShortStat counts the files and lines changed from one revision to
// another, as git diff --shortstat does (with renames found).
func (w *Workspace) ShortStat(from, to string) (Stat, error) {
	a, b, err := w.commitPair(from, to)
	if err != nil {
		return Stat{}, err
	}
	out, err := runGit(w.dir, hostSign(w.now()), "diff", "--shortstat", "-M", "--no-ext-diff", "--no-textconv", a, b, "--")
	if err != nil {
		return Stat{}, fmt.Errorf("workspace: shortstat: %w", err)
	}
	return parseShortStat(string(out))
}

var shortStatPart = regexp.MustCompile(`(\d+) (files? changed|insertions?\(\+\)|deletions?\(-\))`)

// parseShortStat reads " 3 files changed, 10 insertions(+), 2 deletions(-)";
// an empty output is no change.
func parseShortStat(out string) (Stat, error) {
	var s Stat
	out = strings.TrimSpace(out)
	if out == "" {
		return s, nil
	}
	parts := shortStatPart.FindAllStringSubmatch(out, -1)
	if len(parts) == 0 {
		return s, fmt.Errorf("workspace: shortstat: cannot read %q", out)
	}
	for _, m := range parts {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return s, fmt.Errorf("workspace: shortstat: cannot read %q", out)
		}
		switch m[2][0] {
		case 'f':
			s.Files = n
		case 'i':
			s.Insertions = n
		case 'd':
			s.Deletions = n
		}
	}
	s.ChangedLines = s.Insertions + s.Deletions
	return s, nil
}

// Diff returns the unified diff from one revision to another, cut after
// MaxDiffBytes at a line's end with a last line saying so.
func (w *Workspace) Diff(from, to string) (string, error) {
	a, b, err := w.commitPair(from, to)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	out := &limitedBuffer{max: MaxDiffBytes, buf: &buf}
	err = streamGit(w.dir, hostSign(w.now()), nil, nil, out, "diff", "-M", "--no-color", "--no-ext-diff", "--no-textconv", a, b, "--")
	if err != nil {
		return "", fmt.Errorf("workspace: diff: %w", err)
	}
	if out.total <= MaxDiffBytes {
		return buf.String(), nil
	}
	text := buf.String()
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[:i+1]
	}
	return text + fmt.Sprintf("[The diff is cut here: it is %s, and at most %d KiB is shown.]\n",
		sizeText(out.total), MaxDiffBytes>>10), nil
}

// InitRepository makes the folder dir a new git repository whose first
// commit, made by the host with message, holds the files present; it
// returns that commit. An application created from a template starts so.
func InitRepository(dir string, message string, now func() time.Time) (string, error) {
	if strings.TrimSpace(message) == "" {
		return "", Problems{{Field: "message", Message: "give the first commit a message"}}
	}
	if now == nil {
		return "", errors.New("workspace: no clock given")
	}
	info, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("workspace: %s is not a folder", dir)
	}
	gitDir := filepath.Join(dir, ".git")
	if _, err := os.Lstat(gitDir); err == nil {
		return "", fmt.Errorf("workspace: %s is already a git repository", dir)
	}
	sign := hostSign(now())
	if _, err := runGit(dir, sign, "init", "-q"); err != nil {
		return "", fmt.Errorf("workspace: init %s: %w", dir, err)
	}
	rev, err := firstCommit(dir, sign, message)
	if err != nil {
		// The repository is ours and unfinished; leave the folder as it was.
		os.RemoveAll(gitDir)
		return "", fmt.Errorf("workspace: init %s: %w", dir, err)
	}
	return rev, nil
}

func firstCommit(dir string, sign signature, message string) (string, error) {
	if _, err := runGit(dir, sign, "add", "-A"); err != nil {
		return "", err
	}
	if _, err := runGit(dir, sign, "commit", "-q", "--allow-empty", "--no-verify", "-m", message); err != nil {
		return "", err
	}
	out, err := runGit(dir, sign, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// RunDiff is what one run (one attempt) changed: the patches of the
// commits whose message names its run id, oldest first, capped like Diff.
// "" when the run committed nothing.
func (w *Workspace) RunDiff(runID string) (string, error) {
	if runID == "" || strings.ContainsAny(runID, "\n\r") {
		return "", Problems{{Field: "runID", Message: "name the run"}}
	}
	var buf bytes.Buffer
	out := &limitedBuffer{max: MaxDiffBytes, buf: &buf}
	// The id is matched as a fixed string inside "(run <id>," or "(run <id>)".
	err := streamGit(w.dir, hostSign(w.now()), nil, nil, out, "log", "--reverse", "-p", "-M", "--no-color", "--no-ext-diff",
		"--no-textconv", "--fixed-strings", "--grep=(run "+runID+",", "--grep=(run "+runID+")", "--format=commit %h %s", "HEAD", "--")
	if err != nil {
		return "", fmt.Errorf("workspace: run diff: %w", err)
	}
	if out.total <= MaxDiffBytes {
		return buf.String(), nil
	}
	text := buf.String()
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[:i+1]
	}
	return text + fmt.Sprintf("[The diff is cut here: it is %s, and at most %d KiB is shown.]\n", sizeText(out.total), MaxDiffBytes>>10), nil
}
