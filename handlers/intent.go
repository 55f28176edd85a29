package handlers

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"autoapp/executor"
	"autoapp/executor/ai"
	"autoapp/executor/overview"
	"autoapp/intent"
	"autoapp/intent/plan"
	"autoapp/views"
)

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
	// Running are the intents running, for the rail.
	Running() []executor.Run
}

// intentPages are an intent's page and its live part, a task's page, and
// the owner's writes shown on the intent's page: withdraw, run and stop,
// interventions, the task's model, removal and answer, approval and mode
// (IntentPages, Backlog, Runs, Requests, Candidates, Overview).
type intentPages struct{ frame }

// intentPage opens an intent; the rail names its application, and the
// selection stays as it was.
func (h *intentPages) intentPage(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	return h.renderIntent(c, id, views.Refusal{}, false)
}

// intentLive is the polled part of an intent.
func (h *intentPages) intentLive(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	return h.renderIntent(c, id, views.Refusal{}, true)
}

// renderIntent shows an intent, or its live part, from one read of what
// the page shows.
func (h *intentPages) renderIntent(c *fiber.Ctx, id int64, r views.Refusal, fragment bool) error {
	p, err := h.IntentPages.IntentPage(c.UserContext(), id)
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

func (h *intentPages) intentWithdraw(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	err = h.Backlog.Withdraw(c.UserContext(), c.FormValue("op"), id)
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
func (h *intentPages) taskWrite(c *fiber.Ctx, write func(ctx context.Context, op string, taskID int64) error) error {
	taskID, err := paramID(c, "id")
	if err != nil {
		return err
	}
	t, err := h.Backlog.Task(c.UserContext(), taskID)
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

func (h *intentPages) taskModel(c *fiber.Ctx) error {
	model := strings.TrimSpace(c.FormValue("model"))
	return h.taskWrite(c, func(ctx context.Context, op string, taskID int64) error {
		return h.Backlog.SetTaskModel(ctx, op, taskID, model)
	})
}

func (h *intentPages) taskRemove(c *fiber.Ctx) error {
	return h.taskWrite(c, h.Backlog.RemoveTask)
}

func (h *intentPages) taskPage(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	t, err := h.Backlog.Task(c.UserContext(), id)
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
	diffs, err := h.Candidates.RunDiffs(c.UserContext(), t.AppID, t.RunIDs)
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
	if d.Status != intent.IntentWithdrawn && (d.Status != intent.IntentDone || !p.Cap.Cap.None()) {
		f := p.Cap.Cap.Form()
		v.Cap = &views.CapView{Line: p.Cap.Line(), Own: p.Cap.Own, Fields: views.CapFields{Dollars: f.Dollars, Tokens: f.Tokens, Minutes: f.Minutes},
			CanSet: d.Status != intent.IntentDone}
	}
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
		CanChangeModel: t.ModelChangeable(), Question: t.Question, Advice: t.Advice, AdviceLines: adviceLines(t.Advice), FailReason: failReason(t), Capped: capped(t), Attempts: t.Attempts,
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

// failReason is shown under a failed task; an interrupted one says why too.
func failReason(t intent.BacklogTask) string {
	if t.Status != intent.TaskFailed && t.Status != intent.TaskInterrupted {
		return ""
	}
	if t.Reason == "" {
		return "It " + string(t.Status) + "."
	}
	if capped(t) {
		return "A cap cut its turn before it finished: nothing was judged and no attempt was counted."
	}
	return t.Reason
}

// capped says a cap cut the task's last turn.
func capped(t intent.BacklogTask) bool {
	r, ok := strings.CutPrefix(t.Reason, "not an attempt: ")
	return ok && t.Status == intent.TaskInterrupted && intent.CapReached(r)
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

func (h *intentPages) intentRun(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	return h.intentAction(c, id, "run", func() error { return h.Runs.Start(c.UserContext(), id) })
}

// intentCap keeps the owner's cap on the intent.
func (h *intentPages) intentCap(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	f := capFields(c, "cap_")
	return h.intentAction(c, id, "cap", func() error {
		return h.Backlog.SetCap(c.UserContext(), id, intent.CapForm(f))
	})
}

func (h *intentPages) intentStop(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	return h.intentAction(c, id, "run", func() error { return h.Runs.Stop(id) })
}

// intentAction runs a write on an intent and shows it, with the refusal at.
func (h *intentPages) intentAction(c *fiber.Ctx, id int64, at string, act func() error) error {
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
func (h *intentPages) intentIntervene(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	return h.intentAction(c, id, "intervention", func() error {
		_, _, err := h.Interventions.SubmitIntervention(c.UserContext(), id, c.FormValue("request_id"),
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

func (h *intentPages) taskAnswer(c *fiber.Ctx) error {
	answer := c.FormValue("answer")
	return h.taskWrite(c, func(ctx context.Context, op string, taskID int64) error {
		return h.Runs.Answer(ctx, taskID, answer)
	})
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

// intentMode switches the mode of the request the intent answers.
func (h *intentPages) intentMode(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	seen, _ := strconv.Atoi(c.FormValue("seen"))
	return h.intentAction(c, id, "mode", func() error {
		_, err := h.Requests.SetIntentMode(c.UserContext(), id, seen, c.FormValue("op"), c.FormValue("mode"))
		return err
	})
}

// intentApprove approves the exact plan of a guided request.
func (h *intentPages) intentApprove(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	seen, _ := strconv.Atoi(c.FormValue("seen"))
	return h.intentAction(c, id, "run", func() error {
		st, err := h.Requests.ForIntent(c.UserContext(), id)
		if err != nil {
			return err
		}
		_, err = h.Requests.ApproveShown(c.UserContext(), st.ID, seen, c.FormValue("op"), c.FormValue("plan"))
		return err
	})
}

// intentWithdrawApproval takes the owner's approval back before Run.
func (h *intentPages) intentWithdrawApproval(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	seen, _ := strconv.Atoi(c.FormValue("seen"))
	return h.intentAction(c, id, "approval", func() error {
		_, err := h.Requests.WithdrawApproval(c.UserContext(), id, seen, c.FormValue("op"))
		return err
	})
}

// taskSpend adds each of the task's turns to its page.
func (h *intentPages) taskSpend(ctx context.Context, t intent.TaskDetail, v *views.TaskView) error {
	if h.Overview == nil {
		return nil
	}
	is, err := h.Overview.Task(ctx, t)
	if err != nil {
		return err
	}
	for _, u := range is.Turns[t.ID] {
		v.Turns = append(v.Turns, views.TurnSpendView{At: clock(u.At), RunID: u.RunID, Kind: u.Kind, Model: u.Model,
			Spend: spendView(u.Total), Partial: u.Partial, Live: u.Live})
	}
	if total, ok := is.Tasks[t.ID]; ok {
		sv := spendView(total)
		v.Spend = &sv
	}
	return nil
}
