package verdict

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// oneLine makes text fit on one line: control characters and runs of
// space become one space. What a model or a tool wrote can then never
// start a line of its own in a document or a reason.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// clip cuts s to at most n characters, ending a cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(n-1, 0)]) + "…"
}

// sentenceEnd makes s end as a sentence does.
func sentenceEnd(s string) string {
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "…") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!") {
		return s
	}
	return s + "."
}

// chars is the length of s in characters, as the document budgets count.
func chars(s string) int { return utf8.RuneCountInString(s) }

// joinLines is the lines as one text.
func joinLines(lines []string) string { return strings.Join(lines, "\n") }

// listWithMore is the first n items joined by ", ", then "and <k> more".
func listWithMore(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + ", and " + strconv.Itoa(len(items)-n) + " more"
}
