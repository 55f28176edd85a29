// Package ai is the layer every turn of the engineer goes through: one
// OpenAI-compatible chat-completions client per endpoint, the tool loop with
// its limits, the reduction of a provider's failures to one sentence of
// ours, and structured questions.
//
// A turn is the host's: the model is asked, the tools answer, and the
// limits (steps, wall time, idle time, repeated refusals, Stop) decide when
// it ends. What the person reads is always a sentence of ours; a provider's
// raw text goes to the log and nowhere else.
package ai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"autoapp/intent/refusal"
	"autoapp/knowledge/origin"
)

// The kinds of turn, as the usage rows name them.
const (
	KindChat     = "chat"
	KindPlanning = "planning"
	KindBuilder  = "builder"
	KindAdvice   = "advice"
	KindDistill  = "distill"
)

// The roles of a history message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one earlier message of a conversation. An assistant message
// may carry the tool calls an earlier run made (Calls): the model is given
// each call as the assistant's and its result as the tool's answer, the
// structured history of that run.
type Message struct {
	Role  string
	Text  string
	Calls []Call
}

// size is the message's length in characters, its calls included.
func (m Message) size() int {
	n := len(m.Text)
	for _, c := range m.Calls {
		n += len(c.ID) + len(c.Name) + len(c.Input) + len(c.Result)
	}
	return n
}

// historyMessages are m as the model is given it: a user or assistant
// message, and after an assistant message with calls each call's result
// as a tool message. A call is named by its ID, the run's <runId>:<n>.
func historyMessages(m Message) []openai.ChatCompletionMessageParamUnion {
	if m.Role != RoleAssistant {
		return []openai.ChatCompletionMessageParamUnion{openai.UserMessage(m.Text)}
	}
	if len(m.Calls) == 0 {
		return []openai.ChatCompletionMessageParamUnion{openai.AssistantMessage(m.Text)}
	}
	asked := openai.ChatCompletionAssistantMessageParam{}
	if m.Text != "" {
		asked.Content.OfString = openai.String(m.Text)
	}
	ids := make([]string, len(m.Calls))
	for i, c := range m.Calls {
		ids[i] = c.ID
		if ids[i] == "" {
			ids[i] = fmt.Sprintf("history_%d", i+1)
		}
		args := string(c.Input)
		if args == "" {
			args = "{}"
		}
		asked.ToolCalls = append(asked.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID:       ids[i],
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: Tool{Name: c.Name}.WireName(), Arguments: args},
			},
		})
	}
	out := []openai.ChatCompletionMessageParamUnion{{OfAssistant: &asked}}
	for i, c := range m.Calls {
		out = append(out, openai.ToolMessage(string(c.Result), ids[i]))
	}
	return out
}

// Defaults of the limits.
const (
	DefaultSteps        = 60
	DefaultWall         = 20 * time.Minute
	DefaultIdle         = 8 * time.Minute
	DefaultSameRefusals = 4
)

// Limits end a turn. A zero field takes its default.
type Limits struct {
	// Steps is the most model calls a turn makes.
	Steps int
	// Wall is the longest a turn runs. It cuts a request to the model
	// where it falls; a running tool is not interrupted, and the turn ends
	// as the tool returns.
	Wall time.Duration
	// Idle is the longest a turn goes without a tool call; the clock is
	// held while a tool runs and while a question waits (HoldIdle).
	Idle time.Duration
	// SameRefusals ends a turn refused that many times for the same
	// reason (same tool, same kind of refusal: the schema or the handler,
	// for the same fields) with no edit landing in between (Tool.Edits).
	SameRefusals int
}

// WithDefaults is l with each zero field at its default.
func (l Limits) WithDefaults() Limits {
	if l.Steps <= 0 {
		l.Steps = DefaultSteps
	}
	if l.Wall <= 0 {
		l.Wall = DefaultWall
	}
	if l.Idle <= 0 {
		l.Idle = DefaultIdle
	}
	if l.SameRefusals <= 0 {
		l.SameRefusals = DefaultSameRefusals
	}
	return l
}

