package intent

import (
	"context"
	"encoding/json"
	"fmt"
)

// TaskRuns calls each for every run a task started after the run numbered
// after (0 for all of them), in the order they started, with its number
// (task_runs' rowid, which only grows), the task's application and slug.
// The knowledge's links index reads the backlog through it, TaskLocks and
// TasksOfRuns (knowledge.TaskRecords).
func (s *Service) TaskRuns(ctx context.Context, after int64, each func(n int64, runID, appID, slug string)) error {
	var rows []struct {
		N     int64  `db:"n"`
		RunID string `db:"run_id"`
		AppID string `db:"app_id"`
		Slug  string `db:"slug"`
	}
	if err := s.db.Read.SelectContext(ctx, &rows, `SELECT r.rowid AS n, r.run_id, t.app_id, t.slug
		FROM task_runs r JOIN tasks t ON t.id = r.task_id WHERE r.rowid > ? ORDER BY r.rowid`, after); err != nil {
		return fmt.Errorf("intent: task runs: %w", err)
	}
	for _, r := range rows {
		each(r.N, r.RunID, r.AppID, r.Slug)
	}
	return nil
}

// TaskLocks calls each for every task whose plan locks names, in id order,
// with its application, slug and the names. A task whose locks are not a
// list of names is passed over.
func (s *Service) TaskLocks(ctx context.Context, each func(taskID int64, appID, slug string, locks []string)) error {
	var rows []struct {
		ID    int64  `db:"id"`
		AppID string `db:"app_id"`
		Slug  string `db:"slug"`
		Locks string `db:"locks"`
	}
	if err := s.db.Read.SelectContext(ctx, &rows,
		`SELECT id, app_id, slug, locks FROM tasks WHERE locks <> '[]' ORDER BY id`); err != nil {
		return fmt.Errorf("intent: task locks: %w", err)
	}
	for _, r := range rows {
		var locks []string
		if err := json.Unmarshal([]byte(r.Locks), &locks); err != nil {
			continue
		}
		each(r.ID, r.AppID, r.Slug, locks)
	}
	return nil
}

// TasksOfRuns calls each once for every task that started one of runIDs,
// in id order, with its application, slug, the names its plan locks (none
// when they are not a list of names) and every run it started, in order.
func (s *Service) TasksOfRuns(ctx context.Context, runIDs []string, each func(taskID int64, appID, slug string, locks, runs []string)) error {
	if len(runIDs) == 0 {
		return nil
	}
	var rows []struct {
		ID    int64  `db:"id"`
		AppID string `db:"app_id"`
		Slug  string `db:"slug"`
		Locks string `db:"locks"`
		Runs  string `db:"runs"`
	}
	if err := s.db.Read.SelectContext(ctx, &rows, `SELECT t.id, t.app_id, t.slug, t.locks,
		       (SELECT json_group_array(run_id) FROM (SELECT run_id FROM task_runs WHERE task_id = t.id ORDER BY rowid)) AS runs
		FROM tasks t
		WHERE t.id IN (SELECT task_id FROM task_runs WHERE run_id IN (SELECT value FROM json_each(?)))
		ORDER BY t.id`, jsonText(runIDs)); err != nil {
		return fmt.Errorf("intent: tasks of runs: %w", err)
	}
	for _, r := range rows {
		var locks, runs []string
		if err := json.Unmarshal([]byte(r.Locks), &locks); err != nil {
			locks = nil
		}
		if err := json.Unmarshal([]byte(r.Runs), &runs); err != nil {
			return fmt.Errorf("intent: runs of task %d: %w", r.ID, err)
		}
		each(r.ID, r.AppID, r.Slug, locks, runs)
	}
	return nil
}
