package handlers

import (
	"context"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"autoapp/intent"
	"autoapp/intent/notice"
	"autoapp/views"
)

// Notices are what a run needed of the owner, read by the console's tabs
// to raise a notification, and the webhook's outbox (*intent.Notices).
type Notices interface {
	After(ctx context.Context, id int64, limit int) ([]intent.Notice, error)
	Last(ctx context.Context) (int64, error)
	Outbox(ctx context.Context) (intent.Outbox, error)
}

// Webhook is the webhook's settings and its test (*notice.Book and
// *notice.Sender together).
type Webhook interface {
	Settings() (notice.Settings, string)
	Save(f notice.Form) (notice.Settings, error)
	Test(ctx context.Context) (string, error)
}

// noticesShown bounds the notices one poll answers.
const noticesShown = 20

// noticesJSON answers the notices after ?after=ID for a tab that raises
// notifications, and the newest id: a tab that asks without after hears
// only where to start, so nothing from before it is raised.
func (h *settingsPages) noticesJSON(c *fiber.Ctx) error {
	ctx := c.UserContext()
	last, err := h.Notices.Last(ctx)
	if err != nil {
		return err
	}
	type shown struct {
		ID       int64  `json:"id"`
		Title    string `json:"title"`
		Sentence string `json:"sentence"`
		Link     string `json:"link"`
	}
	out := struct {
		Last    int64   `json:"last"`
		Notices []shown `json:"notices"`
	}{Last: last, Notices: []shown{}}
	if raw := c.Query("after"); raw != "" {
		after, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || after < 0 {
			return fiber.NewError(fiber.StatusBadRequest, "after must be a notice id.")
		}
		ns, err := h.Notices.After(ctx, after, noticesShown)
		if err != nil {
			return err
		}
		for _, n := range ns {
			out.Notices = append(out.Notices, shown{ID: n.ID, Title: n.Kind.Title(), Sentence: n.Sentence, Link: n.Link})
		}
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(out)
}

// notificationsView is the Notifications card: the webhook as saved (or
// as typed after a refusal) and how its sending stands.
func (h *settingsPages) notificationsView(ctx context.Context, typed *views.NotificationsView) *views.NotificationsView {
	if h.Webhook == nil || h.Notices == nil {
		return nil
	}
	s, problem := h.Webhook.Settings()
	v := &views.NotificationsView{URL: s.URL, Format: s.Format, Problem: problem}
	if typed != nil {
		v.URL, v.Format = typed.URL, typed.Format
	}
	for _, k := range intent.NoticeKinds {
		on := s.Wants(k) || (s.URL == "" && typed == nil)
		if typed != nil {
			on = typed.Chosen[string(k)]
		}
		v.Kinds = append(v.Kinds, views.NoticeKindView{Kind: string(k), Title: k.Title(), On: on})
	}
	if o, err := h.Notices.Outbox(ctx); err == nil {
		v.Pending, v.GivenUp, v.LastError = o.Pending, o.GivenUp, o.LastError
	}
	return v
}

// notificationsSave checks and writes the webhook's settings.
func (h *settingsPages) notificationsSave(c *fiber.Ctx) error {
	if h.Webhook == nil {
		return fiber.NewError(fiber.StatusNotFound, "This launcher sends no notifications.")
	}
	f := notice.Form{URL: strings.TrimSpace(c.FormValue("url")), Format: c.FormValue("format")}
	typed := &views.NotificationsView{URL: f.URL, Format: f.Format, Chosen: map[string]bool{}}
	for _, k := range c.Request().PostArgs().PeekMulti("kinds") {
		f.Kinds = append(f.Kinds, string(k))
		typed.Chosen[string(k)] = true
	}
	_, err := h.Webhook.Save(f)
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderSettings(c, settingsNotes{refusal: views.Refusal{At: "notifications", Sentence: sentence}, typedNotifications: typed})
	}
	if err != nil {
		return err
	}
	return c.Redirect("/settings?saved=notifications#notifications", fiber.StatusSeeOther)
}

// notificationsTest sends one test notice through the webhook.
func (h *settingsPages) notificationsTest(c *fiber.Ctx) error {
	if h.Webhook == nil {
		return fiber.NewError(fiber.StatusNotFound, "This launcher sends no notifications.")
	}
	problem, err := h.Webhook.Test(c.UserContext())
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderSettings(c, settingsNotes{refusal: views.Refusal{At: "notifications", Sentence: sentence}})
	}
	if err != nil {
		return err
	}
	n := settingsNotes{notice: "The test notice was sent: the webhook answered."}
	if problem != "" {
		n = settingsNotes{refusal: views.Refusal{At: "notifications", Sentence: "The test notice was not sent. " + problem}}
	}
	return h.renderSettings(c, n)
}