// Turn is one conversation with the model, from the message to its answer
// or to the limit that ends it.
type Turn struct {
	Endpoint Endpoint
	// Kind is chat, planning, builder, advice or distill.
	Kind  string
	RunID string
	// Instructions go first, as the system message.
	Instructions string
	// Documents are delivered in order under DocumentBudget characters
	// (0: DefaultDocumentBudget; below 0: none), cut from the end, as one
	// user message labelled as data, after the instructions.
	Documents      []Document
	DocumentBudget int
	History        []Message
	Message        string
	Tools          []Tool
	Limits         Limits
	// Now is the clock of the limits; required.
	Now func() time.Time
	// Log receives the raw detail of failures; nil discards it. The key is
	// never logged. Every line is logged with the turn's context, so a
	// handler that reads identity from it (the knowledge's) records the
	// turn's run and application; the run id is also an attribute.
	Log *slog.Logger
	// OnUsage is called as each step ends, with the usage so far.
	OnUsage func(Usage)
	// OnStep is called as each tool call completes.
	OnStep func(Call)
	// OnProgress is called as the model is asked, as each piece of its
	// answer streams in, and as the provider asks to wait.
	OnProgress func(Progress)
	// OnDelivered, when set, is called once the documents are fitted into
	// the budget, before the model is first asked, with what the turn is
	// given of each (the record Result.Documents holds): the turn's context
	// can be kept before any of its tools runs.
	OnDelivered func(docs []DeliveredDocument)
	// Cap, when set, is asked before every request to the model how much
	// the request may use; nil caps nothing.
	Cap Cap
}

// Cap answers how much one request may use, given what the turn's
// completed steps used so far and the request's input tokens (estimated
// from its length, as a floor of what the provider will count).
type Cap func(used Usage, input int) Room

// Room is what one request may use under the caps in force.
type Room struct {
	// Refused, when set, is why the request is not sent at all: what was
	// used and its input leave no room. It ends the turn (EndCap).
	Refused string
	// Output is the most output tokens the request may stream; the stream
	// is cut at the first token past it. Below 0: no cap counts tokens.
	Output int
	// Until is when a cap in time is reached; the request is cut there.
	// Zero: no cap counts time.
	Until time.Time
	// Reached says which cap the cut request crossed and what was spent,
	// given the turn's usage with the cut request's floor counted.
	Reached func(used Usage) string
}

// Unlimited is the room of a request no cap bounds.
var Unlimited = Room{Output: -1}

// Ending says how a turn ended.
type Ending string

// The ways a turn ends.
const (
	EndAnswered Ending = "answered"
	EndSteps    Ending = "steps"
	EndWall     Ending = "wall"
	EndIdle     Ending = "idle"
	EndRefusals Ending = "refusals"
	EndAborted  Ending = "aborted"
	EndProvider Ending = "provider"
	EndQuestion Ending = "question"
	// EndCap is a turn a cap ended: before a request, or cutting its
	// stream. It is not an attempt.
	EndCap Ending = "cap"
)

// Sentences for the person about how a turn ended.
const (
	AnsweredSentence = "The turn ended with an answer."
	StoppedSentence  = "The turn was stopped."
	QuestionSentence = "The turn ended with a question for the person."
)

// StepsSentence is the sentence for a turn that reached its step cap.
func StepsSentence(steps int) string {
	return fmt.Sprintf("The turn reached its limit of %d steps.", steps)
}

// WallSentence is the sentence for a turn that ran out of time.
func WallSentence(d time.Duration) string {
	return fmt.Sprintf("The turn ran out of time (%s).", spell(d))
}

// IdleSentence is the sentence for a turn that made no tool call for d.
func IdleSentence(d time.Duration) string {
	return fmt.Sprintf("The turn made no tool call for %s.", spell(d))
}

