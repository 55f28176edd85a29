package handlers

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"autoapp/executor/replay"
	"autoapp/knowledge"
	"autoapp/views"
)

// LessonReplays is what the Knowledge page needs of replays
// (*replay.Service): a lesson's page with the evidence a person confirms
// it on, and Replay this lesson, which goes on in the background.
type LessonReplays interface {
	Lesson(ctx context.Context, id int64) (replay.LessonPage, error)
	Start(ctx context.Context, lessonID int64) error
}

func lessonPath(id int64) string { return "/knowledge/lessons/" + strconv.FormatInt(id, 10) }

// lessonPage opens a lesson; ?confirm=1, as Confirm in the list leads
// here, opens its confirmation at once.
func (h *lessonPages) lessonPage(c *fiber.Ctx) error {
	id, err := lessonID(c)
	if err != nil {
		return err
	}
	return h.renderLesson(c, id, views.Refusal{}, c.Query("confirm") == "1")
}

// lessonReplayLive is the polled part of a lesson's page.
func (h *lessonPages) lessonReplayLive(c *fiber.Ctx) error {
	id, err := lessonID(c)
	if err != nil {
		return err
	}
	p, err := h.LessonReplays.Lesson(c.UserContext(), id)
	if err != nil {
		return err
	}
	return render(c, views.LessonReplayFragment(shell(c, "", "knowledge"), replayPanel(p)))
}

// lessonReplay starts Replay this lesson and shows the lesson following it.
func (h *lessonPages) lessonReplay(c *fiber.Ctx) error {
	id, err := lessonID(c)
	if err != nil {
		return err
	}
	err = h.LessonReplays.Start(c.UserContext(), id)
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderLesson(c, id, views.Refusal{At: "replay", Sentence: sentence}, false)
	}
	if err != nil {
		return err
	}
	return c.Redirect(lessonPath(id), fiber.StatusSeeOther)
}

func lessonID(c *fiber.Ctx) (int64, error) {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, fiber.NewError(fiber.StatusNotFound, "There is no such lesson.")
	}
	return id, nil
}

// renderLesson shows lesson id's page, with a refusal beside what it
// refused.
func (h *lessonPages) renderLesson(c *fiber.Ctx, id int64, r views.Refusal, confirmOpen bool) error {
	if h.LessonReplays == nil {
		return fiber.NewError(fiber.StatusNotFound, "This launcher keeps no lessons.")
	}
	p, err := h.LessonReplays.Lesson(c.UserContext(), id)
	if err != nil {
		return err
	}
	s, err := h.page(c, fmt.Sprintf("Lesson %d", id), "knowledge")
	if err != nil {
		return err
	}
	d := lessonDetail(p)
	d.ConfirmOpen = confirmOpen
	d.Replay.Refusal = r
	return render(c, views.KnowledgePageView(s, views.KnowledgeView{Tab: "lesson", Lesson: &d, Refusal: r}))
}

// lessonDetail shapes a lesson's page.
func lessonDetail(p replay.LessonPage) views.LessonDetail {
	l := p.Lesson
	caseSignature := ""
	if p.Case != nil {
		caseSignature = p.Case.Signature
	}
	d := views.LessonDetail{LessonLine: lessonLine(l), Applies: appliesSentence(l.Applies, caseSignature), Replay: replayPanel(p)}
	if k := p.Case; k != nil {
		d.CaseProblem, d.Diagnosis, d.CaseWhere = firstLine(k.Message, 300), explanation(k.Diagnosis), k.Stage
		if k.Kind == knowledge.CaseCheck {
			d.CaseWhere = k.ExampleID
		}
	}
	for _, sv := range p.Servings {
		d.Servings = append(d.Servings, servingLine(sv))
	}
	if p.Counts.Total() > 0 {
		d.Counts = p.Counts.Sentence()
	}
	for _, v := range p.Versions {
		d.Versions = append(d.Versions, fmt.Sprintf("%d, %s: %s", v.Version, clock(v.At), v.Summary))
	}
	return d
}

