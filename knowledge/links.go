package knowledge

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
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

// LinksVersion is the version of the derivation this code writes. An
// index that links_state says an older version wrote is rebuilt whole by
// the next UpdateLinks; raise it whenever what a source row derives
// changes. 2: a source.change line that names its action once ("change
// a, b") links every file it names, not only the first.
const LinksVersion = 2

// TaskRecords is what the links index reads of the intents store, which
// owns the tasks and their runs (*intent.Service answers it).
type TaskRecords interface {
	// TaskRuns calls each for every run a task started after the run
	// numbered after (0: all), in the order they started, with its number
	// (which only grows), the task's application and slug.
	TaskRuns(ctx context.Context, after int64, each func(n int64, runID, appID, slug string)) error
	// TaskLocks calls each for every task whose plan locks names, with its
	// application, slug and the names.
	TaskLocks(ctx context.Context, each func(taskID int64, appID, slug string, locks []string)) error
	// TasksOfRuns calls each once for every task that started one of
	// runIDs, with its application, slug, locks and every run it started.
	TasksOfRuns(ctx context.Context, runIDs []string, each func(taskID int64, appID, slug string, locks, runs []string)) error
}

// linkMarks is links_state: the version that derived the index and the
// highest id of each source table it has read.
type linkMarks struct {
	Version  int   `db:"version"`
	TaskRuns int64 `db:"task_runs"`
	Contexts int64 `db:"contexts"`
	Servings int64 `db:"servings"`
	Lessons  int64 `db:"lessons"`
	Cases    int64 `db:"cases"`
}

// linkPass is what one pass read: the links the rows it read derive, the
// source rows it read (whose rows in the index it replaces), the task of
// each run it knows, and the highest ids it has seen.
type linkPass struct {
	links linkSet
	read  map[string][]string // source table → ids
	runs  map[string]taskRun
	apps  []string // the applications of the tasks whose runs it read
	dirty []string // the runs whose cases it reads
	marks linkMarks
}

// readRow notes that the pass read a source row, whose rows in the index
// it replaces.
func (p *linkPass) readRow(table, id string) {
	if p.read == nil {
		p.read = map[string][]string{}
	}
	p.read[table] = append(p.read[table], id)
}

// RebuildLinks rewrites the links index from what the two stores hold: the
// tasks' runs and locks, as tasks answers them, and the knowledge store
// (cases, their edit lines, lessons, servings when the table exists,
// contexts). Every row is deleted and written again in one transaction of
// the knowledge store, so a reader sees the old index or the new one, and a
// second rebuild over the same stores writes the same rows; links_state
// then names this code's version and what it read. It answers how many
// rows the index now holds.
func RebuildLinks(ctx context.Context, knowledgeDB *migrations.DB, tasks TaskRecords) (int, error) {
	// The tasks are read first, so the knowledge store's write lock is held
	// only while it is rewritten.
	p := &linkPass{runs: map[string]taskRun{}}
	err := tasks.TaskRuns(ctx, 0, func(n int64, runID, appID, slug string) {
		p.ranAs(runID, appID, slug)
		p.marks.TaskRuns = max(p.marks.TaskRuns, n)
	})
	if err != nil {
		return 0, fmt.Errorf("knowledge: rebuild links: %w", err)
	}
	err = tasks.TaskLocks(ctx, func(taskID int64, appID, slug string, locks []string) {
		p.planned(taskID, appID, slug, locks)
	})
	if err != nil {
		return 0, fmt.Errorf("knowledge: rebuild links: %w", err)
	}

	tx, err := knowledgeDB.Write.BeginTxx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("knowledge: rebuild links: %w", err)
	}
	defer tx.Rollback()
	if err := p.readKnowledge(ctx, tx, nil, linkMarks{}); err != nil {
		return 0, err
	}
	rows := p.links.sorted()
	if _, err := tx.ExecContext(ctx, `DELETE FROM links`); err != nil {
		return 0, fmt.Errorf("knowledge: rebuild links: %w", err)
	}
	if err := insertLinks(ctx, tx, rows); err != nil {
		return 0, err
	}
	p.marks.Version = LinksVersion
	if _, err := tx.NamedExecContext(ctx, `INSERT INTO links_state (id, version, task_runs, contexts, servings, lessons, cases)
		VALUES (1, :version, :task_runs, :contexts, :servings, :lessons, :cases)
		ON CONFLICT (id) DO UPDATE SET version = excluded.version, task_runs = excluded.task_runs, contexts = excluded.contexts,
			servings = excluded.servings, lessons = excluded.lessons, cases = excluded.cases`, p.marks); err != nil {
		return 0, fmt.Errorf("knowledge: rebuild links: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("knowledge: rebuild links: %w", err)
	}
	return len(rows), nil
}

