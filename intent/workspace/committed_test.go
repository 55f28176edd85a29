package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"autoapp/intent/app"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"

	"golang.org/x/sys/unix"
)

const committedManifest = `{"name": "Notes", "build": [{"name": "check", "command": ["test", "-s", "site/index.html"], "timeout": "20s"}],
	"preview": {"static": "site"}}
`

// rewritten is the manifest the engineer's code would like obeyed: one
// more build stage, which would run whatever it names.
const rewrittenManifest = `{"name": "Notes", "build": [{"name": "check", "command": ["test", "-s", "site/index.html"], "timeout": "20s"},
	{"name": "steal", "command": ["sh", "-c", "cat /root/.ssh/id_ed25519"], "timeout": "20s"}],
	"preview": {"static": "site"}}
`

// manifestOf reads w's manifest within a second.
func manifestOf(t *testing.T, w *workspace.Workspace) ([]byte, app.Manifest, refusal.Problems) {
	t.Helper()
	type answer struct {
		raw []byte
		m   app.Manifest
		ps  refusal.Problems
		err error
	}
	done := make(chan answer, 1)
	go func() {
		raw, m, ps, err := w.Manifest(t.Context())
		done <- answer{raw, m, ps, err}
	}()
	select {
	case a := <-done:
		if a.err != nil {
			t.Fatalf("Manifest: %v", a.err)
		}
		return a.raw, a.m, a.ps
	case <-time.After(time.Second):
		t.Fatal("Manifest did not answer within a second")
	}
	return nil, app.Manifest{}, nil
}

// TestTheHostObeysOnlyTheCommittedManifest: the manifest the host reads
// is autoapp.json as HEAD commits it. A working tree's that differs — more
// stages, a link to the owner's keys, a named pipe, none at all — is not
// obeyed: the committed one is answered, with a problem that says why
// nothing may be built from it; a commit of it makes it the manifest.
func TestTheHostObeysOnlyTheCommittedManifest(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, map[string]string{app.ManifestFile: committedManifest, "site/index.html": "<h1>Notes</h1>\n"})
	dir := w.Dir()
	manifest := filepath.Join(dir, app.ManifestFile)
	raw, m, ps := manifestOf(t, w)
	if string(raw) != committedManifest || len(ps) != 0 || len(m.Build) != 1 {
		t.Fatalf("the committed manifest reads %q, %v, %d stages", raw, ps, len(m.Build))
	}

	secretFile := filepath.Join(t.TempDir(), "providers.json")
	os.WriteFile(secretFile, []byte(`{"apiKey": "sk-the-owners-key"}`), 0o600)
	for _, c := range []struct {
		name  string
		plant func() error
		says  string
	}{
		{"a stage added", func() error { return os.WriteFile(manifest, []byte(rewrittenManifest), 0o644) },
			"autoapp.json in the workspace differs from the one committed at HEAD; the host obeys only the committed manifest"},
		{"a link to the owner's keys", func() error { return os.Symlink(secretFile, manifest) }, "symbolic link"},
		{"a link to the environment", func() error { return os.Symlink("/proc/self/environ", manifest) }, "symbolic link"},
		{"a named pipe", func() error { return unix.Mkfifo(manifest, 0o644) }, "named pipe"},
		{"removed", func() error { return nil }, "not in the workspace"},
		{"too large", func() error {
			return os.WriteFile(manifest, []byte(committedManifest+strings.Repeat(" ", workspace.MaxManifestBytes)), 0o644)
		}, "at most 256 KiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(manifest)
			if err := c.plant(); err != nil {
				t.Fatal(err)
			}
			raw, m, ps := manifestOf(t, w)
			if string(raw) != committedManifest || len(m.Build) != 1 {
				t.Fatalf("the manifest read %q with %d stages, want the committed one", raw, len(m.Build))
			}
			if len(ps) != 1 || !strings.Contains(ps[0].Message, c.says) || !strings.Contains(ps[0].Message, "the host obeys only the committed manifest") {
				t.Fatalf("problems %q, want one saying …%s…", ps.Error(), c.says)
			}
		})
	}

	// The same bytes again: nothing to say.
	os.Remove(manifest)
	os.WriteFile(manifest, []byte(committedManifest), 0o644)
	if _, _, ps := manifestOf(t, w); len(ps) != 0 {
		t.Fatalf("the committed bytes put back: %v", ps)
	}
	// Committed, the new manifest is the one obeyed, packed or not.
	os.WriteFile(manifest, []byte(rewrittenManifest), 0o644)
	git(t, dir, "add", app.ManifestFile)
	git(t, dir, "-c", "user.name=o", "-c", "user.email=o@o", "commit", "-q", "-m", "two stages")
	if raw, m, ps := manifestOf(t, w); string(raw) != rewrittenManifest || len(ps) != 0 || len(m.Build) != 2 {
		t.Fatalf("after the commit: %q, %v", raw, ps)
	}
	git(t, dir, "gc", "-q")
	if raw, _, ps := manifestOf(t, w); string(raw) != rewrittenManifest || len(ps) != 0 {
		t.Fatalf("after git packed the repository: %q, %v", raw, ps)
	}
}

// TestAManifestHEADDoesNotHoldIsNone: a manifest only in the working tree,
// never committed, is not obeyed.
func TestAManifestHEADDoesNotHoldIsNone(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t, map[string]string{"site/index.html": "<h1>Notes</h1>\n"})
	os.WriteFile(filepath.Join(w.Dir(), app.ManifestFile), []byte(committedManifest), 0o644)
	raw, _, ps := manifestOf(t, w)
	if len(raw) != 0 || len(ps) != 1 || !strings.Contains(ps[0].Message, "not committed") {
		t.Fatalf("an uncommitted manifest: %q, %q", raw, ps.Error())
	}
	os.Remove(filepath.Join(w.Dir(), app.ManifestFile))
	if _, _, ps := manifestOf(t, w); len(ps) != 1 || ps[0].Message != "the workspace has no autoapp.json" {
		t.Fatalf("no manifest: %q", ps.Error())
	}
}
