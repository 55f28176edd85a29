package views

// ChatTurnView is one exchange with the engineer: the person's message,
// what its tools did, and its words.
type ChatTurnView struct {
	Message, Reply, Status, Sentence, At string
	Lines                                []string
}

// RequestView is the Request page for the selected application.
type RequestView struct {
	// Revising names the failed task the person asks the engineer to
	// revise, when the page was opened from it.
	Revising       string
	Apps           []AppRow
	AppID, AppName string
	Templates      []TemplateOption
	Turns          []ChatTurnView
	// Running is set while a chat turn runs: the conversation polls.
	Running bool
	// Model says what the running turn's model is doing now, or "".
	Model string
	// Questions are the engineer's open questions of the analysis, shown
	// first, each with a box for its answer.
	Questions []QuestionView
	// The request in hand, if one is open.
	RequestID int64
	Revision  int
	Mode      string
	Text      string
	IntentID  int64
	// ModeSwitch changes the open request's mode; nil when none is open.
	ModeSwitch *ModeSwitch
	Delivery   *DeliveryView
	// Asks are the engineer's questions to the person that its turn
	// waits on: an edit, a build, a run.
	Asks    []AskView
	Refusal Refusal
	Op      string
	// Typed and TypedMode are what a refused send typed, shown back.
	Typed, TypedMode string
}

// AskView is one question a chat turn waits on, with Approve and Deny.
type AskView struct {
	ID   int64
	Text string
}

// ModeSwitch is the owner's control of a request's mode: the form posts to
// Action the other mode, with the revision the page showed and an
// operation id. VoidsApproval warns that an approval given goes with it.
type ModeSwitch struct {
	Action        string
	RequestID     int64
	Mode, To      string
	Seen          int
	Op            string
	VoidsApproval bool
	// Running says the intent runs: the mode holds, and no switch is
	// offered.
	Running bool
}

// QuestionView is one open question of the analysis: ID is its id in the
// request's journal, which its answer names.
type QuestionView struct {
	ID   int
	Text string
}