// LinksUpdate says what UpdateLinks did: rebuilt the index whole, or
// wrote and deleted rows of the source rows it read again.
type LinksUpdate struct {
	Rebuilt          bool
	Written, Deleted int
}

// UpdateLinks brings the links index up to date after an attempt (runIDs
// names the run that ended) or at a start (none), in one transaction of the
// knowledge store. It reads only what may have changed: the runs started
// since the last pass and runIDs, their tasks (runs and locks), the cases
// those runs opened or resolved and the open cases of their applications,
// and the rows of contexts, servings, lessons and cases written since. The
// rows those source rows derive replace theirs in the index; a row that is
// already there is left as it is, and no other row is touched. An index an
// older version of the derivation wrote (or none) is rebuilt whole instead.
//
// A case changed only outside a task's run (an edit a chat turn made to a
// case opened earlier) joins the index when a later run of its
// application reads it, or at a rebuild.
func UpdateLinks(ctx context.Context, knowledgeDB *migrations.DB, tasks TaskRecords, runIDs ...string) (LinksUpdate, error) {
	var seen linkMarks
	err := knowledgeDB.Read.GetContext(ctx, &seen,
		`SELECT version, task_runs, contexts, servings, lessons, cases FROM links_state WHERE id = 1`)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return LinksUpdate{}, fmt.Errorf("knowledge: update links: %w", err)
	}
	if seen.Version < LinksVersion {
		n, err := RebuildLinks(ctx, knowledgeDB, tasks)
		return LinksUpdate{Rebuilt: true, Written: n}, err
	}

	// The intents store first, as for a rebuild: the runs since the last
	// pass, then the tasks of those and of runIDs.
	p := &linkPass{runs: map[string]taskRun{}}
	p.marks.TaskRuns = seen.TaskRuns
	dirty := slices.Clone(runIDs)
	err = tasks.TaskRuns(ctx, seen.TaskRuns, func(n int64, runID, _, _ string) {
		dirty = append(dirty, runID)
		p.marks.TaskRuns = max(p.marks.TaskRuns, n)
	})
	if err != nil {
		return LinksUpdate{}, fmt.Errorf("knowledge: update links: %w", err)
	}
	p.dirty = dirty
	err = tasks.TasksOfRuns(ctx, dirty, func(taskID int64, appID, slug string, locks, runs []string) {
		for _, r := range runs {
			p.ranAs(r, appID, slug)
		}
		p.planned(taskID, appID, slug, locks)
		if !slices.Contains(p.apps, appID) {
			p.apps = append(p.apps, appID)
		}
	})
	if err != nil {
		return LinksUpdate{}, fmt.Errorf("knowledge: update links: %w", err)
	}

	tx, err := knowledgeDB.Write.BeginTxx(ctx, nil)
	if err != nil {
		return LinksUpdate{}, fmt.Errorf("knowledge: update links: %w", err)
	}
	defer tx.Rollback()
	if err := p.readKnowledge(ctx, tx, tasks, seen); err != nil {
		return LinksUpdate{}, err
	}
	u, err := replaceLinks(ctx, tx, p)
	if err != nil {
		return LinksUpdate{}, err
	}
	if _, err := tx.NamedExecContext(ctx, `UPDATE links_state SET task_runs = max(task_runs, :task_runs),
		contexts = max(contexts, :contexts), servings = max(servings, :servings), lessons = max(lessons, :lessons),
		cases = max(cases, :cases) WHERE id = 1`, p.marks); err != nil {
		return LinksUpdate{}, fmt.Errorf("knowledge: update links: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return LinksUpdate{}, fmt.Errorf("knowledge: update links: %w", err)
	}
	return u, nil
}

// ranAs adds task ran-as run, and remembers the run's task for the edits.
func (p *linkPass) ranAs(runID, appID, slug string) {
	p.runs[runID] = taskRun{Slug: slug, AppID: appID}
	p.links.add(Link{Kind: LinkRanAs, FromKind: NodeTask, FromID: slug, ToKind: NodeRun, ToID: runID,
		AppID: appID, SourceTable: "task_runs", SourceID: runID})
	p.readRow("task_runs", runID)
}

