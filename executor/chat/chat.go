// Package chat runs the engineer's chat turns in the background: the
// person's message starts a turn, which answers in words and may plan a
// backlog with the planner's tools, while the page polls the turn's row.
// Each application has at most one turn running; the row records the
// message as typed, one line per tool call, the reply and how it ended.
//
// A chat turn is offered the planning tools and the read-only source
// tools; tools that edit or build, when Deps.EditTools offers some, are
// wrapped by planner.GuardEdits so that a turn that planned cannot use
// them. GatedEditTools gives the builder's edit tools, each call asked of
// the person first through the gate; intent.start, offered when Deps.Start
// is set, runs the application's plan once the person approves.
package chat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"autoapp/executor"
	"autoapp/executor/ai"
	"autoapp/executor/ai/provider"
	"autoapp/executor/candidate"
	"autoapp/executor/gate"
	"autoapp/executor/planner"
	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
	"autoapp/intent/spend"
	"autoapp/intent/workspace"
	"autoapp/knowledge/origin"
	"autoapp/migrations"
)

// Status is where a chat turn stands; the intents store keeps the turns.
type Status = intent.ChatStatus

// The statuses of a chat turn.
const (
	StatusRunning  = intent.ChatRunning
	StatusAnswered = intent.ChatAnswered
	StatusFailed   = intent.ChatFailed
	StatusStopped  = intent.ChatStopped
)

// Sentences of the refusals and endings the person reads.
const (
	BusySentence    = intent.ChatBusySentence
	NoModelSentence = "No model is set up for the engineer: choose the Settings model in Settings."
	EmptySentence   = "Write a message first."
	ClosedSentence  = "The launcher is shutting down; nothing can start."
	// StoppedByPerson ends a turn the person stopped.
	StoppedByPerson = executor.StoppedByPerson
	// LauncherStopped ends a turn the launcher stopped, or found running
	// when it started again.
	LauncherStopped = intent.LauncherStopped
)

// Limits of the conversation.
const (
	// MaxMessage is the longest message a person may send, in characters.
	MaxMessage = 20000
	// HistoryTurns is how many earlier turns a turn is given.
	HistoryTurns = 10
	// HistoryChars bounds the earlier turns a turn is given; the oldest
	// go first.
	HistoryChars = 16000
	// DefaultTurns is how many turns Turns returns when no limit is given.
	DefaultTurns = 50
)

func refuse(code refusal.Code, format string, args ...any) *refusal.Error {
	return refusal.Errorf(code, format, args...)
}

// Turn is one chat turn as its row holds it.
type Turn = intent.ChatTurn

// Apps is what a chat turn reads of the applications (*app.Service): the
// one it is about, its workspace and manifest, and the selection it moves
// when a message is about another one.
type Apps interface {
	Get(ctx context.Context, id string) (app.App, error)
	List(ctx context.Context) ([]app.App, error)
	Select(ctx context.Context, id string) error
	WorkspaceDir(id string) string
	Manifest(id string) ([]byte, app.Manifest, refusal.Problems, error)
}

// Deps are what the chat turns work with.
type Deps struct {
	Backlog *intent.Service
	// ChatTurns keeps the chat turns' rows.
	ChatTurns *intent.ChatTurns
	// Interventions give a turn the owner's feedback and hear it was given.
	Interventions *intent.Interventions
	// Requests journal the owner's words (Say); nil takes none.
	Requests *request.Service
	Models   executor.Models
	Apps     Apps
	// Usage gets each turn's usage row.
	Usage executor.UsageBook
	// Caps answer each request's room: the day's cap, and the intent's
	// once the turn's request has one; nil caps nothing.
	Caps executor.Caps
	Log  *slog.Logger
	Now  func() time.Time
	// Limits are the limits of each turn, read as it starts (limits.json);
	// nil, or a zero field, takes the AI layer's defaults.
	Limits func() ai.Limits
	// EditTools, when set, gives a turn of the application, with the turn's
	// run id, tools that edit or build (GatedEditTools); they are offered
	// behind planner.GuardEdits, and done, when not nil, is called once the
	// turn has ended. nil offers none.
	EditTools func(ws *workspace.Workspace, rec *executor.TurnRecord, appID, runID string, pos *origin.Position) (tools []ai.Tool, done func())
	// Start runs an intent as Run in the Backlog does (the executor's
	// Start). With Gate, every turn is offered intent.start, which asks the
	// person through Gate before it calls Start.
	Start func(ctx context.Context, intentID int64) error
	// Gate holds intent.start's question until the person decides it in
	// the page.
	Gate *gate.Gate
	// Books are where each turn's record writes its knowledge: its
	// contexts row, the lessons served, the cases its edits and builds
	// open (executor.TurnRecord).
	Books executor.Books
	// Candidates give each turn its orientation (digest:<appId>) and where
	// the application stands as its rows are written; nil gives neither.
	Candidates *candidate.Service
	// Lessons are matched on the person's message for each turn's lessons
	// document; nil gives none.
	Lessons executor.LessonBook
	// Distill, when set, is called as each turn ends: the cases its
	// approved edits and builds resolved are asked about then, not after a
	// later builder turn.
	Distill func(ctx context.Context)
	// TaskContext is the path of task-context.json, read for every turn:
	// {"lessons": false} gives no lessons. "" reads none.
	TaskContext string
	// AfterTurn, when set, is called once a turn has ended and its row is
	// written: the requests bring their journal up to what the turn did.
	AfterTurn func(ctx context.Context, appID string, requestID int64)
}

