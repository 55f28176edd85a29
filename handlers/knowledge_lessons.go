package handlers

import (
	"context"
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"autoapp/knowledge"
	"autoapp/views"
)

// lessonPages are the Knowledge page's lessons: the list, a lesson's page
// with its replay, and the owner's writes on lessons (Lessons, Cases,
// Servings, LessonReplays).
type lessonPages struct{ frame }

// Lessons is what the handlers need of the knowledge's lessons.
type Lessons interface {
	List(ctx context.Context, q knowledge.LessonQuery) ([]knowledge.Lesson, error)
	Confirm(ctx context.Context, id int64, by string) error
	Retire(ctx context.Context, id int64, by string) error
	Write(ctx context.Context, text, by string, applies knowledge.Applies) (int64, error)
	Replace(ctx context.Context, id int64, text, by string) (int64, error)
}

// Servings is what the handlers read of where lessons were served.
type Servings interface {
	ForRun(ctx context.Context, runID string) ([]knowledge.Serving, error)
	ForLesson(ctx context.Context, lessonID int64) ([]knowledge.Serving, error)
	Counts(ctx context.Context, ids ...int64) (map[int64]knowledge.ServingCounts, error)
}

func servingLine(sv knowledge.Serving) string {
	return fmt.Sprintf("%s to %s (%s): %s", clock(sv.ServedAt), sv.RunID, sv.Reason, servingOutcome(sv))
}

// servingOutcome is what came of a serving in a word or two: its outcome,
// open while it waits for one, or not included when the budget cut the
// lesson's line and it is never scored.
func servingOutcome(sv knowledge.Serving) string {
	switch {
	case !sv.Included:
		return "not included"
	case sv.Outcome == "":
		return "open"
	}
	return sv.Outcome
}

// reviewer names who reviews: what "Reviewing as" holds, else the owner.
func reviewer(c *fiber.Ctx) string {
	if by := strings.TrimSpace(c.FormValue("by")); by != "" {
		return by
	}
	if o, ok := c.Locals(localOwner).(string); ok {
		return o
	}
	return "the owner"
}

func (h *lessonPages) knowledgeLessons(c *fiber.Ctx) error {
	return h.renderLessons(c, views.Refusal{})
}

func (h *lessonPages) renderLessons(c *fiber.Ctx, r views.Refusal) error {
	ctx := c.UserContext()
	s, err := h.page(c, "Knowledge", "knowledge")
	if err != nil {
		return err
	}
	v := views.KnowledgeView{Tab: "lessons", LessonStatus: c.Query("status"), Review: c.Query("review") == "1", Refusal: r}
	if h.Lessons != nil {
		list, err := h.Lessons.List(ctx, knowledge.LessonQuery{Status: v.LessonStatus, NeedsReview: v.Review})
		if err != nil {
			return err
		}
		var counts map[int64]knowledge.ServingCounts
		if h.Servings != nil {
			ids := make([]int64, len(list))
			for i, l := range list {
				ids[i] = l.ID
			}
			if counts, err = h.Servings.Counts(ctx, ids...); err != nil {
				return err
			}
		}
		for _, l := range list {
			line := lessonLine(l)
			if c := counts[l.ID]; c.Total() > 0 {
				line.Counts = c.Sentence()
			}
			if l.CaseID != 0 && h.Cases != nil {
				if k, err := h.Cases.Get(ctx, l.CaseID); err == nil {
					line.CaseProblem, line.Diagnosis = firstLine(k.Message, 200), firstLine(explanation(k.Diagnosis), 300)
				}
			}
			if h.Servings != nil {
				served, err := h.Servings.ForLesson(ctx, l.ID)
				if err != nil {
					return err
				}
				for _, sv := range served {
					line.Servings = append(line.Servings, servingLine(sv))
					if sv.Included {
						line.Served++
					} else {
						line.Cut++
					}
				}
			}
			v.Lessons = append(v.Lessons, line)
		}
	}
	return render(c, views.KnowledgePageView(s, v))
}

// lessonWrite runs an owner's write on lesson id (0 for a new one) and
// shows the lessons, with a refusal beside what it refused; a form sent
// from the lesson's own page (from=lesson) comes back to it.
func (h *lessonPages) lessonWrite(c *fiber.Ctx, id int64, write func(ctx context.Context) error) error {
	if h.Lessons == nil {
		return fiber.NewError(fiber.StatusNotFound, "This launcher keeps no lessons.")
	}
	at := "write"
	if id != 0 {
		at = fmt.Sprintf("lesson-%d", id)
	}
	back := id != 0 && c.FormValue("from") == "lesson"
	err := write(c.UserContext())
	if status, sentence, ok := refused(err); ok {
		c.Status(status)
		if back {
			return h.renderLesson(c, id, views.Refusal{At: at, Sentence: sentence}, false)
		}
		return h.renderLessons(c, views.Refusal{At: at, Sentence: sentence})
	}
	if err != nil {
		return err
	}
	if back {
		return c.Redirect(lessonPath(id), fiber.StatusSeeOther)
	}
	return c.Redirect("/knowledge/lessons", fiber.StatusSeeOther)
}

func (h *lessonPages) lessonNew(c *fiber.Ctx) error {
	return h.lessonWrite(c, 0, func(ctx context.Context) error {
		_, err := h.Lessons.Write(ctx, c.FormValue("text"), reviewer(c),
			knowledge.Applies{Stage: strings.TrimSpace(c.FormValue("stage")), Files: listed(c.FormValue("files"))})
		return err
	})
}

func (h *lessonPages) lessonConfirm(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	return h.lessonWrite(c, id, func(ctx context.Context) error { return h.Lessons.Confirm(ctx, id, reviewer(c)) })
}

func (h *lessonPages) lessonRetire(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	return h.lessonWrite(c, id, func(ctx context.Context) error { return h.Lessons.Retire(ctx, id, reviewer(c)) })
}

// listed are the entries of a field that lists them separated by commas
// or lines.
func listed(field string) []string {
	return strings.FieldsFunc(field, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' })
}

func (h *lessonPages) lessonReplace(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	return h.lessonWrite(c, id, func(ctx context.Context) error {
		_, err := h.Lessons.Replace(ctx, id, c.FormValue("text"), reviewer(c))
		return err
	})
}
