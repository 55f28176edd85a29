package handlers

import (
	"github.com/gofiber/fiber/v2"

	"autoapp/views"
)

func (h *Handlers) backlog(c *fiber.Ctx) error {
	return render(c, views.BacklogPage(shell(c, "Backlog", "backlog")))
}

func (h *Handlers) request(c *fiber.Ctx) error {
	return render(c, views.RequestPage(shell(c, "Request", "request")))
}

func (h *Handlers) knowledge(c *fiber.Ctx) error {
	return render(c, views.KnowledgePage(shell(c, "Knowledge", "knowledge")))
}

func (h *Handlers) settings(c *fiber.Ctx) error {
	return render(c, views.SettingsPage(shell(c, "Settings", "settings")))
}
