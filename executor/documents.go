package executor

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"autoapp/executor/ai"
	"autoapp/executor/candidate"
	"autoapp/executor/verdict"
	"autoapp/intent/app"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
	"autoapp/knowledge"
)

// Why a document is given to a turn, as the search event names it. A
// lesson's reason is the one it was served for (knowledge.ReasonPinned,
// related:<file>, knowledge.ReasonWords).
const (
	// WhyApplication: the orientation and the task evidence, there for the
	// application the turn is about.
	WhyApplication = "application"
	// WhyBacklog: the intent document and the person's feedback, there for
	// the application's backlog.
	WhyBacklog = "backlog"
	// WhyAttempts: the attempts document, there for a task's earlier runs.
	WhyAttempts = "attempts"
)

// MsgDocuments is the search event: written once a turn's documents are
// delivered, with why each one that reached the model was there.
const MsgDocuments = "the turn's documents were delivered"

// DocumentApps is what a turn's documents read of an application
// (*app.Service).
type DocumentApps interface {
	Places
	Manifest(id string) ([]byte, app.Manifest, refusal.Problems, error)
}

// Sources are where a turn's documents come from. The executor's builder
// turns and the chat turns read them alike.
type Sources struct {
	Apps       DocumentApps
	Candidates *candidate.Service
	// Lessons are matched for the lessons document; nil gives none.
	Lessons LessonBook
	Log     *slog.Logger
	// Workspace is the turn's workspace, opened once by its run or chat
	// turn; nil (it could not be opened) leaves out what reads it.
	Workspace *workspace.Workspace
}

// Briefing is what a turn is given to read before it starts: its
// documents in order, with the lessons among them and why each is there.
type Briefing struct {
	Documents []ai.Document
	lessons   lessonsDocument
	why       map[string]string
}

// Add gives the turn doc, there for why.
func (b *Briefing) Add(doc ai.Document, why string) {
	if b.why == nil {
		b.why = map[string]string{}
	}
	b.Documents = append(b.Documents, doc)
	b.why[doc.Ref] = why
}

// addLessons gives the turn the lessons document, when it serves any.
func (b *Briefing) addLessons(l lessonsDocument) {
	if len(l.served) == 0 {
		return
	}
	b.lessons = l
	b.Add(l.doc, "")
}

// Served are the lessons whose whole line reached the model, by what the
// turn reported of its documents: the servings to record as included.
func (b Briefing) Served(delivered []ai.DeliveredDocument) []knowledge.Served {
	return b.lessons.delivered(delivered)
}

// Cut are the lessons chosen for the turn whose line the budget cut or
// dropped, by what the turn reported of its documents: the servings to
// record as not included, never scored.
func (b Briefing) Cut(delivered []ai.DeliveredDocument) []knowledge.Served {
	return b.lessons.cut(delivered)
}

// Why is one entry of the search event: a document, or a lesson, that
// reached the model, and why it was there.
type Why struct {
	Ref    string `json:"ref"`
	Reason string `json:"reason"`
}

// Why is the search event's list for what the turn was delivered: one
// entry per document that reached the model, in order, the lessons
// document standing for each lesson whose line reached it (lesson:<id>).
func (b Briefing) Why(delivered []ai.DeliveredDocument) []Why {
	var out []Why
	for _, d := range delivered {
		if d.Delivery == ai.DeliveredDropped {
			continue
		}
		if len(b.lessons.served) > 0 && d.Ref == b.lessons.doc.Ref {
			for _, sv := range b.lessons.delivered([]ai.DeliveredDocument{d}) {
				out = append(out, Why{Ref: lessonRef(sv.Lesson.ID), Reason: sv.Reason})
			}
			continue
		}
		out = append(out, Why{Ref: d.Ref, Reason: b.why[d.Ref]})
	}
	return out
}

// notIncluded are the refs of the lessons the budget cut.
func (b Briefing) notIncluded(delivered []ai.DeliveredDocument) []string {
	var out []string
	for _, sv := range b.lessons.cut(delivered) {
		out = append(out, lessonRef(sv.Lesson.ID))
	}
	return out
}

func lessonRef(id int64) string { return "lesson:" + strconv.FormatInt(id, 10) }

// TellWhy makes turn write the search event under ctx as its documents
// are delivered, before the model is asked anything: why each document
// and each lesson that reached the model was there, and the lessons the
// budget left out. It keeps whatever turn.OnDelivered did already.
func (b Briefing) TellWhy(ctx context.Context, turn *ai.Turn, log *slog.Logger) {
	if log == nil {
		return
	}
	prev := turn.OnDelivered
	turn.OnDelivered = func(docs []ai.DeliveredDocument) {
		if prev != nil {
			prev(docs)
		}
		attrs := []any{"why", b.Why(docs)}
		if cut := b.notIncluded(docs); len(cut) > 0 {
			attrs = append(attrs, "not_included", cut)
		}
		log.InfoContext(ctx, MsgDocuments, attrs...)
	}
}

