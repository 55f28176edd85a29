package candidate_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"autoapp/executor/candidate"
	"autoapp/executor/preview"
	"autoapp/intent/app"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
	"autoapp/intent/workspace/sandbox"
	"autoapp/migrations"
	"autoapp/migrations/migrationstest"
)

// host is one data folder with its stores, applications and previews, as
// `autoapp serve` builds them.
type host struct {
	root       string
	db         *migrations.DB
	apps       *app.Service
	previews   *preview.Manager
	candidates *candidate.Service
}

func newHost(t testing.TB, root string) *host {
	t.Helper()
	db := migrationstest.IntentsIn(t, root)
	h := &host{root: root, db: db}
	h.apps = app.NewService(db, root, time.Now, workspace.Repositories{Now: time.Now})
	jail := sandbox.NewGuard(root, sandbox.Probe())
	h.previews = preview.NewManager(time.Now, nil, jail)
	h.candidates = candidate.NewService(h.apps, h.previews, jail, nil, time.Now, nil)
	t.Cleanup(h.previews.StopAll)
	return h
}

func (h *host) create(t testing.TB, id, template string) {
	t.Helper()
	if _, err := h.apps.CreateFromTemplate(context.Background(), id, "", template); err != nil {
		t.Fatalf("create %s from %s: %v", id, template, err)
	}
	// Each application builds with caches of its own, so each new Go
	// service compiles the standard library anew. These throwaway ones
	// share one cache folder instead, so the package's tests stay quick.
	if template == "goservice" {
		if err := os.Symlink(goCache, filepath.Join(h.apps.Dir(id), "cache")); err != nil {
			t.Fatal(err)
		}
	}
}

// goCache is the cache folder the tests' Go services share.
var goCache string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "autoapp-candidate-cache-")
	if err != nil {
		panic(err)
	}
	goCache = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func cycle(t testing.TB, h *host, id string, c candidate.Change) candidate.Result {
	t.Helper()
	res, err := h.candidates.Cycle(context.Background(), id, c)
	if err != nil {
		t.Fatalf("cycle: %v", err)
	}
	return res
}

func TestBothTemplatesBuildPreviewAndPassTheirExamples(t *testing.T) {
	for _, template := range []string{"static", "goservice"} {
		t.Run(template, func(t *testing.T) {
			h := newHost(t, t.TempDir())
			h.create(t, "site", template)
			res := cycle(t, h, "site", candidate.Change{})
			if res.Step != candidate.StepChecked {
				t.Fatalf("the cycle stopped at %q: %s %+v %+v", res.Step, res.Next, res.BuildProblems, res.Preview)
			}
			if res.Checks.Passed != 1 || len(res.Checks.Results) != 1 || len(res.Failed) != 0 {
				t.Fatalf("checks: %+v", res.Checks)
			}
			if !strings.HasPrefix(res.Next, "Every check passed (1 of 1)") {
				t.Fatalf("next: %q", res.Next)
			}
			releases, err := h.apps.Releases(context.Background(), "site", 10)
			if err != nil || len(releases) != 1 || releases[0].Revision != res.Revision {
				t.Fatalf("the release was not recorded: %+v %v", releases, err)
			}
			o, err := h.candidates.Observe(context.Background(), "site")
			if err != nil {
				t.Fatal(err)
			}
			if !o.PreviewRunning || o.ChecksNote != "" || o.Edited || o.PreviewNote != "" {
				t.Fatalf("observed: running %v, checks note %q, edited %v, preview note %q", o.PreviewRunning, o.ChecksNote, o.Edited, o.PreviewNote)
			}
			if _, err := os.Stat(filepath.Join(h.apps.Dir("site"), candidate.File)); err != nil {
				t.Fatalf("candidate.json was not written: %v", err)
			}
		})
	}
}

func TestAFailingExampleSaysWhy(t *testing.T) {
	h := newHost(t, t.TempDir())
	h.create(t, "site", "static")
	example := `{"title": "Tags are listed", "steps": [{"method": "GET", "path": "/tags", "expect": {"status": 200}}]}`
	res := cycle(t, h, "site", candidate.Change{Files: []workspace.FileChange{
		{Path: "acceptance/0002-tags-c1.json", Action: workspace.Create, Content: example},
	}, Meta: workspace.CommitMeta{RunID: "intent-1-tags-a1", CallID: "c1"}})
	if res.Step != candidate.StepChecked || res.Patch == nil {
		t.Fatalf("step %q, patch %+v", res.Step, res.Patch)
	}
	if res.Checks.Passed != 1 || len(res.Failed) != 1 {
		t.Fatalf("checks: %+v", res.Checks)
	}
	if got, want := res.Failed[0].Failure, "expected status 200, got 404 on GET /tags"; got != want {
		t.Fatalf("failure %q, want %q", got, want)
	}
	if res.SameAsLastCheck {
		t.Fatal("the first failure cannot be the same as the last")
	}
	again := cycle(t, h, "site", candidate.Change{})
	if !again.SameAsLastCheck || !strings.Contains(again.Next, "the change did not reach them") {
		t.Fatalf("the same failure again is not called the same: %v %q", again.SameAsLastCheck, again.Next)
	}
}

