package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"autoapp/executor/ai"
	"autoapp/executor/ai/provider"
	"autoapp/executor/builder"
	"autoapp/executor/candidate"
	"autoapp/executor/verdict"
	"autoapp/executor/workspace"
	"autoapp/intent"
	"autoapp/intent/plan"
	"autoapp/knowledge"
)

// hostBuilt is what a task completed on the host's own build says.
const hostBuilt = "completed after the host built what the turn left unbuilt"

// runTask runs one task's turns until it completes, fails, or the run
// must stop; it returns the reason to stop the intent with, or "" to go on.
func (e *Executor) runTask(ctx context.Context, r *run, d intent.IntentDetail, t intent.BacklogTask) string {
	bg := context.WithoutCancel(ctx)
	log := e.d.Log.With("intent", r.intentID, "task", t.Slug)
	dir := e.d.Apps.WorkspaceDir(d.AppID)
	revBefore, err := headOf(dir, e.d.Now)
	if err != nil {
		log.Error("the workspace could not be read", "err", err)
		return "The workspace of " + d.AppID + " could not be read; the launcher's log has the detail."
	}
	lastAttempt, err := e.d.Backlog.LastAttemptNote(bg, t.ID)
	if err != nil {
		log.Error("the task's history could not be read", "err", err)
	}
	var attempts []verdict.Attempt
	turns := 0
	for {
		task, err := e.d.Backlog.Task(bg, t.ID)
		if err != nil {
			log.Error("the task could not be read", "err", err)
			return "The run could not read " + t.Slug + "; the launcher's log has the detail."
		}
		if ctx.Err() != nil {
			return stopCause(ctx)
		}
		turns++
		runID := fmt.Sprintf("intent-%d-%s-a%d", r.intentID, t.Slug, len(task.RunIDs)+1)

		// The model: a provider not turned on, or a model no longer
		// offered, fails the task without a turn.
		ref := task.RunsOn
		if ref == "" {
			ref = e.d.Models.DefaultModel()
		}
		ep, err := e.d.Models.Resolve(bg, ref)
		if err != nil {
			sentence := err.Error()
			var pe *provider.Error
			if errors.As(err, &pe) {
				sentence = pe.Message
			}
			if merr := e.d.Backlog.MoveTask(bg, t.ID, intent.TaskFailed, intent.Move{Reason: sentence, Actor: intent.ActorExecutor}); merr != nil {
				log.Error("the task could not be failed", "err", merr)
			}
			return t.Slug + " failed without a turn: " + sentence
		}
		if err := e.d.Backlog.MoveTask(bg, t.ID, intent.TaskInProgress, intent.Move{Reason: "its turn", RunID: runID, Actor: intent.ActorExecutor}); err != nil {
			log.Error("the task could not start", "err", err)
			return "The run could not start " + t.Slug + ": " + err.Error()
		}
		r.update(func(p *Progress) {
			*p = Progress{IntentID: r.intentID, TaskID: t.ID, Slug: t.Slug, Turn: len(task.RunIDs) + 1, RunID: runID,
				Started: e.d.Now(), Stage: "reading", Total: len(task.Criteria)}
		})

		out := e.turn(ctx, r, d, task, runID, ep, lastAttempt)
		switch {
		case out.question != "":
			if err := e.d.Backlog.MoveTask(bg, t.ID, intent.TaskNeedsAnswer, intent.Move{Reason: "the builder asked", RunID: runID,
				Actor: intent.ActorExecutor, Question: out.question}); err != nil {
				log.Error("the question could not be kept", "err", err)
			}
			return t.Slug + " needs an answer"
		case out.res.Ended == ai.EndProvider:
			log.Warn("the provider failed a builder's turn", "run", runID, "detail", providerDetail(out.res))
			note := "not an attempt: " + out.res.Sentence
			if err := e.d.Backlog.MoveTask(bg, t.ID, intent.TaskInterrupted, intent.Move{Reason: note, RunID: runID, Actor: intent.ActorExecutor}); err != nil {
				log.Error("the task could not be interrupted", "err", err)
			}
			if out.res.ToolCalledBeforeFailure {
				return "The AI provider returned an error while building " + t.Slug + ". Nothing was judged. The launcher's log has the detail."
			}
			return "The AI provider returned an error while building " + t.Slug + ", before the model did anything. Nothing was judged. The launcher's log has the detail."
		case out.res.Ended == ai.EndAborted || ctx.Err() != nil:
			cause := stopCause(ctx)
			if err := e.d.Backlog.MoveTask(bg, t.ID, intent.TaskInterrupted, intent.Move{Reason: cause, RunID: runID, Actor: intent.ActorExecutor}); err != nil {
				log.Error("the task could not be interrupted", "err", err)
			}
			return cause
		}

		// The verdict, from what the host observed.
		observed, err := e.d.Candidates.ObserveNow(bg, d.AppID)
		if err != nil {
			log.Error("the candidate could not be read", "err", err)
		}
		held, err := e.d.Backlog.CompletedExamples(bg, d.AppID)
		if err != nil {
			log.Error("the finished tasks' examples could not be read", "err", err)
		}
		v := verdict.Judge(verdict.Facts{Slug: t.Slug, Criteria: len(task.Criteria), RevBefore: revBefore, Observed: observed,
			EditedAfterBuild: out.record.EditedAfterBuild, CompletedExamples: held, Ending: out.res.Ended,
			EndingSentence: out.res.Sentence, NothingBuiltRefusals: builder.SummariseRefusals(out.record.Refused), HostBuilt: out.hostBuilt})
		r.update(func(p *Progress) { p.Passed, p.Total = v.Passed, v.Total })
		dec := verdict.Decide(attempts, turns, v)
		attempts = append(attempts, verdict.Attempt{Passed: v.Passed, Counted: dec.Counted})
		switch dec.Outcome {
		case verdict.Complete:
			c := &intent.Completion{RevAfter: observed.Head, ExampleHashes: v.ExampleHashes}
			if observed.Build != nil && observed.Build.Release != nil {
				c.ReleaseID = observed.Build.Release.ID
			}
			c.ActualLines = changedLines(dir, revBefore, observed.Head, e)
			reason := "completed"
			if v.HostBuilt {
				reason = hostBuilt
			}
			if err := e.d.Backlog.MoveTask(bg, t.ID, intent.TaskCompleted, intent.Move{Reason: reason, RunID: runID,
				Actor: intent.ActorExecutor, Completion: c}); err != nil {
				log.Error("the task could not be completed", "err", err)
				return "The run could not record that " + t.Slug + " completed: " + err.Error()
			}
			return ""
		case verdict.Retry:
			reasons := strings.Join(v.Reasons, " ")
			note := "another attempt: " + reasons
			if strings.Contains(dec.Note, "got further") {
				note = dec.Note + ". " + reasons
			}
			if err := e.d.Backlog.MoveTask(bg, t.ID, intent.TaskInQueue, intent.Move{Reason: note, RunID: runID, Actor: intent.ActorExecutor}); err != nil {
				log.Error("the task could not be queued again", "err", err)
				return "The run could not queue " + t.Slug + " again: " + err.Error()
			}
			lastAttempt = reasons
		default:
			reasons := strings.Join(v.Reasons, " ")
			if dec.Note != "" && !strings.Contains(reasons, dec.Note) {
				reasons = dec.Note + " " + reasons
			}
			if err := e.d.Backlog.MoveTask(bg, t.ID, intent.TaskFailed, intent.Move{Reason: reasons, RunID: runID, Actor: intent.ActorExecutor}); err != nil {
				log.Error("the task could not be failed", "err", err)
			}
			e.advise(bg, d, task, v.Reasons, out.record.Refused)
			return t.Slug + " failed."
		}
	}
}

