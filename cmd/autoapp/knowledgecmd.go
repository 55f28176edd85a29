package main

import (
	"autoapp/cmd/autoapp/launcher"
	"autoapp/executor/replay"
	"autoapp/intent/refusal"
	"autoapp/knowledge"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

const knowledgeUsage = `Usage:
  autoapp knowledge list [--root DIR] [--provisional|--confirmed|--review|--method] [--json]
      The provisional and confirmed lessons, newest first: id, status, review flags
      and the first line of the text. At most one filter:
        --provisional  only provisional lessons (distilled, not yet confirmed)
        --confirmed    only confirmed lessons
        --review       only lessons carrying a review flag
        --method       only what the distiller's method_unclear answers kept: notes
                       on what about the way of working was unclear, for you to
                       read. They are never served to a turn; retire one once read.
  autoapp knowledge show ID [--root DIR] [--json]
      One lesson in full, with the case it came from (the problem and the
      diagnosis) and its latest replay: the two arms with the verdict beside
      them, each run and the regression set.
  autoapp knowledge replay CASE [--root DIR] [--with LESSON] [--runs N] [--json]
      Run the engineer again on the case's request, from the revision its failure
      was met at, N times with the lesson and N times without it (3 by default,
      interleaved), each run in a fresh clone under DIR/replay/CASE/, and judge
      each by what failed. Then the regression set: the application's other
      resolved cases whose lesson is confirmed, once each with the lesson. Prints
      the two arms with the verdict beside them; nothing is applied. A line per
      run goes to stderr; Ctrl-C stops it and keeps the runs that finished.
        --with LESSON  the lesson under test (default: the one the case taught;
                       with none, only the without arm runs)
        --runs N       runs an arm, 1 to 10
  autoapp knowledge evaluate [--root DIR] [--runs N] [--out PATH] [--notes DIR] [--json]
  autoapp knowledge evaluate --models A,B,… [--condition C] [--root DIR] [--out PATH] [--json]
      Measure what the engineer's documents and lessons are worth: four tasks of
      one turn (two on the static template, two on the Go service template) and
      two of two turns (on the Go service; turn one stopped at its first edit,
      turn two told to continue, under text and structured history) under four
      conditions — baseline (no documents, no hints), orientation (the digest
      alone), orientation+facts (the documents a task's first turn is given) and
      learned (those and every provisional and confirmed lesson) — N runs each (1
      by default) on the Settings model, each in a fresh workspace made from the
      template under DIR/evaluate/<stamp>/<task>/<condition>/<n>/. Prints the table
      as markdown: working code, workflow completed, calls to the first edit (and
      to the first attempt), builds, time, tokens, recurring failures, approvals,
      the files the documents named and what the turn did with them, and the
      unrelated hint credit; then the two-turn table. A line per run goes to
      stderr; Ctrl-C stops it and prints what finished.
        --runs N     runs of each task under each condition, 1 to 10
        --out PATH   write the markdown to PATH instead of stdout
        --notes DIR  write one markdown file per run, with its turns, into DIR
        --json       print the evaluation as JSON on stdout (the markdown then goes
                     only to --out)
      With --models, compare models instead: the four tasks of one turn under one
      condition (--condition, baseline by default) on each model in turn, each task
      tried up to twice as a run tries it, and print the scorecard, one row a
      model, the best first: working code, workflow completed, attempts per task,
      calls to the first edit, tool calls recovered from text, invalid tool
      inputs, tokens and wall time. Each row is kept, and Settings shows each
      model's latest beside it. Name a model as provider:model.
  autoapp knowledge confirm ID [--root DIR] [--by NAME] [--yes]
      Confirm a provisional lesson, or a confirmed one carrying review flags (which
	clears them). NAME defaults to the owner's name. The latest replay of the
	lesson is printed first and you are asked y/N (--yes does not ask); with no
	replay it says so and confirms.
  autoapp knowledge retire ID [--root DIR] [--by NAME]
	Take a provisional or confirmed lesson out of service for good. NAME
	defaults to the owner's name.
  autoapp knowledge export [--root DIR] [--json]
      Every provisional and confirmed lesson in full, with its case, for a backup.
  autoapp knowledge links [--root DIR] [--app ID] [--rebuild] [--json]
      The relationship index, per relation: which task ran as which run, which
      task, run and case edited which file, which file a task planned (its locks
      that name a file; the others are skipped), which runs opened and resolved a
      case, which case a lesson came from and which runs it was served to, and
      each run's turns. Every row names the row it was read from.
        --app ID     only the links of one application
        --rebuild    rebuild the index whole from both stores first. The server
                     adds each attempt's rows as it ends, and rebuilds it whole
                     only when an older version of the launcher wrote it; a
                     rebuild here only rewrites that derived table, so it is
                     safe while a server runs.

These read knowledge.sqlite under the data folder directly. confirm and retire
refuse while a server serves from the same folder: use its Knowledge page then.
Each confirm and retire writes one line to the log saying who did it.
replay writes its runs under DIR/replay/CASE/, and to knowledge.sqlite only its
manifest and one row per finished run: no serving, case or turn. evaluate writes
nothing there: each run's turns go to a store in its own folder.
`

// lessonCaseJSON is the case a lesson came from, as show and export print it.
type lessonCaseJSON struct {
	ID         int64     `json:"id"`
	Kind       string    `json:"kind"`
	App        string    `json:"app"`
	Stage      string    `json:"stage,omitempty"`
	Signature  string    `json:"signature"`
	Request    string    `json:"request"`
	Problem    string    `json:"problem"`
	Diagnosis  string    `json:"diagnosis,omitempty"`
	Distill    string    `json:"distillState,omitempty"`
	OpenedAt   time.Time `json:"openedAt"`
	ResolvedAt time.Time `json:"resolvedAt,omitzero"`
}

// lessonDetailJSON is a lesson with its case, as show and export print it;
// show adds its latest replay.
type lessonDetailJSON struct {
	knowledge.Lesson
	Case     *lessonCaseJSON           `json:"case,omitempty"`
	Replay   *replay.Result            `json:"replay,omitempty"`
	Servings knowledge.ServingCounts   `json:"servings"`
	Versions []knowledge.CorpusVersion `json:"corpusVersions"`
}

// lessonListJSON is one lesson as `knowledge list --json` prints it: the
// lesson and its servings' counts.
type lessonListJSON struct {
	knowledge.Lesson
	Servings knowledge.ServingCounts `json:"servings"`
}

// lessonExportJSON is what `knowledge export --json` prints.
type lessonExportJSON struct {
	ExportedAt    time.Time          `json:"exportedAt"`
	ServerVersion string             `json:"serverVersion"`
	Root          string             `json:"root"`
	Lessons       []lessonDetailJSON `json:"lessons"`
}

// knowledgeVerb is one subcommand of `autoapp knowledge`: the flags it
// takes, what it asks of them before the store is opened, and its work
// over the opened store.
type knowledgeVerb struct {
	// flags declares the verb's own flags; --root is every verb's.
	flags func(fs *flag.FlagSet, o *knowledgeOptions)
	// askID is the sentence asking for the id the verb takes first, or ""
	// when it takes none.
	askID string
	// check is the sentence of a usage mistake in o, or "".
	check func(o knowledgeOptions) string
	// changes says the verb writes the lessons: it refuses while a server
	// serves from the folder.
	changes bool
	run     func(ctx context.Context, k *knowledgeCall, st *launcher.Launcher, o knowledgeOptions) int
}

// knowledgeVerbs are the subcommands of `autoapp knowledge`.
var knowledgeVerbs = map[string]knowledgeVerb{
	"list":     {flags: listFlags, check: listCheck, run: knowledgeList},
	"show":     {flags: jsonFlag, askID: askLesson, run: knowledgeShow},
	"replay":   {flags: replayFlags, askID: askCase, check: replayCheck, run: knowledgeReplay},
	"evaluate": {flags: evaluateFlags, check: evaluateCheck, run: knowledgeEvaluate},
	"confirm":  {flags: confirmFlags, askID: askLesson, changes: true, run: knowledgeConfirm},
	"retire":   {flags: byFlag, askID: askLesson, changes: true, run: knowledgeRetire},
	"export":   {flags: jsonFlag, run: knowledgeExport},
	"links":    {flags: linksFlags, run: knowledgeLinks},
}

const (
	askLesson = "give the lesson's id, as `knowledge list` prints it."
	askCase   = "give the case's id, as the Knowledge page or `knowledge show` prints it."
)

// knowledgeOptions is what a verb's arguments said; each verb reads only
// the flags it declared.
type knowledgeOptions struct {
	root   string
	id     int64 // the lesson's or the case's, for a verb that takes one
	asJSON bool
	// list's filters: at most one.
	provisional, confirmed, review, method bool
	// confirm and retire: who reviews, and confirm without asking.
	by  string
	yes bool
	// replay and evaluate.
	with    int64
	runs    int
	outPath string
	// evaluate: where each run's notes go; with models, the models
	// compared and the condition they run under.
	notes     string
	models    string
	condition string
	// links.
	appID   string
	rebuild bool
}

func jsonFlag(fs *flag.FlagSet, o *knowledgeOptions) {
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
}

func listFlags(fs *flag.FlagSet, o *knowledgeOptions) {
	fs.BoolVar(&o.provisional, "provisional", false, "only provisional lessons")
	fs.BoolVar(&o.confirmed, "confirmed", false, "only confirmed lessons")
	fs.BoolVar(&o.review, "review", false, "only lessons needing review")
	fs.BoolVar(&o.method, "method", false, "only what method_unclear answers kept")
	jsonFlag(fs, o)
}

func byFlag(fs *flag.FlagSet, o *knowledgeOptions) {
	fs.StringVar(&o.by, "by", "", "who reviews (default: the owner's name)")
}

func confirmFlags(fs *flag.FlagSet, o *knowledgeOptions) {
	byFlag(fs, o)
	fs.BoolVar(&o.yes, "yes", false, "confirm without asking")
}

func replayFlags(fs *flag.FlagSet, o *knowledgeOptions) {
	fs.Int64Var(&o.with, "with", 0, "the lesson under test")
	fs.IntVar(&o.runs, "runs", 0, "runs an arm")
	jsonFlag(fs, o)
}

func evaluateFlags(fs *flag.FlagSet, o *knowledgeOptions) {
	fs.IntVar(&o.runs, "runs", 0, "runs of each task under each condition")
	fs.StringVar(&o.outPath, "out", "", "where the markdown goes")
	fs.StringVar(&o.notes, "notes", "", "a folder for one markdown file per run, with its turns")
	fs.StringVar(&o.models, "models", "", "compare these models (provider:model, separated by commas) on the same tasks")
	fs.StringVar(&o.condition, "condition", "", "with --models, the condition every model runs under (default baseline)")
	jsonFlag(fs, o)
}

func linksFlags(fs *flag.FlagSet, o *knowledgeOptions) {
	fs.StringVar(&o.appID, "app", "", "only the links of one application")
	fs.BoolVar(&o.rebuild, "rebuild", false, "rebuild the index first")
	jsonFlag(fs, o)
}

func listCheck(o knowledgeOptions) string {
	if countTrue(o.provisional, o.confirmed, o.review, o.method) > 1 {
		return "give at most one of --provisional, --confirmed, --review and --method."
	}
	return ""
}

func replayCheck(o knowledgeOptions) string {
	if o.runs < 0 || o.runs > replay.MaxRuns || o.with < 0 {
		return fmt.Sprintf("give --runs between 1 and %d, and --with a lesson's id.", replay.MaxRuns)
	}
	return ""
}

func evaluateCheck(o knowledgeOptions) string {
	switch {
	case o.models == "" && o.condition != "":
		return "--condition goes with --models: a plain evaluation runs every condition."
	case o.models != "" && (o.runs != 0 || o.notes != ""):
		return "--runs and --notes go with a plain evaluation; --models runs each task once a model, tried twice when it fails."
	case o.runs < 0 || o.runs > replay.MaxRuns:
		return fmt.Sprintf("give --runs between 1 and %d.", replay.MaxRuns)
	}
	return ""
}

// knowledgeCmd reviews the lessons from the terminal, reading the knowledge
// store directly: the same facts and the same two changes the Knowledge page
// offers.
func knowledgeCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, knowledgeUsage)
		return 2
	}
	switch args[0] {
	case "help", "--help", "-h":
		fmt.Fprint(stdout, knowledgeUsage)
		return 0
	}
	v, ok := knowledgeVerbs[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "autoapp knowledge: %q is not a subcommand; use list, show, replay, evaluate, confirm, retire, export or links.\n", args[0])
		return 2
	}
	k := &knowledgeCall{verb: args[0], stdin: stdin, stdout: stdout, stderr: stderr}
	o, code, ok := k.parse(v, args[1:])
	if !ok {
		return code
	}
	if v.changes {
		if code := k.refuseWhileServed(o.root); code != 0 {
			return code
		}
	}
	if err := requireData(o.root); err != nil {
		return k.fail(1, "%v", err)
	}
	st, err := open(o.root)
	if err != nil {
		return k.fail(1, "%v", err)
	}
	defer st.Close()
	return v.run(ctx, k, st, o)
}