// planned adds task planned file for every lock of a task that names a
// file. A lock is a name the plan chose; only one shaped like a path in the
// workspace (see lockedFile) is taken for a file, the rest are skipped.
func (p *linkPass) planned(taskID int64, appID, slug string, locks []string) {
	id := strconv.FormatInt(taskID, 10)
	for _, lock := range locks {
		if path, ok := lockedFile(lock); ok {
			p.links.add(Link{Kind: LinkPlanned, FromKind: NodeTask, FromID: slug, ToKind: NodeFile, ToID: path,
				AppID: appID, SourceTable: "tasks", SourceID: id})
		}
	}
	p.readRow("tasks", id)
}

// readKnowledge reads the knowledge store's side of a pass in tx: every
// row written after seen (all of them when seen is zero), and the cases
// the pass's runs opened or resolved and the open cases of its
// applications. tasks, when set, answers the task of a run an edit line
// names that the pass does not know; a rebuild knows every run.
func (p *linkPass) readKnowledge(ctx context.Context, tx *sqlx.Tx, tasks TaskRecords, seen linkMarks) error {
	cases, err := readCases(ctx, tx, p, seen)
	if err != nil {
		return err
	}
	if tasks != nil {
		var unknown []string
		for _, c := range cases {
			for line := range strings.Lines(c.Edits) {
				if runID, _ := editedFiles(line); runID != "" && !slices.Contains(unknown, runID) {
					if _, ok := p.runs[runID]; !ok {
						unknown = append(unknown, runID)
					}
				}
			}
		}
		err := tasks.TasksOfRuns(ctx, unknown, func(_ int64, appID, slug string, _, runs []string) {
			for _, r := range runs {
				if _, ok := p.runs[r]; !ok {
					p.runs[r] = taskRun{Slug: slug, AppID: appID}
				}
			}
		})
		if err != nil {
			return fmt.Errorf("knowledge: update links: %w", err)
		}
	}
	p.caseLinks(cases)
	for _, read := range []func(context.Context, *sqlx.Tx, *linkPass, linkMarks) error{
		readLessonLinks, readServingLinks, readTurnLinks,
	} {
		if err := read(ctx, tx, p, seen); err != nil {
			return err
		}
	}
	if err := tx.GetContext(ctx, &p.marks.Contexts, `SELECT coalesce(max(id), 0) FROM contexts`); err != nil {
		return fmt.Errorf("knowledge: links: contexts: %w", err)
	}
	if err := tx.GetContext(ctx, &p.marks.Lessons, `SELECT coalesce(max(id), 0) FROM lessons`); err != nil {
		return fmt.Errorf("knowledge: links: lessons: %w", err)
	}
	if err := tx.GetContext(ctx, &p.marks.Cases, `SELECT coalesce(max(id), 0) FROM cases`); err != nil {
		return fmt.Errorf("knowledge: links: cases: %w", err)
	}
	return nil
}