// turnOutcome is what one builder turn left.
type turnOutcome struct {
	res       ai.Result
	record    builder.Record
	question  string
	hostBuilt bool
}

// turn runs one builder turn and, when it ended on its own with edits that
// nothing built, builds them once on the host.
func (e *Executor) turn(ctx context.Context, r *run, d intent.IntentDetail, task intent.TaskDetail, runID string,
	ep provider.Endpoint, lastAttempt string) turnOutcome {
	bg := context.WithoutCancel(ctx)
	var out turnOutcome
	passed := make([]bool, len(task.Criteria))
	for n := range passed {
		passed[n] = task.ExampleHashes[n+1] != ""
	}
	markdown := plan.Markdown(task.Task.Task, passed)
	questions := len(task.Answers)
	session, err := builder.NewSession(builder.Config{
		AppID: d.AppID, IntentID: d.ID, RunID: runID, Task: task.Task.Task,
		WorkspaceDir: e.d.Apps.WorkspaceDir(d.AppID), Candidates: e.d.Candidates,
		ManifestText: func() ([]byte, error) { raw, _, _, err := e.d.Apps.Manifest(d.AppID); return raw, err },
		PlanMarkdown: markdown,
		Ask: func(ctx context.Context, question string) (string, error) {
			if questions >= MaxQuestions {
				return "You asked about this task twice already: decide with what you have.", nil
			}
			questions++
			out.question = question
			return "", nil
		},
		Now: e.d.Now,
	})
	if err != nil {
		out.res = ai.Result{Ended: ai.EndProvider, Sentence: "The builder's tools could not be prepared: " + err.Error()}
		return out
	}
	defer session.Close()
	docs := e.documents(bg, d, task)
	turn := ai.Turn{
		Endpoint:     ai.Endpoint{Provider: ep.Provider, BaseURL: ep.BaseURL, APIKey: ep.APIKey, Model: ep.Model},
		Kind:         ai.KindBuilder,
		RunID:        runID,
		Instructions: builder.Instructions,
		Documents:    docs,
		Message:      builder.Message(d.AppID, task.Task.Task, markdown, task.Answers, lastAttempt),
		Tools:        session.Tools(),
		Limits:       e.d.Limits,
		Now:          e.d.Now,
		Log:          e.d.Log,
		OnUsage:      func(u ai.Usage) { r.update(func(p *Progress) { p.Usage = u }) },
		OnStep: func(c ai.Call) {
			// Refusals by the schema never reach a handler: the session hears of them here.
			session.Observe(c)
			r.update(func(p *Progress) {
				p.LastTool, p.Stage = c.Name, stageOf(c.Name)
				if !c.OK && len(c.Problems) > 0 {
					p.Refusal = c.Name + ": " + c.Problems[0].Field + ": " + c.Problems[0].Message
				}
			})
		},
	}
	// What the turn's tools do carries its identity: the knowledge's
	// cases and log rows are written with this run id, never one a model wrote.
	turnCtx := knowledge.WithIdentity(ctx, knowledge.Identity{RunID: runID, AppID: d.AppID})
	out.res = RunTurn(turnCtx, e.d.Backlog, d.AppID, turn)
	if err := RecordContext(ctx, e.d.Turns, d.AppID, task.Slug+": "+task.Title, turn, out.res); err != nil {
		e.d.Log.Error("the turn's context could not be kept", "run", runID, "err", err)
	}
	out.record = session.Record()
	if e.d.Distill != nil {
		e.d.Distill(bg)
	}
	if out.question == "" && out.record.Question != "" {
		out.question = out.record.Question
	}
	if out.res.Ended == ai.EndAnswered && out.question == "" && out.record.EditedAfterBuild && ctx.Err() == nil {
		r.update(func(p *Progress) { p.Stage, p.HostBuild = "building", true })
		e.d.Log.Info("the host builds what the turn left unbuilt", "run", runID, "request", runID+":host-build")
		hostCtx := knowledge.WithIdentity(bg, knowledge.Identity{RunID: runID, CallID: runID + ":host-build", AppID: d.AppID})
		if _, err := e.d.Candidates.Cycle(hostCtx, d.AppID, candidate.Change{Meta: workspace.CommitMeta{RunID: runID, CallID: runID + ":host-build"}}); err != nil {
			e.d.Log.Error("the host build failed to run", "run", runID, "err", err)
		} else {
			out.hostBuilt = true
			out.record.EditedAfterBuild = false
		}
	}
	return out
}

