package knowledge

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// The counts that raise the review flags (the seed's "Review flags").
const (
	// RecurringServings is how many servings for a failure that came
	// back, with none resolved, flag a lesson recurring.
	RecurringServings = 3
	// RecurredUnderOtherInstructions is how many recurrences in turns
	// given other instructions than a lesson's own flag it
	// instructions_changed.
	RecurredUnderOtherInstructions = 2
)

// Review raises the review flags on start, in one transaction, and answers
// how many lessons it newly flagged. It looks at every provisional and
// confirmed lesson but what a method_unclear answer kept, and counts only
// the servings given since the lesson was last reviewed (confirmed, or
// written by a person), so that a review starts the count again:
//
//   - recurring: served RecurringServings times for a failure that came
//     back, and never once resolved;
//   - instructions_changed: written for other instructions than
//     instructionsHash, and recurred RecurredUnderOtherInstructions times
//     in turns given instructions other than its own;
//   - autoapp_upgraded: distilled by a launcher of another minor version
//     than serverVersion, and never reviewed.
//
// A lesson, or a running value, that records nothing raises nothing. A flag
// a lesson carries already is left as it is; Review never clears a flag and
// never changes a lesson's status.
func (s *Lessons) Review(ctx context.Context, instructionsHash, serverVersion string) (int, error) {
	instructionsHash, serverVersion = strings.TrimSpace(instructionsHash), strings.TrimSpace(serverVersion)
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("knowledge: review lessons: %w", err)
	}
	defer tx.Rollback()
	// A serving's turn is its contexts row; a hint names none, and its
	// turn is the run's. A serving the budget cut was never read and
	// counts for nothing.
	var rows []struct {
		lessonRow
		Recurred          int `db:"recurred"`
		Resolved          int `db:"resolved"`
		RecurredElsewhere int `db:"recurred_elsewhere"`
	}
	if err := tx.SelectContext(ctx, &rows,
		`SELECT `+prefixed("l.", lessonColumns)+`,
		        coalesce(sum(s.outcome = 'recurred'), 0) AS recurred,
		        coalesce(sum(s.outcome = 'resolved'), 0) AS resolved,
		        coalesce(sum(s.outcome = 'recurred' AND l.instructions_hash <> '' AND coalesce(
		            (SELECT c.instructions_hash FROM contexts c WHERE c.id = s.context_id),
		            (SELECT c.instructions_hash FROM contexts c WHERE c.run_id = s.run_id ORDER BY c.id LIMIT 1),
		            l.instructions_hash) <> l.instructions_hash), 0) AS recurred_elsewhere
		 FROM lessons l
		 LEFT JOIN servings s ON s.lesson_id = l.id AND s.included = 1 AND s.outcome IN ('recurred', 'resolved')
		       AND s.served_at > coalesce(l.confirmed_at, -1)
		 WHERE l.status IN ('provisional', 'confirmed') AND l.method_unclear = 0
		 GROUP BY l.id ORDER BY l.id`); err != nil {
		return 0, fmt.Errorf("knowledge: review lessons: %w", err)
	}
	flagged := 0
	for _, r := range rows {
		l, err := r.toLesson()
		if err != nil {
			return 0, err
		}
		flags := slices.Clone(l.Flags)
		raise := func(flag string, when bool) {
			if when && !slices.Contains(flags, flag) {
				flags = append(flags, flag)
			}
		}
		raise(FlagRecurring, r.Recurred >= RecurringServings && r.Resolved == 0)
		raise(FlagInstructionsChanged, instructionsHash != "" && l.InstructionsHash != "" &&
			l.InstructionsHash != instructionsHash && r.RecurredElsewhere >= RecurredUnderOtherInstructions)
		raise(FlagAutoappUpgraded, serverVersion != "" && l.ServerVersion != "" && l.Origin == OriginDistilled &&
			l.ConfirmedAt.IsZero() && minorVersion(l.ServerVersion) != minorVersion(serverVersion))
		if len(flags) == len(l.Flags) {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE lessons SET flags = ? WHERE id = ?`, jsonList(flags), l.ID); err != nil {
			return 0, fmt.Errorf("knowledge: review lesson %d: %w", l.ID, err)
		}
		flagged++
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("knowledge: review lessons: %w", err)
	}
	return flagged, nil
}

// minorVersion is a launcher version up to its minor number: "1.4" of
// "v1.4.2" and of "1.4.0-rc1". A version that is not numbered so (a
// development build's "dev") is itself.
func minorVersion(v string) string {
	parts := strings.SplitN(strings.TrimPrefix(strings.TrimSpace(v), "v"), ".", 3)
	if len(parts) < 2 {
		return v
	}
	for _, p := range parts[:2] {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return v
		}
	}
	return parts[0] + "." + parts[1]
}
