package handlers

import (
	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"autoapp/views"
)

// render writes a component as the HTML response.
func render(c *fiber.Ctx, comp templ.Component) error {
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return comp.Render(c.UserContext(), c.Response().BodyWriter())
}

// shell is the frame of a page for this request.
func shell(c *fiber.Ctx, title, current string) views.Shell {
	s := views.Shell{Title: title, Current: current, CSRF: csrfToken(c)}
	if o, ok := c.Locals(localOwner).(string); ok {
		s.Owner = o
	}
	return s
}

// page is the frame of a signed-in page: the shell with the application
// selected last, and the rail's mark when something needs the person.
func (h *Handlers) page(c *fiber.Ctx, title, current string) (views.Shell, error) {
	return h.pageMarked(c, title, current, h.needsYou(c.UserContext()))
}

// pageMarked is page for a handler that has counted what needs the person
// already (it read the overview): the count is made once a request.
func (h *Handlers) pageMarked(c *fiber.Ctx, title, current string, needsYou int) (views.Shell, error) {
	s := shell(c, title, current)
	s.NeedsYou = needsYou
	id, err := h.apps.Selected(c.UserContext())
	if err != nil || id == "" {
		return s, err
	}
	a, err := h.apps.Get(c.UserContext(), id)
	if err != nil {
		return s, err
	}
	s.AppID, s.AppName = a.ID, a.Name
	return s, nil
}

// pageAbout is the frame of a page about one application (its own page,
// one of its intents): the rail names that application, whichever was
// selected last. Showing a page selects nothing.
func (h *Handlers) pageAbout(c *fiber.Ctx, title, current, appID, appName string) views.Shell {
	s := shell(c, title, current)
	s.NeedsYou = h.needsYou(c.UserContext())
	s.AppID, s.AppName = appID, appName
	return s
}

func errorPage(c *fiber.Ctx, status int, sentence string) templ.Component {
	return views.ErrorPage(shell(c, views.StatusTitle(status), ""), status, sentence)
}
