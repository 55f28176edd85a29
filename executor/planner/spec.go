package planner

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"autoapp/executor/acceptance"
	"autoapp/executor/ai"
	"autoapp/intent/app"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
)

// The topics spec.read answers.
const (
	TopicApplication = "application"
	TopicPlan        = "plan"
)

// MaxListedFiles is the most files spec.read lists; the rest are counted.
const MaxListedFiles = 400

// skipped are folders spec.read does not list: tools' caches, not the
// application's source.
var skipped = map[string]bool{".git": true, "node_modules": true, "vendor": true, ".cache": true}

// PlanReference is the plan format and its rules, as spec.read gives them
// and the host enforces them.
var PlanReference = fmt.Sprintf(`The plan format. A task is one independently verifiable change of the application, written as a plan that intent.task takes as JSON. The host keeps the fields as rows and renders the plan from them.

Fields:
- title: one imperative line naming the change, at most %[1]d characters ("Add tags to notes"). The host makes the task's slug from it: NNNN-words, four digits (the next free number of the application, across all its intents) and at most six lowercase words (0007-add-tags-to-notes). You never write a slug, except to name another task in blocked_by, repaid_by or replaces.
- priority: one of %[2]s.
- labels: one to %[3]d of %[4]s, each once: what the change touches.
- blocked_by: the slugs of the tasks of the same intent that must complete before this one; [] when none. Blockers must exist and form no cycle.
- estimated_lines: the lines you expect the change to add, change or remove, 1 to %[5]d. A task is one change of at most about %[6]d changed lines; a bigger one is several tasks.
- locks: names of what the task holds while it runs (a file, a table); usually [].
- risk: one of %[7]s.
- stub: true only for a placeholder that a later task replaces; a stub names that task's slug in repaid_by. Otherwise false, and no repaid_by.
- reasoning: one of %[8]s: how much thinking the change needs.
- summary: one or two sentences, at most %[9]d characters: what this is and why it exists.
- criteria: the acceptance criteria, each {"text": ..., "failure": true|false}, each one line of at most %[10]d characters.
- no_failure_path: one line saying why nothing can go wrong, in place of a failure criterion.
- non_functional, test_notes, runbook: lists of one-line items. runbook is what the person checks by hand ("For you to check by hand" on the finished intent).
- replaces (intent.task only): the slug of a task to rewrite instead of adding one: a task still proposed, or a failed one, which returns to proposed. It keeps its slug.

Acceptance criteria:
- Each criterion is an observable outcome of the running application that a preview can check through its HTTP routes: a status, a text a page or a response holds or lacks, a field of a JSON answer. Write what the person sees, not how the code does it.
- Each criterion becomes exactly one acceptance example, named after the task's slug and the criterion's number: <slug>-c<n>. Criterion 2 of 0007-add-tags is tested by the example 0007-add-tags-c2 (the file acceptance/0007-add-tags-c2.json). The builder writes the examples; the host runs them against a preview and decides.
- The host writes the last criterion of every task itself: %[11]q. Do not write it.
- A failure criterion ("failure": true) says which route refuses and what the person is told ("Saving a note without a title is refused with: Give the note a title."). Its example passes only when that route refuses with a 4xx status.
- Every task has a failure criterion, or, when nothing can go wrong (a static page refuses nothing), no failure criterion and a no_failure_path reason. Not both.
- The wording rule: criteria are checked against a preview before anything is activated, so a criterion never defers to activation. One that says "after activating" (or "after activation"), "not in a preview", "only after" or "in the activated" is refused. What only the activated application can show goes in runbook, as "after activating, …"; a runbook line never asks for that in the preview.

The plan as a whole:
- An intent holds at most %[12]d live tasks (not removed).
- Tasks run one at a time: blockers first, then priority (high first), then slug.
- The host computes each task's tier (quick, standard, deep) from risk, reasoning, estimated_lines and labels: deep when risk or reasoning is high, over %[13]d lines, or a migration or contract label; quick when reasoning is low, at most %[14]d lines, risk normal and only copy, theme or views labels; otherwise standard. You never write the tier.
- A plan problem is refused with each field named (criteria[1].text, labels[0], blocked_by[0]) and nothing is stored: repair those fields and send the whole task again.`,
	plan.MaxTitle, strings.Join(plan.Priorities, ", "), plan.MaxLabels, strings.Join(plan.Labels, ", "),
	plan.MaxEstimatedLines, PlanOverLines, strings.Join(plan.Risks, ", "), strings.Join(plan.Reasoning, ", "),
	plan.MaxSummary, plan.MaxCriterion, plan.HostCriterion, plan.MaxLiveTasks, plan.DeepOverLines, plan.QuickMaxLines)

