// Package builder is the engineer's side of a backlog run: the tools a
// builder turn is offered, the guidance their answers carry, the builder's
// instructions and message, and the record of what the turn did that the
// verdict reads.
//
// The tools are source.list, source.read, source.search, source.edit,
// source.change, candidate.build, candidate.cycle, spec.read, intent.ask and
// knowledge.show.
// Every input is validated and refused with each field named; every edit is
// committed with the turn's run id and the call id the run loop gave the
// call (<runId>:<n>, n counting the turn's calls).
//
// The gate. Every writing call passes a gate that asks the person; during a
// run the executor answers it for them: edits, builds and previews yes,
// activation never. So these tools ask no one: source.edit, source.change
// and candidate.cycle write, candidate.build and candidate.cycle build,
// candidate.cycle starts the preview. There is no activation tool: a
// release becomes current only when the owner activates it. The engineer
// can read autoapp.json but never write it (the workspace refuses it), has
// no shell, and reaches nothing outside its application.
//
// In-turn guidance is advice the answers carry, never a refusal, with one
// exception: after three cycles of a turn ended with the same failure, a
// fourth cycle is refused.
package builder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/candidate"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
	"autoapp/knowledge"
	"autoapp/knowledge/origin"
)

// Config is what a builder turn's tools need.
type Config struct {
	AppID    string
	IntentID int64
	// RunID is the turn's run id (intent-<intentId>-<slug>-a<n>); every
	// commit carries it.
	RunID string
	// Position is where the application stands as the turn goes: an edit
	// that commits, and a build that passes, move it; nil moves nothing.
	Position *origin.Position
	// RevBefore is the revision the task was judged from; every commit asks
	// git to count the task's change since it as it commits (see
	// workspace.CommitMeta.Since). "" counts nothing.
	RevBefore string
	Task      plan.Task
	// Workspace is the application's workspace, opened once by the run or
	// the chat turn the session serves, and closed by it.
	Workspace *workspace.Workspace
	// Observer hears of the builds and checks of the turn's calls: the
	// turn's record (executor.TurnRecord); nil is the candidates' own.
	Observer   candidate.Observer
	Candidates *candidate.Service
	// ManifestText returns the manifest the host obeys (autoapp.json as
	// HEAD commits it); nil reads it from the workspace.
	ManifestText func() ([]byte, error)
	// PlanMarkdown is the task's plan as the message gives it; "" renders
	// it from Task.
	PlanMarkdown string
	// Ask records the builder's question for the person. It returns a
	// sentence the model is given instead when the question is refused
	// (a third question of a task), or "" when it was accepted.
	Ask func(ctx context.Context, question string) (string, error)
	// Now dates the commits; required.
	Now func() time.Time
	// Lessons answers knowledge.show; nil answers that no lessons are kept.
	Lessons LessonGetter
	// Hints finds the lessons a failed build's answer carries beside its
	// problems; nil gives none.
	Hints HintGetter
	// Hinted hears the hints an answer carried, each lesson once a turn,
	// to record as servings; nil records none.
	Hinted func(ctx context.Context, hints []knowledge.Served)
	// Edited, when set, hears of every edit that landed, as one line
	// ("source.edit site/index.html"), under the call's context; the open
	// cases keep it.
	Edited func(ctx context.Context, summary string)
}

// Session is one builder turn's tools and what they saw. Its tools are
// meant to be called one at a time, as a turn calls them; Record waits for
// a running call to end.
type Session struct {
	cfg Config
	ws  *workspace.Workspace

	mu sync.Mutex
	st state
}

// state is what the turn did so far.
type state struct {
	// calls counts the handler calls; it names each call (<runId>:<n>).
	calls int
	// handled is the tool and input of the last call a handler refused,
	// so that Observe does not record it twice.
	handled string

	edits     int
	lastEdit  int // the call of the last edit that landed
	built     bool
	lastBuild int // the call of the last build

	// sinceBuild are the paths edited since the last build, in order;
	// unverified counts the edits.
	sinceBuild []string
	unverified int

	// reads counts each read since the last edit landed.
	reads map[string]int
	// readPaths are the files read, in order, once each.
	readPaths []string
	// misses counts, per file, the edits with a hunk that matched nothing.
	misses map[string]int
	// failures counts the cycles that ended with each failure.
	failures map[string]int
	// stopped says three cycles ended with the same failure.
	stopped bool

	refused   []Refused
	question  string
	lastCycle *candidate.Result
	// hinted are the lessons given as hints so far; shown the lessons
	// the turn has read in full with knowledge.show.
	hinted map[int64]bool
	shown  map[int64]bool
}