// knowledgeCall is one `autoapp knowledge VERB` run: the verb and where it
// reads and writes.
type knowledgeCall struct {
	verb           string
	stdin          io.Reader
	stdout, stderr io.Writer
}

// fail says why the verb ends, on stderr, and returns the exit code.
func (k *knowledgeCall) fail(code int, format string, a ...any) int {
	fmt.Fprintf(k.stderr, "autoapp knowledge %s: %s\n", k.verb, fmt.Sprintf(format, a...))
	return code
}

// refused is fail for an error of the store: a refusal (2) in its own
// sentence, anything else a failure (1).
func (k *knowledgeCall) refused(err error) int {
	if ke, ok := errors.AsType[*refusal.Error](err); ok {
		return k.fail(2, "%s", ke.Message)
	}
	return k.fail(1, "%v", err)
}

// parse reads the verb's arguments. ok is false when the verb ends here,
// with the exit code: it printed its usage, or a usage mistake.
func (k *knowledgeCall) parse(v knowledgeVerb, args []string) (o knowledgeOptions, code int, ok bool) {
	// The flag package's own messages come with the whole flag list; one
	// sentence is printed instead.
	fs := flag.NewFlagSet("knowledge "+k.verb, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.root, "root", "./data", "the data folder")
	v.flags(fs, &o)
	// The id may come before or after the flags.
	var number string
	if v.askID != "" && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		number, args = args[0], args[1:]
	}
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(k.stdout, knowledgeUsage)
		return o, 0, false
	} else if err != nil {
		return o, k.fail(2, "%v; see `autoapp knowledge help`.", err), false
	}
	extra := fs.Args()
	if v.askID != "" && number == "" && len(extra) > 0 {
		number, extra = extra[0], extra[1:]
	}
	if len(extra) > 0 {
		return o, k.fail(2, "unexpected argument %q; see `autoapp knowledge help`.", extra[0]), false
	}
	if mistake := v.mistake(number, &o); mistake != "" {
		return o, k.fail(2, "%s", mistake), false
	}
	return o, 0, true
}

