package knowledge

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// SetRunning tells the lessons the hash of the builder's instructions
// running now and the server's version: a lesson distilled afterwards
// records them when its case does not say (a case opened during a turn
// names no contexts row, since the row is written when the turn ends).
func (s *Lessons) SetRunning(instructionsHash, serverVersion string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running.instructionsHash = strings.TrimSpace(instructionsHash)
	s.running.serverVersion = strings.TrimSpace(serverVersion)
}

func (s *Lessons) runningNow() (instructionsHash, serverVersion string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running.instructionsHash, s.running.serverVersion
}

// Review raises the review flags that depend on what runs now, on start,
// in one transaction, and answers how many lessons it newly flagged. A
// provisional or confirmed lesson is flagged instructions_changed when it
// was written against other instructions than instructionsHash, and
// upgraded when another server version than serverVersion wrote it; a
// lesson that records none, or an empty current value, raises nothing.
// Each difference is flagged once: a lesson a person confirmed since is
// not flagged again for the same running instructions or version. Review
// never changes a lesson's status, and leaves recurring to distillation.
func (s *Lessons) Review(ctx context.Context, instructionsHash, serverVersion string) (int, error) {
	instructionsHash, serverVersion = strings.TrimSpace(instructionsHash), strings.TrimSpace(serverVersion)
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("knowledge: review lessons: %w", err)
	}
	defer tx.Rollback()
	var rows []struct {
		lessonRow
		ReviewedHash    string `db:"reviewed_instructions_hash"`
		ReviewedVersion string `db:"reviewed_server_version"`
	}
	if err := tx.SelectContext(ctx, &rows,
		`SELECT `+lessonColumns+`, reviewed_instructions_hash, reviewed_server_version FROM lessons
		 WHERE status IN ('provisional', 'confirmed') ORDER BY id`); err != nil {
		return 0, fmt.Errorf("knowledge: review lessons: %w", err)
	}
	flagged := 0
	for _, r := range rows {
		l, err := r.toLesson()
		if err != nil {
			return 0, err
		}
		flags, hash, version := slices.Clone(l.Flags), r.ReviewedHash, r.ReviewedVersion
		if instructionsHash != "" && l.InstructionsHash != "" && l.InstructionsHash != instructionsHash && hash != instructionsHash {
			hash = instructionsHash
			if !slices.Contains(flags, FlagInstructionsChanged) {
				flags = append(flags, FlagInstructionsChanged)
			}
		}
		if serverVersion != "" && l.ServerVersion != "" && l.ServerVersion != serverVersion && version != serverVersion {
			version = serverVersion
			if !slices.Contains(flags, FlagUpgraded) {
				flags = append(flags, FlagUpgraded)
			}
		}
		if hash == r.ReviewedHash && version == r.ReviewedVersion {
			continue
		}
		if _, err := tx.ExecContext(ctx,
			`UPDATE lessons SET flags = ?, reviewed_instructions_hash = ?, reviewed_server_version = ? WHERE id = ?`,
			jsonList(flags), hash, version, l.ID); err != nil {
			return 0, fmt.Errorf("knowledge: review lesson %d: %w", l.ID, err)
		}
		if len(flags) > len(l.Flags) {
			flagged++
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("knowledge: review lessons: %w", err)
	}
	return flagged, nil
}
