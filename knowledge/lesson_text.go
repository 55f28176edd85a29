package knowledge

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"autoapp/intent/refusal"
)

// MaxLessonText is the most characters a lesson's text may have: a lesson
// is one line a turn is given, not a document.
const MaxLessonText = 1000

// What a lesson must not name: it is served to later turns of any
// application, and a model wrote it from a failure on this machine.
var (
	// A path on this machine: an absolute path under a root a machine has
	// (an application's routes, such as /api/items, are not refused), a
	// home-relative path, or a Windows drive or share.
	machinePath = regexp.MustCompile(`(?i)(?:^|[^\w./-])(?:/(?:home|users|tmp|var|etc|root|opt|usr|private|mnt|srv|proc|dev|run|snap|nix|volumes|workspace|work)(?:/|\b)|~/|[a-z]:[\\/]|\\\\[\w.-]+\\)`)
	// An address with a port: localhost, an IP address or a host name,
	// then a colon and two to five digits.
	addressWithPort = regexp.MustCompile(`(?i)(?:\blocalhost|\b\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:]+\]|\b[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*):\d{2,5}\b`)
	// Anything shaped like a secret: a known key prefix, an assignment to
	// a secret's name, a private key, or a long token.
	secretShaped = []*regexp.Regexp{
		regexp.MustCompile(`\b(?:sk|pk|rk)-[A-Za-z0-9_-]{8,}`),
		regexp.MustCompile(`\b(?:ghp|gho|ghs|ghu|github_pat|glpat|xox[abprs])[-_][A-Za-z0-9_-]{10,}`),
		regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`),
		regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`),
		regexp.MustCompile(`(?i)\b(?:password|passwd|pwd|api[_-]?key|access[_-]?key|client[_-]?secret)\s*[:=]`),
		regexp.MustCompile(`(?i)\b(?:secret|token)\s*=\s*\S`),
		regexp.MustCompile(`(?i)\bapi_?key\b`),
		regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/-]{16,}`),
		regexp.MustCompile(`(?i)\b[0-9a-f]{32,}\b`),
	}
	// A long run of base64 or URL-safe base64; a secret when it mixes
	// letters of both cases and digits (a long word or identifier does not).
	longToken = regexp.MustCompile(`[A-Za-z0-9+/_-]{32,}={0,2}`)
)

// CheckLessonText refuses (refusal.Invalid, with a sentence) a lesson text that is
// empty or too long, or that names a path on this machine, an address
// with a port, or anything shaped like a secret.
func CheckLessonText(text string) error {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return refuse(refusal.Invalid, "A lesson cannot be empty.")
	case utf8.RuneCountInString(text) > MaxLessonText:
		return refuse(refusal.Invalid, "A lesson is at most %d characters; this one has %d.", MaxLessonText, utf8.RuneCountInString(text))
	case machinePath.MatchString(text):
		return refuse(refusal.Invalid, "A lesson cannot name a path on this machine; say what to do without it.")
	case addressWithPort.MatchString(text):
		return refuse(refusal.Invalid, "A lesson cannot name an address with a port; say what to do without it.")
	}
	for _, re := range secretShaped {
		if re.MatchString(text) {
			return refuse(refusal.Invalid, "A lesson cannot hold anything shaped like a secret.")
		}
	}
	for _, tok := range longToken.FindAllString(text, -1) {
		if mixedToken(tok) {
			return refuse(refusal.Invalid, "A lesson cannot hold anything shaped like a secret.")
		}
	}
	return nil
}

// mixedToken reports whether tok has upper- and lower-case letters and
// digits, as generated keys do and words and identifiers rarely do.
func mixedToken(tok string) bool {
	var upper, lower, digit bool
	for _, r := range tok {
		switch {
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsLower(r):
			lower = true
		case unicode.IsDigit(r):
			digit = true
		}
	}
	return upper && lower && digit
}
