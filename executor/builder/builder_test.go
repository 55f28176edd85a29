package builder_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"autoapp/executor/acceptance"
	"autoapp/executor/ai"
	"autoapp/executor/builder"
	"autoapp/executor/candidate"
	"autoapp/intent"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"

	"golang.org/x/sys/unix"
)

func TestEveryToolsExampleHoldsToItsSchema(t *testing.T) {
	s := newSession(t, newHost(t), nil)
	seen := map[string]bool{}
	for _, tl := range s.Tools() {
		if err := ai.CheckExample(tl); err != nil {
			t.Error(err)
		}
		if seen[tl.WireName()] {
			t.Errorf("two tools are called %s", tl.WireName())
		}
		seen[tl.WireName()] = true
		if strings.TrimSpace(tl.Description) == "" || tl.Handler == nil {
			t.Errorf("%s has no description or no handler", tl.Name)
		}
	}
	want := []string{"source.list", "source.read", "source.search", "source.edit", "source.change",
		"candidate.cycle", "candidate.build", "spec.read", "intent.ask", "knowledge.show"}
	for _, name := range want {
		if !seen[strings.ReplaceAll(name, ".", "_")] {
			t.Errorf("no tool %s", name)
		}
	}
	for _, name := range []string{"source.edit", "source.change", "candidate.cycle"} {
		if !tool(t, s, name).Edits {
			t.Errorf("%s does not say it edits", name)
		}
	}
}

