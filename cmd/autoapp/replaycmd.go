package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"autoapp/cmd/autoapp/launcher"
	"autoapp/executor/replay"
	"autoapp/intent/refusal"
	"autoapp/knowledge"
)

// replayCmd runs `knowledge replay`: the case replayed with its lesson and
// without, a progress line per run on stderr, and the table on stdout. A
// Ctrl-C (ctx) stops it; what finished is kept and printed.
func replayCmd(ctx context.Context, st *launcher.Launcher, caseID int64, o replay.Options, asJSON bool, stdout, stderr io.Writer) int {
	progress := func(p replay.Progress) {
		fmt.Fprintln(stderr, progressLine(p))
	}
	res, err := st.Replays.Replay(ctx, caseID, o, progress)
	stopped := errors.Is(err, replay.ErrStopped)
	if err != nil && !stopped {
		if ke, ok := errors.AsType[*refusal.Error](err); ok {
			fmt.Fprintf(stderr, "autoapp knowledge replay: %s\n", ke.Message)
			if res.ManifestHash == "" {
				return 2
			}
		} else {
			fmt.Fprintf(stderr, "autoapp knowledge replay: %v\n", err)
		}
		if res.ManifestHash == "" {
			return 1
		}
	}
	if asJSON {
		if code := printJSON(stdout, stderr, res); code != 0 {
			return code
		}
	} else {
		writeReplay(stdout, res, st.Root)
	}
	switch {
	case stopped:
		fmt.Fprintf(stderr, "autoapp knowledge replay: stopped; the %d runs that finished are kept, the one cut short left nothing.\n",
			len(res.Runs)+len(res.Regression))
		return 1
	case err != nil:
		return 1
	}
	return 0
}

// progressLine is one run of a replay starting or judged, for stderr.
func progressLine(p replay.Progress) string {
	what := fmt.Sprintf("run %d of %d, %s", p.Index, p.Total, p.Arm)
	if p.Arm == knowledge.ArmRegression {
		what += fmt.Sprintf(" (case %d)", p.CaseID)
	}
	if !p.Done {
		return fmt.Sprintf("%s: %s started in %s", what, p.RunID, p.Dir)
	}
	verdict := "failed"
	if p.Passed {
		verdict = "passed"
	}
	return fmt.Sprintf("%s: %s: %s", what, verdict, p.Judgement)
}

// writeReplay prints a replay as `knowledge replay` and `knowledge
// confirm` do: what was replayed, the two arms with the verdict beside
// them, each run, and the regression set.
func writeReplay(w io.Writer, res replay.Result, root string) {
	m := res.Manifest
	c := m.Case
	fmt.Fprintf(w, "Replay of case %d: a %s failure of %s", c.ID, c.Kind, c.AppID)
	if c.Stage != "" {
		fmt.Fprintf(w, " at stage %s", c.Stage)
	}
	if c.Example != nil {
		fmt.Fprintf(w, " of example %s", c.Example.ID)
	}
	fmt.Fprintf(w, ", from revision %s, started %s.\n", shortHash(c.Revision), shownTime(m.StartedAt))
	if m.Lesson != nil {
		fmt.Fprintf(w, "Lesson under test: %d (%s): %s\n", m.Lesson.ID, m.Lesson.Status, firstLineOf(m.Lesson.Text, 100))
	} else {
		fmt.Fprintln(w, "No lesson under test: the case taught none, so only the without arm ran.")
	}
	runs := "runs"
	if m.Runs == 1 {
		runs = "run"
	}
	fmt.Fprintf(w, "%d %s an arm on %s, at most %d steps and %d minutes a turn.\n\n", m.Runs, runs, m.Model.Ref, m.StepCap, m.TurnMinutes)

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ARM\tRUNS\tPASSED\t")
	for i, a := range res.Arms {
		beside := ""
		if i == 0 {
			beside = "Verdict: " + res.Verdict.Sentence
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", a.Arm, a.Runs, a.Passed, beside)
	}
	tw.Flush()
	fmt.Fprintln(w, "The verdict is not applied: confirming the lesson stays yours.")
	if len(res.Runs) > 0 {
		fmt.Fprintln(w)
		writeRuns(w, res.Runs)
	}

	fmt.Fprintln(w)
	switch {
	case m.Lesson == nil:
	case len(m.Regression) == 0:
		fmt.Fprintf(w, "Regression: no other resolved case of %s has a confirmed lesson.\n", c.AppID)
	default:
		failed := 0
		for _, r := range res.Regression {
			if !r.Passed {
				failed++
			}
		}
		fmt.Fprintf(w, "Regression: %d of %d other resolved cases of %s with a confirmed lesson replayed once with lesson %d; %d failed (it blocks nothing).\n",
			len(res.Regression), len(m.Regression), c.AppID, m.Lesson.ID, failed)
		if len(res.Regression) > 0 {
			writeRuns(w, res.Regression)
		}
	}
	for _, s := range m.Skipped {
		fmt.Fprintf(w, "Case %d was not replayed: %s\n", s.ID, s.Why)
	}
	if res.Stopped {
		fmt.Fprintln(w, "The replay was stopped before every run finished; the runs above are those that did.")
	}
	fmt.Fprintf(w, "Manifest %s; the runs are kept under %s.\n", shortHash(res.ManifestHash),
		filepath.Join(root, "replay", strconv.FormatInt(c.ID, 10))+string(filepath.Separator))
}

// writeRuns prints one row per run.
func writeRuns(w io.Writer, runs []knowledge.ReplayRun) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tCASE\tPASSED\tENDED\tCALLS\tJUDGED")
	for _, r := range runs {
		passed := "no"
		if r.Passed {
			passed = "yes"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%s\n", r.RunID, r.CaseID, passed, r.Ended, r.Calls, r.Judgement)
	}
	tw.Flush()
}

// confirmWithReplay prints the latest replay of lesson l before it is
// confirmed and asks whether to confirm it, unless yes; with no replay it
// says so and answers true: the person may have other evidence.
func confirmWithReplay(ctx context.Context, st *launcher.Launcher, l knowledge.Lesson, yes bool, stdin io.Reader, stdout io.Writer) (bool, error) {
	res, ok, err := st.Replays.Latest(ctx, l.ID)
	if err != nil {
		return false, err
	}
	if !ok {
		fmt.Fprintf(stdout, "no replay has been run; %s first\n", replayFirst(l))
		return true, nil
	}
	writeReplay(stdout, res, st.Root)
	if yes {
		return true, nil
	}
	fmt.Fprintf(stdout, "\nConfirm lesson %d? [y/N] ", l.ID)
	answer, _ := bufio.NewReader(stdin).ReadString('\n')
	fmt.Fprintln(stdout)
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// replayFirst is the command that replays lesson l.
func replayFirst(l knowledge.Lesson) string {
	if l.CaseID == 0 {
		// A lesson written by hand comes from no case: any case it is for
		// can test it.
		return "knowledge replay <caseId> --with " + strconv.FormatInt(l.ID, 10)
	}
	return "knowledge replay " + strconv.FormatInt(l.CaseID, 10)
}

func shortHash(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
