package knowledge

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"

	"autoapp/migrations"
)

// The relations the links index records. Each reads "from <kind> to".
const (
	LinkRanAs         = "ran-as"         // task → run (task_runs)
	LinkPlanned       = "planned"        // task → file its plan locks (tasks)
	LinkEdited        = "edited"         // run, task or case → file (cases: the edit lines)
	LinkOpenedIn      = "opened-in"      // case → run (cases)
	LinkResolvedIn    = "resolved-in"    // case → run (cases)
	LinkDistilledFrom = "distilled-from" // lesson → case (lessons)
	LinkServedTo      = "served-to"      // lesson → run (servings)
	LinkTurn          = "turn"           // run → turn (contexts)
)

// LinkKinds lists the relations in the order they are printed.
var LinkKinds = []string{LinkRanAs, LinkPlanned, LinkEdited, LinkOpenedIn, LinkResolvedIn,
	LinkDistilledFrom, LinkServedTo, LinkTurn}

// The kinds of thing a link joins.
const (
	NodeTask   = "task" // by slug; a slug is unique within its application
	NodeRun    = "run"
	NodeFile   = "file" // by path relative to the workspace
	NodeCase   = "case"
	NodeLesson = "lesson"
	NodeTurn   = "turn" // a contexts row
)

// Link is one row of the relationship index: From touched To, as the row
// SourceTable:SourceID says.
type Link struct {
	ID          int64  `json:"id" db:"id"`
	Kind        string `json:"kind" db:"kind"`
	FromKind    string `json:"fromKind" db:"from_kind"`
	FromID      string `json:"fromId" db:"from_id"`
	ToKind      string `json:"toKind" db:"to_kind"`
	ToID        string `json:"toId" db:"to_id"`
	AppID       string `json:"appId" db:"app_id"`
	SourceTable string `json:"sourceTable" db:"source_table"`
	SourceID    string `json:"sourceId" db:"source_id"`
}

// Source names the row the link was read from, as table:id.
func (l Link) Source() string { return l.SourceTable + ":" + l.SourceID }

// LinkQuery selects links for Links.
type LinkQuery struct {
	AppID string // "" for every application
}

// Links answers the rows of the index q selects, by relation in the order
// of LinkKinds, then in the order they were written.
func Links(ctx context.Context, db *migrations.DB, q LinkQuery) ([]Link, error) {
	query := `SELECT id, kind, from_kind, from_id, to_kind, to_id, app_id, source_table, source_id FROM links`
	var args []any
	if q.AppID != "" {
		query += ` WHERE app_id = ?`
		args = append(args, q.AppID)
	}
	query += ` ORDER BY id`
	var out []Link
	if err := db.Read.SelectContext(ctx, &out, query, args...); err != nil {
		return nil, fmt.Errorf("knowledge: links: %w", err)
	}
	// Rows are written sorted by relation; this keeps rows of a relation
	// that is not in LinkKinds (written by a newer server) after the rest.
	slices.SortStableFunc(out, func(a, b Link) int { return cmp.Compare(kindRank(a.Kind), kindRank(b.Kind)) })
	return out, nil
}

func kindRank(kind string) int {
	if i := slices.Index(LinkKinds, kind); i >= 0 {
		return i
	}
	return len(LinkKinds)
}

// TaskRecords is what the links index reads of the intents store, which
// owns the tasks and their runs (*intent.Service answers it).
type TaskRecords interface {
	// TaskRuns calls each for every run a task started, with the task's
	// application and slug.
	TaskRuns(ctx context.Context, each func(runID, appID, slug string)) error
	// TaskLocks calls each for every task whose plan locks names, with its
	// application, slug and the names.
	TaskLocks(ctx context.Context, each func(taskID int64, appID, slug string, locks []string)) error
}

