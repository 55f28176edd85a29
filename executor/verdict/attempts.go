package verdict

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/build"
	"autoapp/executor/candidate"
)

// Limits of the attempts document.
const (
	maxChangedPaths  = 8   // paths per "Changed:" line, then "and <k> more"
	maxReadPaths     = 6   // paths per "Read, changing nothing:" line
	maxRefusedGroups = 3   // "Refused:" lines per attempt
	maxStillWrong    = 8   // "Still wrong at the end:" lines per attempt
	maxCameBack      = 5   // "Came back:" lines
	maxAttemptLine   = 300 // characters in any one line, so the newest attempt always fits
)

// AttemptRecord is what is known of one earlier attempt at a task.
type AttemptRecord struct {
	RunID string
	// Ended is the reason its end event gave.
	Ended string
	// Changed are the files it changed (from the workspace commits of its
	// run id, see RunChanges).
	Changed []string
	// StillWrong are the problems of its last build, and the failed
	// examples of its last check when that check came after the build.
	StillWrong []string
	// Reads are the paths it read, shown only when it changed nothing.
	Reads []string
	// Refused are what its tools refused, one sentence a refusal or a
	// group; equal sentences are grouped and counted.
	Refused []string
	// Interrupted says it stopped before it finished: only what it
	// changed is shown.
	Interrupted bool
	// Diagnosis is the planning model's diagnosis of its failure, when it
	// was asked; only the newest is shown.
	Diagnosis string
}

// Attempts is the document "Earlier attempts at <slug>": per earlier
// attempt, oldest first, what it changed, how it ended, what was still
// wrong, what it read when it changed nothing and what its tools refused
// (the largest groups); then, once, the problems that came back in two or
// more attempts, and the planning model's newest diagnosis. It says what
// happened, never what to do. It holds at most MaxAttempts characters:
// whole lines are cut from the oldest attempts first, and the newest is
// never cut. Its Ref is "attempts:<slug>"; the executor may name it after
// the application instead.
func Attempts(slug string, earlier []AttemptRecord) ai.Document {
	doc := ai.Document{Ref: "attempts:" + slug, Title: "Earlier attempts at " + slug}
	if len(earlier) == 0 {
		return doc
	}
	head := []string{"# Earlier attempts at " + oneLine(slug)}
	blocks := make([][]string, len(earlier))
	for i, a := range earlier {
		blocks[i] = attemptBlock(i+1, a)
	}
	tail := cameBack(earlier)
	for i := len(earlier) - 1; i >= 0; i-- {
		if d := oneLine(earlier[i].Diagnosis); d != "" {
			tail = append(tail, clip("How the planning model read it: "+d, maxAttemptLine))
			break
		}
	}

	cut := make([]int, len(blocks))
	render := func() string {
		lines := slices.Clone(head)
		for i, b := range blocks {
			if len(b) == 0 {
				lines = append(lines, "", fmt.Sprintf("Attempt %d: left out to fit.", i+1))
				continue
			}
			lines = append(lines, "")
			if cut[i] > 0 {
				lines = append(lines, b[0]+fmt.Sprintf(" — %d of its lines left out to fit", cut[i]))
				lines = append(lines, b[1:]...)
			} else {
				lines = append(lines, b...)
			}
		}
		if len(tail) > 0 {
			lines = append(lines, "")
			lines = append(lines, tail...)
		}
		return joinLines(lines)
	}
	text := render()
	// Whole lines from the oldest attempts first; the newest is never cut.
	for i := 0; i < len(blocks)-1 && chars(text) > MaxAttempts; i++ {
		for len(blocks[i]) > 0 && chars(text) > MaxAttempts {
			if len(blocks[i]) == 1 {
				blocks[i] = nil
			} else {
				blocks[i] = blocks[i][:len(blocks[i])-1]
				cut[i]++
			}
			text = render()
		}
	}
	// What is left over the cap is the tail's, last line first.
	for len(tail) > 0 && chars(text) > MaxAttempts {
		tail = tail[:len(tail)-1]
		text = render()
	}
	doc.Text = text
	return doc
}

