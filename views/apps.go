package views

// AppRow is one application as the lists show it.
type AppRow struct {
	ID, Name, Origin string
	// Current is the release the owner made current, or "".
	Current  string
	Selected bool
	// PreviewURL is the running preview's address, or "".
	PreviewURL string
}

// TemplateOption is a built-in template offered on the Applications page.
type TemplateOption struct {
	Key, Title, About string
}

// AppForm is what the create and register forms show back after a refusal.
type AppForm struct {
	ID, Name, Template, Source string
	Problem                    string
	// Register is set when the problem belongs to the register form.
	Register bool
}

// AppsPage lists the applications and offers to make one.
type AppsPage struct {
	Apps      []AppRow
	Templates []TemplateOption
	Form      AppForm
	// Sandbox says how builds and previews run.
	Sandbox SandboxView
}

// CheckRow is one acceptance example's last result.
type CheckRow struct {
	ID, Title string
	Passed    bool
	// Sentence says why it failed.
	Sentence string
}

// CandidateView is what the host last saw of an application's workspace.
type CandidateView struct {
	AppID string
	// Built is false until the first build.
	Built     bool
	BuildOK   bool
	BuiltAt   string
	Release   string
	Revision  string
	StagesRun []string
	NotRun    []string
	Problems  []string
	// Edited says HEAD moved on from the built revision; EditedNote says so.
	Edited     bool
	EditedNote string

	PreviewURL     string
	PreviewRelease string
	PreviewRunning bool
	// PreviewNote explains a preview that stopped: a restart, or an exit.
	PreviewNote string

	Checks       []CheckRow
	ChecksRun    bool
	ChecksPassed int
	// ChecksNote says the checks ran on an earlier preview.
	ChecksNote string

	LastStep string
	Next     string
	// Problem is the refusal of the last action, in a sentence.
	Problem string
	// Going is the owner's build and check or preview start while it
	// goes; the panel polls only then.
	Going *CandidateGoing
}

// CandidateGoing is the owner's action that goes on in the background.
type CandidateGoing struct {
	// What is the action, named as its button is.
	What    string
	Started string
	// Doing says what it does now, in a sentence.
	Doing string
}

// ReleaseRow is one release in the application's list.
type ReleaseRow struct {
	ID, Revision, BuiltAt string
	Current               bool
}

// AppPage is one application: its manifest, candidate and releases.
type AppPage struct {
	App              AppRow
	Workspace        string
	Manifest         string
	ManifestProblems []string
	ManifestNotice   string
	Candidate        CandidateView
	Releases         []ReleaseRow
	Notice           string
	Problem          string
}
