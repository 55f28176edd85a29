package handlers

import (
	"context"
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
	// SendAfter starts a chat turn once its checks pass, writing the
	// words down with journal first.
	SendAfter(ctx context.Context, appID, message string, journal func() (int64, error)) (chat.Turn, error)
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

func (h *Handlers) requestPage(c *fiber.Ctx) error {
	return h.renderRequest(c, views.Refusal{}, false)
}

func (h *Handlers) requestLive(c *fiber.Ctx) error {
	return h.renderRequest(c, views.Refusal{}, true)
}

func (h *Handlers) renderRequest(c *fiber.Ctx, r views.Refusal, fragment bool) error {
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
	}
	apps, err := h.apps.List(ctx)
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
func (h *Handlers) fillConversation(ctx context.Context, p *views.RequestView) error {
	turns, err := h.chats.Turns(ctx, p.AppID, conversationTurns)
	if err != nil {
		return err
	}
	for _, t := range turns {
		p.Turns = append(p.Turns, views.ChatTurnView{Message: t.Message, Reply: t.Reply, Status: string(t.Status),
			Sentence: t.Sentence, At: clock(t.StartedAt), Lines: t.Lines})
	}
	p.Running = h.chats.Running(p.AppID)
	if mp, ok := h.chats.Progress(p.AppID); ok && p.Running {
		p.Model = mp.Sentence(h.now())
	}
	if h.gate != nil {
		for _, q := range h.gate.Pending(p.AppID) {
			p.Asks = append(p.Asks, views.AskView{ID: q.ID, Text: q.Text})
		}
	}
	st, ok, err := h.requests.Latest(ctx, p.AppID)
	if err != nil || !ok {
		return err
	}
	if st.IntentID != 0 {
		d, err := h.backlog.Get(ctx, st.IntentID)
		if err != nil {
			return err
		}
		if d.Status == intent.IntentDone || d.Status == intent.IntentWithdrawn {
			// A finished request leaves its delivery on the page; the form starts a new one.
			if d.Status == intent.IntentDone && h.deliveries != nil {
				if dv, err := h.deliveries.Get(ctx, d.ID); err == nil {
					p.Delivery = deliveryView(dv)
				}
			}
			return nil
		}
		p.Questions = d.Questions
	}
	p.RequestID, p.Revision, p.Mode, p.Text, p.IntentID = st.ID, st.Revision, st.Mode, st.Text, st.IntentID
	return nil
}

// localTyped carries what a refused send typed back to the page.
const localTyped = "typed"

// typed is what the person typed in a refused send.
type typed struct{ text, mode string }

// words is what the owner sent from the Request page.
type words struct {
	appID, text, op string
	id              int64
	seen            int
}

// talk journals the owner's words with write and starts the engineer's
// turn with them; a refusal is shown on the Request page.
func (h *Handlers) talk(c *fiber.Ctx, write func(ctx context.Context, w words) (request.State, error)) error {
	ctx := c.UserContext()
	appID, err := h.apps.Selected(ctx)
	if err != nil {
		return err
	}
	if appID == "" {
		return h.renderRequest(c.Status(fiber.StatusConflict), views.Refusal{At: "request", Sentence: "Choose an application first."}, false)
	}
	w := words{appID: appID, text: c.FormValue("text"), op: c.FormValue("op")}
	w.id, _ = strconv.ParseInt(c.FormValue("request"), 10, 64)
	w.seen, _ = strconv.Atoi(c.FormValue("seen"))
	err = h.sendToEngineer(ctx, appID, w.op, func() (request.State, error) { return write(ctx, w) }, w.text)
	if status, sentence, ok := refused(err); ok {
		// The page keeps what the person typed, and the mode they chose.
		c.Status(status)
		c.Locals(localTyped, typed{text: w.text, mode: c.FormValue("mode")})
		return h.renderRequest(c, views.Refusal{At: "request", Sentence: sentence}, false)
	}
	if err != nil {
		return err
	}
	return c.Redirect("/request", fiber.StatusSeeOther)
}

// requestSend starts a request, or sends the next message of the open one,
// and starts the engineer's turn. A repeated submit starts nothing.
func (h *Handlers) requestSend(c *fiber.Ctx) error {
	mode := c.FormValue("mode")
	return h.talk(c, func(ctx context.Context, w words) (request.State, error) {
		if w.id == 0 {
			return h.requests.Create(ctx, w.appID, w.text, mode, w.op)
		}
		return h.requests.Message(ctx, w.id, w.seen, w.op, w.text)
	})
}

// requestAnswer answers the engineer's questions: a new turn in which it
// folds the answers into its analysis.
func (h *Handlers) requestAnswer(c *fiber.Ctx) error {
	return h.talk(c, func(ctx context.Context, w words) (request.State, error) {
		return h.requests.Answer(ctx, w.id, w.seen, w.op, w.text)
	})
}

// sendToEngineer starts a chat turn with the owner's words, journaling
// them once the turn can start: a refused send (no model, a turn already
// running) writes nothing. A repeated operation starts nothing.
func (h *Handlers) sendToEngineer(ctx context.Context, appID, op string, journal func() (request.State, error), text string) error {
	repeated, err := h.requests.OpDone(ctx, op)
	if err != nil {
		return err
	}
	if repeated {
		_, err := journal() // answers what the first one wrote
		return err
	}
	_, err = h.chats.SendAfter(ctx, appID, text, func() (int64, error) {
		st, err := journal()
		return st.ID, err
	})
	return err
}

func (h *Handlers) requestSelect(c *fiber.Ctx) error {
	if err := h.apps.Select(c.UserContext(), c.FormValue("app")); err != nil {
		return err
	}
	return c.Redirect("/request", fiber.StatusSeeOther)
}

// intentApprove approves the exact plan of a guided request.
func (h *Handlers) intentApprove(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	seen, _ := strconv.Atoi(c.FormValue("seen"))
	return h.intentAction(c, id, "run", func() error {
		st, err := h.requests.ForIntent(c.UserContext(), id)
		if err != nil {
			return err
		}
		_, err = h.requests.Approve(c.UserContext(), st.ID, seen, c.FormValue("op"))
		return err
	})
}

func (h *Handlers) questionApprove(c *fiber.Ctx) error { return h.decide(c, true) }

func (h *Handlers) questionDeny(c *fiber.Ctx) error { return h.decide(c, false) }

// decide answers a question the engineer's turn asked the person.
func (h *Handlers) decide(c *fiber.Ctx, approve bool) error {
	appID, err := h.apps.Selected(c.UserContext())
	if err != nil {
		return err
	}
	qid, err := strconv.ParseInt(c.Params("qid"), 10, 64)
	if err != nil || h.gate == nil {
		return fiber.NewError(fiber.StatusNotFound, "There is no such question.")
	}
	err = h.gate.Decide(appID, qid, approve)
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderRequest(c, views.Refusal{At: "request", Sentence: sentence}, false)
	}
	if err != nil {
		return err
	}
	return c.Redirect("/request", fiber.StatusSeeOther)
}
