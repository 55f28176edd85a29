package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"autoapp/cmd/autoapp/launcher"
	"autoapp/executor/replay"
	"autoapp/intent/refusal"
)

// evalOutput is where an evaluation is printed: the table's file ("" for
// stdout), the notes' folder ("" for none), and whether JSON is asked for.
type evalOutput struct {
	table, notes string
	asJSON       bool
}

// evaluateCmd runs `knowledge evaluate`: every task under every condition,
// a progress line per run on stderr, the table as markdown to o.table
// (stdout when it is "" and no JSON is asked for), with o.asJSON the
// evaluation as JSON on stdout, and with o.notes one markdown file per run
// in that folder. A Ctrl-C (ctx) stops it; what finished is printed.
func evaluateCmd(ctx context.Context, st *launcher.Launcher, o replay.EvaluateOptions, to evalOutput, stdout, stderr io.Writer) int {
	out, asJSON := to.table, to.asJSON
	// A file the table cannot go to, or a folder the notes cannot, is
	// refused before any turn is spent.
	file, code := openTable(out, stderr)
	if code != 0 {
		return code
	}
	if file != nil {
		defer file.Close()
	}
	if to.notes != "" {
		if err := os.MkdirAll(to.notes, 0o755); err != nil {
			fmt.Fprintf(stderr, "autoapp knowledge evaluate: the notes cannot be written to %s: %v.\n", to.notes, unwrapPathError(err))
			return 2
		}
	}
	progress := func(p replay.EvalProgress) {
		fmt.Fprintln(stderr, evalProgressLine(p))
	}
	ev, err := st.Replays.Evaluate(ctx, o, progress)
	stopped := errors.Is(err, replay.ErrStopped)
	if err != nil && !stopped {
		if code := evaluationFailed(err, len(ev.Runs) > 0, stderr); code != 0 {
			return code
		}
	}
	var md bytes.Buffer
	writeEvaluation(&md, ev)
	if code := printTable(md.Bytes(), ev, file, out, asJSON, stdout, stderr); code != 0 {
		return code
	}
	if to.notes != "" {
		if err := writeNotes(to.notes, ev); err != nil {
			fmt.Fprintf(stderr, "autoapp knowledge evaluate: the notes could not be written to %s: %v.\n", to.notes, unwrapPathError(err))
			return 1
		}
	}
	switch {
	case stopped:
		fmt.Fprintf(stderr, "autoapp knowledge evaluate: stopped; the %d runs that finished are in the table, the one cut short left nothing.\n", len(ev.Runs))
		return 1
	case err != nil:
		return 1
	}
	return 0
}

// evaluationFailed says why the evaluation ended before its end. With no
// run finished it returns the exit code, 2 for a refusal and 1 for a
// failure; with some, 0, for what finished to be printed.
func evaluationFailed(err error, someRan bool, stderr io.Writer) int {
	code := 1
	if ke, ok := errors.AsType[*refusal.Error](err); ok {
		fmt.Fprintf(stderr, "autoapp knowledge evaluate: %s\n", ke.Message)
		code = 2
	} else {
		fmt.Fprintf(stderr, "autoapp knowledge evaluate: %v\n", err)
	}
	if someRan {
		return 0
	}
	return code
}

// openTable creates the file the table goes to, when out names one, so a
// file it cannot go to is refused before any turn is spent: it answers the
// file (nil for stdout) or the exit code 2.
func openTable(out string, stderr io.Writer) (*os.File, int) {
	if out == "" {
		return nil, 0
	}
	f, err := os.Create(out)
	if err != nil {
		fmt.Fprintf(stderr, "autoapp knowledge evaluate: the table cannot be written to %s: %v.\n", out, unwrapPathError(err))
		return nil, 2
	}
	return f, 0
}

// printTable writes the markdown md to file (when out named one) or to
// stdout (unless JSON is asked for), and v as JSON on stdout with asJSON.
// It returns the exit code of a failed write, or 0.
func printTable(md []byte, v any, file *os.File, out string, asJSON bool, stdout, stderr io.Writer) int {
	switch {
	case file != nil:
		_, werr := file.Write(md)
		if cerr := file.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			fmt.Fprintf(stderr, "autoapp knowledge evaluate: the table could not be written to %s: %v.\n", out, unwrapPathError(werr))
			return 1
		}
	case !asJSON:
		stdout.Write(md)
	}
	if asJSON {
		return printJSON(stdout, stderr, v)
	}
	return 0
}