func TestInstructionsNameEveryToolAndOnlyThem(t *testing.T) {
	s := newSession(t, newHost(t), nil)
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b(?:source|candidate|spec|intent|knowledge|release|app)\.[a-z_]+\b`).FindAllString(builder.Instructions, -1) {
		named[m] = true
	}
	offered := map[string]bool{}
	for _, tl := range s.Tools() {
		offered[tl.Name] = true
		if !named[tl.Name] {
			t.Errorf("the instructions do not name %s", tl.Name)
		}
	}
	for name := range named {
		if !offered[name] {
			t.Errorf("the instructions name %s, which is not a tool of the turn", name)
		}
	}
	for _, rule := range []string{"<slug>-c<n>", "acceptance/<slug>-c<n>.json", "Use candidate.cycle until every check passes",
		"Never remove, rename or change", "cycle once more", "whether the change or the plan is wrong", "do not activate",
		`"fails": true`, "Your closing words are not evidence; the checks are.", "Do not plan"} {
		if !strings.Contains(builder.Instructions, rule) {
			t.Errorf("the instructions do not say %q", rule)
		}
	}
}

func TestTheExampleFormatsExamplesAreValid(t *testing.T) {
	if _, ps := acceptance.Parse("0007-add-note-c1", []byte(builder.ExampleJSON)); len(ps) > 0 {
		t.Fatalf("the complete example has problems: %v", ps)
	}
	m := regexp.MustCompile(`such as (\{.*\})\.$`).FindStringSubmatch(builder.ExampleFormat)
	if m == nil {
		t.Fatal("the format shows no failing step")
	}
	failing := `{"title": "An empty title is refused", "steps": [` + m[1] + `]}`
	ex, ps := acceptance.Parse("0007-add-note-c2", []byte(failing))
	if len(ps) > 0 || !ex.Steps[0].Fails {
		t.Fatalf("the failing step: %v %+v", ps, ex.Steps)
	}
	if !strings.Contains(builder.Instructions, builder.ExampleJSON) {
		t.Fatal("the instructions do not carry the example")
	}
}

func TestEditsCommitWithTheRunIDAndCarryVerification(t *testing.T) {
	h := newHost(t)
	s := newSession(t, h, nil)

	var a answer
	ok(t, s, "source.edit", `{"path": "site/index.html", "hunks": [{"find": "<h1>A new site</h1>", "replace": "<h1>Notes</h1>"}]}`, &a)
	if subject := gitSubjects(t, h.apps.WorkspaceDir(appID))[0]; !strings.Contains(subject, "run "+runID+", call "+runID+":1") {
		t.Fatalf("the commit does not carry the run and call: %q", subject)
	}
	v := a.Verification
	if !slices.Equal(v.EditsSinceBuild, []string{"site/index.html"}) || v.LastBuild != "none yet" || v.Next != "candidate.cycle" || v.Warning != "" {
		t.Fatalf("first edit's verification: %+v", v)
	}

	ok(t, s, "source.change", createFile("site/about.html", "<h1>About</h1>\n"), &a)
	if subject := gitSubjects(t, h.apps.WorkspaceDir(appID))[0]; !strings.Contains(subject, "run "+runID+", call "+runID+":2") {
		t.Fatalf("the change's commit: %q", subject)
	}
	if v := a.Verification; !slices.Equal(v.EditsSinceBuild, []string{"site/index.html", "site/about.html"}) || v.Warning != "" {
		t.Fatalf("second edit's verification: %+v", v)
	}

	ok(t, s, "source.edit", `{"path": "site/about.html", "hunks": [{"find": "About", "replace": "About us"}]}`, &a)
	if got, want := a.Verification.Warning, "3 edits since the last build: run candidate.cycle before another edit."; got != want {
		t.Fatalf("third edit's warning %q, want %q", got, want)
	}
	if len(a.Verification.EditsSinceBuild) != 2 {
		t.Fatalf("the paths are listed once each: %v", a.Verification.EditsSinceBuild)
	}

	// A build verifies what was edited: the next edit starts the count again.
	ok(t, s, "candidate.build", `{}`, nil)
	ok(t, s, "source.edit", `{"path": "site/about.html", "hunks": [{"find": "About us", "replace": "Who we are"}]}`, &a)
	v = a.Verification
	if !slices.Equal(v.EditsSinceBuild, []string{"site/about.html"}) || v.Warning != "" || !strings.HasPrefix(v.LastBuild, "passed at ") {
		t.Fatalf("after a build: %+v", v)
	}
}

func TestTheManifestCannotBeEdited(t *testing.T) {
	s := newSession(t, newHost(t), nil)
	ps := refused(t, s, "source.change", `{"files": [{"path": "autoapp.json", "action": "overwrite", "content": "{}"}]}`)
	if len(ps) != 1 || ps[0].Field != "files[0].path" || !strings.Contains(ps[0].Message, "manifest") {
		t.Fatalf("problems: %+v", ps)
	}
	ps = refused(t, s, "source.edit", `{"path": "AUTOAPP.JSON", "hunks": [{"find": "a", "replace": "b"}]}`)
	if ps[0].Field != "path" {
		t.Fatalf("problems: %+v", ps)
	}
}

func TestTheThirdIdenticalReadSaysNothingChanged(t *testing.T) {
	s := newSession(t, newHost(t), nil)
	read := `{"path": "site/index.html"}`
	for i := 1; i <= 3; i++ {
		var a answer
		ok(t, s, "source.read", read, &a)
		if want := i == 3; (a.Guidance == builder.RereadNote) != want {
			t.Fatalf("read %d: guidance %q", i, a.Guidance)
		}
	}
	// Another range of the file is another read.
	var a answer
	ok(t, s, "source.read", `{"path": "site/index.html", "from": 1, "to": 3}`, &a)
	if a.Guidance != "" {
		t.Fatalf("another range: %q", a.Guidance)
	}
	// An edit that lands changes something: the count starts again.
	ok(t, s, "source.edit", `{"path": "site/style.css", "hunks": [{"find": "body", "replace": "body "}]}`, nil)
	ok(t, s, "source.read", read, &a)
	if a.Guidance != "" {
		t.Fatalf("after an edit: %q", a.Guidance)
	}
	for range 3 {
		ok(t, s, "source.list", `{"dir": ""}`, &a)
	}
	if a.Guidance != builder.RereadNote {
		t.Fatalf("the third list: %q", a.Guidance)
	}
	for range 3 {
		ok(t, s, "source.search", `{"query": "<h1>"}`, &a)
	}
	if a.Guidance != builder.RereadNote {
		t.Fatalf("the third search: %q", a.Guidance)
	}
	if got := s.Record().Reads; !slices.Equal(got, []string{"site/index.html"}) {
		t.Fatalf("reads: %v", got)
	}
}

func TestTheSecondUnmatchedHunkInAFileSaysToReadItAgain(t *testing.T) {
	s := newSession(t, newHost(t), nil)
	miss := `{"path": "site/index.html", "hunks": [{"find": "<h1>An old site</h1>", "replace": "<h1>Notes</h1>"}]}`
	first := refused(t, s, "source.edit", miss)
	if len(first) != 1 || first[0].Field != "hunks[0].find" {
		t.Fatalf("first: %+v", first)
	}
	// A miss in another file does not count for this one.
	refused(t, s, "source.edit", `{"path": "site/style.css", "hunks": [{"find": "no such rule", "replace": "x"}]}`)
	second := refused(t, s, "source.edit", miss)
	if last := second[len(second)-1]; last.Message != builder.MissedHunkNote || second[0].Field != "hunks[0].find" {
		t.Fatalf("second: %+v", second)
	}
	// The same goes for a cycle's hunks.
	cycled := refused(t, s, "candidate.cycle", miss)
	if cycled[len(cycled)-1].Message != builder.MissedHunkNote {
		t.Fatalf("a cycle's miss: %+v", cycled)
	}
}

func TestACycleReportsMissingExamplesThenPasses(t *testing.T) {
	h := newHost(t)
	s := newSession(t, h, nil)
	var a answer
	ok(t, s, "candidate.cycle", `{}`, &a)
	if a.Step != candidate.StepChecked || !slices.Equal(a.Missing, []string{slug + "-c1"}) ||
		!strings.Contains(a.Next, "No example named "+slug+"-c1 ran") {
		t.Fatalf("before the example: %+v", a)
	}
	ok(t, s, "source.change", createFile("acceptance/"+slug+"-c1.json", example(200, "<h1>")), nil)
	ok(t, s, "candidate.cycle", `{}`, &a)
	if a.Step != candidate.StepChecked || a.Checks != "passed 2 of 2" || len(a.Missing) != 0 || len(a.Failed) != 0 {
		t.Fatalf("after the example: %+v", a)
	}
	if !strings.HasPrefix(a.Next, "Every check passed (2 of 2)") || !strings.HasSuffix(a.Next, builder.AllPassed) {
		t.Fatalf("next: %q", a.Next)
	}
	r := s.Record()
	if r.Edits != 1 || r.EditedAfterBuild || !r.Built || r.LastCycle == nil || r.LastCycle.Checks.Passed != 2 {
		t.Fatalf("record: %+v", r)
	}
}

func TestACyclesChangeIsAnEdit(t *testing.T) {
	h := newHost(t)
	s := newSession(t, h, nil)
	var a answer
	ok(t, s, "candidate.cycle", createFile("acceptance/"+slug+"-c1.json", example(200, "<h1>")), &a)
	if a.Step != candidate.StepChecked || a.Checks != "passed 2 of 2" {
		t.Fatalf("cycle with a change: %+v", a)
	}
	if subject := gitSubjects(t, h.apps.WorkspaceDir(appID))[0]; !strings.Contains(subject, "run "+runID+", call "+runID+":1") {
		t.Fatalf("the cycle's commit: %q", subject)
	}
	if r := s.Record(); r.Edits != 1 || r.EditedAfterBuild || !r.Built {
		t.Fatalf("record: %+v", r)
	}
	for _, in := range []struct{ input, field string }{
		{`{"hunks": [{"find": "a", "replace": "b"}]}`, "path"},
		{`{"path": "site/index.html"}`, "hunks"},
		{`{"path": "site/index.html", "hunks": [{"find": "a", "replace": "b"}], "files": [{"path": "x", "action": "delete"}]}`, "files"},
	} {
		if ps := refused(t, s, "candidate.cycle", in.input); ps[0].Field != in.field {
			t.Errorf("%s: %+v", in.input, ps)
		}
	}
}

func TestThreeCyclesWithTheSameFailureStopTheCycling(t *testing.T) {
	h := newHost(t)
	s := newSession(t, h, nil)
	var a answer
	ok(t, s, "candidate.cycle", createFile("acceptance/"+slug+"-c1.json", example(201, "<h1>")), &a)
	if len(a.Failed) != 1 || a.Failed[0].Failure != "expected status 201, got 200 on GET /" || a.Next == builder.StopAndAsk {
		t.Fatalf("first: %+v", a)
	}
	ok(t, s, "candidate.cycle", `{}`, &a)
	if !a.SameAsLastCheck || a.Next == builder.StopAndAsk {
		t.Fatalf("second: %+v", a)
	}
	ok(t, s, "candidate.cycle", `{}`, &a)
	if a.Next != builder.StopAndAsk || len(a.Failed) != 1 {
		t.Fatalf("third: %+v", a)
	}
	ps := refused(t, s, "candidate.cycle", `{}`)
	if len(ps) != 1 || ps[0].Message != builder.CyclesRefused {
		t.Fatalf("fourth: %+v", ps)
	}
	// A new turn is a new session: the count starts again.
	ok(t, newSession(t, h, nil), "candidate.cycle", `{}`, &a)
	if a.Next == builder.StopAndAsk {
		t.Fatal("the next turn inherited the count")
	}
}

func TestCandidateBuildBuildsAndStops(t *testing.T) {
	h := newHost(t)
	s := newSession(t, h, nil)
	var a answer
	ok(t, s, "candidate.build", `{}`, &a)
	if a.Step != candidate.StepBuilt || a.Build == nil || !a.Build.OK || a.Build.Release == "" || a.Next != builder.BuiltNotChecked || a.Checks != "" {
		t.Fatalf("build: %+v", a)
	}
	st, err := h.candidates.State(appID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Build == nil || !st.Build.OK || st.Cycle == nil || st.Cycle.Step != candidate.StepBuilt || st.Cycle.Release != a.Build.Release ||
		st.Checks != nil || st.Preview != nil {
		t.Fatalf("candidate.json: %+v", st)
	}
	if _, running := h.previews.Status(appID); running {
		t.Fatal("a build started the preview")
	}
	releases, err := h.apps.Releases(context.Background(), appID, 5)
	if err != nil || len(releases) != 1 || releases[0].ID != a.Build.Release {
		t.Fatalf("releases: %+v %v", releases, err)
	}

	// An empty page fails the static template's build.
	ok(t, s, "source.change", `{"files": [{"path": "site/index.html", "action": "overwrite", "content": ""}]}`, nil)
	ok(t, s, "candidate.build", `{}`, &a)
	if a.Step != candidate.StepBuildFailed || a.Build == nil || a.Build.OK || a.Next != "Fix the build problems, then cycle again." {
		t.Fatalf("failed build: %+v", a)
	}
	st, _ = h.candidates.State(appID)
	if st.Build.OK || st.Build.Release == nil || st.Build.Release.ID != releases[0].ID || st.Cycle.Step != candidate.StepBuildFailed {
		t.Fatalf("candidate.json after a failed build: %+v %+v", st.Build, st.Cycle)
	}
	var e answer
	ok(t, s, "source.edit", `{"path": "site/style.css", "hunks": [{"find": "body", "replace": "body "}]}`, &e)
	if !strings.HasPrefix(e.Verification.LastBuild, "failed at ") {
		t.Fatalf("last build: %q", e.Verification.LastBuild)
	}
}

func TestIntentAskEndsTheTurnOrIsRefused(t *testing.T) {
	h := newHost(t)
	a := &asker{}
	s := newSession(t, h, a)
	res, err := tool(t, s, "intent.ask").Handler(context.Background(), json.RawMessage(`{"question": "Which heading?"}`))
	if err != nil {
		t.Fatal(err)
	}
	if q, isQuestion := res.(ai.Question); !isQuestion || q.Text != "Which heading?" {
		t.Fatalf("result %#v", res)
	}
	if !slices.Equal(a.questions, []string{"Which heading?"}) || s.Record().Question != "Which heading?" {
		t.Fatalf("asked %v, record %q", a.questions, s.Record().Question)
	}

	a2 := &asker{refuse: "You asked twice already: decide with what you have."}
	s2 := newSession(t, h, a2)
	ps := refused(t, s2, "intent.ask", `{"question": "And the colour?"}`)
	if len(ps) != 1 || ps[0].Message != a2.refuse {
		t.Fatalf("problems %+v", ps)
	}
	if s2.Record().Question != "" {
		t.Fatal("a refused question is recorded as asked")
	}
}

func TestTheRecordSaysWhatTheTurnDid(t *testing.T) {
	h := newHost(t)
	s := newSession(t, h, nil)
	if r := s.Record(); r.Edits != 0 || r.EditedAfterBuild || r.Built || len(r.Refused) != 0 {
		t.Fatalf("empty: %+v", r)
	}
	ok(t, s, "source.read", `{"path": "site/index.html"}`, nil)
	ok(t, s, "source.read", `{"path": "autoapp.json"}`, nil)
	ok(t, s, "source.read", `{"path": "site/index.html", "from": 2}`, nil)
	ok(t, s, "source.edit", `{"path": "site/style.css", "hunks": [{"find": "body", "replace": "body "}]}`, nil)
	if r := s.Record(); r.Edits != 1 || !r.EditedAfterBuild || r.Built {
		t.Fatalf("edited, nothing built: %+v", r)
	}
	ok(t, s, "candidate.build", `{}`, nil)
	if r := s.Record(); !r.Built || r.EditedAfterBuild {
		t.Fatalf("built: %+v", r)
	}
	ok(t, s, "source.change", createFile("site/a.html", "a"), nil)
	refused(t, s, "source.edit", `{"path": "site/missing.html", "hunks": [{"find": "a", "replace": "b"}]}`)
	refused(t, s, "candidate.cycle", `{"path": "site/index.html"}`)
	refused(t, s, "source.read", `{"path": "../outside"}`)
	// A call the schema refused never reaches a handler; Observe records it.
	s.Observe(ai.Call{Name: "candidate.cycle", Problems: []refusal.Problem{{Field: "files", Message: "expected an array, not a string"}}})
	// A refusal a handler made is recorded once, not again by Observe.
	again := `{"files": [{"path": "site/a.html", "action": "create", "content": "x"}]}`
	ps := refused(t, s, "source.change", again)
	s.Observe(ai.Call{Name: "source.change", Input: json.RawMessage(again), Problems: ps})

	r := s.Record()
	if r.Edits != 2 || !r.EditedAfterBuild || !r.Built {
		t.Fatalf("record: %+v", r)
	}
	if !slices.Equal(r.Reads, []string{"site/index.html", "autoapp.json"}) {
		t.Fatalf("reads: %v", r.Reads)
	}
	var got []string
	for _, f := range r.Refused {
		got = append(got, f.Tool+" "+f.Problems[0].Field+" "+map[bool]string{true: "edit", false: "-"}[f.Edit])
	}
	want := []string{"source.edit path edit", "candidate.cycle hunks -", "source.read path -", "candidate.cycle files -", "source.change files[0].path edit"}
	if !slices.Equal(got, want) {
		t.Fatalf("refused:\n got %v\nwant %v", got, want)
	}
}

func TestSummariseRefusals(t *testing.T) {
	p := func(field, msg string) []refusal.Problem { return []refusal.Problem{{Field: field, Message: msg}} }
	cycleArray := builder.Refused{Tool: "candidate.cycle", Problems: p("create", "expected an array")}
	cases := []struct {
		name    string
		refused []builder.Refused
		want    []string
	}{
		{"nothing", nil, nil},
		{"one group", []builder.Refused{cycleArray, cycleArray, cycleArray},
			[]string{"candidate.cycle was refused 3 times: create: expected an array."}},
		{"groups largest first, at most three, then the edits", []builder.Refused{
			{Tool: "candidate.build", Problems: p("", "A build or check of site is already running; wait for it to end.")},
			cycleArray, cycleArray,
			{Tool: "source.edit", Problems: p("message", "expected a string"), Edit: true},
			{Tool: "candidate.cycle", Problems: p("hunks", "give the hunks")},
			{Tool: "candidate.cycle", Problems: p("path", "give the file")},
			{Tool: "source.read", Problems: p("path", "no such file")},
			{Tool: "source.change", Problems: p("message", "expected a string"), Edit: true},
			{Tool: "source.change", Problems: p("files", "give at least one file"), Edit: true},
		}, []string{
			"candidate.cycle was refused 2 times: create: expected an array.",
			"candidate.build was refused once: A build or check of site is already running; wait for it to end.",
			"candidate.cycle was refused once: hunks: give the hunks.",
			"3 edits were refused; most often: message: expected a string.",
		}},
		{"one edit", []builder.Refused{{Tool: "source.edit", Problems: p("path", "there is no file"), Edit: true}},
			[]string{"1 edit was refused: path: there is no file."}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := builder.SummariseRefusals(c.refused); !slices.Equal(got, c.want) {
				t.Fatalf("\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestSpecReadGivesTheManifestTheFormatAndThePlan(t *testing.T) {
	s := newSession(t, newHost(t), nil)
	var all struct {
		Manifest string `json:"manifest"`
		Plan     string `json:"plan"`
		Examples struct {
			Format   string   `json:"format"`
			Folder   string   `json:"folder"`
			Present  []string `json:"present"`
			Required []struct {
				ID      string `json:"id"`
				Present bool   `json:"present"`
			} `json:"required"`
		} `json:"examples"`
	}
	ok(t, s, "spec.read", `{}`, &all)
	if !strings.Contains(all.Manifest, `"preview": {"static": "site"}`) || all.Plan != plan.Markdown(task(), nil) ||
		all.Examples.Format != builder.ExampleFormat || all.Examples.Folder != "acceptance" ||
		!slices.Equal(all.Examples.Present, []string{"0001-home-page"}) ||
		len(all.Examples.Required) != 1 || all.Examples.Required[0].ID != slug+"-c1" || all.Examples.Required[0].Present {
		t.Fatalf("spec: %+v", all)
	}
	var one map[string]json.RawMessage
	ok(t, s, "spec.read", `{"topic": "plan"}`, &one)
	if _, has := one["manifest"]; has || one["plan"] == nil {
		t.Fatalf("topic plan: %v", one)
	}
}

func TestMessage(t *testing.T) {
	tk := task()
	tk.Criteria = append(tk.Criteria, plan.Criterion{Text: "POST /notes with no title is refused with \"Give it a title.\"", Failure: true})
	md := plan.Markdown(tk, nil)
	got := builder.Message(appID, tk, md, nil, "")
	if !strings.HasPrefix(got, "Application: site\n") {
		t.Fatalf("first line: %q", got)
	}
	for _, want := range []string{
		"Build this one task", slug + "-c1 (acceptance/" + slug + "-c1.json): The home page shows a heading",
		slug + "-c2 (acceptance/" + slug + "-c2.json): (when it goes wrong) POST /notes", `"fails": true`,
		"Use candidate.cycle until every check passes.", "Do not remove, rename or change an example that is already there",
		"if an older one fails, cycle once more on a fresh preview, then ask with intent.ask whether the change or the plan is wrong",
		"Do not activate anything and do not plan", md,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the message does not say %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "The last attempt") || strings.Contains(got, "answers") {
		t.Fatalf("a first attempt with no answers: %s", got)
	}
	if strings.Index(got, "Build this one task") > strings.Index(got, md) {
		t.Fatal("the plan comes before the rules")
	}

	answers := []intent.Answer{{Question: "Which heading?", Answer: "Notes"}}
	got = builder.Message(appID, tk, md, answers, "No example named 0002-heading-c2 was run.")
	for _, want := range []string{"The person's answers to your questions:\n- Which heading? → Notes\n",
		"The last attempt ended with:\nNo example named 0002-heading-c2 was run.\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the message does not say %q:\n%s", want, got)
		}
	}
	if strings.Index(got, md) > strings.Index(got, "The person's answers") || strings.Index(got, "The person's answers") > strings.Index(got, "The last attempt") {
		t.Fatalf("the order is rules, plan, answers, last attempt:\n%s", got)
	}
}

// TestSpecReadHandsOverNothingTheEngineersCodePlanted: with autoapp.json
// a link to the owner's keys, or rewritten with a stage of its own, and a
// named pipe and a link among the examples, spec.read answers at once
// with the committed manifest, never a byte of what a link points to:
// whether the manifest comes from the application's service or from the
// workspace itself.
func TestSpecReadHandsOverNothingTheEngineersCodePlanted(t *testing.T) {
	for _, from := range []string{"the service", "the workspace"} {
		t.Run(from, func(t *testing.T) {
			h := newHost(t)
			dir := h.apps.WorkspaceDir(appID)
			committed, err := os.ReadFile(filepath.Join(dir, "autoapp.json"))
			if err != nil {
				t.Fatal(err)
			}
			outside := t.TempDir()
			os.WriteFile(filepath.Join(outside, "providers.json"), []byte(`{"apiKey": "sk-the-owners-key"}`), 0o600)
			os.Remove(filepath.Join(dir, "autoapp.json"))
			if err := os.Symlink(filepath.Join(outside, "providers.json"), filepath.Join(dir, "autoapp.json")); err != nil {
				t.Fatal(err)
			}
			if err := unix.Mkfifo(filepath.Join(dir, "acceptance", "0002-pipe-c1.json"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(outside, "providers.json"), filepath.Join(dir, "acceptance", "0003-key-c1.json")); err != nil {
				t.Fatal(err)
			}
			cfg := builder.Config{AppID: appID, IntentID: 1, RunID: runID, Task: task(),
				Workspace: openWorkspace(t, dir), Candidates: h.candidates, Ask: (&asker{}).ask, Now: time.Now}
			if from == "the service" {
				cfg.ManifestText = func() ([]byte, error) { raw, _, _, err := h.apps.Manifest(appID); return raw, err }
			}
			s, err := builder.NewSession(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var b json.RawMessage
			answered := make(chan error, 1)
			go func() {
				var err error
				b, err = call(t, s, "spec.read", `{}`)
				answered <- err
			}()
			select {
			case err := <-answered:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(time.Second):
				t.Fatal("spec.read did not answer within a second")
			}
			if strings.Contains(string(b), "sk-the-owners-key") {
				t.Fatalf("spec.read handed over the owner's key: %s", b)
			}
			var all struct {
				Manifest string `json:"manifest"`
			}
			json.Unmarshal(b, &all)
			if all.Manifest != string(committed) {
				t.Fatalf("the manifest answered is %q, want the committed one", all.Manifest)
			}
		})
	}
}
