package handlers

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"autoapp/executor"
	"autoapp/executor/ai"
	"autoapp/executor/overview"
	"autoapp/intent"
	"autoapp/intent/delivery"
	"autoapp/intent/owner"
	"autoapp/intent/plan"
	"autoapp/views"
)

// Backlog is what the handlers need of the intents.
type Backlog interface {
	List(ctx context.Context, appID string) ([]intent.IntentSummary, error)
	Get(ctx context.Context, intentID int64) (intent.IntentDetail, error)
	Task(ctx context.Context, taskID int64) (intent.TaskDetail, error)
	SetTaskModel(ctx context.Context, opID string, taskID int64, model string) error
	RemoveTask(ctx context.Context, opID string, taskID int64) error
	Withdraw(ctx context.Context, opID string, intentID int64) error
	TierModels() (map[string]string, error)
	SetTierModels(ctx context.Context, opID string, m map[string]string, known intent.ModelChecker) error
}

// Attention reads the pages of intents, and whether there is any
// (*intent.Attention).
type Attention interface {
	AnyIntent(ctx context.Context) (bool, error)
	ListPage(ctx context.Context, appID string, before int64, limit int) ([]intent.IntentSummary, bool, error)
}

// Interventions takes the owner's pause, stop and feedback for a running
// intent (*intent.Interventions).
type Interventions interface {
	SubmitIntervention(ctx context.Context, intentID int64, requestID string, kind intent.InterventionKind, text string) (intent.Receipt, bool, error)
}

// IntentPages reads, in one call, everything an intent's page and its live
// part show (*overview.Service).
type IntentPages interface {
	IntentPage(ctx context.Context, id int64) (overview.IntentPage, error)
}

// Runs is what the handlers need of the executor.
type Runs interface {
	Start(ctx context.Context, intentID int64) error
	Stop(intentID int64) error
	Answer(ctx context.Context, taskID int64, answer string) error
}

// newOp is a fresh operation id for the forms of a page: submitting the
// same form twice carries the same id, and the second changes nothing.
func newOp() (string, error) {
	t, err := owner.RandomToken()
	if err != nil {
		return "", err
	}
	return t[:22], nil
}

// backlogPage is how many intents one page of the Backlog lists.
const backlogPage = 50

func (h *Handlers) backlogList(c *fiber.Ctx) error {
	return h.renderBacklog(c, views.Refusal{}, "", nil)
}

// renderBacklog shows the Backlog; typed, when set, are tier models the
// owner typed that were refused, shown back instead of the saved ones.
func (h *Handlers) renderBacklog(c *fiber.Ctx, r views.Refusal, notice string, typed map[string]string) error {
	ctx := c.UserContext()
	// The overview counts what needs the person, so the rail's mark is
	// not counted a second time.
	var ov *views.OverviewView
	needsYou := 0
	if h.overview != nil {
		o, err := h.overview.Read(ctx)
		if err != nil {
			return err
		}
		v := overviewView(o)
		ov, needsYou = &v, o.Needs.Total()
	}
	s, err := h.pageMarked(c, "Backlog", "backlog", needsYou)
	if err != nil {
		return err
	}
	op, err := newOp()
	if err != nil {
		return err
	}
	p := views.BacklogList{AppID: s.AppID, AppName: s.AppName, Refusal: r, Notice: notice, Op: op, Overview: ov}
	steps, err := h.firstSteps(ctx)
	if err != nil {
		return err
	}
	p.FirstSteps = steps
	if s.AppID != "" {
		before, _ := strconv.ParseInt(c.Query("before"), 10, 64)
		intents, more, err := h.attention.ListPage(ctx, s.AppID, before, backlogPage)
		if err != nil {
			return err
		}
		for _, i := range intents {
			p.Intents = append(p.Intents, intentRow(i))
		}
		if more {
			p.OlderHref = fmt.Sprintf("/backlog?before=%d", intents[len(intents)-1].ID)
		}
		p.Paged = before > 0
		if p.TierModels, err = h.tierModels(typed); err != nil {
			return err
		}
	}
	return render(c, views.BacklogListPage(s, p))
}

