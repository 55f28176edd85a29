// Package overview answers in one read what needs the person now, the
// task in hand with its limits, what the turns cost (the task, the run,
// today) and what is left of each application; and, in one read too,
// everything an intent's page shows (IntentPage). It starts nothing and
// writes nothing: it reads the intents store, the run going in memory,
// the questions waiting at the gate, each application's candidate, the
// requests, the deliveries and whether a chat turn runs.
package overview

import (
	"context"
	"fmt"
	"strings"
	"time"

	"autoapp/executor"
	"autoapp/executor/ai"
	"autoapp/executor/candidate"
	"autoapp/executor/gate"
	"autoapp/executor/verdict"
	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/plan"
	"autoapp/intent/spend"
)

// Backlog is what the overview reads of the intents (*intent.Service).
type Backlog interface {
	Task(ctx context.Context, taskID int64) (intent.TaskDetail, error)
	Get(ctx context.Context, intentID int64) (intent.IntentDetail, error)
	GetWithInterventions(ctx context.Context, intentID int64) (d intent.IntentDetail, pending, applied []intent.Receipt, err error)
	// IntentCap and RanFor are an intent's cap and how long it ran.
	IntentCap(ctx context.Context, intentID int64) (intent.Cap, bool, error)
	RanFor(ctx context.Context, intentID int64) (time.Duration, error)
}

// Attention is what waits for the owner, each application's outlook and
// its board (*intent.Attention).
type Attention interface {
	WaitingTasks(ctx context.Context, each int) (intent.Waitings, error)
	WaitingCount(ctx context.Context) (int, error)
	Outlooks(ctx context.Context) (map[string]intent.Outlook, error)
	RunStartedAt(ctx context.Context, intentID int64) (time.Time, error)
	AwaitingOwner(ctx context.Context) ([]intent.Awaiting, error)
	Board(ctx context.Context, appID string, recent, intents int, only int64) (intent.Board, error)
}

// Feedback is the owner's feedback that waits for a chat turn
// (*intent.Interventions).
type Feedback interface {
	FeedbackWaiting(ctx context.Context) (int, error)
	FeedbackForChat(ctx context.Context, appID string) ([]intent.Feedback, error)
}

// Apps lists the applications (*app.Service).
type Apps interface {
	List(ctx context.Context) ([]app.App, error)
	Get(ctx context.Context, id string) (app.App, error)
}

// Candidates reads an application's candidate.json (*candidate.Service).
type Candidates interface {
	State(appID string) (candidate.State, error)
}

// Runs are the runs going in this server (*executor.Executor).
type Runs interface {
	Running() []executor.Run
	Progress(intentID int64) (executor.Progress, bool)
}

// Questions are the questions waiting at the gate (*gate.Gate).
type Questions interface {
	Pending(appID string) []gate.Question
}

// Deps are what the overview reads.
type Deps struct {
	Backlog    Backlog
	Attention  Attention
	Feedback   Feedback
	Apps       Apps
	Candidates Candidates
	Runs       Runs
	// Questions may be nil: no question ever waits.
	Questions Questions
	Spend     *spend.Book
	// ModelOf names the model a task's turn runs on as its usage row will
	// (provider:model), from the task's own or tier model ("" when
	// neither: the Settings model).
	ModelOf func(ref string) string
	// Limits are the turn limits in force (limits.json); nil is the AI
	// layer's defaults.
	Limits func() ai.Limits
	// Models name the Settings model a task with no model of its own or
	// of its tier runs on; nil is none chosen.
	Models Models
	// Requests, Deliveries and Chats are what an intent's page reads
	// besides; each may be nil: no requests, no deliveries, no chat turns.
	Requests   Requests
	Deliveries Deliveries
	Chats      Chats
	Now        func() time.Time
}

// Service reads the overview.
type Service struct {
	d Deps
}

// New builds the service.
func New(d Deps) *Service {
	if d.Now == nil {
		panic("overview: Deps.Now, the clock, is required")
	}
	if d.Limits == nil {
		d.Limits = func() ai.Limits { return ai.Limits{} }
	}
	if d.ModelOf == nil {
		d.ModelOf = func(ref string) string { return ref }
	}
	return &Service{d: d}
}