// insertLinks writes rows, in their order.
func insertLinks(ctx context.Context, tx *sqlx.Tx, rows []Link) error {
	for _, l := range rows {
		if _, err := tx.ExecContext(ctx, `INSERT INTO links
			(kind, from_kind, from_id, to_kind, to_id, app_id, source_table, source_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			l.Kind, l.FromKind, l.FromID, l.ToKind, l.ToID, l.AppID, l.SourceTable, l.SourceID); err != nil {
			return fmt.Errorf("knowledge: links: %w", err)
		}
	}
	return nil
}

// replaceLinks makes the index's rows of the source rows p read what p
// derived from them: a row it holds already stays, with its id; one p no
// longer derives goes; a new one is written.
func replaceLinks(ctx context.Context, tx *sqlx.Tx, p *linkPass) (LinksUpdate, error) {
	var u LinksUpdate
	have := map[Link]int64{}
	for _, table := range slices.Sorted(maps.Keys(p.read)) {
		var rows []Link
		if err := tx.SelectContext(ctx, &rows, `SELECT id, kind, from_kind, from_id, to_kind, to_id, app_id, source_table, source_id
			FROM links WHERE source_table = ? AND source_id IN (SELECT value FROM json_each(?))`, table, jsonList(p.read[table])); err != nil {
			return u, fmt.Errorf("knowledge: update links: %w", err)
		}
		for _, l := range rows {
			id := l.ID
			l.ID = 0
			have[l] = id
		}
	}
	var gone []int64
	for l, id := range have {
		if !p.links.seen[l] {
			gone = append(gone, id)
		}
	}
	slices.Sort(gone)
	for _, id := range gone {
		if _, err := tx.ExecContext(ctx, `DELETE FROM links WHERE id = ?`, id); err != nil {
			return u, fmt.Errorf("knowledge: update links: %w", err)
		}
	}
	var fresh []Link
	for _, l := range p.links.sorted() {
		if _, ok := have[l]; !ok {
			fresh = append(fresh, l)
		}
	}
	if err := insertLinks(ctx, tx, fresh); err != nil {
		return u, err
	}
	u.Written, u.Deleted = len(fresh), len(gone)
	return u, nil
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

// linkedCase is what the index reads of a cases row.
type linkedCase struct {
	ID            int64          `db:"id"`
	AppID         string         `db:"app_id"`
	OpenedRunID   string         `db:"opened_run_id"`
	ResolvedRunID sql.NullString `db:"resolved_run_id"`
	Edits         string         `db:"edits"`
}

// readCases reads the cases a pass derives links from: those written after
// seen, those the pass's runs opened or resolved, and the open cases of its
// applications (the ones its runs' edits were appended to). The open ones
// are found through the index that holds only open cases; left to itself
// the planner reads every case of the application.
func readCases(ctx context.Context, tx *sqlx.Tx, p *linkPass, seen linkMarks) ([]linkedCase, error) {
	var rows []linkedCase
	if err := tx.SelectContext(ctx, &rows,
		`SELECT id, app_id, opened_run_id, resolved_run_id, edits FROM cases WHERE id IN (
			SELECT id FROM cases WHERE id > ?
			UNION SELECT id FROM cases WHERE opened_run_id IN (SELECT value FROM json_each(?))
			UNION SELECT id FROM cases WHERE resolved_run_id IN (SELECT value FROM json_each(?))
			UNION SELECT id FROM cases INDEXED BY cases_one_open
			      WHERE resolved_at IS NULL AND app_id IN (SELECT value FROM json_each(?)))
		 ORDER BY id`, seen.Cases, jsonList(p.dirty), jsonList(p.dirty), jsonList(p.apps)); err != nil {
		return nil, fmt.Errorf("knowledge: links: cases: %w", err)
	}
	return rows, nil
}

// caseLinks adds case opened-in and resolved-in runs, and for each edit
// line: the case, the run that made it and that run's task edited the file.
func (p *linkPass) caseLinks(cases []linkedCase) {
	for _, c := range cases {
		id := strconv.FormatInt(c.ID, 10)
		p.readRow("cases", id)
		link := func(kind, fromKind, fromID, toKind, toID string) {
			p.links.add(Link{Kind: kind, FromKind: fromKind, FromID: fromID, ToKind: toKind, ToID: toID,
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
				if t, ok := p.runs[runID]; ok && t.AppID == c.AppID {
					link(LinkEdited, NodeTask, t.Slug, NodeFile, f)
				}
			}
		}
	}
}

// editedFiles reads one line of a case's edits, as Cases.AppendEdit writes
// it ("<time> [<run id>] <summary>"), where the summary is a workspace
// commit's subject: "source.edit <path> …", "source.change <action>
// <path>, <action> <path>[ and N more]", the builder's naming its action
// once ("source.change change <path>, <path>"), or the files a cycle's
// hunks changed ("candidate.cycle <path>, <path>"). A line of any other shape
// names no file; the files a "N more" leaves out are not guessed at.
func editedFiles(line string) (runID string, files []string) {
	line, _, _ = strings.Cut(line, " "+HunksMark+" ")
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
	case "candidate.cycle":
		// The files the cycle's hunks changed, as the builder names them.
		for _, path := range strings.Split(strings.Join(rest[1:], " "), ", ") {
			if p, ok := editedPath(path); ok {
				files = append(files, p)
			}
		}
	case "source.change":
		summary := strings.Join(rest[1:], " ")
		if i := strings.LastIndex(summary, " and "); i >= 0 && strings.HasSuffix(summary, " more") {
			summary = summary[:i]
		}
		for i, part := range strings.Split(summary, ", ") {
			path := part
			if action, p, ok := strings.Cut(part, " "); ok && action != "" {
				path = p
			} else if i == 0 {
				continue // the first part names its action
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

// readLessonLinks adds lesson distilled-from case for every lesson written
// after seen that records its case. A lesson's case never changes.
func readLessonLinks(ctx context.Context, tx *sqlx.Tx, p *linkPass, seen linkMarks) error {
	var rows []struct {
		ID     int64  `db:"id"`
		CaseID int64  `db:"case_id"`
		AppID  string `db:"app_id"`
	}
	if err := tx.SelectContext(ctx, &rows, `SELECT l.id, l.case_id, coalesce(c.app_id, '') AS app_id
		FROM lessons l LEFT JOIN cases c ON c.id = l.case_id
		WHERE l.id > ? AND l.case_id IS NOT NULL ORDER BY l.id`, seen.Lessons); err != nil {
		return fmt.Errorf("knowledge: links: lessons: %w", err)
	}
	for _, l := range rows {
		id := strconv.FormatInt(l.ID, 10)
		p.readRow("lessons", id)
		p.links.add(Link{Kind: LinkDistilledFrom, FromKind: NodeLesson, FromID: id, ToKind: NodeCase,
			ToID: strconv.FormatInt(l.CaseID, 10), AppID: l.AppID, SourceTable: "lessons", SourceID: id})
	}
	return nil
}

// readServingLinks adds lesson served-to run for every serving written
// after seen whose lesson reached the model, when the store has a
// servings table with the columns it needs; otherwise it adds nothing.
// What a serving links never changes.
func readServingLinks(ctx context.Context, tx *sqlx.Tx, p *linkPass, seen linkMarks) error {
	var columns []string
	if err := tx.SelectContext(ctx, &columns,
		`SELECT name FROM pragma_table_info('servings')`); err != nil {
		return fmt.Errorf("knowledge: links: servings: %w", err)
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
	// A lesson the budget cut was not served to the run.
	included := ``
	if slices.Contains(columns, "included") {
		included = ` AND s.included = 1`
	}
	var rows []struct {
		ID       int64  `db:"id"`
		LessonID int64  `db:"lesson_id"`
		RunID    string `db:"run_id"`
		AppID    string `db:"app_id"`
	}
	if err := tx.SelectContext(ctx, &rows, `SELECT s.id, s.lesson_id, s.run_id, `+app+` AS app_id
		FROM servings s LEFT JOIN lessons l ON l.id = s.lesson_id LEFT JOIN cases c ON c.id = l.case_id
		WHERE s.id > ? AND s.run_id IS NOT NULL AND s.run_id <> '' AND s.lesson_id IS NOT NULL`+included+` ORDER BY s.id`, seen.Servings); err != nil {
		return fmt.Errorf("knowledge: links: servings: %w", err)
	}
	for _, s := range rows {
		id := strconv.FormatInt(s.ID, 10)
		p.readRow("servings", id)
		p.links.add(Link{Kind: LinkServedTo, FromKind: NodeLesson, FromID: strconv.FormatInt(s.LessonID, 10),
			ToKind: NodeRun, ToID: s.RunID, AppID: s.AppID, SourceTable: "servings", SourceID: id})
	}
	if err := tx.GetContext(ctx, &p.marks.Servings, `SELECT coalesce(max(id), 0) FROM servings`); err != nil {
		return fmt.Errorf("knowledge: links: servings: %w", err)
	}
	return nil
}

// readTurnLinks adds run turn contexts-row for every turn written after
// seen under a run. Contexts are append-only.
func readTurnLinks(ctx context.Context, tx *sqlx.Tx, p *linkPass, seen linkMarks) error {
	var rows []struct {
		ID    int64  `db:"id"`
		RunID string `db:"run_id"`
		AppID string `db:"app_id"`
	}
	if err := tx.SelectContext(ctx, &rows, `SELECT id, run_id, coalesce(app_id, '') AS app_id
		FROM contexts WHERE id > ? AND run_id IS NOT NULL AND run_id <> '' ORDER BY id`, seen.Contexts); err != nil {
		return fmt.Errorf("knowledge: links: contexts: %w", err)
	}
	for _, t := range rows {
		id := strconv.FormatInt(t.ID, 10)
		p.readRow("contexts", id)
		p.links.add(Link{Kind: LinkTurn, FromKind: NodeRun, FromID: t.RunID, ToKind: NodeTurn, ToID: id,
			AppID: t.AppID, SourceTable: "contexts", SourceID: id})
	}
	return nil
}
