package builder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"autoapp/executor/ai"
	"autoapp/executor/workspace"
	"autoapp/knowledge"
)

// LessonGetter reads one lesson (*knowledge.Lessons).
type LessonGetter interface {
	Get(ctx context.Context, id int64) (knowledge.Lesson, error)
}

// NoLessons is knowledge.show's answer when the launcher keeps no lessons.
const NoLessons = "No lessons are kept here."

// lessonAnswer is one lesson as knowledge.show gives it: never the name of
// the person who reviewed it.
type lessonAnswer struct {
	ID           int64             `json:"id"`
	Text         string            `json:"text"`
	Status       string            `json:"status"`
	Applies      knowledge.Applies `json:"applies"`
	NeedsReview  []string          `json:"needsReview,omitempty"`
	SupersededBy int64             `json:"supersededBy,omitempty"`
}

func (s *Session) knowledgeShow() ai.Tool {
	type input struct {
		ID int64 `json:"id"`
	}
	return ai.Tool{
		Name: "knowledge.show",
		Description: "Read one lesson in full by the id a lesson line or a hint names ([lesson 12] is id 12): its text, its status and where it applies " +
			"(build stage, files, routes). There is no list of lessons: do not walk ids, read only one you were given.",
		Schema: json.RawMessage(`{"type": "object", "additionalProperties": false, "required": ["id"], "properties": {
			"id": {"type": "integer", "minimum": 1, "description": "the lesson's id, as a lesson line or a hint names it"}}}`),
		Example: json.RawMessage(`{"id": 12}`),
		Handler: handler(s, "knowledge.show", func(ctx context.Context, _ workspace.CommitMeta, in input) (any, error) {
			if s.cfg.Lessons == nil {
				return NoLessons, nil
			}
			l, err := s.cfg.Lessons.Get(ctx, in.ID)
			if e, ok := errors.AsType[*knowledge.Error](err); ok && e.Code == knowledge.ENotFound {
				return nil, ai.Refuse(ai.Problem{Field: "id", Message: fmt.Sprintf("there is no lesson %d; read only an id a lesson line or a hint names", in.ID)})
			}
			if err != nil {
				return nil, err
			}
			return lessonAnswer{ID: l.ID, Text: l.Text, Status: l.Status, Applies: l.Applies, NeedsReview: l.Flags, SupersededBy: l.SupersededBy}, nil
		}),
	}
}
