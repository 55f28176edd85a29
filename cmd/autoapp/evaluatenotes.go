package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"autoapp/executor/replay"
)

// writeNotes writes one markdown file per finished run of ev into dir,
// <runId>.md: how the run was judged and measured, and each of its turns
// as its folder kept it — the message, what the model said, every call
// with its input and the answer it read back.
func writeNotes(dir string, ev replay.Evaluation) error {
	for _, r := range ev.Runs {
		turns, err := replay.KeptTurns(r.Dir)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		writeRunNotes(&b, r, turns)
		if err := os.WriteFile(filepath.Join(dir, r.RunID+".md"), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeRunNotes is one run's notes.
func writeRunNotes(b *bytes.Buffer, r replay.EvalRun, turns []replay.KeptTurn) {
	name := r.Task + " / " + r.Condition
	if r.Mode != "" {
		name += " / " + r.Mode
	}
	fmt.Fprintf(b, "# %s / %d\n\n", name, r.N)
	fmt.Fprintf(b, "Run %s, kept in %s.\n\n", r.RunID, r.Dir)
	fmt.Fprintf(b, "- Working code: %s. %s\n", yesNo(r.WorkingCode), r.Judgement)
	fmt.Fprintf(b, "- Workflow completed: %s\n", yesNo(r.Workflow))
	fmt.Fprintf(b, "- Calls: %d; ended %s; tokens %s (%s)\n", r.Calls, r.Ended, thousands(r.Tokens()), map[bool]string{true: "every step reported", false: "partial"}[r.TokensReported])
	fmt.Fprintf(b, "- Approvals: %d; named, read or edited: %s; named, ignored: %s; read, not named: %s\n", r.Approvals,
		listOrNone(r.NamedUsed), listOrNone(without(r.Named, r.NamedUsed)), listOrNone(r.ReadUnnamed))
	if s := r.Second; s != nil {
		fmt.Fprintf(b, "- Turn two: %d reads before its first edit, %d repeated reads, %d repeated actions, %s tokens, after turn one's %d calls",
			s.ReadsBeforeEdit, s.RepeatedReads, s.RepeatedActions, thousands(s.Tokens()), s.FirstCalls)
		if s.Touched != "" {
			fmt.Fprintf(b, "; read %s, changed between the turns, before editing it: %s", s.Touched, yesNo(s.ReadTouchedFirst))
		}
		fmt.Fprintln(b)
	}
	for i, t := range turns {
		title := "The turn"
		if len(turns) > 1 {
			title = []string{"Turn one", "Turn two"}[min(i, 1)]
		}
		fmt.Fprintf(b, "\n## %s (%s)\n\nEnded %s, %d calls.\n\nThe message:\n\n%s\n", title, t.RunID, t.Ended, len(t.Calls), fenced(t.Message))
		if t.Words != "" {
			fmt.Fprintf(b, "\nWhat the model said:\n\n%s\n", fenced(t.Words))
		}
		for n, c := range t.Calls {
			state := "answered"
			if !c.OK {
				state = "refused"
			}
			fmt.Fprintf(b, "\n%d. `%s`, %s\n\n%s\n\n%s\n", n+1, c.Name, state, fenced(clipped(string(c.Input), 2000)), fenced(clipped(string(c.Result), 2000)))
		}
	}
}

// fenced is text in a fence longer than any run of backticks inside it.
func fenced(text string) string {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	return fence + "\n" + strings.TrimRight(text, "\n") + "\n" + fence
}

// clipped is s cut to n bytes, saying so.
func clipped(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("… (%d more bytes)", len(s)-n)
}

func listOrNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// without is list less the names in drop.
func without(list, drop []string) []string {
	var out []string
	for _, s := range list {
		found := false
		for _, d := range drop {
			found = found || d == s
		}
		if !found {
			out = append(out, s)
		}
	}
	return out
}
