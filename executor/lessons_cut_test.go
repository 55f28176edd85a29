package executor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"autoapp/executor/ai"
	"autoapp/executor/ai/provider"
	"autoapp/knowledge"
)

// cutLessons writes the two lessons of the budget test: a short one sharing
// six words with the heading task, so it comes first in the lessons
// document, and one of about 900 characters sharing two, after it.
func cutLessons(t *testing.T, lh *lessonHost) (short, long knowledge.Lesson) {
	t.Helper()
	ctx := context.Background()
	texts := []string{"The home page greets notes readers with its heading.",
		"Say Hello notes once: " + strings.TrimSpace(strings.Repeat("keep every other sentence of the greeting short and plain. ", 15))}
	var out []knowledge.Lesson
	for _, text := range texts {
		id, err := lh.lessons.Write(ctx, text, "ann", knowledge.Applies{})
		if err != nil {
			t.Fatal(err)
		}
		l, err := lh.lessons.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return out[0], out[1]
}

// turnDocuments are the documents the one turn of lh was delivered, in
// order, with their delivered text.
func turnDocuments(t *testing.T, lh *lessonHost) (knowledge.TurnRow, []knowledge.DocumentText) {
	t.Helper()
	ctx := context.Background()
	turns, err := lh.store.Turns(ctx, knowledge.TurnQuery{AppID: "site"})
	if err != nil || len(turns) != 1 {
		t.Fatalf("turns: %+v %v", turns, err)
	}
	row, docs, err := lh.store.Turn(ctx, turns[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return row, docs
}

// windowCutting is a context window, in tokens, under which the heading
// turn's documents end just before the end of the long lesson's line. It
// is measured on a host with no window, running the same turn with the
// same lessons: what its first request carried besides the documents (the
// instructions, the message, the tools) and where the long lesson's line
// ends. The tools' schemas travel compacted, so the measure is short by
// their white space and the cut lands earlier, still inside the line.
func windowCutting(t *testing.T, long knowledge.Lesson) int {
	t.Helper()
	free := newLessonHost(t)
	cutLessons(t, free)
	req := turnRequests(free.host, free.runHeading(t))[0]
	fixed := len(ai.DocumentsPreamble)
	for _, m := range req.Messages {
		if !strings.HasPrefix(m.Content, ai.DocumentsPreamble) {
			fixed += len(m.Content)
		}
	}
	for _, tool := range req.Tools {
		fixed += len(tool.Name) + len(tool.Description) + len(tool.Parameters)
	}
	_, docs := turnDocuments(t, free)
	before := 0
	for _, d := range docs {
		if strings.HasPrefix(d.Ref, "lessons:") {
			line := fmt.Sprintf("[lesson %d] %s", long.ID, long.Text)
			end := strings.Index(d.Text, line)
			if end < 0 {
				t.Fatalf("the lessons document lacks the long lesson:\n%s", d.Text)
			}
			before += end + len(line) - 64
			break
		}
		before += d.Delivered
	}
	// The AI layer keeps a quarter of the window for the answer and takes
	// a token as three characters.
	return (fixed + before) * 4 / 9
}

func TestALessonTheBudgetCutIsKeptNotIncludedAndNeverClosed(t *testing.T) {
	ctx := context.Background()
	lh := newLessonHost(t)
	short, long := cutLessons(t, lh)
	window := windowCutting(t, long)
	if err := lh.providers.Save(provider.Provider{Name: "scripted", BaseURL: lh.model.URL(), On: true, ContextTokens: window}, false); err != nil {
		t.Fatal(err)
	}
	run := lh.runHeading(t)

	// The window cut the lessons document inside the long lesson's line.
	row, docs := turnDocuments(t, lh)
	var delivered string
	for _, d := range docs {
		if strings.HasPrefix(d.Ref, "lessons:") {
			delivered = d.Text
		}
	}
	whole := func(l knowledge.Lesson) bool {
		return strings.Contains(delivered, fmt.Sprintf("[lesson %d] %s\n", l.ID, l.Text))
	}
	if !whole(short) || whole(long) || !strings.Contains(delivered, fmt.Sprintf("[lesson %d]", long.ID)) {
		t.Fatalf("a window of %d tokens did not cut the lessons document inside lesson %d's line:\n%s", window, long.ID, delivered)
	}

	// Both are recorded; the one whose line reached the model is closed by
	// the turn's build, the cut one is not included and stays open after
	// the build, the checks and the end of the turn.
	got, err := lh.servings.ForRun(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 ||
		got[0].LessonID != short.ID || !got[0].Included || got[0].Outcome != knowledge.OutcomeInconclusive || got[0].ContextID != row.ID ||
		got[1].LessonID != long.ID || got[1].Included || got[1].Outcome != "" || !got[1].ClosedAt.IsZero() || got[1].ContextID != row.ID ||
		got[1].Reason != knowledge.ReasonWords {
		t.Fatalf("servings: %+v", got)
	}
}
