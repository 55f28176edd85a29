package executor_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"autoapp/executor"
	"autoapp/executor/ai/scripted"
	"autoapp/executor/builder"
	"autoapp/intent"
	"autoapp/knowledge"
)

// refsOf are the refs of the documents a documents block carries, in order.
func refsOf(block string) []string {
	var refs []string
	for _, m := range regexp.MustCompile(`<document ref="([^"]+)"`).FindAllStringSubmatch(block, -1) {
		refs = append(refs, m[1])
	}
	return refs
}

// whyOf is the search event's list of the run's turn: ref → reason, in
// order, as "ref reason".
func whyOf(t *testing.T, events []knowledge.Event, run string) ([]string, knowledge.Event) {
	t.Helper()
	for _, e := range events {
		if e.Message != executor.MsgDocuments || e.RunID.String != run {
			continue
		}
		list, ok := e.Attrs["why"].([]any)
		if !ok {
			t.Fatalf("the search event's why is %#v", e.Attrs["why"])
		}
		var out []string
		for _, item := range list {
			m, _ := item.(map[string]any)
			out = append(out, fmt.Sprint(m["ref"], " ", m["reason"]))
		}
		return out, e
	}
	t.Fatalf("no search event for %s", run)
	return nil, knowledge.Event{}
}

// TestARetryIsToldItsDocumentsInOrderAndWhyEachIsThere reads what a
// task's second attempt was sent: its instructions say to read the
// documents first and to take hints as facts; its documents come in the
// seed's order — digest, attempts, intent, evidence, lessons — and the
// search event says why each one, and each lesson, reached the model.
func TestARetryIsToldItsDocumentsInOrderAndWhyEachIsThere(t *testing.T) {
	ctx := context.Background()
	h := newHost(t, recording)
	lessons := h.launcher.Lessons
	pinned, err := lessons.Write(ctx, "Every page of the site links the stylesheet site/style.css.", "ann", knowledge.Applies{})
	if err != nil {
		t.Fatal(err)
	}
	if err := lessons.Pin(ctx, pinned, true); err != nil {
		t.Fatal(err)
	}
	// Shares "home", "page" and "greets" with the task.
	worded, err := lessons.Write(ctx, "The home page greets readers from site/index.html; keep its heading there.", "ann", knowledge.Applies{})
	if err != nil {
		t.Fatal(err)
	}

	id := h.plan(t, heading())
	// The first attempt writes no example: it is retried.
	h.model.On(scripted.RunID(runID(id, headingSlug, 1)),
		scripted.Reply{ToolCalls: []scripted.Call{addLine("Hello notes")}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	h.model.On(scripted.RunID(runID(id, headingSlug, 2)),
		scripted.Reply{ToolCalls: []scripted.Call{change(headingC1, example("The home page says Hello notes", "/", "Hello notes"))}},
		scripted.Reply{ToolCalls: []scripted.Call{cycle}},
		scripted.Reply{Text: "Done."})
	if err := h.exec.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	if d := h.wait(t, id); d.Status != intent.IntentDone {
		t.Fatalf("intent %s (%s)", d.Status, d.StopReason)
	}

	retry := runID(id, headingSlug, 2)
	reqs := turnRequests(h, retry)
	if len(reqs) == 0 {
		t.Fatal("the retry asked nothing")
	}
	first := reqs[0]
	if first.Messages[0].Role != "system" || first.Messages[0].Content != builder.Instructions {
		t.Fatalf("the retry's instructions: %+v", first.Messages[0])
	}
	for _, sentence := range []string{builder.ReadDocumentsFirst, builder.HintsAreFacts} {
		if !strings.Contains(builder.Instructions, sentence) {
			t.Errorf("the instructions lack %q", sentence)
		}
	}
	want := []string{"digest:site", "attempts:site", "intent:site", "evidence:site", "lessons:site"}
	if got := refsOf(documentsOf(t, h, retry)); !slices.Equal(got, want) {
		t.Fatalf("the retry was given %v, want %v", got, want)
	}

	why, event := whyOf(t, h.events(t), retry)
	wantWhy := []string{"digest:site application", "attempts:site attempts", "intent:site backlog", "evidence:site application",
		fmt.Sprintf("lesson:%d pinned", pinned), fmt.Sprintf("lesson:%d words", worded)}
	if !slices.Equal(why, wantWhy) {
		t.Fatalf("the search event says %v, want %v", why, wantWhy)
	}
	if event.CallID.String != retry+":turn" || !event.Revision.Valid {
		t.Errorf("the search event's identity: %+v", event.Identity())
	}
}
