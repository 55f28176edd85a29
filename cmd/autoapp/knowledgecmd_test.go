package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"autoapp/knowledge"
)

// lessonIDs are the lessons lessonRoot keeps.
type lessonIDs struct {
	caseID      int64
	provisional int64 // distilled from caseID, stage compile, file main.go, flagged recurring
	curated     int64 // confirmed, applies to files under views/
	general     int64 // confirmed, applies to no stage and no files
	retired     int64 // curated, then retired
	method      int64 // what a method_unclear answer kept about caseID
}

// lessonRoot is a data folder with a failed build's case, diagnosed, and
// the lessons lessonIDs names.
func lessonRoot(t *testing.T) (string, lessonIDs) {
	t.Helper()
	root := t.TempDir()
	st, err := open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	cases := knowledge.NewCases(st.Knowledge.DB(), time.Now)
	lessons := knowledge.NewLessons(st.Knowledge.DB(), time.Now, knowledge.Running{})
	opened, _, err := cases.Build(ctx, knowledge.BuildObserved{
		AppID: "notes", RunID: "intent-1-0001-add-tags-a1", Revision: "rev-1", ReleaseBefore: "rel-1",
		Request: "Add tags to notes.", Model: "m", ServerVersion: "test", StagesRun: []string{"compile"},
		Problems: []knowledge.BuildProblem{{Stage: "compile", Message: "main.go:12: undefined: Tag", Signature: "undefined-tag"}},
	})
	if err != nil || len(opened) != 1 {
		t.Fatalf("a failed build opened %v, %v", opened, err)
	}
	var ids lessonIDs
	ids.caseID = opened[0]
	if err := cases.Diagnose(ctx, ids.caseID, "The handler used the Tag type before the model declared it."); err != nil {
		t.Fatal(err)
	}
	if ids.provisional, err = lessons.Add(ctx, knowledge.Lesson{CaseID: ids.caseID,
		Text:    "Declare a type in the model before a handler uses it.\nThe compile stage reads the whole package.",
		Applies: knowledge.Applies{Stage: "compile", Files: []string{"main.go"}}}); err != nil {
		t.Fatal(err)
	}
	if err := lessons.Flag(ctx, ids.provisional, knowledge.FlagRecurring); err != nil {
		t.Fatal(err)
	}
	if ids.curated, err = lessons.Write(ctx, "Templates live under views and are generated.", "Ada",
		knowledge.Applies{Files: []string{"views/notes.templ"}}); err != nil {
		t.Fatal(err)
	}
	if ids.general, err = lessons.Write(ctx, "Read the task's criteria before the first edit.", "Ada", knowledge.Applies{}); err != nil {
		t.Fatal(err)
	}
	if ids.retired, err = lessons.Write(ctx, "An old habit, given up.", "Ada", knowledge.Applies{}); err != nil {
		t.Fatal(err)
	}
	if err := lessons.Retire(ctx, ids.retired, "ann"); err != nil {
		t.Fatal(err)
	}
	if ids.method, err = lessons.Add(ctx, knowledge.Lesson{CaseID: ids.caseID, MethodUnclear: true,
		Text: "It was unclear whether the compile stage runs before the checks."}); err != nil {
		t.Fatal(err)
	}
	return root, ids
}

