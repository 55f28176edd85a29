package handlers

import (
	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"autoapp/views"
)

// plain renders a page that needs nothing but its frame.
func (h *Handlers) plain(title, current string, comp func(views.Shell) templ.Component) fiber.Handler {
	return func(c *fiber.Ctx) error {
		s, err := h.page(c, title, current)
		if err != nil {
			return err
		}
		return render(c, comp(s))
	}
}
