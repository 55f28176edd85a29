package intent

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Board is what the board shows of one application: its intents that are
// not finished, each with its tasks as the Backlog shows them, and its
// tasks completed most recently in intents already finished.
type Board struct {
	// LiveIDs are every live intent's id, newest first; Live holds the
	// newest of them (or the one asked for) with their tasks.
	LiveIDs []int64
	Live    []IntentDetail
	// Completed are the newest completed tasks of finished intents, newest
	// first.
	Completed []BacklogTask
}

// Board reads the application's board: every intent that is a draft,
// runs or stopped, newest first, and the recent tasks completed in done
// intents, newest first and at most recent. It reads the live intents'
// rows and recent rows only, so it costs the same however long the
// application's history is.
func (s *Attention) Board(ctx context.Context, appID string, recent, intents int, only int64) (Board, error) {
	tiers, err := s.tiers()
	if err != nil {
		return Board{}, err
	}
	tx, err := s.db.Read.BeginTxx(ctx, nil)
	if err != nil {
		return Board{}, fmt.Errorf("intent: board of %s: %w", appID, err)
	}
	defer tx.Rollback()
	const allLive = `SELECT id FROM intents WHERE app_id = ? AND status IN ('draft', 'running', 'stopped')`
	var b Board
	if err := tx.SelectContext(ctx, &b.LiveIDs, allLive+` ORDER BY id DESC`, appID); err != nil {
		return Board{}, fmt.Errorf("intent: board of %s: %w", appID, err)
	}
	// The intents shown: the newest live ones, or the one asked for.
	var shown []int64
	for _, id := range b.LiveIDs {
		if (only == 0 && len(shown) < intents) || id == only {
			shown = append(shown, id)
		}
	}
	if len(shown) == 0 {
		shown = []int64{0}
	}
	live := `SELECT value FROM json_each(?)`
	ids, _ := json.Marshal(shown)
	var intentRows []intentRow
	if err := tx.SelectContext(ctx, &intentRows,
		`SELECT id, app_id, status, mode, request, restated, fits, conflicts, out_of_reach, assumptions,
		        questions, submitted_at, stop_reason, created_at, updated_at
		 FROM intents WHERE id IN (`+live+`) ORDER BY id DESC`, string(ids)); err != nil {
		return Board{}, fmt.Errorf("intent: board of %s: %w", appID, err)
	}
	var rows []taskRow
	if err := tx.SelectContext(ctx, &rows, `SELECT `+taskColumns+` FROM tasks
		WHERE intent_id IN (`+live+`) ORDER BY intent_id, id`, string(ids)); err != nil {
		return Board{}, fmt.Errorf("intent: board of %s: %w", appID, err)
	}
	var ends []struct {
		TaskID int64  `db:"task_id"`
		Reason string `db:"reason"`
	}
	if err := tx.SelectContext(ctx, &ends,
		`SELECT e.task_id, e.reason FROM tasks t
		 JOIN task_events e ON e.id = (SELECT max(id) FROM task_events WHERE task_id = t.id)
		 WHERE t.intent_id IN (`+live+`) AND t.status IN ('failed', 'interrupted') AND e.to_status = t.status`, string(ids)); err != nil {
		return Board{}, fmt.Errorf("intent: board of %s: %w", appID, err)
	}
	reasons := make(map[int64]string, len(ends))
	for _, e := range ends {
		reasons[e.TaskID] = e.Reason
	}
	byIntent := map[int64][]Task{}
	for _, r := range rows {
		t, err := r.task()
		if err != nil {
			return Board{}, err
		}
		byIntent[t.IntentID] = append(byIntent[t.IntentID], t)
	}
	for _, r := range intentRows {
		in, err := r.intent()
		if err != nil {
			return Board{}, err
		}
		d := IntentDetail{Intent: in, Tasks: backlog(byIntent[in.ID], tiers)}
		for i := range d.Tasks {
			d.Tasks[i].Reason = reasons[d.Tasks[i].ID]
		}
		b.Live = append(b.Live, d)
	}
	var done []taskRow
	if err := tx.SelectContext(ctx, &done, `SELECT `+taskColumns+` FROM tasks
		WHERE app_id = ? AND status = 'completed' AND intent_id NOT IN (`+allLive+`)
		ORDER BY ended_at DESC LIMIT ?`, appID, appID, recent); err != nil {
		return Board{}, fmt.Errorf("intent: board of %s: %w", appID, err)
	}
	for _, r := range done {
		t, err := r.task()
		if err != nil {
			return Board{}, err
		}
		b.Completed = append(b.Completed, backlog([]Task{t}, tiers)[0])
	}
	return b, nil
}

