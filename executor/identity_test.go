package executor_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"autoapp/executor/candidate"
	"autoapp/intent"
	"autoapp/knowledge"
	"autoapp/knowledge/origin"
)

// siteServer is a preview command for the static template's site: it
// serves ./site on $PORT and says so on its stderr, a line of the child's
// own that no turn wrote.
const siteServer = `package main

import (
	"fmt"
	"net/http"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "the site server listens on", os.Getenv("PORT"))
	if err := http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), http.FileServer(http.Dir("site"))); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
`

var (
	siteServerOnce sync.Once
	siteServerPath string
	siteServerErr  error
)

// builtSiteServer is the site server, built once for the test binary.
func builtSiteServer(t *testing.T) string {
	t.Helper()
	siteServerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "site-server-")
		if err != nil {
			siteServerErr = err
			return
		}
		for name, text := range map[string]string{"go.mod": "module siteserver\n\ngo 1.22\n", "main.go": siteServer} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				siteServerErr = err
				return
			}
		}
		cmd := exec.Command("go", "build", "-o", "site-server", ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			siteServerErr = fmt.Errorf("%w: %s", err, out)
			return
		}
		siteServerPath = filepath.Join(dir, "site-server")
	})
	if siteServerErr != nil {
		t.Fatalf("building the site server: %v", siteServerErr)
	}
	return siteServerPath
}

// recording boots the launcher with its event log on, as serve does.
func recording(c *hostConfig) { c.opts.Quiet = false }

