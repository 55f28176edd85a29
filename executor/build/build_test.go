package build_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"autoapp/executor/build"
	"autoapp/intent/app"
	"autoapp/intent/timetest"
	"autoapp/intent/workspace/sandbox"
)

// clock is a fixed time, so release ids can be asserted.
func clock() time.Time { return time.Date(2026, 11, 30, 7, 15, 2, 0, time.UTC) }

func stage(name string, timeout time.Duration, command ...string) app.Stage {
	return app.Stage{Name: name, Command: command, Timeout: app.Duration{Duration: timeout}}
}

// jail confines every stage as the server does, on this machine's kernel.
func jail(t *testing.T) build.Starter {
	return sandbox.NewGuard(t.TempDir(), sandbox.Probe())
}

func sh(name, script string) app.Stage {
	return stage(name, time.Minute, "sh", "-c", script)
}

func TestRunStagesInOrderAndStopsAtFirstFailure(t *testing.T) {
	dir := t.TempDir()
	res := build.Run(context.Background(), jail(t), dir, []app.Stage{
		sh("fetch", "echo fetch >> order.txt"),
		sh("compile", "echo compile >> order.txt; echo 'it broke' >&2; exit 3"),
		sh("test", "echo test >> order.txt"),
		sh("lint", "echo lint >> order.txt"),
	}, "1a2b3c4d5e6f", clock)

	if res.OK {
		t.Fatal("OK = true, want false")
	}
	if want := []string{"fetch", "compile"}; !slices.Equal(res.StagesRun, want) {
		t.Errorf("StagesRun = %q, want %q", res.StagesRun, want)
	}
	if want := []string{"test", "lint"}; !slices.Equal(res.NotRun, want) {
		t.Errorf("NotRun = %q, want %q", res.NotRun, want)
	}
	if res.Release != nil {
		t.Errorf("Release = %+v, want none for a failed build", res.Release)
	}
	order, err := os.ReadFile(filepath.Join(dir, "order.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(order); got != "fetch\ncompile\n" {
		t.Errorf("stages ran as %q, want fetch then compile", got)
	}
	if len(res.Stages) != 2 || res.Stages[1].ExitCode != 3 {
		t.Errorf("Stages = %+v, want two with the second exiting 3", res.Stages)
	}
	if len(res.Problems) != 1 || res.Problems[0].Stage != "compile" || res.Problems[0].Message != "it broke" {
		t.Errorf("Problems = %+v, want the compile stage's last line", res.Problems)
	}
	if got := res.Summary(); !strings.Contains(got, "compile") || !strings.Contains(got, "test, lint") {
		t.Errorf("Summary() = %q, want the failing stage and the stages never run", got)
	}
}

func TestRunSuccessMakesARelease(t *testing.T) {
	res := build.Run(context.Background(), jail(t), t.TempDir(), []app.Stage{
		sh("one", "echo hello"),
		sh("two", "true"),
	}, "1a2b3c4d5e6f7a8b", clock)

	if !res.OK || len(res.Problems) > 0 || len(res.NotRun) > 0 {
		t.Fatalf("Run = %+v, want a clean pass", res)
	}
	if res.Release == nil {
		t.Fatal("Release = nil, want one")
	}
	want := build.Release{ID: "r20261130-071502-1a2b3c4", Revision: "1a2b3c4d5e6f7a8b", BuiltAt: clock()}
	if *res.Release != want {
		t.Errorf("Release = %+v, want %+v", *res.Release, want)
	}
	if got := res.Stages[0].Output; got != "hello\n" {
		t.Errorf("output = %q, want %q", got, "hello\n")
	}
}

func TestRunParsesProblems(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   []build.Problem
	}{
		{
			name:   "gcc with column, URL skipped",
			script: `printf 'see http://example.com:80/help: for more\nsrc/app.c:12:5: error: expected ;\n'; exit 1`,
			want:   []build.Problem{{Stage: "check", File: "src/app.c", Line: 12, Col: 5, Message: "error: expected ;"}},
		},
		{
			name:   "line without column",
			script: `echo 'lib/tool.py:7: bad indent'; exit 1`,
			want:   []build.Problem{{Stage: "check", File: "lib/tool.py", Line: 7, Message: "bad indent"}},
		},
		{
			name:   "host and port are not files",
			script: `echo 'localhost:8080: connection refused'; echo '127.0.0.1:80: refused'; exit 1`,
			want:   []build.Problem{{Stage: "check", Message: "localhost:8080: connection refused\n127.0.0.1:80: refused"}},
		},
		{
			name:   "Makefile and duplicates",
			script: `echo 'Makefile:3: *** missing separator.  Stop.'; echo 'Makefile:3: *** missing separator.  Stop.'; exit 2`,
			want:   []build.Problem{{Stage: "check", File: "Makefile", Line: 3, Message: "*** missing separator.  Stop."}},
		},
		{
			name:   "absolute path inside the workspace",
			script: `echo "$PWD/pkg/a.go:4:1: oops"; exit 1`,
			want:   []build.Problem{{Stage: "check", File: "pkg/a.go", Line: 4, Col: 1, Message: "oops"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := build.Run(context.Background(), jail(t), t.TempDir(), []app.Stage{sh("check", tt.script)}, "abc", clock)
			if res.OK {
				t.Fatal("OK = true, want false")
			}
			if !slices.Equal(res.Problems, tt.want) {
				t.Errorf("Problems = %+v\nwant       %+v", res.Problems, tt.want)
			}
		})
	}
}

// TestRunParsesGoBuildErrors fails a real go build of a tiny module.
func TestRunParsesGoBuildErrors(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("no go command on PATH")
	}
	dir := t.TempDir()
	write(t, dir, "go.mod", "module tiny\n\ngo 1.22\n")
	write(t, dir, "main.go", "package main\n\nfunc main() {\n\tundefinedThing()\n}\n")

	res := build.Run(context.Background(), jail(t), dir, []app.Stage{
		stage("compile", 2*time.Minute, "go", "build", "./..."),
		stage("vet", time.Minute, "go", "vet", "./..."),
	}, "abc", clock)

	if res.OK {
		t.Fatalf("OK = true, want false; output:\n%s", res.Stages[0].Output)
	}
	if !slices.Equal(res.NotRun, []string{"vet"}) {
		t.Errorf("NotRun = %q, want [vet]", res.NotRun)
	}
	if len(res.Problems) != 1 {
		t.Fatalf("Problems = %+v, want one; output:\n%s", res.Problems, res.Stages[0].Output)
	}
	p := res.Problems[0]
	if p.Stage != "compile" || p.File != "main.go" || p.Line != 4 || p.Col != 2 || p.Message != "undefined: undefinedThing" {
		t.Errorf("Problem = %+v, want compile main.go:4:2 undefined: undefinedThing", p)
	}
}