// mistake reads the id the verb takes from number into o and says what is
// wrong with the arguments, or "".
func (v knowledgeVerb) mistake(number string, o *knowledgeOptions) string {
	if v.askID != "" {
		id, err := strconv.ParseInt(number, 10, 64)
		if err != nil || id <= 0 {
			return v.askID
		}
		o.id = id
	}
	if v.check == nil {
		return ""
	}
	return v.check(*o)
}

// refuseWhileServed refuses a change while a server runs from root: it
// holds the lessons it serves and reviews them in its own page, and a
// change made behind it would race the page's. 0 when none runs.
func (k *knowledgeCall) refuseWhileServed(root string) int {
	abs, err := filepath.Abs(root)
	if err != nil {
		return k.fail(1, "the data folder %q is not a usable path: %v", root, err)
	}
	running, err := knowledge.ServerRunning(abs)
	if err != nil {
		return k.fail(1, "%v", err)
	}
	if running {
		return k.fail(2, "A server is running from %s; %s it in the Knowledge page, or stop the server first.", abs, k.verb)
	}
	return 0
}

func knowledgeReplay(ctx context.Context, k *knowledgeCall, st *launcher.Launcher, o knowledgeOptions) int {
	return replayCmd(ctx, st, o.id, replay.Options{With: o.with, Runs: o.runs}, o.asJSON, k.stdout, k.stderr)
}

