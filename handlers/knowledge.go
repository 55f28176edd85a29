package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"autoapp/knowledge"
	"autoapp/views"
)

// Knowledge is what the handlers read of the knowledge store.
type Knowledge interface {
	Log(ctx context.Context, q knowledge.LogQuery) ([]knowledge.Event, error)
	Turns(ctx context.Context, q knowledge.TurnQuery) ([]knowledge.TurnRow, error)
	Turn(ctx context.Context, id int64) (knowledge.TurnRow, []knowledge.DocumentText, error)
	Work(ctx context.Context, runIDs []string, each int) (map[string]knowledge.RunWork, error)
}

// Cases is what the handlers read of the knowledge's cases.
type Cases interface {
	List(ctx context.Context, q knowledge.CaseQuery) ([]knowledge.Case, error)
	Get(ctx context.Context, id int64) (knowledge.Case, error)
}

// logPage is how many lines the Log view shows at once.
const logPage = 200

// turnsPage is how many turns the Turns view shows; each row lists the
// newest knowledge.DefaultWorkListed of each kind of its run's work.
const turnsPage = 100

func (h *Handlers) knowledgeLog(c *fiber.Ctx) error {
	l, err := h.logView(c)
	if err != nil {
		return err
	}
	s, err := h.page(c, "Knowledge", "knowledge")
	if err != nil {
		return err
	}
	apps, err := h.apps.List(c.UserContext())
	if err != nil {
		return err
	}
	for _, a := range apps {
		l.Apps = append(l.Apps, appRow(a, s.AppID))
	}
	return render(c, views.KnowledgePageView(s, views.KnowledgeView{Tab: "log", Log: l}))
}

// knowledgeLogLines is the followed part of the Log view.
func (h *Handlers) knowledgeLogLines(c *fiber.Ctx) error {
	l, err := h.logView(c)
	if err != nil {
		return err
	}
	return render(c, views.KnowledgeLogLines(l))
}

