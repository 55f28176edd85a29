package builder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"autoapp/executor/ai"
	"autoapp/executor/candidate"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
	"autoapp/knowledge"
)

// LessonGetter reads one lesson (*knowledge.Lessons).
type LessonGetter interface {
	Get(ctx context.Context, id int64) (knowledge.Lesson, error)
}

// HintGetter finds the lessons that stand beside a failed build's problems
// at stage (*knowledge.Lessons).
type HintGetter interface {
	Hints(ctx context.Context, stage string, problems []string) ([]knowledge.Served, error)
}

// ReadAHint ends the hints of a failed build's answer.
const ReadAHint = "These are lessons from earlier work, facts to weigh; read one in full with knowledge.show and its id."

// InstructionsHash is the hash of Instructions as a turn's contexts row
// and a lesson written under them record it.
func InstructionsHash() string { return knowledge.Hash(Instructions) }

// hint adds to a's answer the lessons standing beside a failed build's
// problems: those of the first failing stage, at most knowledge.MaxServed.
// Each lesson is told to Hinted once a turn. A hint that cannot be found
// leaves the answer as it is: the build's own problems are what matter.
func (s *Session) hint(ctx context.Context, a *cycleAnswer, res candidate.Result) {
	if s.cfg.Hints == nil || res.Step != candidate.StepBuildFailed || res.Build == nil {
		return
	}
	var stage string
	var problems []string
	for _, p := range res.Build.Problems {
		if stage == "" {
			stage = p.Stage
		}
		if p.Stage == stage {
			problems = append(problems, p.String())
		}
	}
	if stage == "" {
		return
	}
	hints, err := s.cfg.Hints.Hints(ctx, stage, problems)
	if err != nil || len(hints) == 0 {
		return
	}
	var fresh []knowledge.Served
	for _, h := range hints {
		line := fmt.Sprintf("hint %d: %s", h.Lesson.ID, h.Lesson.Text)
		if h.Label != "" {
			line += " " + h.Label
		}
		a.Hints = append(a.Hints, line)
		if !s.st.hinted[h.Lesson.ID] {
			s.st.hinted[h.Lesson.ID] = true
			fresh = append(fresh, h)
		}
	}
	a.Hints = append(a.Hints, ReadAHint)
	if s.cfg.Hinted != nil && len(fresh) > 0 {
		s.cfg.Hinted(ctx, fresh)
	}
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
	// Read says, from the second lesson the turn reads in full, how many
	// that makes: there is no list of lessons to walk.
	Read string `json:"read,omitempty"`
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
			if e, ok := errors.AsType[*refusal.Error](err); ok && e.Code == refusal.NotFound {
				return nil, ai.Refuse(refusal.Problem{Field: "id", Message: fmt.Sprintf("there is no lesson %d; read only an id a lesson line or a hint names", in.ID)})
			}
			if err != nil {
				return nil, err
			}
			if l.MethodUnclear {
				return nil, ai.Refuse(refusal.Problem{Field: "id", Message: fmt.Sprintf("lesson %d is a note for a person about the way of working, not a lesson to follow; it is never served", in.ID)})
			}
			s.st.shown[l.ID] = true
			a := lessonAnswer{ID: l.ID, Text: l.Text, Status: l.Status, Applies: l.Applies, NeedsReview: l.Flags, SupersededBy: l.SupersededBy}
			if n := len(s.st.shown); n > 1 {
				a.Read = fmt.Sprintf("This turn has now read %d lessons in full. There is no list of lessons: read only an id a lesson line or a hint names.", n)
			}
			return a, nil
		}),
	}
}
