package executor

import (
	"os"
	"slices"
	"testing"

	"autoapp/executor/ai"
	"autoapp/intent/app"
	"autoapp/knowledge"
)

func TestOnlyDeliveredLessonsAreServed(t *testing.T) {
	served := []knowledge.Served{
		{Lesson: knowledge.Lesson{ID: 1, Text: "First lesson."}, Reason: knowledge.ReasonPinned},
		{Lesson: knowledge.Lesson{ID: 2, Text: "Second lesson."}, Reason: knowledge.ReasonWords},
	}
	doc := lessonsDocument{doc: ai.Document{Ref: "lessons:site"}, served: served}
	text := lessonsPreamble
	for _, sv := range served {
		text += "- " + sv.Line() + "\n"
		doc.ends = append(doc.ends, len([]rune(text)))
	}
	for _, tc := range []struct {
		name      string
		docs      []ai.DeliveredDocument
		want, cut []int64
	}{
		{"whole", []ai.DeliveredDocument{{Ref: "lessons:site", Delivery: ai.DeliveredWhole, Delivered: doc.ends[1]}}, []int64{1, 2}, nil},
		{"cut inside the second line", []ai.DeliveredDocument{{Ref: "lessons:site", Delivery: ai.DeliveredCut, Delivered: doc.ends[1] - 3}}, []int64{1}, []int64{2}},
		{"cut inside the first line", []ai.DeliveredDocument{{Ref: "lessons:site", Delivery: ai.DeliveredCut, Delivered: doc.ends[0] - 1}}, nil, []int64{1, 2}},
		{"dropped", []ai.DeliveredDocument{{Ref: "lessons:site", Delivery: ai.DeliveredDropped}}, nil, []int64{1, 2}},
		{"not reported", []ai.DeliveredDocument{{Ref: "intent:site", Delivery: ai.DeliveredWhole}}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids := func(served []knowledge.Served) []int64 {
				var out []int64
				for _, sv := range served {
					out = append(out, sv.Lesson.ID)
				}
				return out
			}
			if got := ids(doc.delivered(tc.docs)); !slices.Equal(got, tc.want) {
				t.Fatalf("served %v, want %v", got, tc.want)
			}
			if got := ids(doc.cut(tc.docs)); !slices.Equal(got, tc.cut) {
				t.Fatalf("not included %v, want %v", got, tc.cut)
			}
		})
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadTaskContext(t *testing.T) {
	dir := t.TempDir()
	// off is every document, but for the attempts, the related lessons or
	// the lessons named.
	off := func(attempts, related, lessons bool) TurnDocuments {
		d := AllDocuments
		d.Attempts, d.Related, d.Lessons = !attempts, !related, !lessons
		return d
	}
	for _, tc := range []struct {
		name, file string
		want       TurnDocuments
	}{
		{"missing", "", AllDocuments},
		{"unreadable", "{not json", AllDocuments},
		{"attempts and lessons off", `{"attempts": false, "lessons": false}`, off(true, false, true)},
		{"related off", `{"related": false}`, off(false, true, false)},
		{"a value that is not false", `{"attempts": "no", "lessons": true}`, AllDocuments},
		{"the file cannot turn off the digest, the intent or the evidence", `{"orientation": false, "intent": false, "evidence": false}`, AllDocuments},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := dir + "/" + tc.name + ".json"
			if tc.file != "" {
				writeFile(t, path, tc.file)
			}
			if got := readTaskContext(path); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestATasksLabelsPointAtAStageOfItsManifest(t *testing.T) {
	static := []app.Stage{{Name: "check"}}
	goService := []app.Stage{{Name: "vet"}, {Name: "compile"}}
	for _, tc := range []struct {
		name   string
		labels []string
		stages []app.Stage
		want   string
	}{
		{"views on the static site", []string{"views"}, static, "check"},
		{"a contract on the Go service", []string{"contract", "views"}, goService, "vet"},
		{"the first label that points at a stage", []string{"acceptance", "host"}, goService, "compile"},
		{"a label that points at no stage of the manifest", []string{"migration"}, goService, ""},
		{"no labels", nil, static, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stageForLabels(tc.labels, tc.stages); got != tc.want {
				t.Fatalf("stage %q, want %q", got, tc.want)
			}
		})
	}
}