// lessonLine is a lesson as the list shows it, and what may be done to it.
func lessonLine(l knowledge.Lesson) views.LessonLine {
	return views.LessonLine{ID: l.ID, Text: l.Text, Status: l.Status, Origin: l.Origin, Created: clock(l.CreatedAt),
		Flags: strings.Join(l.Flags, ", "), Files: strings.Join(l.Applies.Files, ", "), CaseID: l.CaseID,
		ConfirmedBy: l.ConfirmedBy, RetiredBy: l.RetiredBy, MethodUnclear: l.MethodUnclear,
		Supersedes: l.Supersedes, SupersededBy: l.SupersededBy, Index: l.IndexSentence(),
		CanConfirm: l.Confirmable() == nil, CanRetire: l.InService(), CanReplace: l.Servable()}
}

// appliesSentence says what a lesson is given to a turn for; caseSignature
// is its case's, which a person knows as that failure.
func appliesSentence(a knowledge.Applies, caseSignature string) string {
	var parts []string
	if a.Stage != "" {
		parts = append(parts, "a failure at stage "+a.Stage)
	}
	if len(a.Files) > 0 {
		parts = append(parts, "a task on "+strings.Join(a.Files, ", "))
	}
	if len(a.Routes) > 0 {
		parts = append(parts, "a task on the routes "+strings.Join(a.Routes, ", "))
	}
	switch {
	case a.Signature == "":
	case a.Signature == caseSignature:
		parts = append(parts, "its case's failure, met again")
	default:
		parts = append(parts, "the failure of signature "+a.Signature)
	}
	if len(parts) == 0 {
		return "whatever its words match: it names no stage, file or route"
	}
	return strings.Join(parts, ", or for ")
}

// replayPanel shapes a lesson's replay: the one going, the latest table,
// and what Replay this lesson would spend.
func replayPanel(p replay.LessonPage) views.ReplayPanel {
	l := p.Lesson
	r := views.ReplayPanel{LessonID: l.ID, Cannot: p.Plan.Cannot, Confirmable: l.Confirmable() == nil}
	if p.Latest != nil {
		t := replayTable(*p.Latest)
		r.Latest = &t
	}
	if g := p.Going; g != nil {
		if g.Going() {
			r.Going = replayGoing(*g)
		} else {
			r.Problem = g.Problem
		}
	}
	if p.Plan.Cannot == "" {
		r.Spend = replaySpend(p)
	}
	r.NoReplay = "No replay has been run; replay it first, or confirm it on other evidence you have."
	if l.CaseID == 0 {
		r.NoReplay = fmt.Sprintf("No replay has been run; a lesson written by hand comes from no case, so replay it on a case it is for from the command line (autoapp knowledge replay <caseId> --with %d) first, or confirm it on other evidence you have.", l.ID)
	}
	return r
}

// replaySpend is the confirmation's sentence: what Replay this lesson
// will spend.
func replaySpend(p replay.LessonPage) string {
	plan := p.Plan
	app := ""
	if p.Case != nil {
		app = p.Case.AppID
	}
	sentence := fmt.Sprintf("Replay lesson %d on case #%d? It spends %s of the engineer: %d with the lesson and %d without it, interleaved, each from the revision the failure was met at",
		p.Lesson.ID, plan.CaseID, counted(plan.Turns(), "turn"), plan.Runs, plan.Runs)
	switch plan.Regression {
	case 0:
		sentence += fmt.Sprintf(". No other resolved case of %s has a confirmed lesson, so there is no regression set.", app)
	case 1:
		sentence += fmt.Sprintf(", then 1 for the regression set: the other resolved case of %s whose lesson is confirmed.", app)
	default:
		sentence += fmt.Sprintf(", then %d for the regression set: the other resolved cases of %s whose lesson is confirmed, once each.", plan.Regression, app)
	}
	return sentence + " It runs in the background, and no run can start until it ends; nothing it finds is applied."
}

