package replay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"autoapp/executor/acceptance"
	"autoapp/executor/builder"
	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
	"autoapp/knowledge"
)

// Manifest is everything a replay holds still, written before anything
// runs and kept as a blob that every result row names.
type Manifest struct {
	StartedAt time.Time `json:"startedAt"`
	// Version is the launcher's that ran the replay.
	Version string `json:"version"`
	// Case is the case replayed, with what its runs start from.
	Case CaseEntry `json:"case"`
	// Lesson is the lesson under test; nil when the case taught none, and
	// only the without arm runs.
	Lesson *LessonEntry `json:"lesson,omitempty"`
	Model  ModelEntry   `json:"model"`
	// Runs is how many runs each arm makes.
	Runs        int `json:"runs"`
	StepCap     int `json:"stepCap"`
	TurnMinutes int `json:"turnMinutes"`
	// Instructions are the ones the replay's turns run with; each case
	// names the ones its own turn was given.
	Instructions InstructionsEntry `json:"instructions"`
	// Regression are the other resolved cases of the application whose
	// lesson is confirmed, each replayed once with the new lesson.
	Regression []CaseEntry `json:"regression"`
	// Skipped are the cases of the regression set that cannot be replayed.
	Skipped []SkippedCase `json:"skipped,omitempty"`
}

// CaseEntry is one case as a replay runs it.
type CaseEntry struct {
	ID        int64  `json:"id"`
	Kind      string `json:"kind"`
	AppID     string `json:"app"`
	Stage     string `json:"stage,omitempty"`
	Signature string `json:"signature"`
	// Problem is the failure as first seen.
	Problem string `json:"problem"`
	// Request is the case's request; Message the builder's message the
	// runs are given, its task's plan and the answers given before the
	// case.
	Request  string `json:"request"`
	Message  string `json:"message"`
	IntentID int64  `json:"intent"`
	Task     string `json:"task"`
	// RunID is the turn that met the failure, ContextID its contexts row.
	RunID     string `json:"runId"`
	ContextID int64  `json:"contextId,omitempty"`
	// Revision is the one the failure was met at, where every run starts;
	// ResolvedRevision the one that resolved it; Release the release
	// before the repair.
	Revision         string `json:"revision"`
	ResolvedRevision string `json:"resolvedRevision,omitempty"`
	Release          string `json:"release,omitempty"`
	// Files are the SHA-256 of autoapp.json and of the lock files at
	// Revision.
	Files map[string]string `json:"files"`
	// CaseInstructions is the hash of the instructions the case's turn was
	// given, from its contexts row; "" when it recorded none.
	CaseInstructions string `json:"caseInstructions,omitempty"`
	// Example is a check case's own acceptance example, by its content
	// hash, as the runs are judged with it.
	Example *ExampleEntry `json:"example,omitempty"`
	// Given are the lessons a regression run is given.
	Given []int64 `json:"given,omitempty"`
}

// LessonEntry is the lesson under test.
type LessonEntry struct {
	ID     int64  `json:"id"`
	Status string `json:"status"`
	Origin string `json:"origin"`
	Text   string `json:"text"`
}