// lessonNow reads lesson id from root as it stands.
func lessonNow(t *testing.T, root string, id int64) knowledge.Lesson {
	t.Helper()
	st, err := open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, err := knowledge.NewLessons(st.Knowledge.DB(), time.Now, knowledge.Running{}).Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestKnowledgeListFilters(t *testing.T) {
	root, ids := lessonRoot(t)
	for _, tc := range []struct {
		name string
		flag string
		want []int64
	}{
		{"provisional and confirmed", "", []int64{ids.method, ids.general, ids.curated, ids.provisional}},
		{"provisional", "--provisional", []int64{ids.method, ids.provisional}},
		{"confirmed", "--confirmed", []int64{ids.general, ids.curated}},
		{"needing review", "--review", []int64{ids.provisional}},
		{"what method_unclear answers kept", "--method", []int64{ids.method}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"knowledge", "list", "--root", root, "--json"}
			if tc.flag != "" {
				args = append(args, tc.flag)
			}
			code, out, errOut := runCLI(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var got []knowledge.Lesson
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v in %s", err, out)
			}
			var gotIDs []int64
			for _, l := range got {
				gotIDs = append(gotIDs, l.ID)
			}
			if !slices.Equal(gotIDs, tc.want) {
				t.Fatalf("listed %v, want %v", gotIDs, tc.want)
			}
		})
	}

	t.Run("as text", func(t *testing.T) {
		code, out, errOut := runCLI(t, "", "knowledge", "list", "--root", root)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 5 || !strings.HasPrefix(lines[0], "ID") {
			t.Fatalf("want a heading and four lessons:\n%s", out)
		}
		if !strings.Contains(lines[1], "method unclear") || strings.Contains(lines[4], "method unclear") {
			t.Fatalf("the method_unclear lesson's row, and only it, says so:\n%s", out)
		}
		row := lines[4]
		for _, want := range []string{strconv.FormatInt(ids.provisional, 10), "provisional", "recurring",
			"Declare a type in the model before a handler uses it. …"} {
			if !strings.Contains(row, want) {
				t.Fatalf("the provisional lesson's row lacks %q: %q", want, row)
			}
		}
		if strings.Contains(out, "compile stage reads") || strings.Contains(out, "An old habit") {
			t.Fatalf("list shows more than first lines of servable lessons:\n%s", out)
		}
	})

	t.Run("nothing to list", func(t *testing.T) {
		code, out, _ := runCLI(t, "", "knowledge", "list", "--root", freshRoot(t), "--review")
		if code != 0 || strings.TrimSpace(out) != "No lessons needing review." {
			t.Fatalf("exit %d, %q", code, out)
		}
	})
}

