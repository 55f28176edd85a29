package builder

import (
	"fmt"
	"slices"
	"strings"

	"autoapp/executor/candidate"
	"autoapp/intent/refusal"
)

// Record is what a builder turn did, as its tools saw it, for the verdict.
type Record struct {
	// Edits counts the edits that landed, a cycle's patch among them.
	Edits int
	// EditedAfterBuild says an edit landed after the turn's last build,
	// or the turn edited and built nothing.
	EditedAfterBuild bool
	// Built says a build ran in the turn (candidate.build or a cycle that
	// reached its build).
	Built bool
	// Refused is every refused call, in order.
	Refused []Refused
	// Reads are the files source.read read, in order, once each.
	Reads []string
	// Question is the question the turn asked and the person will answer.
	Question string
	// LastCycle is the last candidate.cycle's result, when one got past its
	// change.
	LastCycle *candidate.Result
}

// Refused is one refused call.
type Refused struct {
	Tool     string
	Problems []refusal.Problem
	// Edit says the call was an edit (source.edit or source.change).
	Edit bool
}

// Record is what the turn did so far.
func (s *Session) Record() Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := Record{
		Edits:            s.st.edits,
		EditedAfterBuild: s.st.edits > 0 && (!s.st.built || s.st.lastEdit > s.st.lastBuild),
		Built:            s.st.built,
		Refused:          slices.Clone(s.st.refused),
		Reads:            slices.Clone(s.st.readPaths),
		Question:         s.st.question,
	}
	if s.st.lastCycle != nil {
		c := *s.st.lastCycle
		r.LastCycle = &c
	}
	return r
}

func isEdit(tool string) bool {
	return tool == "source.edit" || tool == "source.change" || tool == "source_edit" || tool == "source_change"
}

// maxRefusalGroups is how many groups of refused builds the summary names.
const maxRefusalGroups = 3

// SummariseRefusals says what the tools refused, for a verdict with
// nothing built: one sentence per group of refused candidate.cycle and
// candidate.build calls (the same tool, the same first problem), the
// largest first and at most three, then one for the refused edits with
// their most frequent problem.
//
//	candidate.cycle was refused 3 times: create: expected an array.
//	2 edits were refused; most often: message: expected a string.
func SummariseRefusals(refused []Refused) []string {
	type group struct {
		tool, reason string
		n            int
	}
	var builds, edits []*group
	find := func(gs []*group, tool, reason string) ([]*group, *group) {
		for _, g := range gs {
			if g.tool == tool && g.reason == reason {
				return gs, g
			}
		}
		g := &group{tool: tool, reason: reason}
		return append(gs, g), g
	}
	var nEdits int
	for _, r := range refused {
		reason := firstProblem(r.Problems)
		var g *group
		switch tool := strings.ReplaceAll(r.Tool, "_", "."); {
		case r.Edit || isEdit(r.Tool):
			nEdits++
			edits, g = find(edits, "", reason)
		case tool == "candidate.cycle" || tool == "candidate.build":
			builds, g = find(builds, tool, reason)
		default:
			continue
		}
		g.n++
	}
	largest := func(a, b *group) int { return b.n - a.n }
	slices.SortStableFunc(builds, largest)
	slices.SortStableFunc(edits, largest)

	var out []string
	for i, g := range builds {
		if i == maxRefusalGroups {
			break
		}
		s := fmt.Sprintf("%s was refused %s", g.tool, times(g.n))
		if g.reason != "" {
			s += ": " + g.reason
		}
		out = append(out, s+".")
	}
	switch {
	case nEdits == 1:
		s := "1 edit was refused"
		if edits[0].reason != "" {
			s += ": " + edits[0].reason
		}
		out = append(out, s+".")
	case nEdits > 1:
		s := fmt.Sprintf("%d edits were refused", nEdits)
		if edits[0].reason != "" {
			s += "; most often: " + edits[0].reason
		}
		out = append(out, s+".")
	}
	return out
}

// firstProblem is a refusal's first problem without its closing stop.
func firstProblem(ps []refusal.Problem) string {
	if len(ps) == 0 {
		return ""
	}
	return strings.TrimRight(ps[0].String(), ". ")
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}
