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
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"autoapp/intent/refusal"
	"autoapp/intent/workspace/sandbox"
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
func (w *Workspace) CommitOwnerFile(ctx context.Context, path, message string) error {
	w.writing.Lock()
	defer w.writing.Unlock()
	ctx = context.WithoutCancel(ctx) // a commit is not cut off half-way
	if err := w.checkIndex(ctx); err != nil {
		return err
	}
	c, err := w.addAndCommit(ctx, signature{OwnerName, OwnerEmail, w.now()}, []string{path}, true, "", message, "")
	switch {
	case err == nil, c.failed == stepCommit && exitCode(err) == 1: // 1: the file is as git has it
		return nil
	case c.failed == stepCommit:
		return fmt.Errorf("workspace: commit: %w", err)
	}
	return fmt.Errorf("workspace: %w", err)
}

// The steps of addAndCommit, as it names the one that failed.
const (
	stepAdd = iota
	stepCommit
	stepCount
)

// commitOutput is what addAndCommit did: commit's summary, and git's
// count of the change from the revision it was asked to count from, when
// git could count it; on failure, the step that failed.
type commitOutput struct {
	summary []byte
	since   *Stat
	failed  int
}

// addAndCommit commits the working tree's files at paths, and only those,
// on top of HEAD, authored by sign, all in one confined start (see
// runGitSteps): `git add` first when add is set (commit takes a tracked
// path's content from the working tree itself, but knows no new file),
// then `git commit -- <paths>`, then, when since is a commit's full name,
// `git diff --shortstat` from since to the new commit, as ShortStat
// counts it. commit exits 1 when the paths hold nothing to commit.
func (w *Workspace) addAndCommit(ctx context.Context, sign signature, paths []string, add bool, since, subject, body string) (commitOutput, error) {
	var steps [][]string
	kinds := []int{}
	if add {
		steps, kinds = append(steps, append([]string{"add", "-A", "--"}, paths...)), append(kinds, stepAdd)
	}
	commit := []string{"commit", "--no-verify", "--no-status", "-m", subject}
	if body != "" {
		commit = append(commit, "-m", body)
	}
	steps, kinds = append(steps, append(append(commit, "--"), paths...)), append(kinds, stepCommit)
	if objectName(since) {
		steps, kinds = append(steps, shortStatArgs(since, "HEAD")), append(kinds, stepCount)
	}
	outs, failed, err := runGitSteps(ctx, w.dir, sign, steps...)
	if err != nil && kinds[failed] != stepCount {
		return commitOutput{failed: kinds[failed]}, err
	}
	// The commit is made; a count git could not make is only not kept.
	c := commitOutput{summary: outs[slices.Index(kinds, stepCommit)]}
	if err == nil && kinds[len(kinds)-1] == stepCount {
		if st, perr := parseShortStat(string(outs[len(outs)-1])); perr == nil {
			c.since = &st
		}
	}
	return c, nil
}

// counts keeps, for each workspace, git's count of the change from the
// revision its last commit was asked to count from (CommitMeta.Since) to
// that commit: ShortStat of the two answers it without starting git
// again. What changed between two commits never changes.
var counts sync.Map // real directory → countedChange

// countedChange is git's count of the change from one commit to another.
type countedChange struct {
	from, to string
	stat     Stat
}

// Maintain lets git keep the repository in order as its own commits would
// have it do, when its thresholds say so (git gc --auto: loose objects
// packed, packs and refs put together, what is old and unreachable
// pruned), and waits for it to end. The host's commits never start it
// (gitOptions): they are many and small, and a turn must not meet a gc.
// The executor calls it between runs, when one ends.
func (w *Workspace) Maintain(ctx context.Context) error {
	w.writing.Lock()
	defer w.writing.Unlock()
	_, err := runGit(ctx, w.dir, hostSign(w.now()), "-c", "gc.auto=6700", "-c", "gc.autoPackLimit=50", "-c", "gc.autoDetach=false",
		"gc", "--auto", "--quiet")
	if err != nil {
		return fmt.Errorf("workspace: maintenance: %w", err)
	}
	return nil
}

