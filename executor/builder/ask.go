package builder

import (
	"context"
	"encoding/json"
	"strings"

	"autoapp/executor/ai"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
)

func (s *Session) intentAsk() ai.Tool {
	type input struct {
		Question string `json:"question"`
	}
	return ai.Tool{
		Name: "intent.ask",
		Description: "Ask the person one question and end the turn: the task waits for their answer, and the next turn is given it. " +
			"Ask only what you cannot decide from the plan and the workspace, in one question that says what you tried and what you need. " +
			"At most two questions a task.",
		Schema: json.RawMessage(`{"type": "object", "additionalProperties": false, "required": ["question"], "properties": {
			"question": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "the question for the person, with what you tried"}}}`),
		Example: json.RawMessage(`{"question": "The plan says to list notes by date, but notes have no date. Should I add one, or list them by title?"}`),
		Handler: handler(s, "intent.ask", func(ctx context.Context, _ workspace.CommitMeta, in input) (any, error) {
			q := strings.TrimSpace(in.Question)
			if q == "" {
				return nil, ai.Refuse(refusal.Problem{Field: "question", Message: "give the question for the person"})
			}
			refused, err := s.cfg.Ask(ctx, q)
			if err != nil {
				return nil, err
			}
			if refused != "" {
				return nil, ai.Refuse(refusal.Problem{Field: "question", Message: refused})
			}
			s.st.question = q
			return ai.Question{Text: q}, nil
		}),
	}
}
