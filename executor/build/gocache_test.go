package build_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"autoapp/executor/build"
	"autoapp/executor/build/gocache"
	"autoapp/intent/app"
	"autoapp/intent/workspace/sandbox"
)

// sharedGo is the standard library every build of this machine's user
// shares, the one the launcher uses: warming it the first time takes a
// minute or two, later runs find it warm.
func sharedGo(tb testing.TB) *gocache.Shared {
	tb.Helper()
	if !sandbox.Probe().Confines() {
		tb.Fatalf("this machine cannot confine: %s", sandbox.Probe().Why)
	}
	dir, err := gocache.DefaultDir()
	if err != nil {
		tb.Fatal(err)
	}
	c, err := gocache.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// goService is a new application made from the Go service template, as
// CreateFromTemplate writes it: its workspace, and the template's build
// stages.
func goService(tb testing.TB) (ws string, stages []app.Stage) {
	tb.Helper()
	ws = filepath.Join(tb.TempDir(), "app", "workspace")
	if err := app.WriteTemplate("goservice", ws); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(ws, app.ManifestFile))
	if err != nil {
		tb.Fatal(err)
	}
	m, problems := app.ParseManifest(b)
	if len(problems) > 0 {
		tb.Fatalf("the template's manifest: %v", problems)
	}
	return ws, m.Build
}

// workspaceIn is a new empty workspace of an application folder called app.
func workspaceIn(tb testing.TB, app string) string {
	tb.Helper()
	ws := filepath.Join(tb.TempDir(), app, "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		tb.Fatal(err)
	}
	return ws
}

// entries counts the cache entries (action records) under dir.
func entries(tb testing.TB, dir string) int {
	tb.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, "-a") {
			n++
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		tb.Fatal(err)
	}
	return n
}

