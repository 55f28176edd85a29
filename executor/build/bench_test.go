package build_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"autoapp/executor/build"
	"autoapp/executor/build/gocache"
	"autoapp/intent/app"
	"autoapp/intent/workspace/sandbox"
)

// guards are the two ways a stage starts: in the sandbox, and unconfined
// as the owner may choose in Settings.
func guards(b *testing.B) map[string]*sandbox.Guard {
	b.Helper()
	confined := sandbox.NewGuard(b.TempDir(), sandbox.Probe())
	root := b.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "launcher"), 0o700); err != nil {
		b.Fatal(err)
	}
	unconfined := sandbox.NewGuard(root, sandbox.Probe())
	if err := unconfined.SetUnconfined(true); err != nil {
		b.Fatal(err)
	}
	return map[string]*sandbox.Guard{"confined": confined, "unconfined": unconfined}
}

// BenchmarkStage runs a one-stage build of /bin/true, confined and not:
// the difference is what the sandbox costs a stage.
func BenchmarkStage(b *testing.B) {
	if !sandbox.Probe().Confines() {
		b.Fatalf("this machine cannot confine: %s", sandbox.Probe().Why)
	}
	for name, g := range guards(b) {
		b.Run(name, func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "workspace")
			if err := os.Mkdir(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			stages := []app.Stage{stage("true", time.Minute, "/bin/true")}
			for b.Loop() {
				if res := build.Run(context.Background(), g, dir, stages, "abc", time.Now); !res.OK {
					b.Fatalf("Run = %+v", res)
				}
			}
		})
	}
}

// BenchmarkFirstGoBuild is a new Go service application's first build
// (the template's go vet and go build stages, confined, as candidate.build
// runs them) before and after the shared standard library, against a
// warm build: the same application built again after an edit of its
// main.go. Run it with -benchtime=1x or 2x: a first build without the
// shared library compiles the standard library (a minute here).
func BenchmarkFirstGoBuild(b *testing.B) {
	shared := sharedGo(b)
	g := sandbox.NewGuard(b.TempDir(), sandbox.Probe())
	// Warm the shared library once, outside every measure.
	warm(b, g, shared)
	first := func(b *testing.B, cache *gocache.Shared) {
		for b.Loop() {
			b.StopTimer()
			ws, stages := goService(b)
			b.StartTimer()
			if res := (build.Runner{Jail: g, GoCache: cache, Now: time.Now}).Run(context.Background(), ws, stages, "abc", nil); !res.OK {
				b.Fatalf("build: %s %+v", res.Summary(), res.Stages)
			}
		}
	}
	b.Run("first build, own cache only (before)", func(b *testing.B) { first(b, nil) })
	b.Run("first build, shared standard library", func(b *testing.B) { first(b, shared) })
	b.Run("warm build after an edit", func(b *testing.B) {
		ws, stages := goService(b)
		r := build.Runner{Jail: g, GoCache: shared, Now: time.Now}
		if res := r.Run(context.Background(), ws, stages, "abc", nil); !res.OK {
			b.Fatalf("build: %s %+v", res.Summary(), res.Stages)
		}
		n := 0
		for b.Loop() {
			b.StopTimer()
			n++
			f, err := os.OpenFile(filepath.Join(ws, "main.go"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(f, "\n// edit %d\n", n)
			f.Close()
			b.StartTimer()
			if res := r.Run(context.Background(), ws, stages, "abc", nil); !res.OK {
				b.Fatalf("build: %s %+v", res.Summary(), res.Stages)
			}
		}
	})
}
