package intent

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"autoapp/intent/atomicfile"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
	"autoapp/migrations"
)

// store is what the backlog's services share over one intents store: the
// clock, the collaborators and the caches of its reads.
type store struct {
	db   *migrations.DB
	root string
	now  func() time.Time
	// journal keeps the request each intent answers, in the intent's
	// transactions; moved hears each committed task move (Collaborators).
	journal Journal
	moved   func(context.Context, TaskMoved)
	// afterApply, in tests, runs between applying interventions and
	// acknowledging them: where a crash is tested.
	afterApply func()
	// details keeps the last read of the intents whose pages are open.
	details *detailCache
	// kept keeps the last answers of the reads every page makes (what
	// waits, the outlooks) while the backlog does not change.
	kept *Kept
	// tierModels keeps intent-models.json while it is the same.
	tierModels *atomicfile.Kept[tierModels]
}

// Service keeps the intents and tasks of the applications of one root:
// drafts, plans, runs and each task's moves.
type Service struct{ *store }

// Interventions are the owner's pause, stop and feedback sent to a running
// intent, and their application at safe boundaries.
type Interventions struct{ *store }

// ChatTurns keeps the chat turns of the applications.
type ChatTurns struct{ *store }

// Attention is what the pages read of the backlog as a whole: what waits
// for the owner, each application's outlook and board, and the pages of
// intents.
type Attention struct{ *store }

// UsageBook keeps what each model turn cost in tokens.
type UsageBook struct{ *store }

// Services are the backlog's services over one intents store, sharing its
// caches: the launcher builds them once.
type Services struct {
	Backlog       *Service
	Interventions *Interventions
	Chats         *ChatTurns
	Attention     *Attention
	Usage         *UsageBook
}

// New builds the backlog's services over the intents store; root is the
// data folder, where launcher/intent-models.json holds the tier models.
// with is what their writes write beside their own rows; it needs a
// Journal.
func New(db *migrations.DB, root string, now func() time.Time, with Collaborators) Services {
	if with.Journal == nil {
		panic("intent: New needs the requests' Journal")
	}
	st := &store{db: db, root: root, now: now, journal: with.Journal, moved: with.Moved, details: newDetailCache(), kept: NewKept(db)}
	path := st.tierModelsPath()
	st.tierModels = atomicfile.NewKept(path, func(b []byte, err error) tierModels { return readTierModels(path, b, err) })
	return Services{Backlog: &Service{st}, Interventions: &Interventions{st}, Chats: &ChatTurns{st}, Attention: &Attention{st}, Usage: &UsageBook{st}}
}

// NewService is New's Backlog, for a caller that needs no other.
func NewService(db *migrations.DB, root string, now func() time.Time, with Collaborators) *Service {
	return New(db, root, now, with).Backlog
}

func (s *store) tierModelsPath() string {
	return filepath.Join(s.root, "launcher", "intent-models.json")
}

// MoveTask moves a task to another status in a transaction of its own,
// through moveTask: the executor starts, judges, retries and interrupts
// tasks with it.
func (s *Service) MoveTask(ctx context.Context, taskID int64, to TaskStatus, ev Move) error {
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("intent: move task %d: %w", taskID, err)
	}
	defer tx.Rollback()
	now := s.now()
	from, err := moveTask(ctx, tx, now, taskID, to, ev)
	if err != nil {
		return err
	}
	if to == TaskNeedsAnswer {
		t, err := loadTask(ctx, tx, taskID)
		if err != nil {
			return err
		}
		if err := s.journal.Asked(ctx, tx, TaskQuestion{IntentID: t.IntentID, TaskID: taskID, Question: ev.Question, At: now}); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("intent: move task %d: %w", taskID, err)
	}
	s.toldMoved(ctx, TaskMoved{TaskID: taskID, From: from, To: to, RunID: ev.RunID})
	return nil
}