// SpecAnswer is what spec.read answers.
type SpecAnswer struct {
	Application *Application `json:"application,omitempty"`
	Plan        string       `json:"plan,omitempty"`
}

// Application is the application as spec.read shows it.
type Application struct {
	// Manifest is autoapp.json as it is.
	Manifest string `json:"manifest"`
	// Problems are what is wrong with the manifest, if anything.
	Problems []string `json:"manifest_problems,omitempty"`
	// Files are the workspace's files, by path, at most MaxListedFiles.
	Files []string `json:"files"`
	// FilesLeftOut counts the files beyond MaxListedFiles.
	FilesLeftOut int `json:"files_left_out,omitempty"`
	// AcceptanceFolder is where the acceptance examples are kept.
	AcceptanceFolder string `json:"acceptance_folder"`
	// Examples are the acceptance examples present, each kept by the
	// tasks that completed with it.
	Examples []PresentExample `json:"examples"`
}

// PresentExample is one acceptance example in the workspace.
type PresentExample struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

func (s *Session) specRead() ai.Tool {
	type input struct {
		Topic string `json:"topic"`
	}
	return ai.Tool{
		Name: "spec.read",
		Description: "Read the application and the rules of a plan. Topic application: the manifest (autoapp.json: build stages, preview, acceptance folder, artifacts), " +
			"the workspace's files, and the acceptance examples already there. Topic plan: the plan format, every field of intent.task and the rules the host holds a plan to. Left out, both.",
		Schema: json.RawMessage(`{"type": "object", "additionalProperties": false, "properties": {
			"topic": {"type": "string", "enum": ["application", "plan"], "description": "one topic; left out for both"}}}`),
		Example: json.RawMessage(`{"topic": "application"}`),
		Handler: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var in input
			if err := decode(raw, &in); err != nil {
				return nil, err
			}
			var a SpecAnswer
			if in.Topic == "" || in.Topic == TopicApplication {
				app, err := s.application(ctx)
				if err != nil {
					return nil, err
				}
				a.Application = &app
			}
			if in.Topic == "" || in.Topic == TopicPlan {
				a.Plan = PlanReference
			}
			s.cfg.Log.DebugContext(ctx, "spec.read for "+s.cfg.AppID, "app", s.cfg.AppID, "topic", in.Topic)
			return a, nil
		},
	}
}

// application reads the manifest, the files and the examples, each as
// the host reads a workspace: the manifest HEAD commits, and no file
// through a link.
func (s *Session) application(ctx context.Context) (Application, error) {
	ws, err := s.workspace()
	if err != nil {
		return Application{}, err
	}
	var raw []byte
	var m app.Manifest
	var ps refusal.Problems
	if s.cfg.Manifest != nil {
		if raw, err = s.cfg.Manifest(); err == nil {
			m, ps = app.ParseManifest(raw)
		}
	} else {
		raw, m, ps, err = ws.Manifest(ctx)
	}
	if err != nil {
		return Application{}, fmt.Errorf("planner: the manifest: %w", err)
	}
	a := Application{Manifest: string(raw), AcceptanceFolder: m.AcceptanceDir(), Files: []string{}, Examples: []PresentExample{}}
	for _, p := range ps {
		a.Problems = append(a.Problems, p.String())
	}
	if err := listFiles(ws, "", &a); err != nil {
		return Application{}, err
	}

	examples, err := acceptance.Load(ws.FS(), a.AcceptanceFolder)
	if err != nil {
		return Application{}, fmt.Errorf("planner: %w", err)
	}
	for _, ex := range examples {
		a.Examples = append(a.Examples, PresentExample{ID: ex.ID, Title: ex.Title})
	}
	return a, nil
}

// listFiles adds the files under dir to a, depth first in name order,
// not following links to folders.
func listFiles(ws *workspace.Workspace, dir string, a *Application) error {
	entries, err := ws.List(dir)
	if err != nil {
		return fmt.Errorf("planner: list %q: %w", dir, err)
	}
	for _, e := range entries {
		switch {
		case e.Dir && (e.Link || skipped[e.Name]):
		case e.Dir:
			if err := listFiles(ws, e.Path, a); err != nil {
				return err
			}
		case len(a.Files) < MaxListedFiles:
			a.Files = append(a.Files, e.Path)
		default:
			a.FilesLeftOut++
		}
	}
	return nil
}
