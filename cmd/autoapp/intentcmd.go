package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"autoapp/cmd/autoapp/launcher"
	"autoapp/intent"
	"autoapp/intent/refusal"
)

// intentJSON is an intent as `autoapp intent list|show --json` prints it.
type intentJSON struct {
	ID           int64            `json:"id"`
	App          string           `json:"app"`
	Status       string           `json:"status"`
	Mode         string           `json:"mode"`
	BeingWritten bool             `json:"beingWritten"`
	Request      string           `json:"request"`
	Analysis     *intent.Analysis `json:"analysis,omitempty"`
	SubmittedAt  *time.Time       `json:"submittedAt,omitempty"`
	StopReason   string           `json:"stopReason,omitempty"`
	CreatedAt    time.Time        `json:"createdAt"`
	Counts       map[string]int   `json:"counts,omitempty"`
	Tasks        []taskJSON       `json:"tasks,omitempty"`
}

type taskJSON struct {
	ID        int64    `json:"id"`
	Slug      string   `json:"slug"`
	Title     string   `json:"title"`
	Status    string   `json:"status"`
	Priority  string   `json:"priority"`
	Tier      string   `json:"tier"`
	Reasons   []string `json:"tierReasons"`
	Model     string   `json:"model"`
	ModelFrom string   `json:"modelFrom"`
	BlockedBy []string `json:"blockedBy"`
	Attempts  int      `json:"attempts"`
	Reason    string   `json:"reason,omitempty"`
	Question  string   `json:"question,omitempty"`
}

// intentCmd prints the backlog from the terminal: the same facts the
// Backlog page shows.
func intentCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "list" && args[0] != "show") {
		fmt.Fprint(stderr, "autoapp intent: use `intent list [--app ID] [--json]` or `intent show N [--json]`.\n")
		return 2
	}
	verb := args[0]
	o, code, ok := parseIntentArgs(verb, args[1:], stderr)
	if !ok {
		return code
	}
	if err := requireData(o.root); err != nil {
		fmt.Fprintf(stderr, "autoapp intent %s: %v\n", verb, err)
		return 1
	}
	st, err := open(o.root)
	if err != nil {
		fmt.Fprintf(stderr, "autoapp intent %s: %v\n", verb, err)
		return 1
	}
	defer st.Close()
	if verb == "list" {
		return intentList(ctx, st, o, stdout, stderr)
	}
	return intentShow(ctx, st, o, stdout, stderr)
}

// intentOptions is what the arguments of `intent list|show` said.
type intentOptions struct {
	root   string
	appID  string
	asJSON bool
	// number is the intent show was given, as typed.
	number string
}

// parseIntentArgs reads the arguments of verb. ok is false when the verb
// ends here, with the exit code; the flag package said why on stderr.
func parseIntentArgs(verb string, args []string, stderr io.Writer) (o intentOptions, code int, ok bool) {
	fs := flag.NewFlagSet("intent "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.root, "root", "./data", "the data folder")
	fs.StringVar(&o.appID, "app", "", "list only this application's intents (default: every application's)")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
	// The intent number may come before or after the flags.
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		o.number, args = args[0], args[1:]
	}
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return o, 0, false
	} else if err != nil {
		return o, 2, false
	}
	if o.number == "" && fs.NArg() > 0 {
		o.number = fs.Arg(0)
	}
	return o, 0, true
}

// intentList prints every application's intents, grouped; --app narrows
// to one.
func intentList(ctx context.Context, st *launcher.Launcher, o intentOptions, stdout, stderr io.Writer) int {
	ids, code := listedApps(ctx, st, o.appID, stderr)
	if code != 0 {
		return code
	}
	out := []intentJSON{}
	groups := map[string][]intentJSON{}
	for _, id := range ids {
		intents, err := st.Backlog.List(ctx, id)
		if err != nil {
			fmt.Fprintf(stderr, "autoapp intent list: %v\n", err)
			return 1
		}
		for _, i := range intents {
			j := intentOut(i.Intent)
			j.Counts = map[string]int{}
			for status, n := range i.Counts {
				j.Counts[string(status)] = n
			}
			out = append(out, j)
			groups[id] = append(groups[id], j)
		}
	}
	if o.asJSON {
		return printJSON(stdout, stderr, out)
	}
	switch {
	case len(ids) == 0:
		fmt.Fprintln(stdout, "There are no applications yet.")
	case len(out) == 0 && o.appID != "":
		fmt.Fprintf(stdout, "%s has no intents yet.\n", o.appID)
	case len(out) == 0:
		fmt.Fprintln(stdout, "No application has an intent yet.")
	default:
		writeIntentGroups(stdout, ids, groups)
	}
	return 0
}

// listedApps are the applications list covers: the one --app names, or
// every one. A non-zero code ends list: an unknown application is 2.
func listedApps(ctx context.Context, st *launcher.Launcher, appID string, stderr io.Writer) ([]string, int) {
	if appID != "" {
		if _, err := st.Apps.Get(ctx, appID); err != nil {
			fmt.Fprintf(stderr, "autoapp intent list: %v\n", err)
			return nil, 2
		}
		return []string{appID}, 0
	}
	apps, err := st.Apps.List(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "autoapp intent list: %v\n", err)
		return nil, 1
	}
	var ids []string
	for _, a := range apps {
		ids = append(ids, a.ID)
	}
	return ids, 0
}

