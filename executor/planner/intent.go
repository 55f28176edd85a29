package planner

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"autoapp/executor/ai"
	"autoapp/intent"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
)

// linesSchema is a list of one-line texts of the analysis or the plan.
const linesSchema = `{"type": "array", "maxItems": 30, "items": {"type": "string", "maxLength": 600}`

// OpenAnswer is what intent.open answers.
type OpenAnswer struct {
	Intent int64 `json:"intent"`
	// Questions is how many questions are open.
	Questions int `json:"questions"`
	// Tasks is how many live tasks the draft already holds.
	Tasks int    `json:"tasks"`
	Next  string `json:"next"`
}

func (s *Session) intentOpen() ai.Tool {
	type input struct {
		Restated    string   `json:"restated"`
		Fits        []string `json:"fits"`
		Conflicts   []string `json:"conflicts"`
		OutOfReach  []string `json:"out_of_reach"`
		Assumptions []string `json:"assumptions"`
		Questions   []string `json:"questions"`
	}
	return ai.Tool{
		Name: "intent.open",
		Description: "Write the analysis of the person's request into the application's draft intent: the request restated in your words, " +
			"what it builds on (fits), what conflicts with the application, what is out of reach, what you assumed, and the questions only the person can answer. " +
			"The request itself is kept as the person typed it. An application has one draft: calling this again replaces the analysis and keeps the draft's tasks and request. " +
			"With questions, ask them in your reply and end the turn; intent.task and intent.submit refuse until intent.open is called again with the answers folded in and no questions.",
		Schema: json.RawMessage(`{"type": "object", "additionalProperties": false, "required": ["restated"], "properties": {
			"restated": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "the request in your own words: what will change for the person; one line per point"},
			"fits": ` + linesSchema + `, "description": "what in the application the request builds on"},
			"conflicts": ` + linesSchema + `, "description": "what in the application the request conflicts with"},
			"out_of_reach": ` + linesSchema + `, "description": "what the request asks that cannot be done in this application"},
			"assumptions": ` + linesSchema + `, "description": "what you assumed, and the person's answers folded in"},
			"questions": ` + linesSchema + `, "description": "what only the person can decide and that changes the plan; [] when nothing is open"}}}`),
		Example: json.RawMessage(`{"restated": "The home page shows a 25-minute timer with start, pause and reset.", "fits": ["The static site's home page"], "assumptions": ["No sound when the timer ends."], "questions": []}`),
		Handler: func(ctx context.Context, raw json.RawMessage) (any, error) {
			s.planned.Store(true)
			var in input
			if err := decode(raw, &in); err != nil {
				return nil, err
			}
			a := intent.Analysis{
				Restated: strings.Split(in.Restated, "\n"), Fits: in.Fits, Conflicts: in.Conflicts,
				OutOfReach: in.OutOfReach, Assumptions: in.Assumptions, Questions: in.Questions,
			}
			opened, err := s.cfg.Backlog.OpenDraft(ctx, s.cfg.AppID, s.cfg.RequestText, a)
			if err != nil {
				return nil, asRefusal(err, "")
			}
			d, err := s.cfg.Backlog.Get(ctx, opened.ID)
			if err != nil {
				return nil, fmt.Errorf("planner: %w", err)
			}
			s.cfg.Log.InfoContext(ctx, fmt.Sprintf("intent %d opened for %s", opened.ID, s.cfg.AppID),
				"app", s.cfg.AppID, "intent", opened.ID, "questions", len(opened.Questions))
			ans := OpenAnswer{Intent: opened.ID, Questions: len(opened.Questions), Tasks: liveTasks(d)}
			if ans.Questions > 0 {
				ans.Next = "Ask the person these questions in your reply, in plain words, and end the turn now. " +
					"Their answer starts a new turn, in which you call intent.open again with the answers folded in and no questions."
			} else {
				ans.Next = "Add the tasks with intent.task, one call per task, then call intent.submit."
			}
			return ans, nil
		},
	}
}

// TaskAnswer is what intent.task answers.
type TaskAnswer struct {
	Slug   string `json:"slug"`
	Status string `json:"status"`
	// Revised says the call replaced a task rather than adding one.
	Revised     bool     `json:"revised,omitempty"`
	Tier        string   `json:"tier"`
	TierReasons []string `json:"tier_reasons,omitempty"`
	// Examples are the acceptance examples the builder will write, one
	// per criterion.
	Examples []string `json:"examples"`
	// Tasks is how many live tasks the intent holds now.
	Tasks int    `json:"tasks"`
	Next  string `json:"next"`
}

