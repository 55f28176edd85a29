// Package mcpserver offers the launcher to editors and agents as tools of
// the Model Context Protocol, with the official Go SDK: the applications,
// the intents with their tasks, verdicts and deliveries, a run's log, and
// the owner's acts the pages offer — a request to the engineer, an answer
// to a builder's question, feedback or a pause, and, only when the owner
// allows it, Approve and Run.
//
// Each tool is a handler as the pages' are: its input arrives checked
// against the schema the client was shown (a refusal is one sentence, a
// field at a time), it calls one service method, and it answers JSON. The
// rules and the refusals are the services'; every act is the owner's,
// journalled as coming from MCP (intent.ViaMCP). It knows nothing of
// where the services run: the cmd wires the stores it reads, the ones it
// writes and the running server it asks.
package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/delivery"
	"autoapp/intent/request"
	"autoapp/knowledge"
)

// Apps reads the applications.
type Apps interface {
	List(ctx context.Context) ([]app.App, error)
	Get(ctx context.Context, id string) (app.App, error)
}

// Backlog reads the intents.
type Backlog interface {
	List(ctx context.Context, appID string) ([]intent.IntentSummary, error)
	Get(ctx context.Context, intentID int64) (intent.IntentDetail, error)
}

// Requests reads the request an intent answers.
type Requests interface {
	ForIntent(ctx context.Context, intentID int64) (request.State, error)
}

// Deliveries reads what a done intent handed over.
type Deliveries interface {
	Get(ctx context.Context, intentID int64) (delivery.Delivery, error)
}

// RunLog reads the knowledge log.
type RunLog interface {
	Log(ctx context.Context, q knowledge.LogQuery) ([]knowledge.Event, error)
}

// Inbox takes feedback and pauses for a running intent.
type Inbox interface {
	SubmitIntervention(ctx context.Context, intentID int64, requestID string, kind intent.InterventionKind, text string) (intent.Receipt, bool, error)
}

// Answers takes the owner's answer to a builder's question.
type Answers interface {
	AnswerTask(ctx context.Context, taskID int64, answer string) error
}

// Approvals takes the owner's approval of the plan shown.
type Approvals interface {
	ApproveShown(ctx context.Context, id int64, seen int, opID, shown string) (request.State, error)
}

// Server is what only the running server does: a chat turn on the owner's
// words, and a run.
type Server interface {
	Say(ctx context.Context, appID string, w request.Say) (request.State, error)
	Start(ctx context.Context, intentID int64) error
}

// Deps are the services the tools call.
type Deps struct {
	Apps       Apps
	Backlog    Backlog
	Requests   Requests
	Deliveries Deliveries
	Log        RunLog
	Inbox      Inbox
	Answers    Answers
	Approvals  Approvals
	Server     Server
	// Failures hears what failed that was not a refusal.
	Failures logger
	Version  string
}

// Options are what the owner chose when starting the server.
type Options struct {
	// AllowRun offers approve_plan and run_intent: without it, an agent
	// can plan and steer but never starts the engineer's code.
	AllowRun bool
}

// instructions tell a client's model how the tools fit together.
const instructions = `Autoapp is a launcher for an AI engineer. list_applications names the applications; ` +
	`send_request gives one of them a request (the engineer analyses it into an intent of tasks, in the background); ` +
	`list_intents and show_intent read the plan, the tasks' verdicts and the delivery; read_run_log reads what a run did. ` +
	`answer_question answers a builder's question; queue_intervention sends feedback or a pause to a running intent. ` +
	`Every write carries an op of your choosing: the same op again is recognised and writes nothing.`

// New is the MCP server with every tool over d; approve_plan and
// run_intent only with o.AllowRun.
func New(d Deps, o Options) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "autoapp", Title: "Autoapp", Version: d.Version}, &mcp.ServerOptions{Instructions: instructions})
	t := tools{d}
	add(s, d.Failures, t.listApplications())
	add(s, d.Failures, t.listIntents())
	add(s, d.Failures, t.showIntent())
	add(s, d.Failures, t.readRunLog())
	add(s, d.Failures, t.sendRequest())
	add(s, d.Failures, t.answerQuestion())
	add(s, d.Failures, t.queueIntervention())
	if o.AllowRun {
		add(s, d.Failures, t.approvePlan())
		add(s, d.Failures, t.runIntent())
	}
	return s
}
