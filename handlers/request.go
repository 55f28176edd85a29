package handlers

import (
	"context"
	"fmt"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"autoapp/executor/ai"
	"autoapp/executor/chat"
	"autoapp/executor/gate"
	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/request"
	"autoapp/views"
)

// Chats is what the handlers need of the chat turns.
type Chats interface {
	// Say journals the owner's words and starts the engineer's turn on
	// them, in one transaction, or refuses and writes nothing.
	Say(ctx context.Context, appID string, w request.Say) (request.State, error)
	Turns(ctx context.Context, appID string, limit int) ([]chat.Turn, error)
	Running(appID string) bool
	// Progress is what the running turn's model is doing now.
	Progress(appID string) (ai.Progress, bool)
}

// Requests is what the handlers need of the requests' journals.
type Requests interface {
	Create(ctx context.Context, appID, text, mode, opID string) (request.State, error)
	Message(ctx context.Context, id int64, seen int, opID, text string) (request.State, error)
	Answer(ctx context.Context, id int64, seen int, opID, text string) (request.State, error)
	Approve(ctx context.Context, id int64, seen int, opID string) (request.State, error)
	ApproveShown(ctx context.Context, id int64, seen int, opID, shown string) (request.State, error)
	WithdrawApproval(ctx context.Context, intentID int64, seen int, opID string) (request.State, error)
	SetMode(ctx context.Context, id int64, seen int, opID, mode string) (request.State, error)
	SetIntentMode(ctx context.Context, intentID int64, seen int, opID, mode string) (request.State, error)
	Latest(ctx context.Context, appID string) (request.State, bool, error)
	ForIntent(ctx context.Context, intentID int64) (request.State, error)
	OpDone(ctx context.Context, opID string) (bool, error)
}

// Gate is the person's questions a chat turn waits on.
type Gate interface {
	Pending(appID string) []gate.Question
	Decide(appID string, id int64, approve bool) error
}

// conversationTurns bounds the conversation a page shows.
const conversationTurns = 40

// requestPages are the Request page: the conversation with the engineer,
// the questions it asks and the request's mode (Chats, Requests, Gate,
// Backlog, Deliveries, Apps).
type requestPages struct{ frame }

func (h *requestPages) requestPage(c *fiber.Ctx) error {
	return h.renderRequest(c, views.Refusal{}, false)
}

func (h *requestPages) requestLive(c *fiber.Ctx) error {
	return h.renderRequest(c, views.Refusal{}, true)
}

func (h *requestPages) renderRequest(c *fiber.Ctx, r views.Refusal, fragment bool) error {
	ctx := c.UserContext()
	s, err := h.page(c, "Request", "request")
	if err != nil {
		return err
	}
	op, err := newOp()
	if err != nil {
		return err
	}
	p := views.RequestView{AppID: s.AppID, AppName: s.AppName, Refusal: r, Op: op}
	if t, ok := c.Locals(localTyped).(typed); ok {
		p.Typed, p.TypedMode = t.text, t.mode
	} else if id, err := strconv.ParseInt(c.Query("revise"), 10, 64); err == nil && id > 0 {
		// Opened from a failed task: the message names it, for the person
		// to finish.
		if t, err := h.Backlog.Task(ctx, id); err == nil {
			p.Revising = t.Slug
			p.Typed = fmt.Sprintf("Please revise %s (%q, intent #%d): ", t.Slug, t.Title, t.IntentID)
		}
	}
	apps, err := h.Apps.List(ctx)
	if err != nil {
		return err
	}
	for _, a := range apps {
		p.Apps = append(p.Apps, appRow(a, s.AppID))
	}
	for _, t := range app.Templates {
		p.Templates = append(p.Templates, views.TemplateOption{Key: t.Key, Title: t.Title, About: t.About})
	}
	if s.AppID != "" {
		if err := h.fillConversation(ctx, &p); err != nil {
			return err
		}
	}
	if fragment {
		return render(c, views.RequestLive(s, p))
	}
	return render(c, views.RequestPageView(s, p))
}

// fillConversation reads the application's chat turns, its open request
// and the questions its engineer waits on.
func (h *requestPages) fillConversation(ctx context.Context, p *views.RequestView) error {
	turns, err := h.Chats.Turns(ctx, p.AppID, conversationTurns)
	if err != nil {
		return err
	}
	for _, t := range turns {
		p.Turns = append(p.Turns, views.ChatTurnView{Message: t.Message, Reply: t.Reply, Status: string(t.Status),
			Sentence: t.Sentence, At: clock(t.StartedAt), Lines: t.Lines})
	}
	p.Running = h.Chats.Running(p.AppID)
	if mp, ok := h.Chats.Progress(p.AppID); ok && p.Running {
		p.Model = mp.Sentence(h.Now())
	}
	if h.Gate != nil {
		for _, q := range h.Gate.Pending(p.AppID) {
			p.Asks = append(p.Asks, views.AskView{ID: q.ID, Text: q.Text})
		}
	}
	st, ok, err := h.Requests.Latest(ctx, p.AppID)
	if err != nil || !ok {
		return err
	}
	running := false
	if st.IntentID != 0 {
		d, err := h.Backlog.Get(ctx, st.IntentID)
		if err != nil {
			return err
		}
		running = d.Status == intent.IntentRunning
		if d.Status == intent.IntentDone || d.Status == intent.IntentWithdrawn {
			// A finished request leaves its delivery on the page; the form starts a new one.
			if d.Status == intent.IntentDone && h.Deliveries != nil {
				if dv, err := h.Deliveries.Get(ctx, d.ID); err == nil {
					p.Delivery = deliveryView(dv)
					p.Delivery.Plan = deliveredPlan(&st)
				}
			}
			return nil
		}
		for _, q := range st.Asking(d.Questions) {
			p.Questions = append(p.Questions, views.QuestionView{ID: q.Revision, Text: q.Text})
		}
	}
	p.RequestID, p.Revision, p.Mode, p.Text, p.IntentID = st.ID, st.Revision, st.Mode, st.Text, st.IntentID
	p.ModeSwitch = modeSwitch("/request/mode", st.ID, st, p.Op)
	p.ModeSwitch.Running = running
	return nil
}

