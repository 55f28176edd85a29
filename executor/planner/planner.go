// Package planner is the engineer's side of a chat turn that turns a
// request into a backlog: spec.read (the application and the plan format),
// intent.open (the analysis), intent.task (one task, or a revision of one)
// and intent.submit (the whole plan, for the person's review), with the
// read-only source tools beside them and the engineer's Instructions.
//
// The request an intent keeps is the person's message as the turn record
// holds it (Config.RequestText), never anything the model wrote. Every
// input is held to its schema and to the plan's rules, and refused with
// each field named; nothing of a refused call is stored. While the
// analysis has open questions, intent.task and intent.submit refuse. A
// turn that planned cannot edit or build (GuardEdits).
package planner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"autoapp/executor/ai"
	"autoapp/intent"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
)

// PlanOverLines is the estimate of changed lines above which a request is
// planned rather than started.
const PlanOverLines = 150

// PlannedRefusal is what an edit or build tool answers in a turn that
// planned a backlog.
const PlannedRefusal = "This turn planned a backlog. The person reviews it first."

// AnswerFirst is what intent.task and intent.submit answer while the
// analysis has open questions.
const AnswerFirst = "Answer-first: the analysis has open questions; the person answers them, then call intent.open again."

// Config is what a chat turn's planning tools need.
type Config struct {
	AppID string
	// RequestText is the person's message as typed, from the turn record:
	// a new draft keeps it as its request. It never comes from the model.
	RequestText string
	Backlog     *intent.Service
	// Workspace is the application's git workspace, opened once by the
	// turn that owns the session and closed by it: spec.read and the
	// source tools read it and never write. nil (it could not be opened)
	// makes each of them fail.
	Workspace *workspace.Workspace
	// Manifest returns the manifest the host obeys (autoapp.json as HEAD
	// commits it); nil reads it from the workspace.
	Manifest func() ([]byte, error)
	// Log gets one line per accepted call; nil discards.
	Log *slog.Logger
	// Now is the clock; required.
	Now func() time.Time
}

// Session is one chat turn's planning tools and whether the turn planned.
type Session struct {
	cfg     Config
	planned atomic.Bool
}

// NewSession builds the planning tools of one chat turn.
func NewSession(cfg Config) *Session {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		panic("planner: Config.Now, the clock, is required")
	}
	return &Session{cfg: cfg}
}

// Tools are the planning tools, in the order they are offered: spec.read,
// intent.open, intent.task, intent.submit.
func (s *Session) Tools() []ai.Tool {
	return []ai.Tool{s.specRead(), s.intentOpen(), s.intentTask(), s.intentSubmit()}
}

// Planned reports whether the turn called intent.open, intent.task or
// intent.submit, accepted or not: from then on it cannot edit or build.
func (s *Session) Planned() bool { return s.planned.Load() }

// Observe hears every call the turn made, those the schema refused before
// any handler ran among them: a call of intent.open, intent.task or
// intent.submit, accepted or not, means the turn planned.
func (s *Session) Observe(c ai.Call) {
	switch c.Name {
	case "intent.open", "intent.task", "intent.submit":
		s.planned.Store(true)
	}
}

// EditTools are the tools GuardEdits refuses once a turn planned, besides
// any tool marked Edits.
var EditTools = []string{"source.edit", "source.change", "candidate.build", "candidate.cycle"}

// StartTool is the tool a chat turn adds to run the application's plan
// when the person says to go ahead.
const StartTool = "intent.start"

// AddedTools are the tools a chat turn may add to the planner's own:
// intent.start and the edit tools. Instructions name them, so a chat turn
// that offers them all is offered every tool Instructions name.
var AddedTools = append([]string{StartTool}, EditTools...)

// StartAnswer is what intent.start answers once the run started.
type StartAnswer struct {
	Intent int64 `json:"intent"`
	// Tasks is how many tasks the run has to do, one at a time.
	Tasks int    `json:"tasks"`
	Next  string `json:"next"`
}

