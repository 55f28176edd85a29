package replay

import (
	"fmt"

	"autoapp/executor/acceptance"
	"autoapp/intent/plan"
)

// EvalTask is one task of an evaluation: a request a person could make of
// a new application made from one of the built-in templates, the task the
// planner would have written for it, and its acceptance example, which
// the evaluation adds to every run's workspace before the run and judges
// from its own copy.
type EvalTask struct {
	// Key names the task, its application in every run (the id the
	// engineer is told) and its runs' folders.
	Key string
	// Template is the built-in template every run starts from.
	Template string
	Request  string
	Task     plan.Task
	// Example is the text of the example of the task's one criterion,
	// acceptance/<slug>-c1.json.
	Example string
	// TwoTurns makes the task two turns: the first stopped the moment an
	// edit lands, the second told to continue, under each history mode.
	TwoTurns bool
	// Touch, for a two-turn task, is the file the evaluation commits
	// TouchLine to between the turns (touch-file), so the second turn's
	// read sees a revision the first never saw; "" for none.
	Touch, TouchLine string
}

// EvalTasks are the six tasks of an evaluation: four of one turn, two on
// each template, and two of two turns on the Go service, the first of
// which, priority, is touch-file.
// Each example says what must be there and, where a route can refuse,
// what it must refuse, so an answer that says nothing cannot pass.
var EvalTasks = []EvalTask{
	{
		Key: "site-about", Template: "static",
		Request: "Add an About page at /about.html, with the heading About and a paragraph on what the site is for, and link to it from the home page.",
		Task: evalTask("0001-about-page", "views", "Add an About page linked from the home page",
			"A new page, site/about.html, with an h1 heading About and a paragraph on what the site is for, and a link to about.html on the home page, which keeps its own heading.",
			[]string{"site/about.html", "site/index.html"},
			"GET /about.html shows the h1 heading About and a paragraph, and the home page links to about.html and still shows its heading A new site."),
		Example: `{
  "title": "The About page shows its heading, and the home page links to it",
  "steps": [
    {"method": "GET", "path": "/about.html", "expect": {"status": 200, "contains": ["<h1>About</h1>", "<p>"]}},
    {"method": "GET", "path": "/", "expect": {"status": 200, "contains": ["about.html\"", "<h1>A new site</h1>"]}}
  ]
}
`,
	},
	{
		Key: "site-hours", Template: "static",
		Request: "Show our opening hours on the home page: a section headed Opening hours listing Monday to Friday 9:00 to 17:00 and Saturday 10:00 to 14:00, and saying we are closed on Sunday.",
		Task: evalTask("0001-opening-hours", "views", "Show the opening hours on the home page",
			"A section on the home page headed Opening hours: Monday to Friday 9:00 to 17:00, Saturday 10:00 to 14:00, closed on Sunday. The page keeps its heading.",
			[]string{"site/index.html"},
			"The home page shows a section headed Opening hours with Monday to Friday 9:00 to 17:00, Saturday 10:00 to 14:00 and Sunday closed, and still shows its heading A new site."),
		Example: `{
  "title": "The home page shows the opening hours",
  "steps": [
    {"method": "GET", "path": "/", "expect": {"status": 200,
      "contains": ["<h1>A new site</h1>", "Opening hours", "Monday", "Friday", "9:00", "17:00", "Saturday", "10:00", "14:00", "Sunday"]}}
  ]
}
`,
	},
	{
		Key: "service-greeting", Template: "goservice",
		Request: `Add GET /greet?name=NAME to the service: it answers JSON {"greeting": "Hello, NAME!"}, and refuses a request without a name with status 400.`,
		Task: evalTask("0001-greeting", "api", "Greet a person by name at GET /greet",
			`A route GET /greet in main.go: with ?name=NAME it answers 200 and the JSON object {"greeting": "Hello, NAME!"}; without a name, or with an empty one, it answers 400.`,
			[]string{"main.go"},
			`GET /greet?name=Ada answers {"greeting": "Hello, Ada!"} (and so for any name), and GET /greet without a name is refused with 400.`),
		Example: `{
  "title": "The service greets a person by name and refuses no name",
  "steps": [
    {"method": "GET", "path": "/greet?name=Ada", "expect": {"status": 200, "json": {"greeting": "Hello, Ada!"}}},
    {"method": "GET", "path": "/greet?name=Grace", "expect": {"status": 200, "json": {"greeting": "Hello, Grace!"}}},
    {"method": "GET", "path": "/greet", "fails": true, "expect": {"status": 400}}
  ]
}
`,
	},
	{
		Key: "service-notes", Template: "goservice",
		Request: `Let the service keep notes in memory: POST /notes with the JSON {"text": "..."} answers 201 and the note as JSON, {"id": ..., "text": ...}; GET /notes answers every note as a JSON array, oldest first; a note with empty text is refused with status 400.`,
		Task: evalTask("0001-notes", "api", "Keep notes in memory at /notes",
			`Routes in main.go: POST /notes takes {"text": "..."} and answers 201 with {"id": <a number>, "text": "..."}; GET /notes answers a JSON array of every note, oldest first, and [] when there is none; an empty text is refused with 400. The notes live in memory, guarded for concurrent requests.`,
			[]string{"main.go"},
			`GET /notes answers [] at first; after POST /notes with {"text": "buy milk"} and with {"text": "call Ada"}, each answered 201 with its id and text, GET /notes answers both, oldest first; POST /notes with an empty text is refused with 400.`),
		Example: `{
  "title": "Notes are kept in memory, listed oldest first, and an empty one is refused",
  "steps": [
    {"method": "GET", "path": "/notes", "expect": {"status": 200, "json": []}},
    {"method": "POST", "path": "/notes", "body": {"text": "buy milk"}, "expect": {"status": 201, "json": {"id": "{{any}}", "text": "buy milk"}}},
    {"method": "POST", "path": "/notes", "body": {"text": "call Ada"}, "expect": {"status": 201, "json": {"id": "{{any}}", "text": "call Ada"}}},
    {"method": "GET", "path": "/notes", "expect": {"status": 200, "json": [{"id": "{{any}}", "text": "buy milk"}, {"id": "{{any}}", "text": "call Ada"}]}},
    {"method": "POST", "path": "/notes", "body": {"text": ""}, "fails": true, "expect": {"status": 400}}
  ]
}
`,
	},
	{
		Key: "service-priority", Template: "goservice", TwoTurns: true,
		Touch: "main.go", TouchLine: "// The service's routes are registered in main below.\n",
		Request: `Let the service keep tasks in memory with a priority: POST /tasks with {"title": "...", "priority": "high"} (low, normal or high) answers 201 and the task as JSON; GET /tasks answers every task, oldest first, and GET /tasks?priority=high only those of that priority; a task with another priority is refused with status 400.`,
		Task: evalTask("0001-task-priority", "api", "Keep tasks with a priority and filter them by it",
			`Routes in main.go: POST /tasks takes {"title": "...", "priority": "low"|"normal"|"high"} and answers 201 with {"id": <a number>, "title": "...", "priority": "..."}; GET /tasks answers a JSON array of every task, oldest first ([] when there is none), and with ?priority=P only the tasks of priority P; any other priority is refused with 400. The tasks live in memory, guarded for concurrent requests.`,
			[]string{"main.go"},
			`After POST /tasks with {"title": "file taxes", "priority": "high"} and with {"title": "water plants", "priority": "low"}, each answered 201, GET /tasks answers both, oldest first, GET /tasks?priority=high only the first; POST /tasks with the priority "urgent" is refused with 400.`),
		Example: `{
  "title": "Tasks keep their priority and are filtered by it, and an unknown priority is refused",
  "steps": [
    {"method": "POST", "path": "/tasks", "body": {"title": "file taxes", "priority": "high"}, "expect": {"status": 201, "json": {"id": "{{any}}", "title": "file taxes", "priority": "high"}}},
    {"method": "POST", "path": "/tasks", "body": {"title": "water plants", "priority": "low"}, "expect": {"status": 201, "json": {"id": "{{any}}", "title": "water plants", "priority": "low"}}},
    {"method": "GET", "path": "/tasks", "expect": {"status": 200, "json": [{"id": "{{any}}", "title": "file taxes", "priority": "high"}, {"id": "{{any}}", "title": "water plants", "priority": "low"}]}},
    {"method": "GET", "path": "/tasks?priority=high", "expect": {"status": 200, "json": [{"id": "{{any}}", "title": "file taxes", "priority": "high"}]}},
    {"method": "POST", "path": "/tasks", "body": {"title": "panic", "priority": "urgent"}, "fails": true, "expect": {"status": 400}}
  ]
}
`,
	},
	{
		Key: "service-counter", Template: "goservice", TwoTurns: true,
		Request: `Give the service a counter: GET /count answers {"count": N}, 0 at first, and POST /count adds one and answers the new {"count": N}.`,
		Task: evalTask("0001-counter", "api", "Count at /count",
			`Routes in main.go: GET /count answers 200 and {"count": N}, starting at 0; POST /count adds one and answers 200 and the new {"count": N}. The count lives in memory, guarded for concurrent requests.`,
			[]string{"main.go"},
			`GET /count answers {"count": 0} at first; POST /count answers {"count": 1}, then {"count": 2}; GET /count then answers {"count": 2}.`),
		Example: `{
  "title": "The counter starts at 0 and counts each POST",
  "steps": [
    {"method": "GET", "path": "/count", "expect": {"status": 200, "json": {"count": 0}}},
    {"method": "POST", "path": "/count", "expect": {"status": 200, "json": {"count": 1}}},
    {"method": "POST", "path": "/count", "expect": {"status": 200, "json": {"count": 2}}},
    {"method": "GET", "path": "/count", "expect": {"status": 200, "json": {"count": 2}}}
  ]
}
`,
	},
}

