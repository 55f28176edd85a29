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

// PlanHash is the SHA-256, in hex, of the canonical JSON of an intent's
// live tasks: each one's slug, every plan field and its model, ordered by
// slug. It is the same on every read of the same rows, and changes when a
// task is replaced, removed or added, or its model changes.
func PlanHash(d intent.IntentDetail) string {
	return hashRows(planRows(d))
}

func hashRows(rows []planRow) string {
	sum := sha256.Sum256(mustJSON(rows))
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

// changes says, one sentence each, what differs between the rows of a plan
// version and later rows: for each task of the version by slug, whether it
// was removed or replaced and whether its model changed; then the tasks
// added since.
func changes(before, after []planRow) []string {
	now := make(map[string]planRow, len(after))
	for _, r := range after {
		now[r.Slug] = r
	}
	then := make(map[string]bool, len(before))
	var out []string
	for _, b := range before {
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
	for _, a := range after {
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