// Orientation is digest:<appId>: the candidate state as the host sees it
// now, with the application's current release and the files edited since
// the last build.
func (s Sources) Orientation(ctx context.Context, appID string) (ai.Document, bool) {
	if s.Candidates == nil {
		return ai.Document{}, false
	}
	o, err := s.Candidates.Observe(ctx, appID)
	if err != nil {
		s.log().ErrorContext(ctx, "the orientation could not be made; the turn goes without it", "app", appID, "err", err)
		return ai.Document{}, false
	}
	facts := verdict.AppFacts{}
	if _, m, _, err := s.Apps.Manifest(appID); err == nil {
		facts.Name = m.Name
	}
	if a, err := s.Apps.Get(ctx, appID); err == nil {
		facts.CurrentRelease = a.CurrentRelease
	}
	if o.Edited && o.Build != nil && s.Workspace != nil {
		facts.EditedFiles, _ = verdict.EditedSince(ctx, s.Workspace, o.Build.Revision)
	}
	return verdict.Orientation(appID, o, facts), true
}

// Evidence is evidence:<appId> for the words of t: what in the workspace
// they match.
func (s Sources) Evidence(ctx context.Context, appID string, t plan.Task) (ai.Document, bool) {
	if s.Workspace == nil {
		s.log().ErrorContext(ctx, "the task evidence could not be made without the workspace; the turn goes without it", "app", appID)
		return ai.Document{}, false
	}
	ev, err := verdict.Evidence(s.Workspace, t, 0)
	if err != nil {
		s.log().ErrorContext(ctx, "the task evidence could not be made; the turn goes without it", "app", appID, "err", err)
		return ai.Document{}, false
	}
	ev.Ref = "evidence:" + appID
	return ev, true
}

// lessons matches q's lessons into the lessons:<appId> document, titled for
// what the turn is about.
func (s Sources) lessons(ctx context.Context, appID, about string, q knowledge.MatchQuery) lessonsDocument {
	if s.Lessons == nil {
		return lessonsDocument{}
	}
	served, err := s.Lessons.Match(ctx, q)
	if err != nil {
		s.log().ErrorContext(ctx, "the turn's lessons could not be matched", "app", appID, "err", err)
		return lessonsDocument{}
	}
	out := lessonsDocument{served: served}
	text := lessonsPreamble
	for _, sv := range served {
		text += "- " + sv.Line() + "\n"
		out.ends = append(out.ends, utf8.RuneCountInString(text))
	}
	out.doc = ai.Document{Ref: "lessons:" + appID, Title: "Lessons for " + about, Text: text}
	return out
}

func (s Sources) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// RequestBriefing is what a turn with no task is given about appID, in
// order: the orientation, intent (the application's backlog) and feedback
// when given (an empty Ref is none), the task evidence and the lessons for
// the request's words. task-context.json's "lessons": false leaves the
// lessons out.
func (s Sources) RequestBriefing(ctx context.Context, appID, request string, intent, feedback ai.Document, taskContext string) Briefing {
	var b Briefing
	if doc, ok := s.Orientation(ctx, appID); ok {
		b.Add(doc, WhyApplication)
	}
	for _, doc := range []ai.Document{intent, feedback} {
		if doc.Ref != "" {
			b.Add(doc, WhyBacklog)
		}
	}
	if doc, ok := s.Evidence(ctx, appID, plan.Task{Slug: appID, Title: request}); ok {
		b.Add(doc, WhyApplication)
	}
	if readTaskContext(taskContext).Lessons {
		b.addLessons(s.lessons(ctx, appID, appID, knowledge.MatchQuery{Words: request}))
	}
	return b
}

// StagesForLabel are the build stages a task's label points at, by the
// stage names the templates and common manifests use: among a task's word
// matches, a lesson about the first such stage of its manifest sorts first.
var StagesForLabel = map[string][]string{
	"contract":  {"vet", "typecheck", "compile", "build"},
	"host":      {"compile", "build", "vet"},
	"migration": {"migrate", "migrations"},
	"views":     {"check", "lint", "build"},
	"theme":     {"check", "lint", "build"},
	"copy":      {"check", "lint"},
}

// stageForLabels is the first stage of stages that one of labels points
// at, labels in order; "" for none.
func stageForLabels(labels []string, stages []app.Stage) string {
	for _, l := range labels {
		for _, want := range StagesForLabel[strings.ToLower(l)] {
			if i := slices.IndexFunc(stages, func(s app.Stage) bool { return s.Name == want }); i >= 0 {
				return stages[i].Name
			}
		}
	}
	return ""
}
