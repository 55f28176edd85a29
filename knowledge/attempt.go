package knowledge

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"autoapp/knowledge/origin"
)

// The log lines a retry's attempts document is read from, by run id.
const (
	// MsgAttemptEnded is written when a task's attempt is judged: what was
	// still wrong at its end, what it read and what its tools refused.
	MsgAttemptEnded = "an attempt ended"
	// MsgDiagnosed is written when the planning model read a failed
	// attempt: its diagnosis (its advice and note are the person's).
	MsgDiagnosed = "the planning model read a failure"
)

// AttemptFacts is what the host saw of one attempt at a task, beyond the
// files it changed (read from git) and how it ended (its task move).
type AttemptFacts struct {
	// StillWrong are the problems of its last build, and the failed
	// examples of its last check when that check came after the build.
	StillWrong []string `json:"still_wrong,omitempty"`
	// Reads are the files source.read read, in order.
	Reads []string `json:"reads,omitempty"`
	// Refused is one sentence per refused call.
	Refused []string `json:"refused,omitempty"`
	// Diagnosis is the planning model's reading of its failure.
	Diagnosis string `json:"diagnosis,omitempty"`
}

// maxAttemptItems bounds each list an attempt's line keeps.
const maxAttemptItems = 50

// RecordAttempt writes the line saying how the attempt runID at appID
// ended, at once (not through the log's queue): the next attempt may be
// told it a moment later.
func (s *Store) RecordAttempt(ctx context.Context, runID, appID string, f AttemptFacts) error {
	attrs := map[string]any{}
	for key, list := range map[string][]string{"still_wrong": f.StillWrong, "reads": f.Reads, "refused": f.Refused} {
		if len(list) > 0 {
			attrs[key] = list[:min(len(list), maxAttemptItems)]
		}
	}
	ctx = origin.WithIdentity(ctx, origin.Identity{RunID: runID, AppID: appID, CallID: origin.IdentityFrom(ctx).CallID})
	return s.Append(ctx, Event{Level: LevelInfo, Message: MsgAttemptEnded, Attrs: attrs})
}

// RecordDiagnosis writes the planning model's diagnosis of the failed
// attempt runID at appID.
func (s *Store) RecordDiagnosis(ctx context.Context, runID, appID, diagnosis string) error {
	diagnosis = strings.TrimSpace(diagnosis)
	if diagnosis == "" {
		return nil
	}
	ctx = origin.WithIdentity(ctx, origin.Identity{RunID: runID, AppID: appID, CallID: origin.IdentityFrom(ctx).CallID})
	return s.Append(ctx, Event{Level: LevelInfo, Message: MsgDiagnosed, Attrs: map[string]any{"diagnosis": diagnosis}})
}

// AttemptFacts reads what was recorded of each of runIDs, the newest line
// of each kind winning. A run with nothing recorded has no entry.
func (s *Store) AttemptFacts(ctx context.Context, runIDs []string) (map[string]AttemptFacts, error) {
	out := map[string]AttemptFacts{}
	runs := slices.Compact(slices.Sorted(slices.Values(slices.DeleteFunc(slices.Clone(runIDs), func(id string) bool { return id == "" }))))
	if len(runs) == 0 {
		return out, nil
	}
	if len(runs) > MaxWorkRuns {
		runs = runs[len(runs)-MaxWorkRuns:]
	}
	args := []any{MsgAttemptEnded, MsgDiagnosed}
	for _, r := range runs {
		args = append(args, r)
	}
	var rows []struct {
		RunID   string `db:"run_id"`
		Message string `db:"message"`
		Attrs   string `db:"attrs"`
	}
	if err := s.db.Read.SelectContext(ctx, &rows, `SELECT run_id, message, attrs FROM events
		WHERE message IN (?, ?) AND run_id IN (?`+strings.Repeat(", ?", len(runs)-1)+`) ORDER BY id`, args...); err != nil {
		return nil, fmt.Errorf("knowledge: what the attempts left: %w", err)
	}
	for _, r := range rows {
		var f AttemptFacts
		if err := json.Unmarshal([]byte(r.Attrs), &f); err != nil {
			continue
		}
		have := out[r.RunID]
		if r.Message == MsgDiagnosed {
			have.Diagnosis = f.Diagnosis
		} else {
			f.Diagnosis = have.Diagnosis
			have = f
		}
		out[r.RunID] = have
	}
	return out, nil
}
