package builder_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"autoapp/executor/ai"
	"autoapp/executor/builder"
	"autoapp/knowledge"
)

func TestKnowledgeShowReadsOneLesson(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	ks, err := knowledge.Open(filepath.Join(t.TempDir(), "knowledge.sqlite"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ks.Close() })
	lessons := knowledge.NewLessons(ks.DB(), time.Now, knowledge.Running{})
	id, err := lessons.Write(ctx, "Declare a field on the Note type before a view reads it.", "ann",
		knowledge.Applies{Stage: "typecheck", Files: []string{"src/notes.ts"}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := builder.NewSession(builder.Config{
		AppID: appID, IntentID: 1, RunID: runID, Task: task(),
		Workspace: openWorkspace(t, h.apps.WorkspaceDir(appID)), Candidates: h.candidates,
		Ask: (&asker{}).ask, Lessons: lessons, Now: time.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })

	t.Run("a lesson kept", func(t *testing.T) {
		raw, err := call(t, s, "knowledge.show", `{"id": `+strconv.FormatInt(id, 10)+`}`)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		applies, _ := got["applies"].(map[string]any)
		if got["text"] != "Declare a field on the Note type before a view reads it." || got["status"] != knowledge.LessonConfirmed ||
			applies["stage"] != "typecheck" {
			t.Fatalf("answer: %s", raw)
		}
		if _, named := got["confirmedBy"]; named {
			t.Fatalf("the answer names the reviewer: %s", raw)
		}
		if _, counted := got["read"]; counted {
			t.Fatalf("the first lesson read says how many were read: %s", raw)
		}
	})
	t.Run("from the second lesson read, how many that makes", func(t *testing.T) {
		second, err := lessons.Write(ctx, "Keep each view in its own file.", "ann", knowledge.Applies{})
		if err != nil {
			t.Fatal(err)
		}
		for _, read := range []int64{second, id} {
			raw, err := call(t, s, "knowledge.show", `{"id": `+strconv.FormatInt(read, 10)+`}`)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(raw), "This turn has now read 2 lessons in full. There is no list of lessons") {
				t.Errorf("reading lesson %d again says: %s", read, raw)
			}
		}
	})
	t.Run("what a method_unclear answer kept", func(t *testing.T) {
		method, err := lessons.Add(ctx, knowledge.Lesson{Text: "It was unclear when the checks run.", CaseID: 1, MethodUnclear: true})
		if err != nil {
			t.Fatal(err)
		}
		raw, err := call(t, s, "knowledge.show", `{"id": `+strconv.FormatInt(method, 10)+`}`)
		r, ok := errors.AsType[*ai.Refusal](err)
		if !ok || len(r.Problems) != 1 || r.Problems[0].Field != "id" ||
			r.Problems[0].Message != "lesson "+strconv.FormatInt(method, 10)+" is a note for a person about the way of working, not a lesson to follow; it is never served" {
			t.Fatalf("answer: %s %v", raw, err)
		}
	})
	t.Run("no such lesson", func(t *testing.T) {
		_, err := call(t, s, "knowledge.show", `{"id": 999}`)
		if r, ok := errors.AsType[*ai.Refusal](err); !ok || len(r.Problems) != 1 || r.Problems[0].Field != "id" {
			t.Fatalf("answer: %v", err)
		}
	})
	t.Run("no lessons kept", func(t *testing.T) {
		bare := newSession(t, h, nil)
		raw, err := call(t, bare, "knowledge.show", `{"id": 1}`)
		if err != nil || string(raw) != `"`+builder.NoLessons+`"` {
			t.Fatalf("answer: %s %v", raw, err)
		}
	})
}