func (h *Handlers) backlogModels(c *fiber.Ctx) error {
	typed, err := h.saveTierModels(c)
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderBacklog(c, views.Refusal{At: "models", Sentence: sentence}, "", typed)
	}
	if err != nil {
		return err
	}
	return c.Redirect("/backlog", fiber.StatusSeeOther)
}

func paramID(c *fiber.Ctx, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Params(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, fiber.NewError(fiber.StatusNotFound, "There is no such intent or task.")
	}
	return id, nil
}

// intentPage opens an intent; the rail names its application, and the
// selection stays as it was.
func (h *Handlers) intentPage(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	return h.renderIntent(c, id, views.Refusal{}, false)
}

// intentLive is the polled part of an intent.
func (h *Handlers) intentLive(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	return h.renderIntent(c, id, views.Refusal{}, true)
}

// renderIntent shows an intent, or its live part, from one read of what
// the page shows.
func (h *Handlers) renderIntent(c *fiber.Ctx, id int64, r views.Refusal, fragment bool) error {
	p, err := h.intentPages.IntentPage(c.UserContext(), id)
	if err != nil {
		return err
	}
	op, err := newOp()
	if err != nil {
		return err
	}
	v := intentView(p, op)
	v.Refusal = r
	if fragment {
		return render(c, views.IntentLive(shell(c, "", "backlog"), v))
	}
	s := h.pageAbout(c, fmt.Sprintf("Intent #%d", p.Intent.ID), "backlog", p.App.ID, p.App.Name)
	return render(c, views.IntentPage(s, v))
}

func (h *Handlers) intentWithdraw(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	err = h.backlog.Withdraw(c.UserContext(), c.FormValue("op"), id)
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderIntent(c, id, views.Refusal{At: "withdraw", Sentence: sentence}, false)
	}
	if err != nil {
		return err
	}
	return c.Redirect(fmt.Sprintf("/backlog/intents/%d", id), fiber.StatusSeeOther)
}

// taskWrite runs an owner's write on a task and shows the intent, with a
// refusal beside the task.
func (h *Handlers) taskWrite(c *fiber.Ctx, write func(ctx context.Context, op string, taskID int64) error) error {
	taskID, err := paramID(c, "id")
	if err != nil {
		return err
	}
	t, err := h.backlog.Task(c.UserContext(), taskID)
	if err != nil {
		return err
	}
	err = write(c.UserContext(), c.FormValue("op"), taskID)
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderIntent(c, t.IntentID, views.Refusal{At: "task-" + strconv.FormatInt(taskID, 10), Sentence: sentence}, false)
	}
	if err != nil {
		return err
	}
	return c.Redirect(fmt.Sprintf("/backlog/intents/%d", t.IntentID), fiber.StatusSeeOther)
}

func (h *Handlers) taskModel(c *fiber.Ctx) error {
	model := strings.TrimSpace(c.FormValue("model"))
	return h.taskWrite(c, func(ctx context.Context, op string, taskID int64) error {
		return h.backlog.SetTaskModel(ctx, op, taskID, model)
	})
}

func (h *Handlers) taskRemove(c *fiber.Ctx) error {
	return h.taskWrite(c, h.backlog.RemoveTask)
}

func (h *Handlers) taskPage(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	t, err := h.backlog.Task(c.UserContext(), id)
	if err != nil {
		return err
	}
	s, err := h.page(c, t.Slug, "backlog")
	if err != nil {
		return err
	}
	// The host's own criterion holds once the verdict completed the task.
	passed := append(t.Passed(), t.Status == intent.TaskCompleted)
	v := views.TaskView{IntentID: t.IntentID, Row: taskRow(t.BacklogTask, false), Facts: planFacts(t.Task.Task),
		PlanHTML: views.Document(plan.Body(t.Task.Task, passed)), RunIDs: t.RunIDs}
	ended := map[string]string{}
	for _, e := range t.Events {
		v.Events = append(v.Events, views.EventRow{At: clock(e.At), From: string(e.From), To: string(e.To),
			Reason: e.Reason, RunID: e.RunID, Actor: e.Actor})
		if e.From == intent.TaskInProgress && e.RunID != "" {
			ended[e.RunID] = string(e.To) + ": " + e.Reason
		}
	}
	diffs, err := h.candidates.RunDiffs(c.UserContext(), t.AppID, t.RunIDs)
	if err != nil {
		return err
	}
	for i, id := range t.RunIDs {
		v.Attempts = append(v.Attempts, views.AttemptView{RunID: id, Ended: ended[id], Diff: diffs[i]})
	}
	if err := h.taskSpend(c.UserContext(), t, &v); err != nil {
		return err
	}
	return render(c, views.TaskPage(s, v))
}