// modeSwitch is the control of a request's mode, posting to action; the
// Request page names the request (requestID), the intent's page its intent.
func modeSwitch(action string, requestID int64, st request.State, op string) *views.ModeSwitch {
	to := request.ModeGuided
	if st.Mode == request.ModeGuided {
		to = request.ModeAutonomous
	}
	return &views.ModeSwitch{Action: action, RequestID: requestID, Mode: st.Mode, To: to, Seen: st.Revision, Op: op,
		VoidsApproval: st.Approved != ""}
}

// requestMode switches the open request's mode on the Request page.
func (h *requestPages) requestMode(c *fiber.Ctx) error {
	id, _ := strconv.ParseInt(c.FormValue("request"), 10, 64)
	seen, _ := strconv.Atoi(c.FormValue("seen"))
	_, err := h.Requests.SetMode(c.UserContext(), id, seen, c.FormValue("op"), c.FormValue("mode"))
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderRequest(c, views.Refusal{At: "mode", Sentence: sentence}, false)
	}
	if err != nil {
		return err
	}
	return c.Redirect("/request", fiber.StatusSeeOther)
}

// localTyped carries what a refused send typed back to the page.
const localTyped = "typed"

// typed is what the person typed in a refused send.
type typed struct{ text, mode string }

// talk says the owner's words to the engineer: one call journals them and
// starts the engineer's turn, or refuses and writes nothing; a refusal is
// shown on the Request page, which keeps what the person typed. The turn is
// about the application the words name, else the one selected (the chat
// service decides, and selects the one they name).
func (h *requestPages) talk(c *fiber.Ctx, answer bool) error {
	ctx := c.UserContext()
	appID, err := h.Apps.Selected(ctx)
	if err != nil {
		return err
	}
	w := request.Say{Text: c.FormValue("text"), Op: c.FormValue("op"), Mode: c.FormValue("mode"), Answer: answer}
	w.ID, _ = strconv.ParseInt(c.FormValue("request"), 10, 64)
	w.Seen, _ = strconv.Atoi(c.FormValue("seen"))
	if answer {
		// One box a question, each named by the question's id.
		for _, q := range c.Context().PostArgs().PeekMulti("question") {
			id, _ := strconv.Atoi(string(q))
			w.Answers = append(w.Answers, request.Answer{Question: id, Text: c.FormValue("answer-" + string(q))})
		}
		if len(w.Answers) == 0 {
			w.Question, _ = strconv.Atoi(c.FormValue("question"))
		}
	}
	_, err = h.Chats.Say(ctx, appID, w)
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		c.Locals(localTyped, typed{text: w.Text, mode: w.Mode})
		return h.renderRequest(c, views.Refusal{At: "request", Sentence: sentence}, false)
	}
	if err != nil {
		return err
	}
	return c.Redirect("/request", fiber.StatusSeeOther)
}

// requestSend starts a request, or sends the next message of the open one,
// and starts the engineer's turn. A repeated submit starts nothing.
func (h *requestPages) requestSend(c *fiber.Ctx) error { return h.talk(c, false) }

// requestAnswer answers the engineer's questions: a new turn in which it
// folds the answers into its analysis.
func (h *requestPages) requestAnswer(c *fiber.Ctx) error { return h.talk(c, true) }

func (h *requestPages) requestSelect(c *fiber.Ctx) error {
	if err := h.Apps.Select(c.UserContext(), c.FormValue("app")); err != nil {
		return err
	}
	return c.Redirect("/request", fiber.StatusSeeOther)
}

func (h *requestPages) questionApprove(c *fiber.Ctx) error { return h.decide(c, true) }

func (h *requestPages) questionDeny(c *fiber.Ctx) error { return h.decide(c, false) }

// decide answers a question the engineer's turn asked the person.
func (h *requestPages) decide(c *fiber.Ctx, approve bool) error {
	appID, err := h.Apps.Selected(c.UserContext())
	if err != nil {
		return err
	}
	qid, err := strconv.ParseInt(c.Params("qid"), 10, 64)
	if err != nil || h.Gate == nil {
		return fiber.NewError(fiber.StatusNotFound, "There is no such question.")
	}
	err = h.Gate.Decide(appID, qid, approve)
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderRequest(c, views.Refusal{At: "request", Sentence: sentence}, false)
	}
	if err != nil {
		return err
	}
	return c.Redirect("/request", fiber.StatusSeeOther)
}

// deliveredPlan says which plan version a delivery was built from: the one
// the owner approved, or, autonomous, the last one submitted; "" for an
// intent that answers no request.
func deliveredPlan(st *request.State) string {
	if st == nil || len(st.Plans) == 0 {
		return ""
	}
	short := func(h string) string { return h[:min(12, len(h))] }
	if st.Mode == request.ModeGuided && st.Approved != "" {
		for i, p := range st.Plans {
			if p.Hash == st.Approved {
				return fmt.Sprintf("Built from plan version %d (%s), the version you approved.", i+1, short(p.Hash))
			}
		}
	}
	last := st.Plans[len(st.Plans)-1]
	return fmt.Sprintf("Built from plan version %d (%s), run as submitted: the request is %s.", len(st.Plans), short(last.Hash), st.Mode)
}