func knowledgeEvaluate(ctx context.Context, k *knowledgeCall, st *launcher.Launcher, o knowledgeOptions) int {
	if o.models != "" {
		return compareCmd(ctx, st, replay.CompareOptions{Models: strings.Split(o.models, ","), Condition: o.condition},
			evalOutput{table: o.outPath, asJSON: o.asJSON}, k.stdout, k.stderr)
	}
	return evaluateCmd(ctx, st, replay.EvaluateOptions{Runs: o.runs}, evalOutput{table: o.outPath, notes: o.notes, asJSON: o.asJSON}, k.stdout, k.stderr)
}

// knowledgeLinks prints the relationship index, rebuilt first with
// --rebuild.
func knowledgeLinks(ctx context.Context, k *knowledgeCall, st *launcher.Launcher, o knowledgeOptions) int {
	if o.rebuild {
		if _, err := knowledge.RebuildLinks(ctx, st.Knowledge.DB(), st.Backlog); err != nil {
			return k.refused(err)
		}
	}
	links, err := knowledge.Links(ctx, st.Knowledge.DB(), knowledge.LinkQuery{AppID: o.appID})
	if err != nil {
		return k.refused(err)
	}
	if o.asJSON {
		if links == nil {
			links = []knowledge.Link{}
		}
		return printJSON(k.stdout, k.stderr, links)
	}
	writeLinks(k.stdout, links, o.appID, o.rebuild)
	return 0
}