// replayGoing is a replay that goes, as its live part shows it.
func replayGoing(g replay.Going) *views.ReplayGoing {
	v := &views.ReplayGoing{Headline: fmt.Sprintf("Replaying lesson %d on case #%d since %s: %d of %d runs judged.",
		g.LessonID, g.CaseID, clock(g.Started), len(g.Judged), g.Total)}
	if n := g.Now; n != nil {
		v.Now = fmt.Sprintf("Now: run %d of %d, %s.", n.Index, n.Total, progressArm(*n))
	}
	for _, p := range g.Judged {
		v.Judged = append(v.Judged, views.ReplayJudged{What: fmt.Sprintf("Run %d, %s", p.Index, progressArm(p)), Passed: p.Passed, Judgement: p.Judgement})
	}
	return v
}

// progressArm names the arm of a run going, and its case in the
// regression set.
func progressArm(p replay.Progress) string {
	switch p.Arm {
	case knowledge.ArmWith:
		return "with the lesson"
	case knowledge.ArmWithout:
		return "without it"
	}
	return fmt.Sprintf("regression on case #%d", p.CaseID)
}

// replayTable shapes a replay as `knowledge show` prints it.
func replayTable(res replay.Result) views.ReplayTable {
	m := res.Manifest
	c := m.Case
	about := fmt.Sprintf("Replay of case #%d: a %s failure of %s", c.ID, c.Kind, c.AppID)
	if c.Stage != "" {
		about += " at stage " + c.Stage
	}
	if c.Example != nil {
		about += " on example " + c.Example.ID
	}
	about += fmt.Sprintf(", from revision %s, started %s.", short(c.Revision), clock(m.StartedAt))
	t := views.ReplayTable{About: about, Outcome: res.Verdict.Outcome, Verdict: res.Verdict.Sentence}
	runs := "runs"
	if m.Runs == 1 {
		runs = "run"
	}
	numbers := fmt.Sprintf("%d %s an arm on %s, at most %d steps and %d minutes a turn.", m.Runs, runs, m.Model.Ref, m.StepCap, m.TurnMinutes)
	if m.Lesson != nil {
		t.Under = fmt.Sprintf("Lesson under test: %d, %s when replayed. %s", m.Lesson.ID, m.Lesson.Status, numbers)
	} else {
		t.Under = "No lesson under test: the case taught none, so only the without arm ran. " + numbers
	}
	for _, a := range res.Arms {
		t.Arms = append(t.Arms, views.ReplayArm{Name: a.Arm, Runs: a.Runs, Passed: a.Passed})
	}
	for _, r := range res.Runs {
		t.Runs = append(t.Runs, replayRunLine(r))
	}
	for _, r := range res.Regression {
		t.RegressionRuns = append(t.RegressionRuns, replayRunLine(r))
	}
	switch {
	case m.Lesson == nil:
	case len(m.Regression) == 0:
		t.Regression = fmt.Sprintf("Regression: no other resolved case of %s has a confirmed lesson.", c.AppID)
	default:
		failed := 0
		for _, r := range res.Regression {
			if !r.Passed {
				failed++
			}
		}
		t.Regression = fmt.Sprintf("Regression: %d of %d other resolved cases of %s with a confirmed lesson replayed once with lesson %d; %d failed (it blocks nothing).",
			len(res.Regression), len(m.Regression), c.AppID, m.Lesson.ID, failed)
	}
	for _, s := range m.Skipped {
		t.Notes = append(t.Notes, fmt.Sprintf("Case #%d was not replayed: %s", s.ID, s.Why))
	}
	if res.Stopped {
		t.Notes = append(t.Notes, "The replay ended before every run finished; the runs above are those that did.")
	}
	t.Kept = fmt.Sprintf("Manifest %s; the runs are kept in the data folder under replay/%d/.", short(res.ManifestHash), c.ID)
	return t
}

func replayRunLine(r knowledge.ReplayRun) views.ReplayRunLine {
	return views.ReplayRunLine{RunID: r.RunID, Arm: r.Arm, CaseID: r.CaseID, Passed: r.Passed, Ended: r.Ended, Calls: r.Calls,
		Judgement: r.Judgement, Folder: path.Join("replay", strconv.FormatInt(r.CaseID, 10), r.Arm, strconv.Itoa(r.N)) + "/"}
}
