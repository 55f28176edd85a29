package knowledge

import (
	"context"
	"fmt"
	"strings"

	"autoapp/intent/refusal"
)

// RecordHints writes one serving per hint a failed build's answer gave the
// turn of runID, with no contexts row (the turn has not ended). A hint is
// in a tool result, so it was delivered whole. Unlike Record, the run's
// builds so far do not close them: a hint stands beside the build that
// failed, so the run's next build or run of the checks that can say
// something closes it, or End when none comes.
func (s *Servings) RecordHints(ctx context.Context, runID string, hints []Served) error {
	runID = strings.TrimSpace(runID)
	if runID == "" {
		return refuse(refusal.Invalid, "A serving needs the run it was given to.")
	}
	for _, h := range hints {
		switch {
		case h.Lesson.ID <= 0:
			return refuse(refusal.Invalid, "A serving needs the lesson it served.")
		case h.Reason != ReasonHint:
			return refuse(refusal.Invalid, "Lesson %d was served for %q, not as a hint.", h.Lesson.ID, h.Reason)
		}
	}
	if len(hints) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.now()
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("knowledge: record the hints of %s: %w", runID, err)
	}
	defer tx.Rollback()
	for _, h := range hints {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO servings (lesson_id, run_id, context_id, served_at, reason, related_file, included, for_stage)
			 VALUES (?, ?, NULL, ?, ?, '', 1, ?)`, h.Lesson.ID, runID, at.UnixMilli(), ReasonHint, h.ForStage); err != nil {
			return fmt.Errorf("knowledge: record the hint of lesson %d to %s: %w", h.Lesson.ID, runID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("knowledge: record the hints of %s: %w", runID, err)
	}
	return nil
}