// RefusalsSentence is the sentence for a turn refused n times for the same
// reason.
func RefusalsSentence(n int, reason string) string {
	return fmt.Sprintf("The turn was refused %d times for the same reason: %s", n, strings.TrimSuffix(reason, ".")+".")
}

// Call is one tool call of a turn.
type Call struct {
	// ID is the call's id in the turn's envelope, <runId>:<n> with n
	// counting the turn's calls from 1: the rows the call writes carry it.
	// It is the host's, never the id the model gave the call.
	ID string `json:"id"`
	// Name is the tool's name in our words (source.read), or the name the
	// model sent when no tool has it.
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// Result is the answer the model read back.
	Result json.RawMessage `json:"result"`
	OK     bool            `json:"ok"`
	// Problems are why the call was refused, when it was.
	Problems []refusal.Problem `json:"problems,omitempty"`
	// FromText names the form the model wrote the call in as text, when
	// the host read it from the answer's text rather than its tool_calls
	// (TextCallHermes, …); "" for a call sent as one.
	FromText string `json:"fromText,omitempty"`
	// InvalidInput says the host refused the call before running it: its
	// input did not match the tool's schema, or no tool has its name.
	InvalidInput bool          `json:"invalidInput,omitempty"`
	Started      time.Time     `json:"started"`
	Took         time.Duration `json:"took"`
}

// Usage is the tokens a turn's completed steps used. Partial says the
// numbers are a floor: the turn was cut short, or a step reported nothing.
type Usage struct {
	Input   int  `json:"input"`
	Output  int  `json:"output"`
	Partial bool `json:"partial"`
}

// Result is how a turn went.
type Result struct {
	Ended Ending
	// Sentence says how it ended, for the person.
	Sentence string
	// Text is the model's final answer, when it answered.
	Text string
	// Words are all the model wrote to the person over the turn, beside
	// its tool calls and as its answer, in order, a blank line between:
	// what a turn cut short said.
	Words string
	// Question is what a tool asked the person, when it ended the turn.
	Question  string
	Calls     []Call
	Usage     Usage
	Documents []DeliveredDocument
	// ModelTime is the time spent waiting on the model: every step's
	// request, from asking to the last piece of its answer, on the turn's
	// clock. The tools' time is each call's Took.
	ModelTime time.Duration
	// ToolCalledBeforeFailure says the model made a tool call before the
	// provider failed. A turn that failed without one is not an attempt.
	ToolCalledBeforeFailure bool
	// Err is the provider's failure when Ended is EndProvider.
	Err *ProviderError
}

// Causes of a request's context ending because of a turn's limit.
var (
	errWallLimit = errors.New("ai: the turn ran out of time")
	errIdleLimit = errors.New("ai: the turn was idle too long")
	errCapped    = errors.New("ai: the request crossed a cap")
)

// turn is one Run in progress.
type turn struct {
	// ctx is the turn's context, which every log line is written under.
	ctx   context.Context
	t     Turn
	lim   Limits
	now   func() time.Time
	log   *slog.Logger
	start time.Time
	idle  *idleClock
	tools map[string]*boundTool
	res   Result

	// steps counts the model calls made.
	steps int
	// pieces counts what the request in flight has streamed so far.
	pieces int
	// unreported is set when a step came back without usage.
	unreported bool
	// identical counts refusals with the same problems, for the example.
	identical map[string]int
	// reasons counts refusals of the same kind since the last edit landed.
	reasons map[string]int
}

// TurnCall is the call part of the id the turn's own log lines carry,
// outside any tool call: <runId>:turn.
const TurnCall = "turn"

// CallID is the id of a turn's n-th tool call (from 1), or with n = 0 of
// the turn's own lines: <runId>:<n>, <runId>:turn.
func CallID(runID string, n int) string {
	if n == 0 {
		return runID + ":" + TurnCall
	}
	return fmt.Sprintf("%s:%d", runID, n)
}