// Service runs the chat turns of one server. The turns' rows are the
// backlog's (Deps.Backlog).
type Service struct {
	d Deps

	mu     sync.Mutex
	turns  map[string]*running // by application
	closed bool
}

// running is one turn in the background, or one being started (cancel is
// nil until it starts).
type running struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
	// progress is what its model is doing now.
	progress ai.Progress
}

// Progress is what the model of the application's running turn is doing
// now: reading, writing, or waiting because the provider asked to.
func (s *Service) Progress(appID string) (ai.Progress, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.turns[appID]
	if r == nil {
		return ai.Progress{}, false
	}
	return r.progress, true
}

// Causes a turn's context is cancelled with.
var (
	errStopped  = errors.New(StoppedByPerson)
	errShutdown = errors.New(LauncherStopped)
)

// NewService builds the chat turns, kept by d.ChatTurns.
func NewService(d Deps) *Service {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		panic("chat: Deps.Now, the clock, is required")
	}
	return &Service{d: d, turns: map[string]*running{}}
}

// Send starts a turn with the person's message and returns at once, its
// row recorded as running. It refuses an empty message, a second turn of
// an application while one runs, and a launcher with no model set up, each
// with a sentence.
//
// appID is the application selected; the turn is about the one the
// message is about (About), and a request of another is not its own.
func (s *Service) Send(ctx context.Context, appID string, requestID int64, message string) (Turn, error) {
	return s.start(ctx, appID, message, func(about string) (Turn, bool, error) {
		if about != appID {
			requestID = 0
		}
		t, err := s.d.ChatTurns.StartChatTurn(ctx, about, requestID, message)
		return t, err == nil, err
	})
}

// Say is what the Request page sends: the owner's words journaled on their
// request and the engineer's turn that answers them, in one transaction,
// once every check passed. A refused send writes nothing; a repeated
// operation answers what the first wrote and starts nothing.
//
// appID is the application selected (none: ""). Words about another
// application (About) are a new request of that one, which becomes the
// one selected: the request open here is not theirs.
func (s *Service) Say(ctx context.Context, appID string, w request.Say) (request.State, error) {
	if s.d.Requests == nil {
		return request.State{}, fmt.Errorf("chat: no requests to journal the words")
	}
	w.AppID = appID
	if w.Answer && len(w.Answers) > 0 {
		// The turn reads each answer under the question it answers.
		from, err := s.d.Requests.State(ctx, w.ID)
		if err != nil {
			return request.State{}, err
		}
		if w.Text = from.AnswersText(w.Answers); w.Text == "" {
			return request.State{}, refuse(refusal.Invalid, "The answers are empty; answer at least one question first.")
		}
	}
	if done, err := s.d.Requests.OpDone(ctx, w.Op); err != nil || done {
		if err != nil {
			return request.State{}, err
		}
		st, _, err := s.d.Requests.Say(ctx, w, nil)
		return st, err
	}
	var st request.State
	_, err := s.start(ctx, appID, w.Text, func(about string) (Turn, bool, error) {
		var turn Turn
		var replayed bool
		var err error
		if about != appID {
			// A request opened here for another application keeps the mode
			// of the conversation it came from: a guided owner stays guided.
			if w.Mode == "" && w.ID != 0 {
				from, err := s.d.Requests.State(ctx, w.ID)
				if err != nil {
					return Turn{}, false, err
				}
				w.Mode = from.Mode
			}
			w.ID, w.Seen, w.Answer = 0, 0, false
			if w.Mode == "" {
				w.Mode = request.ModeAutonomous
			}
		}
		w.AppID = about
		st, replayed, err = s.d.Requests.Say(ctx, w, func(ctx context.Context, within migrations.Within, requestID int64) error {
			var err error
			turn, err = s.d.ChatTurns.StartChatTurnIn(ctx, within, about, requestID, w.Text)
			return err
		})
		return turn, err == nil && !replayed, err
	})
	return st, err
}

