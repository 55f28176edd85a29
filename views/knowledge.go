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
	// Lessons are the lessons served to the turn, each with its outcome.
	Lessons []string
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
	// Servings say where the lesson was given and what came of it.
	Servings []string
}

// CaseDetail is one case opened.
type CaseDetail struct {
	CaseLine
	Signature, Request, Edits, Model string
	RevisionBefore, ResolvedRevision string
	// TurnID is the contexts row of the turn that met the failure; 0 when
	// none was recorded.
	TurnID int64
}

// KnowledgeView is the Knowledge page: the Log, the Turns, the Cases or the Lessons.
type KnowledgeView struct {
	Case         *CaseDetail
	Lessons      []LessonLine
	LessonStatus string
	Review       bool
	Refusal      Refusal
	Tab          string // log, turns, turn, cases
	Cases        []CaseLine
	Log          KnowledgeLog
	Turns        []TurnLine
	Turn         *TurnLine
	Docs         []TurnDoc
}
