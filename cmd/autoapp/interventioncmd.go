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
	verb := args[0]
	fs := flag.NewFlagSet("intervention "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "./data", "the data folder")
	intentID := fs.Int64("intent", 0, "the intent's number")
	asJSON := fs.Bool("json", false, "print JSON")
	var requestID, kind, text *string
	if verb == "submit" {
		requestID = fs.String("request-id", "", "an id of your choosing: a retry with the same id is recognised")
		kind = fs.String("kind", "", "feedback or pause")
		text = fs.String("text", "", "the feedback (a pause may carry a note)")
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		// The flag package said why on stderr; with --json, stdout says it too.
		if wantsJSON(args[1:]) {
			var e interventionError
			e.Error.Code, e.Error.Message = string(intent.EInvalid), "The flags could not be read: "+err.Error()+"."
			printJSON(stdout, stderr, e)
		}
		return 2
	}
	fail := func(code intent.Code, format string, a ...any) int {
		msg := fmt.Sprintf(format, a...)
		if *asJSON {
			var e interventionError
			e.Error.Code, e.Error.Message = string(code), msg
			printJSON(stdout, stderr, e)
		} else {
			fmt.Fprintf(stderr, "autoapp intervention %s: %s\n", verb, msg)
		}
		return 2
	}
	refused := func(err error) int {
		var ie *intent.Error
		if errors.As(err, &ie) {
			return fail(ie.Code, "%s", ie.Message)
		}
		return fail(refusal.Unavailable, "The inbox could not be used: %v", err)
	}
	if fs.NArg() > 0 {
		return fail(intent.EInvalid, "Unexpected argument %q; every value goes with its flag.", fs.Arg(0))
	}
	if *intentID <= 0 {
		return fail(intent.EInvalid, "Name the intent with --intent N, as `autoapp intent list` prints it.")
	}
	backlog, closeDB, err := openInbox(*root, verb == "inspect")
	if err != nil {
		return fail(refusal.Unavailable, "%v", err)
	}
	defer closeDB()

	if verb == "submit" {
		rc, replayed, err := backlog.SubmitIntervention(ctx, *intentID, *requestID, intent.InterventionKind(*kind), *text)
		if err != nil {
			return refused(err)
		}
		if *asJSON {
			return printJSON(stdout, stderr, struct {
				OK       bool           `json:"ok"`
				Replayed bool           `json:"replayed"`
				Receipt  intent.Receipt `json:"receipt"`
			}{true, replayed, rc})
		}
		again := ""
		if replayed {
			again = " (a retry: this is the receipt the first submission got)"
		}
		fmt.Fprintf(stdout, "Receipt %d: %s for intent #%d, accepted %s%s. It is applied at the run's next safe boundary.\n",
			rc.Order, rc.Kind, rc.IntentID, rc.SubmittedAt.Format(time.RFC3339), again)
		return 0
	}

	pending, applied, err := backlog.Interventions(ctx, *intentID)
	if err != nil {
		return refused(err)
	}
	if *asJSON {
		return printJSON(stdout, stderr, struct {
			OK           bool             `json:"ok"`
			Intent       int64            `json:"intent"`
			PendingCount int              `json:"pendingCount"`
			Pending      []intent.Receipt `json:"pending"`
			Applied      []intent.Receipt `json:"applied"`
		}{true, *intentID, len(pending), append([]intent.Receipt{}, pending...), append([]intent.Receipt{}, applied...)})
	}
	if len(pending) == 0 {
		fmt.Fprintf(stdout, "Nothing waits for intent #%d.\n", *intentID)
	} else {
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ORDER\tID\tKIND\tSUBMITTED\tTEXT")
		for _, r := range pending {
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", r.Order, r.ID, r.Kind, r.SubmittedAt.Format(time.RFC3339), firstLineOf(r.Text, 60))
		}
		w.Flush()
	}
	if len(applied) > 0 {
		fmt.Fprintf(stdout, "\nApplied to intent #%d:\n", *intentID)
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ORDER\tID\tKIND\tAPPLIED\tRESUMED\tTEXT")
		for _, r := range applied {
			resumed := "-"
			if r.ResumedAt != nil {
				resumed = r.ResumedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", r.Order, r.ID, r.Kind, r.AppliedAt.Format(time.RFC3339), resumed, firstLineOf(r.Text, 60))
		}
		w.Flush()
	}
	return 0
}

// openInbox opens the intents store of root, which must exist: the
// terminal never creates a launcher's data to queue an intervention.
// inspect opens it read-only, migrating nothing.
func openInbox(root string, readOnly bool) (*intent.Service, func(), error) {
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
	return intent.NewService(db, abs, clock), func() { db.Close() }, nil
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
