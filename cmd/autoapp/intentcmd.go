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

	"autoapp/intent"
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
	fs := flag.NewFlagSet("intent "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "./data", "the data folder")
	appID := fs.String("app", "", "list only this application's intents (default: every application's)")
	asJSON := fs.Bool("json", false, "print JSON")
	// The intent number may come before or after the flags.
	rest := args[1:]
	var number string
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		number, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if number == "" && fs.NArg() > 0 {
		number = fs.Arg(0)
	}
	if err := requireData(*root); err != nil {
		fmt.Fprintf(stderr, "autoapp intent %s: %v\n", verb, err)
		return 1
	}
	st, err := open(*root)
	if err != nil {
		fmt.Fprintf(stderr, "autoapp intent %s: %v\n", verb, err)
		return 1
	}
	defer st.Close()
	l := st

	if verb == "list" {
		// Every application's intents, grouped; --app narrows to one.
		var ids []string
		if *appID != "" {
			if _, err := l.Apps.Get(ctx, *appID); err != nil {
				fmt.Fprintf(stderr, "autoapp intent list: %v\n", err)
				return 2
			}
			ids = []string{*appID}
		} else {
			apps, err := l.Apps.List(ctx)
			if err != nil {
				fmt.Fprintf(stderr, "autoapp intent list: %v\n", err)
				return 1
			}
			for _, a := range apps {
				ids = append(ids, a.ID)
			}
		}
		out := []intentJSON{}
		groups := map[string][]intentJSON{}
		for _, id := range ids {
			intents, err := l.Backlog.List(ctx, id)
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
		if *asJSON {
			return printJSON(stdout, stderr, out)
		}
		switch {
		case len(ids) == 0:
			fmt.Fprintln(stdout, "There are no applications yet.")
			return 0
		case len(out) == 0 && *appID != "":
			fmt.Fprintf(stdout, "%s has no intents yet.\n", *appID)
			return 0
		case len(out) == 0:
			fmt.Fprintln(stdout, "No application has an intent yet.")
			return 0
		}
		for n, id := range ids {
			if len(groups[id]) == 0 {
				continue
			}
			if n > 0 {
				fmt.Fprintln(stdout)
			}
			fmt.Fprintf(stdout, "%s\n", id)
			w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tSTATUS\tTASKS\tREQUEST")
			for _, j := range groups[id] {
				status := j.Status
				if j.BeingWritten {
					status += " (being written)"
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\n", j.ID, status, countsLine(j.Counts), firstLineOf(j.Request, 70))
			}
			w.Flush()
		}
		return 0
	}

	id, err := strconv.ParseInt(number, 10, 64)
	if err != nil || id <= 0 {
		fmt.Fprintln(stderr, "autoapp intent show: give the intent's number, as `intent list` prints it.")
		return 2
	}
	d, err := l.Backlog.Get(ctx, id)
	var ie *intent.Error
	if errors.As(err, &ie) {
		fmt.Fprintf(stderr, "autoapp intent show: %s\n", ie.Message)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "autoapp intent show: %v\n", err)
		return 1
	}
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
	if *asJSON {
		return printJSON(stdout, stderr, j)
	}
	status := j.Status
	if j.BeingWritten {
		status += ", being written"
	}
	fmt.Fprintf(stdout, "Intent %d of %s: %s (%s)\n", j.ID, j.App, status, j.Mode)
	if j.StopReason != "" {
		fmt.Fprintf(stdout, "Stopped: %s\n", j.StopReason)
	}
	fmt.Fprintf(stdout, "Request: %s\n", j.Request)
	for _, q := range d.Questions {
		fmt.Fprintf(stdout, "Needs an answer: %s\n", q)
	}
	if len(j.Tasks) == 0 {
		fmt.Fprintln(stdout, "No tasks yet.")
		return 0
	}
	fmt.Fprintln(stdout)
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TASK\tSTATUS\tPRIORITY\tTIER\tMODEL\tBLOCKED BY\tTITLE")
	for _, t := range j.Tasks {
		model := t.Model
		if model == "" {
			model = "(Settings)"
		}
		blockers := strings.Join(t.BlockedBy, ",")
		if blockers == "" {
			blockers = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Slug, t.Status, t.Priority, t.Tier, model, blockers, t.Title)
	}
	w.Flush()
	for _, t := range j.Tasks {
		if t.Reason != "" {
			fmt.Fprintf(stdout, "%s %s: %s\n", t.Slug, t.Status, t.Reason)
		}
		if t.Question != "" {
			fmt.Fprintf(stdout, "%s asks: %s\n", t.Slug, t.Question)
		}
	}
	return 0
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