// knowledgeList prints the lessons the filter keeps, newest first.
func knowledgeList(ctx context.Context, k *knowledgeCall, st *launcher.Launcher, o knowledgeOptions) int {
	q, what := listQuery(o)
	list, err := st.Lessons.List(ctx, q)
	if err != nil {
		return k.refused(err)
	}
	if len(list) == knowledge.MaxLessonLimit {
		fmt.Fprintf(k.stderr, "autoapp knowledge list: only the newest %d lessons were read.\n", knowledge.MaxLessonLimit)
	}
	ids := make([]int64, len(list))
	for i, l := range list {
		ids[i] = l.ID
	}
	counts, err := st.Servings.Counts(ctx, ids...)
	if err != nil {
		return k.refused(err)
	}
	if o.asJSON {
		out := make([]lessonListJSON, len(list))
		for i, l := range list {
			out[i] = lessonListJSON{Lesson: l, Servings: counts[l.ID]}
		}
		return printJSON(k.stdout, k.stderr, out)
	}
	if len(list) == 0 {
		fmt.Fprintf(k.stdout, "No %s.\n", what)
		return 0
	}
	writeLessons(k.stdout, list, counts)
	return 0
}

// listQuery is the query of list's filter, and what the lessons it keeps
// are called.
func listQuery(o knowledgeOptions) (knowledge.LessonQuery, string) {
	q := knowledge.LessonQuery{Limit: knowledge.MaxLessonLimit, NeedsReview: o.review, MethodUnclear: o.method}
	switch {
	case o.provisional:
		q.Status = knowledge.LessonProvisional
		return q, "provisional lessons"
	case o.confirmed:
		q.Status = knowledge.LessonConfirmed
		return q, "confirmed lessons"
	case o.review:
		return q, "lessons needing review"
	case o.method:
		return q, "lessons that say the way of working was unclear"
	}
	return q, "lessons"
}

