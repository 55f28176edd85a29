package views

// ProviderRow is one model provider as Settings shows it: its key only
// masked.
type ProviderRow struct {
	Name, BaseURL, KeyMask string
	HasKey, On             bool
	// ContextTokens is the context window set in Settings, or "".
	ContextTokens string
	// NoTextCalls says tool calls written as text are not read.
	NoTextCalls bool
	// Tested is set when the owner just pressed Test: Models lists what it
	// offers, or TestProblem says why not.
	Tested bool
	// Tools says whether a model of it calls tools, after Test; ToolsOK
	// says it does.
	Tools       string
	ToolsOK     bool
	Models      []string
	TestProblem string
}

// ProviderForm is the add or edit form, shown back after a refusal. The
// key is never filled in.
type ProviderForm struct {
	Name, BaseURL string
	// ContextTokens is the context window as typed, "" to ask the provider.
	ContextTokens string
	On            bool
	// TextCalls says tool calls written as text are read (the default).
	TextCalls bool
	// Editing names the provider being edited; "" adds one.
	Editing string
}

// SettingsView is the Settings page.
type SettingsView struct {
	Providers    []ProviderRow
	DefaultModel string
	// Offered are model references the turned-on providers offer.
	Offered    []string
	TierModels []TierModel
	Form       ProviderForm
	Refusal    Refusal
	Notice     string
	Op         string
	// Prices is the prices form; nil when the launcher keeps no prices.
	Prices *PricesView
	// Sandbox is how the engineer's code runs, with the owner's choice.
	Sandbox SandboxView
	// Limits is the turn limits form; nil when the launcher keeps none.
	Limits *LimitsView
	// Notifications is the webhook form and this browser's switch; nil
	// when the launcher sends none.
	Notifications *NotificationsView
	// Scorecard is Compare models; nil when the launcher compares none.
	Scorecard *ScorecardView
}

// NotificationsView is the Notifications card: the webhook as saved or
// typed, the kinds it sends, and how its sending stands.
type NotificationsView struct {
	URL, Format string
	Kinds       []NoticeKindView
	// Chosen are the kinds as typed, after a refusal.
	Chosen map[string]bool
	// Problem says why nothing is sent (the file cannot be used).
	Problem          string
	Pending, GivenUp int
	LastError        string
}

// NoticeKindView is one kind of notice, and whether the webhook sends it.
type NoticeKindView struct {
	Kind, Title string
	On          bool
}

// LimitsView is limits.json as the Settings form shows it, in minutes.
type LimitsView struct {
	Idle, Turn string
	// Runs is how many runs may go at once, as saved or typed, of at most
	// MaxRuns.
	Runs    string
	MaxRuns int
	// Problem says why the defaults hold instead of the file.
	Problem string
}

// PriceRow is one model's price in the form, as saved or as typed.
type PriceRow struct {
	Model, Input, Output string
}

// PricesView is prices.json as the Settings form shows it.
type PricesView struct {
	Rows []PriceRow
	// Budget is the day's cap in dollars, DayTokens in tokens, and Intent
	// each intent's default cap, as saved or typed.
	Budget    string
	DayTokens string
	Intent    CapFields
	// Problem says why the file prices nothing; Missing that there is none.
	Problem string
	Missing bool
	// Used are models that ran lately, offered as suggestions.
	Used []string
}

// CapFields are a cap's fields as its form shows them: "" caps nothing.
type CapFields struct {
	Dollars, Tokens, Minutes string
}

// ScorecardView is Settings → Compare models: every model with its latest
// scorecard row beside it, the form choosing the models to compare, and
// the comparison going or the last that ended.
type ScorecardView struct {
	Rows []ScorecardRow
	// Going says a comparison started here goes: the card polls.
	Going bool
	// Status says how the comparison started here stands, "" for none;
	// Problem why the last one ended early.
	Status, Problem string
	// Attempts is how many turns a task gets; Tasks how many tasks a model runs.
	Attempts, Tasks int
	Condition       string
	Refusal         Refusal
}

// ScorecardRow is one model and its latest row; Measured is "" when the
// model has none yet.
type ScorecardRow struct {
	Model    string
	Chosen   bool
	Measured string
	// The cells, as the scorecard prints them.
	WorkingCode, Workflow, Attempts, FirstEdit, FromText, Invalid, Tokens, Wall string
}
