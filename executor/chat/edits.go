package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"autoapp/executor"
	"autoapp/executor/ai"
	"autoapp/executor/builder"
	"autoapp/executor/candidate"
	"autoapp/executor/gate"
	"autoapp/executor/planner"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
	"autoapp/knowledge/origin"
)

// directSlug is the task slug of a chat turn's direct edits: the
// builder's tools work on a task, and a direct change has none.
const directSlug = "chat"

// Declined is how a call the person denied is answered, before what it
// would have done: "The person declined: edit site/index.html (2 hunks)."
const Declined = "The person declined: "

// MaxQuestion is the longest question a call asks the person, in
// characters.
const MaxQuestion = 300

// EditConfig is what the chat turns' edit tools need.
type EditConfig struct {
	// Gate asks the person before each call.
	Gate       *gate.Gate
	Candidates *candidate.Service
	Apps       Apps
	// Busy refuses the edits while a run changes the application (the
	// executor's Busy); nil refuses none.
	Busy func(appID string) error
	// Hints, when set, give a failed build's answer the lessons that stand
	// beside its problems, as a builder's turn gets them; the turn's record
	// keeps each as a serving of the turn's run.
	Hints builder.HintGetter
	// Log gets why a turn goes without edit tools, and an edit the cases
	// could not keep; nil discards.
	Log *slog.Logger
	// Now dates the commits; required.
	Now func() time.Time
}

// GatedEditTools gives a chat turn source.edit, source.change,
// candidate.build and candidate.cycle, the builder's own, over the
// application's workspace: each call is refused while a run changes the
// application, and otherwise asks the person through the gate first
// ("Edit site/index.html (2 hunks)?") and runs only when they approve.
// Every commit carries the turn's run id, and every edit that lands, the
// hints and the cases of its builds are kept by the turn's record rec. It
// is meant for Deps.EditTools: ws is the turn's workspace, which the turn
// closes; done ends the tools' session once the turn ended.
func GatedEditTools(cfg EditConfig) func(ws *workspace.Workspace, rec *executor.TurnRecord, appID, runID string, pos *origin.Position) (tools []ai.Tool, done func()) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		panic("chat: EditConfig.Now, the clock, is required")
	}
	return func(ws *workspace.Workspace, rec *executor.TurnRecord, appID, runID string, pos *origin.Position) ([]ai.Tool, func()) {
		session, err := builder.NewSession(builder.Config{
			AppID: appID, RunID: runID, Position: pos,
			Task:         plan.Task{Slug: directSlug, Title: "A small change asked for in the chat"},
			PlanMarkdown: "A small change the person asked for in the chat; there is no plan.",
			Workspace:    ws, Candidates: cfg.Candidates, Observer: rec,
			ManifestText: func() ([]byte, error) {
				raw, _, _, err := cfg.Apps.Manifest(appID)
				return raw, err
			},
			// intent.ask is not offered: a chat turn asks in its reply.
			Ask:    func(context.Context, string) (string, error) { return "Ask the person in your reply.", nil },
			Now:    cfg.Now,
			Edited: rec.Edited,
			Hints:  cfg.Hints,
			Hinted: rec.Hinted,
		})
		if err != nil {
			cfg.Log.Error("the workspace could not be opened for edits; the turn goes without them", "app", appID, "run", runID, "err", err)
			return nil, func() {}
		}
		var tools []ai.Tool
		for _, t := range session.Tools() {
			if slices.Contains(planner.EditTools, t.Name) {
				tools = append(tools, cfg.gated(t, appID, runID))
			}
		}
		return tools, func() {
			if err := session.Close(); err != nil {
				cfg.Log.Warn("the workspace of a chat turn's edits did not close", "app", appID, "run", runID, "err", err)
			}
		}
	}
}

// gated wraps an edit tool: refused while a run changes the application,
// asked of the person otherwise, and run only once they approve.
func (cfg EditConfig) gated(t ai.Tool, appID, runID string) ai.Tool {
	next := t.Handler
	busy := func() error {
		if cfg.Busy == nil {
			return nil
		}
		if err := cfg.Busy(appID); err != nil {
			return ai.Refuse(refusal.Problem{Message: err.Error()})
		}
		return nil
	}
	t.Handler = func(ctx context.Context, input json.RawMessage) (any, error) {
		if err := busy(); err != nil {
			return nil, err
		}
		what, err := editQuestion(t.Name, appID, input)
		if err != nil {
			return nil, err
		}
		approved, err := cfg.Gate.Ask(ctx, appID, runID, question(what))
		if err != nil {
			return nil, err
		}
		if !approved {
			return nil, ai.Refuse(refusal.Problem{Message: Declined + what + "."})
		}
		// A run may have started while the person read the question.
		if err := busy(); err != nil {
			return nil, err
		}
		return next(ctx, input)
	}
	return t
}

// editQuestion says in a few words what an edit tool's call will do to
// the application, as the person is asked it: "edit site/index.html (2
// hunks)", "create site/about.html, overwrite site/index.html", "build
// site", "build, preview and check site".
func editQuestion(tool, appID string, input json.RawMessage) (string, error) {
	var in struct {
		Path  string                 `json:"path"`
		Hunks []workspace.Hunk       `json:"hunks"`
		Files []workspace.FileChange `json:"files"`
	}
	if len(input) > 0 {
		if err := json.Unmarshal(input, &in); err != nil {
			return "", ai.Refuse(refusal.Problem{Message: "the input does not fit the tool's schema: " + err.Error()})
		}
	}
	var change string
	switch {
	case len(in.Files) > 0:
		change = files(in.Files)
	case in.Path != "" || len(in.Hunks) > 0:
		change = fmt.Sprintf("edit %s (%s)", oneLine(in.Path, 120), counted(len(in.Hunks), "hunk"))
	}
	switch tool {
	case "source.edit", "source.change":
		if change == "" {
			return "change " + appID, nil
		}
		return change, nil
	case "candidate.build":
		return "build " + appID, nil
	case "candidate.cycle":
		if change == "" {
			return "build, preview and check " + appID, nil
		}
		return change + ", then build, preview and check " + appID, nil
	}
	return "call " + tool, nil
}

// files says what a change does to whole files, by action in the order
// they come: "create site/about.html, overwrite site/index.html".
func files(fs []workspace.FileChange) string {
	var actions []workspace.FileAction
	paths := map[workspace.FileAction][]string{}
	for _, f := range fs {
		if _, ok := paths[f.Action]; !ok {
			actions = append(actions, f.Action)
		}
		paths[f.Action] = append(paths[f.Action], oneLine(f.Path, 120))
	}
	parts := make([]string, len(actions))
	for i, a := range actions {
		ps := paths[a]
		switch {
		case len(ps) > 3:
			parts[i] = fmt.Sprintf("%s %d files", a, len(ps))
		case len(ps) > 1:
			parts[i] = fmt.Sprintf("%s %s and %s", a, strings.Join(ps[:len(ps)-1], ", "), ps[len(ps)-1])
		default:
			parts[i] = fmt.Sprintf("%s %s", a, ps[0])
		}
	}
	return strings.Join(parts, ", ")
}

// question is what as the person is asked it: "Build site?".
func question(what string) string {
	r, n := utf8.DecodeRuneInString(what)
	q := string(unicode.ToUpper(r)) + what[n:]
	return oneLine(q, MaxQuestion-1) + "?"
}

// oneLine keeps what the model wrote to one line of at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// counted is "1 hunk", "2 hunks".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