// taskInput is intent.task's input: a plan, and the slug it replaces.
type taskInput struct {
	plan.Task
	Replaces string `json:"replaces"`
}

func (s *Session) intentTask() ai.Tool {
	return ai.Tool{
		Name: "intent.task",
		Description: "Add one task to the draft's plan: one independently verifiable change, with acceptance criteria a preview can check. " +
			"The host gives it its slug (NNNN-words, from the title) and its tier. A plan problem is refused with each field named and nothing is stored: repair the fields and call again with the whole task. " +
			"With replaces set to a task's slug, rewrite that task instead — one still proposed; a failed one; or, in a stopped intent, one queued or interrupted (after the person's feedback, say), which returns to proposed — keeping its slug. " +
			"spec.read with topic plan gives every field and rule.",
		Schema: json.RawMessage(`{"type": "object", "additionalProperties": false,
			"required": ["title", "priority", "labels", "estimated_lines", "risk", "reasoning", "summary", "criteria"], "properties": {
			"title": {"type": "string", "minLength": 1, "maxLength": 300, "description": "one imperative line naming the change"},
			"priority": {"type": "string", "enum": ["high", "medium", "low"]},
			"labels": {"type": "array", "minItems": 1, "maxItems": 4, "items": {"type": "string", "enum": ["contract", "host", "migration", "views", "theme", "acceptance", "copy"]}, "description": "one to four labels saying what the change touches"},
			"blocked_by": {"type": "array", "maxItems": 12, "items": {"type": "string"}, "description": "slugs of tasks of this intent that must complete first"},
			"estimated_lines": {"type": "integer", "minimum": 1, "maximum": 5000, "description": "the lines the change adds, changes or removes"},
			"locks": {"type": "array", "maxItems": 10, "items": {"type": "string"}, "description": "what the task holds while it runs; usually []"},
			"risk": {"type": "string", "enum": ["high", "normal"]},
			"stub": {"type": "boolean", "description": "true for a placeholder a later task replaces"},
			"repaid_by": {"type": "string", "description": "a stub's: the slug of the task that replaces it"},
			"reasoning": {"type": "string", "enum": ["low", "medium", "high"], "description": "how much thinking the change needs"},
			"summary": {"type": "string", "minLength": 1, "maxLength": 1200, "description": "one or two sentences: what this is and why it exists"},
			"criteria": {"type": "array", "minItems": 1, "maxItems": 12, "description": "observable outcomes a preview can check, each tested by one acceptance example <slug>-c<n>",
				"items": {"type": "object", "additionalProperties": false, "required": ["text"], "properties": {
					"text": {"type": "string", "minLength": 1, "maxLength": 800},
					"failure": {"type": "boolean", "description": "true for the route that refuses and what the person is told"}}}},
			"no_failure_path": {"type": "string", "description": "why nothing can go wrong, in place of a failure criterion"},
			"non_functional": ` + linesSchema + `},
			"test_notes": ` + linesSchema + `},
			"runbook": ` + linesSchema + `, "description": "what the person checks by hand"},
			"replaces": {"type": "string", "description": "the slug of a proposed, failed, or (in a stopped intent) queued or interrupted task this call rewrites"}}}`),
		Example: json.RawMessage(`{"title": "Show a 25-minute timer on the home page", "priority": "high", "labels": ["views"], "blocked_by": [], "estimated_lines": 60, "locks": [], "risk": "normal", "stub": false, "reasoning": "low", "summary": "The home page shows the work timer, so the person sees the time left.", "criteria": [{"text": "The home page shows 25:00 and a Start button"}], "no_failure_path": "a static page refuses nothing"}`),
		Handler: func(ctx context.Context, raw json.RawMessage) (any, error) {
			s.planned.Store(true)
			var in taskInput
			if err := decode(raw, &in); err != nil {
				return nil, err
			}
			// The host gives the slug; only replaces names one.
			in.Task.Slug = ""
			if in.Replaces != "" {
				return s.replaceTask(ctx, in.Replaces, in.Task)
			}
			return s.addTask(ctx, in.Task)
		},
	}
}

func (s *Session) addTask(ctx context.Context, p plan.Task) (any, error) {
	d, ok, err := s.draft(ctx)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, ai.Refuse(refusal.Problem{Message: "there is no draft to add a task to: call intent.open first"})
	case len(d.Questions) > 0:
		return nil, ai.Refuse(refusal.Problem{Message: AnswerFirst})
	}
	added, err := s.cfg.Backlog.AddTask(ctx, d.ID, p)
	if err != nil {
		// The slug the task would have had names its own fields in the
		// graph's problems; nothing was added, so it is still the next.
		slug, serr := s.cfg.Backlog.NextSlug(ctx, s.cfg.AppID, p.Title)
		if serr != nil {
			return nil, fmt.Errorf("planner: %w", serr)
		}
		return nil, asRefusal(err, slug)
	}
	return s.taskAnswer(ctx, added, false)
}