// start starts the turn on message of the application it is about, once
// the checks pass and that application's turn is held: write writes the
// turn's row for that application (with whatever it journals, in one
// transaction) and says whether it did; a write that did not start the
// turn starts nothing. selected is the application selected; one the
// message is about instead becomes the one selected once its turn started.
func (s *Service) start(ctx context.Context, selected, message string, write func(appID string) (Turn, bool, error)) (Turn, error) {
	switch n := utf8.RuneCountInString(message); {
	case strings.TrimSpace(message) == "":
		return Turn{}, refuse(refusal.Invalid, EmptySentence)
	case n > MaxMessage:
		return Turn{}, refuse(refusal.Invalid, "The message has %d characters; keep it to %d.", n, MaxMessage)
	}
	appID, err := s.About(ctx, message, selected)
	if err != nil {
		return Turn{}, err
	}
	// The day's cap reached refuses the turn before anything is written.
	if capped := executor.CheckCaps(ctx, s.d.Caps, spend.Ask{RunID: "chat-" + appID, AppID: appID, Kind: intent.KindChat,
		Model: s.d.Models.DefaultModel()}, s.d.Log); capped != "" {
		return Turn{}, refuse(refusal.Conflict, "%s", capped)
	}
	r := &running{done: make(chan struct{})}
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return Turn{}, refuse(refusal.Conflict, ClosedSentence)
	case s.turns[appID] != nil:
		s.mu.Unlock()
		return Turn{}, refuse(refusal.Conflict, BusySentence)
	}
	s.turns[appID] = r
	s.mu.Unlock()
	started := false
	defer func() {
		if !started {
			s.release(appID, r)
		}
	}()

	ref := s.d.Models.DefaultModel()
	if ref == "" {
		return Turn{}, refuse(refusal.Conflict, NoModelSentence)
	}
	ep, err := s.d.Models.Resolve(ctx, ref)
	if err != nil {
		var pe *refusal.Error
		if errors.As(err, &pe) {
			return Turn{}, refuse(refusal.Conflict, "%s", pe.Message)
		}
		return Turn{}, fmt.Errorf("chat: the Settings model: %w", err)
	}
	turn, wrote, err := write(appID)
	if err != nil {
		return Turn{}, err
	}
	if !wrote {
		return Turn{}, nil
	}
	if appID != selected {
		// The person's page follows the conversation to the application
		// the message named.
		if err := s.d.Apps.Select(ctx, appID); err != nil {
			s.d.Log.Warn("the application a message named could not be selected", "app", appID, "err", err)
		}
	}

	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	s.mu.Lock()
	r.cancel = cancel
	if s.closed {
		cancel(errShutdown) // the launcher stopped while the turn was being set up
	}
	s.mu.Unlock()
	started = true
	go s.run(runCtx, r, turn, ep)
	return turn, nil
}

// release forgets r as the application's turn and says it is done.
func (s *Service) release(appID string, r *running) {
	s.mu.Lock()
	if s.turns[appID] == r {
		delete(s.turns, appID)
	}
	s.mu.Unlock()
	close(r.done)
}

// Running reports whether a turn of the application runs.
func (s *Service) Running(appID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turns[appID] != nil
}

// Stop stops the application's running turn, if any, and returns once its
// row says stopped.
func (s *Service) Stop(appID string) {
	s.mu.Lock()
	var cancel context.CancelCauseFunc
	r := s.turns[appID]
	if r != nil {
		cancel = r.cancel
	}
	s.mu.Unlock()
	if cancel == nil {
		return // none runs, or it is still being set up
	}
	cancel(errStopped)
	<-r.done
}