func TestRunFailureWithoutLocationsKeepsLastLines(t *testing.T) {
	res := build.Run(context.Background(), jail(t), t.TempDir(), []app.Stage{
		sh("test", "for i in $(seq 1 30); do echo line $i; done; exit 1"),
	}, "abc", clock)

	if len(res.Problems) != 1 {
		t.Fatalf("Problems = %+v, want one", res.Problems)
	}
	msg := res.Problems[0].Message
	lines := strings.Split(msg, "\n")
	if len(lines) != build.LastLines || lines[0] != "line 11" || lines[len(lines)-1] != "line 30" {
		t.Errorf("message = %q, want lines 11 to 30", msg)
	}
}

func TestRunFailureWithoutOutput(t *testing.T) {
	res := build.Run(context.Background(), jail(t), t.TempDir(), []app.Stage{sh("test", "exit 4")}, "abc", clock)
	want := "stage test exited with status 4 and printed nothing"
	if len(res.Problems) != 1 || res.Problems[0].Message != want {
		t.Errorf("Problems = %+v, want %q", res.Problems, want)
	}
}

func TestRunCommandThatCannotStart(t *testing.T) {
	res := build.Run(context.Background(), jail(t), t.TempDir(), []app.Stage{
		stage("compile", time.Minute, "no-such-program-autoapp"),
		sh("test", "true"),
	}, "abc", clock)
	if res.OK || !slices.Equal(res.StagesRun, []string{"compile"}) || !slices.Equal(res.NotRun, []string{"test"}) {
		t.Fatalf("Run = %+v, want compile run and failed, test not run", res)
	}
	// One sentence naming the program and where it was looked for.
	want := regexp.MustCompile(`^stage compile could not start: no-such-program-autoapp was not found in any folder of its PATH \(.*/usr/bin.*\): install it, or put the folder that holds it on the launcher's PATH$`)
	if msg := res.Problems[0].Message; !want.MatchString(msg) {
		t.Errorf("message = %q, want it to name the program and the folders looked in", msg)
	}
}