func intentRow(i intent.IntentSummary) views.IntentRow {
	row := views.IntentRow{ID: i.ID, Status: string(i.Status), BeingWritten: i.BeingWritten(),
		Request: firstLine(i.Request, 140), Created: clock(i.CreatedAt), Questions: i.QuestionCount}
	var parts []string
	total := 0
	for _, st := range intent.TaskStatuses {
		if n := i.Counts[st]; n > 0 {
			total += n
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	sort.Strings(parts)
	switch total {
	case 0:
		row.Counts = "no tasks yet"
	case 1:
		row.Counts = "1 task: " + strings.Join(parts, ", ")
	default:
		row.Counts = fmt.Sprintf("%d tasks: %s", total, strings.Join(parts, ", "))
	}
	return row
}

// intentView shapes the intent page's read for the page and its live part.
func intentView(p overview.IntentPage, op string) views.IntentView {
	d := p.Intent
	v := views.IntentView{PreviewLink: p.PreviewLink, ID: d.ID, AppID: d.AppID, AppName: p.App.Name, Status: string(d.Status), Mode: string(d.Mode),
		BeingWritten: d.BeingWritten(), Request: d.Request, Restated: strings.Join(d.Restated, " "),
		Fits: d.Fits, Conflicts: d.Conflicts, OutOfReach: d.OutOfReach, Assumptions: d.Assumptions,
		Questions: d.Questions, StopReason: d.StopReason, Created: clock(d.CreatedAt),
		CanWithdraw: d.Withdrawable(), Op: op, CanRun: d.Runnable(), Running: d.Status == intent.IntentRunning,
		Polling: p.Live}
	if !d.SubmittedAt.IsZero() {
		v.Submitted = clock(d.SubmittedAt)
	}
	v.Tasks = make([]views.TaskRow, 0, len(d.Tasks))
	for _, t := range d.Tasks {
		row := taskRow(t, d.Removable(t))
		if total, ok := p.Spend.Tasks[t.ID]; ok {
			sv := spendView(total)
			row.Spend = &sv
		}
		v.Tasks = append(v.Tasks, row)
		if d.Status == intent.IntentDone && t.Status == intent.TaskCompleted {
			for _, line := range t.Runbook {
				v.Runbook = append(v.Runbook, views.RunbookLine{Slug: t.Slug, Line: line})
			}
		}
	}
	total := spendView(p.Spend.Total)
	v.Spend = &total
	if p.Progress != nil {
		v.Progress = progressView(*p.Progress, p.At, p.Limits)
	}
	if st := p.Request; st != nil && d.Status != intent.IntentDone && d.Status != intent.IntentWithdrawn {
		v.ModeSwitch = modeSwitch(fmt.Sprintf("/backlog/intents/%d/mode", d.ID), 0, *st, op)
		v.ModeSwitch.Running = d.Status == intent.IntentRunning
	}
	if p.Guided() {
		st := p.Request
		v.Guided, v.Approved, v.Voided, v.RequestRevision, v.ShownPlan = true, st.Approval.Valid, st.Approval.Voided, st.Revision, st.Current
		v.CanApprove, v.CannotApprove = st.Approvable, st.Unapprovable
		v.CanWithdrawApproval, v.Revoked = st.Revocable, st.Approval.Revoked
		if last, ok := st.LastPlan(); ok {
			v.PlanVersion, v.PlanHash = len(st.Plans), last.Hash[:min(12, len(last.Hash))]
		}
		// Run is offered once the exact plan is approved, as Run checks.
		v.CanRun = v.CanRun && st.Approval.Valid
	}
	for _, rc := range p.Interventions {
		v.Interventions = append(v.Interventions, receiptRow(rc))
	}
	if p.Delivery != nil {
		v.Delivery = deliveryView(*p.Delivery)
		v.Delivery.Plan = deliveredPlan(p.Request)
	}
	return v
}

func taskRow(t intent.BacklogTask, removable bool) views.TaskRow {
	row := views.TaskRow{ID: t.ID, Slug: t.Slug, Title: t.Title, Priority: t.Priority, Tier: t.Tier,
		TierReasons: strings.Join(t.TierReasons, "; "), Model: t.RunsOn, ModelSource: modelSource(t.RunsOnFrom), OwnModel: t.Model,
		Status: string(t.Status), Blocked: t.Blocked, BlockedBy: t.BlockedBy, CanRemove: removable,
		CanChangeModel: t.ModelChangeable(), Question: t.Question, Advice: t.Advice, AdviceLines: adviceLines(t.Advice), FailReason: failReason(t), Attempts: t.Attempts,
		CriteriaTotal: len(t.Criteria), CanAnswer: t.Status == intent.TaskNeedsAnswer}
	for _, h := range t.ExampleHashes {
		if h != "" {
			row.CriteriaPassed++
		}
	}
	return row
}

// modelSource says where a task's model came from, as the page words it.
func modelSource(from string) string {
	if from == "settings" {
		return "the Settings model"
	}
	return from
}

func firstLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return s
}

// failReason is shown under a failed task; an interrupted one says why too.
func failReason(t intent.BacklogTask) string {
	if t.Status != intent.TaskFailed && t.Status != intent.TaskInterrupted {
		return ""
	}
	if t.Reason == "" {
		return "It " + string(t.Status) + "."
	}
	return t.Reason
}

// progressView is the task in hand as the page shows it at a time, with
// the limits in force.
func progressView(p executor.Progress, at time.Time, l ai.Limits) *views.ProgressView {
	v := &views.ProgressView{Slug: p.Slug, RunID: p.RunID, Started: clock(p.Started), Stage: p.Stage, LastTool: p.LastTool,
		Refusal: p.Refusal, Turn: p.Turn, Passed: p.Passed, Total: p.Total, HostBuild: p.HostBuild, LastEnded: p.LastEnded,
		Model: p.Model.Sentence(at), Limits: limitsLine(l)}
	if p.Usage.Input+p.Usage.Output > 0 {
		v.Tokens = fmt.Sprintf("%d tokens in, %d out so far", p.Usage.Input, p.Usage.Output)
	}
	return v
}

func (h *Handlers) intentRun(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	return h.intentAction(c, id, "run", func() error { return h.runs.Start(c.UserContext(), id) })
}

func (h *Handlers) intentStop(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	return h.intentAction(c, id, "run", func() error { return h.runs.Stop(id) })
}

// intentAction runs a write on an intent and shows it, with the refusal at.
func (h *Handlers) intentAction(c *fiber.Ctx, id int64, at string, act func() error) error {
	err := act()
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderIntent(c, id, views.Refusal{At: at, Sentence: sentence}, false)
	}
	if err != nil {
		return err
	}
	return c.Redirect(fmt.Sprintf("/backlog/intents/%d", id), fiber.StatusSeeOther)
}

