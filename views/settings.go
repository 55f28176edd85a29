package views

// ProviderRow is one model provider as Settings shows it: its key only
// masked.
type ProviderRow struct {
	Name, BaseURL, KeyMask string
	HasKey, On             bool
	// Tested is set when the owner just pressed Test: Models lists what it
	// offers, or TestProblem says why not.
	Tested      bool
	Models      []string
	TestProblem string
}

// ProviderForm is the add or edit form, shown back after a refusal. The
// key is never filled in.
type ProviderForm struct {
	Name, BaseURL string
	On            bool
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
}
