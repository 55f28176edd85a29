package knowledge_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/ai/scripted"
	"autoapp/knowledge"
)

// TestDistillWithTheScriptedModel asks the distillation question through
// ai.Ask, as the executor will, so the schema is one the AI layer reads
// and sends.
func TestDistillWithTheScriptedModel(t *testing.T) {
	ctx := context.Background()
	s := openLessonStore(t)
	c := s.resolvedCase("notes")
	model := scripted.New(t)
	model.On(scripted.Contains(`"os" imported and not used`), scripted.Reply{
		Text: `{"explanation":"An import was left after its use was removed.","knowable":"lesson",` +
			`"lesson":"Remove an import together with its last use.","same_as":0}`,
	})
	ep := ai.Endpoint{Provider: "scripted", BaseURL: model.URL(), APIKey: "test", Model: "model-1"}
	ask := func(ctx context.Context, instructions, message string, schema json.RawMessage, out any) error {
		_, err := ai.Ask(ctx, time.Now, ep, instructions, message, schema, knowledge.DistillTimeout, out)
		return err
	}
	out, err := s.lessons.DistillQueued(ctx, ask, 0)
	if err != nil || len(out) != 1 || out[0].LessonID == 0 {
		t.Fatalf("%+v, %v", out, err)
	}
	l := s.get(out[0].LessonID)
	if l.Text != "Remove an import together with its last use." || l.Status != knowledge.LessonProvisional || l.CaseID != c.ID {
		t.Fatalf("lesson %+v", l)
	}
	if model.Count() != 1 {
		t.Fatalf("asked %d times", model.Count())
	}
}