// snapshot is every file under dir with its size and time, to tell that
// nothing there changed.
func snapshot(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%s %s %d", info.ModTime(), info.Mode(), info.Size())
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// warm has a build that runs go warm the shared standard library.
func warm(tb testing.TB, g build.Starter, shared *gocache.Shared) {
	tb.Helper()
	r := build.Runner{Jail: g, GoCache: shared, Now: time.Now}
	if res := r.Run(context.Background(), workspaceIn(tb, "warm"), []app.Stage{stage("version", time.Minute, "go", "version")}, "abc", nil); !res.OK {
		tb.Fatalf("warming: %+v", res)
	}
}

// unchanged fails when a file of the shared folder's snapshot before
// changed, went or appeared in after.
func unchanged(t *testing.T, before, after map[string]string) {
	t.Helper()
	for p, was := range before {
		if after[p] != was {
			t.Errorf("%s in the shared folder changed or went", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared in the shared folder", p)
		}
	}
}

// TestANewGoApplicationBuildsWithTheSharedStandardLibrary builds a new
// Go service confined, with the shared standard library: it passes, its
// own cache holds only what is its own (the standard library's hundreds
// of packages were read from the shared folder), and the shared folder is
// left as it was.
func TestANewGoApplicationBuildsWithTheSharedStandardLibrary(t *testing.T) {
	shared := sharedGo(t)
	ws, stages := goService(t)
	// Warm first, so the snapshot is of a warm folder.
	warm(t, jail(t), shared)
	before := snapshot(t, shared.Dir())
	if len(before) < 300 {
		t.Fatalf("the shared folder holds %d files once warm, want the standard library's hundreds", len(before))
	}

	res := build.Runner{Jail: jail(t), GoCache: shared, Now: clock}.Run(context.Background(), ws, stages, "abc", nil)
	if !res.OK {
		t.Fatalf("the template's build failed: %s\n%+v", res.Summary(), res.Stages)
	}
	own := filepath.Join(filepath.Dir(ws), "cache", "go-objects")
	if n := entries(t, own); n == 0 || n > 40 {
		t.Errorf("the application's own cache holds %d entries, want its own few (the standard library read from the shared folder)", n)
	}
	if n := entries(t, filepath.Join(filepath.Dir(ws), "cache", "go-build")); n > 0 {
		t.Errorf("go's own cache folder holds %d entries: the build did not go through the cache program", n)
	}
	unchanged(t, before, snapshot(t, shared.Dir()))
}

// TestABuildCannotWriteTheSharedCache has a stage try, as a hostile
// engineer's build would, to add an entry to the shared folder, to
// overwrite one, to remove one and to rename one: each is refused, and
// every file there is as it was.
func TestABuildCannotWriteTheSharedCache(t *testing.T) {
	shared := sharedGo(t)
	g := jail(t)
	warm(t, g, shared)
	var victim string
	_ = filepath.WalkDir(shared.Dir(), func(p string, d fs.DirEntry, err error) error {
		if err == nil && victim == "" && strings.HasSuffix(p, "-d") {
			victim = p
		}
		return nil
	})
	if victim == "" {
		t.Fatal("the shared folder holds no output once warm")
	}
	before := snapshot(t, shared.Dir())
	ws := workspaceIn(t, "evil")
	attempts := map[string]string{
		"add":       "echo v1 > " + filepath.Join(shared.Dir(), "00", strings.Repeat("0", 64)+"-a"),
		"overwrite": "echo poisoned > " + victim,
		"remove":    "rm -f " + victim,
		"rename":    "mv " + victim + " " + victim + ".old",
		"chmod":     "chmod 666 " + victim,
	}
	for name, script := range attempts {
		t.Run(name, func(t *testing.T) {
			// The stage runs go first, so it is given the cache program and
			// the shared folder, as a Go build is.
			res := build.Runner{Jail: g, GoCache: shared, Now: clock}.Run(context.Background(), ws,
				[]app.Stage{stage("go", time.Minute, "go", "version"), sh(name, script)}, "abc", nil)
			if res.OK {
				t.Errorf("the stage that tried to %s the shared folder passed: %+v", name, res.Stages)
			}
		})
	}
	unchanged(t, before, snapshot(t, shared.Dir()))
}

// TestABuildSaysWhenTheSharedStandardLibraryCannotBeHad gives a build a
// shared folder the host cannot make: the build is told it waits for the
// warm-up, still passes with its own cache, and its go stage's output says
// in a sentence that it compiles its own.
func TestABuildSaysWhenTheSharedStandardLibraryCannotBeHad(t *testing.T) {
	shared, err := gocache.Open(filepath.Join(os.DevNull, "go-std"))
	if err != nil {
		t.Fatal(err)
	}
	warming := 0
	res := build.Runner{Jail: jail(t), GoCache: shared, Now: clock, Warming: func() { warming++ }}.Run(context.Background(),
		workspaceIn(t, "svc"), []app.Stage{sh("list", "true"), stage("version", time.Minute, "go", "version")}, "abc", nil)
	if !res.OK {
		t.Fatalf("the build failed: %+v", res)
	}
	if warming != 1 {
		t.Errorf("Warming was heard %d times, want once", warming)
	}
	// A second build is not made to wait for a warm-up that just failed:
	// it is told the same at once.
	again := build.Runner{Jail: jail(t), GoCache: shared, Now: clock, Warming: func() { warming++ }}.Run(context.Background(),
		workspaceIn(t, "svc2"), []app.Stage{stage("version", time.Minute, "go", "version")}, "abc", nil)
	if !again.OK || !strings.HasPrefix(again.Stages[0].Output, "The standard library every build shares could not be prepared (") {
		t.Errorf("the second build = %+v", again)
	}
	if warming != 1 {
		t.Errorf("the second build was told it waits for a warm-up (%d told in all), though none is tried again yet", warming)
	}
	if out := res.Stages[0].Output; strings.Contains(out, "standard library") {
		t.Errorf("the first stage, which does not run go, says %q", out)
	}
	if out := res.Stages[1].Output; !strings.HasPrefix(out, "The standard library every build shares could not be prepared (") ||
		!strings.Contains(out, "so this build compiles its own.") || !strings.Contains(out, "go version go") {
		t.Errorf("the go stage's output = %q, want the sentence then go's own output", out)
	}
}
