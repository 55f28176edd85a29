package views

import "strings"

// LogLine is one event of the log as the page shows it.
type LogLine struct {
	At, Level, Message, App, Run string
	// Attrs are the line's attributes, each a small label.
	Attrs []Label
}

// Label is one attribute of a log line: its name and its value.
type Label struct{ Key, Value string }

// shortID is a long id as a narrow column shows it: its start and its
// end, the whole id kept for the hover and the copy button.
func shortID(id string) string {
	r := []rune(id)
	if len(r) <= 20 {
		return id
	}
	return string(r[:9]) + "…" + string(r[len(r)-9:])
}

// KnowledgeLog is the Log view: newest first, filtered by level and
// application, following (refreshing every five seconds) only when asked.
type KnowledgeLog struct {
	Lines     []LogLine
	Level     string
	AppID     string
	Apps      []AppRow
	Follow    bool
	Text      string // the shown lines, for copying
	MoreHref  string
	FollowURL string
}

// TurnChip is one document a turn was given.
type TurnChip struct {
	Ref, Title string
	Cut        bool
}

// TurnLine is one turn in the Turns view.
type TurnLine struct {
	ID                          int64
	At, App, Run, Kind, Request string
	Docs                        []TurnChip
	// Work is what the turn's run did: its edits, builds and checks, and
	// the cases it opened and resolved.
	Work []WorkChip
	// Lessons are the lessons the turn was going to give, each with what
	// came of it.
	Lessons []ServedChip
	// InstructionsHash is the hash of the instructions the turn ran
	// under, CorpusVersion the corpus version its lessons were served
	// from.
	InstructionsHash string
	CorpusVersion    int64
}

// ServedChip is one lesson a turn was going to give and what came of it
// (lesson 3: resolved). NotIncluded marks one the budget cut, shown struck
// through as a cut document is.
type ServedChip struct {
	Text        string
	NotIncluded bool
	// LessonID is the lesson served, which the chip links to.
	LessonID int64
}

// WorkChip is one thing a turn did, or a count of those not shown.
type WorkChip struct {
	// Kind is edit, build, checks, opened or resolved.
	Kind string
	// Text is the chip's words; Title says it in full.
	Text, Title string
	// Failed marks a build or a run of the checks that failed, and a case
	// opened.
	Failed bool
	// CaseID links the chip to its case; 0 for none.
	CaseID int64
}

// More is what the chip's title says that its words do not: the whole
// of a summary the chip cut, or where a case was met; "" for nothing.
func (w WorkChip) More() string {
	if strings.HasSuffix(w.Text, w.Title) {
		return ""
	}
	return w.Title
}

// TurnDoc is one document of a turn, with its text as delivered.
type TurnDoc struct {
	Ref, Title, Text string
	Cut              bool
	Bytes            int
}

// CaseLine is one case in the Cases view.
type CaseLine struct {
	ID                                int64
	Kind, App, Where, Message, Opened string
	OpenedRun, Resolved, ResolvedRun  string
	Diagnosis                         string
	// Distill is the case's distillation state (queued, asked, done,
	// failed; "" while open or not yet queued), LessonID the lesson it
	// produced, 0 for none.
	Distill  string
	LessonID int64
	// Signature is the failure's signature; the list shows its start.
	Signature string
}

// DistillText says where a case's distillation stands, for the Cases list.
func (c CaseLine) DistillText() string {
	switch c.Distill {
	case "queued":
		return "queued: asked when a turn ends"
	case "asked":
		return "asked; to be asked again if the answer did not come"
	case "done":
		if c.LessonID == 0 {
			return "done: no lesson"
		}
		return "done, and drew"
	case "failed":
		return "failed: the question failed three times"
	}
	if c.Resolved == "" {
		return "not yet: the case is open"
	}
	return "not yet queued"
}

// LessonLine is one lesson in the Lessons view.
type LessonLine struct {
	ID                            int64
	Text, Status, Origin, Created string
	Flags                         string
	// Files are the files it applies to, comma-separated; "" for none.
	Files                  string
	CaseID                 int64
	CaseProblem, Diagnosis string
	ConfirmedBy, RetiredBy string
	// MethodUnclear marks what a method_unclear answer kept: shown, never
	// served, and it can only be retired.
	MethodUnclear bool
	// Supersedes is the lesson this one supersedes, SupersededBy the one
	// that superseded it; 0 for none.
	Supersedes, SupersededBy          int64
	CanConfirm, CanRetire, CanReplace bool
	// Servings say where the lesson was given and what came of it;
	// Served counts those whose line reached the model, Cut those the
	// budget cut.
	Servings    []string
	Served, Cut int
	// Counts says what came of its servings, by outcome; Index at which
	// corpus versions it entered the index and left it.
	Counts, Index string
}