// Shutdown stops every running turn, as stopping the launcher does, marks
// their rows stopped, and refuses new turns.
func (s *Service) Shutdown() {
	s.mu.Lock()
	s.closed = true
	var all []*running
	for _, r := range s.turns {
		all = append(all, r)
		if r.cancel != nil {
			r.cancel(errShutdown)
		}
	}
	s.mu.Unlock()
	for _, r := range all {
		<-r.done
	}
}

// Recover is what serve does on start: a turn left running by a launcher
// that stopped is marked stopped ("The launcher stopped."). It returns how
// many were.
func (s *Service) Recover(ctx context.Context) (int, error) {
	n, err := s.d.ChatTurns.StopChatTurns(ctx, LauncherStopped)
	if err != nil {
		return 0, fmt.Errorf("chat: recover: %w", err)
	}
	return n, nil
}

// run is one turn in the background, from the model's first call to the
// row's last update.
func (s *Service) run(ctx context.Context, r *running, turn Turn, ep provider.Endpoint) {
	defer s.release(turn.AppID, r)
	bg := context.WithoutCancel(ctx)
	log := s.d.Log.With("app", turn.AppID, "run", turn.RunID)

	// The turn's workspace, opened once: every read of its tools goes
	// through it.
	ws, err := workspace.Open(s.d.Apps.WorkspaceDir(turn.AppID), s.d.Now)
	if err != nil {
		log.Error("the workspace could not be opened for the turn", "err", err)
	} else {
		defer ws.Close()
	}
	session := planner.NewSession(planner.Config{
		AppID: turn.AppID, RequestText: turn.Message, Backlog: s.d.Backlog,
		Workspace: ws,
		Manifest: func() ([]byte, error) {
			raw, _, _, err := s.d.Apps.Manifest(turn.AppID)
			return raw, err
		},
		Log: log, Now: s.d.Now,
	})
	tools := append(session.Tools(), session.SourceTools()...)
	if s.d.Start != nil && s.d.Gate != nil {
		tools = append(tools, s.intentStart(turn.AppID, turn.RunID))
	}
	// Where the application stands as the turn starts; its edits and
	// builds move it.
	pos := s.position(bg, turn.AppID, ws)
	// The turn's knowledge, every row of it, is its record's.
	endpoint := ai.Endpoint{Provider: ep.Provider, BaseURL: ep.BaseURL, APIKey: ep.APIKey, Model: ep.Model, ContextTokens: ep.ContextTokens, NoTextCalls: ep.NoTextCalls}
	books := s.d.Books
	books.Log = log
	rec := executor.NewTurnRecord(books, turn.RunID, turn.AppID, turn.Message, executor.ModelRef(endpoint))
	if s.d.EditTools != nil {
		edits, done := s.d.EditTools(ws, rec, turn.AppID, turn.RunID, pos)
		if done != nil {
			defer done()
		}
		tools = append(tools, edits...)
	}
	// What the turn writes carries its identity, never one a model wrote:
	// its run, its calls (the run loop names each; its own rows are
	// <runId>:turn), the application and where the application stands as
	// each row is written.
	turnCtx := origin.WithIdentity(ctx, origin.Identity{RunID: turn.RunID, CallID: ai.CallID(turn.RunID, 0), AppID: turn.AppID})
	turnCtx = origin.WithPosition(turnCtx, pos)
	bg = context.WithoutCancel(turnCtx)

	intentDoc, err := s.intentDocument(bg, turn.AppID)
	if err != nil {
		log.ErrorContext(bg, "the intent document could not be made; the turn goes without it", "err", err)
	}
	feedback, err := s.d.Interventions.FeedbackForChat(bg, turn.AppID)
	if err != nil {
		log.ErrorContext(bg, "the person's feedback could not be read; the turn goes without it", "err", err)
	}
	var feedbackDoc ai.Document
	if len(feedback) > 0 {
		feedbackDoc = feedbackDocument(turn.AppID, feedback)
	}
	// Told what a builder's turn is told: where the application stands,
	// its backlog, what in the workspace the message's words match, and the
	// lessons that share them.
	briefing := s.sources(ws).RequestBriefing(bg, turn.AppID, aboutWords(turn.Message), intentDoc, feedbackDoc, s.d.TaskContext)
	history, err := s.history(bg, turn.AppID, turn.ID)
	if err != nil {
		log.ErrorContext(bg, "the earlier turns could not be read; the turn goes without them", "err", err)
	}

	// Its words count against the day's cap, and against its intent's once
	// the request has one.
	ask := spend.Ask{RunID: turn.RunID, AppID: turn.AppID, Kind: intent.KindChat, Model: executor.ModelRef(endpoint)}
	if turn.RequestID != 0 && s.d.Requests != nil {
		if st, err := s.d.Requests.State(bg, turn.RequestID); err == nil {
			ask.IntentID = st.IntentID
		} else {
			log.ErrorContext(bg, "the turn's request could not be read; only the day's cap holds it", "err", err)
		}
	}
	aiTurn := ai.Turn{
		Cap:          executor.CapOf(turnCtx, s.d.Caps, ask, log),
		Endpoint:     endpoint,
		Kind:         ai.KindChat,
		RunID:        turn.RunID,
		Instructions: planner.Instructions,
		Documents:    briefing.Documents,
		History:      history,
		Message:      turn.Message,
		Tools:        planner.GuardEdits(tools, session),
		Limits:       s.limits(),
		Now:          s.d.Now,
		Log:          log,
		OnProgress: func(p ai.Progress) {
			s.mu.Lock()
			if r := s.turns[turn.AppID]; r != nil {
				r.progress = p
			}
			s.mu.Unlock()
		},
		OnStep: func(c ai.Call) {
			// A planning call the schema refused still makes this a turn that planned.
			session.Observe(c)
			if err := s.d.ChatTurns.AddChatLine(bg, turn.ID, planner.Line(c)); err != nil {
				log.ErrorContext(bg, "a tool call's line could not be kept", "err", err)
			}
		},
	}
	// The search event says why each document reached the model; the
	// contexts row is kept as the documents are delivered, so a case its
	// edits' builds open names it.
	briefing.TellWhy(turnCtx, &aiTurn, log)
	rec.KeepAtDelivery(turnCtx, &aiTurn)
	res := executor.RunTurn(turnCtx, s.d.Usage, turn.AppID, aiTurn)
	rec.Context(turnCtx, aiTurn, res)
	// The lessons whose line reached the model are served; the turn's
	// builds so far were heard and close what is recorded here. Those the
	// budget cut are kept as not included, never scored.
	rec.Served(bg, briefing.Served(res.Documents), briefing.Cut(res.Documents))
	rec.EndServings(bg)

	if len(feedback) > 0 && res.Ended != ai.EndProvider {
		orders := make([]int64, len(feedback))
		for n, f := range feedback {
			orders[n] = f.Order
		}
		if err := s.d.Interventions.FeedbackGiven(bg, orders, turn.RunID); err != nil {
			log.ErrorContext(bg, "the feedback given to the turn could not be recorded", "err", err)
		}
	}
	status, sentence := ending(ctx, res)
	if res.Ended == ai.EndProvider && res.Err != nil {
		log.WarnContext(bg, "the provider failed a chat turn", "detail", res.Err.Detail())
	}
	if err := s.d.ChatTurns.EndChatTurn(bg, turn.ID, status, res.Text, sentence); err != nil {
		log.ErrorContext(bg, "the turn's end could not be kept", "err", err)
	}
	if s.d.AfterTurn != nil {
		s.d.AfterTurn(bg, turn.AppID, turn.RequestID)
	}
	if s.d.Distill != nil {
		// On the turn's context: the launcher's stop cuts a question in
		// flight, and one not answered is asked again after a later turn.
		s.d.Distill(ctx)
	}
}

