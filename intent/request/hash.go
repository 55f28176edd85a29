package request

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"autoapp/intent"
	"autoapp/intent/plan"
)

// planRow is one live task as the plan hash sees it: its slug, every field
// of its plan, and the owner's model. Statuses are left out, so running
// the plan does not change its hash; a removed task leaves the rows.
type planRow struct {
	plan.Task
	Model string `json:"model"`
}

// planRows returns the live tasks of an intent as rows, by slug, with
// every list non-nil so a row reads the same from the store and from a
// snapshot in the journal.
func planRows(d intent.IntentDetail) []planRow {
	rows := []planRow{}
	for _, t := range d.Tasks {
		if t.Status == intent.TaskRemoved {
			continue
		}
		rows = append(rows, planRow{Task: t.Task.Task, Model: t.Model}.canonical())
	}
	slices.SortFunc(rows, func(a, b planRow) int { return cmp.Compare(a.Slug, b.Slug) })
	return rows
}

func (r planRow) canonical() planRow {
	r.Labels = nonNil(r.Labels)
	r.BlockedBy = nonNil(r.BlockedBy)
	r.Locks = nonNil(r.Locks)
	r.Criteria = nonNil(r.Criteria)
	r.NonFunctional = nonNil(r.NonFunctional)
	r.TestNotes = nonNil(r.TestNotes)
	r.Runbook = nonNil(r.Runbook)
	return r
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// planAnalysis is the analysis as the plan hash sees it: every part the
// owner is shown beside the tasks. The open questions are left out: a
// plan is submitted only once they are answered.
type planAnalysis struct {
	Restated    []string `json:"restated"`
	Fits        []string `json:"fits"`
	Conflicts   []string `json:"conflicts"`
	OutOfReach  []string `json:"out_of_reach"`
	Assumptions []string `json:"assumptions"`
}

// planContent is what the owner approves: the analysis and the rows.
type planContent struct {
	Analysis planAnalysis `json:"analysis"`
	Tasks    []planRow    `json:"tasks"`
}

// content returns the plan of an intent as the hash sees it.
func content(d intent.IntentDetail) planContent {
	return planContent{Analysis: planAnalysis{
		Restated: nonNil(d.Restated), Fits: nonNil(d.Fits), Conflicts: nonNil(d.Conflicts),
		OutOfReach: nonNil(d.OutOfReach), Assumptions: nonNil(d.Assumptions),
	}, Tasks: planRows(d)}
}

// PlanHash is the SHA-256, in hex, of the canonical JSON of an intent's
// plan as the owner is shown it: the analysis (restated, fits, conflicts,
// out of reach, assumptions) and the live tasks, each one's slug, every
// plan field and its model, ordered by slug. It is the same on every read
// of the same plan, and changes when the analysis changes, or a task is
// replaced, removed or added, or its model changes.
func PlanHash(d intent.IntentDetail) string {
	return hashPlan(content(d))
}

func hashPlan(p planContent) string {
	sum := sha256.Sum256(mustJSON(p))
	return hex.EncodeToString(sum[:])
}

// mustJSON encodes our own structs of strings, numbers and lists, which
// cannot fail.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("request: cannot encode %T: %v", v, err))
	}
	return b
}

// changes says, one sentence each, what differs between a plan version
// and a later plan: each part of the analysis that changed; then, for each
// task of the version by slug, whether it was removed or replaced and
// whether its model changed; then the tasks added since. A version
// journalled before the hash covered the analysis (analysis nil) is
// compared by its rows alone.
func changes(before planSnapshot, after planContent) []string {
	var out []string
	if a := before.Analysis; a != nil {
		parts := []struct {
			then, now []string
			what      string
		}{
			{a.Restated, after.Analysis.Restated, "The restated request changed."},
			{a.Fits, after.Analysis.Fits, "What it builds on changed."},
			{a.Conflicts, after.Analysis.Conflicts, "What it conflicts with changed."},
			{a.OutOfReach, after.Analysis.OutOfReach, "What is out of reach changed."},
			{a.Assumptions, after.Analysis.Assumptions, "The assumptions changed."},
		}
		for _, p := range parts {
			if !slices.Equal(p.then, p.now) {
				out = append(out, p.what)
			}
		}
	}
	now := make(map[string]planRow, len(after.Tasks))
	for _, r := range after.Tasks {
		now[r.Slug] = r
	}
	then := make(map[string]bool, len(before.Tasks))
	for _, b := range before.Tasks {
		then[b.Slug] = true
		a, ok := now[b.Slug]
		if !ok {
			out = append(out, b.Slug+" was removed.")
			continue
		}
		if !bytes.Equal(mustJSON(a.Task), mustJSON(b.Task)) {
			out = append(out, b.Slug+" was replaced.")
		}
		switch {
		case a.Model == b.Model:
		case a.Model == "":
			out = append(out, b.Slug+"'s model was cleared.")
		default:
			out = append(out, b.Slug+"'s model changed to "+a.Model+".")
		}
	}
	for _, a := range after.Tasks {
		if !then[a.Slug] {
			out = append(out, a.Slug+" was added.")
		}
	}
	return out
}

// sentence joins sentences with a space, falling back when there are none.
func sentence(parts []string, otherwise string) string {
	if len(parts) == 0 {
		return otherwise
	}
	return strings.Join(parts, " ")
}
