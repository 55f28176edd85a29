package intent

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Waiting is a task that waits for the person: one whose builder asked a
// question (needs-answer), or one that failed and waits for Run again or a
// revision, with the planning model's advice when there is some.
type Waiting struct {
	TaskID   int64      `db:"id"`
	IntentID int64      `db:"intent_id"`
	AppID    string     `db:"app_id"`
	Slug     string     `db:"slug"`
	Title    string     `db:"title"`
	Status   TaskStatus `db:"status"`
	Question string     `db:"question"`
	Advice   string     `db:"advice"`
	// Reason is why it ended there: the reason of its newest event.
	Reason string `db:"reason"`
}

// Waitings are the tasks that wait for the person, oldest first, at most
// a number of each status, with how many of each there are.
type Waitings struct {
	Tasks []Waiting
	// Asked counts the tasks that asked, Failed the failed ones.
	Asked, Failed int
}

// waitingWhere is every task that asked, and every failed task of an
// intent not withdrawn; the tasks are walked from the index of the tasks
// that wait (tasks_waiting_by_status), by status then id.
const waitingWhere = `FROM tasks t CROSS JOIN intents i ON i.id = t.intent_id
	 WHERE t.status IN ('needs-answer', 'failed') AND i.status IN ('draft', 'running', 'stopped')`

// WaitingTasks are the oldest each tasks that asked and the oldest each
// that failed, and how many of each wait: the list stays a screen however
// many failures years of stopped intents hold. The answer is kept while
// the backlog does not change.
func (s *Attention) WaitingTasks(ctx context.Context, each int) (Waitings, error) {
	return KeptRead(ctx, s.kept, fmt.Sprintf("waiting tasks %d", each), Waitings.clone, func(ctx context.Context) (Waitings, error) {
		return s.waitingTasks(ctx, each)
	})
}

func (w Waitings) clone() Waitings {
	w.Tasks = slices.Clone(w.Tasks)
	return w
}

func (s *Attention) waitingTasks(ctx context.Context, each int) (Waitings, error) {
	var out Waitings
	var counts []struct {
		Status TaskStatus `db:"status"`
		N      int        `db:"n"`
	}
	if err := s.db.Read.SelectContext(ctx, &counts, `SELECT t.status, COUNT(*) AS n `+waitingWhere+` GROUP BY t.status`); err != nil {
		return out, fmt.Errorf("intent: waiting tasks: %w", err)
	}
	for _, c := range counts {
		if c.Status == TaskNeedsAnswer {
			out.Asked = c.N
		} else {
			out.Failed = c.N
		}
	}
	if out.Asked+out.Failed == 0 {
		return out, nil
	}
	// Each status from its oldest task, up to each of them, then those
	// few tasks' rows. (waitingWhere names the partial index's own
	// condition, without which SQLite does not take it.)
	first := `SELECT t.id ` + waitingWhere + ` AND t.status = ? ORDER BY t.id LIMIT ?`
	if err := s.db.Read.SelectContext(ctx, &out.Tasks,
		`SELECT w.id, w.intent_id, w.app_id, w.slug, w.title, w.status, w.question, w.advice,
		        COALESCE((SELECT e.reason FROM task_events e WHERE e.task_id = w.id ORDER BY e.id DESC LIMIT 1), '') AS reason
		 FROM tasks w
		 WHERE w.id IN (SELECT id FROM (`+first+`) UNION ALL SELECT id FROM (`+first+`))
		 ORDER BY w.id`, TaskNeedsAnswer, each, TaskFailed, each); err != nil {
		return out, fmt.Errorf("intent: waiting tasks: %w", err)
	}
	return out, nil
}

// WaitingCount counts the tasks that wait for the person, for the rail's
// mark: a walk of the index of the tasks that wait, kept while the
// backlog does not change.
func (s *Attention) WaitingCount(ctx context.Context) (int, error) {
	return KeptRead(ctx, s.kept, "waiting count", same[int], func(ctx context.Context) (int, error) {
		var n int
		if err := s.db.Read.GetContext(ctx, &n, `SELECT COUNT(*) `+waitingWhere); err != nil {
			return 0, fmt.Errorf("intent: waiting tasks: %w", err)
		}
		return n, nil
	})
}

// same is the clone of an answer a caller cannot change.
func same[T any](v T) T { return v }

// Outlook is where one application's backlog stands: how many tasks are
// left to do, and its newest intent that was not withdrawn.
type Outlook struct {
	AppID string
	// Left counts the tasks of its open intents (draft, running, stopped)
	// that are neither completed nor removed.
	Left int
	// Latest is its newest intent not withdrawn; zero ID when none.
	Latest Intent
}

// Outlooks are the outlook of every application that has an intent, kept
// while the backlog does not change.
func (s *Attention) Outlooks(ctx context.Context) (map[string]Outlook, error) {
	return KeptRead(ctx, s.kept, "outlooks", maps.Clone[map[string]Outlook], s.outlooks)
}