// ending is the row's status and sentence for how a turn ended.
func ending(ctx context.Context, res ai.Result) (Status, string) {
	switch {
	case res.Ended == ai.EndAnswered || res.Ended == ai.EndQuestion:
		return StatusAnswered, ""
	case res.Ended == ai.EndAborted || ctx.Err() != nil:
		if errors.Is(context.Cause(ctx), errShutdown) {
			return StatusStopped, LauncherStopped
		}
		return StatusStopped, StoppedByPerson
	}
	return StatusFailed, res.Sentence
}

// intentDocument is intent:<appId>, when the application has an intent in
// draft, running or stopped; with none, a document with no Ref.
func (s *Service) intentDocument(ctx context.Context, appID string) (ai.Document, error) {
	list, err := s.d.Backlog.List(ctx, appID)
	if err != nil {
		return ai.Document{}, fmt.Errorf("chat: %w", err)
	}
	var intents []plan.DocIntent
	for _, sum := range list {
		switch sum.Status {
		case intent.IntentDraft, intent.IntentRunning, intent.IntentStopped:
		default:
			continue
		}
		d, err := s.d.Backlog.Get(ctx, sum.ID)
		if err != nil {
			return ai.Document{}, fmt.Errorf("chat: %w", err)
		}
		in := plan.DocIntent{ID: d.ID, Status: string(d.Status), Request: d.Request, Questions: d.Questions}
		for _, t := range d.Tasks {
			status := string(t.Status)
			if t.Blocked {
				status = "blocked"
			}
			in.Tasks = append(in.Tasks, plan.DocTask{Slug: t.Slug, Status: status, Tier: t.Tier, Title: t.Title, Reason: t.Reason})
		}
		intents = append(intents, in)
	}
	if len(intents) == 0 {
		return ai.Document{}, nil
	}
	return ai.Document{Ref: "intent:" + appID, Title: "The backlog for " + appID, Text: plan.Document(appID, intents)}, nil
}

