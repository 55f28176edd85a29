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

func errorPage(c *fiber.Ctx, status int, sentence string) templ.Component {
	return views.ErrorPage(shell(c, views.StatusTitle(status), ""), status, sentence)
}
