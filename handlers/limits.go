package handlers

import (
	"github.com/gofiber/fiber/v2"

	"autoapp/executor/ai"
	"autoapp/views"
)

// Limits is what the handlers need of limits.json (*ai.LimitsFile).
type Limits interface {
	Read() (ai.Limits, string)
	Save(idle, turn string) error
}

// limitsView is the Settings form: the limits in force, or as typed after
// a refusal, and why the defaults hold when they do.
func (h *settingsPages) limitsView(typedIdle, typedTurn string) *views.LimitsView {
	if h.Limits == nil {
		return nil
	}
	l, problem := h.Limits.Read()
	v := &views.LimitsView{Idle: ai.Minutes(l.Idle), Turn: ai.Minutes(l.Wall), Problem: problem}
	if typedIdle != "" || typedTurn != "" {
		v.Idle, v.Turn = typedIdle, typedTurn
	}
	return v
}

// limitsLine says limits in a line: "no tool call for 8 minutes, 20
// minutes a turn".
func limitsLine(l ai.Limits) string {
	return "no tool call for " + duration(l.Idle) + ", " + duration(l.Wall) + " a turn"
}

// limitsSave keeps the idle and turn minutes typed in Settings, or shows
// the form again with every problem named.
func (h *settingsPages) limitsSave(c *fiber.Ctx) error {
	idle, turn := c.FormValue("idle_minutes"), c.FormValue("turn_minutes")
	err := h.Limits.Save(idle, turn)
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderSettings(c, settingsNotes{refusal: views.Refusal{At: "limits", Sentence: sentence}, typedIdle: idle, typedTurn: turn})
	}
	if err != nil {
		return err
	}
	return c.Redirect("/settings#limits", fiber.StatusSeeOther)
}