// NewSession prepares a builder turn's tools over the workspace it is given.
func NewSession(cfg Config) (*Session, error) {
	var missing []string
	for _, f := range []struct {
		name string
		ok   bool
	}{
		{"AppID", cfg.AppID != ""}, {"RunID", cfg.RunID != ""}, {"Task.Slug", cfg.Task.Slug != ""},
		{"Workspace", cfg.Workspace != nil}, {"Candidates", cfg.Candidates != nil}, {"Ask", cfg.Ask != nil}, {"Now", cfg.Now != nil},
	} {
		if !f.ok {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("builder: the session needs %v", missing)
	}
	if cfg.PlanMarkdown == "" {
		cfg.PlanMarkdown = plan.Markdown(cfg.Task, nil)
	}
	return &Session{cfg: cfg, ws: cfg.Workspace, st: state{
		reads: map[string]int{}, misses: map[string]int{}, failures: map[string]int{}, hinted: map[int64]bool{}, shown: map[int64]bool{},
	}}, nil
}

// Close ends the session; the workspace stays its opener's to close.
func (s *Session) Close() error { return nil }

// Tools are the builder's tools, in the order they are offered.
func (s *Session) Tools() []ai.Tool {
	return []ai.Tool{
		s.sourceList(), s.sourceRead(), s.sourceSearch(), s.sourceEdit(), s.sourceChange(),
		s.candidateCycle(), s.candidateBuild(), s.specRead(), s.intentAsk(), s.knowledgeShow(),
	}
}

// Observe records a call the turn made; give it to ai.Turn.OnStep (or
// call it from there), so that an input the schema refused before any
// handler ran is among Record().Refused too.
func (s *Session) Observe(c ai.Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.OK || len(c.Problems) == 0 {
		return
	}
	if s.st.handled != "" && s.st.handled == handledKey(c.Name, c.Input) {
		s.st.handled = ""
		return
	}
	s.st.refused = append(s.st.refused, Refused{Tool: c.Name, Problems: c.Problems, Edit: isEdit(c.Name)})
}

// handler wraps a tool's work: it serialises the calls, names each one,
// decodes the input into In and records a refusal.
func handler[In any](s *Session, name string, work func(ctx context.Context, meta workspace.CommitMeta, in In) (any, error)) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, input json.RawMessage) (any, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.st.calls++
		// A commit names the call as the run loop's envelope does; a
		// handler called outside a turn counts its own.
		callID := origin.IdentityFrom(ctx).CallID
		if callID == "" {
			callID = fmt.Sprintf("%s:%d", s.cfg.RunID, s.st.calls)
		}
		meta := workspace.CommitMeta{RunID: s.cfg.RunID, CallID: callID, Since: s.cfg.RevBefore}
		var in In
		result, err := any(nil), decode(input, &in)
		if err == nil {
			result, err = work(ctx, meta, in)
		}
		var refusal *ai.Refusal
		if errors.As(err, &refusal) {
			s.st.refused = append(s.st.refused, Refused{Tool: name, Problems: refusal.Problems, Edit: isEdit(name)})
			s.st.handled = handledKey(name, input)
		}
		return result, err
	}
}

// handledKey names a call by its tool and input, as the handler and the
// turn's record of the call both see them.
func handledKey(tool string, input json.RawMessage) string {
	return tool + "\x00" + strings.TrimSpace(string(input))
}

// decode reads a tool's input; the turn has held it to the schema, so a
// problem here is an input given to a handler directly.
func decode(input json.RawMessage, v any) error {
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	if err := json.Unmarshal(input, v); err != nil {
		return ai.Refuse(refusal.Problem{Message: "the input does not fit the tool's schema: " + err.Error()})
	}
	return nil
}

// refusal answers err as a refusal when it carries the workspace's named
// problems, and as itself otherwise.
func asRefusal(err error) error {
	if ps, ok := workspace.AsProblems(err); ok {
		return ai.Refuse(ps...)
	}
	return err
}

// landed counts an edit that was committed with the files it changed, and
// moves the turn's position to its commit.
func (s *Session) landed(ctx context.Context, tool string, edit workspace.EditResult) {
	s.cfg.Position.Committed(edit.Revision)
	files := edit.Files
	if s.cfg.Edited != nil && len(files) > 0 {
		line := tool + " " + strings.Join(files, ", ")
		if tool == "source.change" {
			// source.change <action> <paths>, as the links index reads it.
			line = tool + " change " + strings.Join(files, ", ")
		}
		if len(edit.Hunks) > 0 {
			line += " " + knowledge.HunksMark + " " + hunksLine(edit.Hunks)
		}
		s.cfg.Edited(ctx, line)
	}
	s.st.edits++
	s.st.lastEdit = s.st.calls
	s.st.unverified++
	for _, f := range files {
		if !slices.Contains(s.st.sinceBuild, f) {
			s.st.sinceBuild = append(s.st.sinceBuild, f)
		}
	}
	clear(s.st.reads)
}

// buildRan notes a build, passed or failed: what was edited is verified.
func (s *Session) buildRan() {
	s.st.built = true
	s.st.lastBuild = s.st.calls
	s.st.sinceBuild, s.st.unverified = nil, 0
}

// hunkText bounds what a case's edit line keeps of a hunk's find and
// replace texts.
const hunkText = 160

// hunksLine says how each hunk of an edit matched, for the case's edit
// line: where its find text was, and what it found and put there.
func hunksLine(hunks []workspace.HunkMatch) string {
	parts := make([]string, len(hunks))
	for i, h := range hunks {
		parts[i] = fmt.Sprintf("hunk %d matched %s:%d exactly once: find %q replace %q",
			i+1, h.Path, h.Line, clip(h.Find, hunkText), clip(h.Replace, hunkText))
	}
	return strings.Join(parts, "; ")
}

// clip is s cut to at most n characters, with "…" when cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
