package handlers

import (
	"mime"
	"path"

	"github.com/gofiber/fiber/v2"

	"autoapp/static"
)

// staticFile serves an embedded file. Its URL carries a content hash, so
// browsers may keep it for a year.
func staticFile(c *fiber.Ctx) error {
	name := c.Params("name")
	b, err := static.Files.ReadFile(name)
	if err != nil {
		return fiber.NewError(fiber.StatusNotFound, "There is no such file.")
	}
	c.Set(fiber.HeaderContentType, mime.TypeByExtension(path.Ext(name)))
	c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	return c.Send(b)
}

func favicon(c *fiber.Ctx) error {
	return c.Redirect(static.Path("icon.svg"), fiber.StatusMovedPermanently)
}
