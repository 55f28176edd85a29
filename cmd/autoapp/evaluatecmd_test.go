package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"autoapp/executor/ai/provider"
	"autoapp/executor/ai/scripted"
	"autoapp/executor/build"
	"autoapp/executor/replay"
	"autoapp/knowledge"
)

// evalCache is the cache the evaluations of this package's tests share, so
// that only the first compiles Go's standard library.
var evalCache string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "autoapp-evaluate-cache-")
	if err != nil {
		panic(err)
	}
	evalCache = dir
	code := m.Run()
	// Go leaves some of its cache read-only.
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	os.RemoveAll(dir)
	os.Exit(code)
}

// The lessons evalRoot keeps: two the learned condition is given, and two
// it is not.
const (
	confirmedLesson = "Link every new page from the home page, so a visitor can reach it."
	distilledLesson = "A Go handler that lists things answers an empty JSON array, never null."
	retiredLesson   = "Retired: always write the page in one file."
	methodLesson    = "It was unclear whether the example may be changed."
)

// evalRoot is a data folder whose Settings model is the scripted one, with
// a confirmed lesson, a provisional one, a retired one and what a
// method_unclear answer kept, and whose evaluations build with evalCache.
// It answers the ids of the two lessons the learned condition is given.
func evalRoot(t *testing.T) (string, *scripted.Server, []int64) {
	t.Helper()
	root := t.TempDir()
	st, err := open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	model := scripted.New(t)
	model.Models("builder")
	if err := st.Providers.Save(provider.Provider{Name: "scripted", BaseURL: model.URL(), On: true}, false); err != nil {
		t.Fatal(err)
	}
	if err := st.Providers.SetDefaultModel("scripted:builder"); err != nil {
		t.Fatal(err)
	}
	confirmed, err := st.Lessons.Write(ctx, confirmedLesson, "Grace", knowledge.Applies{})
	if err != nil {
		t.Fatal(err)
	}
	retired, err := st.Lessons.Write(ctx, retiredLesson, "Grace", knowledge.Applies{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Lessons.Retire(ctx, retired, "Grace"); err != nil {
		t.Fatal(err)
	}
	const problem = "main.go:9: notes is null"
	opened, _, err := st.Cases.Build(ctx, knowledge.BuildObserved{AppID: "old-service", RunID: "intent-1-0001-notes-a1", Revision: "abc",
		Request: "0001-notes: Notes", Model: "scripted:builder", ServerVersion: "test", StagesRun: []string{"vet"},
		Problems: []knowledge.BuildProblem{{Stage: "vet", Message: problem, Signature: build.Signature("vet", problem)}}})
	if err != nil || len(opened) != 1 {
		t.Fatalf("a failed build opened %v, %v", opened, err)
	}
	distilled, err := st.Lessons.Add(ctx, knowledge.Lesson{CaseID: opened[0], Text: distilledLesson})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Lessons.Add(ctx, knowledge.Lesson{CaseID: opened[0], Text: methodLesson, MethodUnclear: true}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "evaluate"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(evalCache, filepath.Join(root, "evaluate", "cache")); err != nil {
		t.Fatal(err)
	}
	return root, model, []int64{distilled, confirmed}
}

// Replies of the scripted engineer. Each reports 1,000 tokens read and 100
// written unless it says otherwise.
func reply(calls ...scripted.Call) scripted.Reply {
	return scripted.Reply{ToolCalls: calls, Usage: scripted.Usage{Input: 1000, Output: 100}}
}

var (
	evalCycle = reply(scripted.Call{Name: "candidate_cycle", Args: `{}`})
	evalDone  = scripted.Reply{Text: "Done.", Usage: scripted.Usage{Input: 1000, Output: 100}}
	// refusedEdit's find is nowhere in the page: source.edit refuses it.
	refusedEdit = reply(scripted.Call{Name: "source_edit", Args: `{"path": "site/index.html", "hunks": [{"find": "<h2>Nowhere</h2>", "replace": "<h2>About</h2>"}]}`})
	readMain    = reply(scripted.Call{Name: "source_read", Args: `{"path": "main.go"}`})
)

// files is a source.change (or, with cycle, a candidate.cycle) writing
// each path with its content: "create" for a path marked new, else
// "overwrite".
func files(cycle bool, pathContent ...string) scripted.Reply {
	var changes []map[string]string
	for i := 0; i < len(pathContent); i += 2 {
		path, action := pathContent[i], "overwrite"
		if p, ok := strings.CutPrefix(path, "new:"); ok {
			path, action = p, "create"
		}
		changes = append(changes, map[string]string{"path": path, "action": action, "content": pathContent[i+1]})
	}
	args, _ := json.Marshal(map[string]any{"files": changes})
	name := "source_change"
	if cycle {
		name = "candidate_cycle"
	}
	return reply(scripted.Call{Name: name, Args: string(args)})
}

// page is the static template's home page with more in its main.
func page(more string) string {
	return "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>A new site</title><link rel=\"stylesheet\" href=\"style.css\"></head>\n" +
		"<body>\n  <main>\n    <h1>A new site</h1>\n" + more + "  </main>\n</body>\n</html>\n"
}

const (
	aboutPage = "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>About</title></head>\n<body><main>\n<h1>About</h1>\n<p>This site is for trying Autoapp.</p>\n</main></body>\n</html>\n"
	hours     = "    <section>\n      <h2>Opening hours</h2>\n      <p>Monday to Friday 9:00 to 17:00</p>\n      <p>Saturday 10:00 to 14:00</p>\n      <p>Sunday closed</p>\n    </section>\n"
	// trivialExample is what a careless engineer makes of the hours
	// task's example: it passes on any page.
	trivialExample = `{"title": "The home page answers", "steps": [{"method": "GET", "path": "/"}]}`
)

// service is the Go template's main.go with more routes.
func service(imports, decls, routes string) string {
	return "package main\n\nimport (\n\t\"encoding/json\"\n\t\"log\"\n\t\"net/http\"\n\t\"os\"\n" + imports + ")\n\n" + decls +
		"func main() {\n\tport := os.Getenv(\"PORT\")\n\tif port == \"\" {\n\t\tport = \"8080\"\n\t}\n\tmux := http.NewServeMux()\n" +
		"\tmux.HandleFunc(\"GET /{$}\", func(w http.ResponseWriter, r *http.Request) {\n\t\tw.Write([]byte(\"Hello from the Go service.\\n\"))\n\t})\n" +
		"\tmux.HandleFunc(\"GET /health\", func(w http.ResponseWriter, r *http.Request) {\n\t\tw.Header().Set(\"Content-Type\", \"application/json\")\n" +
		"\t\tjson.NewEncoder(w).Encode(map[string]any{\"ok\": true})\n\t})\n" + routes +
		"\tlog.Fatal(http.ListenAndServe(\"127.0.0.1:\"+port, mux))\n}\n"
}

// greeting is the greeting service; broken calls a function that is not
// there, which go vet refuses.
func greeting(broken bool) string {
	answer := `"Hello, " + name + "!"`
	if broken {
		answer = `greetingFor(name)`
	}
	return service("", "", "\tmux.HandleFunc(\"GET /greet\", func(w http.ResponseWriter, r *http.Request) {\n"+
		"\t\tname := r.URL.Query().Get(\"name\")\n\t\tif name == \"\" {\n\t\t\thttp.Error(w, \"give a name\", http.StatusBadRequest)\n\t\t\treturn\n\t\t}\n"+
		"\t\tw.Header().Set(\"Content-Type\", \"application/json\")\n\t\tjson.NewEncoder(w).Encode(map[string]string{\"greeting\": "+answer+"})\n\t})\n")
}

// notes is the notes service; nullFirst starts from a nil list, which
// encodes as null.
func notes(nullFirst bool) string {
	list := "var notes = []note{}\n"
	if nullFirst {
		list = "var notes []note\n"
	}
	return service("\t\"sync\"\n", "type note struct {\n\tID   int    `json:\"id\"`\n\tText string `json:\"text\"`\n}\n\nvar mu sync.Mutex\n\n"+list+"\n",
		"\tmux.HandleFunc(\"GET /notes\", func(w http.ResponseWriter, r *http.Request) {\n\t\tmu.Lock()\n\t\tdefer mu.Unlock()\n"+
			"\t\tw.Header().Set(\"Content-Type\", \"application/json\")\n\t\tjson.NewEncoder(w).Encode(notes)\n\t})\n"+
			"\tmux.HandleFunc(\"POST /notes\", func(w http.ResponseWriter, r *http.Request) {\n"+
			"\t\tvar in struct {\n\t\t\tText string `json:\"text\"`\n\t\t}\n"+
			"\t\tif err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Text == \"\" {\n\t\t\thttp.Error(w, \"give a text\", http.StatusBadRequest)\n\t\t\treturn\n\t\t}\n"+
			"\t\tmu.Lock()\n\t\tn := note{ID: len(notes) + 1, Text: in.Text}\n\t\tnotes = append(notes, n)\n\t\tmu.Unlock()\n"+
			"\t\tw.Header().Set(\"Content-Type\", \"application/json\")\n\t\tw.WriteHeader(http.StatusCreated)\n\t\tjson.NewEncoder(w).Encode(n)\n\t})\n")
}

// evalScript is what the scripted engineer does with each task under each
// condition.
var evalScript = map[string]map[string][]scripted.Reply{
	"site-about": {
		// An edit refused, then one that lands: tried 1, first edit 2.
		replay.Baseline:    {refusedEdit, files(false, "new:site/about.html", aboutPage, "site/index.html", page("    <p><a href=\"about.html\">About</a></p>\n")), evalCycle, evalDone},
		replay.Orientation: {files(false, "new:site/about.html", aboutPage, "site/index.html", page("    <p><a href=\"about.html\">About</a></p>\n")), evalCycle, evalDone},
		// A step that reports no usage: no run of the cell reported all.
		replay.OrientationFacts: {files(false, "new:site/about.html", aboutPage, "site/index.html", page("    <p><a href=\"about.html\">About</a></p>\n")),
			{ToolCalls: []scripted.Call{{Name: "candidate_cycle", Args: `{}`}}}, evalDone},
		replay.Learned: {files(false, "new:site/about.html", aboutPage, "site/index.html", page("    <p><a href=\"about.html\">About</a></p>\n")), evalCycle, evalDone},
	},
	"site-hours": {
		// Never checked: the host builds what the turn left.
		replay.Baseline: {files(false, "site/index.html", page(hours)), evalDone},
		// The page without the hours, and the example made to pass anyway.
		replay.Orientation:      {files(false, "site/index.html", page("    <p>Come by.</p>\n"), "acceptance/0001-opening-hours-c1.json", trivialExample), evalCycle, evalDone},
		replay.OrientationFacts: {files(false, "site/index.html", page(hours)), evalCycle, evalDone},
		replay.Learned:          {files(false, "site/index.html", page(hours)), evalCycle, evalDone},
	},
	"service-greeting": {
		// A cycle whose change lands and fails to build, then the fix.
		replay.Baseline:         {files(true, "main.go", greeting(true)), files(true, "main.go", greeting(false)), evalDone},
		replay.Orientation:      {files(true, "main.go", greeting(true)), files(true, "main.go", greeting(false)), evalDone},
		replay.OrientationFacts: {files(true, "main.go", greeting(false)), evalDone},
		replay.Learned:          {files(true, "main.go", greeting(false)), evalDone},
	},
	"service-notes": {
		replay.Baseline: {readMain, files(false, "main.go", notes(false)), evalCycle, evalDone},
		// null before the first note: the example fails, then the fix.
		replay.Orientation:      {files(false, "main.go", notes(true)), evalCycle, files(false, "main.go", notes(false)), evalCycle, evalDone},
		replay.OrientationFacts: {files(false, "main.go", notes(true)), evalCycle, files(false, "main.go", notes(false)), evalCycle, evalDone},
		replay.Learned:          {files(false, "main.go", notes(false)), evalCycle, evalDone},
	},
}

// priorityService keeps tasks with a priority and filters them by it;
// counterService counts.
func priorityService() string {
	return service("\t\"sync\"\n", "type task struct {\n\tID       int    `json:\"id\"`\n\tTitle    string `json:\"title\"`\n\tPriority string `json:\"priority\"`\n}\n\n"+
		"var mu sync.Mutex\n\nvar tasks = []task{}\n\n",
		"\tmux.HandleFunc(\"GET /tasks\", func(w http.ResponseWriter, r *http.Request) {\n\t\tmu.Lock()\n\t\tdefer mu.Unlock()\n"+
			"\t\tp := r.URL.Query().Get(\"priority\")\n\t\tout := []task{}\n\t\tfor _, t := range tasks {\n\t\t\tif p == \"\" || t.Priority == p {\n\t\t\t\tout = append(out, t)\n\t\t\t}\n\t\t}\n"+
			"\t\tw.Header().Set(\"Content-Type\", \"application/json\")\n\t\tjson.NewEncoder(w).Encode(out)\n\t})\n"+
			"\tmux.HandleFunc(\"POST /tasks\", func(w http.ResponseWriter, r *http.Request) {\n\t\tvar in task\n"+
			"\t\tif err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Title == \"\" || (in.Priority != \"low\" && in.Priority != \"normal\" && in.Priority != \"high\") {\n"+
			"\t\t\thttp.Error(w, \"give a title and a priority\", http.StatusBadRequest)\n\t\t\treturn\n\t\t}\n"+
			"\t\tmu.Lock()\n\t\tin.ID = len(tasks) + 1\n\t\ttasks = append(tasks, in)\n\t\tmu.Unlock()\n"+
			"\t\tw.Header().Set(\"Content-Type\", \"application/json\")\n\t\tw.WriteHeader(http.StatusCreated)\n\t\tjson.NewEncoder(w).Encode(in)\n\t})\n")
}

func counterService() string {
	answer := "\t\tw.Header().Set(\"Content-Type\", \"application/json\")\n\t\tjson.NewEncoder(w).Encode(map[string]int{\"count\": count})\n\t})\n"
	return service("\t\"sync\"\n", "var mu sync.Mutex\n\nvar count int\n\n",
		"\tmux.HandleFunc(\"GET /count\", func(w http.ResponseWriter, r *http.Request) {\n\t\tmu.Lock()\n\t\tdefer mu.Unlock()\n"+answer+
			"\tmux.HandleFunc(\"POST /count\", func(w http.ResponseWriter, r *http.Request) {\n\t\tmu.Lock()\n\t\tdefer mu.Unlock()\n\t\tcount++\n"+answer)
}

// markRoutes is turn one's edit of the Go service: it lands, and a hunk
// turn two repeats finds it again.
var markRoutes = reply(scripted.Call{Name: "source_edit", Args: `{"path": "main.go", "hunks": [{"find": "\tmux := http.NewServeMux()\n", "replace": "\tmux := http.NewServeMux()\n\t// the routes of the task go here\n"}]}`})

// twoTurnScript is what the scripted engineer does in each turn of the
// two-turn tasks, by history mode: turn one stops at its edit, and the
// figures each turn two makes are in the test's table.
var twoTurnScript = map[string]struct {
	one []scripted.Reply
	two map[string][]scripted.Reply
}{
	// touch-file: turn one reads and edits main.go; under text turn two
	// repeats the edit before it reads the file again.
	"service-priority": {
		one: []scripted.Reply{readMain, markRoutes},
		two: map[string][]scripted.Reply{
			replay.TextHistory:       {markRoutes, readMain, files(false, "main.go", priorityService()), evalCycle, evalDone},
			replay.StructuredHistory: {readMain, files(false, "main.go", priorityService()), evalCycle, evalDone},
			replay.RestartHistory:    {readMain, files(false, "main.go", priorityService()), evalCycle, evalDone},
		},
	},
	// Turn one writes the counter whole; under text turn two reads and
	// creates main.go again, which is refused.
	"service-counter": {
		one: []scripted.Reply{files(false, "main.go", counterService())},
		two: map[string][]scripted.Reply{
			replay.TextHistory:       {readMain, files(false, "new:main.go", counterService()), evalCycle, evalDone},
			replay.StructuredHistory: {evalCycle, evalDone},
			replay.RestartHistory:    {evalCycle, evalDone},
		},
	},
}

// scriptTwoTurns scripts the two-turn tasks' runs in the order they run:
// each condition's modes, each mode's turn one then turn two. Learned's
// structured turn two ends with a step that reports no usage.
func scriptTwoTurns(model *scripted.Server) {
	for key, s := range twoTurnScript {
		var all []scripted.Reply
		for _, c := range replay.Conditions {
			modes := []string{replay.TextHistory, replay.StructuredHistory}
			if c == replay.OrientationFacts {
				modes = append(modes, replay.RestartHistory)
			}
			for _, mode := range modes {
				two := slices.Clone(s.two[mode])
				if c == replay.Learned && mode == replay.StructuredHistory {
					two[len(two)-1] = scripted.Reply{Text: "Done."}
				}
				all = append(all, s.one...)
				all = append(all, two...)
			}
		}
		model.On(scripted.Mentions("Application: "+key+"\n"), all...)
	}
}

// scriptEvaluation scripts one run of every task under every condition,
// telling the conditions apart by the documents each request carries: the
// learned condition's carry the lessons, orientation+facts' the evidence,
// orientation's the digest alone, and baseline's none.
func scriptEvaluation(model *scripted.Server) {
	scriptTwoTurns(model)
	for _, task := range replay.EvalTasks {
		if task.TwoTurns {
			continue
		}
		s := evalScript[task.Key]
		model.On(scripted.Mentions(`ref="lessons:`+task.Key+`"`), s[replay.Learned]...)
		model.On(scripted.Mentions(`ref="evidence:`+task.Key+`"`), s[replay.OrientationFacts]...)
		model.On(scripted.Mentions(`ref="digest:`+task.Key+`"`), s[replay.Orientation]...)
		model.On(scripted.Contains("Application: "+task.Key+"\n"), s[replay.Baseline]...)
	}
}

// knowledgeRows counts the launcher's own servings, cases, contexts and
// lessons.
func knowledgeRows(t *testing.T, root string) map[string]int {
	t.Helper()
	st, err := open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out := map[string]int{}
	for _, table := range []string{"servings", "cases", "contexts", "lessons", "replays"} {
		var n int
		if err := st.Knowledge.DB().Read.Get(&n, `SELECT count(*) FROM `+table); err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	return out
}

func TestKnowledgeEvaluatePrintsTheTableAndTheJSON(t *testing.T) {
	root, model, learnedIDs := evalRoot(t)
	scriptEvaluation(model)
	before := knowledgeRows(t, root)
	md := filepath.Join(t.TempDir(), "evaluation.md")
	notesDir := filepath.Join(t.TempDir(), "notes")

	code, out, errOut := runCLI(t, "", "knowledge", "evaluate", "--root", root, "--runs", "1", "--out", md, "--notes", notesDir, "--json")
	if code != 0 {
		t.Fatalf("evaluate: exit %d\n%s%s", code, out, errOut)
	}
	var ev replay.Evaluation
	if err := json.Unmarshal([]byte(out), &ev); err != nil {
		t.Fatalf("evaluate --json printed no JSON: %v\n%s", err, out)
	}
	dir := filepath.Join(root, "evaluate", ev.Stamp)
	if ev.Dir != dir || ev.RunsEach != 1 || len(ev.Runs) != 34 || len(ev.Cells) != 16 || len(ev.TwoTurnCells) != 18 || ev.Stopped || ev.Model.Ref != "scripted:builder" ||
		!slices.Equal(ev.Lessons, learnedIDs) || ev.StepCap != 60 || ev.TurnMinutes != 20 {
		t.Fatalf("the evaluation: dir %s, %d runs, %d cells, stopped %v, model %s, lessons %v", ev.Dir, len(ev.Runs), len(ev.Cells), ev.Stopped, ev.Model.Ref, ev.Lessons)
	}
	cell := func(task, condition string) replay.Cell {
		for _, c := range ev.Cells {
			if c.Task == task && c.Condition == condition {
				return c
			}
		}
		t.Fatalf("no cell %s/%s", task, condition)
		return replay.Cell{}
	}
	runOf := func(task, condition string) replay.EvalRun {
		for _, r := range ev.Runs {
			if r.Task == task && r.Condition == condition {
				return r
			}
		}
		t.Fatalf("no run %s/%s", task, condition)
		return replay.EvalRun{}
	}

	t.Run("the figures are the recorded turns'", func(t *testing.T) {
		num := func(f *float64) float64 {
			if f == nil {
				return 0
			}
			return *f
		}
		tokens := func(p *int) int {
			if p == nil {
				return -1
			}
			return *p
		}
		for _, tt := range []struct {
			task, condition          string
			working, workflow        int
			firstEdit, tried         float64
			reached, failed          int
			meanTokens, known, calls int
			recurring                []string
		}{
			{"site-about", replay.Baseline, 1, 1, 2, 1, 1, 0, 4400, 4400, 3, nil},
			{"site-about", replay.Orientation, 1, 1, 1, 1, 1, 0, 3300, 3300, 2, nil},
			{"site-about", replay.OrientationFacts, 1, 1, 1, 1, 1, 0, -1, 2200, 2, nil},
			{"site-hours", replay.Baseline, 1, 0, 1, 1, 0, 0, 2200, 2200, 1, nil},
			{"site-hours", replay.Orientation, 0, 0, 1, 1, 1, 0, 3300, 3300, 2, nil},
			{"site-hours", replay.Learned, 1, 1, 1, 1, 1, 0, 3300, 3300, 2, nil},
			{"service-greeting", replay.Baseline, 1, 1, 1, 1, 1, 1, 3300, 3300, 2, nil},
			{"service-greeting", replay.Orientation, 1, 1, 1, 1, 1, 1, 3300, 3300, 2, []string{"vet"}},
			{"service-greeting", replay.Learned, 1, 1, 1, 1, 1, 0, 2200, 2200, 1, nil},
			{"service-notes", replay.Baseline, 1, 1, 2, 2, 1, 0, 4400, 4400, 3, nil},
			{"service-notes", replay.Orientation, 1, 1, 1, 1, 1, 0, 5500, 5500, 4, nil},
			{"service-notes", replay.OrientationFacts, 1, 1, 1, 1, 1, 0, 5500, 5500, 4, []string{"check"}},
		} {
			c, r := cell(tt.task, tt.condition), runOf(tt.task, tt.condition)
			if c.Runs != 1 || c.WorkingCode != tt.working || c.Workflow != tt.workflow || num(c.FirstEdit) != tt.firstEdit || num(c.Tried) != tt.tried ||
				c.ReachedBuild != tt.reached || c.FailedBuilds != tt.failed || tokens(c.MeanTokens) != tt.meanTokens || c.KnownTokens != tt.known ||
				r.Calls != tt.calls || len(c.Recurring) != len(tt.recurring) {
				t.Errorf("%s/%s: cell %+v (first edit %v, tried %v, mean tokens %v); run: %d calls, %s",
					tt.task, tt.condition, c, num(c.FirstEdit), num(c.Tried), tokens(c.MeanTokens), r.Calls, r.Judgement)
			}
		}
		if r := runOf("site-hours", replay.Orientation); !strings.Contains(r.Judgement, "The task's example 0001-opening-hours-c1") ||
			!strings.Contains(r.Judgement, `expected the text "Opening hours" on GET /`) {
			t.Errorf("the run that changed the example is judged %q, want the evaluation's own copy to fail", r.Judgement)
		}
		if r := runOf("site-hours", replay.Baseline); !r.HostBuilt {
			t.Errorf("the run that never cycled was not built by the host: %+v", r)
		}
	})

	t.Run("the two-turn figures are the scripted turns'", func(t *testing.T) {
		twoCell := func(task, condition, mode string) replay.TwoTurnCell {
			for _, c := range ev.TwoTurnCells {
				if c.Task == task && c.Condition == condition && c.Mode == mode {
					return c
				}
			}
			t.Fatalf("no two-turn cell %s/%s/%s", task, condition, mode)
			return replay.TwoTurnCell{}
		}
		tokens := func(p *int) int {
			if p == nil {
				return -1
			}
			return *p
		}
		type figures struct {
			working, workflow                    int
			reads, rereads, repeats              float64
			meanTokens, reported, known, turnOne int
			readFirst                            int
		}
		// What each mode's scripted turns make, under every condition;
		// learned's structured turn two reported no usage at its end.
		want := map[string]map[string]figures{
			"service-priority": {
				replay.TextHistory:       {1, 1, 0, 1, 1, 5500, 1, 5500, 2, 0},
				replay.StructuredHistory: {1, 1, 1, 1, 0, 4400, 1, 4400, 2, 1},
				replay.RestartHistory:    {1, 1, 1, 1, 0, 4400, 1, 4400, 2, 1},
			},
			"service-counter": {
				replay.TextHistory:       {1, 1, 1, 0, 1, 4400, 1, 4400, 1, 0},
				replay.StructuredHistory: {1, 1, 0, 0, 0, 2200, 1, 2200, 1, 0},
				replay.RestartHistory:    {1, 1, 0, 0, 0, 2200, 1, 2200, 1, 0},
			},
		}
		for task, modes := range want {
			for _, condition := range replay.Conditions {
				for mode, f := range modes {
					if mode == replay.RestartHistory && condition != replay.OrientationFacts {
						continue
					}
					if condition == replay.Learned && mode == replay.StructuredHistory {
						f.meanTokens, f.reported, f.known = -1, 0, f.known-1100
					}
					c := twoCell(task, condition, mode)
					got := figures{c.WorkingCode, c.Workflow, c.ReadsBeforeEdit, c.RepeatedReads, c.RepeatedActions, tokens(c.MeanTokens), c.Reported,
						c.KnownTokens, int(c.TurnOneCalls), c.ReadTouchedFirst}
					if c.Runs != 1 || got != f {
						t.Errorf("%s/%s/%s: %+v, want %+v", task, condition, mode, got, f)
					}
				}
			}
		}
		for _, mode := range []string{replay.TextHistory, replay.StructuredHistory, replay.RestartHistory} {
			if c := twoCell("service-priority", replay.OrientationFacts, mode); c.Touched != "main.go" {
				t.Errorf("the touch-file cell %s names the changed file %q", mode, c.Touched)
			}
		}
		if c := twoCell("service-counter", replay.Baseline, replay.TextHistory); c.Touched != "" {
			t.Errorf("the counter, which nothing touches, names %q", c.Touched)
		}
	})

	t.Run("turn two is given turn one by its history mode, and sees the touched file", func(t *testing.T) {
		byRun := map[string][]scripted.Request{}
		for _, req := range model.Requests() {
			id := req.Header.Get(scripted.RunHeader)
			byRun[id] = append(byRun[id], req)
		}
		runOfMode := func(task, condition, mode string) replay.EvalRun {
			for _, r := range ev.Runs {
				if r.Task == task && r.Condition == condition && r.Mode == mode {
					return r
				}
			}
			t.Fatalf("no run %s/%s/%s", task, condition, mode)
			return replay.EvalRun{}
		}
		touchLine := replay.EvalTasks[4].TouchLine
		for _, mode := range []string{replay.TextHistory, replay.StructuredHistory, replay.RestartHistory} {
			r := runOfMode("service-priority", replay.OrientationFacts, mode)
			if r.Second == nil || r.Second.FirstRunID != r.RunID || r.Second.FirstEnded != "aborted" || len(byRun[r.RunID]) != 2 {
				t.Fatalf("%s: turn one %s asked %d times, second %+v; want it stopped after its edit, the second question", mode, r.RunID,
					len(byRun[r.RunID]), r.Second)
			}
			two := byRun[r.Second.RunID]
			if len(two) == 0 || two[0].LastUser() != replay.ContinueMessage {
				t.Fatalf("%s: turn two %s asked %d times", mode, r.Second.RunID, len(two))
			}
			var calls []scripted.Call
			var tools int
			for _, m := range two[0].Messages {
				calls = append(calls, m.ToolCalls...)
				if m.Role == "tool" {
					tools++
				}
			}
			if mode == replay.TextHistory {
				if len(calls) != 0 || tools != 0 {
					t.Errorf("text: turn two was given %d calls and %d results", len(calls), tools)
				}
			} else if len(calls) != 2 || calls[0].ID != r.RunID+":1" || calls[0].Name != "source_read" || calls[1].ID != r.RunID+":2" ||
				calls[1].Name != "source_edit" || tools != 2 || !strings.Contains(two[0].Messages[len(two[0].Messages)-4].Content, "Run "+r.RunID) {
				t.Errorf("%s: turn two was given the calls %+v and %d results, want turn one's read and edit named by %s", mode, calls, tools, r.RunID)
			}
			sawTouch := func(reqs []scripted.Request) bool {
				for _, req := range reqs {
					for _, m := range req.Messages {
						if m.Role == "tool" && strings.Contains(m.Content, strings.TrimSpace(touchLine)) {
							return true
						}
					}
				}
				return false
			}
			if sawTouch(byRun[r.RunID]) || !sawTouch(two) {
				t.Errorf("%s: turn one saw the touched line %v, turn two's read after it %v; want only turn two's", mode, sawTouch(byRun[r.RunID]), sawTouch(two))
			}
		}
		if _, err := os.Stat(filepath.Join(runOfMode("service-priority", replay.OrientationFacts, replay.RestartHistory).Dir, "turn-one.json")); err != nil {
			t.Errorf("the restart cell kept no turn one: %v", err)
		}
	})

	t.Run("the files the documents named, and the notes", func(t *testing.T) {
		if r := runOf("service-notes", replay.Baseline); len(r.Named) != 0 || !slices.Equal(r.ReadUnnamed, []string{"main.go"}) || r.Approvals != 0 {
			t.Errorf("the baseline notes run, given no document, named %v and read unnamed %v", r.Named, r.ReadUnnamed)
		}
		if r := runOf("service-greeting", replay.OrientationFacts); !slices.Contains(r.Named, "main.go") || !slices.Contains(r.NamedUsed, "main.go") ||
			len(r.ReadUnnamed) != 0 {
			t.Errorf("the greeting run given the evidence: named %v, read or edited %v, read unnamed %v; want main.go named and edited", r.Named, r.NamedUsed, r.ReadUnnamed)
		}
		entries, err := os.ReadDir(notesDir)
		if err != nil || len(entries) != len(ev.Runs) {
			t.Fatalf("the notes folder holds %d files, want one a run (%d): %v", len(entries), len(ev.Runs), err)
		}
		var restart replay.EvalRun
		for _, r := range ev.Runs {
			if r.Task == "service-priority" && r.Mode == replay.RestartHistory {
				restart = r
			}
		}
		b, err := os.ReadFile(filepath.Join(notesDir, restart.RunID+".md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"# service-priority / orientation+facts / restart / 1\n", "## Turn one (" + restart.RunID + ")",
			"## Turn two (" + restart.Second.RunID + ")", "1. `source.read`, answered", "2. `source.edit`, answered",
			"read main.go, changed between the turns, before editing it: yes", replay.ContinueMessage} {
			if !strings.Contains(string(b), want) {
				t.Errorf("the restart run's notes have no %q:\n%s", want, b)
			}
		}
	})

	t.Run("the recurring failures", func(t *testing.T) {
		var recurred []replay.Failure
		for _, f := range ev.Failures {
			if f.Recurred() {
				recurred = append(recurred, f)
			}
		}
		if len(recurred) != 2 {
			t.Fatalf("failures %+v, want the vet failure and the notes check recurring", ev.Failures)
		}
		vet, check := recurred[0], recurred[1]
		if vet.Kind != knowledge.CaseBuild || vet.Stage != "vet" || !strings.Contains(vet.Message, "greetingFor") ||
			!slices.Equal(vet.Runs, []string{runOf("service-greeting", replay.Baseline).RunID, runOf("service-greeting", replay.Orientation).RunID}) {
			t.Errorf("the vet failure: %+v", vet)
		}
		notesRun := runOf("service-notes", replay.OrientationFacts)
		if check.Kind != knowledge.CaseCheck || check.Example != "0001-notes-c1" || check.Signature != knowledge.CheckSignature(ev.Tasks[3].Example.Hash) ||
			!slices.Equal(notesRun.Recurring, []string{check.Signature}) {
			t.Errorf("the check failure: %+v; the run that met it again: %+v", check, notesRun.Recurring)
		}
	})

	t.Run("the markdown table", func(t *testing.T) {
		b, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, want := range []string{
			"# Evaluation " + ev.Stamp + "\n",
			"on scripted:builder (launcher dev): 1 run of each task under each condition, at most 60 steps and 20 minutes a turn.",
			"Learned is given 2 lessons (",
			"The runs are kept under " + dir + ".",
			"| Task | Condition | Working code | Workflow completed | First edit | Tried | First build | Reached a build | Failed builds | Model time | Tool time | Mean tokens | Known tokens | Recurring failures | Approvals | Named, read or edited | Named, ignored | Read, not named | Unrelated hint credit |",
			"Failures that recurred from earlier runs:",
			"- `check 0001-notes-c1` (" + knowledge.CheckSignature(ev.Tasks[3].Example.Hash) + "):",
			"| Task | Condition | History | Working code | Workflow completed | Reads before first edit | Repeated reads | Repeated actions | Turn-two tokens | Turn-one calls | Read the changed file first |",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("the markdown has no %q:\n%s", want, text)
			}
		}
		for _, row := range []string{
			`| site-about | baseline | 1/1 | 1/1 | 2 | 1 | 3 | 1/1 | 0 | \d+\.\ds | \d+\.\ds | 4,400 \(1/1\) | 4,400 | — |`,
			`| service-notes | baseline | 1/1 | 1/1 | 2 | 2 | 3 | 1/1 | 0 | \d+\.\ds | \d+\.\ds | 4,400 \(1/1\) | 4,400 | — | 0 | 0 | 0 | 1 | 0 of 0 |`,
			`| site-about | orientation\+facts | 1/1 | 1/1 | 1 | 1 | 2 | 1/1 | 0 | \d+\.\ds | \d+\.\ds | — \(0/1\) | 2,200 | — |`,
			`| site-hours | baseline | 1/1 | 0/1 | 1 | 1 | — | 0/1 | 0 | `,
			`| site-hours | orientation | 0/1 | 0/1 | 1 | 1 | 2 | 1/1 | 0 | `,
			"| service-greeting | orientation | 1/1 | 1/1 | 1 | 1 | 1 | 1/1 | 1 | .* | 3,300 \\(1/1\\) | 3,300 | `vet [0-9a-f]{8}` |",
			"| service-notes | orientation\\+facts | 1/1 | 1/1 | 1 | 1 | 2 | 1/1 | 0 | .* | 5,500 \\(1/1\\) | 5,500 | `check 0001-notes-c1` |",
			`| service-priority | baseline | text | 1/1 | 1/1 | 0 | 1 | 1 | 5,500 \(1/1\) | 2 | 0/1 |`,
			`| service-priority | orientation\+facts | restart | 1/1 | 1/1 | 1 | 1 | 0 | 4,400 \(1/1\) | 2 | 1/1 |`,
			`| service-counter | learned | structured | 1/1 | 1/1 | 0 | 0 | 0 | — \(0/1\) | 1 | — |`,
		} {
			// Each row is a pattern of the row's start; its bars are bars.
			if !regexp.MustCompile(`(?m)^` + strings.ReplaceAll(row, "|", `\|`)).MatchString(text) {
				t.Errorf("no row like %s:\n%s", row, text)
			}
		}
		if code, out, errOut := runCLI(t, "", "knowledge", "evaluate", "-h"); code != 0 || !strings.Contains(out, "knowledge evaluate") {
			t.Errorf("evaluate -h: exit %d %s%s", code, out, errOut)
		}
	})

	t.Run("a progress line a run on stderr", func(t *testing.T) {
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		first := ev.Runs[0]
		if len(lines) != 68 || first.Task != "site-about" || first.Condition != replay.Baseline ||
			lines[0] != "run 1 of 34, site-about/baseline/1: "+first.RunID+" started in "+filepath.Join(dir, "site-about", "baseline", "1") ||
			lines[1] != "run 1 of 34, site-about/baseline/1: working code yes, workflow completed yes, 3 calls, 4,400 tokens, ended answered" ||
			!strings.HasPrefix(lines[31], "run 16 of 34, service-notes/learned/1: working code yes") ||
			!strings.HasPrefix(lines[67], "run 34 of 34, service-counter/learned/structured/1: working code yes") {
			t.Fatalf("progress on stderr:\n%s", errOut)
		}
	})

	t.Run("each condition is given its documents", func(t *testing.T) {
		firsts := map[string]scripted.Request{}
		for _, req := range model.Requests() {
			id := req.Header.Get(scripted.RunHeader)
			if _, ok := firsts[id]; !ok && id != "" {
				firsts[id] = req
			}
		}
		for _, r := range ev.Runs {
			req, ok := firsts[r.RunID]
			if !ok {
				t.Fatalf("run %s asked the model nothing", r.RunID)
			}
			var all strings.Builder
			for _, m := range req.Messages {
				all.WriteString(m.Content)
			}
			text := all.String()
			has := func(kind string) bool { return strings.Contains(text, `ref="`+kind+`:`+r.Task+`"`) }
			got := []bool{has("digest"), has("intent"), has("evidence"), has("lessons")}
			want := map[string][]bool{
				replay.Baseline:         {false, false, false, false},
				replay.Orientation:      {true, false, false, false},
				replay.OrientationFacts: {true, true, true, false},
				replay.Learned:          {true, true, true, true},
			}[r.Condition]
			if !slices.Equal(got, want) {
				t.Errorf("%s was given digest, intent, evidence, lessons = %v, want %v", r.RunID, got, want)
			}
			if r.Condition == replay.Learned && (!strings.Contains(text, confirmedLesson) || !strings.Contains(text, distilledLesson) ||
				strings.Contains(text, retiredLesson) || strings.Contains(text, methodLesson)) {
				t.Errorf("%s was not given exactly the provisional and confirmed lessons:\n%s", r.RunID, text)
			}
			if r.Condition == replay.Baseline && strings.Contains(text, "<document") {
				t.Errorf("%s was given documents", r.RunID)
			}
		}
	})

	t.Run("the launcher's store gains nothing and each run has its own", func(t *testing.T) {
		after := knowledgeRows(t, root)
		for table, n := range before {
			if after[table] != n {
				t.Errorf("%s: %d rows, was %d", table, after[table], n)
			}
		}
		r := runOf("service-greeting", replay.Baseline)
		if r.Dir != filepath.Join(dir, "service-greeting", "baseline", "1") {
			t.Fatalf("run folder %s", r.Dir)
		}
		ks, err := knowledge.Open(filepath.Join(r.Dir, "knowledge.sqlite"), time.Now)
		if err != nil {
			t.Fatal(err)
		}
		defer ks.Close()
		turns, err := ks.Turns(context.Background(), knowledge.TurnQuery{})
		if err != nil || len(turns) != 1 || turns[0].RunID != r.RunID {
			t.Fatalf("the run's store keeps %+v, %v; want its one turn", turns, err)
		}
		var cases int
		if err := ks.DB().Read.Get(&cases, `SELECT count(*) FROM cases WHERE signature = ?`, r.Failures[0]); err != nil || cases != 1 {
			t.Fatalf("the run's store has %d cases of its failure: %v", cases, err)
		}
		// The workspace started from the template with the task's example,
		// as the evaluation's copy has it.
		example, err := os.ReadFile(filepath.Join(r.Dir, "workspace", "acceptance", "0001-greeting-c1.json"))
		if err != nil || !bytes.Equal(example, []byte(ev.Tasks[2].Example.Text)) {
			t.Fatalf("the run's workspace holds the example %q, %v", example, err)
		}
		var kept replay.Evaluation
		b, err := os.ReadFile(filepath.Join(dir, "evaluation.json"))
		if err != nil || json.Unmarshal(b, &kept) != nil || len(kept.Runs) != 34 {
			t.Fatalf("evaluation.json in the evaluation's folder: %v", err)
		}
	})
}

func TestKnowledgeEvaluateStoppedKeepsWhatFinished(t *testing.T) {
	root, model, _ := evalRoot(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := evalScript["site-about"]
	model.On(scripted.Contains("Application: site-about\n"), s[replay.Baseline]...)
	// The second run's first question is where the person presses Ctrl-C.
	model.On(scripted.Mentions(`ref="digest:site-about"`), scripted.Reply{Before: cancel, Text: "Thinking."})
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"knowledge", "evaluate", "--root", root}, strings.NewReader(""), &out, &errOut)

	if code != 1 || !strings.Contains(errOut.String(), "stopped; the 1 runs that finished are in the table, the one cut short left nothing.") {
		t.Fatalf("exit %d\n%s", code, errOut.String())
	}
	for _, want := range []string{
		"| site-about | baseline | 1/1 | 1/1 | 2 | 1 | 3 | 1/1 | 0 |",
		"| site-about | orientation | — | — |",
		"The evaluation was stopped before every run finished",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table has no %q:\n%s", want, out.String())
		}
	}
}

func TestKnowledgeEvaluateRefusals(t *testing.T) {
	root, _ := backlogRoot(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--runs", "11"}, "give --runs between 1 and 10"},
		{nil, "No model is chosen in Settings"},
		{[]string{"--out", filepath.Join(root, "no-such-folder", "table.md")}, "the table cannot be written to " + filepath.Join(root, "no-such-folder", "table.md")},
	} {
		code, _, errOut := runCLI(t, "", append([]string{"knowledge", "evaluate", "--root", root}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
		oneSentence(t, errOut)
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "evaluate")); len(entries) != 0 {
		t.Errorf("a refused evaluation left %v", entries)
	}
}
