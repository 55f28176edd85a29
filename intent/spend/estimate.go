package spend

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"

	"autoapp/intent"
)

// MinSamples is how many of an application's tasks must have completed
// with whole usage rows before what is left is estimated.
const MinSamples = 2

// Sample is what one completed task used over all its turns.
type Sample struct {
	TaskID int64 `db:"task_id"`
	Tokens int64 `db:"tokens"`
	// Partial says some turn of the task wrote a partial row: what it
	// used is a floor, not a measure.
	Partial bool `db:"partial"`
	Turns   int  `db:"turns"`
	// Time is how long its turns ran, each from its start to its end.
	Time time.Duration `db:"-"`
}

// Whole says the sample can be measured from: it has rows, and none is
// partial.
func (s Sample) Whole() bool { return s.Turns > 0 && !s.Partial }

// SampleSize is how many of an application's newest completed tasks the
// estimate looks at: recent work says more of what is left than old
// work, and the read stays small however long the history.
const SampleSize = 20

// Samples are the newest completed tasks of an application (at most
// SampleSize), with what their turns used and how long they ran; the
// answer is kept while the backlog does not change.
func (b *Book) Samples(ctx context.Context, appID string) ([]Sample, error) {
	return intent.KeptRead(ctx, b.kept, "samples "+appID, slices.Clone[[]Sample], func(ctx context.Context) ([]Sample, error) {
		return b.samples(ctx, appID)
	})
}

func (b *Book) samples(ctx context.Context, appID string) ([]Sample, error) {
	var out []Sample
	// Every turn of a task is one of its run ids in task_runs, and each
	// has at most one usage row.
	if err := b.db.Read.SelectContext(ctx, &out,
		`SELECT t.id AS task_id, COALESCE(SUM(u.input_tokens + u.output_tokens), 0) AS tokens,
		        COALESCE(MAX(u.partial), 0) AS partial, COUNT(u.id) AS turns
		 FROM tasks t JOIN task_runs r ON r.task_id = t.id LEFT JOIN usage u ON u.run_id = r.run_id
		 WHERE t.id IN (SELECT id FROM tasks WHERE app_id = ? AND status = 'completed' ORDER BY ended_at DESC, id DESC LIMIT ?)
		 GROUP BY t.id ORDER BY t.id`, appID, SampleSize); err != nil {
		return nil, fmt.Errorf("spend: samples of %s: %w", appID, err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(out))
	for i, s := range out {
		ids[i] = s.TaskID
	}
	var spans []struct {
		TaskID int64 `db:"task_id"`
		Ms     int64 `db:"ms"`
	}
	// A turn runs from the move to in-progress with its run id to the
	// next move away from in-progress with the same run id.
	query, args, err := sqlx.In(
		`SELECT s.task_id AS task_id, SUM(e.at - s.at) AS ms
		 FROM task_events s JOIN task_events e ON e.task_id = s.task_id AND e.from_status = 'in-progress' AND e.run_id = s.run_id
		 WHERE s.task_id IN (?) AND s.to_status = 'in-progress'
		 GROUP BY s.task_id`, ids)
	if err != nil {
		return nil, fmt.Errorf("spend: samples of %s: %w", appID, err)
	}
	if err := b.db.Read.SelectContext(ctx, &spans, query, args...); err != nil {
		return nil, fmt.Errorf("spend: samples of %s: %w", appID, err)
	}
	ms := make(map[int64]int64, len(spans))
	for _, s := range spans {
		ms[s.TaskID] = s.Ms
	}
	for i := range out {
		out[i].Time = time.Duration(ms[out[i].TaskID]) * time.Millisecond
	}
	return out, nil
}

// Estimate is what the tasks left of an application should take,
// extrapolated from its tasks that completed with whole rows.
type Estimate struct {
	// From is how many completed tasks it was worked out from.
	From          int
	TokensPerTask int64
	TimePerTask   time.Duration
	Left          int
	Tokens        int64
	Time          time.Duration
}

// EstimateLeft extrapolates left tasks from the whole samples; ok is false
// until MinSamples tasks completed with whole rows.
func EstimateLeft(samples []Sample, left int) (Estimate, bool) {
	var e Estimate
	var tokens int64
	var spent time.Duration
	for _, s := range samples {
		if !s.Whole() {
			continue
		}
		e.From++
		tokens += s.Tokens
		spent += s.Time
	}
	if e.From < MinSamples {
		return Estimate{From: e.From}, false
	}
	e.TokensPerTask = tokens / int64(e.From)
	e.TimePerTask = spent / time.Duration(e.From)
	e.Left = left
	e.Tokens = e.TokensPerTask * int64(left)
	e.Time = e.TimePerTask * time.Duration(left)
	return e, true
}
