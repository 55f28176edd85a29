package views

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// markdown renders a plan's Markdown the way GitHub does, task lists
// included; goldmark never passes raw HTML through (it writes
// "<!-- raw HTML omitted -->"), and the policy below removes whatever else
// is not plain text structure.
var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// documentPolicy keeps what a rendered plan needs — headings, lists,
// emphasis, code, links, tables and the disabled checkboxes of a
// checklist — and nothing that runs or loads.
var documentPolicy = func() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.AllowElements("input")
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").OnElements("input")
	p.AllowAttrs("aria-label").Matching(regexp.MustCompile(`^(passing|not yet passing)$`)).OnElements("input")
	p.RequireNoFollowOnLinks(true)
	return p
}()

// Document is Markdown from the model rendered as HTML a page can hold: no
// raw HTML, script, style or handler of the model's survives.
func Document(md string) string {
	var b bytes.Buffer
	if err := markdown.Convert([]byte(md), &b); err != nil {
		return documentPolicy.Sanitize("<pre>" + md + "</pre>")
	}
	return documentPolicy.Sanitize(labelBoxes(b.String()))
}

// labelBoxes names each checklist box for a screen reader: goldmark draws
// them as bare inputs, which a form control may not be.
func labelBoxes(html string) string {
	html = strings.ReplaceAll(html, `<input checked="" disabled="" type="checkbox"`, `<input checked="" disabled="" type="checkbox" aria-label="passing"`)
	return strings.ReplaceAll(html, `<input disabled="" type="checkbox"`, `<input disabled="" type="checkbox" aria-label="not yet passing"`)
}
