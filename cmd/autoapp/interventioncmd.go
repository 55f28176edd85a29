package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"
	"time"

	"autoapp/intent"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
	"autoapp/migrations"
)

// interventionError is how `intervention --json` reports a refusal.
type interventionError struct {
	OK    bool `json:"ok"`
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// interventionCmd queues feedback or a pause for a running intent from the
// terminal, or lists what waits: the same inbox the intent's page writes.
// It never waits for a run and never changes one. Every refusal is exit 2,
// as JSON with --json.
func interventionCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "submit" && args[0] != "inspect") {
		fmt.Fprint(stderr, "autoapp intervention: use `intervention submit --intent N --request-id ID --kind feedback|pause [--text T] [--json]` or `intervention inspect --intent N [--json]`.\n")
		return 2
	}
	c := &interventionCall{verb: args[0], stdout: stdout, stderr: stderr}
	o, code, ok := c.parse(args[1:])
	if !ok {
		return code
	}
	inbox, closeDB, err := openInbox(o.root, c.verb == "inspect")
	if err != nil {
		return c.fail(refusal.Unavailable, "%v", err)
	}
	defer closeDB()
	if c.verb == "submit" {
		return c.submit(ctx, inbox, o)
	}
	return c.inspect(ctx, inbox, o.intentID)
}

// interventionCall is one `autoapp intervention VERB` run: the verb, where
// it writes, and whether its refusals are JSON.
type interventionCall struct {
	verb           string
	stdout, stderr io.Writer
	asJSON         bool
}

// interventionOptions is what the arguments of a verb said.
type interventionOptions struct {
	root                  string
	intentID              int64
	requestID, kind, text string // submit's
}

// parse reads the verb's arguments. ok is false when the verb ends here,
// with the exit code.
func (c *interventionCall) parse(args []string) (o interventionOptions, code int, ok bool) {
	fs := flag.NewFlagSet("intervention "+c.verb, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.StringVar(&o.root, "root", "./data", "the data folder")
	fs.Int64Var(&o.intentID, "intent", 0, "the intent's number")
	fs.BoolVar(&c.asJSON, "json", false, "print JSON")
	if c.verb == "submit" {
		fs.StringVar(&o.requestID, "request-id", "", "an id of your choosing: a retry with the same id is recognised")
		fs.StringVar(&o.kind, "kind", "", "feedback or pause")
		fs.StringVar(&o.text, "text", "", "the feedback (a pause may carry a note)")
	}
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return o, 0, false
	} else if err != nil {
		// The flag package said why on stderr; with --json, stdout says it too.
		if wantsJSON(args) {
			var e interventionError
			e.Error.Code, e.Error.Message = string(refusal.Invalid), "The flags could not be read: "+err.Error()+"."
			printJSON(c.stdout, c.stderr, e)
		}
		return o, 2, false
	}
	if fs.NArg() > 0 {
		return o, c.fail(refusal.Invalid, "Unexpected argument %q; every value goes with its flag.", fs.Arg(0)), false
	}
	if o.intentID <= 0 {
		return o, c.fail(refusal.Invalid, "Name the intent with --intent N, as `autoapp intent list` prints it."), false
	}
	return o, 0, true
}

// fail reports a refusal, as JSON on stdout with --json, and returns its
// exit code, 2.
func (c *interventionCall) fail(code refusal.Code, format string, a ...any) int {
	msg := fmt.Sprintf(format, a...)
	if c.asJSON {
		var e interventionError
		e.Error.Code, e.Error.Message = string(code), msg
		printJSON(c.stdout, c.stderr, e)
	} else {
		fmt.Fprintf(c.stderr, "autoapp intervention %s: %s\n", c.verb, msg)
	}
	return 2
}

// refused is fail for an error of the inbox.
func (c *interventionCall) refused(err error) int {
	var ie *refusal.Error
	if errors.As(err, &ie) {
		return c.fail(ie.Code, "%s", ie.Message)
	}
	return c.fail(refusal.Unavailable, "The inbox could not be used: %v", err)
}