func (s *Session) replaceTask(ctx context.Context, slug string, p plan.Task) (any, error) {
	d, ok, err := s.holding(ctx, slug)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, ai.Refuse(refusal.Problem{Field: "replaces", Message: fmt.Sprintf(
			"no draft or stopped intent of %s has a task %q; name a proposed or failed task by its slug, or leave replaces out to add a task", s.cfg.AppID, slug)})
	case len(d.Questions) > 0:
		return nil, ai.Refuse(refusal.Problem{Message: AnswerFirst})
	}
	replaced, err := s.cfg.Backlog.ReplaceTask(ctx, d.ID, slug, p)
	if err != nil {
		return nil, asRefusal(err, slug)
	}
	return s.taskAnswer(ctx, replaced, true)
}

func (s *Session) taskAnswer(ctx context.Context, t intent.Task, revised bool) (any, error) {
	d, err := s.cfg.Backlog.Get(ctx, t.IntentID)
	if err != nil {
		return nil, fmt.Errorf("planner: %w", err)
	}
	tier, reasons := plan.Tier(t.Task)
	verb := "proposed"
	if revised {
		verb = "revised"
	}
	s.cfg.Log.InfoContext(ctx, fmt.Sprintf("task %s %s (%s)", t.Slug, verb, tier),
		"app", s.cfg.AppID, "intent", t.IntentID, "task", t.Slug, "tier", tier)
	ans := TaskAnswer{Slug: t.Slug, Status: string(t.Status), Revised: revised, Tier: tier, TierReasons: reasons,
		Examples: make([]string, len(t.Criteria)), Tasks: liveTasks(d)}
	for n := range t.Criteria {
		ans.Examples[n] = plan.ExampleID(t.Slug, n+1)
	}
	switch {
	case d.Status == intent.IntentDraft:
		ans.Next = "Add the next task with intent.task (name this one in blocked_by as " + t.Slug + " when a later task needs it), or call intent.submit when the plan is complete."
	default:
		ans.Next = "The task is proposed again in intent " + fmt.Sprint(d.ID) + ". Tell the person it was revised and that Run in the Backlog runs it."
	}
	return ans, nil
}

// SubmitAnswer is what intent.submit answers.
type SubmitAnswer struct {
	Intent int64  `json:"intent"`
	Tasks  int    `json:"tasks"`
	Next   string `json:"next"`
}

func (s *Session) intentSubmit() ai.Tool {
	return ai.Tool{
		Name: "intent.submit",
		Description: "Submit the draft's plan, or a stopped intent's plan you revised with replaces, for the person's review: the host checks the whole plan (no open questions, at least one task, " +
			"blockers that exist and form no cycle, at most 12 live tasks) and the Backlog stops showing it as being written. Then tell the person, in a sentence or two, that the plan is in the Backlog, and stop.",
		Schema:  json.RawMessage(`{"type": "object", "additionalProperties": false, "properties": {}}`),
		Example: json.RawMessage(`{}`),
		Handler: func(ctx context.Context, raw json.RawMessage) (any, error) {
			s.planned.Store(true)
			d, ok, err := s.submittable(ctx)
			switch {
			case err != nil:
				return nil, err
			case !ok:
				return nil, ai.Refuse(refusal.Problem{Message: "there is no draft, nor a revised stopped intent, to submit: call intent.open, then intent.task for each task"})
			case len(d.Questions) > 0:
				return nil, ai.Refuse(refusal.Problem{Message: AnswerFirst})
			}
			if err := s.cfg.Backlog.Submit(ctx, d.ID); err != nil {
				return nil, asRefusal(err, "")
			}
			detail, err := s.cfg.Backlog.Get(ctx, d.ID)
			if err != nil {
				return nil, fmt.Errorf("planner: %w", err)
			}
			n := liveTasks(detail)
			s.cfg.Log.InfoContext(ctx, fmt.Sprintf("intent %d submitted with %s", d.ID, plural(n, "task")),
				"app", s.cfg.AppID, "intent", d.ID, "tasks", n)
			return SubmitAnswer{Intent: d.ID, Tasks: n,
				Next: "Tell the person, in a sentence or two, that the plan is in the Backlog for them to review, and stop."}, nil
		},
	}
}