// NeedKind is what a need asks of the person.
type NeedKind string

// The kinds of need.
const (
	// NeedQuestion: a turn waits for Approve or Deny.
	NeedQuestion NeedKind = "question"
	// NeedAnswer: a builder asked a question about its task.
	NeedAnswer NeedKind = "answer"
	// NeedFailed: a task failed; its advice waits for Run again or a revision.
	NeedFailed NeedKind = "failed"
	// NeedRelease: a candidate passed all its own checks and is not current.
	NeedRelease NeedKind = "release"
	// NeedFeedback: a run stopped for the person's feedback, which waits
	// for the next chat turn about the application.
	NeedFeedback NeedKind = "feedback"
	// NeedApproval: a guided plan waits for the owner's approval.
	NeedApproval NeedKind = "approval"
	// NeedDraftQuestions: the engineer asked questions about a draft,
	// answered on the Request page of its application.
	NeedDraftQuestions NeedKind = "draft-questions"
	// NeedCap: a cap stopped an intent; raising it and Run go on.
	NeedCap NeedKind = "cap"
)

// Need is one thing waiting for the person.
type Need struct {
	Kind     NeedKind
	AppID    string
	IntentID int64
	TaskID   int64
	Slug     string
	// Release is the release that could be made current.
	Release string
	// Text is what waits, in a sentence.
	Text string
	// Advice is the planning model's, for a failed task.
	Advice string
}

// NeedsShown is how many needs of each kind a list shows; the rest are
// counted ("and 12 more").
const NeedsShown = 5

// Needs are what waits for the person: at most NeedsShown of each kind,
// oldest first, and how many there are of each.
type Needs struct {
	List  []Need
	Count map[NeedKind]int
}

// Total is how many needs there are of every kind.
func (n Needs) Total() int {
	t := 0
	for _, c := range n.Count {
		t += c
	}
	return t
}

// More is how many needs of a kind the list leaves out.
func (n Needs) More(kind NeedKind) int {
	shown := 0
	for _, x := range n.List {
		if x.Kind == kind {
			shown++
		}
	}
	return n.Count[kind] - shown
}

// add lists a need while fewer than NeedsShown of its kind are listed,
// and counts it either way.
func (n *Needs) add(x Need) {
	if n.Count == nil {
		n.Count = map[NeedKind]int{}
	}
	if n.Count[x.Kind] < NeedsShown {
		n.List = append(n.List, x)
	}
	n.Count[x.Kind]++
}

// InHand is the task a run is building now.
type InHand struct {
	IntentID, TaskID         int64
	AppID, Slug, RunID       string
	Stage, LastTool, Refusal string
	HostBuild                bool
	Started                  time.Time
	// Elapsed is the turn's time so far of its Limit; Idle is the turn's
	// idle limit in force.
	Elapsed, Limit, Idle time.Duration
	// Model is what the turn's model is doing now: reading, writing, or
	// waiting because the provider asked to.
	Model                                ai.Progress
	Turn, MaxTurns, Attempts, MaxCounted int
	Passed, Total                        int
	// Task is the task's spend over all its turns, Run the intent's since
	// Run was last pressed; both include the turn running now.
	Task, Run spend.Total
}

// AppOutlook is one application: its state, what is left and the estimate.
type AppOutlook struct {
	ID, Name string
	// State says where it stands, in a sentence.
	State   string
	Running bool
	Left    int
	// Estimate is set once MinSamples of its tasks completed with whole
	// rows; Samples says how many have so far.
	Estimate *spend.Estimate
	Samples  int
}

// Overview is the one read.
type Overview struct {
	At    time.Time
	Needs Needs
	// InHand are the tasks the runs going are building now, one a run
	// that is in a turn, in the order of their intents.
	InHand []InHand
	Today  spend.Total
	// Prices is prices.json as read: its budget, or why it prices nothing.
	Prices spend.Loaded
	Apps   []AppOutlook
	// Running says a run goes in this server (its task may be between
	// turns, with none in hand).
	Running bool
}