func (h *Handlers) logView(c *fiber.Ctx) (views.KnowledgeLog, error) {
	l := views.KnowledgeLog{Level: c.Query("level"), AppID: c.Query("app"), Follow: c.Query("follow") == "1"}
	before := int64(c.QueryInt("before"))
	events, err := h.knowledge.Log(c.UserContext(), knowledge.LogQuery{Level: l.Level, AppID: l.AppID, Before: before, Limit: logPage})
	if err != nil {
		return l, err
	}
	q := url.Values{}
	if l.Level != "" {
		q.Set("level", l.Level)
	}
	if l.AppID != "" {
		q.Set("app", l.AppID)
	}
	q.Set("follow", "1")
	l.FollowURL = "/knowledge/log?" + q.Encode()
	var text strings.Builder
	for _, e := range events {
		line := views.LogLine{At: clock(e.At), Level: string(e.Level), Message: e.Message, App: e.AppID.String, Run: e.RunID.String}
		var attrs []string
		for _, k := range slices.Sorted(maps.Keys(e.Attrs)) {
			v := fmt.Sprint(e.Attrs[k])
			if b, err := json.Marshal(e.Attrs[k]); err == nil && !isString(e.Attrs[k]) {
				v = string(b)
			}
			line.Attrs = append(line.Attrs, views.Label{Key: k, Value: v})
			attrs = append(attrs, k+"="+v)
		}
		l.Lines = append(l.Lines, line)
		fmt.Fprintf(&text, "%s %s %s %s %s %s\n", line.At, line.Level, orDash(line.App), orDash(line.Run), line.Message, strings.Join(attrs, " "))
	}
	l.Text = text.String()
	if len(events) == logPage {
		q.Del("follow")
		q.Set("before", fmt.Sprint(events[len(events)-1].ID))
		l.MoreHref = "/knowledge?" + q.Encode()
	}
	return l, nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (h *Handlers) knowledgeTurns(c *fiber.Ctx) error {
	s, err := h.page(c, "Knowledge", "knowledge")
	if err != nil {
		return err
	}
	rows, err := h.knowledge.Turns(c.UserContext(), knowledge.TurnQuery{Limit: turnsPage})
	if err != nil {
		return err
	}
	// What the page's turns did, read at once for all of them.
	runs := make([]string, 0, len(rows))
	for _, r := range rows {
		runs = append(runs, r.RunID)
	}
	work, err := h.knowledge.Work(c.UserContext(), runs, knowledge.DefaultWorkListed)
	if err != nil {
		return err
	}
	v := views.KnowledgeView{Tab: "turns"}
	for _, r := range rows {
		v.Turns = append(v.Turns, turnLine(r, work[r.RunID]))
	}
	return render(c, views.KnowledgePageView(s, v))
}

func (h *Handlers) knowledgeTurn(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	row, docs, err := h.knowledge.Turn(c.UserContext(), id)
	if err != nil {
		return fiber.NewError(fiber.StatusNotFound, "There is no such turn.")
	}
	s, err := h.page(c, "Knowledge", "knowledge")
	if err != nil {
		return err
	}
	work, err := h.knowledge.Work(c.UserContext(), []string{row.RunID}, knowledge.MaxWorkListed)
	if err != nil {
		return err
	}
	line := turnLine(row, work[row.RunID])
	v := views.KnowledgeView{Tab: "turn", Turn: &line}
	for _, d := range docs {
		v.Docs = append(v.Docs, views.TurnDoc{Ref: d.Ref, Title: d.Title, Text: d.Text, Cut: d.Cut, Bytes: d.Bytes})
	}
	return render(c, views.KnowledgePageView(s, v))
}

// turnLine is a turn with what its run did: a chip per document, the
// edits as one chip (each in its title), a chip per build and run of the
// checks, per case opened and resolved, and per lesson served.
func turnLine(r knowledge.TurnRow, w knowledge.RunWork) views.TurnLine {
	l := views.TurnLine{ID: r.ID, At: clock(r.At), App: r.AppID, Run: r.RunID, Kind: string(r.Kind), Request: firstLine(r.Request, 120)}
	for _, d := range r.Documents {
		l.Docs = append(l.Docs, views.TurnChip{Ref: d.Ref, Title: d.Title, Cut: d.Cut})
	}
	if w.EditCount > 0 {
		var files []string
		for _, e := range w.Edits {
			files = append(files, e.Summary)
		}
		if more := w.EditCount - len(w.Edits); more > 0 {
			files = append(files, fmt.Sprintf("and %d before", more))
		}
		l.Work = append(l.Work, views.WorkChip{Kind: knowledge.WorkEdit, Text: counted(w.EditCount, "edit"), Title: strings.Join(files, "\n")})
	}
	steps := func(kind, noun, plural string, list []knowledge.Work, total int) {
		if more := total - len(list); more > 0 {
			l.Work = append(l.Work, views.WorkChip{Kind: kind, Text: fmt.Sprintf("%d earlier %s", more, plural)})
		}
		for _, x := range list {
			l.Work = append(l.Work, views.WorkChip{Kind: kind, Text: noun + " " + firstLine(x.Summary, 48), Title: x.Summary, Failed: !x.OK})
		}
	}
	steps(knowledge.WorkBuild, "build", "builds", w.Builds, w.BuildCount)
	steps(knowledge.WorkChecks, "checks", "runs of the checks", w.Checks, w.CheckCount)
	cases := func(kind, verb string, list []knowledge.CaseRef, total int) {
		for _, k := range list {
			l.Work = append(l.Work, views.WorkChip{Kind: kind, Text: fmt.Sprintf("%s case #%d", verb, k.ID),
				Title: fmt.Sprintf("%s case at %s", k.Kind, k.Where), Failed: kind == "opened", CaseID: k.ID})
		}
		if more := total - len(list); more > 0 {
			l.Work = append(l.Work, views.WorkChip{Kind: kind, Text: fmt.Sprintf("%s %d more", verb, more)})
		}
	}
	cases("opened", "opened", w.Opened, w.OpenedCount)
	cases("resolved", "resolved", w.Resolved, w.ResolvedCount)
	for _, sv := range w.Served {
		l.Lessons = append(l.Lessons, views.ServedChip{Text: fmt.Sprintf("lesson %d: %s", sv.LessonID, servingOutcome(sv)), NotIncluded: !sv.Included})
	}
	return l
}

// counted is "1 edit", "3 edits".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func (h *Handlers) knowledgeCases(c *fiber.Ctx) error {
	s, err := h.page(c, "Knowledge", "knowledge")
	if err != nil {
		return err
	}
	v := views.KnowledgeView{Tab: "cases"}
	if h.cases != nil {
		list, err := h.cases.List(c.UserContext(), knowledge.CaseQuery{Limit: 200})
		if err != nil {
			return err
		}
		for _, k := range list {
			v.Cases = append(v.Cases, caseLine(k))
		}
	}
	return render(c, views.KnowledgePageView(s, v))
}

