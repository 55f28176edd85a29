package views

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
