package chat

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"autoapp/intent/app"
	"autoapp/intent/refusal"
)

// NoApplicationSentence refuses a message that is about no application:
// none is declared, named or selected, and there is not exactly one.
const NoApplicationSentence = "Choose an application first."

// declaredPrefix opens a first line that declares the application a
// message is about: "Application: notes".
const declaredPrefix = "application:"

// commonNameWords are words of an application's name that say nothing
// about which one a message means.
var commonNameWords = map[string]bool{
	"app": true, "apps": true, "application": true, "the": true, "and": true, "for": true, "new": true,
}

// About is the application a message is about, the seed's "Which
// application" for a turn with no task: the one its first line declares
// ("Application: <id>"); else the one it names, by its id or a word of its
// name, when it names exactly one, or the selected one among those it
// names; else selected, the application selected last; else the only one
// there is; else none, refused with NoApplicationSentence. A first line
// declaring an application that does not exist, or a selected one that
// does not, is refused with a sentence.
func (s *Service) About(ctx context.Context, message, selected string) (string, error) {
	apps, err := s.d.Apps.List(ctx)
	if err != nil {
		return "", fmt.Errorf("chat: which application: %w", err)
	}
	ids := make([]string, len(apps))
	for i, a := range apps {
		ids[i] = a.ID
	}
	if id, ok := declared(message); ok {
		if i := slices.IndexFunc(ids, func(x string) bool { return strings.EqualFold(x, id) }); i >= 0 {
			return ids[i], nil
		}
		return "", refuse(refusal.NotFound, "The message's first line declares the application %q, and there is none by that id.", id)
	}
	if selected != "" && !slices.Contains(ids, selected) {
		return "", refuse(refusal.NotFound, "There is no application %q.", selected)
	}
	named := namedApps(message, apps)
	switch {
	case len(named) == 1:
		return named[0], nil
	case slices.Contains(named, selected):
		return selected, nil
	case selected != "":
		return selected, nil
	case len(ids) == 1:
		return ids[0], nil
	}
	return "", refuse(refusal.Conflict, NoApplicationSentence)
}

// aboutWords are the words of a message that say what it is about: the
// message without a first line that declares its application.
func aboutWords(message string) string {
	if _, ok := declared(message); !ok {
		return message
	}
	_, rest, _ := strings.Cut(strings.TrimLeft(message, " \t\r\n"), "\n")
	return rest
}

// declared is the id the message's first line declares, if it does.
func declared(message string) (string, bool) {
	first, _, _ := strings.Cut(strings.TrimLeft(message, " \t\r\n"), "\n")
	first = strings.TrimSpace(first)
	if len(first) < len(declaredPrefix) || !strings.EqualFold(first[:len(declaredPrefix)], declaredPrefix) {
		return "", false
	}
	fields := strings.Fields(first[len(declaredPrefix):])
	if len(fields) == 0 {
		return "", false
	}
	return strings.TrimRight(fields[0], ".,;:"), true
}

// namedApps are the applications the message names by their id or by a
// word of their name (three letters or more, not a word as common as
// "app"), each once, in the order listed.
func namedApps(message string, apps []app.App) []string {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(message), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-'
	}) {
		words[strings.Trim(w, "-")] = true
	}
	var out []string
	for _, a := range apps {
		if words[strings.ToLower(a.ID)] {
			out = append(out, a.ID)
			continue
		}
		for _, w := range strings.FieldsFunc(strings.ToLower(a.Name), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if len([]rune(w)) >= 3 && !commonNameWords[w] && words[w] {
				out = append(out, a.ID)
				break
			}
		}
	}
	return out
}