// intentIntervene queues feedback or a pause for the running intent: a
// receipt in its inbox, applied at the run's next safe boundary. The form's
// request id makes a repeated submit the same receipt.
func (h *Handlers) intentIntervene(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	return h.intentAction(c, id, "intervention", func() error {
		_, _, err := h.interventions.SubmitIntervention(c.UserContext(), id, c.FormValue("request_id"),
			intent.InterventionKind(c.FormValue("kind")), c.FormValue("text"))
		return err
	})
}

func receiptRow(rc intent.Receipt) views.ReceiptRow {
	row := views.ReceiptRow{Order: rc.Order, Kind: string(rc.Kind), Text: rc.Text, Submitted: clock(rc.SubmittedAt), Held: rc.Held}
	if rc.AppliedAt != nil {
		row.Applied = clock(*rc.AppliedAt)
	}
	if rc.ResumedAt != nil {
		row.Resumed = clock(*rc.ResumedAt)
	}
	return row
}

func (h *Handlers) taskAnswer(c *fiber.Ctx) error {
	answer := c.FormValue("answer")
	return h.taskWrite(c, func(ctx context.Context, op string, taskID int64) error {
		return h.runs.Answer(ctx, taskID, answer)
	})
}

func deliveryView(d delivery.Delivery) *views.DeliveryView {
	v := &views.DeliveryView{At: clock(d.At), Revision: short(d.Revision), Release: d.ReleaseID,
		ArchiveHref: fmt.Sprintf("/backlog/intents/%d/delivery/workspace.tar.gz", d.IntentID)}
	for _, a := range d.Artifacts {
		v.Artifacts = append(v.Artifacts, views.ArtifactRow{Path: a.Path, Size: byteSize(a.Size), SHA256: a.SHA256, Media: a.Media,
			Href: fmt.Sprintf("/backlog/intents/%d/delivery/artifact?path=%s", d.IntentID, url.QueryEscape(a.Path))})
	}
	for _, p := range d.Problems {
		v.Problems = append(v.Problems, p.Path+": "+p.Message)
	}
	v.Needs = d.Evidence.Needs
	if d.Evidence.HeadAtDelivery != "" {
		v.Moved = fmt.Sprintf("The workspace changed after the last verdict; the delivery is of %s, the revision the checks passed at.", short(d.Revision))
	}
	for _, t := range d.Evidence.Tasks {
		row := views.DeliveredTask{Slug: t.Slug, Revision: short(t.Revision)}
		if row.Revision == "" {
			row.Revision = short(d.Revision)
		}
		for _, n := range slices.Sorted(maps.Keys(t.ExampleHashes)) {
			id := fmt.Sprintf("%s-c%d", t.Slug, n)
			row.Examples = append(row.Examples, views.DeliveredExample{ID: id, Hash: t.ExampleHashes[n]})
		}
		v.Evidence = append(v.Evidence, row)
	}
	return v
}

