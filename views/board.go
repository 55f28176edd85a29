package views

import (
	"strings"
	"unicode"
)

// BoardView is the board of the selected application.
type BoardView struct {
	// AppID is the application shown, "" with All (every application);
	// Selected the one chosen on the Applications page, for the filter.
	AppID    string
	All      bool
	Selected string
	// Runs are the runs going among the applications shown.
	Runs []BoardRunView
	// Columns in order, each with its cards.
	Columns []BoardColumnView
	// The filters: what can be chosen and what is.
	Intents       []string
	Labels        []string
	Intent, Label string
	// Query is "?intent=…&label=…" as chosen, for the live fragment.
	Query string
	// OlderIntents counts the open intents older than those shown.
	OlderIntents int
	// Polling refreshes the board every two seconds while a run goes.
	Polling bool
}

// BoardRunView is one run going: its intent, application and the task in
// hand with its stage ("" between turns).
type BoardRunView struct {
	IntentID           int64
	AppID, Slug, Stage string
}

// BoardColumnView is one column.
type BoardColumnView struct {
	Key, Title string
	Cards      []CardView
	// Hidden counts the cards beyond what a column shows.
	Hidden int
}

// CardView is one task's card.
type CardView struct {
	ID, Href, Slug, Title, Intent, Status, Tier, Model string
	Labels                                             []string
	// Criteria is "2 of 3 criteria passing".
	Criteria string
	Spend    SpendView
	// Cap is what its intent spent of its cap: "12,345 of 200,000 tokens".
	Cap    string
	Why    string
	Advice string
}

// WhyFirst is the first sentence of Why, which a phone shows on the card.
func (c CardView) WhyFirst() string {
	first, _ := firstSentence(c.Why)
	return first
}

// WhyRest is what Why says after its first sentence, or "": a phone
// leaves it to the task's page.
func (c CardView) WhyRest() string {
	_, rest := firstSentence(c.Why)
	return rest
}

// firstSentence splits text after its first sentence: at a full stop,
// question or exclamation mark followed by a space and a capital or a
// digit, so "index.html", "1.5" and "e.g. the" do not end one.
func firstSentence(text string) (first, rest string) {
	text = strings.TrimSpace(text)
	r := []rune(text)
	for i := 0; i+2 < len(r); i++ {
		if !strings.ContainsRune(".?!", r[i]) || !unicode.IsSpace(r[i+1]) {
			continue
		}
		j := i + 1
		for j < len(r) && unicode.IsSpace(r[j]) {
			j++
		}
		if j < len(r) && (unicode.IsUpper(r[j]) || unicode.IsDigit(r[j]) || strings.ContainsRune("\"'“‘(", r[j])) {
			return string(r[:i+1]), string(r[j:])
		}
	}
	return text, ""
}
