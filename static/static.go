// Package static embeds the files the pages load: the vendored htmx, the
// stylesheet and the icon. Each is addressed with its content hash in the
// query, so it can be cached for a year and still change on upgrade.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
)

//go:embed *.js *.css *.svg
var Files embed.FS

// HTMX is the file name of the vendored htmx (htmx.org on npm).
const HTMX = "htmx-2.0.11.min.js"

var versions = func() map[string]string {
	v := map[string]string{}
	entries, _ := fs.ReadDir(Files, ".")
	for _, e := range entries {
		b, err := Files.ReadFile(e.Name())
		if err != nil {
			continue
		}
		sum := sha256.Sum256(b)
		v[e.Name()] = hex.EncodeToString(sum[:6])
	}
	return v
}()

// Path is the URL of an embedded file, versioned by its content.
func Path(name string) string {
	return "/static/" + name + "?v=" + versions[name]
}