// TestEveryRowOfABuilderTurnCarriesItsIdentity runs a task whose cycle
// previews the site with a command: every event the attempt wrote names
// its run, a call of the run loop's envelope, the application, the release
// and the workspace revision as they were when the row was written, and
// the preview's own output line carries none of them.
func TestEveryRowOfABuilderTurnCarriesItsIdentity(t *testing.T) {
	h := newHost(t, recording)
	ctx := context.Background()
	server, err := os.ReadFile(builtSiteServer(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.apps.WorkspaceDir("site"), "site-server"), server, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `{"name": "Static site", "build": [{"name": "check", "command": ["test", "-s", "site/index.html"], "timeout": "10s"}],
		"preview": {"command": ["./site-server"], "startTimeout": "20s"}, "acceptance": "acceptance/", "artifacts": ["site/index.html"]}`
	if err := h.apps.SaveManifest(ctx, "site", []byte(manifest)); err != nil {
		t.Fatal(err)
	}
	// The person built the site once: the turn starts with a release.
	before, err := h.cands.Build(ctx, "site", candidate.By{})
	if err != nil || before.Build == nil || before.Build.Release == nil {
		t.Fatalf("the first build: %+v, %v", before, err)
	}

	id := h.plan(t, heading())
	h.scriptHeading(id, 1)
	if err := h.exec.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	if d := h.wait(t, id); d.Status != intent.IntentDone {
		t.Fatalf("intent %s (%s)", d.Status, d.StopReason)
	}
	st, err := h.cands.State("site")
	if err != nil || st.Build == nil || st.Build.Release == nil {
		t.Fatalf("the candidate after the run: %+v, %v", st, err)
	}
	built, head := st.Build.Release.ID, st.Build.Revision
	if built == before.Build.Release.ID {
		t.Fatal("the turn's cycle made no release of its own")
	}

	ks := h.reopened(t)
	events := eventsOf(t, ks)
	run := runID(id, headingSlug, 1)
	var ofRun []knowledge.Event
	for _, e := range events {
		if e.RunID.String == run {
			ofRun = append(ofRun, e)
		}
	}
	if len(ofRun) == 0 {
		t.Fatalf("no event names run %s among %d", run, len(events))
	}
	byMessage := map[string]knowledge.Event{}
	for _, e := range ofRun {
		for name, col := range map[string]sql.NullString{"call": e.CallID, "app": e.AppID, "release": e.ReleaseID, "revision": e.Revision} {
			if !col.Valid || col.String == "" {
				t.Errorf("%q has no %s: %+v", e.Message, name, e.Identity())
			}
		}
		if !strings.HasPrefix(e.CallID.String, run+":") {
			t.Errorf("%q names call %q, not one of its run's envelope", e.Message, e.CallID.String)
		}
		byMessage[e.Message] = e
	}
	// The preview the turn's cycle started is under the cycle's call, as
	// <callId>.preview, with the release the cycle built and the revision
	// its edit committed; the turn's own end is <runId>:turn; the verdict
	// is <runId>:verdict.
	started, ok := byMessage["preview started"]
	switch {
	case !ok:
		t.Errorf("no \"preview started\" row names the run")
	case !strings.HasSuffix(started.CallID.String, ".preview") || started.ReleaseID.String != built || started.Revision.String != head:
		t.Errorf("preview started: %+v; want a <callId>.preview of release %s at %s", started.Identity(), built, head)
	}
	for message, call := range map[string]string{"ai: turn ended": run + ":turn", "the task completed": run + ":verdict"} {
		if e := byMessage[message]; e.CallID.String != call || e.Revision.String != head {
			t.Errorf("%q: %+v; want call %s at %s", message, e.Identity(), call, head)
		}
	}

	// The turn's contexts row and each thing its run did carry the rest
	// of their identity too: the turn's own call for its documents, the
	// tool call for an edit, <callId>.build for the cycle's build.
	turns, err := ks.Turns(ctx, knowledge.TurnQuery{AppID: "site"})
	if err != nil || len(turns) != 1 {
		t.Fatalf("turns %+v (%v)", turns, err)
	}
	if tr := turns[0]; tr.CallID != run+":turn" || tr.ReleaseID != before.Build.Release.ID || tr.Revision != before.Revision {
		t.Errorf("the turn's row: call %q, release %q, revision %q; want %s:turn at %s, %s", tr.CallID, tr.ReleaseID, tr.Revision,
			run, before.Build.Release.ID, before.Revision)
	}
	work, err := ks.Work(ctx, []string{run}, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := work[run]
	if len(w.Edits) != 2 || len(w.Builds) != 1 {
		t.Fatalf("the run's work: %+v", w)
	}
	for _, item := range append(slices.Clone(w.Edits), w.Builds...) {
		if !strings.HasPrefix(item.CallID, run+":") || item.ReleaseID == "" || item.Revision == "" {
			t.Errorf("the run's %s %q: call %q, release %q, revision %q", item.Kind, item.Summary, item.CallID, item.ReleaseID, item.Revision)
		}
	}
	if b := w.Builds[0]; !strings.HasSuffix(b.CallID, ".build") || b.Revision != head {
		t.Errorf("the cycle's build: call %q at %q; want a <callId>.build at %s", b.CallID, b.Revision, head)
	}
	if e := w.Edits[1]; e.CallID != run+":2" || e.Revision != head {
		t.Errorf("the second edit: call %q at %q; want %s:2 at %s", e.CallID, e.Revision, run, head)
	}

	// The child's own line has no origin: every identity column is NULL.
	found := false
	for _, e := range events {
		if strings.HasPrefix(e.Message, "the site server listens on") {
			found = true
			if e.Identity() != (origin.Identity{}) {
				t.Errorf("the preview's own line carries %+v", e.Identity())
			}
		}
	}
	if !found {
		t.Error("the preview's own line was not recorded")
	}
}

// reopened closes the launcher, so that its log is written out, and opens
// its knowledge store again to read what it recorded.
func (h *host) reopened(t *testing.T) *knowledge.Store {
	t.Helper()
	if err := h.launcher.Close(); err != nil {
		t.Fatal(err)
	}
	ks, err := knowledge.Open(filepath.Join(h.root, "launcher", "knowledge.sqlite"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ks.Close() })
	return ks
}

// events closes the launcher and reads every event it recorded, newest
// first.
func (h *host) events(t *testing.T) []knowledge.Event {
	t.Helper()
	return eventsOf(t, h.reopened(t))
}

func eventsOf(t *testing.T, ks *knowledge.Store) []knowledge.Event {
	t.Helper()
	var all []knowledge.Event
	q := knowledge.LogQuery{Limit: 1000}
	for {
		page, err := ks.Log(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		if len(page) < 1000 {
			return all
		}
		q.Before = page[len(page)-1].ID
	}
}