// Run runs a turn: it asks the model, runs the tool calls it makes, feeds
// their answers back, and repeats until the model answers without a tool
// call or a limit ends the turn. Cancelling ctx stops it (EndAborted).
//
// The rows written under the turn carry its envelope's call: its own
// lines <runId>:turn, unless ctx names a call already, and each tool call's
// handler runs under <runId>:<n>.
func Run(ctx context.Context, t Turn) Result {
	if t.RunID != "" && origin.IdentityFrom(ctx).CallID == "" {
		ctx = origin.WithCall(ctx, CallID(t.RunID, 0))
	}
	r := &turn{
		ctx:       ctx,
		t:         t,
		lim:       t.Limits.WithDefaults(),
		now:       t.Now,
		log:       t.Log,
		identical: map[string]int{},
		reasons:   map[string]int{},
	}
	if r.now == nil {
		panic("ai: a turn needs its clock (Turn.Now)")
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.log = r.log.With("provider", t.Endpoint.Provider, "model", t.Endpoint.Model, "kind", t.Kind, "run", t.RunID)
	r.start = r.now()
	r.idle = newIdleClock(r.now)

	// The documents are cut to what the model's context window leaves
	// room for; a window too small for the turn itself asks nothing.
	budget, fits := fitBudget(t)
	docs, delivered := deliver(t.Documents, budget)
	r.res.Documents = delivered
	if t.OnDelivered != nil {
		t.OnDelivered(slices.Clone(delivered))
	}
	if !fits {
		return r.failed(&ProviderError{Kind: ProviderContext, Sentence: ContextSentence(t.Endpoint.ContextTokens),
			detail: "the instructions, history, message and tools alone do not fit the context window"})
	}

	p, err := newProvider(t.Endpoint, t.RunID, 0)
	if err != nil {
		return r.failed(err.(*ProviderError))
	}
	defer p.close()

	params := openai.ChatCompletionNewParams{Model: t.Endpoint.Model}
	var offered []string
	r.tools = make(map[string]*boundTool, len(t.Tools))
	for _, tool := range t.Tools {
		bt := &boundTool{Tool: tool}
		bt.schema, bt.broken = compileSchema(tool.Schema)
		var parameters map[string]any
		if bt.broken == nil {
			bt.broken = json.Unmarshal(tool.Schema, &parameters)
		}
		if bt.broken != nil {
			r.log.ErrorContext(ctx, "ai: a tool's schema cannot be read; every call of it is refused", "tool", tool.Name, "err", bt.broken)
			parameters = map[string]any{"type": "object"}
		}
		r.tools[tool.WireName()] = bt
		offered = append(offered, tool.Name)
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        tool.WireName(),
			Description: openai.String(tool.Description),
			Parameters:  shared.FunctionParameters(parameters),
		}))
	}
	r.log.DebugContext(ctx, "ai: turn starts", "tools", offered, "documents", len(delivered))

	if t.Instructions != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(t.Instructions))
	}
	if docs != "" {
		params.Messages = append(params.Messages, openai.UserMessage(docs))
	}
	for _, m := range t.History {
		params.Messages = append(params.Messages, historyMessages(m)...)
	}
	params.Messages = append(params.Messages, openai.UserMessage(t.Message))

	for step := 0; ; step++ {
		if ctx.Err() != nil {
			return r.end(EndAborted, StoppedSentence)
		}
		if ended, ok := r.overLimit(); ok {
			return ended
		}
		if step >= r.lim.Steps {
			return r.end(EndSteps, StepsSentence(r.lim.Steps))
		}

		room, input := Unlimited, 0
		if r.t.Cap != nil {
			input = estimateInput(params)
			if room = r.t.Cap(r.res.Usage, input); room.Refused != "" {
				return r.end(EndCap, room.Refused)
			}
		}
		r.steps++
		reqCtx, cancel, streamed := r.cappedRequest(ctx, room)
		sent := r.now()
		a, err := p.send(reqCtx, params, r.now, streamed)
		r.res.ModelTime += r.now().Sub(sent)
		cause := context.Cause(reqCtx)
		cancel()
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return r.end(EndAborted, StoppedSentence)
			case errors.Is(cause, errCapped):
				// What the cut request used is not reported: its input and
				// the pieces seen are its floor.
				r.res.Usage.Input += input
				r.res.Usage.Output += r.pieces
				r.unreported = true
				return r.end(EndCap, room.Reached(r.res.Usage))
			case errors.Is(cause, errWallLimit):
				return r.end(EndWall, WallSentence(r.lim.Wall))
			case errors.Is(cause, errIdleLimit):
				return r.end(EndIdle, IdleSentence(r.lim.Idle))
			}
			return r.failed(p.reduce(reqCtx, err, nil))
		}
		r.addUsage(a)
		if ended, ok := r.overLimit(); ok {
			return ended
		}

		// A model's reasoning is neither its answer nor a tool's input.
		content := withoutThinking(a.Content)
		if len(a.Calls) == 0 && !t.Endpoint.NoTextCalls && len(r.tools) > 0 {
			if found, rest, _ := recoverCalls(content, r.resolve); len(found) > 0 {
				a.Calls, content = found, rest
			}
		}
		if strings.TrimSpace(content) != "" {
			if r.res.Words != "" {
				r.res.Words += "\n\n"
			}
			r.res.Words += strings.TrimSpace(content)
		}
		var calls []toolCall
		for _, tc := range a.Calls {
			if tc.Name != "" {
				tc.Args = withoutThinking(tc.Args)
				calls = append(calls, tc)
			}
		}
		if len(calls) == 0 {
			r.res.Text = content
			if r.res.Text == "" {
				r.res.Text = a.Refusal
			}
			return r.end(EndAnswered, AnsweredSentence)
		}

		asked := openai.ChatCompletionAssistantMessageParam{}
		if content != "" {
			asked.Content.OfString = openai.String(content)
		}
		for i := range calls {
			if calls[i].ID == "" {
				calls[i].ID = fmt.Sprintf("call_%d_%d", step, i)
			}
			asked.ToolCalls = append(asked.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: calls[i].ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name: calls[i].Name, Arguments: calls[i].Args,
					},
				},
			})
		}
		params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &asked})
		for _, tc := range calls {
			answer, ended, ok := r.call(ctx, tc)
			if ok {
				return ended
			}
			params.Messages = append(params.Messages, openai.ToolMessage(string(answer), tc.ID))
		}
	}
}

