package handlers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"autoapp/intent/delivery"
	"autoapp/intent/refusal"
	"autoapp/views"
)

// Deliveries is what the handlers need of the deliveries.
type Deliveries interface {
	Get(ctx context.Context, intentID int64) (delivery.Delivery, error)
	Artifact(ctx context.Context, intentID int64, path string) (delivery.Blob, delivery.Artifact, error)
	Archive(ctx context.Context, intentID int64, w io.Writer) (string, error)
}

// deliveryDownloads are the files of an intent's delivery, saved by the
// browser and never rendered (Deliveries).
type deliveryDownloads struct{ frame }

// deliveryArtifact downloads one artifact of an intent's delivery: the git
// blob's bytes at the delivery's revision, never shown in the page.
func (h *deliveryDownloads) deliveryArtifact(c *fiber.Ctx) error {
	if h.Deliveries == nil {
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
	blob, a, err := h.Deliveries.Artifact(c.UserContext(), id, p)
	if err != nil {
		return deliveryRefusal(err)
	}
	download(c, path.Base(a.Path), a.Media)
	return c.Send(blob.Data)
}

// deliveryArchive downloads the whole workspace at the delivery's revision
// as a tar.gz. It is made in full before anything is sent, so a failure
// is told as an error page, never as a cut archive.
func (h *deliveryDownloads) deliveryArchive(c *fiber.Ctx) error {
	if h.Deliveries == nil {
		return fiber.NewError(fiber.StatusNotFound, "This launcher keeps no deliveries.")
	}
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	name, err := h.Deliveries.Archive(c.UserContext(), id, &buf)
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

func deliveryView(d delivery.Delivery) *views.DeliveryView {
	v := &views.DeliveryView{At: clock(d.At), Revision: short(d.Revision), Release: d.ReleaseID,
		ArchiveHref: fmt.Sprintf("/backlog/intents/%d/delivery/workspace.tar.gz", d.IntentID)}
	for _, a := range d.Artifacts {
		v.Artifacts = append(v.Artifacts, views.ArtifactRow{Path: a.Path, Size: byteSize(a.Size), SHA256: a.SHA256, Media: a.Media,
			Href: fmt.Sprintf("/backlog/intents/%d/delivery/artifact?path=%s", d.IntentID, url.QueryEscape(a.Path))})
	}
	for _, p := range d.Problems {
		v.Problems = append(v.Problems, p.Path+": "+p.Message)
	}
	v.Needs = d.Evidence.Needs
	if d.Evidence.HeadAtDelivery != "" {
		v.Moved = fmt.Sprintf("The workspace changed after the last verdict; the delivery is of %s, the revision the checks passed at.", short(d.Revision))
	}
	for _, t := range d.Evidence.Tasks {
		row := views.DeliveredTask{Slug: t.Slug, Revision: short(t.Revision)}
		if row.Revision == "" {
			row.Revision = short(d.Revision)
		}
		for _, n := range slices.Sorted(maps.Keys(t.ExampleHashes)) {
			id := fmt.Sprintf("%s-c%d", t.Slug, n)
			row.Examples = append(row.Examples, views.DeliveredExample{ID: id, Hash: t.ExampleHashes[n]})
		}
		v.Evidence = append(v.Evidence, row)
	}
	return v
}

// byteSize is a size as people read it: "714 B", "1.2 kB", "3.4 MB".
func byteSize(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d\u00a0B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f\u00a0kB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f\u00a0MB", float64(n)/(1000*1000))
}