// Read answers the whole overview.
func (s *Service) Read(ctx context.Context) (Overview, error) {
	o := Overview{At: s.d.Now()}
	apps, err := s.d.Apps.List(ctx)
	if err != nil {
		return o, err
	}
	if o.Needs, err = s.needs(ctx, apps); err != nil {
		return o, err
	}
	gs, err := s.going(ctx)
	if err != nil {
		return o, err
	}
	live := lives(gs)
	byApp := map[string]going{}
	hands := map[string]*InHand{}
	for _, g := range gs {
		byApp[g.AppID] = g
		h, err := s.inHand(ctx, g, live)
		if err != nil {
			return o, err
		}
		if h != nil {
			o.InHand = append(o.InHand, *h)
			hands[g.AppID] = h
		}
	}
	if o.Today, o.Prices, err = s.d.Spend.Today(ctx, live); err != nil {
		return o, err
	}
	outlooks, err := s.d.Attention.Outlooks(ctx)
	if err != nil {
		return o, err
	}
	o.Running = len(gs) > 0
	for _, a := range apps {
		ol := outlooks[a.ID]
		g, running := byApp[a.ID]
		ao := AppOutlook{ID: a.ID, Name: a.Name, Left: ol.Left, Running: running}
		samples, err := s.d.Spend.Samples(ctx, a.ID)
		if err != nil {
			return o, err
		}
		if e, ok := spend.EstimateLeft(samples, ol.Left); ok {
			ao.Estimate, ao.Samples = &e, e.From
		} else {
			ao.Samples = e.From
		}
		ao.State = s.state(a, ol, ao.Running, g.IntentID, hands[a.ID])
		o.Apps = append(o.Apps, ao)
	}
	return o, nil
}

// state says where an application stands.
func (s *Service) state(a app.App, ol intent.Outlook, running bool, runningIntent int64, hand *InHand) string {
	var parts []string
	switch {
	case running && hand != nil:
		parts = append(parts, fmt.Sprintf("Intent #%d runs: %s is %s.", runningIntent, hand.Slug, hand.Stage))
	case running:
		parts = append(parts, fmt.Sprintf("Intent #%d runs.", runningIntent))
	case ol.Latest.Status == intent.IntentRunning:
		parts = append(parts, fmt.Sprintf("Intent #%d runs.", ol.Latest.ID))
	case ol.Latest.ID == 0:
		parts = append(parts, "No intent yet.")
	case ol.Latest.BeingWritten():
		parts = append(parts, fmt.Sprintf("Intent #%d is being written.", ol.Latest.ID))
	case ol.Latest.Status == intent.IntentDraft:
		parts = append(parts, fmt.Sprintf("Intent #%d is planned and waits for Run.", ol.Latest.ID))
	case ol.Latest.Status == intent.IntentStopped && ol.Latest.StopReason != "":
		parts = append(parts, fmt.Sprintf("Intent #%d stopped: %s", ol.Latest.ID, sentence(ol.Latest.StopReason)))
	case ol.Latest.Status == intent.IntentStopped:
		parts = append(parts, fmt.Sprintf("Intent #%d stopped.", ol.Latest.ID))
	case ol.Latest.Status == intent.IntentDone:
		parts = append(parts, fmt.Sprintf("Intent #%d is done.", ol.Latest.ID))
	}
	if a.CurrentRelease != "" {
		parts = append(parts, "Current release "+a.CurrentRelease+".")
	} else {
		parts = append(parts, "No release is current.")
	}
	return strings.Join(parts, " ")
}

func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!") {
		return s
	}
	return s + "."
}

// Needs are the things waiting for the person: questions at the gate,
// tasks that asked, failed tasks, and candidates that could be made
// current. The rail marks the Backlog while there is one.
func (s *Service) Needs(ctx context.Context) (Needs, error) {
	apps, err := s.d.Apps.List(ctx)
	if err != nil {
		return Needs{}, err
	}
	return s.needs(ctx, apps)
}