// resolve answers the wire name of the tool a call written as text names,
// by its wire name (source_read) or its name in our words (source.read).
func (r *turn) resolve(name string) (string, bool) {
	if _, ok := r.tools[name]; ok {
		return name, true
	}
	for wire, t := range r.tools {
		if t.Name == name {
			return wire, true
		}
	}
	return "", false
}

// requestContext bounds one request by what is left of the wall and idle
// limits, and by nothing else: a slow model is slow, not failed. The
// limits are measured on the turn's clock and applied as real time: a
// model is cut where the limit falls, not at the end of its request.
func (r *turn) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	limit, cause := r.lim.Wall-r.now().Sub(r.start), errWallLimit
	if idle, held := r.idle.idle(); !held && r.lim.Idle-idle < limit {
		limit, cause = r.lim.Idle-idle, errIdleLimit
	}
	return context.WithTimeoutCause(ctx, limit, cause)
}

// cappedRequest is requestContext cut, too, where room ends: at its time,
// or as the stream's pieces pass its output tokens. The progress it
// answers tells the turn's OnProgress and counts the pieces (r.pieces).
func (r *turn) cappedRequest(ctx context.Context, room Room) (context.Context, context.CancelFunc, func(Progress)) {
	reqCtx, cancelLimits := r.requestContext(ctx)
	r.pieces = 0
	var cancelCap context.CancelCauseFunc
	reqCtx, cancelCap = context.WithCancelCause(reqCtx)
	var stopTimer func() bool
	if !room.Until.IsZero() {
		t := time.AfterFunc(room.Until.Sub(r.now()), func() { cancelCap(errCapped) })
		stopTimer = t.Stop
	}
	progress := func(p Progress) {
		r.pieces = p.Tokens
		if room.Output >= 0 && p.Tokens > room.Output {
			cancelCap(errCapped)
		}
		if r.t.OnProgress != nil {
			r.t.OnProgress(p)
		}
	}
	return reqCtx, func() {
		if stopTimer != nil {
			stopTimer()
		}
		cancelCap(nil)
		cancelLimits()
	}, progress
}