// writeLessons prints list as a table: id, status, flags, the servings
// as resolved/recurred/blocked/unrelated, and the first line of the text.
func writeLessons(w io.Writer, list []knowledge.Lesson, counts map[int64]knowledge.ServingCounts) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tFLAGS\tRES/REC/BLK/UNR\tTEXT")
	for _, l := range list {
		flags := strings.Join(l.Flags, ",")
		if flags == "" {
			flags = "-"
		}
		status := l.Status
		if l.MethodUnclear {
			status += " (method unclear)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", l.ID, status, flags, counts[l.ID].Short(), firstLineOf(l.Text, 70))
	}
	tw.Flush()
}

// knowledgeShow prints one lesson with its case and its latest replay.
func knowledgeShow(ctx context.Context, k *knowledgeCall, st *launcher.Launcher, o knowledgeOptions) int {
	l, err := st.Lessons.Get(ctx, o.id)
	if err != nil {
		return k.refused(err)
	}
	d, err := lessonDetail(ctx, st, l)
	if err != nil {
		return k.refused(err)
	}
	res, replayed, err := st.Replays.Latest(ctx, l.ID)
	if err != nil {
		return k.refused(err)
	}
	if replayed {
		d.Replay = &res
	}
	if o.asJSON {
		return printJSON(k.stdout, k.stderr, d)
	}
	writeLesson(k.stdout, d)
	fmt.Fprintln(k.stdout)
	if replayed {
		writeReplay(k.stdout, res, st.Root)
	} else {
		fmt.Fprintf(k.stdout, "No replay has been run; %s first.\n", replayFirst(l))
	}
	return 0
}

// knowledgeConfirm confirms a lesson once the person has seen its latest
// replay and said yes (or gave --yes).
func knowledgeConfirm(ctx context.Context, k *knowledgeCall, st *launcher.Launcher, o knowledgeOptions) int {
	by := reviewerName(ctx, st, o.by)
	// The evidence first: the latest replay, and the question.
	l, err := st.Lessons.Get(ctx, o.id)
	if err != nil {
		return k.refused(err)
	}
	ok, err := confirmWithReplay(ctx, st, l, o.yes, k.stdin, k.stdout)
	if err != nil {
		return k.refused(err)
	}
	if !ok {
		fmt.Fprintf(k.stdout, "Lesson %d is not confirmed.\n", o.id)
		return 1
	}
	if err := st.Lessons.Confirm(ctx, o.id, by); err != nil {
		return k.refused(err)
	}
	fmt.Fprintf(k.stdout, "Lesson %d is confirmed by %s.\n", o.id, strings.TrimSpace(by))
	return 0
}

// knowledgeRetire takes a lesson out of service.
func knowledgeRetire(ctx context.Context, k *knowledgeCall, st *launcher.Launcher, o knowledgeOptions) int {
	if err := st.Lessons.Retire(ctx, o.id, reviewerName(ctx, st, o.by)); err != nil {
		return k.refused(err)
	}
	fmt.Fprintf(k.stdout, "Lesson %d is retired; it will not be served again.\n", o.id)
	return 0
}

// knowledgeExport prints every provisional and confirmed lesson with its
// case, and fails when the store held more than it could read.
func knowledgeExport(ctx context.Context, k *knowledgeCall, st *launcher.Launcher, o knowledgeOptions) int {
	out, cut, err := exportLessons(ctx, st)
	if err != nil {
		return k.refused(err)
	}
	if o.asJSON {
		if code := printJSON(k.stdout, k.stderr, out); code != 0 {
			return code
		}
	} else {
		writeExport(k.stdout, out)
	}
	if len(cut) > 0 {
		// A backup that says it is whole when it is not is worse than none.
		return k.fail(1, "the export holds only the newest %d %s lessons; the store has more.",
			knowledge.MaxLessonLimit, strings.Join(cut, " and "))
	}
	return 0
}

