package replay_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"autoapp/cmd/autoapp/launcher"
	"autoapp/executor/ai/provider"
	"autoapp/executor/ai/scripted"
	"autoapp/executor/build"
	"autoapp/intent"
	"autoapp/intent/plan"
	"autoapp/intent/timetest"
	"autoapp/knowledge"
)

// emptyPageFailure is what the static template's check stage says of an
// empty site/index.html.
const emptyPageFailure = "stage check exited with status 1 and printed nothing"

// pageLesson is the lesson the empty page's case taught.
const pageLesson = "Keep the home page whole: the check stage fails when the page is empty."

// taskRun is the builder turn of the task that met the failures.
const taskRun = "intent-1-0001-change-the-page-a1"

// root is the launcher over a fresh data folder: the application notes
// made from the static template, the scripted model as the Settings model,
// and an intent whose one task's builder turn (taskRun) met a failure, was
// interrupted, and whose intent stopped, as after a restart.
type root struct {
	l     *launcher.Launcher
	model *scripted.Server
	dir   string
	// ws is the application's workspace, a real git repository.
	ws string
}

// newRoot is a root whose Settings model is the scripted one.
func newRoot(t *testing.T) *root {
	t.Helper()
	r := bareRoot(t)
	if err := r.l.Providers.SetDefaultModel("scripted:builder"); err != nil {
		t.Fatal(err)
	}
	return r
}

// bareRoot is a root whose scripted provider is set up but no Settings
// model chosen.
func bareRoot(t *testing.T) *root {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	l, err := launcher.New(dir, timetest.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)).Now, nil, launcher.Options{Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	model := scripted.New(t)
	model.Models("builder")
	if err := l.Providers.Save(provider.Provider{Name: "scripted", BaseURL: model.URL(), On: true}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Apps.CreateFromTemplate(ctx, "notes", "Notes", "static"); err != nil {
		t.Fatal(err)
	}
	in, err := l.Backlog.OpenDraft(ctx, "notes", "Change the page", intent.Analysis{Restated: []string{"Change the page."}})
	if err != nil {
		t.Fatal(err)
	}
	task, err := l.Backlog.AddTask(ctx, in.ID, plannedTask())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Backlog.Submit(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if err := l.Backlog.MoveIntent(ctx, in.ID, intent.IntentRunning, "the tests ran it"); err != nil {
		t.Fatal(err)
	}
	for _, st := range []intent.TaskStatus{intent.TaskInQueue, intent.TaskInProgress, intent.TaskInterrupted} {
		m := intent.Move{Reason: "the tests moved it", Actor: intent.ActorExecutor}
		if st == intent.TaskInProgress {
			m.RunID = taskRun
		}
		if err := l.Backlog.MoveTask(ctx, task.ID, st, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Backlog.MoveIntent(ctx, in.ID, intent.IntentStopped, "the server stopped"); err != nil {
		t.Fatal(err)
	}
	return &root{l: l, model: model, dir: dir, ws: l.Apps.WorkspaceDir("notes")}
}

// plannedTask is the one task of the intent, as the engineer planned it.
func plannedTask() plan.Task {
	return plan.Task{Title: "Change the page", Priority: "medium", Labels: []string{"views"}, EstimatedLines: 20,
		Risk: "normal", Reasoning: "low", Summary: "The home page says what the notes are.",
		Criteria: []plan.Criterion{{Text: "The home page says Notes."}, {Text: "An empty page is refused by the check stage.", Failure: true}}}
}

// buildCase opens the build case of a failure at stage that run met at
// revision, recorded as run on model, and answers its id.
func (r *root) buildCase(t *testing.T, run, revision, model, stage, message string) int64 {
	t.Helper()
	opened, _, err := r.l.Cases.Build(context.Background(), knowledge.BuildObserved{AppID: "notes", RunID: run, Revision: revision,
		Request: "0001-change-the-page: Change the page", Model: model, ServerVersion: "test", StagesRun: []string{stage},
		Problems: []knowledge.BuildProblem{{Stage: stage, Message: message, Signature: build.Signature(stage, message)}}})
	if err != nil || len(opened) != 1 {
		t.Fatalf("a failed build opened %v, %v", opened, err)
	}
	return opened[0]
}

// pageCase is the build case of the emptied home page, met by the task's
// turn at the workspace's head, with the lesson it taught.
func (r *root) pageCase(t *testing.T) (caseID, lessonID int64) {
	t.Helper()
	caseID = r.buildCase(t, taskRun, r.head(t), "scripted:builder", "check", emptyPageFailure)
	lessonID, err := r.l.Lessons.Add(context.Background(), knowledge.Lesson{CaseID: caseID, Text: pageLesson, Applies: knowledge.Applies{Stage: "check"}})
	if err != nil {
		t.Fatal(err)
	}
	return caseID, lessonID
}

// head is the workspace's revision, as git says it.
func (r *root) head(t *testing.T) string {
	t.Helper()
	return strings.TrimSpace(git(t, r.ws, "rev-parse", "HEAD"))
}

// commit commits files into the application's workspace, as the owner
// working beside the launcher would, and answers the revision.
func (r *root) commit(t *testing.T, message string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(r.ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, r.ws, "add", "-A")
	git(t, r.ws, "-c", "user.name=Ada", "-c", "user.email=ada@example.com", "commit", "-q", "-m", message)
	return r.head(t)
}

// git runs git in dir and answers what it printed.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// page is a run's change of the home page to content; "" empties it.
func page(content string) scripted.Reply {
	args, _ := json.Marshal(map[string]any{"files": []map[string]string{{"path": "site/index.html", "action": "overwrite", "content": content}}})
	return scripted.Reply{ToolCalls: []scripted.Call{{Name: "source_change", Args: string(args)}}}
}

var (
	wholePage = page("<h1>Notes</h1>\n<p>Tags soon.</p>\n")
	emptyPage = page("")
	cycle     = scripted.Reply{ToolCalls: []scripted.Call{{Name: "candidate_cycle", Args: `{}`}}}
	done      = scripted.Reply{Text: "Done."}
)

// turn is one run's replies: its change of the page, a build and check,
// and its last word.
func turn(change scripted.Reply) []scripted.Reply {
	return []scripted.Reply{change, cycle, done}
}

// runs is n runs' replies, each the turn of change.
func runs(n int, change scripted.Reply) []scripted.Reply {
	var out []scripted.Reply
	for range n {
		out = append(out, turn(change)...)
	}
	return out
}

// replayRows are the rows the launcher's store keeps of the replay whose
// manifest is hash.
func (r *root) replayRows(t *testing.T, hash string) []knowledge.ReplayRun {
	t.Helper()
	rows, err := knowledge.NewReplays(r.l.Knowledge.DB(), time.Now).Runs(context.Background(), hash)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// count is the number of rows of table in the launcher's knowledge store.
func (r *root) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := r.l.Knowledge.DB().Read.Get(&n, `SELECT count(*) FROM `+table); err != nil {
		t.Fatal(err)
	}
	return n
}