// submit queues the feedback or pause and prints its receipt.
func (c *interventionCall) submit(ctx context.Context, inbox *intent.Interventions, o interventionOptions) int {
	// The receipt says it came from the command line.
	ctx = intent.WithVia(ctx, intent.ViaCLI)
	rc, replayed, err := inbox.SubmitIntervention(ctx, o.intentID, o.requestID, intent.InterventionKind(o.kind), o.text)
	if err != nil {
		return c.refused(err)
	}
	if c.asJSON {
		return printJSON(c.stdout, c.stderr, struct {
			OK       bool           `json:"ok"`
			Replayed bool           `json:"replayed"`
			Receipt  intent.Receipt `json:"receipt"`
		}{true, replayed, rc})
	}
	again := ""
	if replayed {
		again = " (a retry: this is the receipt the first submission got)"
	}
	fmt.Fprintf(c.stdout, "Receipt %d: %s for intent #%d, accepted %s%s. It is applied at the run's next safe boundary.\n",
		rc.Order, rc.Kind, rc.IntentID, rc.SubmittedAt.Format(time.RFC3339), again)
	return 0
}

// inspect prints what waits for the intent's next boundary, and what was
// applied.
func (c *interventionCall) inspect(ctx context.Context, inbox *intent.Interventions, intentID int64) int {
	pending, applied, err := inbox.Interventions(ctx, intentID)
	if err != nil {
		return c.refused(err)
	}
	if c.asJSON {
		return printJSON(c.stdout, c.stderr, struct {
			OK           bool             `json:"ok"`
			Intent       int64            `json:"intent"`
			PendingCount int              `json:"pendingCount"`
			Pending      []intent.Receipt `json:"pending"`
			Applied      []intent.Receipt `json:"applied"`
		}{true, intentID, len(pending), append([]intent.Receipt{}, pending...), append([]intent.Receipt{}, applied...)})
	}
	writePending(c.stdout, intentID, pending)
	writeApplied(c.stdout, intentID, applied)
	return 0
}

func writePending(w io.Writer, intentID int64, pending []intent.Receipt) {
	if len(pending) == 0 {
		fmt.Fprintf(w, "Nothing waits for intent #%d.\n", intentID)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ORDER\tID\tKIND\tSUBMITTED\tTEXT")
	for _, r := range pending {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", r.Order, r.ID, r.Kind, r.SubmittedAt.Format(time.RFC3339), firstLineOf(r.Text, 60))
	}
	tw.Flush()
}

func writeApplied(w io.Writer, intentID int64, applied []intent.Receipt) {
	if len(applied) == 0 {
		return
	}
	fmt.Fprintf(w, "\nApplied to intent #%d:\n", intentID)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ORDER\tID\tKIND\tAPPLIED\tRESUMED\tTEXT")
	for _, r := range applied {
		resumed := "-"
		if r.ResumedAt != nil {
			resumed = r.ResumedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.Order, r.ID, r.Kind, r.AppliedAt.Format(time.RFC3339), resumed, firstLineOf(r.Text, 60))
	}
	tw.Flush()
}

// openInbox opens the intents store of root, which must exist: the
// terminal never creates a launcher's data to queue an intervention.
// inspect opens it read-only, migrating nothing.
func openInbox(root string, readOnly bool) (*intent.Interventions, func(), error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, nil, fmt.Errorf("the data folder %q is not a usable path: %v", root, err)
	}
	if err := requireData(abs); err != nil {
		return nil, nil, err
	}
	path := filepath.Join(abs, "launcher", "intents.sqlite")
	open := func(p string) (*migrations.DB, error) { return migrations.Open(p, migrations.Intents) }
	if readOnly {
		open = migrations.OpenReadOnly
	}
	db, err := open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("the inbox could not be opened: %v", err)
	}
	return intent.New(db, abs, clock, intent.Collaborators{Journal: request.Journal{}}).Interventions, func() { db.Close() }, nil
}

// wantsJSON says the arguments ask for JSON, whether or not the flags
// before a bad one were read.
func wantsJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "-json", "--json", "-json=true", "--json=true":
			return true
		}
	}
	return false
}
