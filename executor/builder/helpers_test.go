package builder_test

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/builder"
	"autoapp/executor/candidate"
	"autoapp/executor/preview"
	"autoapp/intent/app"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
	"autoapp/intent/workspace/sandbox"
	"autoapp/migrations/migrationstest"
)

const (
	appID = "site"
	runID = "intent-1-0002-heading-a1"
	slug  = "0002-heading"
)

// host is a data folder with the static template's application, as
// `autoapp serve` builds it.
type host struct {
	apps       *app.Service
	previews   *preview.Manager
	candidates *candidate.Service
}

func newHost(t testing.TB) *host {
	t.Helper()
	root := t.TempDir()
	db := migrationstest.IntentsIn(t, root)
	h := &host{apps: app.NewService(db, root, time.Now, workspace.Repositories{Now: time.Now}), previews: preview.NewManager(time.Now, nil, sandbox.NewGuard(root, sandbox.Probe()))}
	h.candidates = candidate.NewService(h.apps, h.previews, sandbox.NewGuard(root, sandbox.Probe()), nil, time.Now, nil)
	t.Cleanup(func() {
		h.previews.StopAll()
	})
	if _, err := h.apps.CreateFromTemplate(context.Background(), appID, "", "static"); err != nil {
		t.Fatal(err)
	}
	return h
}

func task() plan.Task {
	return plan.Task{
		Slug: slug, Title: "The home page has a heading", Priority: "high", Risk: "normal", Reasoning: "low",
		Summary:  "Give the home page a heading.",
		Criteria: []plan.Criterion{{Text: "The home page shows a heading"}},
	}
}

// asker is a cfg.Ask that keeps the questions and refuses from the third.
type asker struct {
	questions []string
	refuse    string
}

func (a *asker) ask(ctx context.Context, q string) (string, error) {
	if a.refuse != "" {
		return a.refuse, nil
	}
	a.questions = append(a.questions, q)
	return "", nil
}

// openWorkspace opens the workspace at dir for the test, as a run opens
// its application's once.
func openWorkspace(t testing.TB, dir string) *workspace.Workspace {
	t.Helper()
	ws, err := workspace.Open(dir, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

func newSession(t testing.TB, h *host, a *asker) *builder.Session {
	t.Helper()
	if a == nil {
		a = &asker{}
	}
	s, err := builder.NewSession(builder.Config{
		AppID: appID, IntentID: 1, RunID: runID, Task: task(),
		Workspace: openWorkspace(t, h.apps.WorkspaceDir(appID)), Candidates: h.candidates,
		ManifestText: func() ([]byte, error) { raw, _, _, err := h.apps.Manifest(appID); return raw, err },
		Ask:          a.ask, Now: time.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func tool(t testing.TB, s *builder.Session, name string) ai.Tool {
	t.Helper()
	for _, tl := range s.Tools() {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return ai.Tool{}
}

// call runs a tool's handler and returns its answer as JSON, or its error.
func call(t testing.TB, s *builder.Session, name, input string) (json.RawMessage, error) {
	t.Helper()
	res, err := tool(t, s, name).Handler(context.Background(), json.RawMessage(input))
	if err != nil {
		return nil, err
	}
	b, merr := json.Marshal(res)
	if merr != nil {
		t.Fatalf("%s: the answer is not JSON: %v", name, merr)
	}
	return b, nil
}

// ok runs a call that must succeed and decodes its answer into out.
func ok(t testing.TB, s *builder.Session, name, input string, out any) {
	t.Helper()
	b, err := call(t, s, name, input)
	if err != nil {
		t.Fatalf("%s %s: %v", name, input, err)
	}
	if out != nil {
		reflect.ValueOf(out).Elem().SetZero()
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %v in %s", name, err, b)
		}
	}
}

// refused runs a call that must be refused and returns the problems.
func refused(t testing.TB, s *builder.Session, name, input string) []refusal.Problem {
	t.Helper()
	_, err := call(t, s, name, input)
	var r *ai.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("%s %s: want a refusal, got %v", name, input, err)
	}
	return r.Problems
}

// answer is the union of the fields the tools answer with.
type answer struct {
	Revision     string   `json:"revision"`
	Files        []string `json:"files"`
	Guidance     string   `json:"guidance"`
	Verification struct {
		EditsSinceBuild []string `json:"editsSinceBuild"`
		LastBuild       string   `json:"lastBuild"`
		Next            string   `json:"next"`
		Warning         string   `json:"warning"`
	} `json:"verification"`
	Step  string `json:"step"`
	Build *struct {
		OK      bool   `json:"ok"`
		Release string `json:"release"`
	} `json:"build"`
	BuildProblems []json.RawMessage `json:"buildProblems"`
	Checks        string            `json:"checks"`
	Failed        []struct {
		ID      string `json:"id"`
		Failure string `json:"failure"`
	} `json:"failed"`
	SameAsLastCheck bool     `json:"sameAsLastCheck"`
	Missing         []string `json:"missing"`
	Next            string   `json:"next"`
}

// example is an acceptance example file for source.change's content.
func example(status int, contains string) string {
	b, _ := json.Marshal(map[string]any{
		"title": "The home page shows a heading",
		"steps": []any{map[string]any{"method": "GET", "path": "/", "expect": map[string]any{"status": status, "contains": []string{contains}}}},
	})
	return string(b)
}

// createFile is a source.change input creating one file.
func createFile(path, content string) string {
	b, _ := json.Marshal(map[string]any{"files": []any{map[string]any{"path": path, "action": "create", "content": content}}})
	return string(b)
}

func gitSubjects(t testing.TB, dir string) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "log", "--format=%s").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}
