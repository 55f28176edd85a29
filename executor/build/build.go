// Package build runs an application's build stages in its workspace and
// reports what the host saw: which stages ran and which never did, the
// problems their output names, and on success the release the build makes.
// It never asks the model; it only looks at exit codes and output.
package build

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"autoapp/executor/build/gocache"
	"autoapp/intent/app"
	"autoapp/intent/workspace/sandbox"
)

// Starter starts a process of an application's, confined as the owner
// chose; *sandbox.Guard is the one the server uses.
type Starter interface {
	Start(cmd *exec.Cmd, p sandbox.Policy) (*sandbox.Process, error)
}

// Limits of a build.
const (
	// MaxOutput is how much of a stage's output is kept. The tail is kept,
	// since the end of a log says why a stage stopped.
	MaxOutput = 64 << 10
	// LastLines is how many trailing lines stand for a failure that names
	// no file.
	LastLines = 20
	// maxProblems bounds the problems read from one stage's output.
	maxProblems = 50
	// drainWait bounds the wait for output once a stage's process group is
	// gone, in case a process escaped the group and still holds the pipe.
	drainWait = 2 * time.Second
)

// Problem is one thing a failed stage reported, with its place in the
// source when the output named one.
type Problem struct {
	Stage   string `json:"stage"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	Message string `json:"message"`
}

// String writes the problem the way compilers do: file:line:col: message.
func (p Problem) String() string {
	switch {
	case p.File == "":
		return p.Message
	case p.Col > 0:
		return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Message)
	default:
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
	}
}

// StageResult is what one stage that ran did.
type StageResult struct {
	Name string `json:"name"`
	// Output is stdout and stderr interleaved; when it was longer than
	// MaxOutput only its tail is kept, after a line saying so.
	Output   string        `json:"output"`
	Cut      bool          `json:"cut,omitempty"`
	Duration time.Duration `json:"duration"`
	// ExitCode is -1 when the stage did not start or was killed.
	ExitCode int  `json:"exitCode"`
	TimedOut bool `json:"timedOut,omitempty"`
}

// Release is a successful build recorded with its revision.
type Release struct {
	ID       string    `json:"id"`
	Revision string    `json:"revision"`
	BuiltAt  time.Time `json:"builtAt"`
}

// Result is the whole build as the host observed it.
type Result struct {
	OK bool `json:"ok"`
	// StagesRun are the stages that ran, the failing one included.
	StagesRun []string `json:"stagesRun"`
	// NotRun are the stages a build that stopped early never reached.
	NotRun   []string      `json:"notRun,omitempty"`
	Problems []Problem     `json:"problems,omitempty"`
	Stages   []StageResult `json:"stages"`
	// Release is set only when every stage passed.
	Release *Release `json:"release,omitempty"`
}

// Summary says in a sentence how the build ended.
func (r Result) Summary() string {
	if r.OK {
		if r.Release == nil {
			return "The build passed."
		}
		return fmt.Sprintf("The build passed as release %s.", r.Release.ID)
	}
	var b strings.Builder
	switch n := len(r.StagesRun); {
	case n == 0:
		b.WriteString("The build stopped before its first stage.")
	case len(r.Problems) == 1:
		fmt.Fprintf(&b, "The build failed at stage %s with 1 problem.", r.StagesRun[n-1])
	default:
		fmt.Fprintf(&b, "The build failed at stage %s with %d problems.", r.StagesRun[n-1], len(r.Problems))
	}
	if len(r.NotRun) > 0 {
		fmt.Fprintf(&b, " Never ran: %s.", strings.Join(r.NotRun, ", "))
	}
	return b.String()
}

// Run runs the stages in order in dir, each under its own timeout, in
// the minimal environment Environ gives and started by jail (confined to
// the application's folder, see sandbox.ForApp), and stops at the first
// that fails. revision names the commit being built; now stamps the
// release.
func Run(ctx context.Context, jail Starter, dir string, stages []app.Stage, revision string, now func() time.Time) Result {
	return Runner{Jail: jail, Now: now}.Run(ctx, dir, stages, revision, nil)
}

// Runner runs an application's builds.
type Runner struct {
	// Jail starts each stage.
	Jail Starter
	// GoCache, when set, serves every build that runs go the standard
	// library the host compiled once, read-only (see gocache); without it
	// each application's first build compiles its own.
	GoCache *gocache.Shared
	// Now stamps the stages and the release.
	Now func() time.Time
	// Warming, when set, hears that the build waits for the host to
	// compile the shared standard library, which the first Go build of a
	// process does (a minute or two the first time on a machine).
	Warming func()
}

// Run is the package's Run with the runner's go cache, and tells began
// each stage's name as it starts, for a page that shows which stage runs;
// began may be nil.
func (b Runner) Run(ctx context.Context, dir string, stages []app.Stage, revision string, began func(stage string)) Result {
	jail, now := b.Jail, b.Now
	r := Result{OK: true, StagesRun: []string{}, Stages: []StageResult{}}
	fail := func(from int, ps ...Problem) Result {
		r.OK = false
		r.Problems = ps
		for _, s := range stages[from:] {
			r.NotRun = append(r.NotRun, s.Name)
		}
		return r
	}
	env, cleanup, err := Environ(dir)
	if err != nil {
		return fail(0, Problem{Message: "The build could not prepare its environment: " + err.Error()})
	}
	defer cleanup()
	policy := sandbox.ForApp(dir)
	note := ""
	if b.GoCache != nil && runsGo(stages) {
		if b.Warming != nil && b.GoCache.Waits() {
			b.Warming()
		}
		var extra []string
		extra, note = b.sharedGo(ctx, dir, env, &policy)
		env = append(env, extra...)
	}

	for i, s := range stages {
		if ctx.Err() != nil {
			return fail(i, Problem{Stage: s.Name, Message: fmt.Sprintf("The build was stopped before stage %s began.", s.Name)})
		}
		if began != nil {
			began(s.Name)
		}
		p := policy
		if s.Network {
			p.Net = sandbox.NetOpen
		}
		sr, problems := runStage(ctx, jail, p, dir, env, s, now)
		if note != "" && runsGo(stages[i:i+1]) {
			// Said once, in the first stage that ran go.
			sr.Output, note = note+"\n"+sr.Output, ""
		}
		r.StagesRun = append(r.StagesRun, s.Name)
		r.Stages = append(r.Stages, sr)
		if len(problems) > 0 {
			return fail(i+1, problems...)
		}
	}
	built := now()
	r.Release = &Release{ID: releaseID(built, revision), Revision: revision, BuiltAt: built}
	return r
}

// runStage runs one stage and returns the problems that fail it, none
// when it passed.
func runStage(ctx context.Context, jail Starter, policy sandbox.Policy, dir string, env []string, s app.Stage, now func() time.Time) (StageResult, []Problem) {
	timeout := s.Timeout.Duration
	if timeout <= 0 {
		timeout = app.MaxStageTimeout
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	sr := StageResult{Name: s.Name, ExitCode: -1}
	out := NewTail(MaxOutput)
	start := now()
	err := runGroup(sctx, jail, policy, dir, env, s.Command, out)
	sr.Duration = now().Sub(start)
	sr.Output, sr.Cut = out.Text(), out.Dropped() > 0

	one := func(format string, args ...any) []Problem {
		return []Problem{{Stage: s.Name, Message: fmt.Sprintf(format, args...)}}
	}
	var startErr *startError
	var exitErr *exec.ExitError
	var limitErr *sandbox.LimitError
	switch {
	case errors.As(err, &limitErr):
		return sr, one("%s", limitErr.Sentence("the build stage "+s.Name))
	case errors.As(err, &startErr):
		return sr, one("stage %s could not start: %v", s.Name, startErr.err)
	case err == nil:
		sr.ExitCode = 0
		return sr, nil
	case ctx.Err() != nil:
		return sr, one("The build was stopped during stage %s.", s.Name)
	case errors.Is(sctx.Err(), context.DeadlineExceeded):
		sr.TimedOut = true
		return sr, one("stage %s took longer than %s and was stopped", s.Name, timeout)
	case errors.As(err, &exitErr):
		sr.ExitCode = exitErr.ExitCode()
	default:
		return sr, one("stage %s failed: %v", s.Name, err)
	}

	if ps := parseProblems(s.Name, dir, out.String()); len(ps) > 0 {
		return sr, ps
	}
	if last := LastOutput(out.String(), LastLines); last != "" {
		return sr, one("%s", last)
	}
	if sr.ExitCode >= 0 {
		return sr, one("stage %s exited with status %d and printed nothing", s.Name, sr.ExitCode)
	}
	return sr, one("stage %s was ended by %v and printed nothing", s.Name, err)
}

// lookPath finds program as the stage's own PATH (in env) finds it, and
// says in a sentence where it looked when it is not there.
func lookPath(program string, env []string) (string, error) {
	if strings.Contains(program, "/") {
		return program, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	dirs := filepath.SplitList(path)
	for _, d := range dirs {
		if d == "" {
			continue
		}
		p := filepath.Join(d, program)
		if info, err := os.Stat(p); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s was not found in any folder of its PATH (%s): install it, or put the folder that holds it on the launcher's PATH", program, strings.Join(dirs, ", "))
}

// startError is a stage whose command could not be started at all.
type startError struct{ err error }

func (e *startError) Error() string { return e.err.Error() }

// runGroup runs argv in its own process group with stdout and stderr both
// written to out. When ctx ends the whole group is killed, and once the
// command exits whatever it left behind in its group is killed too, so a
// stage never outlives itself.
func runGroup(ctx context.Context, jail Starter, policy sandbox.Policy, dir string, env, argv []string, out io.Writer) error {
	if len(argv) == 0 || argv[0] == "" {
		return &startError{errors.New("the stage has no command")}
	}
	program, err := lookPath(argv[0], env)
	if err != nil {
		return &startError{err}
	}
	cmd := exec.Command(program, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// One pipe for both streams keeps their lines in the order written; as
	// an *os.File it lets Wait return when the command exits, not when the
	// last holder of the pipe does.
	r, w, err := os.Pipe()
	if err != nil {
		return &startError{err}
	}
	cmd.Stdout, cmd.Stderr = w, w
	proc, err := jail.Start(cmd, policy)
	if err != nil {
		r.Close()
		w.Close()
		return &startError{err}
	}
	w.Close()

	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, r)
	}()
	waited := make(chan error, 1)
	go func() { waited <- proc.Wait() }()

	select {
	case err = <-waited:
	case <-ctx.Done():
		proc.Stop()
		err = <-waited
	}
	proc.Stop()

	drain := time.NewTimer(drainWait)
	defer drain.Stop()
	select {
	case <-copied:
	case <-drain.C:
		r.Close() // a process outside the group holds the pipe; stop reading
		<-copied
	}
	r.Close()
	return err
}

var revisionChars = regexp.MustCompile(`[^0-9A-Za-z]`)

// releaseID names a release by when it was built and the revision's first
// seven characters: r20261130-071502-1a2b3c4.
func releaseID(at time.Time, revision string) string {
	id := "r" + at.UTC().Format("20060102-150405")
	rev := revisionChars.ReplaceAllString(revision, "")
	if len(rev) > 7 {
		rev = rev[:7]
	}
	if rev != "" {
		id += "-" + rev
	}
	return id
}

// runsGo says a stage's command is go.
func runsGo(stages []app.Stage) bool {
	for _, s := range stages {
		if len(s.Command) > 0 && filepath.Base(s.Command[0]) == "go" {
			return true
		}
	}
	return false
}

// sharedGo readies the shared standard library for a build of dir that
// runs go with env, waiting for the host to warm it the first time, and
// lets policy run the cache program and read the shared folder. It
// answers what to add to env, and a line for the build's output when the
// shared library could not be had and the build compiles its own.
func (b Runner) sharedGo(ctx context.Context, dir string, env []string, policy *sandbox.Policy) (extra []string, note string) {
	goBin, err := lookPath("go", env)
	if err != nil {
		// The stage says so itself.
		return nil, ""
	}
	if err := b.GoCache.Warm(ctx, goBin, hostEnviron); err != nil {
		if ctx.Err() != nil {
			return nil, ""
		}
		return nil, fmt.Sprintf("The standard library every build shares could not be prepared (%v), so this build compiles its own.", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, ""
	}
	setup := b.GoCache.Build(filepath.Join(sandbox.LayoutOf(abs).Cache, "go-objects"))
	policy.Read = append(policy.Read, setup.Read...)
	policy.Programs = append(policy.Programs, setup.Programs...)
	return setup.Env, ""
}