// AnswerTask is the person's answer to the question a task asked: the
// task is queued again with the answer kept, trimmed; an empty one is
// refused. Only a task that asked
// (needs-answer) takes an answer; the check and the move share one
// transaction.
func (s *Service) AnswerTask(ctx context.Context, taskID int64, answer string) error {
	if answer = strings.TrimSpace(answer); answer == "" {
		return refuse(refusal.Invalid, "Write an answer to the question first.")
	}
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("intent: answer task %d: %w", taskID, err)
	}
	defer tx.Rollback()
	t, err := loadTask(ctx, tx, taskID)
	if err != nil {
		return err
	}
	if t.Status != TaskNeedsAnswer {
		return refuse(refusal.Conflict, "%s asked no question, so it takes no answer; it is %s.", t.Slug, t.Status)
	}
	ev := Move{Reason: "the person answered", Actor: ActorOwner, Answer: answer}
	now := s.now()
	if _, err := moveTask(ctx, tx, now, taskID, TaskInQueue, ev); err != nil {
		return err
	}
	if err := s.journal.Asked(ctx, tx, TaskQuestion{IntentID: t.IntentID, TaskID: taskID, Question: t.Question, Answer: answer, At: now}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("intent: answer task %d: %w", taskID, err)
	}
	s.toldMoved(ctx, TaskMoved{TaskID: taskID, From: TaskNeedsAnswer, To: TaskInQueue})
	return nil
}

// Finish marks the running intent done and, in the same transaction,
// writes what deliver writes (the delivery) and the request's delivery
// entry: either all of it holds or none does, so no crash leaves a done
// intent undelivered.
func (s *Service) Finish(ctx context.Context, intentID int64, reason string, deliver func(ctx context.Context, w migrations.Within) error) error {
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("intent: finish intent %d: %w", intentID, err)
	}
	defer tx.Rollback()
	now := s.now()
	if err := moveIntent(ctx, tx, now, intentID, IntentDone, reason); err != nil {
		return err
	}
	if deliver != nil {
		if err := deliver(ctx, tx); err != nil {
			return err
		}
	}
	if err := s.journal.Delivered(ctx, tx, intentID, now); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("intent: finish intent %d: %w", intentID, err)
	}
	return nil
}

// MoveIntent moves an intent to another status in a transaction of its
// own, through moveIntent. The reason is kept as the stop reason on a move
// to stopped.
func (s *Service) MoveIntent(ctx context.Context, intentID int64, to IntentStatus, reason string) error {
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("intent: move intent %d: %w", intentID, err)
	}
	defer tx.Rollback()
	if err := moveIntent(ctx, tx, s.now(), intentID, to, reason); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("intent: move intent %d: %w", intentID, err)
	}
	return nil
}

// clean trims every line of the analysis, drops empty ones, and turns nil
// lists into empty ones.
func (a Analysis) clean() Analysis {
	trim := func(lines []string) []string {
		out := []string{}
		for _, l := range lines {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
		return out
	}
	return Analysis{
		Restated: trim(a.Restated), Fits: trim(a.Fits), Conflicts: trim(a.Conflicts),
		OutOfReach: trim(a.OutOfReach), Assumptions: trim(a.Assumptions), Questions: trim(a.Questions),
	}
}

// OpenDraft writes the analysis of a request into the application's draft.
// An application has at most one draft: when it has one, the analysis
// replaces the draft's and its tasks and request stay; otherwise a new
// draft starts from request, as the person typed it. Either way the plan
// is being written again until Submit.
func (s *Service) OpenDraft(ctx context.Context, appID, request string, a Analysis) (Intent, error) {
	a = a.clean()
	now := s.now().UnixMilli()
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return Intent{}, fmt.Errorf("intent: open draft: %w", err)
	}
	defer tx.Rollback()
	if err := checkApp(ctx, tx, appID); err != nil {
		return Intent{}, err
	}

	var id int64
	err = tx.GetContext(ctx, &id, `SELECT id FROM intents WHERE app_id = ? AND status = 'draft'`, appID)
	switch {
	case err == nil:
		if _, err := tx.ExecContext(ctx,
			`UPDATE intents SET restated = ?, fits = ?, conflicts = ?, out_of_reach = ?, assumptions = ?,
			        questions = ?, submitted_at = NULL, updated_at = ?
			 WHERE id = ?`,
			jsonText(a.Restated), jsonText(a.Fits), jsonText(a.Conflicts), jsonText(a.OutOfReach),
			jsonText(a.Assumptions), jsonText(a.Questions), now, id); err != nil {
			return Intent{}, fmt.Errorf("intent: open draft: %w", err)
		}
	case errors.Is(err, sql.ErrNoRows):
		if strings.TrimSpace(request) == "" {
			return Intent{}, refuse(refusal.Invalid, "The request is empty: an intent starts from what the person typed.")
		}
		res, err := tx.ExecContext(ctx,
			`INSERT INTO intents (app_id, status, request, restated, fits, conflicts, out_of_reach, assumptions,
			                      questions, created_at, updated_at)
			 VALUES (?, 'draft', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			appID, request, jsonText(a.Restated), jsonText(a.Fits), jsonText(a.Conflicts),
			jsonText(a.OutOfReach), jsonText(a.Assumptions), jsonText(a.Questions), now, now)
		if err != nil {
			return Intent{}, fmt.Errorf("intent: open draft: %w", err)
		}
		if id, err = res.LastInsertId(); err != nil {
			return Intent{}, fmt.Errorf("intent: open draft: %w", err)
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO intent_events (intent_id, at, from_status, to_status, reason) VALUES (?, ?, '', 'draft', ?)`,
			id, now, "the engineer opened it"); err != nil {
			return Intent{}, fmt.Errorf("intent: open draft: %w", err)
		}
	default:
		return Intent{}, fmt.Errorf("intent: open draft: %w", err)
	}

	in, err := loadIntent(ctx, tx, id)
	if err != nil {
		return Intent{}, err
	}
	if err := tx.Commit(); err != nil {
		return Intent{}, fmt.Errorf("intent: open draft: %w", err)
	}
	return in, nil
}