// writeIntentGroups prints each application that has intents, in the order
// of ids, and its intents as a table.
func writeIntentGroups(w io.Writer, ids []string, groups map[string][]intentJSON) {
	for n, id := range ids {
		if len(groups[id]) == 0 {
			continue
		}
		if n > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s\n", id)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tTASKS\tREQUEST")
		for _, j := range groups[id] {
			status := j.Status
			if j.BeingWritten {
				status += " (being written)"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", j.ID, status, countsLine(j.Counts), firstLineOf(j.Request, 70))
		}
		tw.Flush()
	}
}

// intentShow prints one intent: its analysis and its tasks in run order.
func intentShow(ctx context.Context, st *launcher.Launcher, o intentOptions, stdout, stderr io.Writer) int {
	id, err := strconv.ParseInt(o.number, 10, 64)
	if err != nil || id <= 0 {
		fmt.Fprintln(stderr, "autoapp intent show: give the intent's number, as `intent list` prints it.")
		return 2
	}
	d, err := st.Backlog.Get(ctx, id)
	var ie *refusal.Error
	if errors.As(err, &ie) {
		fmt.Fprintf(stderr, "autoapp intent show: %s\n", ie.Message)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "autoapp intent show: %v\n", err)
		return 1
	}
	j := intentDetail(d)
	if o.asJSON {
		return printJSON(stdout, stderr, j)
	}
	writeIntent(stdout, j, d.Questions)
	return 0
}

// intentDetail is d as `intent show --json` prints it.
func intentDetail(d intent.IntentDetail) intentJSON {
	j := intentOut(d.Intent)
	j.Analysis = &d.Analysis
	for _, t := range d.Tasks {
		status := string(t.Status)
		if t.Blocked {
			status = "blocked"
		}
		j.Tasks = append(j.Tasks, taskJSON{ID: t.ID, Slug: t.Slug, Title: t.Title, Status: status, Priority: t.Priority,
			Tier: t.Tier, Reasons: t.TierReasons, Model: t.RunsOn, ModelFrom: t.RunsOnFrom, BlockedBy: t.BlockedBy,
			Attempts: t.Attempts, Reason: t.Reason, Question: t.Question})
	}
	return j
}

// writeIntent prints j as `intent show` does: the intent, the questions
// waiting for an answer, and its tasks.
func writeIntent(w io.Writer, j intentJSON, questions []string) {
	status := j.Status
	if j.BeingWritten {
		status += ", being written"
	}
	fmt.Fprintf(w, "Intent %d of %s: %s (%s)\n", j.ID, j.App, status, j.Mode)
	if j.StopReason != "" {
		fmt.Fprintf(w, "Stopped: %s\n", j.StopReason)
	}
	fmt.Fprintf(w, "Request: %s\n", j.Request)
	for _, q := range questions {
		fmt.Fprintf(w, "Needs an answer: %s\n", q)
	}
	if len(j.Tasks) == 0 {
		fmt.Fprintln(w, "No tasks yet.")
		return
	}
	fmt.Fprintln(w)
	writeTasks(w, j.Tasks)
}

// writeTasks prints the tasks as a table, then why each stopped and what
// each asks.
func writeTasks(w io.Writer, tasks []taskJSON) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATUS\tPRIORITY\tTIER\tMODEL\tBLOCKED BY\tTITLE")
	for _, t := range tasks {
		model := t.Model
		if model == "" {
			model = "(Settings)"
		}
		blockers := strings.Join(t.BlockedBy, ",")
		if blockers == "" {
			blockers = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Slug, t.Status, t.Priority, t.Tier, model, blockers, t.Title)
	}
	tw.Flush()
	for _, t := range tasks {
		if t.Reason != "" {
			fmt.Fprintf(w, "%s %s: %s\n", t.Slug, t.Status, t.Reason)
		}
		if t.Question != "" {
			fmt.Fprintf(w, "%s asks: %s\n", t.Slug, t.Question)
		}
	}
}

func intentOut(i intent.Intent) intentJSON {
	j := intentJSON{ID: i.ID, App: i.AppID, Status: string(i.Status), Mode: string(i.Mode), BeingWritten: i.BeingWritten(),
		Request: i.Request, StopReason: i.StopReason, CreatedAt: i.CreatedAt}
	if !i.SubmittedAt.IsZero() {
		at := i.SubmittedAt
		j.SubmittedAt = &at
	}
	return j
}

func printJSON(stdout, stderr io.Writer, v any) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(stderr, "autoapp: %v\n", err)
		return 1
	}
	return 0
}

func countsLine(counts map[string]int) string {
	var parts []string
	total := 0
	for _, st := range intent.TaskStatuses {
		if n := counts[string(st)]; n > 0 {
			total += n
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	if total == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func firstLineOf(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return s
}