// sources are where a turn's documents come from, as a builder's turn
// reads them.
func (s *Service) sources(ws *workspace.Workspace) executor.Sources {
	return executor.Sources{Apps: s.d.Apps, Candidates: s.d.Candidates, Lessons: s.d.Lessons, Log: s.d.Log, Workspace: ws}
}

// position is where appID stands as a turn starts.
func (s *Service) position(ctx context.Context, appID string, ws *workspace.Workspace) *origin.Position {
	var cands executor.CandidateStates
	if s.d.Candidates != nil {
		cands = s.d.Candidates
	}
	return executor.PositionAt(ctx, cands, s.d.Apps, appID, ws)
}

// feedbackDocument gives a turn the feedback the person sent running
// intents, which stopped for it: the engineer is asked to revise the plan.
func feedbackDocument(appID string, feedback []intent.Feedback) ai.Document {
	var b strings.Builder
	b.WriteString("The person sent feedback while a run went; the run stopped for it at a safe boundary, keeping the work done so far.\n")
	b.WriteString("Revise the plan of the intent it names to take the feedback into account (replace or add tasks), and say what you changed.\n")
	for _, f := range feedback {
		fmt.Fprintf(&b, "\nFeedback on intent #%d:\n%s\n", f.IntentID, f.Text)
	}
	return ai.Document{Ref: "feedback:" + appID, Title: "The person's feedback on a run of " + appID, Text: b.String()}
}

// history is the conversation before the turn: the application's last
// HistoryTurns turns that ended, each the person's message and the
// engineer's reply, within HistoryChars (the oldest go first).
func (s *Service) history(ctx context.Context, appID string, before int64) ([]ai.Message, error) {
	rows, err := s.d.ChatTurns.EndedChatTurns(ctx, appID, before, HistoryTurns)
	if err != nil {
		return nil, fmt.Errorf("chat: history: %w", err)
	}
	var msgs []ai.Message
	size := 0
	for _, r := range rows {
		reply := r.Reply
		if strings.TrimSpace(reply) == "" {
			reply = "[The turn ended without a reply: " + strings.TrimSuffix(r.Sentence, ".") + ".]"
		}
		n := utf8.RuneCountInString(r.Message) + utf8.RuneCountInString(reply)
		if size+n > HistoryChars {
			break
		}
		size += n
		msgs = append(msgs, ai.Message{Role: ai.RoleAssistant, Text: reply}, ai.Message{Role: ai.RoleUser, Text: r.Message})
	}
	slices.Reverse(msgs)
	return msgs, nil
}

// Turns are the application's last limit turns (DefaultTurns when limit is
// 0 or less), oldest first, as the conversation shows them.
func (s *Service) Turns(ctx context.Context, appID string, limit int) ([]Turn, error) {
	if limit <= 0 {
		limit = DefaultTurns
	}
	turns, err := s.d.ChatTurns.ChatTurns(ctx, appID, limit)
	if err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	return turns, nil
}

// limits are the limits of a turn starting now.
func (s *Service) limits() ai.Limits {
	if s.d.Limits == nil {
		return ai.Limits{}
	}
	return s.d.Limits()
}