// The history modes of a two-turn task's second turn.
const (
	// TextHistory: the second turn is given the request and the first
	// turn's words.
	TextHistory = "text"
	// StructuredHistory: the assistant turn names the first turn's run and
	// the host gives the model that run's tool calls and their results.
	StructuredHistory = "structured"
	// RestartHistory: structured, with the second turn run after a
	// restart, on stores and services opened afresh over the same folder
	// and the first turn's calls read back from it.
	RestartHistory = "restart"
)

// ContinueMessage is what a two-turn task's second turn is told.
const ContinueMessage = "Continue."

// modesOf are the history modes task t runs under condition c: none for a
// task of one turn; text and structured for one of two, and under
// orientation+facts restart too.
func modesOf(twoTurns bool, c string) []string {
	switch {
	case !twoTurns:
		return []string{""}
	case c == OrientationFacts:
		return []string{TextHistory, StructuredHistory, RestartHistory}
	}
	return []string{TextHistory, StructuredHistory}
}

// evalTask is a task's plan as the planner writes one: a single criterion,
// whose example is <slug>-c1.
func evalTask(slug, label, title, summary string, locks []string, criterion string) plan.Task {
	return plan.Task{Slug: slug, Title: title, Priority: "high", Labels: []string{label}, EstimatedLines: 40, Locks: locks,
		Risk: "normal", Reasoning: "low", Summary: summary, Criteria: []plan.Criterion{{Text: criterion}},
		NoFailurePath: "none beyond what the criterion says"}
}

// ExampleID is the id of the task's example, and its file's name without
// ".json".
func (t EvalTask) ExampleID() string { return plan.ExampleID(t.Task.Slug, 1) }

// example is the task's example as the evaluation judges with it.
func (t EvalTask) example() acceptance.Example {
	ex, problems := acceptance.Parse(t.ExampleID(), []byte(t.Example))
	if len(problems) > 0 {
		// The examples are the package's own: a test reads every one.
		panic(fmt.Sprintf("replay: the example of %s does not parse: %v", t.Key, problems))
	}
	return ex
}