// estimateInput is the request's input tokens as a floor: its messages and
// tools, as sent, at charsPerToken characters a token.
func estimateInput(params openai.ChatCompletionNewParams) int {
	n := 0
	if b, err := json.Marshal(params.Messages); err == nil {
		n += len(b)
	}
	if b, err := json.Marshal(params.Tools); err == nil {
		n += len(b)
	}
	return n / charsPerToken
}

// overLimit ends the turn when the wall or idle limit has passed.
func (r *turn) overLimit() (Result, bool) {
	if r.now().Sub(r.start) >= r.lim.Wall {
		return r.end(EndWall, WallSentence(r.lim.Wall)), true
	}
	if idle, held := r.idle.idle(); !held && idle >= r.lim.Idle {
		return r.end(EndIdle, IdleSentence(r.lim.Idle)), true
	}
	return Result{}, false
}

// addUsage adds a completed step's usage and reports the total so far.
func (r *turn) addUsage(a answer) {
	if a.Counted {
		r.res.Usage.Input += a.Usage.Input
		r.res.Usage.Output += a.Usage.Output
	} else {
		r.unreported = true
	}
	if r.t.OnUsage != nil {
		u := r.res.Usage
		u.Partial = r.unreported
		r.t.OnUsage(u)
	}
}

func (r *turn) end(e Ending, sentence string) Result {
	r.res.Ended, r.res.Sentence = e, sentence
	r.res.Usage.Partial = r.unreported || (e != EndAnswered && e != EndQuestion)
	r.log.InfoContext(r.ctx, "ai: turn ended", "ended", e, "steps", r.steps, "calls", len(r.res.Calls), "input", r.res.Usage.Input,
		"output", r.res.Usage.Output, "partial", r.res.Usage.Partial)
	return r.res
}

func (r *turn) failed(pe *ProviderError) Result {
	r.log.ErrorContext(r.ctx, "ai: the provider failed", "failure", pe.Kind, "status", pe.Status, "detail", pe.Detail())
	r.res.Err = pe
	r.res.ToolCalledBeforeFailure = len(r.res.Calls) > 0
	return r.end(EndProvider, pe.Sentence)
}

