package build

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// What varies between two reports of the same failure, replaced in this
// order: quoted names first so a quoted path stays one name, then paths,
// line and column numbers, hashes, and any other number.
var (
	quotedName = regexp.MustCompile("'[^'\\n]*'|\"[^\"\\n]*\"|`[^`\\n]*`|‘[^’\\n]*’|“[^”\\n]*”")
	slashPath  = regexp.MustCompile(`[\w.~@+-]*(?:/[\w.~@+-]+)+/?`)
	fileAtLine = regexp.MustCompile(`\b[\w.-]+\.[A-Za-z]\w*(:\d+)`)
	lineCol    = regexp.MustCompile(`:\d+(?::\d+)?\b`)
	hexHash    = regexp.MustCompile(`\b(?:0x[0-9A-Fa-f]+|[0-9a-f]{7,})\b`)
	number     = regexp.MustCompile(`(^|[^A-Za-z_<])\d+`)
	spaces     = regexp.MustCompile(`\s+`)
)

// Signature names a failure so that the same failure seen again, at other
// lines or in other files, gets the same name: the message with paths,
// line:col, quoted names, hashes and numbers replaced by placeholders,
// hashed with the stage.
func Signature(stage, message string) string {
	sum := sha256.Sum256([]byte(stage + "\x00" + normalise(message)))
	return hex.EncodeToString(sum[:8])
}

func normalise(s string) string {
	s = cleanOutput(s)
	s = quotedName.ReplaceAllString(s, "<name>")
	s = slashPath.ReplaceAllString(s, "<path>")
	s = fileAtLine.ReplaceAllString(s, "<path>$1")
	s = lineCol.ReplaceAllString(s, ":<line>")
	s = hexHash.ReplaceAllStringFunc(s, func(h string) string {
		if strings.HasPrefix(h, "0x") || strings.ContainsAny(h, "0123456789") {
			return "<hash>"
		}
		return h // a word such as "defaced"
	})
	s = number.ReplaceAllString(s, "$1<n>")
	return strings.TrimSpace(spaces.ReplaceAllString(s, " "))
}
