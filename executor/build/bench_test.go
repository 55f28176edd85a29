package build_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"autoapp/executor/build"
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
