package handlers

import (
	"bytes"
	"context"
	"io"
	"path"
	"strings"

	"github.com/gofiber/fiber/v2"

	"autoapp/intent/delivery"
	"autoapp/intent/refusal"
)

// Deliveries is what the handlers need of the deliveries.
type Deliveries interface {
	Get(ctx context.Context, intentID int64) (delivery.Delivery, error)
	Artifact(ctx context.Context, intentID int64, path string) (delivery.Blob, delivery.Artifact, error)
	Archive(ctx context.Context, intentID int64, w io.Writer) (string, error)
}

// deliveryArtifact downloads one artifact of an intent's delivery: the git
// blob's bytes at the delivery's revision, never shown in the page.
func (h *Handlers) deliveryArtifact(c *fiber.Ctx) error {
	if h.deliveries == nil {
		return fiber.NewError(fiber.StatusNotFound, "This launcher keeps no deliveries.")
	}
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	p := c.Query("path")
	if p == "" {
		return fiber.NewError(fiber.StatusBadRequest, "Name the artifact to download.")
	}
	blob, a, err := h.deliveries.Artifact(c.UserContext(), id, p)
	if err != nil {
		return deliveryRefusal(err)
	}
	download(c, path.Base(a.Path), a.Media)
	return c.Send(blob.Data)
}

// deliveryArchive downloads the whole workspace at the delivery's revision
// as a tar.gz. It is made in full before anything is sent, so a failure
// is told as an error page, never as a cut archive.
func (h *Handlers) deliveryArchive(c *fiber.Ctx) error {
	if h.deliveries == nil {
		return fiber.NewError(fiber.StatusNotFound, "This launcher keeps no deliveries.")
	}
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	name, err := h.deliveries.Archive(c.UserContext(), id, &buf)
	if err != nil {
		return deliveryRefusal(err)
	}
	download(c, name, "application/gzip")
	return c.Send(buf.Bytes())
}

// download sets the headers of a file the browser saves and never renders:
// an attachment, of its declared type only, not kept, and sandboxed should
// it be opened anyway.
func download(c *fiber.Ctx, name, media string) {
	c.Set(fiber.HeaderContentType, media)
	c.Set(fiber.HeaderContentDisposition, contentDisposition(name))
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderCacheControl, "private, no-store")
	c.Set(fiber.HeaderContentSecurityPolicy, "sandbox")
}

// contentDisposition is "attachment" with name as RFC 6266 asks: a quoted
// ASCII filename every browser reads (with _ for what cannot be quoted
// safely) and, when that lost something, filename* with the UTF-8 name.
func contentDisposition(name string) string {
	var ascii strings.Builder
	exact := true
	for _, r := range name {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' || r == '%' {
			ascii.WriteByte('_')
			exact = false
			continue
		}
		ascii.WriteRune(r)
	}
	v := `attachment; filename="` + ascii.String() + `"`
	if !exact {
		v += "; filename*=UTF-8''" + percentEncode(name)
	}
	return v
}

// percentEncode encodes s as RFC 8187's value-chars: attr-chars as they
// are, every other byte of its UTF-8 as %XX.
func percentEncode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if 'a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || '0' <= ch && ch <= '9' ||
			strings.IndexByte("!#$&+-.^_`|~", ch) >= 0 {
			b.WriteByte(ch)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[ch>>4])
		b.WriteByte(hex[ch&0x0f])
	}
	return b.String()
}

// deliveryRefusal gives a refusal of the deliveries its status, so the
// error handler tells its sentence.
func deliveryRefusal(err error) error {
	if de, ok := refusal.As(err); ok {
		return fiber.NewError(refusal.Status(de.Code), de.Message)
	}
	return err
}
