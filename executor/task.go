package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/ai/provider"
	"autoapp/executor/builder"
	"autoapp/executor/candidate"
	"autoapp/executor/verdict"
	"autoapp/intent"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
	"autoapp/intent/spend"
	"autoapp/intent/workspace"
	"autoapp/knowledge"
	"autoapp/knowledge/origin"
)

// hostBuilt is what a task completed on the host's own build says.
const hostBuilt = "completed after the host built what the turn left unbuilt"

// notAnAttempt begins the reason of a move that was not an attempt (a
// turn the provider killed, one that could not start, one that ended
// before the model did anything): it is counted nowhere and the attempts
// document leaves it out.
const notAnAttempt = "not an attempt: "

// runTask runs one task's turns until it completes, fails, or the run
// must stop; it returns the reason to stop the intent with, or "" to go on.
func (e *Executor) runTask(ctx context.Context, r *run, d intent.IntentDetail, t intent.BacklogTask) string {
	bg := context.WithoutCancel(ctx)
	log := e.d.Log.With("intent", r.intentID, "task", t.Slug)
	revBefore, err := headOf(bg, r.ws)
	if err != nil {
		log.Error("the workspace could not be read", "err", err)
		return "The workspace of " + d.AppID + " could not be read; the launcher's log has the detail."
	}
	// Every run of the task is judged from before its first turn: an
	// attempt that only builds what an earlier run edited counts.
	if first, err := e.d.Backlog.Task(bg, t.ID); err == nil && first.RevBefore != "" {
		revBefore = first.RevBefore
	}
	lastAttempt, err := e.d.Backlog.LastAttemptNote(bg, t.ID)
	if err != nil {
		log.Error("the task's history could not be read", "err", err)
	}
	var attempts []verdict.Attempt
	var beforeRefused []builder.Refused
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
		// A safe boundary between a retry's verdict and its next turn (the
		// run's loop has one before the first).
		if turns > 0 && e.boundary(bg, r) {
			return ""
		}
		turns++
		runID := fmt.Sprintf("intent-%d-%s-a%d", r.intentID, t.Slug, len(task.RunIDs)+1)

		// The model: a provider not turned on, or a model no longer
		// offered, fails the task without a turn. A provider that cannot
		// be reached now stops the run and fails nothing: it is not an
		// attempt, and Run tries again once it answers.
		ref, _ := task.RunsOnWith(e.d.Models.DefaultModel())
		ep, err := e.d.Models.Resolve(bg, ref)
		if err != nil {
			sentence := "Its model could not be found; the launcher's log has the detail."
			var pe *refusal.Error
			if errors.As(err, &pe) {
				sentence = pe.Message
				if pe.Code == refusal.Unavailable {
					log.Warn("the task's provider could not be asked for its models", "model", ref, "err", err)
					return sentence + " " + t.Slug + " was not built; nothing was judged. Run again once the provider answers."
				}
			} else {
				log.Error("the task's model could not be resolved", "model", ref, "err", err)
			}
			if merr := e.d.Backlog.MoveTask(bg, t.ID, intent.TaskFailed, intent.Move{Reason: sentence, Actor: intent.ActorExecutor}); merr != nil {
				log.Error("the task could not be failed", "err", merr)
			}
			return t.Slug + " failed without a turn: " + sentence
		}
		if err := e.d.Backlog.MoveTask(bg, t.ID, intent.TaskInProgress, intent.Move{Reason: "its turn", RunID: runID, Actor: intent.ActorExecutor,
			RevBefore: revBefore}); err != nil {
			log.Error("the task could not start", "err", err)
			return "The run could not start " + t.Slug + "; the launcher's log has the detail."
		}
		r.update(func(p *Progress) {
			*p = Progress{IntentID: r.intentID, TaskID: t.ID, Slug: t.Slug, Turn: turns, Counted: countedOf(attempts), RunID: runID,
				Started: e.d.Now(), Stage: "reading", Total: len(task.Criteria), LastEnded: lastAttempt}
		})

		// Every row the attempt writes carries its run, its call, the
		// application and where the application stands, moved on by the
		// turn's edits and builds: the rows of its verdict are <runId>:verdict.
		pos := PositionAt(bg, e.d.Candidates, e.d.Apps, d.AppID, r.ws)
		vctx := attemptContext(bg, runID, d.AppID, VerdictCall, pos)
		// The attempt's knowledge, every row of it, is its record's.
		rec := e.record(runID, d.AppID, task.Slug+": "+task.Title, ModelRef(endpointOf(ep)))
		out := e.turn(ctx, r, d, task, runID, revBefore, ep, lastAttempt, pos, rec)
		switch {
		case out.question != "":
			if err := e.d.Backlog.MoveTask(bg, t.ID, intent.TaskNeedsAnswer, intent.Move{Reason: "the builder asked", RunID: runID,
				Actor: intent.ActorExecutor, Question: out.question, Outcome: intent.OutcomeAsked}); err != nil {
				log.ErrorContext(vctx, "the question could not be kept", "err", err)
			}
			return t.Slug + " needs an answer"
		case out.res.Ended == ai.EndProvider:
			log.WarnContext(vctx, "the provider failed a builder's turn", "run", runID, "detail", providerDetail(out.res))
			note := notAnAttempt + out.res.Sentence
			if err := e.d.Backlog.MoveTask(bg, t.ID, intent.TaskInterrupted, intent.Move{Reason: note, RunID: runID, Actor: intent.ActorExecutor,
				Outcome: intent.OutcomeNotAnAttempt}); err != nil {
				log.ErrorContext(vctx, "the task could not be interrupted", "err", err)
			}
			switch {
			case out.res.Err == nil:
				// The host failed before the provider was asked.
				return out.res.Sentence + " " + t.Slug + " was not built; nothing was judged."
			case out.res.Err.Kind == ai.ProviderContext:
				return t.Slug + " could not be built: " + out.res.Sentence + " Nothing was judged; choose a model with a larger window, or set its window in Settings."
			case out.res.ToolCalledBeforeFailure:
				return "The AI provider returned an error while building " + t.Slug + ". Nothing was judged. The launcher's log has the detail."
			}
			return "The AI provider returned an error while building " + t.Slug + ", before the model did anything. Nothing was judged. The launcher's log has the detail."
		case out.res.Ended == ai.EndCap:
			// A cap ended the turn before the model finished: nothing was
			// judged, and the intent waits for the owner to raise the cap.
			log.InfoContext(vctx, "a cap ended the turn", "run", runID, "cap", out.res.Sentence)
			if err := e.d.Backlog.MoveTask(bg, t.ID, intent.TaskInterrupted, intent.Move{Reason: notAnAttempt + out.res.Sentence, RunID: runID,
				Actor: intent.ActorExecutor, Outcome: intent.OutcomeNotAnAttempt}); err != nil {
				log.ErrorContext(vctx, "the task could not be interrupted", "err", err)
			}
			return out.res.Sentence
		case out.res.Ended == ai.EndAborted || ctx.Err() != nil:
			cause := stopCause(ctx)
			if err := e.d.Backlog.MoveTask(bg, t.ID, intent.TaskInterrupted, intent.Move{Reason: cause, RunID: runID, Actor: intent.ActorExecutor,
				Outcome: intent.OutcomeStopped}); err != nil {
				log.ErrorContext(vctx, "the task could not be interrupted", "err", err)
			}
			return cause
		}

		// The verdict, from what the host observed.
		observed, err := e.d.Candidates.ObserveNow(bg, d.AppID)
		if err != nil {
			log.ErrorContext(vctx, "the candidate could not be read", "err", err)
		}
		pos.Committed(observed.Head)
		held, err := e.d.Backlog.CompletedExamples(bg, d.AppID)
		if err != nil {
			log.ErrorContext(vctx, "the finished tasks' examples could not be read", "err", err)
		}
		v := verdict.Judge(verdict.Facts{Slug: t.Slug, Criteria: len(task.Criteria), RevBefore: revBefore, Observed: observed,
			EditedAfterBuild: out.record.EditedAfterBuild, CompletedExamples: held, Ending: out.res.Ended,
			EndingSentence: out.res.Sentence, NothingBuiltRefusals: builder.SummariseRefusals(out.record.Refused), HostBuilt: out.hostBuilt})
		r.update(func(p *Progress) { p.Passed, p.Total = v.Passed, v.Total })
		rec.Attempt(vctx, observed, out.record)
		dec := verdict.Decide(attempts, turns, v)
		attempts = append(attempts, verdict.Attempt{Passed: v.Passed, Counted: dec.Counted})
		// The advice hears what the tools refused in the last attempt and
		// the one before.
		refused := append(slices.Clone(beforeRefused), out.record.Refused...)
		beforeRefused = out.record.Refused
		switch dec.Outcome {
		case verdict.Complete:
			c := &intent.Completion{RevAfter: observed.Head, ExampleHashes: v.ExampleHashes}
			if observed.Build != nil && observed.Build.Release != nil {
				c.ReleaseID = observed.Build.Release.ID
			}
			c.ActualLines = changedLines(bg, r.ws, revBefore, observed.Head)
			reason := "completed"
			if v.HostBuilt {
				reason = hostBuilt
			}
			if err := e.d.Backlog.MoveTask(bg, t.ID, intent.TaskCompleted, intent.Move{Reason: reason, RunID: runID,
				Actor: intent.ActorExecutor, Completion: c, Outcome: intent.OutcomeCompleted}); err != nil {
				log.ErrorContext(vctx, "the task could not be completed", "err", err)
				return "The run could not record that " + t.Slug + " completed; the launcher's log has the detail."
			}
			log.InfoContext(vctx, "the task completed", "run", runID, "app", d.AppID)
			return ""
		case verdict.Retry:
			reasons := strings.Join(v.Reasons, " ")
			note, outcome := "another attempt: "+reasons, intent.OutcomeRetry
			if !dec.Counted {
				note, outcome = dec.Note+". "+reasons, intent.OutcomeFurther
			}
			if err := e.d.Backlog.MoveTask(bg, t.ID, intent.TaskInQueue, intent.Move{Reason: note, RunID: runID, Actor: intent.ActorExecutor,
				Outcome: outcome}); err != nil {
				log.ErrorContext(vctx, "the task could not be queued again", "err", err)
				return "The run could not queue " + t.Slug + " again; the launcher's log has the detail."
			}
			lastAttempt = reasons
		default:
			reasons := strings.Join(v.Reasons, " ")
			if dec.Note != "" && !strings.Contains(reasons, dec.Note) {
				reasons = dec.Note + " " + reasons
			}
			if err := e.d.Backlog.MoveTask(bg, t.ID, intent.TaskFailed, intent.Move{Reason: reasons, RunID: runID, Actor: intent.ActorExecutor,
				Outcome: intent.OutcomeFailed}); err != nil {
				log.ErrorContext(vctx, "the task could not be failed", "err", err)
			} else {
				log.WarnContext(vctx, "the task failed", "run", runID, "app", d.AppID, "reason", reasons)
			}
			// The advice is asked on the run's context: Stop cuts it.
			e.advise(ctx, d, task, runID, v.Reasons, refused, pos, rec)
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
	message   string
	offered   []ai.Document
}

// turn runs one builder turn and, when it ended on its own with edits that
// nothing built, builds them once on the host. Its commits count the
// task's change from revBefore, when given.
func (e *Executor) turn(ctx context.Context, r *run, d intent.IntentDetail, task intent.TaskDetail, runID, revBefore string,
	ep provider.Endpoint, lastAttempt string, pos *origin.Position, rec *TurnRecord) turnOutcome {
	// What the turn and its tools write carries its identity, never one a
	// model wrote: its run, its calls (the run loop names each), the
	// application and where the application stands as each row is written.
	// The turn's own rows, outside its tool calls, are <runId>:turn.
	turnCtx := attemptContext(ctx, runID, d.AppID, ai.TurnCall, pos)
	bg := context.WithoutCancel(turnCtx)
	var out turnOutcome
	markdown := plan.Markdown(task.Task.Task, task.Passed())
	questions := len(task.Answers)
	cfg := builder.Config{
		AppID: d.AppID, IntentID: d.ID, RunID: runID, RevBefore: revBefore, Task: task.Task.Task, Position: pos,
		Workspace: r.ws, Candidates: e.d.Candidates, Observer: rec, Edited: rec.Edited, Hinted: rec.Hinted,
		ManifestText: func() ([]byte, error) { raw, _, _, err := e.d.Apps.Manifest(d.AppID); return raw, err },
		PlanMarkdown: markdown,
		Ask: func(ctx context.Context, question string) (string, error) {
			if r.answer != "" {
				return r.answer, nil
			}
			if questions >= MaxQuestions {
				return "You asked about this task twice already: decide with what you have.", nil
			}
			questions++
			out.question = question
			return "", nil
		},
		Now: e.d.Now,
	}
	if e.d.Lessons != nil {
		cfg.Lessons = e.d.Lessons
		// *knowledge.Lessons finds hints too; a LessonBook that cannot
		// gives none.
		if h, ok := e.d.Lessons.(builder.HintGetter); ok {
			cfg.Hints = h
		}
	}
	session, err := builder.NewSession(cfg)
	if err != nil {
		e.d.Log.ErrorContext(bg, "the builder's tools could not be prepared", "run", runID, "err", err)
		out.res = ai.Result{Ended: ai.EndProvider, Sentence: "The builder's tools could not be prepared; the launcher's log has the detail."}
		return out
	}
	defer session.Close()
	briefing := e.documents(bg, r, d, task)
	turn := ai.Turn{
		Endpoint:     endpointOf(ep),
		Kind:         ai.KindBuilder,
		RunID:        runID,
		Instructions: builder.Instructions,
		Documents:    briefing.Documents,
		Message:      builder.Message(d.AppID, task.Task.Task, markdown, task.Answers, lastAttempt),
		Tools:        session.Tools(),
		Limits:       e.d.Limits(),
		Now:          e.d.Now,
		Log:          e.d.Log,
		OnUsage:      func(u ai.Usage) { r.update(func(p *Progress) { p.Usage = u }) },
		Cap: CapOf(turnCtx, e.d.Caps, spend.Ask{IntentID: d.ID, RunID: runID, AppID: d.AppID, Kind: intent.KindBuilder,
			Model: ModelRef(endpointOf(ep))}, e.d.Log),
		OnProgress: func(m ai.Progress) { r.update(func(p *Progress) { p.Model = m }) },
		OnStep: func(c ai.Call) {
			// Refusals by the schema never reach a handler: the session hears of them here.
			session.Observe(c)
			// A cycle's checks say at once how many criteria pass now, not
			// only when the verdict is taken after the turn.
			passing, checked := criteriaPassing(task, session.Record().LastCycle)
			r.update(func(p *Progress) {
				if checked && c.Name == "candidate.cycle" {
					p.Passed = passing
				}
				p.LastTool, p.Stage = c.Name, stageOf(c.Name)
				if !c.OK && len(c.Problems) > 0 {
					p.Refusal = c.Name + ": " + c.Problems[0].Field + ": " + c.Problems[0].Message
				}
			})
			if r.heard != nil {
				r.heard(c)
			}
		},
	}
	if r.message != "" {
		turn.History, turn.Message = r.history, r.message
	}
	out.message, out.offered = turn.Message, turn.Documents
	// The cases the turn's tools open record the request, the model and the
	// turn's contexts row, written as soon as its documents are delivered.
	briefing.TellWhy(turnCtx, &turn, e.d.Log)
	rec.KeepAtDelivery(turnCtx, &turn)
	out.res = RunTurn(turnCtx, e.d.Usage, d.AppID, turn)
	// The row kept at delivery is answered again (one row a turn); a turn
	// that ended before its documents were delivered gets it here.
	rec.Context(turnCtx, turn, out.res)
	// Only now does the turn say what it delivered; its builds so far were
	// heard by the servings and close what is recorded here as included. A
	// lesson the budget cut is kept, never scored.
	rec.Served(bg, briefing.Served(out.res.Documents), briefing.Cut(out.res.Documents))
	defer rec.EndServings(bg)
	out.record = session.Record()
	if e.d.Distill != nil {
		// On the run's context: Stop cuts a question in flight, and a
		// question not answered is asked again after a later turn.
		e.d.Distill(ctx)
	}
	if out.question == "" && out.record.Question != "" {
		out.question = out.record.Question
	}
	if out.res.Ended == ai.EndAnswered && out.question == "" && out.record.EditedAfterBuild && ctx.Err() == nil {
		r.update(func(p *Progress) { p.Stage, p.HostBuild = "building", true })
		// On the run's context: Stop cuts the host's build too.
		hostCtx := attemptContext(ctx, runID, d.AppID, HostBuildCall, pos)
		e.d.Log.InfoContext(hostCtx, "the host builds what the turn left unbuilt", "run", runID, "request", runID+":"+HostBuildCall)
		if _, err := e.d.Candidates.Cycle(hostCtx, d.AppID, candidate.Change{Meta: workspace.CommitMeta{RunID: runID, CallID: runID + ":" + HostBuildCall},
			By: candidate.By{Position: pos, Workspace: r.ws, Observer: rec}}); err != nil {
			e.d.Log.ErrorContext(hostCtx, "the host build failed to run", "run", runID, "err", err)
		} else {
			out.hostBuilt = true
			out.record.EditedAfterBuild = false
		}
	}
	return out
}

// documents are what a builder turn is given, in order: the orientation
// digest, the attempts document, the intent document, the task evidence and
// the lessons. The AI layer cuts from the end when the budget is short, so
// the attempts document, worth most to a retry, sits second. given, when
// set, says which (a turn run on its own, as an evaluation's conditions);
// otherwise task-context.json can leave out the attempts document and the
// lessons.
func (e *Executor) documents(ctx context.Context, r *run, d intent.IntentDetail, task intent.TaskDetail) Briefing {
	var b Briefing
	src := e.sources(r.ws)
	tc := readTaskContext(e.d.TaskContext)
	if r.given != nil {
		tc = *r.given
	}
	if tc.Orientation {
		if doc, ok := src.Orientation(ctx, d.AppID); ok {
			b.Add(doc, WhyApplication)
		}
	}
	if len(task.RunIDs) > 0 && tc.Attempts {
		b.Add(e.attemptsDocument(ctx, r.ws, d, task), WhyAttempts)
	}
	if tc.Intent {
		b.Add(intentDocument(d), WhyBacklog)
	}
	if tc.Evidence {
		if doc, ok := src.Evidence(ctx, d.AppID, task.Task.Task); ok {
			b.Add(doc, WhyApplication)
		}
	}
	if tc.Lessons {
		b.addLessons(src.lessons(ctx, d.AppID, task.Slug, e.lessonQuery(ctx, r.ws, d, task, tc.Related)))
	}
	return b
}

// sources are where the executor's turns read their documents from.
func (e *Executor) sources(ws *workspace.Workspace) Sources {
	return Sources{Apps: e.d.Apps, Candidates: e.d.Candidates, Lessons: e.d.Lessons, Log: e.d.Log, Workspace: ws}
}

// TaskContextFile is the file in the launcher's folder that turns parts
// of a builder turn's context off, read for every turn:
// {"attempts": false} leaves out the attempts document, {"related": false}
// the lessons related by file, {"lessons": false} every lesson. A missing
// or unreadable file, or a field that is not false, means on.
const TaskContextFile = "task-context.json"

// TurnDocuments says which documents a builder turn is given: the
// orientation digest, the attempts document (for a task with earlier
// runs), the intent document, the lessons (and among them those related by
// file) and the task's evidence. task-context.json turns off the attempts,
// the related lessons and the lessons; a turn run on its own may say all
// of it (BuilderTurn.Documents).
type TurnDocuments struct {
	Orientation, Attempts, Intent, Lessons, Related, Evidence bool
}

// AllDocuments gives a builder turn every document, as a run does with no
// task-context.json.
var AllDocuments = TurnDocuments{Orientation: true, Attempts: true, Intent: true, Lessons: true, Related: true, Evidence: true}

func readTaskContext(path string) TurnDocuments {
	tc := AllDocuments
	if path == "" {
		return tc
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return tc
	}
	var file map[string]any
	if json.Unmarshal(b, &file) != nil {
		return tc
	}
	off := func(key string) bool { v, ok := file[key].(bool); return ok && !v }
	tc.Attempts = !off("attempts")
	tc.Related = !off("related")
	tc.Lessons = !off("lessons")
	return tc
}

// lessonsDocument is the lessons:<appId> document and the lessons it
// gives, with where each one's line ends in its text (in characters), so
// that a lesson whose line the budget cut is not counted as served.
type lessonsDocument struct {
	doc    ai.Document
	served []knowledge.Served
	ends   []int
}

// lessonsPreamble opens the lessons document.
const lessonsPreamble = "Lessons from earlier work in this launcher, each with its id. They are what a person or the host learned from earlier failures: " +
	"a provisional one is not yet confirmed by a person. knowledge.show with a lesson's id reads it in full.\n"

// lessonQuery is what a task's lessons are matched on: its own words
// (title, summary, criteria, never the builder's fixed sentences), with
// lessons about the build stage its labels point at first, and, when
// related is on, the files it locks or an earlier attempt changed.
func (e *Executor) lessonQuery(ctx context.Context, ws *workspace.Workspace, d intent.IntentDetail, task intent.TaskDetail, related bool) knowledge.MatchQuery {
	words := []string{task.Title, task.Summary}
	for _, c := range task.Criteria {
		words = append(words, c.Text)
	}
	q := knowledge.MatchQuery{AppID: d.AppID, Words: strings.Join(words, "\n")}
	if _, m, _, err := e.d.Apps.Manifest(d.AppID); err == nil {
		q.Stage = stageForLabels(task.Labels, m.Build)
	}
	if related {
		q.Files = append(q.Files, task.Locks...)
		if len(task.RunIDs) > 0 && ws != nil {
			for _, id := range task.RunIDs {
				changed, _ := verdict.RunChanges(ctx, ws, id)
				q.Files = append(q.Files, changed...)
			}
		}
	}
	return q
}

// delivered are the lessons whose whole line reached the model, by what
// the turn reported of the document.
func (l lessonsDocument) delivered(docs []ai.DeliveredDocument) []knowledge.Served {
	if len(l.served) == 0 {
		return nil
	}
	for _, doc := range docs {
		if doc.Ref != l.doc.Ref {
			continue
		}
		var out []knowledge.Served
		for i, sv := range l.served {
			if doc.Delivery == ai.DeliveredWhole || (doc.Delivery == ai.DeliveredCut && l.ends[i] <= doc.Delivered) {
				out = append(out, sv)
			}
		}
		return out
	}
	return nil
}

// cut are the lessons of the document whose line the budget cut, or all of
// them when it dropped the document, by what the turn reported; none when
// the turn reported nothing of it.
func (l lessonsDocument) cut(docs []ai.DeliveredDocument) []knowledge.Served {
	i := slices.IndexFunc(docs, func(d ai.DeliveredDocument) bool { return d.Ref == l.doc.Ref })
	if len(l.served) == 0 || i < 0 {
		return nil
	}
	reached := map[int64]bool{}
	for _, sv := range l.delivered(docs[i : i+1]) {
		reached[sv.Lesson.ID] = true
	}
	var out []knowledge.Served
	for _, sv := range l.served {
		if !reached[sv.Lesson.ID] {
			out = append(out, sv)
		}
	}
	return out
}

// hintBook records the hints a failed build's answer gave a turn
// (*knowledge.Servings).
type hintBook interface {
	RecordHints(ctx context.Context, runID string, hints []knowledge.Served) error
}

// attemptsDocument tells a retry what each earlier attempt did. A move
// marked not an attempt is left out entirely; one the person or the
// launcher stopped says it stopped before it finished.
func (e *Executor) attemptsDocument(ctx context.Context, ws *workspace.Workspace, d intent.IntentDetail, task intent.TaskDetail) ai.Document {
	ends := map[string]intent.TaskEvent{}
	for _, ev := range task.Events {
		if ev.From == intent.TaskInProgress && ev.RunID != "" {
			ends[ev.RunID] = ev
		}
	}
	var facts map[string]knowledge.AttemptFacts
	if e.d.Books.Attempts != nil {
		var err error
		if facts, err = e.d.Books.Attempts.AttemptFacts(ctx, task.RunIDs); err != nil {
			e.d.Log.ErrorContext(ctx, "what the earlier attempts left could not be read", "task", task.Slug, "err", err)
		}
	}
	var earlier []verdict.AttemptRecord
	for _, id := range task.RunIDs {
		end := ends[id]
		if end.Outcome == intent.OutcomeNotAnAttempt {
			continue
		}
		f := facts[id]
		rec := verdict.AttemptRecord{RunID: id, Ended: end.Reason, Interrupted: end.Outcome == intent.OutcomeStopped,
			StillWrong: f.StillWrong, Reads: f.Reads, Refused: f.Refused, Diagnosis: f.Diagnosis}
		if ws != nil {
			rec.Changed, _ = verdict.RunChanges(ctx, ws, id)
		}
		earlier = append(earlier, rec)
	}
	doc := verdict.Attempts(task.Slug, earlier)
	doc.Ref = "attempts:" + d.AppID
	return doc
}

// attemptFacts are what an attempt left for the next attempt's document:
// what was still wrong as it ended, what it read and what its tools
// refused.
func attemptFacts(observed candidate.Observed, rec builder.Record) knowledge.AttemptFacts {
	f := knowledge.AttemptFacts{StillWrong: verdict.StillWrong(observed), Reads: rec.Reads}
	for _, r := range rec.Refused {
		s := r.Tool + " was refused"
		if len(r.Problems) > 0 {
			p := r.Problems[0]
			s += ": " + strings.TrimPrefix(p.Field+": ", ": ") + p.Message
		}
		f.Refused = append(f.Refused, s)
	}
	return f
}

// record is the knowledge of the turn runID at appID, working on request
// with model: every row the turn writes there is its record's.
func (e *Executor) record(runID, appID, request, model string) *TurnRecord {
	books := e.d.Books
	if books.Log == nil {
		books.Log = e.d.Log
	}
	return NewTurnRecord(books, runID, appID, request, model)
}

// endpointOf is the AI layer's endpoint for the provider's.
func endpointOf(ep provider.Endpoint) ai.Endpoint {
	return ai.Endpoint{Provider: ep.Provider, BaseURL: ep.BaseURL, APIKey: ep.APIKey, Model: ep.Model, ContextTokens: ep.ContextTokens, NoTextCalls: ep.NoTextCalls}
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
// and keeps the answer; an answer that does not come stores nothing. Its
// rows are the attempt's, named <runId>:advice.
func (e *Executor) advise(ctx context.Context, d intent.IntentDetail, task intent.TaskDetail, runID string, reasons []string, refused []builder.Refused,
	pos *origin.Position, rec *TurnRecord) {
	ref := e.d.Models.DefaultModel()
	if ref == "" {
		return
	}
	actx := attemptContext(ctx, runID, d.AppID, AdviceCall, pos)
	ep, err := e.d.Models.Resolve(ctx, ref)
	if err != nil {
		e.d.Log.WarnContext(actx, "no advice: the Settings model cannot be reached", "task", task.Slug, "err", err)
		return
	}
	bg := context.WithoutCancel(actx)
	message := verdict.AdviceMessage(task.Slug, task.Title, reasons, builder.SummariseRefusals(refused))
	adviceRun := fmt.Sprintf("intent-%d-%s-advice", d.ID, task.Slug)
	if capped := CheckCaps(bg, e.d.Caps, spend.Ask{IntentID: d.ID, RunID: adviceRun, AppID: d.AppID, Kind: intent.KindAdvice, Model: ref,
		Input: int64(len(verdict.AdviceInstructions)+len(message)) / 3}, e.d.Log); capped != "" {
		e.d.Log.InfoContext(bg, "no advice: a cap is reached", "task", task.Slug, "cap", capped)
		return
	}
	var a verdict.Advice
	u, err := ai.Ask(ctx, e.d.Now, endpointOf(ep),
		verdict.AdviceInstructions, message, verdict.AdviceSchema, e.adviceTimeout(), &a)
	partial := err != nil
	if rerr := e.d.Usage.RecordUsage(bg, intent.Usage{Kind: intent.KindAdvice, RunID: adviceRun,
		AppID: d.AppID, Model: ref, Input: u.Input, Output: u.Output, Partial: partial || u.Partial}); rerr != nil {
		e.d.Log.ErrorContext(bg, "usage row not written", "err", rerr)
	}
	if err != nil {
		e.d.Log.WarnContext(bg, "no advice", "task", task.Slug, "err", err)
		return
	}
	if err := e.d.Backlog.SetAdvice(bg, task.ID, a.Text()); err != nil {
		e.d.Log.ErrorContext(bg, "the advice could not be kept", "task", task.Slug, "err", err)
	} else {
		e.d.Log.InfoContext(bg, "the planning model advised", "run", runID, "app", d.AppID, "task", task.Slug, "advice", a.Advice)
	}
	rec.Diagnosis(bg, a.Diagnosis)
}

// changedLines counts the lines the task changed, from git diff --shortstat.
func changedLines(ctx context.Context, ws *workspace.Workspace, from, to string) int {
	if ws == nil {
		return 0
	}
	st, err := ws.ShortStat(ctx, from, to)
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

// adviceTimeout bounds the planning model's answer about a failed task: the
// idle limit in force, since a structured question makes no tool call.
func (e *Executor) adviceTimeout() time.Duration {
	if e.d.AdviceTimeout > 0 {
		return e.d.AdviceTimeout
	}
	return e.d.Limits().WithDefaults().Idle
}

// countedOf is how many of this run's attempts counted.
func countedOf(attempts []verdict.Attempt) int {
	n := 0
	for _, a := range attempts {
		if a.Counted {
			n++
		}
	}
	return n
}

// criteriaPassing is how many of the task's criteria have a passing
// example in the cycle's checks, and false when the cycle ran none.
func criteriaPassing(task intent.TaskDetail, cycle *candidate.Result) (int, bool) {
	if cycle == nil || cycle.Checks == nil {
		return 0, false
	}
	passed := map[string]bool{}
	for _, r := range cycle.Checks.Results {
		passed[r.ID] = r.Passed
	}
	n := 0
	for i := range task.Criteria {
		if passed[plan.ExampleID(task.Slug, i+1)] {
			n++
		}
	}
	return n, true
}
