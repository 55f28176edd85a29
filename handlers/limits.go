package handlers

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"autoapp/executor/ai"
	"autoapp/views"
)

// Limits is what the handlers need of limits.json (*ai.LimitsFile).
type Limits interface {
	Read() (ai.Limits, string)
	Save(idle, turn string) error
	RunsAtOnce() int
	SaveRunsAtOnce(text string) error
}

// limitsView is the Settings form: the limits in force, or as typed after
// a refusal, and why the defaults hold when they do.
func (h *settingsPages) limitsView(typedIdle, typedTurn, typedRuns string) *views.LimitsView {
	if h.Limits == nil {
		return nil
	}
	l, problem := h.Limits.Read()
	v := &views.LimitsView{Idle: ai.Minutes(l.Idle), Turn: ai.Minutes(l.Wall), Problem: problem,
		Runs: strconv.Itoa(h.Limits.RunsAtOnce()), MaxRuns: ai.MaxRunsAtOnce}
	if typedIdle != "" || typedTurn != "" {
		v.Idle, v.Turn = typedIdle, typedTurn
	}
	if typedRuns != "" {
		v.Runs = typedRuns
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

// runsSave keeps how many runs may go at once, or shows the form again
// with the problem named.
func (h *settingsPages) runsSave(c *fiber.Ctx) error {
	runs := c.FormValue("runs_at_once")
	err := h.Limits.SaveRunsAtOnce(runs)
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		return h.renderSettings(c, settingsNotes{refusal: views.Refusal{At: "runs", Sentence: sentence}, typedRuns: runs})
	}
	if err != nil {
		return err
	}
	return c.Redirect("/settings#runs", fiber.StatusSeeOther)
}