func TestABuildErrorIsReportedWithItsPlaceAndWhetherItRepeats(t *testing.T) {
	h := newHost(t, t.TempDir())
	h.create(t, "svc", "goservice")
	broken := candidate.Change{Path: "main.go", Hunks: []workspace.Hunk{
		{Find: `port := os.Getenv("PORT")`, Replace: `port := os.Getenv("PORT")` + "\n\tundefinedThing()"},
	}}
	res := cycle(t, h, "svc", broken)
	if res.Step != candidate.StepBuildFailed {
		t.Fatalf("step %q", res.Step)
	}
	if len(res.BuildProblems) == 0 {
		t.Fatal("no problems")
	}
	p := res.BuildProblems[0]
	if p.File != "main.go" || p.Line == 0 || !strings.Contains(p.Message, "undefinedThing") {
		t.Fatalf("problem: %+v", p)
	}
	if !strings.Contains(p.Around, "undefinedThing()") {
		t.Fatalf("the lines around the problem are missing: %q", p.Around)
	}
	if res.Build.Release != nil {
		t.Fatalf("a failed build has no earlier release to keep, got %+v", res.Build.Release)
	}
	if got := res.Build.StagesRun; len(got) != 1 || got[0] != "vet" {
		t.Fatalf("stages run: %v", got)
	}
	if got := res.Build.NotRun; len(got) != 1 || got[0] != "compile" {
		t.Fatalf("never ran: %v", got)
	}
	// A comment above moves the line; the failure is still the same one.
	moved := cycle(t, h, "svc", candidate.Change{Path: "main.go", Hunks: []workspace.Hunk{
		{Find: "func main() {", Replace: "// main starts the service.\nfunc main() {"},
	}})
	if moved.Step != candidate.StepBuildFailed || !moved.SameAsLastBuild {
		t.Fatalf("same failure at another line: step %q same %v", moved.Step, moved.SameAsLastBuild)
	}
	if !strings.HasPrefix(moved.Next, "These are the problems the last build had") {
		t.Fatalf("next: %q", moved.Next)
	}
	st, err := h.candidates.State("svc")
	if err != nil || st.Cycle == nil || st.Cycle.Step != candidate.StepBuildFailed || st.Cycle.Next != moved.Next {
		t.Fatalf("candidate.json does not record where the cycle stopped: %+v %v", st.Cycle, err)
	}
}

