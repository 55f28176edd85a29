package executor

import (
	"context"

	"autoapp/executor/ai"
	"autoapp/executor/ai/provider"
	"autoapp/executor/builder"
	"autoapp/intent"
	"autoapp/intent/workspace"
)

// BuilderTurn is one builder turn run on its own, outside any intent's
// run: a replay's run and an evaluation's (executor/replay). It is
// the turn a backlog run gives a task — the same documents, tools, limits,
// sandbox and standing answer (edits, builds and previews yes; there is no
// activation tool) — over the executor's own Apps, Candidates and stores.
// Nothing of the intent or the task is moved and no attempt is counted:
// the caller judges what the turn left.
type BuilderTurn struct {
	Intent intent.IntentDetail
	// Task is the task as the turn is to see it: its plan, the person's
	// answers it is given, and the runs before it (none gives no attempts
	// document).
	Task intent.TaskDetail
	// RunID names the turn; its commits, cases and log rows carry it.
	RunID    string
	Endpoint provider.Endpoint
	// LastAttempt is how the attempt before ended, as the message tells
	// it; "" for none.
	LastAttempt string
	// Answer, when set, is what the builder is told when it asks the person
	// something (intent.ask refuses with it) while the turn goes on; "" ends
	// the turn at a question as a run does.
	Answer string
	// Documents, when set, says which documents the turn is given, in
	// place of task-context.json: an evaluation's condition.
	Documents *TurnDocuments
	// History and Message, when Message is set, are what the turn is told
	// in place of the task's message: an evaluation's second turn, given
	// the first's request and what it said (or did) before "continue".
	History []ai.Message
	Message string
	// OnStep, when set, hears of each tool call as it completes, after
	// the turn's own record has: an evaluation stops a turn there.
	OnStep func(ai.Call)
}

// BuilderOutcome is what a builder turn left.
type BuilderOutcome struct {
	Result ai.Result
	Record builder.Record
	// Question is what the turn asked the person, when it ended at one.
	Question string
	// HostBuilt says the host built what the turn left unbuilt.
	HostBuilt bool
	// Message is the message the turn was given; Offered the documents it
	// was offered, in order, of which Result.Documents says how much each
	// was delivered.
	Message string
	Offered []ai.Document
}

// RunBuilderTurn runs t and returns when it ended, as the turn of a run
// does: cancelling ctx stops it (the result says aborted).
func (e *Executor) RunBuilderTurn(ctx context.Context, t BuilderTurn) BuilderOutcome {
	r := &run{intentID: t.Intent.ID, appID: t.Intent.AppID, done: make(chan struct{}), answer: t.Answer, given: t.Documents,
		history: t.History, message: t.Message, heard: t.OnStep}
	r.progress = Progress{IntentID: t.Intent.ID, TaskID: t.Task.ID, Slug: t.Task.Slug, Turn: 1, RunID: t.RunID,
		Started: e.d.Now(), Stage: "reading", Total: len(t.Task.Criteria), LastEnded: t.LastAttempt}
	// The turn's workspace, opened once, as a run's is.
	if ws, err := workspace.Open(e.d.Apps.WorkspaceDir(t.Intent.AppID), e.d.Now); err == nil {
		r.ws = ws
		defer ws.Close()
	}
	pos := PositionAt(context.WithoutCancel(ctx), e.d.Candidates, e.d.Apps, t.Intent.AppID, r.ws)
	rec := e.record(t.RunID, t.Intent.AppID, t.Task.Slug+": "+t.Task.Title, ModelRef(endpointOf(t.Endpoint)))
	out := e.turn(ctx, r, t.Intent, t.Task, t.RunID, "", t.Endpoint, t.LastAttempt, pos, rec)
	return BuilderOutcome{Result: out.res, Record: out.record, Question: out.question, HostBuilt: out.hostBuilt, Message: out.message, Offered: out.offered}
}