// ServedText is the summary of a lesson's servings: "Served 3 times" and,
// when the budget cut it from some turns, how many.
func (l LessonLine) ServedText() string {
	t := "Served " + Count(l.Served, "time", "times")
	if l.Cut > 0 {
		t += "; cut by the budget from " + Count(l.Cut, "more turn", "more turns")
	}
	return t
}

// CaseDetail is one case opened.
type CaseDetail struct {
	CaseLine
	Signature, Request, Edits, Model string
	RevisionBefore, ResolvedRevision string
	// ReleaseBefore is the release that was running before the repair,
	// ResolvedRelease the one the resolving build made or the checks ran
	// against; "" for none. CorpusVersion is the corpus version the turn
	// that met the failure was served from.
	ReleaseBefore, ResolvedRelease string
	CorpusVersion                  int64
	// TurnID is the contexts row of the turn that met the failure; 0 when
	// none was recorded.
	TurnID int64
}

// LessonDetail is one lesson opened: what its card in the list shows, and
// what it applies to, every serving, and its replay.
type LessonDetail struct {
	LessonLine
	// Applies says what the lesson is given for: its stage, files, routes
	// and signature, as a sentence.
	Applies string
	// CaseWhere is where its case failed (a stage or an example).
	CaseWhere string
	Replay    ReplayPanel
	// ConfirmOpen opens the confirmation at once: the person pressed
	// Confirm in the list.
	ConfirmOpen bool
	// Versions are the corpus versions that name the lesson, oldest
	// first, each "<n>, <when>: <what>".
	Versions []string
}

// ReplayPanel is a lesson's replay: the latest table, the replay of it
// going, and Replay this lesson.
type ReplayPanel struct {
	LessonID int64
	// Latest is the newest replay's table; nil when none has been run.
	Latest *ReplayTable
	// Going is the replay of the lesson that goes; nil when none does.
	Going *ReplayGoing
	// Problem says why the last replay started from the page ended
	// before every run finished.
	Problem string
	// Cannot says why the lesson cannot be replayed from the page; "" when
	// Replay this lesson is offered, with Spend, the confirmation's
	// sentence of what it will spend.
	Cannot, Spend string
	// Confirmable says the page offers Confirm, whose confirmation shows
	// the table first; NoReplay is what it says when no replay has been run.
	Confirmable bool
	NoReplay    string
	Refusal     Refusal
}

// ReplayTable is one replay as the page shows it, as `knowledge show`
// prints it: the two arms with the verdict beside them, each run, and the
// regression set.
type ReplayTable struct {
	// About says what was replayed; Under the lesson under test and the
	// replay's numbers.
	About, Under string
	Arms         []ReplayArm
	// Outcome is the verdict in a word (helped, no difference, worse,
	// untested), Verdict in a sentence.
	Outcome, Verdict string
	Runs             []ReplayRunLine
	// Regression says what the regression set did; RegressionRuns are its
	// runs.
	Regression     string
	RegressionRuns []ReplayRunLine
	// Notes are the cases not replayed and a replay stopped half-way.
	Notes []string
	// Kept names the manifest and where the runs are kept.
	Kept string
}

// ReplayArm is one arm's tally.
type ReplayArm struct {
	Name         string
	Runs, Passed int
}

// ReplayRunLine is one finished run of a replay.
type ReplayRunLine struct {
	RunID, Arm string
	CaseID     int64
	Passed     bool
	// Ended is how its turn ended; Calls the tool calls it made.
	Ended     string
	Calls     int
	Judgement string
	// Folder is where the run is kept, under the data folder.
	Folder string
}

// ReplayGoing is a replay that goes: what runs now and what was judged.
type ReplayGoing struct {
	// Headline says what goes since when; Now the run in hand ("" between
	// two runs).
	Headline, Now string
	Judged        []ReplayJudged
}

// ReplayJudged is one run of a replay that goes, judged.
type ReplayJudged struct {
	What      string
	Passed    bool
	Judgement string
}

// KnowledgeView is the Knowledge page: the Log, the Turns, the Cases or the Lessons.
type KnowledgeView struct {
	// Lesson is the lesson opened.
	Lesson       *LessonDetail
	Case         *CaseDetail
	Lessons      []LessonLine
	LessonStatus string
	Review       bool
	Refusal      Refusal
	Tab          string // log, turns, turn, cases, case, lessons, lesson
	Cases        []CaseLine
	Log          KnowledgeLog
	Turns        []TurnLine
	Turn         *TurnLine
	Docs         []TurnDoc
}