func (s *Attention) outlooks(ctx context.Context) (map[string]Outlook, error) {
	out := map[string]Outlook{}
	var left []struct {
		AppID string `db:"app_id"`
		N     int    `db:"n"`
	}
	if err := s.db.Read.SelectContext(ctx, &left,
		// From the open intents (their partial index) to their tasks: the
		// done and withdrawn years of history are never walked.
		`SELECT i.app_id, COUNT(*) AS n FROM intents i CROSS JOIN tasks t ON t.intent_id = i.id
		 WHERE i.status IN ('draft', 'running', 'stopped') AND t.status NOT IN ('completed', 'removed')
		 GROUP BY i.app_id`); err != nil {
		return nil, fmt.Errorf("intent: outlooks: %w", err)
	}
	for _, l := range left {
		out[l.AppID] = Outlook{AppID: l.AppID, Left: l.N}
	}
	var latest []struct {
		ID          int64         `db:"id"`
		AppID       string        `db:"app_id"`
		Status      IntentStatus  `db:"status"`
		StopReason  string        `db:"stop_reason"`
		SubmittedAt sql.NullInt64 `db:"submitted_at"`
		CreatedAt   int64         `db:"created_at"`
	}
	if err := s.db.Read.SelectContext(ctx, &latest,
		// Each application's newest intent not withdrawn: a walk down its
		// index from the newest, one step unless it withdrew some.
		`SELECT id, app_id, status, stop_reason, submitted_at, created_at FROM intents
		 WHERE id IN (SELECT (SELECT i.id FROM intents i WHERE i.app_id = a.id AND i.status != 'withdrawn' ORDER BY i.id DESC LIMIT 1)
		              FROM apps a)`); err != nil {
		return nil, fmt.Errorf("intent: outlooks: %w", err)
	}
	for _, l := range latest {
		o := out[l.AppID]
		o.AppID = l.AppID
		o.Latest = Intent{ID: l.ID, AppID: l.AppID, Status: l.Status, StopReason: l.StopReason,
			SubmittedAt: timeOf(l.SubmittedAt), CreatedAt: time.UnixMilli(l.CreatedAt)}
		out[l.AppID] = o
	}
	return out, nil
}

// RunStartedAt is when the intent last moved to running; zero when it
// never ran.
func (s *Attention) RunStartedAt(ctx context.Context, intentID int64) (time.Time, error) {
	var at sql.NullInt64
	if err := s.db.Read.GetContext(ctx, &at,
		`SELECT MAX(at) FROM intent_events WHERE intent_id = ? AND to_status = 'running'`, intentID); err != nil {
		return time.Time{}, fmt.Errorf("intent: run started: %w", err)
	}
	return timeOf(at), nil
}

// Awaiting is an open intent that may wait for the owner rather than for
// a task: a draft whose engineer asked questions, or a submitted guided
// plan with proposed tasks, which waits for approval unless the owner
// approved it already (the request's journal says; the overview asks it).
type Awaiting struct {
	IntentID  int64  `db:"id"`
	AppID     string `db:"app_id"`
	Mode      Mode   `db:"mode"`
	Questions int    `db:"questions"`
	// StopReason is why a stopped intent stopped, when a cap stopped it.
	StopReason string `db:"stop_reason"`
}

// capStopped is the condition on intents i that a cap stopped it: its stop
// reason is one of the caps' sentences (spend.Guard's).
const capStopped = `i.stop_reason GLOB 'Intent #* reached its cap of *' OR i.stop_reason GLOB 'Today''s cap of * is reached *'`

// AwaitingOwner are the open intents that may wait for the owner, oldest
// first: drafts with open questions, intents a cap stopped, and submitted
// guided plans with a proposed task, drafts or stopped. The answer is kept while the backlog
// does not change.
func (s *Attention) AwaitingOwner(ctx context.Context) ([]Awaiting, error) {
	return KeptRead(ctx, s.kept, "awaiting the owner", slices.Clone[[]Awaiting], s.awaitingOwner)
}

func (s *Attention) awaitingOwner(ctx context.Context) ([]Awaiting, error) {
	var out []Awaiting
	if err := s.db.Read.SelectContext(ctx, &out,
		`SELECT i.id, i.app_id, i.mode, json_array_length(i.questions) AS questions,
		        CASE WHEN i.status = 'stopped' AND (`+capStopped+`) THEN i.stop_reason ELSE '' END AS stop_reason FROM intents i
		 WHERE (i.status = 'draft' AND json_array_length(i.questions) > 0)
		    OR (i.status = 'stopped' AND (`+capStopped+`))
		    OR (i.status IN ('draft', 'stopped') AND i.mode = 'guided' AND i.submitted_at IS NOT NULL
		        AND EXISTS (SELECT 1 FROM tasks t WHERE t.intent_id = i.id AND t.status = 'proposed'))
		 ORDER BY i.id`); err != nil {
		return nil, fmt.Errorf("intent: awaiting the owner: %w", err)
	}
	return out, nil
}
