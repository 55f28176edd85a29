package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"autoapp/executor"
	"autoapp/executor/ai"
	"autoapp/intent/app"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
)

// turnOneFile is where a two-turn run keeps its first turn, in the run's
// folder: what a restarted launcher gives the second turn. lastTurnFile
// is where every run keeps its last turn.
const (
	turnOneFile  = "turn-one.json"
	lastTurnFile = "turn.json"
)

// KeptTurns are the turns the run in dir kept, in order: a two-turn
// run's two, another run's one.
func KeptTurns(dir string) ([]KeptTurn, error) {
	var out []KeptTurn
	for _, name := range []string{turnOneFile, lastTurnFile} {
		k, err := readKept(dir, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// keepTurn writes out's turn, run runID, into dir as name.
func keepTurn(dir, name, runID string, out executor.BuilderOutcome) (KeptTurn, error) {
	k := KeptTurn{RunID: runID, Message: out.Message, Words: out.Result.Words, Ended: string(out.Result.Ended), Calls: out.Result.Calls,
		Usage: out.Result.Usage, ModelMS: out.Result.ModelTime.Milliseconds()}
	if k.Calls == nil {
		k.Calls = []ai.Call{}
	}
	b, err := json.MarshalIndent(k, "", "  ")
	if err != nil {
		return KeptTurn{}, fmt.Errorf("replay: the turn: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o600); err != nil {
		return KeptTurn{}, fmt.Errorf("replay: the turn: %w", err)
	}
	return k, nil
}

// KeptTurn is a turn of a run as the run's folder keeps it: a two-turn
// run's first in turn-one.json, every run's last in turn.json.
type KeptTurn struct {
	RunID string `json:"runId"`
	// Message is the request as the turn was given it; Words what the
	// model wrote before it was stopped.
	Message string    `json:"message"`
	Words   string    `json:"words"`
	Ended   string    `json:"ended"`
	Calls   []ai.Call `json:"calls"`
	Usage   ai.Usage  `json:"usage"`
	ModelMS int64     `json:"modelMs"`
}

// turnOne runs a two-turn task's first turn, stopped as a person pressing
// stop would the moment a call that edits has landed, and keeps it in
// dir. A turn that lands no edit ends as it ends.
func (e *evaluationRun) turnOne(ctx context.Context, x *executor.Executor, bt executor.BuilderTurn, dir string) (KeptTurn, error) {
	turnCtx, stop := context.WithCancel(ctx)
	defer stop()
	bt.OnStep = func(c ai.Call) {
		if landed(c) {
			stop()
		}
	}
	out := x.RunBuilderTurn(turnCtx, bt)
	switch {
	case ctx.Err() != nil:
		return KeptTurn{}, ErrStopped
	case out.Result.Ended == ai.EndProvider:
		return KeptTurn{}, refuse(refusal.Failed, "Run %s of the evaluation got no answer from the model: %s The evaluation stopped; the runs that finished are kept.",
			bt.RunID, out.Result.Sentence)
	}
	return keepTurn(dir, turnOneFile, bt.RunID, out)
}

// readKept reads back a turn the run in dir kept as name.
func readKept(dir, name string) (KeptTurn, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return KeptTurn{}, fmt.Errorf("replay: the turn: %w", err)
	}
	var k KeptTurn
	if err := json.Unmarshal(b, &k); err != nil {
		return KeptTurn{}, fmt.Errorf("replay: the turn: %w", err)
	}
	return k, nil
}

// history is what the second turn is given before ContinueMessage under
// mode: the request, and turn one's words (text) or an assistant turn
// naming turn one's run with that run's calls and their results.
func (one KeptTurn) history(mode string) []ai.Message {
	said := ai.Message{Role: ai.RoleAssistant, Text: one.Words}
	if mode == TextHistory {
		if said.Text == "" {
			said.Text = "(I wrote nothing before I was stopped.)"
		}
	} else {
		said.Text = strings.TrimSpace(fmt.Sprintf("Run %s, stopped after %d tool calls; its calls and their results follow.\n\n%s",
			one.RunID, len(one.Calls), one.Words))
		said.Calls = one.Calls
	}
	return []ai.Message{{Role: ai.RoleUser, Text: one.Message}, said}
}

// touch commits t.TouchLine at the top of t.Touch in a's workspace,
// between the turns, as someone working beside the engineer would.
func touch(ctx context.Context, a app.App, w *world, t EvalTask, runID string, now func() time.Time) error {
	ws, err := workspace.Open(w.apps.WorkspaceDir(a.ID), now)
	if err != nil {
		return fmt.Errorf("replay: touch %s: %w", t.Touch, err)
	}
	defer ws.Close()
	b, err := ws.ReadFile(t.Touch, workspace.MaxFileBytes)
	if err != nil {
		return fmt.Errorf("replay: touch %s: %w", t.Touch, err)
	}
	_, err = ws.Change(ctx, []workspace.FileChange{{Path: t.Touch, Action: workspace.Overwrite, Content: t.TouchLine + string(b)}},
		workspace.CommitMeta{RunID: runID, CallID: runID + ":touch"})
	if err != nil {
		return fmt.Errorf("replay: touch %s: %w", t.Touch, err)
	}
	return nil
}

// filesOf are the files of the workspace at dir, by slash path, .git left
// out: what existed as the second turn started.
func filesOf(dir string) map[string]bool {
	out := map[string]bool{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			if rel, err := filepath.Rel(dir, p); err == nil {
				out[filepath.ToSlash(rel)] = true
			}
		}
		return nil
	})
	return out
}

// TurnTwo is what a two-turn run's second turn did, measured against its
// first.
type TurnTwo struct {
	RunID string `json:"runId"`
	// FirstRunID is turn one's run, FirstCalls its calls and FirstEnded
	// how it ended (aborted when an edit landed).
	FirstRunID string `json:"firstRunId"`
	FirstCalls int    `json:"firstCalls"`
	FirstEnded string `json:"firstEnded"`
	// ReadsBeforeEdit counts the second turn's reads (source.read,
	// source.list, source.search, spec.read, knowledge.show) before its
	// first edit that landed, all of them when none did.
	ReadsBeforeEdit int `json:"readsBeforeEdit"`
	// RepeatedReads counts its reads of a path, folder, query, topic or
	// lesson turn one had read.
	RepeatedReads int `json:"repeatedReads"`
	// RepeatedActions counts its hunks whose find turn one applied to the
	// same file, and its creations of a file that existed as it started.
	RepeatedActions int `json:"repeatedActions"`
	// The second turn's own tokens; Reported says it reported them all.
	InputTokens    int  `json:"inputTokens"`
	OutputTokens   int  `json:"outputTokens"`
	TokensReported bool `json:"tokensReported"`
	// Touched is the file committed between the turns, "" for none;
	// ReadTouchedFirst says the second turn read it before its first
	// attempt to edit it (a turn that never edited it did not).
	Touched          string `json:"touched,omitempty"`
	ReadTouchedFirst bool   `json:"readTouchedFirst"`
}

// Tokens is what the second turn is known to have used.
func (s TurnTwo) Tokens() int { return s.InputTokens + s.OutputTokens }

// secondTurn measures the second turn's calls against turn one: existed
// are the files as it started, touched the file committed between the
// turns.
func secondTurn(one KeptTurn, calls []ai.Call, existed map[string]bool, touched string) TurnTwo {
	s := TurnTwo{FirstRunID: one.RunID, FirstCalls: len(one.Calls), FirstEnded: one.Ended, Touched: touched}
	readBefore := map[string]bool{}
	applied := map[string]bool{}
	for _, c := range one.Calls {
		if k, ok := readKey(c); ok {
			readBefore[k] = true
		}
		if landed(c) {
			for _, h := range hunksOf(c) {
				applied[h] = true
			}
		}
	}
	edited, readTouched, editTouched := false, -1, -1
	for i, c := range calls {
		if k, ok := readKey(c); ok {
			if !edited {
				s.ReadsBeforeEdit++
			}
			if readBefore[k] {
				s.RepeatedReads++
			}
			if touched != "" && readTouched < 0 && k == "source.read "+touched {
				readTouched = i
			}
		}
		if !attempted(c) {
			continue
		}
		for _, h := range hunksOf(c) {
			if applied[h] {
				s.RepeatedActions++
			}
		}
		for _, f := range filesChanged(c) {
			if f.Action == workspace.Create && existed[path.Clean(f.Path)] {
				s.RepeatedActions++
			}
		}
		if touched != "" && editTouched < 0 && editsFile(c, touched) {
			editTouched = i
		}
		if landed(c) {
			edited = true
		}
	}
	s.ReadTouchedFirst = readTouched >= 0 && editTouched >= 0 && readTouched < editTouched
	return s
}

// landed says c is an edit that landed: a source.edit or source.change
// that succeeded, or a cycle given a change that applied.
func landed(c ai.Call) bool { return attempted(c) && c.OK }

// editInput is what the edit tools' inputs say of the files they change.
type editInput struct {
	Path  string                 `json:"path"`
	Hunks []workspace.Hunk       `json:"hunks"`
	Files []workspace.FileChange `json:"files"`
	Dir   string                 `json:"dir"`
	Query string                 `json:"query"`
	Topic string                 `json:"topic"`
	ID    json.RawMessage        `json:"id"`
}

func inputOf(c ai.Call) editInput {
	var in editInput
	_ = json.Unmarshal(c.Input, &in)
	return in
}

// readKey is what a read call read, as "<tool> <what>", and whether c is
// a read.
func readKey(c ai.Call) (string, bool) {
	in := inputOf(c)
	switch c.Name {
	case "source.read":
		return c.Name + " " + path.Clean(in.Path), true
	case "source.list":
		return c.Name + " " + path.Clean("./"+in.Dir), true
	case "source.search":
		return c.Name + " " + in.Query, true
	case "spec.read":
		return c.Name + " " + in.Topic, true
	case "knowledge.show":
		return c.Name + " " + string(in.ID), true
	}
	return "", false
}

// hunksOf are the hunks of an edit call, each as "<path>\x00<find>".
func hunksOf(c ai.Call) []string {
	in := inputOf(c)
	var out []string
	for _, h := range in.Hunks {
		out = append(out, path.Clean(in.Path)+"\x00"+h.Find)
	}
	return out
}

// filesChanged are the whole files an edit call writes.
func filesChanged(c ai.Call) []workspace.FileChange { return inputOf(c).Files }

// editsFile says the edit call c changes file.
func editsFile(c ai.Call, file string) bool {
	in := inputOf(c)
	if len(in.Hunks) > 0 && path.Clean(in.Path) == file {
		return true
	}
	for _, f := range in.Files {
		if path.Clean(f.Path) == file {
			return true
		}
	}
	return false
}