func TestRunTimeoutKillsTheProcessGroup(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	res := build.Run(context.Background(), jail(t), dir, []app.Stage{
		stage("test", 300*time.Millisecond, "sh", "-c", "sleep 30.5151 & echo waiting; wait"),
		sh("package", "true"),
	}, "abc", clock)
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("Run took %s, want the stage stopped after 300ms", took)
	}

	if res.OK || !slices.Equal(res.NotRun, []string{"package"}) {
		t.Fatalf("Run = %+v, want a failure with package not run", res)
	}
	want := "stage test took longer than 300ms and was stopped"
	if len(res.Problems) != 1 || res.Problems[0].Message != want {
		t.Errorf("Problems = %+v, want %q", res.Problems, want)
	}
	if !res.Stages[0].TimedOut || res.Stages[0].Output != "waiting\n" {
		t.Errorf("stage = %+v, want timed out with its output kept", res.Stages[0])
	}

	// Its pid is its namespace's: find it by what it runs.
	timetest.WaitFor(t, 5*time.Second, "the grandchild sleep to be killed", func() bool {
		out, _ := exec.Command("pgrep", "-f", "^sleep 30.5151").Output()
		return strings.TrimSpace(string(out)) == ""
	})
}

func TestRunStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := build.Run(ctx, jail(t), t.TempDir(), []app.Stage{sh("one", "true"), sh("two", "true")}, "abc", clock)
	if res.OK || len(res.StagesRun) != 0 || !slices.Equal(res.NotRun, []string{"one", "two"}) {
		t.Errorf("Run = %+v, want nothing run", res)
	}
}

func TestRunEnvironmentHoldsNoHostSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "secret-value-123")
	t.Setenv("AUTOAPP_SESSION_KEY", "another-secret")
	dir := filepath.Join(t.TempDir(), "workspace")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	res := build.Run(context.Background(), jail(t), dir, []app.Stage{stage("env", time.Minute, "env")}, "abc", clock)
	if !res.OK {
		t.Fatalf("Run = %+v, want a pass", res)
	}
	out := res.Stages[0].Output
	for _, leak := range []string{"OPENAI_API_KEY", "secret-value-123", "AUTOAPP_SESSION_KEY", "another-secret"} {
		if strings.Contains(out, leak) {
			t.Errorf("the stage saw %q; environment:\n%s", leak, out)
		}
	}
	vars := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		name, value, _ := strings.Cut(line, "=")
		vars[name] = value
	}
	allowed := map[string]bool{"PATH": true, "HOME": true, "TMPDIR": true, "LANG": true, "PWD": true,
		"XDG_CACHE_HOME": true, "GOCACHE": true, "GOPATH": true, "GOMODCACHE": true, "GOTOOLCHAIN": true, "npm_config_cache": true,
		"GOFLAGS": true, "CGO_ENABLED": true, "GOPROXY": true, "GOSUMDB": true, "GONOSUMDB": true, "GOPRIVATE": true, "GONOPROXY": true}
	for name := range vars {
		if !allowed[name] {
			t.Errorf("the stage saw %s, which is not in the minimal environment", name)
		}
	}
	if vars["LANG"] != "C.UTF-8" {
		t.Errorf("LANG = %q, want C.UTF-8", vars["LANG"])
	}
	if want := filepath.Join(filepath.Dir(dir), ".home"); vars["HOME"] != want {
		t.Errorf("HOME = %q, want %q beside the workspace", vars["HOME"], want)
	}
	if app := filepath.Dir(dir); !strings.HasPrefix(vars["TMPDIR"], filepath.Join(app, "tmp")+"/") {
		t.Errorf("TMPDIR = %q, want a folder of the build's own in %s/tmp", vars["TMPDIR"], app)
	}
	// The caches are the application's own, never the host's.
	cache := filepath.Join(filepath.Dir(dir), "cache")
	for name, want := range map[string]string{"GOCACHE": filepath.Join(cache, "go-build"), "GOPATH": filepath.Join(cache, "go"),
		"GOMODCACHE": filepath.Join(cache, "go", "pkg", "mod"), "XDG_CACHE_HOME": cache, "npm_config_cache": filepath.Join(cache, "npm")} {
		if vars[name] != want {
			t.Errorf("%s = %q, want %q", name, vars[name], want)
		}
	}
	if _, err := os.Stat(vars["TMPDIR"]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("TMPDIR %s is still there after the build (err %v)", vars["TMPDIR"], err)
	}
}