// attemptBlock is one attempt's lines, its heading first.
func attemptBlock(n int, a AttemptRecord) []string {
	heading := fmt.Sprintf("Attempt %d", n)
	if id := oneLine(a.RunID); id != "" {
		heading += " (run " + clip(id, 100) + ")"
	}
	lines := []string{heading}
	add := func(s string) { lines = append(lines, clip(s, maxAttemptLine)) }

	changed := cleanList(a.Changed)
	if len(changed) == 0 {
		add("Changed: nothing.")
	} else {
		add("Changed: " + listWithMore(changed, maxChangedPaths) + ".")
	}
	if a.Interrupted {
		add("Ended with: it stopped before it finished.")
		return lines
	}
	if e := oneLine(a.Ended); e != "" {
		add("Ended with: " + e)
	}
	still := cleanList(a.StillWrong)
	for i, s := range still {
		if i == maxStillWrong {
			add(fmt.Sprintf("Still wrong at the end: and %d more.", len(still)-maxStillWrong))
			break
		}
		add("Still wrong at the end: " + s)
	}
	if len(changed) == 0 {
		if reads := cleanList(a.Reads); len(reads) > 0 {
			add("Read, changing nothing: " + listWithMore(reads, maxReadPaths) + ".")
		}
	}
	groups := groupRefusals(a.Refused)
	for i, g := range groups {
		if i == maxRefusedGroups {
			rest := 0
			for _, g := range groups[i:] {
				rest += g.n
			}
			add(fmt.Sprintf("Refused: %d more in %d other groups.", rest, len(groups)-i))
			break
		}
		s := "Refused: " + g.text
		if g.n > 1 {
			s += fmt.Sprintf(" (%d times)", g.n)
		}
		add(s)
	}
	return lines
}

// cleanList is items on one line each, empty ones and repeats left out.
func cleanList(items []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range items {
		s = oneLine(s)
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

type refusalGroup struct {
	text string
	n    int
}

// groupRefusals counts equal refusals, largest group first and, between
// equals, the one met first.
func groupRefusals(refused []string) []refusalGroup {
	var groups []refusalGroup
	at := map[string]int{}
	for _, r := range refused {
		r = oneLine(r)
		if r == "" {
			continue
		}
		if i, ok := at[r]; ok {
			groups[i].n++
			continue
		}
		at[r] = len(groups)
		groups = append(groups, refusalGroup{text: r, n: 1})
	}
	slices.SortStableFunc(groups, func(a, b refusalGroup) int { return b.n - a.n })
	return groups
}

// cameBack are the problems still wrong at the end of two or more
// attempts, with the attempts named, in the order first met. Two attempts
// met the same problem when its signatures are the same (build.Signature:
// a failure that moved to another line is the same failure); it is named
// as the latest attempt met it.
func cameBack(earlier []AttemptRecord) []string {
	var order []string
	in := map[string][]int{}
	text := map[string]string{}
	for i, a := range earlier {
		if a.Interrupted {
			continue
		}
		for _, s := range cleanList(a.StillWrong) {
			sig := build.Signature("", s)
			if _, ok := in[sig]; !ok {
				order = append(order, sig)
			}
			if n := in[sig]; len(n) == 0 || n[len(n)-1] != i+1 {
				in[sig] = append(n, i+1)
			}
			text[sig] = s
		}
	}
	var lines []string
	for _, sig := range order {
		if len(in[sig]) < 2 {
			continue
		}
		if len(lines) == maxCameBack {
			break
		}
		lines = append(lines, clip("Came back: "+text[sig], maxAttemptLine-40)+" (attempts "+numbers(in[sig])+")")
	}
	return lines
}

// numbers is "1 and 2", "1, 2 and 3".
func numbers(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// StillWrong is what was wrong when an attempt ended: the problems of the
// last build, and the failed examples of the last check when that check
// came after the build.
func StillWrong(o candidate.Observed) []string {
	var out []string
	var built time.Time
	if b := o.Build; b != nil {
		built = b.At
		if !b.OK {
			for _, p := range b.Problems {
				out = append(out, p.String())
			}
		}
	}
	if c := o.Checks; c != nil && !c.At.Before(built) {
		for _, r := range c.Results {
			if !r.Passed {
				s := r.ID + " failed"
				if f := oneLine(r.Failure); f != "" {
					s += ": " + f
				}
				out = append(out, s)
			}
		}
	}
	return out
}
