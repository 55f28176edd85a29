package intent

import (
	"context"
	"encoding/json"
	"fmt"
)

// TaskRuns calls each for every run a task started (task_runs), in run id
// order, with the task's application and slug. The knowledge's links index
// reads the backlog through it and TaskLocks (knowledge.TaskRecords).
func (s *Service) TaskRuns(ctx context.Context, each func(runID, appID, slug string)) error {
	var rows []struct {
		RunID string `db:"run_id"`
		AppID string `db:"app_id"`
		Slug  string `db:"slug"`
	}
	if err := s.db.Read.SelectContext(ctx, &rows, `SELECT r.run_id, t.app_id, t.slug
		FROM task_runs r JOIN tasks t ON t.id = r.task_id ORDER BY r.run_id`); err != nil {
		return fmt.Errorf("intent: task runs: %w", err)
	}
	for _, r := range rows {
		each(r.RunID, r.AppID, r.Slug)
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