// AnyIntent says whether any application has an intent yet: a first run's
// third step is done.
func (s *Attention) AnyIntent(ctx context.Context) (bool, error) {
	var any bool
	if err := s.db.Read.GetContext(ctx, &any, `SELECT EXISTS (SELECT 1 FROM intents)`); err != nil {
		return false, fmt.Errorf("intent: any intent: %w", err)
	}
	return any, nil
}

// ListPage is one page of the application's intents, newest first, as the
// Backlog lists them: those older than before (0: the newest), at most
// limit, with whether older ones are left. It reads only what a row shows
// — the request's start, the status, the count of questions and of tasks
// by status — so a page costs the same however many intents there are; a
// page is kept while the backlog does not change.
func (s *Attention) ListPage(ctx context.Context, appID string, before int64, limit int) ([]IntentSummary, bool, error) {
	p, err := KeptRead(ctx, s.kept, fmt.Sprintf("list %q %d %d", appID, before, limit), listPage.clone, func(ctx context.Context) (listPage, error) {
		rows, more, err := s.listPage(ctx, appID, before, limit)
		return listPage{rows: rows, more: more}, err
	})
	return p.rows, p.more, err
}

// listPage is one page of the list, as ListPage answers it.
type listPage struct {
	rows []IntentSummary
	more bool
}

func (p listPage) clone() listPage {
	p.rows = slices.Clone(p.rows)
	for i := range p.rows {
		p.rows[i].Counts = maps.Clone(p.rows[i].Counts)
	}
	return p
}

func (s *Attention) listPage(ctx context.Context, appID string, before int64, limit int) ([]IntentSummary, bool, error) {
	tx, err := s.db.Read.BeginTxx(ctx, nil)
	if err != nil {
		return nil, false, fmt.Errorf("intent: list: %w", err)
	}
	defer tx.Rollback()
	var rows []struct {
		ID          int64         `db:"id"`
		AppID       string        `db:"app_id"`
		Status      IntentStatus  `db:"status"`
		Mode        Mode          `db:"mode"`
		Request     string        `db:"request"`
		Questions   int           `db:"questions"`
		SubmittedAt sql.NullInt64 `db:"submitted_at"`
		StopReason  string        `db:"stop_reason"`
		CreatedAt   int64         `db:"created_at"`
		UpdatedAt   int64         `db:"updated_at"`
	}
	if err := tx.SelectContext(ctx, &rows,
		`SELECT id, app_id, status, mode, substr(request, 1, 400) AS request, json_array_length(questions) AS questions,
		        submitted_at, stop_reason, created_at, updated_at
		 FROM intents WHERE app_id = ? AND (? = 0 OR id < ?) ORDER BY id DESC LIMIT ?`, appID, before, before, limit+1); err != nil {
		return nil, false, fmt.Errorf("intent: list: %w", err)
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	out := make([]IntentSummary, 0, len(rows))
	index := map[int64]int{}
	args := []any{}
	for _, r := range rows {
		index[r.ID] = len(out)
		args = append(args, r.ID)
		out = append(out, IntentSummary{Intent: Intent{ID: r.ID, AppID: r.AppID, Status: r.Status, Mode: r.Mode, Request: r.Request,
			SubmittedAt: timeOf(r.SubmittedAt), StopReason: r.StopReason, CreatedAt: time.UnixMilli(r.CreatedAt), UpdatedAt: time.UnixMilli(r.UpdatedAt)},
			Counts: map[TaskStatus]int{}, QuestionCount: r.Questions})
	}
	if len(out) == 0 {
		return out, false, nil
	}
	var counts []struct {
		IntentID int64      `db:"intent_id"`
		Status   TaskStatus `db:"status"`
		N        int        `db:"n"`
	}
	if err := tx.SelectContext(ctx, &counts, `SELECT intent_id, status, count(*) AS n FROM tasks
		WHERE intent_id IN (?`+strings.Repeat(", ?", len(args)-1)+`) GROUP BY intent_id, status`, args...); err != nil {
		return nil, false, fmt.Errorf("intent: list: %w", err)
	}
	for _, c := range counts {
		i := index[c.IntentID]
		out[i].Counts[c.Status] = c.N
		if c.Status != TaskRemoved {
			out[i].Live += c.N
		}
	}
	return out, more, nil
}