// call runs one tool call and returns the answer for the model. When the
// call ends the turn, it returns the turn's result and true.
func (r *turn) call(ctx context.Context, tc toolCall) (json.RawMessage, Result, bool) {
	wireName, args := tc.Name, tc.Args
	c := Call{Name: wireName, Input: inputJSON(args), Started: r.now(), FromText: tc.FromText}
	if r.t.RunID != "" {
		// The call's rows name it by the envelope's count, whatever id the
		// model gave it.
		c.ID = CallID(r.t.RunID, len(r.res.Calls)+1)
		ctx = origin.WithCall(ctx, c.ID)
	}
	if r.t.OnProgress != nil {
		r.t.OnProgress(Progress{}) // the model is not asked while a tool runs
	}
	r.idle.restart()
	release := r.idle.hold()

	var (
		answer   toolAnswer
		kind     refusalKind
		question *Question
		aborted  bool
	)
	tool := r.tools[wireName]
	switch {
	case tool == nil:
		kind = refusedInput
		answer.Problems = []refusal.Problem{{Field: "", Message: fmt.Sprintf("there is no tool %q; the tools are %s", wireName, r.toolList())}}
	case tool.broken != nil:
		c.Name = tool.Name
		answer.Error = "this tool cannot be used in this turn"
	default:
		c.Name = tool.Name
		if ps := tool.schema.validate([]byte(args)); len(ps) > 0 {
			kind, answer.Problems = refusedInput, ps
			break
		}
		input := json.RawMessage(args)
		if strings.TrimSpace(args) == "" {
			input = json.RawMessage("{}")
		}
		result, err := runHandler(context.WithValue(ctx, idleKey{}, r.idle), tool, input)
		var refusal *Refusal
		switch {
		case errors.As(err, &refusal):
			kind, answer.Problems = refusedHandler, refusal.Problems
		case err != nil && ctx.Err() != nil:
			aborted = true
			answer.Error = "the turn was stopped"
		case err != nil:
			r.log.WarnContext(ctx, "ai: a tool failed", "tool", tool.Name, "err", err)
			answer.Error = "the tool failed on the host: " + err.Error()
		default:
			if q, ok := result.(Question); ok {
				question = &q
				result = map[string]string{"question": q.Text}
			}
			b, err := json.Marshal(result)
			if err != nil {
				r.log.ErrorContext(ctx, "ai: a tool's result is not JSON", "tool", tool.Name, "err", err)
				answer.Error = "the tool's result could not be written as JSON"
				break
			}
			answer.OK, answer.Result = true, b
			if tool.Edits && (tool.Landed == nil || tool.Landed(input, result)) {
				clear(r.reasons) // an edit landed: "with no edit landing in between"
			}
		}
	}

	var reason string
	if kind != "" {
		reason = r.refused(&answer, c.Name, kind, tool)
	}
	release()
	r.idle.restart()

	b, _ := json.Marshal(answer)
	c.Result, c.OK, c.Problems = b, answer.OK, answer.Problems
	c.InvalidInput = kind == refusedInput
	c.Took = r.now().Sub(c.Started)
	r.res.Calls = append(r.res.Calls, c)
	if c.FromText != "" {
		r.log.InfoContext(ctx, "ai: a tool call written as text was read", "tool", c.Name, "form", c.FromText, "ok", c.OK)
	}
	if r.t.OnStep != nil {
		r.t.OnStep(c)
	}

	switch {
	case aborted || ctx.Err() != nil:
		return nil, r.end(EndAborted, StoppedSentence), true
	case question != nil:
		r.res.Question = question.Text
		return nil, r.end(EndQuestion, QuestionSentence), true
	case reason != "":
		return nil, r.end(EndRefusals, RefusalsSentence(r.lim.SameRefusals, reason)), true
	}
	return b, Result{}, false
}

// refused counts a refusal. The second refusal with the same problems adds
// the tool's example input to the answer; the SameRefusals-th refusal of
// the same kind since an edit landed returns the reason that ends the turn.
func (r *turn) refused(answer *toolAnswer, name string, kind refusalKind, tool *boundTool) string {
	problems, _ := json.Marshal(answer.Problems)
	r.identical[name+"\x00"+string(problems)]++
	if r.identical[name+"\x00"+string(problems)] >= 2 && tool != nil && len(tool.Example) > 0 {
		answer.Hint, answer.Example = ExampleHint, tool.Example
	}

	fields := make([]string, 0, len(answer.Problems))
	for _, p := range answer.Problems {
		fields = append(fields, p.Field)
	}
	slices.Sort(fields)
	key := name + "\x00" + string(kind) + "\x00" + strings.Join(slices.Compact(fields), "\x00")
	r.reasons[key]++
	if r.reasons[key] < r.lim.SameRefusals {
		return ""
	}
	return name + ": " + refusal.Problems(answer.Problems).Error()
}

func (r *turn) toolList() string {
	names := make([]string, 0, len(r.tools))
	for name := range r.tools {
		names = append(names, name)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// inputJSON keeps a call's input as JSON for the record: the text itself
// when it is JSON, else the text as a JSON string.
func inputJSON(args string) json.RawMessage {
	if strings.TrimSpace(args) == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}