// ModelEntry is the model every run is asked: the one the case's turn ran on.
type ModelEntry struct {
	Ref      string `json:"ref"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// InstructionsEntry is the instructions the replay's turns run with.
type InstructionsEntry struct {
	Hash string `json:"hash"`
	Text string `json:"text"`
}

// ExampleEntry is a check case's example as it is judged.
type ExampleEntry struct {
	ID   string `json:"id"`
	Hash string `json:"hash"`
	Text string `json:"text"`
}

// SkippedCase is a case of the regression set that cannot be replayed.
type SkippedCase struct {
	ID  int64  `json:"id"`
	Why string `json:"why"`
}

// lockFiles are the lock files whose hashes a manifest records when the
// revision holds them at the workspace's top.
var lockFiles = []string{"go.sum", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml",
	"bun.lock", "bun.lockb", "Cargo.lock", "Gemfile.lock", "poetry.lock", "uv.lock", "Pipfile.lock", "composer.lock"}

// maxExampleHistory bounds the revisions searched for a check case's
// example when neither of its own revisions holds it.
const maxExampleHistory = 200

// prepared is a case read for a replay: its application, its task as its
// turn saw it, its example, and its manifest entry.
type prepared struct {
	c       knowledge.Case
	app     app.App
	intent  intent.IntentDetail
	task    intent.TaskDetail
	example *acceptance.Example
	entry   CaseEntry
}

// prepare reads what replaying c needs, refusing with a sentence a case
// that cannot be replayed.
func (h *Harness) prepare(ctx context.Context, c knowledge.Case) (*prepared, error) {
	a, err := h.d.Apps.Get(ctx, c.AppID)
	if err != nil {
		return nil, err
	}
	var taskID int64
	if err := h.d.Backlog.TasksOfRuns(ctx, []string{c.OpenedRunID}, func(id int64, _, _ string, _, _ []string) { taskID = id }); err != nil {
		return nil, err
	}
	if taskID == 0 {
		return nil, refuse(refusal.Conflict, "Case %d was met by %s, not by a task's builder turn; only a case a builder turn met can be replayed.", c.ID, c.OpenedRunID)
	}
	td, err := h.d.Backlog.Task(ctx, taskID)
	if err != nil {
		return nil, err
	}
	d, err := h.d.Backlog.Get(ctx, td.IntentID)
	if err != nil {
		return nil, err
	}
	// The task as its turn saw it: no runs before it that this clone
	// knows of, none of its criteria passed, the answers given by then.
	task := td
	task.RunIDs, task.Events, task.ExampleHashes, task.Question = nil, nil, nil, ""
	task.Status, task.Answers = intent.TaskInProgress, nil
	for _, an := range td.Answers {
		if an.At.Before(c.OpenedAt) {
			task.Answers = append(task.Answers, an)
		}
	}
	if c.RevisionBefore == "" {
		return nil, refuse(refusal.Conflict, "Case %d records no revision its failure was met at; it cannot be replayed.", c.ID)
	}
	ws, err := workspace.Open(h.d.Apps.WorkspaceDir(c.AppID), h.d.Now)
	if err != nil {
		return nil, fmt.Errorf("replay: the workspace of %s: %w", c.AppID, err)
	}
	defer ws.Close()
	rev, err := ws.Commit(ctx, c.RevisionBefore)
	if _, ok := workspace.AsProblems(err); ok {
		return nil, refuse(refusal.Conflict, "Case %d was met at revision %s, which the workspace of %s no longer holds; it cannot be replayed.",
			c.ID, short(c.RevisionBefore), c.AppID)
	}
	if err != nil {
		return nil, err
	}
	files, err := fileHashes(ctx, ws, rev)
	if err != nil {
		return nil, err
	}
	entry := CaseEntry{ID: c.ID, Kind: c.Kind, AppID: c.AppID, Stage: c.Stage, Signature: c.Signature, Problem: c.Message,
		Request: c.Request, Message: builder.Message(c.AppID, task.Task.Task, plan.Markdown(task.Task.Task, nil), task.Answers, ""),
		IntentID: d.ID, Task: task.Slug, RunID: c.OpenedRunID, ContextID: c.ContextID,
		Revision: rev, ResolvedRevision: c.ResolvedRevision, Release: c.ReleaseBefore, Files: files}
	if c.ContextID != 0 {
		row, _, err := h.d.Knowledge.Turn(ctx, c.ContextID)
		if err == nil {
			entry.CaseInstructions = row.InstructionsHash
		} else if !isRefusal(err) {
			return nil, err
		}
	}
	pc := &prepared{c: c, app: a, intent: d, task: task, entry: entry}
	if c.Kind == knowledge.CaseCheck {
		ex, text, err := caseExample(ctx, ws, c, rev)
		if err != nil {
			return nil, err
		}
		pc.example = &ex
		pc.entry.Example = &ExampleEntry{ID: ex.ID, Hash: ex.Hash, Text: text}
	}
	return pc, nil
}

// fileHashes are the SHA-256 of autoapp.json and of each lock file at the
// top of revision rev.
func fileHashes(ctx context.Context, ws *workspace.Workspace, rev string) (map[string]string, error) {
	out, err := workspace.Git(ctx, ws.Dir(), "ls-tree", "-z", "--full-tree", rev)
	if err != nil {
		return nil, fmt.Errorf("replay: the files at %s: %w", short(rev), err)
	}
	want := append([]string{app.ManifestFile}, lockFiles...)
	hashes := map[string]string{}
	for entry := range bytes.SplitSeq(out, []byte{0}) {
		// <mode> <type> <object>\t<path>
		meta, name, ok := strings.Cut(string(entry), "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 3 || fields[1] != "blob" || !slices.Contains(want, name) {
			continue
		}
		data, err := workspace.Git(ctx, ws.Dir(), "cat-file", "blob", fields[2])
		if err != nil {
			return nil, fmt.Errorf("replay: %s at %s: %w", name, short(rev), err)
		}
		sum := sha256.Sum256(data)
		hashes[name] = hex.EncodeToString(sum[:])
	}
	return hashes, nil
}

// caseExample is a check case's own example: the file the case names, in
// the version whose steps hash to the case's content hash, looked for at
// the revision the failure was met at, at the one that resolved it, and
// then back through the file's history.
func caseExample(ctx context.Context, ws *workspace.Workspace, c knowledge.Case, rev string) (acceptance.Example, string, error) {
	dir := path.Clean(app.DefaultAcceptance)
	if b, err := ws.Blob(ctx, rev, app.ManifestFile); err == nil {
		if m, problems := app.ParseManifest(b.Data); len(problems) == 0 {
			dir = m.AcceptanceDir()
		}
	}
	file := path.Join(dir, c.ExampleID+".json")
	revs := []string{rev}
	if c.ResolvedRevision != "" {
		revs = append(revs, c.ResolvedRevision)
	}
	if out, err := workspace.Git(ctx, ws.Dir(), "log", "--format=%H", fmt.Sprintf("--max-count=%d", maxExampleHistory), "--all", "--", file); err == nil {
		revs = append(revs, strings.Fields(string(out))...)
	}
	for _, r := range revs {
		b, err := ws.Blob(ctx, r, file)
		if err != nil {
			continue
		}
		if ex, problems := acceptance.Parse(c.ExampleID, b.Data); len(problems) == 0 && ex.Hash == c.ExampleHash {
			return ex, string(b.Data), nil
		}
	}
	return acceptance.Example{}, "", refuse(refusal.Conflict, "The example of case %d (%s, content %s) is in no revision of the workspace; the case cannot be judged.",
		c.ID, c.ExampleID, short(c.ExampleHash))
}

// short is a revision or a hash as a person reads it.
func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func isRefusal(err error) bool {
	var re *refusal.Error
	return errors.As(err, &re)
}