func TestRunCapsOutputKeepingTheTail(t *testing.T) {
	res := build.Run(context.Background(), jail(t), t.TempDir(), []app.Stage{
		sh("noisy", "yes 0123456789 | head -c 300000; echo THE-END"),
	}, "abc", clock)
	st := res.Stages[0]
	if !res.OK || !st.Cut {
		t.Fatalf("OK = %v, Cut = %v; want a pass with the output cut", res.OK, st.Cut)
	}
	if len(st.Output) > build.MaxOutput+100 {
		t.Errorf("len(Output) = %d, want at most about %d", len(st.Output), build.MaxOutput)
	}
	if !strings.HasPrefix(st.Output, "[output cut: the first ") || !strings.HasSuffix(st.Output, "THE-END\n") {
		t.Errorf("Output starts %q and ends %q; want the cut said and the tail kept",
			st.Output[:40], st.Output[len(st.Output)-20:])
	}
}

func TestTailKeepsTheLastBytes(t *testing.T) {
	tail := build.NewTail(10)
	for i := range 100 {
		if _, err := tail.Write([]byte(strconv.Itoa(i % 10))); err != nil {
			t.Fatal(err)
		}
	}
	if got := tail.String(); got != "0123456789" {
		t.Errorf("String() = %q, want the last ten bytes", got)
	}
	if got := tail.Dropped(); got != 90 {
		t.Errorf("Dropped() = %d, want 90", got)
	}
}

func TestSignature(t *testing.T) {
	same := []struct{ name, a, b string }{
		{"other line and column", "main.go:12:5: undefined: foo", "main.go:40:2: undefined: foo"},
		{"other path", "./cmd/a/main.go:3:1: undefined: foo", "/work/apps/7/internal/b.go:90:14: undefined: foo"},
		{"quoted names", `"x" declared and not used`, `"total" declared and not used`},
		{"backquoted and single-quoted", "cannot find `Widget` in 'app'", "cannot find `Gadget` in 'lib'"},
		{"hashes and numbers", "object 1a2b3c4d5e missing after 3 tries", "object 9f8e7d6c5b missing after 12 tries"},
		{"timeouts", "stage test took longer than 2m0s and was stopped", "stage test took longer than 5m0s and was stopped"},
	}
	for _, tt := range same {
		t.Run("same/"+tt.name, func(t *testing.T) {
			if a, b := build.Signature("compile", tt.a), build.Signature("compile", tt.b); a != b {
				t.Errorf("Signature(%q) = %s, Signature(%q) = %s; want equal", tt.a, a, tt.b, b)
			}
		})
	}

	differ := []struct{ name, stageA, a, stageB, b string }{
		{"other message", "compile", "main.go:12:5: undefined: foo", "compile", "main.go:12:5: missing return"},
		{"other identifier", "compile", "main.go:1:1: undefined: foo", "compile", "main.go:1:1: undefined: bar"},
		{"other stage", "compile", "undefined: foo", "vet", "undefined: foo"},
	}
	for _, tt := range differ {
		t.Run("differ/"+tt.name, func(t *testing.T) {
			if a, b := build.Signature(tt.stageA, tt.a), build.Signature(tt.stageB, tt.b); a == b {
				t.Errorf("Signature(%s, %q) = Signature(%s, %q) = %s; want different", tt.stageA, tt.a, tt.stageB, tt.b, a)
			}
		})
	}

	if sig := build.Signature("compile", "x"); !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(sig) {
		t.Errorf("Signature = %q, want 16 hex digits", sig)
	}
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAStageThatPassesALimitIsStoppedWithASentence starts 500 processes in
// a stage: the sandbox stops the stage, and the build's problem says which
// limit ended it.
func TestAStageThatPassesALimitIsStoppedWithASentence(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "workspace")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	res := build.Run(context.Background(), jail(t), dir, []app.Stage{
		sh("test", "for i in $(seq 500); do sleep 30 & done; wait"),
	}, "abc", time.Now)
	want := "The build stage test started more than 256 processes and was stopped."
	if res.OK || len(res.Problems) != 1 || res.Problems[0].Message != want {
		t.Fatalf("Run = %+v, want the problem %q", res.Problems, want)
	}
}

// TestAStageHasTheNetworkOnlyWhenItAsks connects to a listener of the
// host's from a stage that does not ask for the network (refused) and from
// one that does (reached).
func TestAStageHasTheNetworkOnlyWhenItAsks(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	dir := filepath.Join(t.TempDir(), "workspace")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	connect := sh("fetch", "exec 3<>/dev/tcp/127.0.0.1/"+port)
	connect.Command = []string{"bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/" + port}
	if res := build.Run(context.Background(), jail(t), dir, []app.Stage{connect}, "abc", time.Now); res.OK {
		t.Errorf("a stage without the network reached the host's listener")
	}
	connect.Network = true
	if res := build.Run(context.Background(), jail(t), dir, []app.Stage{connect}, "abc", time.Now); !res.OK {
		t.Errorf("a stage that asks for the network: %+v", res.Problems)
	}
}