// documents are what a builder turn is given, in order: the orientation
// digest, the attempts document, the intent document and the evidence.
func (e *Executor) documents(ctx context.Context, d intent.IntentDetail, task intent.TaskDetail) []ai.Document {
	var docs []ai.Document
	_, m, _, _ := e.d.Apps.Manifest(d.AppID)
	if o, err := e.d.Candidates.Observe(ctx, d.AppID); err == nil {
		docs = append(docs, verdict.Orientation(d.AppID, o, m.Name))
	}
	if len(task.RunIDs) > 0 {
		docs = append(docs, e.attemptsDocument(ctx, d, task))
	}
	docs = append(docs, intentDocument(d))
	if ws, err := workspace.Open(e.d.Apps.WorkspaceDir(d.AppID), e.d.Now); err == nil {
		if ev, err := verdict.Evidence(ws, task.Task.Task, 0); err == nil {
			ev.Ref = "evidence:" + d.AppID
			docs = append(docs, ev)
		}
		ws.Close()
	}
	return docs
}

// attemptsDocument tells a retry what each earlier attempt did.
func (e *Executor) attemptsDocument(ctx context.Context, d intent.IntentDetail, task intent.TaskDetail) ai.Document {
	ends := map[string]string{}
	for _, ev := range task.Events {
		if ev.From == intent.TaskInProgress && ev.RunID != "" {
			ends[ev.RunID] = ev.Reason
		}
	}
	var earlier []verdict.AttemptRecord
	ws, err := workspace.Open(e.d.Apps.WorkspaceDir(d.AppID), e.d.Now)
	for _, id := range task.RunIDs {
		rec := verdict.AttemptRecord{RunID: id, Ended: ends[id], Interrupted: strings.HasPrefix(ends[id], "not an attempt") || ends[id] == StoppedByPerson || ends[id] == LauncherStopped}
		if err == nil {
			rec.Changed, _ = verdict.RunChanges(ws, id)
		}
		earlier = append(earlier, rec)
	}
	if err == nil {
		ws.Close()
	}
	doc := verdict.Attempts(task.Slug, earlier)
	doc.Ref = "attempts:" + d.AppID
	return doc
}

