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

// knowledgePages are the Knowledge page's log, turns and cases
// (Knowledge, Cases, Apps).
type knowledgePages struct{ frame }

func (h *knowledgePages) knowledgeLog(c *fiber.Ctx) error {
	l, err := h.logView(c)
	if err != nil {
		return err
	}
	s, err := h.page(c, "Knowledge", "knowledge")
	if err != nil {
		return err
	}
	apps, err := h.Apps.List(c.UserContext())
	if err != nil {
		return err
	}
	for _, a := range apps {
		l.Apps = append(l.Apps, appRow(a, s.AppID))
	}
	return render(c, views.KnowledgePageView(s, views.KnowledgeView{Tab: "log", Log: l}))
}

// knowledgeLogLines is the followed part of the Log view.
func (h *knowledgePages) knowledgeLogLines(c *fiber.Ctx) error {
	l, err := h.logView(c)
	if err != nil {
		return err
	}
	return render(c, views.KnowledgeLogLines(l))
}

func (h *knowledgePages) logView(c *fiber.Ctx) (views.KnowledgeLog, error) {
	l := views.KnowledgeLog{Level: c.Query("level"), AppID: c.Query("app"), Follow: c.Query("follow") == "1"}
	before := int64(c.QueryInt("before"))
	events, err := h.Knowledge.Log(c.UserContext(), knowledge.LogQuery{Level: l.Level, AppID: l.AppID, Before: before, Limit: logPage})
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

func (h *knowledgePages) knowledgeTurns(c *fiber.Ctx) error {
	s, err := h.page(c, "Knowledge", "knowledge")
	if err != nil {
		return err
	}
	rows, err := h.Knowledge.Turns(c.UserContext(), knowledge.TurnQuery{Limit: turnsPage})
	if err != nil {
		return err
	}
	// What the page's turns did, read at once for all of them.
	runs := make([]string, 0, len(rows))
	for _, r := range rows {
		runs = append(runs, r.RunID)
	}
	work, err := h.Knowledge.Work(c.UserContext(), runs, knowledge.DefaultWorkListed)
	if err != nil {
		return err
	}
	v := views.KnowledgeView{Tab: "turns"}
	for _, r := range rows {
		v.Turns = append(v.Turns, turnLine(r, work[r.RunID]))
	}
	return render(c, views.KnowledgePageView(s, v))
}

func (h *knowledgePages) knowledgeTurn(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	row, docs, err := h.Knowledge.Turn(c.UserContext(), id)
	if err != nil {
		return fiber.NewError(fiber.StatusNotFound, "There is no such turn.")
	}
	s, err := h.page(c, "Knowledge", "knowledge")
	if err != nil {
		return err
	}
	work, err := h.Knowledge.Work(c.UserContext(), []string{row.RunID}, knowledge.MaxWorkListed)
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
	l := views.TurnLine{ID: r.ID, At: clock(r.At), App: r.AppID, Run: r.RunID, Kind: string(r.Kind), Request: firstLine(r.Request, 120),
		InstructionsHash: r.InstructionsHash, CorpusVersion: r.CorpusVersion}
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
		l.Lessons = append(l.Lessons, views.ServedChip{Text: fmt.Sprintf("lesson %d: %s", sv.LessonID, servingOutcome(sv)), NotIncluded: !sv.Included, LessonID: sv.LessonID})
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

func (h *knowledgePages) knowledgeCases(c *fiber.Ctx) error {
	s, err := h.page(c, "Knowledge", "knowledge")
	if err != nil {
		return err
	}
	v := views.KnowledgeView{Tab: "cases"}
	if h.Cases != nil {
		list, err := h.Cases.List(c.UserContext(), knowledge.CaseQuery{Limit: 200})
		if err != nil {
			return err
		}
		for _, k := range list {
			v.Cases = append(v.Cases, caseLine(k))
		}
	}
	return render(c, views.KnowledgePageView(s, v))
}

func (h *knowledgePages) knowledgeCase(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	if h.Cases == nil {
		return fiber.NewError(fiber.StatusNotFound, "There is no such case.")
	}
	k, err := h.Cases.Get(c.UserContext(), id)
	if err != nil {
		return fiber.NewError(fiber.StatusNotFound, "There is no such case.")
	}
	s, err := h.page(c, "Knowledge", "knowledge")
	if err != nil {
		return err
	}
	d := &views.CaseDetail{CaseLine: caseLine(k), Signature: k.Signature, Request: k.Request, Edits: k.Edits, Model: k.Model,
		RevisionBefore: k.RevisionBefore, ResolvedRevision: k.ResolvedRevision, TurnID: k.ContextID,
		ReleaseBefore: k.ReleaseBefore, ResolvedRelease: k.ResolvedRelease, CorpusVersion: k.CorpusVersion}
	d.Message = k.Message
	return render(c, views.KnowledgePageView(s, views.KnowledgeView{Tab: "case", Case: d}))
}

func caseLine(k knowledge.Case) views.CaseLine {
	line := views.CaseLine{ID: k.ID, Kind: k.Kind, App: k.AppID, Message: firstLine(k.Message, 200), Opened: clock(k.OpenedAt),
		OpenedRun: k.OpenedRunID, ResolvedRun: k.ResolvedRunID, Diagnosis: explanation(k.Diagnosis), Where: k.Stage,
		Distill: k.DistillState, LessonID: diagnosedLesson(k.Diagnosis), Signature: k.Signature}
	if k.Kind == knowledge.CaseCheck {
		line.Where = k.ExampleID
	}
	if k.Resolved() {
		line.Resolved = clock(k.ResolvedAt)
	}
	return line
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

// diagnosedLesson is the lesson the distiller's answer kept for a case, 0
// for none.
func diagnosedLesson(diagnosis string) int64 {
	var d knowledge.Outcome
	if strings.HasPrefix(strings.TrimSpace(diagnosis), "{") && json.Unmarshal([]byte(diagnosis), &d) == nil {
		return d.LessonID
	}
	return 0
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}