// GuardEdits wraps every tool that edits or builds (a tool marked Edits,
// or one of EditTools) so that, once s planned, it answers ok:false with
// PlannedRefusal and does nothing. The other tools are returned as they
// are.
func GuardEdits(tools []ai.Tool, s *Session) []ai.Tool {
	out := make([]ai.Tool, len(tools))
	for i, t := range tools {
		out[i] = t
		if !t.Edits && !slices.Contains(EditTools, t.Name) {
			continue
		}
		next := t.Handler
		out[i].Handler = func(ctx context.Context, input json.RawMessage) (any, error) {
			if s.Planned() {
				return nil, ai.Refuse(refusal.Problem{Message: PlannedRefusal})
			}
			if next == nil {
				return nil, errors.New("the tool " + t.Name + " has no handler")
			}
			return next(ctx, input)
		}
	}
	return out
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

// refusal answers the backlog's refusals as the model's: a plan's problems
// each by its field (a field the graph names after the task's own slug is
// given as the model wrote it), any other refusal as its sentence. A
// failure of the host stays an error.
func asRefusal(err error, slug string) error {
	var ie *refusal.Error
	if !errors.As(err, &ie) {
		return err
	}
	if len(ie.Problems) == 0 {
		return ai.Refuse(refusal.Problem{Message: ie.Message})
	}
	ps := make([]refusal.Problem, len(ie.Problems))
	for i, p := range ie.Problems {
		field := p.Field
		if slug != "" {
			field = strings.TrimPrefix(field, slug+".")
		}
		ps[i] = refusal.Problem{Field: field, Message: p.Message}
	}
	return ai.Refuse(ps...)
}

// draft is the application's draft, if it has one.
func (s *Session) draft(ctx context.Context) (intent.Intent, bool, error) {
	list, err := s.cfg.Backlog.List(ctx, s.cfg.AppID)
	if err != nil {
		return intent.Intent{}, false, fmt.Errorf("planner: %w", err)
	}
	for _, in := range list {
		if in.Status == intent.IntentDraft {
			return in.Intent, true, nil
		}
	}
	return intent.Intent{}, false, nil
}

// submittable is what intent.submit submits: the application's draft, or
// else its newest stopped intent whose plan was revised (a task rewritten
// and proposed again), so that its revision can be reviewed, and a guided
// request's approved again.
func (s *Session) submittable(ctx context.Context) (intent.Intent, bool, error) {
	if d, ok, err := s.draft(ctx); err != nil || ok {
		return d, ok, err
	}
	list, err := s.cfg.Backlog.List(ctx, s.cfg.AppID)
	if err != nil {
		return intent.Intent{}, false, fmt.Errorf("planner: %w", err)
	}
	for _, in := range list { // newest first
		if in.Status == intent.IntentStopped && in.Counts[intent.TaskProposed] > 0 {
			return in.Intent, true, nil
		}
	}
	return intent.Intent{}, false, nil
}

// holding is the draft or stopped intent of the application that holds
// the task slug, if one does.
func (s *Session) holding(ctx context.Context, slug string) (intent.IntentDetail, bool, error) {
	list, err := s.cfg.Backlog.List(ctx, s.cfg.AppID)
	if err != nil {
		return intent.IntentDetail{}, false, fmt.Errorf("planner: %w", err)
	}
	for _, in := range list {
		if in.Status != intent.IntentDraft && in.Status != intent.IntentStopped {
			continue
		}
		d, err := s.cfg.Backlog.Get(ctx, in.ID)
		if err != nil {
			return intent.IntentDetail{}, false, fmt.Errorf("planner: %w", err)
		}
		if slices.ContainsFunc(d.Tasks, func(t intent.BacklogTask) bool { return t.Slug == slug }) {
			return d, true, nil
		}
	}
	return intent.IntentDetail{}, false, nil
}

// liveTasks counts the tasks of an intent that are not removed.
func liveTasks(d intent.IntentDetail) int {
	n := 0
	for _, t := range d.Tasks {
		if t.Status != intent.TaskRemoved {
			n++
		}
	}
	return n
}

// plural is "1 task", "2 tasks".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