func TestARefusedChangeAppliesNothing(t *testing.T) {
	h := newHost(t, t.TempDir())
	h.create(t, "site", "static")
	ws, err := workspace.Open(h.apps.WorkspaceDir("site"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := ws.Head(t.Context())
	ws.Close()
	res := cycle(t, h, "site", candidate.Change{Path: "site/index.html", Hunks: []workspace.Hunk{{Find: "not in the file", Replace: "x"}}})
	if res.Step != candidate.StepPatchRefused || len(res.PatchProblems) == 0 || res.Build != nil {
		t.Fatalf("step %q problems %v build %+v", res.Step, res.PatchProblems, res.Build)
	}
	if res.Revision != before {
		t.Fatalf("HEAD moved from %s to %s", before, res.Revision)
	}
}

func TestAKilledPreviewIsNoticed(t *testing.T) {
	h := newHost(t, t.TempDir())
	h.create(t, "svc", "goservice")
	res := cycle(t, h, "svc", candidate.Change{})
	if res.Step != candidate.StepChecked {
		t.Fatalf("step %q: %s", res.Step, res.Next)
	}
	info, ok := h.previews.Status("svc")
	if !ok || info.PID == 0 {
		t.Fatalf("no preview process: %+v", info)
	}
	if err := syscall.Kill(-info.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		o, err := h.candidates.Observe(context.Background(), "svc")
		if err != nil {
			t.Fatal(err)
		}
		if !o.PreviewRunning {
			if o.PreviewNote != candidate.PreviewStoppedOnItsOwn {
				t.Fatalf("preview note %q", o.PreviewNote)
			}
			if o.ChecksNote != "Passed 1 of 1 for an earlier preview; run the checks again." {
				t.Fatalf("checks note %q", o.ChecksNote)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed preview still counts as running")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestARestartSaysWhatStoppedAndWhatMoved(t *testing.T) {
	root := t.TempDir()
	first := newHost(t, root)
	first.create(t, "site", "static")
	if res := cycle(t, first, "site", candidate.Change{}); res.Step != candidate.StepChecked {
		t.Fatalf("step %q", res.Step)
	}
	// The launcher stops: its previews go with it.
	first.previews.StopAll()

	// An edit lands while it is down.
	ws, err := workspace.Open(first.apps.WorkspaceDir("site"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Edit(t.Context(), "site/index.html", []workspace.Hunk{{Find: "A new site</h1>", Replace: "An edited site</h1>"}}, workspace.CommitMeta{}); err != nil {
		t.Fatal(err)
	}
	ws.Close()

	second := newHost(t, root)
	o, err := second.candidates.Observe(context.Background(), "site")
	if err != nil {
		t.Fatal(err)
	}
	if o.PreviewRunning || o.PreviewNote != candidate.PreviewStoppedByRestart {
		t.Fatalf("preview: running %v note %q", o.PreviewRunning, o.PreviewNote)
	}
	if o.ChecksNote != "Passed 1 of 1 for an earlier preview; run the checks again." {
		t.Fatalf("checks note %q", o.ChecksNote)
	}
	if !o.Edited {
		t.Fatal("HEAD moved but the candidate does not say it was edited since the build")
	}
	// Starting the preview again clears the restart note.
	o, err = second.candidates.StartPreview(context.Background(), "site")
	if err != nil {
		t.Fatal(err)
	}
	if !o.PreviewRunning || o.PreviewNote != "" {
		t.Fatalf("after Start preview: running %v note %q", o.PreviewRunning, o.PreviewNote)
	}
}

func TestACycleOfTheSameApplicationWaitsForNone(t *testing.T) {
	h := newHost(t, t.TempDir())
	h.create(t, "site", "static")
	// StopPreview with nothing running is not an error.
	if _, err := h.candidates.StopPreview(context.Background(), "site"); err != nil {
		t.Fatalf("stop with nothing running: %v", err)
	}
	if _, err := h.candidates.StartPreview(context.Background(), "site"); err == nil || !strings.Contains(err.Error(), "build it first") {
		t.Fatalf("start before any build: %v", err)
	}
}

// BenchmarkCycleOverheadStatic measures a verifying cycle of the static
// template without its build command: the manifest's stages are removed, so
// what is timed is reading the state, opening the workspace, starting the
// host-served preview, loading and running the example, and writing
// candidate.json four times.
func BenchmarkCycleOverheadStatic(b *testing.B) {
	h := newHost(b, b.TempDir())
	h.create(b, "site", "static")
	manifest := `{"name": "Static site", "build": [], "preview": {"static": "site"}, "acceptance": "acceptance/", "artifacts": ["site/index.html"]}`
	if err := h.apps.SaveManifest(context.Background(), "site", []byte(manifest)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := h.candidates.Cycle(context.Background(), "site", candidate.Change{})
		if err != nil || res.Step != candidate.StepChecked || res.Checks.Passed != 1 {
			b.Fatalf("cycle: %v %+v", err, res)
		}
	}
}

// TestNothingIsBuiltOnAMachineThatCannotConfine: without a sandbox and
// without the owner's choice to run unconfined, a cycle is refused with
// the sentence that says what to do, and no stage runs.
func TestNothingIsBuiltOnAMachineThatCannotConfine(t *testing.T) {
	root := t.TempDir()
	h := newHost(t, root)
	jail := sandbox.NewGuard(root, sandbox.Machine{Why: "this kernel has no Landlock (it needs Linux 5.13 or later)"})
	h.candidates = candidate.NewService(h.apps, preview.NewManager(time.Now, nil, jail), jail, nil, time.Now, nil)
	h.create(t, "site", "static")
	_, err := h.candidates.Cycle(context.Background(), "site", candidate.Change{})
	r, ok := refusal.As(err)
	if !ok {
		t.Fatalf("Cycle = %v, want a refusal", err)
	}
	if sentence := r.Message; !strings.Contains(sentence, "This machine cannot confine the engineer's code") ||
		!strings.Contains(sentence, "turn on Run unconfined in Settings") {
		t.Errorf("sentence = %q", sentence)
	}
	if st, err := h.candidates.State("site"); err != nil || st.Build != nil {
		t.Errorf("State = %+v, %v; want nothing built", st, err)
	}
	if err := jail.SetUnconfined(true); err != nil {
		t.Fatal(err)
	}
	if res := cycle(t, h, "site", candidate.Change{}); res.Step != candidate.StepChecked {
		t.Errorf("after the owner's choice, Step = %q, want checked", res.Step)
	}
}

// TestTwoBuildsOfOneRevisionAreTwoReleases: built twice in the same second,
// one revision makes two releases with ids of their own, so checks run on
// the first build's preview are never taken as the second's.
func TestTwoBuildsOfOneRevisionAreTwoReleases(t *testing.T) {
	h := newHost(t, t.TempDir())
	h.create(t, "site", "static")
	first, err := h.candidates.Build(context.Background(), "site", candidate.By{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := h.candidates.Build(context.Background(), "site", candidate.By{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := first.Build.Release, second.Build.Release
	if a == nil || b == nil || a.ID == b.ID || a.Revision != b.Revision {
		t.Fatalf("releases %+v and %+v; want two ids for one revision", a, b)
	}
	rs, err := h.apps.Releases(context.Background(), "site", 10)
	if err != nil || len(rs) != 2 {
		t.Fatalf("releases listed %+v (%v), want both", rs, err)
	}
}

// TestAManifestNotCommittedBuildsNothing: the engineer's code rewrote
// autoapp.json with a stage of its own, which the engineer's tools would
// have refused. Neither a build nor a cycle runs anything: both answer
// that the host obeys only the committed manifest.
func TestAManifestNotCommittedBuildsNothing(t *testing.T) {
	h := newHost(t, t.TempDir())
	h.create(t, "site", "static")
	dir := h.apps.WorkspaceDir("site")
	rewritten := `{"name": "Static site", "build": [{"name": "plant", "command": ["sh", "-c", "echo ran > ran.txt"], "timeout": "10s"}],
		"preview": {"static": "site"}}`
	if err := os.WriteFile(filepath.Join(dir, "autoapp.json"), []byte(rewritten), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "The manifest has problems, so nothing was built: autoapp.json in the workspace differs from the one committed at HEAD; " +
		"the host obeys only the committed manifest."
	if _, err := h.candidates.Build(context.Background(), "site", candidate.By{}); err == nil || err.Error() != want {
		t.Fatalf("the build answered %v, want %q", err, want)
	}
	if _, err := h.candidates.Cycle(context.Background(), "site", candidate.Change{}); err == nil || err.Error() != want {
		t.Fatalf("the cycle answered %v, want %q", err, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err == nil {
		t.Fatal("the rewritten manifest's stage ran")
	}
}

// TestAnExampleTheHostWillNotReadFails: an acceptance example that is a
// link to the owner's keys, or a named pipe, and an acceptance folder
// that is a link out of the workspace, are failed examples with their
// sentence; the checks answer at once and hold nothing of the keys.
func TestAnExampleTheHostWillNotReadFails(t *testing.T) {
	h := newHost(t, t.TempDir())
	h.create(t, "site", "static")
	dir := h.apps.WorkspaceDir("site")
	keys := filepath.Join(h.root, "launcher", "examples", "0002-keys-c1.json")
	os.MkdirAll(filepath.Dir(keys), 0o700)
	os.WriteFile(keys, []byte(`{"title": "sk-the-owners-key", "steps": [{"method": "GET", "path": "/"}]}`), 0o600)
	if err := os.Symlink(keys, filepath.Join(dir, "acceptance", "0002-keys-c1.json")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "acceptance", "0003-pipe-c1.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	checked := func() candidate.Result {
		t.Helper()
		done := make(chan candidate.Result, 1)
		go func() { done <- cycle(t, h, "site", candidate.Change{}) }()
		select {
		case res := <-done:
			for _, f := range res.Failed {
				if strings.Contains(f.Failure, "sk-") || strings.Contains(f.Title, "sk-") {
					t.Fatalf("a check holds the owner's key: %+v", f)
				}
			}
			return res
		case <-time.After(30 * time.Second):
			t.Fatal("the cycle waited on the named pipe")
		}
		return candidate.Result{}
	}
	if res := checked(); res.Step != candidate.StepChecked || res.Checks.Passed != 1 || len(res.Failed) != 2 {
		t.Fatalf("step %q, checks %+v", res.Step, res.Checks)
	}

	os.RemoveAll(filepath.Join(dir, "acceptance"))
	if err := os.Symlink(filepath.Dir(keys), filepath.Join(dir, "acceptance")); err != nil {
		t.Fatal(err)
	}
	res := checked()
	if res.Step != candidate.StepChecked || res.Checks.Passed != 0 || len(res.Failed) != 1 ||
		!strings.Contains(res.Failed[0].Failure, "acceptance is a symbolic link") {
		t.Fatalf("a linked acceptance folder: step %q, failed %+v", res.Step, res.Failed)
	}
}
