// Package plan is the shape of a task's plan and the host's rules over it:
// validation with named problems, the dependency graph, run order, tiers,
// slugs, and the markdown and intent document rendered from the rows. It
// holds no state and knows nothing of storage or HTTP.
package plan

// Priorities, risks, reasoning levels and labels a plan may use.
var (
	Priorities = []string{"high", "medium", "low"}
	Risks      = []string{"high", "normal"}
	Reasoning  = []string{"low", "medium", "high"}
	Labels     = []string{"contract", "host", "migration", "views", "theme", "acceptance", "copy"}
)

// The three tiers a task can run on.
const (
	TierQuick    = "quick"
	TierStandard = "standard"
	TierDeep     = "deep"
)

// Tiers in order, for settings and pages.
var Tiers = []string{TierQuick, TierStandard, TierDeep}

// MaxLiveTasks is how many tasks not removed one intent may hold.
const MaxLiveTasks = 12

// Criterion is one acceptance criterion. A failure criterion names the
// route that refuses and what the person is told.
type Criterion struct {
	Text    string `json:"text"`
	Failure bool   `json:"failure,omitempty"`
}

// Task is a task's plan: every field the engineer writes, as rows hold
// them. The markdown is rendered from this and never parsed back.
type Task struct {
	Slug           string      `json:"slug"`
	Title          string      `json:"title"`
	Priority       string      `json:"priority"`
	Labels         []string    `json:"labels"`
	BlockedBy      []string    `json:"blocked_by"`
	EstimatedLines int         `json:"estimated_lines"`
	Locks          []string    `json:"locks"`
	Risk           string      `json:"risk"`
	Stub           bool        `json:"stub"`
	RepaidBy       string      `json:"repaid_by,omitempty"`
	Reasoning      string      `json:"reasoning"`
	Summary        string      `json:"summary"`
	Criteria       []Criterion `json:"criteria"`
	NoFailurePath  string      `json:"no_failure_path,omitempty"`
	NonFunctional  []string    `json:"non_functional,omitempty"`
	TestNotes      []string    `json:"test_notes,omitempty"`
	Runbook        []string    `json:"runbook,omitempty"`
}