// AddTask adds one task to a draft whose questions are all answered. The
// host gives it the application's next task number (task_numbers), across
// all its intents, and its slug; a plan with problems is refused with each field named (in
// refusal.Error.Problems) and nothing is stored.
func (s *Service) AddTask(ctx context.Context, intentID int64, t plan.Task) (Task, error) {
	now := s.now().UnixMilli()
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return Task{}, fmt.Errorf("intent: add task: %w", err)
	}
	defer tx.Rollback()
	in, err := loadIntent(ctx, tx, intentID)
	if err != nil {
		return Task{}, err
	}
	if in.Status != IntentDraft {
		return Task{}, refuse(refusal.Conflict, "Tasks are added only to a draft; intent %d is %s.", intentID, in.Status)
	}
	if len(in.Questions) > 0 {
		return Task{}, refuse(refusal.Conflict, "Intent %d has open questions. Answer them, and open the intent again without questions, before adding tasks.", intentID)
	}

	n, err := nextTaskNumber(ctx, tx, in.AppID)
	if err != nil {
		return Task{}, err
	}
	t.Slug = plan.Slug(n, t.Title)
	if ps := plan.ValidateTask(t); len(ps) > 0 {
		return Task{}, &refusal.Error{Code: refusal.Invalid, Problems: ps, Message: "The task was not added: " + ps.Error() + "."}
	}
	tasks, err := intentTasks(ctx, tx, intentID)
	if err != nil {
		return Task{}, err
	}
	if ps := plan.ValidateGraph(append(plans(live(tasks)), t)); len(ps) > 0 {
		return Task{}, &refusal.Error{Code: refusal.Invalid, Problems: ps, Message: "The task was not added: " + ps.Error() + "."}
	}

	res, err := tx.ExecContext(ctx,
		`INSERT INTO tasks (intent_id, app_id, slug, title, priority, labels, blocked_by, estimated_lines, locks,
		                    risk, stub, repaid_by, reasoning, summary, criteria, no_failure_path, non_functional,
		                    test_notes, runbook, status, created_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'proposed', ?)`,
		intentID, in.AppID, t.Slug, t.Title, t.Priority, jsonText(list(t.Labels)), jsonText(list(t.BlockedBy)),
		t.EstimatedLines, jsonText(list(t.Locks)), t.Risk, t.Stub, t.RepaidBy, t.Reasoning, t.Summary,
		jsonText(list(t.Criteria)), t.NoFailurePath, jsonText(list(t.NonFunctional)), jsonText(list(t.TestNotes)),
		jsonText(list(t.Runbook)), now)
	if err != nil {
		return Task{}, fmt.Errorf("intent: add task %s: %w", t.Slug, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return Task{}, fmt.Errorf("intent: add task %s: %w", t.Slug, err)
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO task_events (task_id, at, from_status, to_status, reason, actor) VALUES (?, ?, '', 'proposed', ?, ?)`,
		id, now, "the engineer planned it", ActorEngineer); err != nil {
		return Task{}, fmt.Errorf("intent: add task %s: %w", t.Slug, err)
	}
	// The plan changed, so it is being written again until it is submitted.
	if _, err := tx.ExecContext(ctx,
		`UPDATE intents SET submitted_at = NULL, updated_at = ? WHERE id = ?`, now, intentID); err != nil {
		return Task{}, fmt.Errorf("intent: add task %s: %w", t.Slug, err)
	}
	added, err := loadTask(ctx, tx, id)
	if err != nil {
		return Task{}, err
	}
	if err := tx.Commit(); err != nil {
		return Task{}, fmt.Errorf("intent: add task %s: %w", t.Slug, err)
	}
	return added, nil
}

// Submit checks the whole plan of a draft, or of a stopped intent the
// engineer revised (no open questions, at least one task, a valid graph),
// and stamps submitted_at: the draft is no longer being written, and a
// guided request records the plan as a new version to approve.
func (s *Service) Submit(ctx context.Context, intentID int64) error {
	now := s.now().UnixMilli()
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("intent: submit: %w", err)
	}
	defer tx.Rollback()
	in, err := loadIntent(ctx, tx, intentID)
	if err != nil {
		return err
	}
	// A draft is submitted; so is a stopped intent whose plan the engineer
	// revised (a failed task rewritten), so that a guided request can
	// approve the revision and Run it.
	if in.Status != IntentDraft && in.Status != IntentStopped {
		return refuse(refusal.Conflict, "Only a draft, or a stopped intent's revised plan, can be submitted; intent %d is %s.", intentID, in.Status)
	}
	if len(in.Questions) > 0 {
		return refuse(refusal.Conflict, "Intent %d has open questions. Answer them, and open the intent again without questions, before submitting.", intentID)
	}
	tasks, err := intentTasks(ctx, tx, intentID)
	if err != nil {
		return err
	}
	graph := plans(live(tasks))
	if len(graph) == 0 {
		return refuse(refusal.Invalid, "Intent %d has no tasks; add at least one before submitting.", intentID)
	}
	if ps := plan.ValidateGraph(graph); len(ps) > 0 {
		return &refusal.Error{Code: refusal.Invalid, Problems: ps, Message: "The plan was not submitted: " + ps.Error() + "."}
	}
	if _, err := tx.ExecContext(ctx,
		`UPDATE intents SET submitted_at = ?, updated_at = ? WHERE id = ?`, now, now, intentID); err != nil {
		return fmt.Errorf("intent: submit: %w", err)
	}
	// A guided plan waits for the owner's approval from now on.
	if in.Mode == ModeGuided {
		if err := notify(ctx, tx, s.now(), Notice{Kind: NoticeApproval, AppID: in.AppID, IntentID: intentID,
			Sentence: fmt.Sprintf("The guided plan of intent #%d (%s) waits for your approval.", intentID, in.AppID),
			Link:     fmt.Sprintf("/backlog/intents/%d", intentID)}); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("intent: submit: %w", err)
	}
	return nil
}

// List returns an application's intents, newest first, each with how many
// of its tasks are in each status.
func (s *Service) List(ctx context.Context, appID string) ([]IntentSummary, error) {
	tx, err := s.db.Read.BeginTxx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("intent: list: %w", err)
	}
	defer tx.Rollback()
	var rows []intentRow
	if err := tx.SelectContext(ctx, &rows,
		`SELECT id, app_id, status, mode, request, restated, fits, conflicts, out_of_reach, assumptions,
		        questions, submitted_at, stop_reason, created_at, updated_at
		 FROM intents WHERE app_id = ? ORDER BY id DESC`, appID); err != nil {
		return nil, fmt.Errorf("intent: list: %w", err)
	}
	var counts []struct {
		IntentID int64      `db:"intent_id"`
		Status   TaskStatus `db:"status"`
		N        int        `db:"n"`
	}
	if err := tx.SelectContext(ctx, &counts,
		`SELECT intent_id, status, count(*) AS n FROM tasks WHERE app_id = ? GROUP BY intent_id, status`,
		appID); err != nil {
		return nil, fmt.Errorf("intent: list: %w", err)
	}
	summaries := make([]IntentSummary, 0, len(rows))
	index := map[int64]int{}
	for _, r := range rows {
		in, err := r.intent()
		if err != nil {
			return nil, err
		}
		index[in.ID] = len(summaries)
		summaries = append(summaries, IntentSummary{Intent: in, Counts: map[TaskStatus]int{}, QuestionCount: len(in.Questions)})
	}
	for _, c := range counts {
		if i, ok := index[c.IntentID]; ok {
			summaries[i].Counts[c.Status] = c.N
			if c.Status != TaskRemoved {
				summaries[i].Live += c.N
			}
		}
	}
	return summaries, nil
}

// Get returns an intent with its tasks in run order, each with its tier,
// whether it is blocked and the model it would run on.
func (s *Service) Get(ctx context.Context, intentID int64) (IntentDetail, error) {
	r, err := s.read(ctx, intentID, false)
	return r.d, err
}

// GetWithInterventions is Get with the intent's receipts, pending and
// applied, each in order, read at once: what the intent's page shows of
// the store, asked for every two seconds while it runs.
func (s *Service) GetWithInterventions(ctx context.Context, intentID int64) (d IntentDetail, pending, applied []Receipt, err error) {
	r, err := s.read(ctx, intentID, true)
	return r.d, r.pending, r.applied, err
}

// read is Get's read, with the receipts when asked for: answered from the
// last one while the intent's version and the tier models are the same.
func (s *Service) read(ctx context.Context, intentID int64, receipts bool) (intentRead, error) {
	tiers, err := s.TierModels()
	if err != nil {
		return intentRead{}, err
	}
	var version int64
	err = s.db.Read.GetContext(ctx, &version, `SELECT version FROM intents WHERE id = ?`, intentID)
	if errors.Is(err, sql.ErrNoRows) {
		return intentRead{}, refuse(refusal.NotFound, "There is no intent %d.", intentID)
	}
	if err != nil {
		return intentRead{}, fmt.Errorf("intent: get %d: %w", intentID, err)
	}
	if r, ok := s.details.get(intentID, version, tiers, receipts); ok {
		return r, nil
	}
	tx, err := s.db.Read.BeginTxx(ctx, nil)
	if err != nil {
		return intentRead{}, fmt.Errorf("intent: get %d: %w", intentID, err)
	}
	defer tx.Rollback()
	// The version the read is kept under is the one it was read at.
	if err := tx.GetContext(ctx, &version, `SELECT version FROM intents WHERE id = ?`, intentID); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return intentRead{}, fmt.Errorf("intent: get %d: %w", intentID, err)
	}
	in, err := loadIntent(ctx, tx, intentID)
	if err != nil {
		return intentRead{}, err
	}
	tasks, err := intentTasks(ctx, tx, intentID)
	if err != nil {
		return intentRead{}, err
	}
	r := intentRead{d: IntentDetail{Intent: in, Tasks: backlog(tasks, tiers)}, receipts: receipts}
	reasons, err := endReasons(ctx, tx, intentID)
	if err != nil {
		return intentRead{}, err
	}
	for i := range r.d.Tasks {
		r.d.Tasks[i].Reason = reasons[r.d.Tasks[i].ID]
	}
	if receipts {
		if r.pending, r.applied, err = intentReceipts(ctx, tx, intentID); err != nil {
			return intentRead{}, err
		}
	}
	s.details.put(intentID, version, tiers, r)
	return r, nil
}

// endReasons are, for the failed and interrupted tasks of an intent, the
// reason of the event that moved each there.
func endReasons(ctx context.Context, tx *sqlx.Tx, intentID int64) (map[int64]string, error) {
	var rows []struct {
		TaskID int64  `db:"task_id"`
		Reason string `db:"reason"`
	}
	if err := tx.SelectContext(ctx, &rows,
		`SELECT e.task_id, e.reason FROM tasks t
		 JOIN task_events e ON e.id = (SELECT max(id) FROM task_events WHERE task_id = t.id)
		 WHERE t.intent_id = ? AND t.status IN ('failed', 'interrupted') AND e.to_status = t.status`, intentID); err != nil {
		return nil, fmt.Errorf("intent: end reasons: %w", err)
	}
	out := make(map[int64]string, len(rows))
	for _, r := range rows {
		out[r.TaskID] = r.Reason
	}
	return out, nil
}

// Task returns one task as the Backlog shows it, with its history.
func (s *Service) Task(ctx context.Context, taskID int64) (TaskDetail, error) {
	tiers, err := s.TierModels()
	if err != nil {
		return TaskDetail{}, err
	}
	tx, err := s.db.Read.BeginTxx(ctx, nil)
	if err != nil {
		return TaskDetail{}, fmt.Errorf("intent: task %d: %w", taskID, err)
	}
	defer tx.Rollback()
	t, err := loadTask(ctx, tx, taskID)
	if err != nil {
		return TaskDetail{}, err
	}
	// Its blockers are tasks of the same intent.
	siblings, err := intentTasks(ctx, tx, t.IntentID)
	if err != nil {
		return TaskDetail{}, err
	}
	events, err := taskEvents(ctx, tx, taskID)
	if err != nil {
		return TaskDetail{}, err
	}
	return TaskDetail{BacklogTask: backlogTask(t, statuses(siblings), tiers), Events: events}, nil
}

// AllSlugs returns every slug of an application's tasks, across its
// intents, in order.
func (s *Service) AllSlugs(ctx context.Context, appID string) ([]string, error) {
	tx, err := s.db.Read.BeginTxx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("intent: slugs of %s: %w", appID, err)
	}
	defer tx.Rollback()
	return appSlugs(ctx, tx, appID)
}

// NextSlug is the slug a task of this title would take if it were added
// to the application now: one read of its counter, whatever its history.
func (s *Service) NextSlug(ctx context.Context, appID, title string) (string, error) {
	tx, err := s.db.Read.BeginTxx(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("intent: next slug of %s: %w", appID, err)
	}
	defer tx.Rollback()
	n, err := nextTaskNumber(ctx, tx, appID)
	if err != nil {
		return "", err
	}
	return plan.Slug(n, title), nil
}

// backlog orders an intent's tasks as the Backlog shows them: the live ones
// in run order, then the removed ones by slug.
func backlog(tasks []Task, tiers map[string]string) []BacklogTask {
	bySlug := make(map[string]Task, len(tasks))
	var removed []Task
	for _, t := range tasks {
		if t.Status == TaskRemoved {
			removed = append(removed, t)
			continue
		}
		bySlug[t.Slug] = t
	}
	status := statuses(tasks)
	out := make([]BacklogTask, 0, len(tasks))
	for _, p := range plan.RunOrder(plans(live(tasks))) {
		out = append(out, backlogTask(bySlug[p.Slug], status, tiers))
	}
	slices.SortFunc(removed, func(a, b Task) int { return cmp.Compare(a.Slug, b.Slug) })
	for _, t := range removed {
		out = append(out, backlogTask(t, status, tiers))
	}
	return out
}

func statuses(tasks []Task) map[string]TaskStatus {
	m := make(map[string]TaskStatus, len(tasks))
	for _, t := range tasks {
		m[t.Slug] = t.Status
	}
	return m
}

// backlogTask derives what the Backlog shows beside a task's row: its tier
// and why, the blockers it waits on, and the model it would run on.
func backlogTask(t Task, status map[string]TaskStatus, tiers map[string]string) BacklogTask {
	bt := BacklogTask{Task: t}
	bt.Tier, bt.TierReasons = plan.Tier(t.Task)
	for _, b := range t.BlockedBy {
		if status[b] != TaskCompleted {
			bt.WaitingOn = append(bt.WaitingOn, b)
		}
	}
	bt.Blocked = t.Status == TaskInQueue && len(bt.WaitingOn) > 0
	// The Settings model is not known here; "" leaves it to the executor.
	bt.RunsOn, bt.RunsOnFrom = plan.ModelFor(t.Model, bt.Tier, tiers, "")
	return bt
}

// TakeRequest makes the intent its request's, in the request's
// transaction as it is linked: its mode is the request's, and its request
// the request's first message, byte for byte, whatever words the engineer
// opened it with.
func TakeRequest(ctx context.Context, w migrations.Within, intentID int64, mode Mode, text string) error {
	if _, err := w.ExecContext(ctx, `UPDATE intents SET mode = ?, request = ? WHERE id = ?`, string(mode), text, intentID); err != nil {
		return fmt.Errorf("intent: take request: %w", err)
	}
	return nil
}

// TakeMode records a new mode of the intent's request on the intent, in
// the caller's transaction (the request's journal entry).
func TakeMode(ctx context.Context, w migrations.Within, intentID int64, mode Mode) error {
	if _, err := w.ExecContext(ctx, `UPDATE intents SET mode = ? WHERE id = ?`, string(mode), intentID); err != nil {
		return fmt.Errorf("intent: take mode: %w", err)
	}
	return nil
}