// Lessons is what the handlers need of the knowledge's lessons.
type Lessons interface {
	List(ctx context.Context, q knowledge.LessonQuery) ([]knowledge.Lesson, error)
	Confirm(ctx context.Context, id int64, by string) error
	Retire(ctx context.Context, id int64, by string) error
	Write(ctx context.Context, text, by string, applies knowledge.Applies) (int64, error)
	Replace(ctx context.Context, id int64, text, by string) (int64, error)
}

// Servings is what the handlers read of where lessons were served.
type Servings interface {
	ForRun(ctx context.Context, runID string) ([]knowledge.Serving, error)
	ForLesson(ctx context.Context, lessonID int64) ([]knowledge.Serving, error)
}

func servingLine(sv knowledge.Serving) string {
	return fmt.Sprintf("%s to %s (%s): %s", clock(sv.ServedAt), sv.RunID, sv.Reason, servingOutcome(sv))
}

// servingOutcome is what came of a serving in a word or two: its outcome,
// open while it waits for one, or not included when the budget cut the
// lesson's line and it is never scored.
func servingOutcome(sv knowledge.Serving) string {
	switch {
	case !sv.Included:
		return "not included"
	case sv.Outcome == "":
		return "open"
	}
	return sv.Outcome
}

func (h *Handlers) knowledgeCase(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	if h.cases == nil {
		return fiber.NewError(fiber.StatusNotFound, "There is no such case.")
	}
	k, err := h.cases.Get(c.UserContext(), id)
	if err != nil {
		return fiber.NewError(fiber.StatusNotFound, "There is no such case.")
	}
	s, err := h.page(c, "Knowledge", "knowledge")
	if err != nil {
		return err
	}
	d := &views.CaseDetail{CaseLine: caseLine(k), Signature: k.Signature, Request: k.Request, Edits: k.Edits, Model: k.Model,
		RevisionBefore: k.RevisionBefore, ResolvedRevision: k.ResolvedRevision, TurnID: k.ContextID}
	d.Message = k.Message
	return render(c, views.KnowledgePageView(s, views.KnowledgeView{Tab: "case", Case: d}))
}

func caseLine(k knowledge.Case) views.CaseLine {
	line := views.CaseLine{ID: k.ID, Kind: k.Kind, App: k.AppID, Message: firstLine(k.Message, 200), Opened: clock(k.OpenedAt),
		OpenedRun: k.OpenedRunID, ResolvedRun: k.ResolvedRunID, Diagnosis: explanation(k.Diagnosis), Where: k.Stage}
	if k.Kind == knowledge.CaseCheck {
		line.Where = k.ExampleID
	}
	if k.Resolved() {
		line.Resolved = clock(k.ResolvedAt)
	}
	return line
}

// reviewer names who reviews: what "Reviewing as" holds, else the owner.
func reviewer(c *fiber.Ctx) string {
	if by := strings.TrimSpace(c.FormValue("by")); by != "" {
		return by
	}
	if o, ok := c.Locals(localOwner).(string); ok {
		return o
	}
	return "the owner"
}

func (h *Handlers) knowledgeLessons(c *fiber.Ctx) error {
	return h.renderLessons(c, views.Refusal{})
}

