package intent

import (
	"context"
	"fmt"
)

// Board is what the board shows of one application: its intents that are
// not finished, each with its tasks as the Backlog shows them, and its
// tasks completed most recently in intents already finished.
type Board struct {
	Live []IntentDetail
	// Completed are the newest completed tasks of finished intents, newest
	// first.
	Completed []BacklogTask
}

// Board reads the application's board: every intent that is a draft,
// runs or stopped, oldest first, and the recent tasks completed in done
// intents, newest first and at most recent. It reads the live intents'
// rows and recent rows only, so it costs the same however long the
// application's history is.
func (s *Service) Board(ctx context.Context, appID string, recent int) (Board, error) {
	tiers, err := s.TierModels()
	if err != nil {
		return Board{}, err
	}
	tx, err := s.db.Read.BeginTxx(ctx, nil)
	if err != nil {
		return Board{}, fmt.Errorf("intent: board of %s: %w", appID, err)
	}
	defer tx.Rollback()
	var ids []int64
	if err := tx.SelectContext(ctx, &ids, `SELECT id FROM intents
		WHERE app_id = ? AND status IN ('draft', 'running', 'stopped') ORDER BY id`, appID); err != nil {
		return Board{}, fmt.Errorf("intent: board of %s: %w", appID, err)
	}
	var b Board
	for _, id := range ids {
		in, err := loadIntent(ctx, tx, id)
		if err != nil {
			return Board{}, err
		}
		tasks, err := intentTasks(ctx, tx, id)
		if err != nil {
			return Board{}, err
		}
		d := IntentDetail{Intent: in, Tasks: backlog(tasks, tiers)}
		reasons, err := endReasons(ctx, tx, id)
		if err != nil {
			return Board{}, err
		}
		for i := range d.Tasks {
			d.Tasks[i].Reason = reasons[d.Tasks[i].ID]
		}
		b.Live = append(b.Live, d)
	}
	var rows []taskRow
	if err := tx.SelectContext(ctx, &rows, `SELECT `+taskColumns+` FROM tasks
		WHERE app_id = ? AND status = 'completed'
		  AND intent_id NOT IN (SELECT id FROM intents WHERE app_id = ? AND status IN ('draft', 'running', 'stopped'))
		ORDER BY ended_at DESC LIMIT ?`, appID, appID, recent); err != nil {
		return Board{}, fmt.Errorf("intent: board of %s: %w", appID, err)
	}
	for _, r := range rows {
		t, err := r.task()
		if err != nil {
			return Board{}, err
		}
		bt := backlog([]Task{t}, tiers)
		b.Completed = append(b.Completed, bt[0])
	}
	return b, nil
}

// AnyIntent says whether any application has an intent yet: a first run's
// third step is done.
func (s *Service) AnyIntent(ctx context.Context) (bool, error) {
	var any bool
	if err := s.db.Read.GetContext(ctx, &any, `SELECT EXISTS (SELECT 1 FROM intents)`); err != nil {
		return false, fmt.Errorf("intent: any intent: %w", err)
	}
	return any, nil
}
