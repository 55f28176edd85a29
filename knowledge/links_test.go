package knowledge_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/plan"
	"autoapp/intent/request"
	"autoapp/intent/workspace"
	"autoapp/knowledge"
	"autoapp/migrations"
	"autoapp/migrations/migrationstest"
)

// linkStores is a knowledge store and an intents store under one root.
type linkStores struct {
	root      string
	knowledge *knowledge.Store
	intents   *migrations.DB
	// backlog answers what the links read of the intents store.
	backlog *intent.Service
	now     func() time.Time
}

func openLinkStores(t testing.TB) *linkStores {
	t.Helper()
	root := t.TempDir()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { return at }
	ks, err := knowledge.Open(filepath.Join(root, "launcher", "knowledge.sqlite"), now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ks.Close() })
	is := migrationstest.IntentsIn(t, root)
	return &linkStores{root: root, knowledge: ks, intents: is, backlog: intent.NewService(is, root, now, intent.Collaborators{Journal: request.Journal{}}), now: now}
}

// taskRan makes application notes with one running task, 0001-add-tags,
// whose plan locks locks, in progress as run runID.
func (s *linkStores) taskRan(t *testing.T, runID string, locks ...string) {
	t.Helper()
	ctx := context.Background()
	if _, err := app.NewService(s.intents, s.root, s.now, workspace.Repositories{Now: s.now}).CreateFromTemplate(ctx, "notes", "Notes", "static"); err != nil {
		t.Fatal(err)
	}
	backlog := s.backlog
	in, err := backlog.OpenDraft(ctx, "notes", "Add tags to notes.", intent.Analysis{Restated: []string{"Tags on notes."}})
	if err != nil {
		t.Fatal(err)
	}
	task, err := backlog.AddTask(ctx, in.ID, plan.Task{Title: "Add tags", Priority: "high", Labels: []string{"views"},
		EstimatedLines: 30, Locks: locks, Risk: "normal", Reasoning: "low", Summary: "Tags on notes.",
		Criteria: []plan.Criterion{{Text: "The tags show"}}, NoFailurePath: "nothing to refuse"})
	if err != nil {
		t.Fatal(err)
	}
	for i, err := range []error{
		backlog.Submit(ctx, in.ID),
		backlog.MoveIntent(ctx, in.ID, intent.IntentRunning, "run"),
		backlog.MoveTask(ctx, task.ID, intent.TaskInQueue, intent.Move{Reason: "a run starts"}),
		backlog.MoveTask(ctx, task.ID, intent.TaskInProgress, intent.Move{Reason: "its turn", RunID: runID}),
	} {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
}

// shown is a link as the tests compare it: every column but the id.
func shown(l knowledge.Link) string {
	return fmt.Sprintf("%s %s:%s -> %s:%s app=%s from %s", l.Kind, l.FromKind, l.FromID, l.ToKind, l.ToID, l.AppID, l.Source())
}

func shownLinks(t *testing.T, db *migrations.DB, q knowledge.LinkQuery) []string {
	t.Helper()
	links, err := knowledge.Links(context.Background(), db, q)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, l := range links {
		out = append(out, shown(l))
	}
	return out
}

func TestRebuildLinksNamesTheRowEachLinkWasReadFrom(t *testing.T) {
	ctx := context.Background()
	s := openLinkStores(t)
	const run1, run2 = "intent-1-0001-add-tags-a1", "intent-1-0001-add-tags-a2"
	s.taskRan(t, run1, "views/notes.templ", "notes", "views/*.templ")
	kdb := s.knowledge.DB()

	turn, err := s.knowledge.RecordTurn(ctx, knowledge.Turn{AppID: "notes", RunID: run1, Kind: knowledge.TurnBuilder,
		Instructions: "build", Request: "Add tags to notes."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.knowledge.RecordTurn(ctx, knowledge.Turn{AppID: "notes", Kind: knowledge.TurnChat, Instructions: "chat"}); err != nil {
		t.Fatal(err) // a turn with no run links nothing
	}
	cases := knowledge.NewCases(kdb, s.now)
	opened, _, err := cases.Build(ctx, knowledge.BuildObserved{AppID: "notes", RunID: run1, Revision: "rev-1",
		ContextID: turn, StagesRun: []string{"compile"},
		Problems: []knowledge.BuildProblem{problem("compile", "main.go:12: undefined: Tag")}})
	if err != nil || len(opened) != 1 {
		t.Fatalf("a failed build opened %v, %v", opened, err)
	}
	for _, edit := range []struct{ run, summary string }{
		{run1, "source.edit main.go\n(2 hunks)"},
		{run2, "source.change create views/tags.templ, modify main.go"},
		{"", "source.edit README.md"},
		{run2, "candidate.build"},
	} {
		if err := cases.AppendEdit(ctx, "notes", edit.run, edit.summary); err != nil {
			t.Fatal(err)
		}
	}
	_, resolved, err := cases.Build(ctx, knowledge.BuildObserved{AppID: "notes", RunID: run2, Revision: "rev-2",
		StagesRun: []string{"compile", "vet", "test"}, OK: true})
	if err != nil || len(resolved) != 1 {
		t.Fatalf("a passing build resolved %v, %v", resolved, err)
	}
	lesson, err := knowledge.NewLessons(kdb, s.now, knowledge.Running{}).Add(ctx, knowledge.Lesson{CaseID: opened[0],
		Text: "Declare a type before a handler uses it.", Applies: knowledge.Applies{Stage: "compile", Files: []string{"main.go"}}})
	if err != nil {
		t.Fatal(err)
	}

	n, err := knowledge.RebuildLinks(ctx, kdb, s.backlog)
	if err != nil {
		t.Fatal(err)
	}
	c, l, tr := fmt.Sprint(opened[0]), fmt.Sprint(lesson), fmt.Sprint(turn)
	want := []string{
		"ran-as task:0001-add-tags -> run:" + run1 + " app=notes from task_runs:" + run1,
		"planned task:0001-add-tags -> file:views/notes.templ app=notes from tasks:1",
		"edited case:" + c + " -> file:README.md app=notes from cases:" + c,
		"edited case:" + c + " -> file:main.go app=notes from cases:" + c,
		"edited case:" + c + " -> file:views/tags.templ app=notes from cases:" + c,
		"edited run:" + run1 + " -> file:main.go app=notes from cases:" + c,
		"edited run:" + run2 + " -> file:main.go app=notes from cases:" + c,
		"edited run:" + run2 + " -> file:views/tags.templ app=notes from cases:" + c,
		"edited task:0001-add-tags -> file:main.go app=notes from cases:" + c,
		"opened-in case:" + c + " -> run:" + run1 + " app=notes from cases:" + c,
		"resolved-in case:" + c + " -> run:" + run2 + " app=notes from cases:" + c,
		"distilled-from lesson:" + l + " -> case:" + c + " app=notes from lessons:" + l,
		"turn run:" + run1 + " -> turn:" + tr + " app=notes from contexts:" + tr,
	}
	got := shownLinks(t, kdb, knowledge.LinkQuery{})
	if !slices.Equal(got, want) || n != len(want) {
		t.Fatalf("rebuild wrote %d links:\n%s\nwant:\n%s", n, join(got), join(want))
	}
	if got := shownLinks(t, kdb, knowledge.LinkQuery{AppID: "blog"}); len(got) != 0 {
		t.Errorf("another application's links: %q", got)
	}

	t.Run("a second rebuild writes the same rows", func(t *testing.T) {
		before, err := knowledge.Links(ctx, kdb, knowledge.LinkQuery{})
		if err != nil {
			t.Fatal(err)
		}
		again, err := knowledge.RebuildLinks(ctx, kdb, s.backlog)
		if err != nil || again != n {
			t.Fatalf("second rebuild: %d, %v; want %d", again, err, n)
		}
		after, err := knowledge.Links(ctx, kdb, knowledge.LinkQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(before, after) {
			t.Fatalf("rows changed:\n%v\n%v", before, after)
		}
	})

	t.Run("servings are read when the table exists", func(t *testing.T) {
		var exists int
		if err := kdb.Read.Get(&exists, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'servings'`); err != nil {
			t.Fatal(err)
		}
		insert := `INSERT INTO servings (id, lesson_id, run_id, served_at, reason) VALUES (7, ?, ?, 0, 'words')`
		if exists == 0 {
			// A store from before servings: the index reads the columns it
			// needs from whatever table there is.
			if _, err := kdb.Write.Exec(`CREATE TABLE servings (id INTEGER PRIMARY KEY, lesson_id INTEGER, run_id TEXT)`); err != nil {
				t.Fatal(err)
			}
			insert = `INSERT INTO servings (id, lesson_id, run_id) VALUES (7, ?, ?)`
		}
		if _, err := kdb.Write.Exec(insert, lesson, run2); err != nil {
			t.Fatal(err)
		}
		if _, err := knowledge.RebuildLinks(ctx, kdb, s.backlog); err != nil {
			t.Fatal(err)
		}
		served := "served-to lesson:" + l + " -> run:" + run2 + " app=notes from servings:7"
		if got := shownLinks(t, kdb, knowledge.LinkQuery{AppID: "notes"}); !slices.Contains(got, served) {
			t.Fatalf("no %q in:\n%s", served, join(got))
		}
	})
}

func join(lines []string) string {
	out := ""
	for _, l := range lines {
		out += "  " + l + "\n"
	}
	return out
}

// twoTasks makes application notes with a running intent of two queued
// tasks, 0001-add-tags (locking main.go) and 0002-show-tags (locking
// views/tags.templ), and answers their ids.
func (s *linkStores) twoTasks(t *testing.T) (first, second int64) {
	t.Helper()
	ctx := context.Background()
	if _, err := app.NewService(s.intents, s.root, s.now, workspace.Repositories{Now: s.now}).CreateFromTemplate(ctx, "notes", "Notes", "static"); err != nil {
		t.Fatal(err)
	}
	in, err := s.backlog.OpenDraft(ctx, "notes", "Tags on notes.", intent.Analysis{Restated: []string{"Tags on notes."}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, p := range []struct{ title, lock string }{{"Add tags", "main.go"}, {"Show tags", "views/tags.templ"}} {
		task, err := s.backlog.AddTask(ctx, in.ID, plan.Task{Title: p.title, Priority: "high", Labels: []string{"views"},
			EstimatedLines: 30, Locks: []string{p.lock}, Risk: "normal", Reasoning: "low", Summary: "Tags on notes.",
			Criteria: []plan.Criterion{{Text: "The tags show"}}, NoFailurePath: "nothing to refuse"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	if err := s.backlog.Submit(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.backlog.MoveIntent(ctx, in.ID, intent.IntentRunning, "run"); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if err := s.backlog.MoveTask(ctx, id, intent.TaskInQueue, intent.Move{Reason: "a run starts"}); err != nil {
			t.Fatal(err)
		}
	}
	return ids[0], ids[1]
}

// attempt runs one attempt of task as runID the way the executor records
// it: the task starts, the turn is kept, a build fails with message (and
// passes when fixed), a file is edited, and the task moves to end.
func (s *linkStores) attempt(t *testing.T, task int64, runID, message, edit string, fixed bool, end intent.TaskStatus) {
	t.Helper()
	ctx := context.Background()
	if err := s.backlog.MoveTask(ctx, task, intent.TaskInProgress, intent.Move{Reason: "its turn", RunID: runID}); err != nil {
		t.Fatal(err)
	}
	turn, err := s.knowledge.RecordTurn(ctx, knowledge.Turn{AppID: "notes", RunID: runID, Kind: knowledge.TurnBuilder,
		Instructions: "build", Request: "Tags on notes."})
	if err != nil {
		t.Fatal(err)
	}
	cases := knowledge.NewCases(s.knowledge.DB(), s.now)
	if _, _, err := cases.Build(ctx, knowledge.BuildObserved{AppID: "notes", RunID: runID, Revision: "rev-" + runID,
		ContextID: turn, StagesRun: []string{"compile"}, Problems: []knowledge.BuildProblem{problem("compile", message)}}); err != nil {
		t.Fatal(err)
	}
	if err := cases.AppendEdit(ctx, "notes", runID, edit); err != nil {
		t.Fatal(err)
	}
	if fixed {
		if _, _, err := cases.Build(ctx, knowledge.BuildObserved{AppID: "notes", RunID: runID, Revision: "rev-" + runID + "-fixed",
			StagesRun: []string{"compile"}, OK: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.backlog.MoveTask(ctx, task, end, intent.Move{Reason: "judged", RunID: runID}); err != nil {
		t.Fatal(err)
	}
}

// linkIDs is the id of every row of the index, by the row as shown.
func linkIDs(t *testing.T, db *migrations.DB) map[string]int64 {
	t.Helper()
	links, err := knowledge.Links(context.Background(), db, knowledge.LinkQuery{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, l := range links {
		ids[shown(l)] = l.ID
	}
	return ids
}

func TestUpdateLinksWritesOnlyTheRowsOfTheRunThatEnded(t *testing.T) {
	ctx := context.Background()
	s := openLinkStores(t)
	kdb := s.knowledge.DB()
	first, second := s.twoTasks(t)
	const run1, run2 = "intent-1-0001-add-tags-a1", "intent-1-0002-show-tags-a1"
	s.attempt(t, first, run1, "main.go:12: undefined: Tag", "source.edit main.go", true, intent.TaskCompleted)
	lesson, err := knowledge.NewLessons(kdb, s.now, knowledge.Running{}).Add(ctx, knowledge.Lesson{CaseID: 1,
		Text: "Declare a type before a handler uses it.", Applies: knowledge.Applies{Stage: "compile"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := knowledge.UpdateLinks(ctx, kdb, s.backlog, run1); err != nil {
		t.Fatal(err)
	}
	before := linkIDs(t, kdb)

	s.attempt(t, second, run2, "views/tags.templ:3: unexpected }", "source.change create views/tags.templ", false, intent.TaskFailed)
	if _, err := kdb.Write.Exec(`INSERT INTO servings (lesson_id, run_id, served_at, reason) VALUES (?, ?, 0, 'words')`, lesson, run2); err != nil {
		t.Fatal(err)
	}
	// The same lesson chosen again and cut by the budget was not served.
	if _, err := kdb.Write.Exec(`INSERT INTO servings (lesson_id, run_id, served_at, reason, included) VALUES (?, ?, 0, 'words', 0)`, lesson, run2); err != nil {
		t.Fatal(err)
	}
	u, err := knowledge.UpdateLinks(ctx, kdb, s.backlog, run2)
	if err != nil {
		t.Fatal(err)
	}
	after := linkIDs(t, kdb)

	var added []string
	for row, id := range after {
		if old, ok := before[row]; ok {
			if old != id {
				t.Errorf("%s was written again: id %d, then %d", row, old, id)
			}
			continue
		}
		added = append(added, row)
	}
	for row := range before {
		if _, ok := after[row]; !ok {
			t.Errorf("%s was deleted", row)
		}
	}
	slices.Sort(added)
	want := []string{
		"edited case:2 -> file:views/tags.templ app=notes from cases:2",
		"edited run:" + run2 + " -> file:views/tags.templ app=notes from cases:2",
		"edited task:0002-show-tags -> file:views/tags.templ app=notes from cases:2",
		"opened-in case:2 -> run:" + run2 + " app=notes from cases:2",
		"ran-as task:0002-show-tags -> run:" + run2 + " app=notes from task_runs:" + run2,
		"served-to lesson:1 -> run:" + run2 + " app=notes from servings:1",
		"turn run:" + run2 + " -> turn:2 app=notes from contexts:2",
	}
	if !slices.Equal(added, want) {
		t.Fatalf("the update added:\n%s\nwant:\n%s", join(added), join(want))
	}
	if u.Rebuilt || u.Written != len(want) || u.Deleted != 0 {
		t.Errorf("UpdateLinks = %+v, want %d written and nothing rebuilt or deleted", u, len(want))
	}

	t.Run("the result is what a full rebuild writes", func(t *testing.T) {
		updated := shownLinks(t, kdb, knowledge.LinkQuery{})
		if _, err := knowledge.RebuildLinks(ctx, kdb, s.backlog); err != nil {
			t.Fatal(err)
		}
		rebuilt := shownLinks(t, kdb, knowledge.LinkQuery{})
		slices.Sort(updated)
		slices.Sort(rebuilt)
		if !slices.Equal(updated, rebuilt) {
			t.Fatalf("updated:\n%s\nrebuilt:\n%s", join(updated), join(rebuilt))
		}
	})
}

func TestUpdateLinksRebuildsOnlyAnIndexAnOlderVersionWrote(t *testing.T) {
	ctx := context.Background()
	s := openLinkStores(t)
	kdb := s.knowledge.DB()
	first, second := s.twoTasks(t)
	s.attempt(t, first, "run-1", "main.go:12: undefined: Tag", "source.edit main.go", true, intent.TaskCompleted)

	u, err := knowledge.UpdateLinks(ctx, kdb, s.backlog)
	if err != nil || !u.Rebuilt {
		t.Fatalf("a store with no index version: %+v, %v; want a rebuild", u, err)
	}
	before := linkIDs(t, kdb)
	if len(before) == 0 {
		t.Fatal("the rebuild wrote nothing")
	}

	u, err = knowledge.UpdateLinks(ctx, kdb, s.backlog)
	if err != nil || u != (knowledge.LinksUpdate{}) {
		t.Fatalf("a start with the current version: %+v, %v; want nothing done", u, err)
	}
	if after := linkIDs(t, kdb); !maps.Equal(after, before) {
		t.Fatalf("a start with the current version changed the index:\n%v\n%v", before, after)
	}

	t.Run("an attempt the last launcher never finished is caught up on at start", func(t *testing.T) {
		if err := s.backlog.MoveTask(ctx, second, intent.TaskInProgress, intent.Move{Reason: "its turn", RunID: "run-2"}); err != nil {
			t.Fatal(err)
		}
		u, err := knowledge.UpdateLinks(ctx, kdb, s.backlog)
		if err != nil || u.Rebuilt || u.Written != 1 || u.Deleted != 0 {
			t.Fatalf("UpdateLinks = %+v, %v; want the one row of run-2 written", u, err)
		}
		if _, ok := linkIDs(t, kdb)["ran-as task:0002-show-tags -> run:run-2 app=notes from task_runs:run-2"]; !ok {
			t.Fatal("no ran-as row for run-2")
		}
	})

	t.Run("an index an older version wrote is rebuilt", func(t *testing.T) {
		if _, err := kdb.Write.Exec(`UPDATE links_state SET version = version - 1`); err != nil {
			t.Fatal(err)
		}
		u, err := knowledge.UpdateLinks(ctx, kdb, s.backlog)
		if err != nil || !u.Rebuilt {
			t.Fatalf("UpdateLinks = %+v, %v; want a rebuild", u, err)
		}
	})
}
