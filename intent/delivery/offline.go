package delivery

import (
	"bytes"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"

	"golang.org/x/net/html"
)

// needs says what the HTML page loads that the delivery does not carry:
// a script, a style sheet, an icon, an image or a media file by a path
// that no artifact has, or from the web. A link to another page is not a
// load.
func needs(page Blob, delivered map[string]bool) []string {
	var out, seen []string
	dir := path.Dir(page.Path)
	for _, ref := range loads(page.Data) {
		u, err := url.Parse(strings.TrimSpace(ref))
		if err != nil || ref == "" {
			continue
		}
		switch {
		case u.Scheme == "http" || u.Scheme == "https" || (u.Scheme == "" && u.Host != ""):
			if !slices.Contains(seen, u.String()) {
				seen = append(seen, u.String())
				out = append(out, fmt.Sprintf("%s loads %s from the web, so it works offline only without it.", page.Path, u.String()))
			}
		case u.Scheme != "" || u.Path == "":
			// data:, blob:, a fragment: nothing to carry.
		default:
			p := path.Clean(path.Join(dir, u.Path))
			if strings.HasPrefix(u.Path, "/") {
				p = path.Clean(strings.TrimPrefix(u.Path, "/"))
			}
			if delivered[p] || slices.Contains(seen, p) {
				continue
			}
			seen = append(seen, p)
			name := strings.TrimPrefix(path.Clean(u.Path), "./")
			out = append(out, fmt.Sprintf("%s loads %s, which is not delivered; download the workspace archive to have it.", page.Path, name))
		}
	}
	return out
}

// loads are the addresses an HTML document loads as it shows, in order.
func loads(doc []byte) []string {
	var out []string
	z := html.NewTokenizer(bytes.NewReader(doc))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.StartTagToken, html.SelfClosingTagToken:
			t := z.Token()
			attr := func(name string) (string, bool) {
				for _, a := range t.Attr {
					if a.Key == name {
						return a.Val, true
					}
				}
				return "", false
			}
			switch t.Data {
			case "script", "img", "audio", "video", "source", "track", "iframe", "embed":
				if v, ok := attr("src"); ok {
					out = append(out, v)
				}
			case "link":
				rel, _ := attr("rel")
				if v, ok := attr("href"); ok && loadedRel(rel) {
					out = append(out, v)
				}
			}
		}
	}
}

// loadedRel says a link of rel is fetched as the page shows.
func loadedRel(rel string) bool {
	for r := range strings.FieldsSeq(strings.ToLower(rel)) {
		switch r {
		case "stylesheet", "icon", "preload", "modulepreload", "manifest", "apple-touch-icon":
			return true
		}
	}
	return false
}
