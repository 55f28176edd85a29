package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"autoapp/cmd/autoapp/launcher"
	"autoapp/executor/replay"
	"autoapp/knowledge"
)

// compareCmd runs `knowledge evaluate --models`: the same tasks under one
// condition on each model, a progress line per attempt on stderr, and the
// scorecard as markdown to to.table (stdout when it is "" and no JSON is
// asked for), with to.asJSON the comparison as JSON on stdout. A Ctrl-C
// (ctx) stops it; the models that finished are printed.
func compareCmd(ctx context.Context, st *launcher.Launcher, o replay.CompareOptions, to evalOutput, stdout, stderr io.Writer) int {
	file, code := openTable(to.table, stderr)
	if code != 0 {
		return code
	}
	if file != nil {
		defer file.Close()
	}
	cmp, err := st.Replays.Compare(ctx, o, func(p replay.CompareProgress) { fmt.Fprintln(stderr, compareProgressLine(p)) })
	stopped := errors.Is(err, replay.ErrStopped)
	if err != nil && !stopped {
		if code := evaluationFailed(err, len(cmp.Rows) > 0, stderr); code != 0 {
			return code
		}
	}
	var md bytes.Buffer
	writeScorecard(&md, cmp)
	if code := printTable(md.Bytes(), cmp, file, to.table, to.asJSON, stdout, stderr); code != 0 {
		return code
	}
	switch {
	case stopped:
		fmt.Fprintf(stderr, "autoapp knowledge evaluate: stopped; the %d models that finished are in the table, the one cut short left no row.\n", len(cmp.Rows))
		return 1
	case err != nil:
		return 1
	}
	return 0
}

// compareProgressLine is one attempt starting or judged, or a model's
// row, for stderr.
func compareProgressLine(p replay.CompareProgress) string {
	model := fmt.Sprintf("model %d of %d, %s", p.Index, p.Models, p.Model)
	switch {
	case p.Row != nil:
		return fmt.Sprintf("%s: finished, working code %d/%d, attempts per task %s", model, p.Row.WorkingCode, p.Row.Tasks, shownRatio(p.Row.AttemptsPerTask()))
	case !p.Done || p.Attempt == nil:
		return fmt.Sprintf("%s, %s attempt %d: %s started", model, p.Task, p.N, p.RunID)
	}
	a := p.Attempt
	return fmt.Sprintf("%s, %s attempt %d: working code %s, workflow completed %s, %d calls, %s tokens, ended %s",
		model, p.Task, p.N, yesNo(a.WorkingCode), yesNo(a.Workflow), a.Calls, thousands(a.InputTokens+a.OutputTokens), a.Ended)
}

// scorecardColumns are the scorecard's columns, in order.
var scorecardColumns = []string{"Model", "Working code", "Workflow completed", "Attempts per task", "Calls to first edit",
	"Tool calls recovered from text", "Invalid tool inputs", "Tokens", "Wall time"}

// writeScorecard prints a comparison as markdown: what ran, the
// scorecard, and what its columns mean.
func writeScorecard(w io.Writer, c replay.Comparison) {
	fmt.Fprintf(w, "# Comparison %s\n\n", c.Stamp)
	fmt.Fprintf(w, "Started %s (launcher %s): %s on each of %s, under %s, each task tried up to %d times. The runs are kept under %s.\n\n",
		shownTime(c.StartedAt), c.Version, strings.Join(c.Tasks, ", "), strings.Join(c.Models, ", "), c.Condition, replay.CompareAttempts, c.Dir)
	fmt.Fprintln(w, "| "+strings.Join(scorecardColumns, " | ")+" |")
	fmt.Fprintln(w, strings.TrimSuffix(strings.Repeat("| --- ", len(scorecardColumns)), " ")+" |")
	for _, r := range c.Rows {
		fmt.Fprintf(w, "| %s | %d/%d | %d/%d | %s | %s | %d | %d | %s | %s |\n", r.Model, r.WorkingCode, r.Tasks, r.Workflow, r.Tasks,
			shownRatio(r.AttemptsPerTask()), firstEditCalls(r), r.FromText, r.InvalidInputs, scoreTokens(r), shownSeconds(r.WallMS))
	}
	var missing []string
	for _, m := range c.Models {
		found := false
		for _, r := range c.Rows {
			found = found || r.Model == m
		}
		if !found {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(w, "\nNo row for %s: the comparison ended before it finished every task.\n", strings.Join(missing, ", "))
	}
	fmt.Fprintf(w, `
The models are ordered best first: more working code, then more workflows completed, then fewer
attempts per task, then fewer tokens. Working code: tasks whose last attempt left code on which the
evaluation's own copy of the task's example passed, on a fresh build and preview. Workflow
completed: tasks whose last attempt ran the checks itself on the release it last built, with the
example intact, and every example passed. Attempts per task: the turns a task took, the second
told why the first did not leave working code (at most %d). Calls to first edit: the calls up to a
task's first edit that landed, over its attempts, the mean over the tasks that made one (with
their count when not all did). Tool calls recovered from text: calls the model wrote in its text
(a <tool_call> block, [TOOL_CALLS], a JSON block) that the host read and ran. Invalid tool inputs:
calls the host refused before running them, their input not matching the tool's schema or naming
no tool. Tokens: what every turn reported, "at least" when a step reported nothing. Wall time: from
the model's first task to its last task judged.
`, replay.CompareAttempts)
}

// shownRatio is a mean to two places at most: "1", "1.5", "1.75".
func shownRatio(m float64) string {
	return strconv.FormatFloat(math.Round(m*100)/100, 'f', -1, 64)
}

// firstEditCalls is the mean calls to a task's first edit: "2", "2.5
// (3/4)", or "—".
func firstEditCalls(r knowledge.Score) string {
	m, ok := r.FirstEdit()
	if !ok {
		return "—"
	}
	s := shownRatio(m)
	if r.FirstEditTasks < r.Tasks {
		s += fmt.Sprintf(" (%d/%d)", r.FirstEditTasks, r.Tasks)
	}
	return s
}

// scoreTokens is a row's tokens, "at least" when a step did not report.
func scoreTokens(r knowledge.Score) string {
	if r.TokensReported {
		return thousands(r.Tokens)
	}
	return "at least " + thousands(r.Tokens)
}