func TestKnowledgeShowPrintsTheLessonWithItsCase(t *testing.T) {
	root, ids := lessonRoot(t)
	id := strconv.FormatInt(ids.provisional, 10)

	code, out, errOut := runCLI(t, "", "knowledge", "show", id, "--root", root)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"Lesson " + id + ": provisional, distilled",
		"Needs review: recurring",
		"stage compile; files main.go",
		"The compile stage reads the whole package.",
		fmt.Sprintf("Case %d: build of notes, stage compile", ids.caseID),
		"Request: Add tags to notes.",
		"main.go:12: undefined: Tag",
		"The handler used the Tag type before the model declared it.",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("show lacks %q:\n%s", want, out)
		}
	}

	code, out, errOut = runCLI(t, "", "knowledge", "show", "--root", root, "--json", id)
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errOut)
	}
	var got lessonDetailJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if got.ID != ids.provisional || got.Case == nil || got.Case.ID != ids.caseID ||
		got.Case.Problem != "main.go:12: undefined: Tag" || !strings.Contains(got.Case.Diagnosis, "before the model declared it") {
		t.Fatalf("show --json: %s", out)
	}

	t.Run("what a method_unclear answer kept", func(t *testing.T) {
		code, out, _ := runCLI(t, "", "knowledge", "show", strconv.FormatInt(ids.method, 10), "--root", root)
		if code != 0 || !strings.Contains(out, "provisional, distilled, method unclear") ||
			!strings.Contains(out, "It was unclear whether the compile stage runs") || !strings.Contains(out, "never served") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
	t.Run("a lesson written by hand", func(t *testing.T) {
		code, out, _ := runCLI(t, "", "knowledge", "show", strconv.FormatInt(ids.curated, 10), "--root", root)
		if code != 0 || !strings.Contains(out, "Confirmed by Ada") || !strings.Contains(out, "Written by hand") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
}

func TestKnowledgeExportHoldsEveryServableLesson(t *testing.T) {
	root, ids := lessonRoot(t)
	want := []int64{ids.provisional, ids.curated, ids.general, ids.method}

	code, out, errOut := runCLI(t, "", "knowledge", "export", "--root", root, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got lessonExportJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	var gotIDs []int64
	for _, d := range got.Lessons {
		gotIDs = append(gotIDs, d.ID)
	}
	if !slices.Equal(gotIDs, want) {
		t.Fatalf("exported %v, want %v oldest first", gotIDs, want)
	}
	if got.Lessons[0].Text == "" || got.Lessons[0].Case == nil || got.Lessons[0].Case.Problem == "" {
		t.Fatalf("the distilled lesson is exported without its text or case: %+v", got.Lessons[0])
	}

	code, out, errOut = runCLI(t, "", "knowledge", "export", "--root", root)
	if code != 0 {
		t.Fatalf("text: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "2 confirmed, 2 provisional") {
		t.Fatalf("the heading does not count the lessons:\n%s", out)
	}
	for _, text := range []string{"The compile stage reads the whole package.", "Templates live under views", "Read the task's criteria"} {
		if !strings.Contains(out, text) {
			t.Fatalf("the export lacks %q:\n%s", text, out)
		}
	}
	if strings.Contains(out, "An old habit") {
		t.Fatalf("the export holds a retired lesson:\n%s", out)
	}
}

func TestKnowledgeConfirmAndRetireChangeTheStatus(t *testing.T) {
	root, ids := lessonRoot(t)

	code, out, errOut := runCLI(t, "", "knowledge", "confirm", strconv.FormatInt(ids.provisional, 10), "--root", root, "--by", "Grace")
	if code != 0 || !strings.Contains(out, "confirmed by Grace") {
		t.Fatalf("confirm: exit %d, %q %q", code, out, errOut)
	}
	l := lessonNow(t, root, ids.provisional)
	if l.Status != knowledge.LessonConfirmed || l.ConfirmedBy != "Grace" || l.NeedsReview() {
		t.Fatalf("after confirm: %+v", l)
	}

	code, out, errOut = runCLI(t, "", "knowledge", "retire", "--root", root, strconv.FormatInt(ids.curated, 10))
	if code != 0 || !strings.Contains(out, "retired") {
		t.Fatalf("retire: exit %d, %q %q", code, out, errOut)
	}
	if l := lessonNow(t, root, ids.curated); l.Status != knowledge.LessonRetired || l.RetiredAt.IsZero() {
		t.Fatalf("after retire: %+v", l)
	}

	t.Run("a second time is refused", func(t *testing.T) {
		for _, verb := range []string{"confirm", "retire"} {
			id := map[string]int64{"confirm": ids.provisional, "retire": ids.curated}[verb]
			code, _, errOut := runCLI(t, "", "knowledge", verb, strconv.FormatInt(id, 10), "--root", root)
			if code != 2 {
				t.Fatalf("%s again: exit %d", verb, code)
			}
			oneSentence(t, errOut)
		}
	})
}

func TestKnowledgeConfirmIsByTheOwnerUnlessNamed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		owner string
		want  string
	}{
		{"no owner yet", "", "the owner"},
		{"the owner's name", "Ada Lovelace", "Ada Lovelace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, ids := lessonRoot(t)
			if tc.owner != "" {
				code, _, errOut := runCLI(t, "a long password\na long password\n", "owner", "set", "--root", root, "--name", tc.owner)
				if code != 0 {
					t.Fatalf("owner set: exit %d, %s", code, errOut)
				}
			}
			code, _, errOut := runCLI(t, "", "knowledge", "confirm", strconv.FormatInt(ids.provisional, 10), "--root", root)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if l := lessonNow(t, root, ids.provisional); l.ConfirmedBy != tc.want {
				t.Fatalf("confirmed by %q, want %q", l.ConfirmedBy, tc.want)
			}
		})
	}
}

func TestKnowledgeConfirmAndRetireRefuseWhileAServerHoldsTheRoot(t *testing.T) {
	root, ids := lessonRoot(t)
	release, err := knowledge.AcquireServerLock(root)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	id := strconv.FormatInt(ids.provisional, 10)
	for _, verb := range []string{"confirm", "retire"} {
		t.Run(verb, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", "knowledge", verb, id, "--root", root)
			if code != 2 {
				t.Fatalf("exit %d, want 2", code)
			}
			oneSentence(t, errOut)
			want := fmt.Sprintf("A server is running from %s; %s it in the Knowledge page, or stop the server first.", root, verb)
			if !strings.Contains(errOut, want) {
				t.Fatalf("got %q, want %q", errOut, want)
			}
			if l := lessonNow(t, root, ids.provisional); l.Status != knowledge.LessonProvisional {
				t.Fatalf("the lesson changed behind the server: %+v", l)
			}
		})
	}
	t.Run("reading is not refused", func(t *testing.T) {
		for _, verb := range []string{"list", "export"} {
			if code, _, errOut := runCLI(t, "", "knowledge", verb, "--root", root); code != 0 {
				t.Fatalf("%s: exit %d, %s", verb, code, errOut)
			}
		}
		if code, _, errOut := runCLI(t, "", "knowledge", "show", id, "--root", root); code != 0 {
			t.Fatalf("show: exit %d, %s", code, errOut)
		}
	})
	t.Run("after the server stops", func(t *testing.T) {
		if err := release(); err != nil {
			t.Fatal(err)
		}
		if code, _, errOut := runCLI(t, "", "knowledge", "confirm", id, "--root", root); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
	})
}

func TestKnowledgeRefusesUnknownIdsAndBadArguments(t *testing.T) {
	root, ids := lessonRoot(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"show an unknown id", []string{"show", "999"}, "There is no lesson 999."},
		{"confirm an unknown id", []string{"confirm", "999"}, "There is no lesson 999."},
		{"retire an unknown id", []string{"retire", "999"}, "There is no lesson 999."},
		{"retire a retired lesson", []string{"retire", strconv.FormatInt(ids.retired, 10)}, "is retired already"},
		{"an id that is no number", []string{"show", "tags"}, "give the lesson's id"},
		{"no id", []string{"confirm"}, "give the lesson's id"},
		{"an unknown flag", []string{"list", "--stale"}, "flag provided but not defined: -stale"},
		{"a flag of another verb", []string{"show", "1", "--by", "Ada"}, "flag provided but not defined: -by"},
		{"two filters", []string{"list", "--provisional", "--review"}, "at most one of"},
		{"an argument too many", []string{"show", "1", "2"}, `unexpected argument "2"`},
		{"an unknown verb", []string{"forget"}, `"forget" is not a subcommand`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"knowledge"}, tc.args...)
			args = append(args, "--root", root)
			code, _, errOut := runCLI(t, "", args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2: %s", code, errOut)
			}
			oneSentence(t, errOut)
			if !strings.Contains(errOut, tc.want) {
				t.Fatalf("got %q, want it to say %q", errOut, tc.want)
			}
		})
	}
}

func TestServeRefusesASecondServerOnTheSameRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(root+"/launcher", 0o700); err != nil {
		t.Fatal(err)
	}
	release, err := knowledge.AcquireServerLock(root)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	code, out, errOut := runCLI(t, "", "serve", "--root", root, "--addr", "127.0.0.1:0")
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s %s", code, out, errOut)
	}
	oneSentence(t, errOut)
	want := fmt.Sprintf("Another autoapp serve is running from %s (pid %d); stop it first.", root, os.Getpid())
	if !strings.Contains(errOut, want) {
		t.Fatalf("got %q, want %q", errOut, want)
	}
}

func TestKnowledgeLinksRebuildsAndPrintsTheIndex(t *testing.T) {
	root, _ := backlogRoot(t) // 0001-add-tags of notes ran as intent-1-0001-add-tags-a1
	const run = "intent-1-0001-add-tags-a1"
	st, err := open(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cases := knowledge.NewCases(st.Knowledge.DB(), time.Now)
	opened, _, err := cases.Build(ctx, knowledge.BuildObserved{AppID: "notes", RunID: run, Revision: "rev-1",
		StagesRun: []string{"compile"}, Problems: []knowledge.BuildProblem{{Stage: "compile", Message: "main.go:3: undefined: Tag", Signature: "undefined-tag"}}})
	if err != nil || len(opened) != 1 {
		t.Fatalf("a failed build opened %v, %v", opened, err)
	}
	if err := cases.AppendEdit(ctx, "notes", run, "source.edit main.go"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	c := strconv.FormatInt(opened[0], 10)

	// The attempt's end rebuilt the index (the launcher follows each
	// attempt); the case opened since is in it only once it is rebuilt.
	code, out, errOut := runCLI(t, "", "knowledge", "links", "--root", root)
	if code != 0 || !strings.Contains(out, "task_runs:"+run) || strings.Contains(out, "cases:"+c) {
		t.Fatalf("the index the attempt's end left: exit %d\n%s%s", code, out, errOut)
	}
	// A root where no attempt ended has no index until it is rebuilt.
	if code, out, _ := runCLI(t, "", "knowledge", "links", "--root", freshRoot(t)); code != 0 || !strings.Contains(out, "--rebuild builds it") {
		t.Fatalf("an empty index: exit %d\n%s", code, out)
	}
	code, out, errOut = runCLI(t, "", "knowledge", "links", "--root", root, "--rebuild")
	if code != 0 {
		t.Fatalf("links --rebuild: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"ran-as\n", "task 0001-add-tags", "run " + run, "task_runs:" + run,
		"edited\n", "file main.go", "opened-in\n", "case " + c, "cases:" + c} {
		if !strings.Contains(out, want) {
			t.Errorf("links does not print %q:\n%s", want, out)
		}
	}

	code, out, _ = runCLI(t, "", "knowledge", "links", "--root", root, "--app", "notes", "--json")
	var links []knowledge.Link
	if code != 0 || json.Unmarshal([]byte(out), &links) != nil {
		t.Fatalf("links --json: exit %d\n%s", code, out)
	}
	want := knowledge.Link{Kind: knowledge.LinkRanAs, FromKind: knowledge.NodeTask, FromID: "0001-add-tags",
		ToKind: knowledge.NodeRun, ToID: run, AppID: "notes", SourceTable: "task_runs", SourceID: run}
	if len(links) == 0 || !slices.ContainsFunc(links, func(l knowledge.Link) bool { l.ID = 0; return l == want }) {
		t.Fatalf("links --json lacks %+v: %+v", want, links)
	}
	code, out, _ = runCLI(t, "", "knowledge", "links", "--root", root, "--app", "blog", "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("another application's links: exit %d %q", code, out)
	}
	code, _, errOut = runCLI(t, "", "knowledge", "links", "--root", root, "extra")
	if code != 2 || !strings.Contains(errOut, "unexpected argument") {
		t.Fatalf("an extra argument: exit %d %q", code, errOut)
	}
}

func TestEveryReviewFromTheCommandLineWritesOneLogLineSayingWho(t *testing.T) {
	root, ids := lessonRoot(t)
	lines := func() []string {
		t.Helper()
		st, err := open(root)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		events, err := st.Knowledge.Log(context.Background(), knowledge.LogQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for i := len(events) - 1; i >= 0; i-- {
			if review, _ := events[i].Attrs["review"].(string); review != "" {
				out = append(out, fmt.Sprintf("%s by %v: %s", review, events[i].Attrs["by"], events[i].Message))
			}
		}
		return out
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"confirm", strconv.FormatInt(ids.provisional, 10), "--by", "Grace"},
			fmt.Sprintf("confirm by Grace: Lesson %d was confirmed by Grace.", ids.provisional)},
		{[]string{"retire", strconv.FormatInt(ids.curated, 10), "--by", "Grace"},
			fmt.Sprintf("retire by Grace: Lesson %d was retired by Grace.", ids.curated)},
		{[]string{"retire", strconv.FormatInt(ids.method, 10)},
			fmt.Sprintf("retire by the owner: Lesson %d was retired by the owner.", ids.method)},
	} {
		before := lines()
		if code, _, errOut := runCLI(t, "", append(append([]string{"knowledge"}, tc.args...), "--root", root)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
		}
		after := lines()
		if len(after) != len(before)+1 || after[len(after)-1] != tc.want {
			t.Fatalf("after %v the review lines are\n%s\nwant one more: %s", tc.args, strings.Join(after, "\n"), tc.want)
		}
	}
	if l := lessonNow(t, root, ids.curated); l.RetiredBy != "Grace" {
		t.Fatalf("retired by %q", l.RetiredBy)
	}
	// A refused review writes nothing.
	before := lines()
	if code, _, _ := runCLI(t, "", "knowledge", "confirm", strconv.FormatInt(ids.method, 10), "--root", root); code != 2 {
		t.Fatalf("confirming a retired lesson: exit %d", code)
	}
	if after := lines(); len(after) != len(before) {
		t.Fatalf("a refused review was logged: %v", after)
	}
}

// serveLessons records servings of lesson id in root and closes them as
// the builds given close them: one run each.
func serveLessons(t *testing.T, root string, id int64, runs ...struct {
	hintFor string
	build   knowledge.BuildObserved
}) {
	t.Helper()
	st, err := open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	l, err := st.Lessons.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range runs {
		runID := fmt.Sprintf("intent-1-0001-add-tags-a%d", i+2)
		if r.hintFor != "" {
			err = st.Servings.RecordHints(ctx, runID, []knowledge.Served{{Lesson: l, Reason: knowledge.ReasonHint, ForStage: r.hintFor}})
		} else {
			err = st.Servings.Record(ctx, runID, 0, []knowledge.Served{{Lesson: l, Reason: knowledge.ReasonWords}}, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		r.build.RunID, r.build.AppID = runID, "notes"
		if err := st.Servings.Close(ctx, "notes", runID, knowledge.BuildObservation(r.build)); err != nil {
			t.Fatal(err)
		}
		if err := st.Servings.End(ctx, runID); err != nil {
			t.Fatal(err)
		}
	}
}

func TestKnowledgeListAndShowSayTheServingsCountsAndCorpusVersions(t *testing.T) {
	root, ids := lessonRoot(t)
	passed := knowledge.BuildObserved{OK: true, StagesRun: []string{"compile", "vet"}}
	again := knowledge.BuildObserved{StagesRun: []string{"compile"},
		Problems: []knowledge.BuildProblem{{Stage: "compile", Message: "main.go:14: undefined: Tag", Signature: "undefined-tag"}}}
	blocked := knowledge.BuildObserved{StagesRun: []string{"install"},
		Problems: []knowledge.BuildProblem{{Stage: "install", Message: "go mod download failed", Signature: "mod"}}}
	type run = struct {
		hintFor string
		build   knowledge.BuildObserved
	}
	// The provisional lesson applies at compile: served by words and
	// resolved, as a hint beside a compile failure and resolved, as a hint
	// beside a vet failure and resolved (noise), beside another compile
	// failure (it names no signature: unrelated), and blocked.
	serveLessons(t, root, ids.provisional, run{"", passed}, run{"compile", passed}, run{"vet", passed},
		run{"", again}, run{"", blocked})

	code, out, errOut := runCLI(t, "", "knowledge", "list", "--root", root)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.Contains(lines[0], "RES/REC/BLK/UNR") {
		t.Fatalf("the heading names no servings column:\n%s", out)
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		want := "0/0/0/0"
		if f[0] == strconv.FormatInt(ids.provisional, 10) {
			want = "3/0/1/1"
		}
		if !slices.Contains(f, want) {
			t.Errorf("lesson %s's row does not show its servings as %s: %q", f[0], want, l)
		}
	}

	code, out, errOut = runCLI(t, "", "knowledge", "show", strconv.FormatInt(ids.provisional, 10), "--root", root)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"Servings: 3 resolved (of which unrelated by stage: 1), 0 recurred, 1 blocked, 0 inconclusive, 1 unrelated, 0 none.",
		"In the index since corpus version 1.",
		"Corpus versions:\n  1, ",
		fmt.Sprintf("Lesson %d was distilled from case %d.", ids.provisional, ids.caseID),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}

	code, out, _ = runCLI(t, "", "knowledge", "show", strconv.FormatInt(ids.retired, 10), "--root", root)
	for _, want := range []string{
		"Entered the index at corpus version 4; left it at corpus version 5 (retired).",
		fmt.Sprintf("Lesson %d was written by Ada.", ids.retired),
		fmt.Sprintf("Lesson %d was retired by ann.", ids.retired),
		"Servings: 0 resolved (of which unrelated by stage: 0)",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("show of the retired lesson (exit %d) lacks %q:\n%s", code, want, out)
		}
	}

	code, out, _ = runCLI(t, "", "knowledge", "show", strconv.FormatInt(ids.provisional, 10), "--root", root, "--json")
	var got lessonDetailJSON
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
	if got.Servings.Resolved != 3 || got.Servings.ResolvedUnrelatedByStage != 1 || got.EnteredVersion != 1 || len(got.Versions) != 1 {
		t.Errorf("show --json: %+v", got)
	}
}