// exportLessons is the export, oldest first so that a backup reads in the
// order it was learnt, and the statuses of which only the newest
// MaxLessonLimit lessons could be read.
func exportLessons(ctx context.Context, st *launcher.Launcher) (lessonExportJSON, []string, error) {
	out := lessonExportJSON{ExportedAt: clock(), ServerVersion: launcher.Version, Root: st.Root, Lessons: []lessonDetailJSON{}}
	var cut []string
	for _, status := range []string{knowledge.LessonConfirmed, knowledge.LessonProvisional} {
		list, err := st.Lessons.List(ctx, knowledge.LessonQuery{Status: status, Limit: knowledge.MaxLessonLimit})
		if err != nil {
			return out, nil, err
		}
		if len(list) == knowledge.MaxLessonLimit {
			cut = append(cut, status)
		}
		for _, l := range list {
			d, err := lessonDetail(ctx, st, l)
			if err != nil {
				return out, nil, err
			}
			out.Lessons = append(out.Lessons, d)
		}
	}
	slices.SortFunc(out.Lessons, func(a, b lessonDetailJSON) int { return cmp.Compare(a.ID, b.ID) })
	return out, cut, nil
}

// writeLinks prints links per relation: a heading, then one row each.
func writeLinks(w io.Writer, links []knowledge.Link, appID string, rebuilt bool) {
	if len(links) == 0 {
		what := "The index holds no links"
		if appID != "" {
			what += " of " + appID
		}
		if !rebuilt {
			what += "; --rebuild builds it from the stores"
		}
		fmt.Fprintln(w, what+".")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for i, l := range links {
		if i == 0 || l.Kind != links[i-1].Kind {
			if i > 0 {
				fmt.Fprintln(tw)
			}
			fmt.Fprintf(tw, "%s\nFROM\tTO\tAPP\tREAD FROM\n", l.Kind)
		}
		app := l.AppID
		if app == "" {
			app = "-"
		}
		fmt.Fprintf(tw, "%s %s\t%s %s\t%s\t%s\n", l.FromKind, l.FromID, l.ToKind, l.ToID, app, l.Source())
	}
	tw.Flush()
}

// reviewerName is who reviews from the terminal: the name given, else the
// owner's, else "the owner".
func reviewerName(ctx context.Context, st *launcher.Launcher, by string) string {
	if by = strings.TrimSpace(by); by != "" {
		return by
	}
	if o, err := st.Owners.Get(ctx); err == nil && strings.TrimSpace(o.Name) != "" {
		return strings.TrimSpace(o.Name)
	}
	return "the owner"
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// lessonDetail is l with its servings' counts, its corpus versions and
// the case it came from, when it has one.
func lessonDetail(ctx context.Context, st *launcher.Launcher, l knowledge.Lesson) (lessonDetailJSON, error) {
	d := lessonDetailJSON{Lesson: l}
	counts, err := st.Servings.Counts(ctx, l.ID)
	if err != nil {
		return d, err
	}
	d.Servings = counts[l.ID]
	if d.Versions, err = st.Lessons.Versions(ctx, l.ID); err != nil {
		return d, err
	}
	if l.CaseID == 0 {
		return d, nil
	}
	c, err := st.Cases.Get(ctx, l.CaseID)
	if err != nil {
		return d, err
	}
	d.Case = &lessonCaseJSON{ID: c.ID, Kind: c.Kind, App: c.AppID, Stage: c.Stage, Signature: c.Signature,
		Request: c.Request, Problem: c.Message, Diagnosis: c.Diagnosis, Distill: c.DistillState,
		OpenedAt: c.OpenedAt, ResolvedAt: c.ResolvedAt}
	return d, nil
}

// writeLesson prints d as `knowledge show` does.
func writeLesson(w io.Writer, d lessonDetailJSON) {
	l := d.Lesson
	fmt.Fprintf(w, "Lesson %d: %s, %s", l.ID, l.Status, l.Origin)
	if l.MethodUnclear {
		fmt.Fprint(w, ", method unclear")
	}
	if l.Pinned {
		fmt.Fprint(w, ", pinned")
	}
	fmt.Fprintf(w, " (written %s)\n", shownTime(l.CreatedAt))
	if l.MethodUnclear {
		fmt.Fprintln(w, "A note for you on what about the way of working was unclear; it is never served to a turn. Retire it once read.")
	}
	if len(l.Flags) > 0 {
		fmt.Fprintf(w, "Needs review: %s\n", strings.Join(l.Flags, ", "))
	}
	if !l.ConfirmedAt.IsZero() {
		fmt.Fprintf(w, "Confirmed by %s on %s\n", l.ConfirmedBy, shownTime(l.ConfirmedAt))
	}
	if !l.RetiredAt.IsZero() {
		fmt.Fprintf(w, "Retired on %s", shownTime(l.RetiredAt))
		if l.RetiredBy != "" {
			fmt.Fprintf(w, " by %s", l.RetiredBy)
		}
		fmt.Fprintln(w)
	}
	if l.SupersededBy != 0 {
		fmt.Fprintf(w, "Superseded by lesson %d\n", l.SupersededBy)
	}
	if l.Supersedes != 0 {
		fmt.Fprintf(w, "Supersedes lesson %d\n", l.Supersedes)
	}
	fmt.Fprintf(w, "Applies to: %s\n", appliesLine(l.Applies))
	fmt.Fprintln(w, l.IndexSentence())
	fmt.Fprintln(w, d.Servings.Sentence())
	if len(d.Versions) > 0 {
		fmt.Fprintln(w, "Corpus versions:")
	}
	for _, v := range d.Versions {
		fmt.Fprintf(w, "  %d, %s: %s\n", v.Version, shownTime(v.At), v.Summary)
	}
	fmt.Fprintf(w, "\n%s\n", indentLines(l.Text))
	if d.Case == nil {
		fmt.Fprintln(w, "\nWritten by hand; it comes from no case.")
		return
	}
	writeLessonCase(w, d.Case)
}

// writeLessonCase prints the case a lesson came from: the problem and the
// diagnosis.
func writeLessonCase(w io.Writer, c *lessonCaseJSON) {
	fmt.Fprintf(w, "\nCase %d: %s of %s", c.ID, c.Kind, c.App)
	if c.Stage != "" {
		fmt.Fprintf(w, ", stage %s", c.Stage)
	}
	fmt.Fprintf(w, ", opened %s", shownTime(c.OpenedAt))
	if c.ResolvedAt.IsZero() {
		fmt.Fprintln(w, ", still open")
	} else {
		fmt.Fprintf(w, ", resolved %s\n", shownTime(c.ResolvedAt))
	}
	if c.Request != "" {
		fmt.Fprintf(w, "Request: %s\n", firstLineOf(c.Request, 200))
	}
	fmt.Fprintf(w, "Problem:\n%s\n", indentLines(c.Problem))
	if c.Diagnosis != "" {
		fmt.Fprintf(w, "Diagnosis:\n%s\n", indentLines(c.Diagnosis))
	} else {
		fmt.Fprintln(w, "Diagnosis: none yet.")
	}
}

// writeExport prints out as readable text: a heading, then each lesson as
// show prints it.
func writeExport(w io.Writer, out lessonExportJSON) {
	n := map[string]int{}
	for _, d := range out.Lessons {
		n[d.Status]++
	}
	fmt.Fprintf(w, "Lessons of %s, exported %s by autoapp %s: %d confirmed, %d provisional.\n",
		out.Root, shownTime(out.ExportedAt), out.ServerVersion, n[knowledge.LessonConfirmed], n[knowledge.LessonProvisional])
	for _, d := range out.Lessons {
		fmt.Fprintf(w, "\n%s\n\n", strings.Repeat("-", 72))
		writeLesson(w, d)
	}
}

func appliesLine(a knowledge.Applies) string {
	var parts []string
	if a.Stage != "" {
		parts = append(parts, "stage "+a.Stage)
	}
	if len(a.Files) > 0 {
		parts = append(parts, "files "+strings.Join(a.Files, ", "))
	}
	if len(a.Routes) > 0 {
		parts = append(parts, "routes "+strings.Join(a.Routes, ", "))
	}
	if a.Signature != "" {
		parts = append(parts, "signature "+a.Signature)
	}
	if len(parts) == 0 {
		return "anything (no stage, files or routes)"
	}
	return strings.Join(parts, "; ")
}

func shownTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04") }

func indentLines(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}