// gitTimeout bounds one git command; the workspace is local, so only a
// stuck disk or a huge repository comes near it. cloneTimeout bounds a
// clone, which copies every object of the repository it clones.
const (
	gitTimeout   = 2 * time.Minute
	cloneTimeout = 10 * time.Minute
)

// Git runs a read-only git command in dir as the workspace's own are run:
// the same options and environment, confined to dir, stopped when ctx ends
// or after gitTimeout. It returns what git wrote to stdout.
func Git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return runGit(ctx, dir, hostSign(time.Unix(0, 0)), args...)
}

// Clone makes dir, which must not exist yet, a clone of the git repository
// at source, its files copied rather than linked. git runs as the
// workspace's commands do, confined to reading source and writing the
// folder dir is made in, stopped when ctx ends or after cloneTimeout.
func Clone(ctx context.Context, source, dir string) error {
	parent := filepath.Dir(dir)
	run := gitRun{dir: parent, timeout: cloneTimeout,
		policy: sandbox.Policy{Read: []string{source}, Write: []string{parent}, Net: sandbox.NetNone}}
	return run.stream(ctx, hostSign(time.Unix(0, 0)), nil, nil, io.Discard,
		"clone", "--quiet", "--no-hardlinks", "--", source, dir)
}

// CloneAt is Clone, then the clone's branch reset to the commit rev names:
// a fresh workspace of its own at that revision.
func CloneAt(ctx context.Context, source, dir, rev string) error {
	if err := Clone(ctx, source, dir); err != nil {
		return err
	}
	if _, err := runGit(ctx, dir, hostSign(time.Unix(0, 0)), "reset", "--quiet", "--hard", rev+"^{commit}"); err != nil {
		return fmt.Errorf("workspace: the clone cannot be set at %s: %w", rev, err)
	}
	return nil
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
	// A commit would start git maintenance after itself, in the middle
	// of a turn: the host runs it between runs instead (Maintain), whose
	// options come after these and win.
	"-c", "maintenance.auto=false",
	"-c", "gc.auto=0",
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
func runGit(ctx context.Context, dir string, s signature, args ...string) ([]byte, error) {
	return runGitInput(ctx, dir, s, nil, nil, args...)
}

// runGitInput runs git in dir with stdin and more environment (which
// wins over gitEnv's), and returns what it wrote to stdout.
func runGitInput(ctx context.Context, dir string, s signature, stdin io.Reader, env []string, args ...string) ([]byte, error) {
	var out bytes.Buffer
	if err := streamGit(ctx, dir, s, stdin, env, &out, args...); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// streamGit runs git in dir, confined to it, writing its stdout to stdout,
// once checkGitFiles found nothing git would wait on.
func streamGit(ctx context.Context, dir string, s signature, stdin io.Reader, env []string, stdout io.Writer, args ...string) error {
	if err := checkGitFiles(dir); err != nil {
		return err
	}
	return inWorkspace(dir).stream(ctx, s, stdin, env, stdout, args...)
}

// runGitSteps runs git commands one after another, each as runGit runs
// one (gitOptions, gitEnv, in dir), in one confined start, and stops at
// the first that fails: starting the sandbox costs several times what
// git itself does for a small commit. It returns what each wrote to
// stdout (none may write a NUL), and, when one failed, its index in
// steps and its error. A shell sequences them, every argument quoted for
// it, so that it runs nothing but git, with a NUL between two steps'
// output: their number says how far it went.
func runGitSteps(ctx context.Context, dir string, s signature, steps ...[]string) ([][]byte, int, error) {
	if len(steps) == 1 {
		out, err := runGit(ctx, dir, s, steps[0]...)
		return [][]byte{out}, 0, err
	}
	if err := checkGitFiles(dir); err != nil {
		return nil, 0, err
	}
	var script strings.Builder
	for i, step := range steps {
		if i > 0 {
			script.WriteString("printf '\\0'\n")
		}
		if i == len(steps)-1 {
			script.WriteString("exec ")
		}
		script.WriteString("git")
		for _, a := range append(append([]string{}, gitOptions...), step...) {
			script.WriteString(" " + shellQuote(a))
		}
		if i < len(steps)-1 {
			script.WriteString(" || exit $?")
		}
		script.WriteString("\n")
	}
	var out bytes.Buffer
	err := inWorkspace(dir).start(ctx, s, nil, nil, &out, steps[0], "sh", "-c", script.String())
	outs := bytes.Split(out.Bytes(), []byte{0})
	if err == nil {
		return outs, 0, nil
	}
	failed := min(len(outs), len(steps)) - 1
	if ge, ok := err.(*gitError); ok {
		ge.args = steps[failed]
	}
	return outs, failed, err
}

// shellQuote is s as one word for sh: quoted whole, a quote in it closed,
// escaped and opened again.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// gitRun is where one git command runs, what it is confined to, and how
// long it may take at most.
type gitRun struct {
	dir     string
	policy  sandbox.Policy
	timeout time.Duration
}

// inWorkspace is how git runs on the workspace dir: confined to writing
// it, with no network, for at most gitTimeout.
func inWorkspace(dir string) gitRun {
	return gitRun{dir: dir, timeout: gitTimeout, policy: sandbox.Policy{Write: []string{dir}, Net: sandbox.NetNone}}
}

// stream runs git with args, as start says.
func (r gitRun) stream(ctx context.Context, s signature, stdin io.Reader, env []string, stdout io.Writer, args ...string) error {
	return r.start(ctx, s, stdin, env, stdout, args, "git", append(append([]string{}, gitOptions...), args...)...)
}

// start is the one place git runs, by itself or sequenced by
// runGitSteps's shell: in r.dir with gitEnv, writing its stdout to
// stdout, stopped when ctx ends or r.timeout has passed. It runs confined
// to r.policy whenever the machine can confine (see sandbox.StartHost):
// the repository's own configuration may have been written by the
// engineer's code, and may name programs git runs. A failure is a
// *gitError naming gitArgs.
func (r gitRun) start(ctx context.Context, s signature, stdin io.Reader, env []string, stdout io.Writer, gitArgs []string, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = r.dir
	cmd.Env = append(gitEnv(s), env...)
	cmd.Stdin = stdin
	cmd.Stdout = stdout
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{max: 16 << 10, buf: &stderr}
	cmd.WaitDelay = 5 * time.Second
	err := sandbox.StartHost(cmd, r.policy)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return &gitError{args: gitArgs, code: code, stderr: stderr.String(), err: err}
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
func (w *Workspace) Head(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("workspace: head: %w", err)
	}
	if hash, ok := headFromFiles(w.files); ok {
		return hash, nil
	}
	out, err := runGit(ctx, w.dir, hostSign(w.now()), "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", fmt.Errorf("workspace: head: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// commitOf resolves a revision the caller named into its commit hash.
func (w *Workspace) commitOf(ctx context.Context, field, rev string) (string, *refusal.Problem, error) {
	switch {
	case strings.TrimSpace(rev) == "":
		return "", &refusal.Problem{Field: field, Message: "give a revision"}, nil
	case len(rev) > 256 || strings.HasPrefix(rev, "-") || strings.IndexFunc(rev, unicode.IsSpace) >= 0 ||
		strings.IndexFunc(rev, unicode.IsControl) >= 0:
		return "", &refusal.Problem{Field: field, Message: fmt.Sprintf("%q is not a revision", rev)}, nil
	}
	// A full hash of a commit the repository holds loose (the host's own
	// commits) needs no git to resolve.
	if looseCommit(w.files, rev) {
		return rev, nil, nil
	}
	out, err := runGit(ctx, w.dir, hostSign(w.now()), "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if exitCode(err) == 1 {
		return "", &refusal.Problem{Field: field, Message: fmt.Sprintf("%q is not a commit in this workspace", rev)}, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("workspace: %w", err)
	}
	return strings.TrimSpace(string(out)), nil, nil
}

// commitPair resolves the two ends of a comparison.
func (w *Workspace) commitPair(ctx context.Context, from, to string) (string, string, error) {
	var ps refusal.Problems
	a, prob, err := w.commitOf(ctx, "from", from)
	if err != nil {
		return "", "", err
	}
	if prob != nil {
		ps = append(ps, *prob)
	}
	b, prob, err := w.commitOf(ctx, "to", to)
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
func (w *Workspace) ShortStat(ctx context.Context, from, to string) (Stat, error) {
	a, b, err := w.commitPair(ctx, from, to)
	if err != nil {
		return Stat{}, err
	}
	if c, ok := counts.Load(w.dir); ok && c.(countedChange).from == a && c.(countedChange).to == b {
		return c.(countedChange).stat, nil
	}
	out, err := runGit(ctx, w.dir, hostSign(w.now()), shortStatArgs(a, b)...)
	if err != nil {
		return Stat{}, fmt.Errorf("workspace: shortstat: %w", err)
	}
	return parseShortStat(string(out))
}

// shortStatArgs are git's arguments to count the change from one revision
// to another: files, and lines in and out, renames found.
func shortStatArgs(from, to string) []string {
	return []string{"diff", "--shortstat", "-M", "--no-ext-diff", "--no-textconv", from, to, "--"}
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
func (w *Workspace) Diff(ctx context.Context, from, to string) (string, error) {
	a, b, err := w.commitPair(ctx, from, to)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	out := &limitedBuffer{max: MaxDiffBytes, buf: &buf}
	err = streamGit(ctx, w.dir, hostSign(w.now()), nil, nil, out, "diff", "-M", "--no-color", "--no-ext-diff", "--no-textconv", a, b, "--")
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
func InitRepository(ctx context.Context, dir string, message string, now func() time.Time) (string, error) {
	if strings.TrimSpace(message) == "" {
		return "", refusal.Problems{{Field: "message", Message: "give the first commit a message"}}
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
	if _, err := runGit(ctx, dir, sign, "init", "-q"); err != nil {
		return "", fmt.Errorf("workspace: init %s: %w", dir, err)
	}
	rev, err := firstCommit(ctx, dir, sign, message)
	if err != nil {
		// The repository is ours and unfinished; leave the folder as it was.
		os.RemoveAll(gitDir)
		return "", fmt.Errorf("workspace: init %s: %w", dir, err)
	}
	return rev, nil
}

func firstCommit(ctx context.Context, dir string, sign signature, message string) (string, error) {
	if _, err := runGit(ctx, dir, sign, "add", "-A"); err != nil {
		return "", err
	}
	if _, err := runGit(ctx, dir, sign, "commit", "-q", "--allow-empty", "--no-verify", "-m", message); err != nil {
		return "", err
	}
	out, err := runGit(ctx, dir, sign, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// RunDiff is what one run (one attempt) changed: the patches of the
// commits whose message names its run id, oldest first, capped like Diff.
// "" when the run committed nothing.
func (w *Workspace) RunDiff(ctx context.Context, runID string) (string, error) {
	if runID == "" || strings.ContainsAny(runID, "\n\r") {
		return "", refusal.Problems{{Field: "runID", Message: "name the run"}}
	}
	var buf bytes.Buffer
	out := &limitedBuffer{max: MaxDiffBytes, buf: &buf}
	// The id is matched as a fixed string inside "(run <id>," or "(run <id>)".
	err := streamGit(ctx, w.dir, hostSign(w.now()), nil, nil, out, "log", "--reverse", "-p", "-M", "--no-color", "--no-ext-diff",
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