func (h *Handlers) renderLessons(c *fiber.Ctx, r views.Refusal) error {
	ctx := c.UserContext()
	s, err := h.page(c, "Knowledge", "knowledge")
	if err != nil {
		return err
	}
	v := views.KnowledgeView{Tab: "lessons", LessonStatus: c.Query("status"), Review: c.Query("review") == "1", Refusal: r}
	if h.lessons != nil {
		list, err := h.lessons.List(ctx, knowledge.LessonQuery{Status: v.LessonStatus, NeedsReview: v.Review})
		if err != nil {
			return err
		}
		for _, l := range list {
			line := lessonLine(l)
			if l.CaseID != 0 && h.cases != nil {
				if k, err := h.cases.Get(ctx, l.CaseID); err == nil {
					line.CaseProblem, line.Diagnosis = firstLine(k.Message, 200), firstLine(explanation(k.Diagnosis), 300)
				}
			}
			if h.servings != nil {
				served, err := h.servings.ForLesson(ctx, l.ID)
				if err != nil {
					return err
				}
				for _, sv := range served {
					line.Servings = append(line.Servings, servingLine(sv))
					if sv.Included {
						line.Served++
					} else {
						line.Cut++
					}
				}
			}
			v.Lessons = append(v.Lessons, line)
		}
	}
	return render(c, views.KnowledgePageView(s, v))
}

// lessonWrite runs an owner's write on lesson id (0 for a new one) and
// shows the lessons, with a refusal beside what it refused; a form sent
// from the lesson's own page (from=lesson) comes back to it.
func (h *Handlers) lessonWrite(c *fiber.Ctx, id int64, write func(ctx context.Context) error) error {
	if h.lessons == nil {
		return fiber.NewError(fiber.StatusNotFound, "This launcher keeps no lessons.")
	}
	at := "write"
	if id != 0 {
		at = fmt.Sprintf("lesson-%d", id)
	}
	back := id != 0 && c.FormValue("from") == "lesson"
	err := write(c.UserContext())
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		if back {
			return h.renderLesson(c, id, views.Refusal{At: at, Sentence: sentence}, false)
		}
		return h.renderLessons(c, views.Refusal{At: at, Sentence: sentence})
	}
	if err != nil {
		return err
	}
	if back {
		return c.Redirect(lessonPath(id), fiber.StatusSeeOther)
	}
	return c.Redirect("/knowledge/lessons", fiber.StatusSeeOther)
}

func (h *Handlers) lessonNew(c *fiber.Ctx) error {
	return h.lessonWrite(c, 0, func(ctx context.Context) error {
		_, err := h.lessons.Write(ctx, c.FormValue("text"), reviewer(c),
			knowledge.Applies{Stage: strings.TrimSpace(c.FormValue("stage")), Files: listed(c.FormValue("files"))})
		return err
	})
}

func (h *Handlers) lessonConfirm(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	return h.lessonWrite(c, id, func(ctx context.Context) error { return h.lessons.Confirm(ctx, id, reviewer(c)) })
}

func (h *Handlers) lessonRetire(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	return h.lessonWrite(c, id, func(ctx context.Context) error { return h.lessons.Retire(ctx, id, reviewer(c)) })
}

// listed are the entries of a field that lists them separated by commas
// or lines.
func listed(field string) []string {
	return strings.FieldsFunc(field, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' })
}

func (h *Handlers) lessonReplace(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	return h.lessonWrite(c, id, func(ctx context.Context) error {
		_, err := h.lessons.Replace(ctx, id, c.FormValue("text"), reviewer(c))
		return err
	})
}

// explanation is what a distilled diagnosis says, for a person: the
// distiller keeps it as JSON with its explanation.
func explanation(diagnosis string) string {
	var d struct {
		Explanation string `json:"explanation"`
	}
	if strings.HasPrefix(strings.TrimSpace(diagnosis), "{") && json.Unmarshal([]byte(diagnosis), &d) == nil && d.Explanation != "" {
		return d.Explanation
	}
	return diagnosis
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}