// NeedCount is how many things wait for the person, for the rail's mark
// on every page: counts, never the lists.
func (s *Service) NeedCount(ctx context.Context) (int, error) {
	apps, err := s.d.Apps.List(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	if s.d.Questions != nil {
		for _, a := range apps {
			n += len(s.d.Questions.Pending(a.ID))
		}
	}
	waiting, err := s.d.Attention.WaitingCount(ctx)
	if err != nil {
		return 0, err
	}
	feedback, err := s.d.Feedback.FeedbackWaiting(ctx)
	if err != nil {
		return 0, err
	}
	awaiting, err := s.awaiting(ctx)
	if err != nil {
		return 0, err
	}
	return n + waiting + feedback + len(awaiting) + len(s.releases(apps)), nil
}

// questions is "1 question" or "3 questions".
func questions(n int) string {
	if n == 1 {
		return "1 question"
	}
	return fmt.Sprintf("%d questions", n)
}

// awaiting are the intents that wait for the owner rather than for a
// task: one a cap stopped, a guided plan waiting for approval, and a
// draft whose engineer asked questions.
func (s *Service) awaiting(ctx context.Context) ([]Need, error) {
	rows, err := s.d.Attention.AwaitingOwner(ctx)
	if err != nil {
		return nil, err
	}
	var out []Need
	for _, a := range rows {
		if a.StopReason != "" {
			out = append(out, Need{Kind: NeedCap, AppID: a.AppID, IntentID: a.IntentID,
				Text: fmt.Sprintf("%s: intent #%d stopped at a cap. %s", a.AppID, a.IntentID, a.StopReason)})
			continue
		}
		if a.Questions > 0 {
			out = append(out, Need{Kind: NeedDraftQuestions, AppID: a.AppID, IntentID: a.IntentID,
				Text: fmt.Sprintf("%s: the engineer asks %s about the draft of intent #%d.", a.AppID, questions(a.Questions), a.IntentID)})
			continue
		}
		d, err := s.d.Backlog.Get(ctx, a.IntentID)
		if err != nil {
			return nil, err
		}
		if s.awaitsApproval(ctx, d) {
			out = append(out, Need{Kind: NeedApproval, AppID: a.AppID, IntentID: a.IntentID,
				Text: fmt.Sprintf("%s: the guided plan of intent #%d waits for your approval.", a.AppID, a.IntentID)})
		}
	}
	return out, nil
}

func (s *Service) needs(ctx context.Context, apps []app.App) (Needs, error) {
	var out Needs
	if s.d.Questions != nil {
		for _, a := range apps {
			for _, q := range s.d.Questions.Pending(a.ID) {
				out.add(Need{Kind: NeedQuestion, AppID: a.ID, Text: "The engineer asks about " + a.ID + ": " + q.Text})
			}
		}
	}
	waiting, err := s.d.Attention.WaitingTasks(ctx, NeedsShown)
	if err != nil {
		return out, err
	}
	for _, w := range waiting.Tasks {
		n := Need{AppID: w.AppID, IntentID: w.IntentID, TaskID: w.TaskID, Slug: w.Slug}
		switch w.Status {
		case intent.TaskNeedsAnswer:
			n.Kind, n.Text = NeedAnswer, w.Slug+" asks: "+w.Question
		default:
			n.Kind, n.Advice = NeedFailed, w.Advice
			n.Text = w.Slug + " failed"
			if w.Reason != "" {
				n.Text += ": " + sentence(w.Reason)
			} else {
				n.Text += "."
			}
		}
		out.add(n)
	}
	if out.Count == nil {
		out.Count = map[NeedKind]int{}
	}
	// The tasks beyond the list are counted, not read.
	out.Count[NeedAnswer] = waiting.Asked
	out.Count[NeedFailed] = waiting.Failed
	for _, a := range apps {
		fb, err := s.d.Feedback.FeedbackForChat(ctx, a.ID)
		if err != nil {
			return out, err
		}
		seen := map[int64]bool{}
		for _, f := range fb {
			if !seen[f.IntentID] {
				seen[f.IntentID] = true
				out.add(Need{Kind: NeedFeedback, AppID: a.ID, IntentID: f.IntentID,
					Text: fmt.Sprintf("%s: intent #%d stopped for your feedback; send the engineer a message and it revises the plan with it.", a.ID, f.IntentID)})
			}
		}
	}
	awaiting, err := s.awaiting(ctx)
	if err != nil {
		return out, err
	}
	for _, n := range awaiting {
		out.add(n)
	}
	for _, n := range s.releases(apps) {
		out.add(n)
	}
	return out, nil
}

// releases are the candidates that passed all their own checks and are
// not current.
func (s *Service) releases(apps []app.App) []Need {
	var out []Need
	running := map[string]bool{}
	for _, r := range s.d.Runs.Running() {
		running[r.AppID] = true
	}
	for _, a := range apps {
		// While a run builds it, the candidate changes under it and
		// cannot be made current anyway.
		if running[a.ID] {
			continue
		}
		st, err := s.d.Candidates.State(a.ID)
		if err != nil {
			// A damaged candidate.json is the application page's to say.
			continue
		}
		if rel, n, ok := passedNotCurrent(st, a.CurrentRelease); ok {
			out = append(out, Need{Kind: NeedRelease, AppID: a.ID, Release: rel,
				Text: fmt.Sprintf("%s: release %s passed all %d of its checks and is not current.", a.ID, rel, n)})
		}
	}
	return out
}

// passedNotCurrent is the candidate's release when its last build passed,
// its own checks (run on that release) all passed, and it is not current.
func passedNotCurrent(st candidate.State, current string) (string, int, bool) {
	b, c := st.Build, st.Checks
	if b == nil || !b.OK || b.Release == nil || b.Release.Revision != b.Revision || c == nil {
		return "", 0, false
	}
	if c.Release != b.Release.ID || len(c.Results) == 0 || c.Passed != len(c.Results) || b.Release.ID == current {
		return "", 0, false
	}
	return b.Release.ID, len(c.Results), true
}

// going is one run going, as the pages read it: its application, its
// progress, and its turn in hand as spend counts it (nil between turns).
type going struct {
	executor.Run
	p    executor.Progress
	live *spend.Live
}

// going are the runs going, in the order of their intents.
func (s *Service) going(ctx context.Context) ([]going, error) {
	var out []going
	for _, r := range s.d.Runs.Running() {
		g := going{Run: r}
		p, ok := s.d.Runs.Progress(r.IntentID)
		if ok {
			g.p = p
		}
		if ok && p.RunID != "" {
			t, err := s.d.Backlog.Task(ctx, p.TaskID)
			if err != nil {
				return nil, err
			}
			g.live = &spend.Live{RunID: p.RunID, AppID: r.AppID, Kind: intent.KindBuilder, Model: s.d.ModelOf(t.RunsOn),
				Input: int64(p.Usage.Input), Output: int64(p.Usage.Output)}
		}
		out = append(out, g)
	}
	return out, nil
}

// lives are the turns in hand of the runs going.
func lives(gs []going) []spend.Live {
	var out []spend.Live
	for _, g := range gs {
		if g.live != nil {
			out = append(out, *g.live)
		}
	}
	return out
}

// Live are the builder turns running now, as spend counts them.
func (s *Service) Live(ctx context.Context) ([]spend.Live, error) {
	gs, err := s.going(ctx)
	return lives(gs), err
}

// inHand is the task a run is building now, or nil between turns.
func (s *Service) inHand(ctx context.Context, g going, live []spend.Live) (*InHand, error) {
	p := g.p
	if g.live == nil {
		return nil, nil
	}
	t, err := s.d.Backlog.Task(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	lim := s.d.Limits().WithDefaults()
	h := &InHand{IntentID: p.IntentID, TaskID: p.TaskID, AppID: g.AppID, Slug: p.Slug, RunID: p.RunID,
		Stage: p.Stage, LastTool: p.LastTool, Refusal: p.Refusal, HostBuild: p.HostBuild, Started: p.Started,
		Limit: lim.Wall, Idle: lim.Idle, Model: p.Model, Turn: p.Turn, MaxTurns: verdict.MaxTurns, Attempts: p.Counted, MaxCounted: verdict.MaxCounted,
		Passed: p.Passed, Total: p.Total}
	if !p.Started.IsZero() {
		h.Elapsed = min(max(s.d.Now().Sub(p.Started), 0), h.Limit)
	}
	turns, _, err := s.d.Spend.Turns(ctx, fmt.Sprintf("intent-%d-", p.IntentID), live)
	if err != nil {
		return nil, err
	}
	started, err := s.d.Attention.RunStartedAt(ctx, p.IntentID)
	if err != nil {
		return nil, err
	}
	taskRuns := map[string]bool{AdviceRunID(p.IntentID, p.Slug): true}
	for _, id := range t.RunIDs {
		taskRuns[id] = true
	}
	for _, u := range turns {
		if taskRuns[u.RunID] || u.RunID == p.RunID {
			h.Task = h.Task.Plus(u.Total)
		}
		if !u.At.Before(started) {
			h.Run = h.Run.Plus(u.Total)
		}
	}
	return h, nil
}

// Models are the providers' defaults (*provider.Registry).
type Models interface {
	DefaultModel() string
	InUse() string
}

// ModelOf names a task's model as the turn's usage row will: its own or
// tier model, else the Settings model; a bare id goes to the provider in
// use, as provider:model.
func ModelOf(m Models) func(ref string) string {
	return func(ref string) string {
		if ref == "" {
			ref = m.DefaultModel()
		}
		name, model, err := plan.ParseModelRef(ref)
		if err != nil || name != "" {
			return ref
		}
		if p := m.InUse(); p != "" {
			return p + ":" + model
		}
		return model
	}
}

// AdviceRunID is the run id the advice about a failed task is recorded
// under (the executor writes it so).
func AdviceRunID(intentID int64, slug string) string {
	return fmt.Sprintf("intent-%d-%s-advice", intentID, slug)
}

// IntentSpend is what an intent's turns used: in all, per task, and each
// task's turns.
type IntentSpend struct {
	Total spend.Total
	Tasks map[int64]spend.Total
	Turns map[int64][]spend.Turn
	// Prices is prices.json as read.
	Prices spend.Loaded
}

// Intent is what the intent's turns used and cost, the running turn
// included, with each turn given to its task.
func (s *Service) Intent(ctx context.Context, d intent.IntentDetail) (IntentSpend, error) {
	out := IntentSpend{Tasks: map[int64]spend.Total{}, Turns: map[int64][]spend.Turn{}}
	live, err := s.Live(ctx)
	if err != nil {
		return out, err
	}
	turns, prices, err := s.d.Spend.Turns(ctx, fmt.Sprintf("intent-%d-", d.ID), live)
	if err != nil {
		return out, err
	}
	out.Prices = prices
	if len(turns) == 0 {
		return out, nil // nothing to share out among the tasks
	}
	owner := map[string]int64{}
	for _, t := range d.Tasks {
		owner[AdviceRunID(d.ID, t.Slug)] = t.ID
		for _, id := range t.RunIDs {
			owner[id] = t.ID
		}
	}
	for _, u := range turns {
		out.Total = out.Total.Plus(u.Total)
		if id, ok := owner[u.RunID]; ok {
			out.Tasks[id] = out.Tasks[id].Plus(u.Total)
			out.Turns[id] = append(out.Turns[id], u)
		}
	}
	return out, nil
}

// Task is what the task's turns used and cost, the running turn included.
func (s *Service) Task(ctx context.Context, t intent.TaskDetail) (IntentSpend, error) {
	return s.Intent(ctx, intent.IntentDetail{Intent: intent.Intent{ID: t.IntentID, AppID: t.AppID},
		Tasks: []intent.BacklogTask{t.BacklogTask}})
}

// Spend is the report of the last days, the running turns counted today.
func (s *Service) Spend(ctx context.Context, days int) (spend.Report, error) {
	live, err := s.Live(ctx)
	if err != nil {
		return spend.Report{}, err
	}
	return s.d.Spend.Days(ctx, days, live)
}