// intentDocument is intent:<appId> for this one intent.
func intentDocument(d intent.IntentDetail) ai.Document {
	in := plan.DocIntent{ID: d.ID, Status: string(d.Status), Request: d.Request, Questions: d.Questions}
	for _, t := range d.Tasks {
		status := string(t.Status)
		if t.Blocked {
			status = "blocked"
		}
		in.Tasks = append(in.Tasks, plan.DocTask{Slug: t.Slug, Status: status, Tier: t.Tier, Title: t.Title, Reason: t.Reason})
	}
	return ai.Document{Ref: "intent:" + d.AppID, Title: "The backlog for " + d.AppID, Text: plan.Document(d.AppID, []plan.DocIntent{in})}
}

// advise asks the main model one structured question about a failed task
// and keeps the answer; an answer that does not come stores nothing.
func (e *Executor) advise(ctx context.Context, d intent.IntentDetail, task intent.TaskDetail, reasons []string, refused []builder.Refused) {
	ref := e.d.Models.DefaultModel()
	if ref == "" {
		return
	}
	ep, err := e.d.Models.Resolve(ctx, ref)
	if err != nil {
		e.d.Log.Warn("no advice: the Settings model cannot be reached", "task", task.Slug, "err", err)
		return
	}
	var a verdict.Advice
	u, err := ai.Ask(ctx, ai.Endpoint{Provider: ep.Provider, BaseURL: ep.BaseURL, APIKey: ep.APIKey, Model: ep.Model},
		verdict.AdviceInstructions, verdict.AdviceMessage(task.Slug, task.Title, reasons, builder.SummariseRefusals(refused)),
		verdict.AdviceSchema, e.d.AdviceTimeout, &a)
	partial := err != nil
	if rerr := e.d.Backlog.RecordUsage(ctx, intent.Usage{Kind: intent.KindAdvice, RunID: fmt.Sprintf("intent-%d-%s-advice", d.ID, task.Slug),
		AppID: d.AppID, Model: ref, Input: u.Input, Output: u.Output, Partial: partial || u.Partial}); rerr != nil {
		e.d.Log.Error("usage row not written", "err", rerr)
	}
	if err != nil {
		e.d.Log.Warn("no advice", "task", task.Slug, "err", err)
		return
	}
	if err := e.d.Backlog.SetAdvice(ctx, task.ID, a.Text()); err != nil {
		e.d.Log.Error("the advice could not be kept", "task", task.Slug, "err", err)
	}
}

// changedLines counts the lines the task changed, from git diff --shortstat.
func changedLines(dir, from, to string, e *Executor) int {
	ws, err := workspace.Open(dir, e.d.Now)
	if err != nil {
		return 0
	}
	defer ws.Close()
	st, err := ws.ShortStat(from, to)
	if err != nil {
		return 0
	}
	return st.ChangedLines
}

func providerDetail(res ai.Result) string {
	if res.Err != nil {
		return res.Err.Detail()
	}
	return res.Sentence
}