// RebuildLinks rewrites the links index from what the two stores hold: the
// tasks' runs and locks, as tasks answers them, and the knowledge store
// (cases, their edit lines, lessons, servings when the table exists,
// contexts). Every row is deleted and written again in one transaction of
// the knowledge store, so a reader sees the old index or the new one, and a
// second rebuild over the same stores writes the same rows. It answers how
// many rows the index now holds.
func RebuildLinks(ctx context.Context, knowledgeDB *migrations.DB, tasks TaskRecords) (int, error) {
	// The tasks are read first, so the knowledge store's write lock is held
	// only while it is rewritten.
	var b linkSet
	runs, err := readTaskRuns(ctx, tasks, &b)
	if err != nil {
		return 0, err
	}
	if err := readPlans(ctx, tasks, &b); err != nil {
		return 0, err
	}

	tx, err := knowledgeDB.Write.BeginTxx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("knowledge: rebuild links: %w", err)
	}
	defer tx.Rollback()
	for _, read := range []func(context.Context, *sqlx.Tx, *linkSet, map[string]taskRun) error{
		readCaseLinks, readLessonLinks, readServingLinks, readTurnLinks,
	} {
		if err := read(ctx, tx, &b, runs); err != nil {
			return 0, err
		}
	}
	rows := b.sorted()
	if _, err := tx.ExecContext(ctx, `DELETE FROM links`); err != nil {
		return 0, fmt.Errorf("knowledge: rebuild links: %w", err)
	}
	for _, l := range rows {
		if _, err := tx.ExecContext(ctx, `INSERT INTO links
			(kind, from_kind, from_id, to_kind, to_id, app_id, source_table, source_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			l.Kind, l.FromKind, l.FromID, l.ToKind, l.ToID, l.AppID, l.SourceTable, l.SourceID); err != nil {
			return 0, fmt.Errorf("knowledge: rebuild links: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("knowledge: rebuild links: %w", err)
	}
	return len(rows), nil
}

// linkSet gathers links once each.
type linkSet struct {
	seen map[Link]bool
	list []Link
}

func (s *linkSet) add(l Link) {
	if l.FromID == "" || l.ToID == "" {
		return
	}
	if s.seen == nil {
		s.seen = map[Link]bool{}
	}
	if s.seen[l] {
		return
	}
	s.seen[l] = true
	s.list = append(s.list, l)
}

// sorted is the set in a fixed order, so a rebuild over the same stores
// writes the same rows with the same ids.
func (s *linkSet) sorted() []Link {
	out := slices.Clone(s.list)
	slices.SortFunc(out, func(a, b Link) int {
		return cmp.Or(
			cmp.Compare(kindRank(a.Kind), kindRank(b.Kind)),
			cmp.Compare(a.AppID, b.AppID),
			cmp.Compare(a.SourceTable, b.SourceTable),
			compareIDs(a.SourceID, b.SourceID),
			cmp.Compare(a.FromKind, b.FromKind),
			compareIDs(a.FromID, b.FromID),
			cmp.Compare(a.ToKind, b.ToKind),
			compareIDs(a.ToID, b.ToID),
		)
	})
	return out
}

// compareIDs orders numeric ids as numbers and the rest as text.
func compareIDs(a, b string) int {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	if errA == nil && errB == nil {
		return cmp.Compare(x, y)
	}
	return cmp.Compare(a, b)
}

// taskRun is the task a run id started.
type taskRun struct {
	Slug, AppID string
}

// readTaskRuns adds task ran-as run for every run a task started and
// answers the task of each run, for the edits.
func readTaskRuns(ctx context.Context, tasks TaskRecords, b *linkSet) (map[string]taskRun, error) {
	runs := map[string]taskRun{}
	err := tasks.TaskRuns(ctx, func(runID, appID, slug string) {
		runs[runID] = taskRun{Slug: slug, AppID: appID}
		b.add(Link{Kind: LinkRanAs, FromKind: NodeTask, FromID: slug, ToKind: NodeRun, ToID: runID,
			AppID: appID, SourceTable: "task_runs", SourceID: runID})
	})
	if err != nil {
		return nil, fmt.Errorf("knowledge: rebuild links: %w", err)
	}
	return runs, nil
}

// readPlans adds task planned file for every lock of a task that names a
// file. A lock is a name the plan chose; only one shaped like a path in the
// workspace (see lockedFile) is taken for a file, the rest are skipped.
func readPlans(ctx context.Context, tasks TaskRecords, b *linkSet) error {
	err := tasks.TaskLocks(ctx, func(taskID int64, appID, slug string, locks []string) {
		for _, lock := range locks {
			if path, ok := lockedFile(lock); ok {
				b.add(Link{Kind: LinkPlanned, FromKind: NodeTask, FromID: slug, ToKind: NodeFile, ToID: path,
					AppID: appID, SourceTable: "tasks", SourceID: strconv.FormatInt(taskID, 10)})
			}
		}
	})
	if err != nil {
		return fmt.Errorf("knowledge: rebuild links: %w", err)
	}
	return nil
}

// lockedFile answers the workspace path a lock names, when it names one: a
// relative path with a folder or an extension, no pattern characters and no
// spaces. "notes" or "the tags table" name no file and are skipped.
func lockedFile(lock string) (string, bool) {
	p := strings.TrimPrefix(strings.TrimSpace(lock), "./")
	switch {
	case p == "", strings.ContainsAny(p, "*?[]{} \t\\"), strings.HasPrefix(p, "/"),
		strings.HasSuffix(p, "/"), strings.Contains(p, ".."):
		return "", false
	}
	return p, strings.Contains(p, "/") || strings.Contains(p, ".")
}

// readCaseLinks adds case opened-in and resolved-in runs, and for each edit
// line: the case, the run that made it and that run's task edited the file.
func readCaseLinks(ctx context.Context, tx *sqlx.Tx, b *linkSet, runs map[string]taskRun) error {
	var rows []struct {
		ID            int64          `db:"id"`
		AppID         string         `db:"app_id"`
		OpenedRunID   string         `db:"opened_run_id"`
		ResolvedRunID sql.NullString `db:"resolved_run_id"`
		Edits         string         `db:"edits"`
	}
	if err := tx.SelectContext(ctx, &rows,
		`SELECT id, app_id, opened_run_id, resolved_run_id, edits FROM cases ORDER BY id`); err != nil {
		return fmt.Errorf("knowledge: rebuild links: cases: %w", err)
	}
	for _, c := range rows {
		id := strconv.FormatInt(c.ID, 10)
		link := func(kind, fromKind, fromID, toKind, toID string) {
			b.add(Link{Kind: kind, FromKind: fromKind, FromID: fromID, ToKind: toKind, ToID: toID,
				AppID: c.AppID, SourceTable: "cases", SourceID: id})
		}
		link(LinkOpenedIn, NodeCase, id, NodeRun, c.OpenedRunID)
		link(LinkResolvedIn, NodeCase, id, NodeRun, c.ResolvedRunID.String)
		for line := range strings.Lines(c.Edits) {
			runID, files := editedFiles(line)
			for _, f := range files {
				link(LinkEdited, NodeCase, id, NodeFile, f)
				if runID == "" {
					continue
				}
				link(LinkEdited, NodeRun, runID, NodeFile, f)
				// A run of another application's task is not this case's.
				if t, ok := runs[runID]; ok && t.AppID == c.AppID {
					link(LinkEdited, NodeTask, t.Slug, NodeFile, f)
				}
			}
		}
	}
	return nil
}

// editedFiles reads one line of a case's edits, as Cases.AppendEdit writes
// it ("<time> [<run id>] <summary>"), where the summary is a workspace
// commit's subject: "source.edit <path> …" or "source.change <action>
// <path>, <action> <path>[ and N more]". A line of any other shape names no
// file; the files a "N more" leaves out are not guessed at.
func editedFiles(line string) (runID string, files []string) {
	fields := strings.Fields(line)
	if len(fields) < 2 {
		return "", nil
	}
	rest := fields[1:] // past the time
	if !strings.HasPrefix(rest[0], "source.") {
		runID, rest = rest[0], rest[1:]
	}
	if len(rest) < 2 {
		return runID, nil
	}
	switch rest[0] {
	case "source.edit":
		if p, ok := editedPath(rest[1]); ok {
			files = append(files, p)
		}
	case "source.change":
		summary := strings.Join(rest[1:], " ")
		if i := strings.LastIndex(summary, " and "); i >= 0 && strings.HasSuffix(summary, " more") {
			summary = summary[:i]
		}
		for part := range strings.SplitSeq(summary, ", ") {
			action, path, ok := strings.Cut(part, " ")
			if !ok || action == "" {
				continue
			}
			if p, ok := editedPath(path); ok {
				files = append(files, p)
			}
		}
	}
	return runID, files
}

func editedPath(p string) (string, bool) {
	p = strings.TrimSpace(p)
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "..") {
		return "", false
	}
	return p, true
}

// readLessonLinks adds lesson distilled-from case for every lesson that
// records its case.
func readLessonLinks(ctx context.Context, tx *sqlx.Tx, b *linkSet, _ map[string]taskRun) error {
	var rows []struct {
		ID     int64  `db:"id"`
		CaseID int64  `db:"case_id"`
		AppID  string `db:"app_id"`
	}
	if err := tx.SelectContext(ctx, &rows, `SELECT l.id, l.case_id, coalesce(c.app_id, '') AS app_id
		FROM lessons l LEFT JOIN cases c ON c.id = l.case_id
		WHERE l.case_id IS NOT NULL ORDER BY l.id`); err != nil {
		return fmt.Errorf("knowledge: rebuild links: lessons: %w", err)
	}
	for _, l := range rows {
		id := strconv.FormatInt(l.ID, 10)
		b.add(Link{Kind: LinkDistilledFrom, FromKind: NodeLesson, FromID: id, ToKind: NodeCase,
			ToID: strconv.FormatInt(l.CaseID, 10), AppID: l.AppID, SourceTable: "lessons", SourceID: id})
	}
	return nil
}

// readServingLinks adds lesson served-to run for every serving, when the
// store has a servings table with the columns it needs; otherwise it adds
// nothing.
func readServingLinks(ctx context.Context, tx *sqlx.Tx, b *linkSet, _ map[string]taskRun) error {
	var columns []string
	if err := tx.SelectContext(ctx, &columns,
		`SELECT name FROM pragma_table_info('servings')`); err != nil {
		return fmt.Errorf("knowledge: rebuild links: servings: %w", err)
	}
	for _, need := range []string{"id", "lesson_id", "run_id"} {
		if !slices.Contains(columns, need) {
			return nil
		}
	}
	app := `coalesce(c.app_id, '')`
	if slices.Contains(columns, "app_id") {
		app = `coalesce(s.app_id, c.app_id, '')`
	}
	var rows []struct {
		ID       int64  `db:"id"`
		LessonID int64  `db:"lesson_id"`
		RunID    string `db:"run_id"`
		AppID    string `db:"app_id"`
	}
	if err := tx.SelectContext(ctx, &rows, `SELECT s.id, s.lesson_id, s.run_id, `+app+` AS app_id
		FROM servings s LEFT JOIN lessons l ON l.id = s.lesson_id LEFT JOIN cases c ON c.id = l.case_id
		WHERE s.run_id IS NOT NULL AND s.run_id <> '' AND s.lesson_id IS NOT NULL ORDER BY s.id`); err != nil {
		return fmt.Errorf("knowledge: rebuild links: servings: %w", err)
	}
	for _, s := range rows {
		b.add(Link{Kind: LinkServedTo, FromKind: NodeLesson, FromID: strconv.FormatInt(s.LessonID, 10),
			ToKind: NodeRun, ToID: s.RunID, AppID: s.AppID,
			SourceTable: "servings", SourceID: strconv.FormatInt(s.ID, 10)})
	}
	return nil
}

// readTurnLinks adds run turn contexts-row for every turn recorded under a
// run.
func readTurnLinks(ctx context.Context, tx *sqlx.Tx, b *linkSet, _ map[string]taskRun) error {
	var rows []struct {
		ID    int64  `db:"id"`
		RunID string `db:"run_id"`
		AppID string `db:"app_id"`
	}
	if err := tx.SelectContext(ctx, &rows, `SELECT id, run_id, coalesce(app_id, '') AS app_id
		FROM contexts WHERE run_id IS NOT NULL AND run_id <> '' ORDER BY id`); err != nil {
		return fmt.Errorf("knowledge: rebuild links: contexts: %w", err)
	}
	for _, t := range rows {
		id := strconv.FormatInt(t.ID, 10)
		b.add(Link{Kind: LinkTurn, FromKind: NodeRun, FromID: t.RunID, ToKind: NodeTurn, ToID: id,
			AppID: t.AppID, SourceTable: "contexts", SourceID: id})
	}
	return nil
}
