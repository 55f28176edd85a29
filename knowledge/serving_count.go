package knowledge

import (
	"context"
	"fmt"
	"strings"
)

// ServingCounts is what came of a lesson's servings, by outcome (the
// seed's "Reviewing"). ResolvedUnrelatedByStage is how many of the
// resolved ones were hints whose lesson named another stage than the
// failure's, or none: a repair resolves every hint served for its failure,
// the one that helped and the one that only shared a word, so that number
// is the noise in Resolved. Open are delivered and not yet closed;
// NotIncluded were cut by the budget and are never scored.
type ServingCounts struct {
	Resolved                 int `json:"resolved" db:"resolved"`
	ResolvedUnrelatedByStage int `json:"resolvedUnrelatedByStage" db:"resolved_unrelated_by_stage"`
	Recurred                 int `json:"recurred" db:"recurred"`
	Blocked                  int `json:"blocked" db:"blocked"`
	Inconclusive             int `json:"inconclusive" db:"inconclusive"`
	Unrelated                int `json:"unrelated" db:"unrelated"`
	None                     int `json:"none" db:"none"`
	Open                     int `json:"open" db:"open"`
	NotIncluded              int `json:"notIncluded" db:"not_included"`
}

// Short is the counts as `knowledge list` shows them:
// resolved/recurred/blocked/unrelated.
func (c ServingCounts) Short() string {
	return fmt.Sprintf("%d/%d/%d/%d", c.Resolved, c.Recurred, c.Blocked, c.Unrelated)
}

// Counts answers the serving counts of each of the lessons ids; a lesson
// never served has zero counts (and no entry).
func (s *Servings) Counts(ctx context.Context, ids ...int64) (map[int64]ServingCounts, error) {
	out := make(map[int64]ServingCounts, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	var rows []struct {
		LessonID int64 `db:"lesson_id"`
		ServingCounts
	}
	if err := s.db.Read.SelectContext(ctx, &rows,
		`SELECT s.lesson_id,
		        coalesce(sum(s.outcome = 'resolved'), 0) AS resolved,
		        coalesce(sum(s.outcome = 'resolved' AND s.reason = 'hint'
		                     AND (l.applies_stage = '' OR l.applies_stage <> s.for_stage)), 0) AS resolved_unrelated_by_stage,
		        coalesce(sum(s.outcome = 'recurred'), 0) AS recurred,
		        coalesce(sum(s.outcome = 'blocked'), 0) AS blocked,
		        coalesce(sum(s.outcome = 'inconclusive'), 0) AS inconclusive,
		        coalesce(sum(s.outcome = 'unrelated'), 0) AS unrelated,
		        coalesce(sum(s.outcome = 'none'), 0) AS none,
		        coalesce(sum(s.outcome IS NULL AND s.included = 1), 0) AS open,
		        coalesce(sum(s.included = 0), 0) AS not_included
		 FROM servings s JOIN lessons l ON l.id = s.lesson_id
		 WHERE s.lesson_id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)
		 GROUP BY s.lesson_id`, args...); err != nil {
		return nil, fmt.Errorf("knowledge: the servings' counts: %w", err)
	}
	for _, r := range rows {
		out[r.LessonID] = r.ServingCounts
	}
	return out, nil
}

// Total is how many servings the counts count, open and cut ones too.
func (c ServingCounts) Total() int {
	return c.Resolved + c.Recurred + c.Blocked + c.Inconclusive + c.Unrelated + c.None + c.Open + c.NotIncluded
}

// Sentence is the counts as `knowledge show` and the lesson page say them.
func (c ServingCounts) Sentence() string {
	s := fmt.Sprintf("Servings: %d resolved (of which unrelated by stage: %d), %d recurred, %d blocked, %d inconclusive, %d unrelated, %d none",
		c.Resolved, c.ResolvedUnrelatedByStage, c.Recurred, c.Blocked, c.Inconclusive, c.Unrelated, c.None)
	var more []string
	if c.Open > 0 {
		more = append(more, fmt.Sprintf("%d open", c.Open))
	}
	if c.NotIncluded > 0 {
		more = append(more, fmt.Sprintf("%d cut by the budget, never scored", c.NotIncluded))
	}
	if len(more) > 0 {
		s += "; " + strings.Join(more, ", ")
	}
	return s + "."
}