// evalProgressLine is one run of an evaluation starting or judged, for stderr.
func evalProgressLine(p replay.EvalProgress) string {
	what := fmt.Sprintf("run %d of %d, %s/%s/%d", p.Index, p.Total, p.Task, p.Condition, p.N)
	if p.Mode != "" {
		what = fmt.Sprintf("run %d of %d, %s/%s/%s/%d", p.Index, p.Total, p.Task, p.Condition, p.Mode, p.N)
	}
	if !p.Done || p.Run == nil {
		return fmt.Sprintf("%s: %s started in %s", what, p.RunID, p.Dir)
	}
	r := p.Run
	return fmt.Sprintf("%s: working code %s, workflow completed %s, %d calls, %s tokens, ended %s",
		what, yesNo(r.WorkingCode), yesNo(r.Workflow), r.Calls, thousands(r.Tokens()), r.Ended)
}

// writeEvaluation prints an evaluation as markdown: what ran, the table,
// the recurring failures and what the columns mean.
func writeEvaluation(w io.Writer, ev replay.Evaluation) {
	fmt.Fprintf(w, "# Evaluation %s\n\n", ev.Stamp)
	runs := "runs"
	if ev.RunsEach == 1 {
		runs = "run"
	}
	fmt.Fprintf(w, "Started %s on %s (launcher %s): %d %s of each task under each condition, at most %d steps and %d minutes a turn. ",
		shownTime(ev.StartedAt), ev.Model.Ref, ev.Version, ev.RunsEach, runs, ev.StepCap, ev.TurnMinutes)
	switch len(ev.Lessons) {
	case 0:
		fmt.Fprint(w, "The launcher's store has no provisional or confirmed lesson, so learned is given none.")
	default:
		ids := make([]string, len(ev.Lessons))
		for i, id := range ev.Lessons {
			ids[i] = strconv.FormatInt(id, 10)
		}
		fmt.Fprintf(w, "Learned is given %d lessons (%s).", len(ev.Lessons), strings.Join(ids, ", "))
	}
	fmt.Fprintf(w, " The runs are kept under %s.\n\n", ev.Dir)

	fmt.Fprintln(w, "| Task | Condition | Working code | Workflow completed | First edit | Tried | First build | Reached a build | Failed builds | Model time | Tool time | Mean tokens | Known tokens | Recurring failures | Approvals | Named, read or edited | Named, ignored | Read, not named | Unrelated hint credit |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	labels := map[string]string{}
	for _, f := range ev.Failures {
		labels[f.Signature] = f.Label()
	}
	for _, c := range ev.Cells {
		if c.Runs == 0 {
			fmt.Fprintf(w, "| %s | %s | — | — | — | — | — | — | — | — | — | — | — | — | — | — | — | — | — |\n", c.Task, c.Condition)
			continue
		}
		recurring := "—"
		if len(c.Recurring) > 0 {
			names := make([]string, len(c.Recurring))
			for i, sig := range c.Recurring {
				names[i] = "`" + labels[sig] + "`"
			}
			recurring = strings.Join(names, ", ")
		}
		fmt.Fprintf(w, "| %s | %s | %d/%d | %d/%d | %s | %s | %s | %d/%d | %d | %s | %s | %s | %s | %s | %d | %s | %s | %s | %d of %d |\n",
			c.Task, c.Condition, c.WorkingCode, c.Runs, c.Workflow, c.Runs, meanCalls(c.FirstEdit, c.FirstEditRuns, c.Runs),
			meanCalls(c.Tried, c.TriedRuns, c.Runs), meanCalls(c.FirstBuild, c.FirstBuildRuns, c.Runs), c.ReachedBuild, c.Runs, c.FailedBuilds, shownSeconds(c.ModelMS), shownSeconds(c.ToolMS),
			meanTokens(c.MeanTokens, c.Reported, c.Runs), thousands(c.KnownTokens), recurring, c.Approvals, shownMean(c.NamedUsed),
			shownMean(c.NamedIgnored), shownMean(c.ReadUnnamed), c.UnrelatedCredit, c.HintsCredited)
	}

	writeTwoTurns(w, ev)

	var recurred []replay.Failure
	for _, f := range ev.Failures {
		if f.Recurred() {
			recurred = append(recurred, f)
		}
	}
	if len(recurred) > 0 {
		fmt.Fprintln(w, "\nFailures that recurred from earlier runs:")
		fmt.Fprintln(w)
		for _, f := range recurred {
			fmt.Fprintf(w, "- `%s` (%s): %s — met by %s\n", f.Label(), f.Signature, firstLineOf(f.Message, 160), strings.Join(f.Runs, ", "))
		}
	}
	if ev.Stopped {
		fmt.Fprintln(w, "\nThe evaluation was stopped before every run finished; the table counts the runs that did.")
	}
	fmt.Fprint(w, `
Working code: the evaluation built and previewed what the turn left, and the task's example — the
evaluation's own copy, by its content hash — passed. Workflow completed: the engineer itself ran the
checks (candidate.cycle) on the release it last built, with the example intact, and every example
passed. First edit counts the calls up to the first edit that landed (a source.edit or source.change
that succeeded, or a cycle whose change applied); tried, up to the first attempt, refused or not;
first build, up to the first call that built (candidate.build, or a cycle that reached its build);
each the mean over the runs that made one, with their count when not every run did. Model time is
the time a turn waited on the model, tool time the time its tools took, each a mean a run. Mean
tokens is the mean over the runs whose turn reported every step, with their count; known tokens is
the mean of what every run is known to have used, a floor. A recurring failure is one an earlier run
of this evaluation met too. Approvals count the calls that would have waited on the person (each
intent.ask, answered here with a standing answer), every run's together. Named, read or edited
counts the workspace's files the turn's delivered documents named that it then read or edited;
named, ignored those it did neither with; read, not named the files it read that no document named;
each a mean a run. Unrelated hint credit: of the hints served beside a failed build and credited
with resolving it, those whose lesson named no stage or a stage none of the run's failures was at.
`)
	if len(ev.TwoTurnCells) > 0 {
		fmt.Fprint(w, `
Two turns: turn one stops at its first edit that landed; turn two is given the request and then,
under text, turn one's words, or under structured an assistant turn naming turn one's run with that
run's tool calls and their results; restart is structured with turn two run on stores and services
opened afresh over the run's folder. The scores judge what turn two left. Reads are source.read,
source.list, source.search, spec.read and knowledge.show; reads before first edit count turn two's
before its first edit that landed; a repeated read is one of a path, folder, query, topic or lesson
turn one had read; a repeated action is a hunk whose find turn one applied to the same file, or the
creation of a file that existed. Turn-two tokens are turn two's own, as mean tokens above. Read the
changed file first counts the runs whose turn two read the file committed between the turns before
its first attempt to edit it.
`)
	}
}

// writeTwoTurns prints the two-turn table: each task of two turns under
// each condition and history mode.
func writeTwoTurns(w io.Writer, ev replay.Evaluation) {
	if len(ev.TwoTurnCells) == 0 {
		return
	}
	fmt.Fprintf(w, "\nTwo turns: turn one is the request, stopped the moment an edit lands; turn two is told %q.\n\n", replay.ContinueMessage)
	fmt.Fprintln(w, "| Task | Condition | History | Working code | Workflow completed | Reads before first edit | Repeated reads | Repeated actions | Turn-two tokens | Turn-one calls | Read the changed file first |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, c := range ev.TwoTurnCells {
		if c.Runs == 0 {
			fmt.Fprintf(w, "| %s | %s | %s | — | — | — | — | — | — | — | — |\n", c.Task, c.Condition, c.Mode)
			continue
		}
		first := "—"
		if c.Touched != "" {
			first = fmt.Sprintf("%d/%d", c.ReadTouchedFirst, c.Runs)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d/%d | %d/%d | %s | %s | %s | %s | %s | %s |\n",
			c.Task, c.Condition, c.Mode, c.WorkingCode, c.Runs, c.Workflow, c.Runs, shownMean(c.ReadsBeforeEdit), shownMean(c.RepeatedReads),
			shownMean(c.RepeatedActions), meanTokens(c.MeanTokens, c.Reported, c.Runs), shownMean(c.TurnOneCalls), first)
	}
}

// shownMean is a mean as a person reads it: "2", "2.5".
func shownMean(m float64) string {
	s := strconv.FormatFloat(m, 'f', -1, 64)
	if strings.Contains(s, ".") {
		s = strconv.FormatFloat(m, 'f', 1, 64)
	}
	return s
}

// meanCalls is a mean number of calls over the made runs of all that
// made one: "2", "2.5 (2/3)", or "—".
func meanCalls(mean *float64, made, runs int) string {
	if mean == nil {
		return "—"
	}
	s := strconv.FormatFloat(*mean, 'f', -1, 64)
	if strings.Contains(s, ".") {
		s = strconv.FormatFloat(*mean, 'f', 1, 64)
	}
	if made < runs {
		s += fmt.Sprintf(" (%d/%d)", made, runs)
	}
	return s
}

// meanTokens is "85,024 (2/3)", or "— (0/3)" when no run reported.
func meanTokens(mean *int, reported, runs int) string {
	if mean == nil {
		return fmt.Sprintf("— (0/%d)", runs)
	}
	return fmt.Sprintf("%s (%d/%d)", thousands(*mean), reported, runs)
}

// thousands writes n with a comma between thousands: 85,024.
func thousands(n int) string {
	if n < 0 {
		return "-" + thousands(-n)
	}
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// shownSeconds is a duration in milliseconds as a person reads it: 0.4s,
// 12.0s, 3m04s.
func shownSeconds(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	if d < time.Minute {
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// unwrapPathError drops the path an *os.PathError repeats.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