// byteSize is a size as people read it: "714 B", "1.2 kB", "3.4 MB".
func byteSize(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d\u00a0B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f\u00a0kB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f\u00a0MB", float64(n)/(1000*1000))
}

// planFacts is the plan's front matter as the task page's table.
func planFacts(t plan.Task) []views.Fact {
	none := func(items []string) string {
		if len(items) == 0 {
			return "none"
		}
		return strings.Join(items, ", ")
	}
	facts := []views.Fact{
		{Name: "Priority", Value: t.Priority},
		{Name: "Labels", Value: none(t.Labels)},
		{Name: "Risk", Value: t.Risk},
		{Name: "Estimate", Value: views.Count(t.EstimatedLines, "line", "lines")},
		{Name: "Blocked by", Value: none(t.BlockedBy)},
	}
	if len(t.Locks) > 0 {
		facts = append(facts, views.Fact{Name: "Locks", Value: none(t.Locks)})
	}
	if t.Stub {
		facts = append(facts, views.Fact{Name: "Stub", Value: "yes, repaid by " + t.RepaidBy})
	}
	return facts
}

// adviceLines are the advice the executor kept, a line each of
// "Diagnosis: …", "Advice: …" and "Note: …", as named rows.
func adviceLines(advice string) []views.Fact {
	var out []views.Fact
	for _, line := range strings.Split(advice, "\n") {
		name, value, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if !ok || value == "" {
			if line = strings.TrimSpace(line); line != "" {
				out = append(out, views.Fact{Name: "Advice", Value: line})
			}
			continue
		}
		out = append(out, views.Fact{Name: name, Value: value})
	}
	return out
}

// firstSteps are the three steps of a first run — connect a model, make an
// application, make a request — until all are done, in the order they
// must be done.
func (h *Handlers) firstSteps(ctx context.Context) ([]views.FirstStep, error) {
	apps, err := h.apps.List(ctx)
	if err != nil {
		return nil, err
	}
	asked, err := h.attention.AnyIntent(ctx)
	if err != nil {
		return nil, err
	}
	steps := []views.FirstStep{
		{Text: "Connect a model: the engineer is any model behind an OpenAI-compatible API.", Href: "/settings", Link: "Open Settings", Done: h.providers.DefaultModel() != ""},
		{Text: "Make an application, from a template or a git folder of yours.", Href: "/apps", Link: "Open Applications", Done: len(apps) > 0},
		{Text: "Make a request: say what the engineer should build.", Href: "/request", Link: "Open Request", Done: asked},
	}
	for _, st := range steps {
		if !st.Done {
			return steps, nil
		}
	}
	return nil, nil
}
