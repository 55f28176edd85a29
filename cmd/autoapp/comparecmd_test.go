package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"autoapp/executor/ai/provider"
	"autoapp/executor/ai/scripted"
	"autoapp/executor/replay"
	"autoapp/knowledge"
)

// compareRoot is a data folder with two providers turned on, each a
// scripted server offering one model, whose comparisons build with
// evalCache: good:coder and weak:tiny.
func compareRoot(t *testing.T) (root string, good, weak *scripted.Server) {
	t.Helper()
	root = t.TempDir()
	st, err := open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	good, weak = scripted.New(t), scripted.New(t)
	good.Models("coder")
	weak.Models("tiny")
	for _, p := range []provider.Provider{{Name: "good", BaseURL: good.URL(), On: true}, {Name: "weak", BaseURL: weak.URL(), On: true}} {
		if err := st.Providers.Save(p, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "evaluate"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(evalCache, filepath.Join(root, "evaluate", "cache")); err != nil {
		t.Fatal(err)
	}
	return root, good, weak
}

// textReply writes calls into its text as a Hermes model does, sending no
// tool_calls.
func textReply(calls ...scripted.Call) scripted.Reply {
	var b strings.Builder
	for _, c := range calls {
		fmt.Fprintf(&b, "<tool_call>\n{\"name\": %q, \"arguments\": %s}\n</tool_call>\n", c.Name, c.Args)
	}
	return scripted.Reply{Text: b.String(), Usage: scripted.Usage{Input: 1000, Output: 100}}
}

// aboutFiles writes the About page and links it from the home page.
var aboutFiles = files(false, "new:site/about.html", aboutPage, "site/index.html", page("    <p><a href=\"about.html\">About</a></p>\n"))

// scriptGoodModel: every task in one attempt, each edit its first call;
// the About task's cycle written as text. 11 replies of 1,100 tokens.
func scriptGoodModel(s *scripted.Server) {
	s.On(scripted.Contains("Application: site-about\n"), aboutFiles, textReply(scripted.Call{Name: "candidate_cycle", Args: `{}`}), evalDone)
	s.On(scripted.Contains("Application: site-hours\n"), files(false, "site/index.html", page(hours)), evalCycle, evalDone)
	s.On(scripted.Contains("Application: service-greeting\n"), files(true, "main.go", greeting(false)), evalDone)
	s.On(scripted.Contains("Application: service-notes\n"), files(false, "main.go", notes(false)), evalCycle, evalDone)
}

// scriptWeakModel: the About page's first attempt sends a change whose
// files are not a list (refused against the schema) and stops; the hours'
// first attempt leaves the hours out; the greeting never builds, in
// either attempt; the notes are read first. 19 replies of 1,100 tokens.
func scriptWeakModel(s *scripted.Server) {
	invalid := reply(scripted.Call{Name: "source_change", Args: `{"files": "site/about.html"}`})
	s.On(scripted.Contains("Application: site-about\n"), invalid, evalDone, aboutFiles, evalCycle, evalDone)
	s.On(scripted.Contains("Application: site-hours\n"), files(false, "site/index.html", page("    <p>Come by.</p>\n")), evalCycle, evalDone,
		files(false, "site/index.html", page(hours)), evalCycle, evalDone)
	s.On(scripted.Contains("Application: service-greeting\n"), files(true, "main.go", greeting(true)), evalDone,
		files(true, "main.go", greeting(true)), evalDone)
	s.On(scripted.Contains("Application: service-notes\n"), readMain, files(false, "main.go", notes(false)), evalCycle, evalDone)
}

func TestKnowledgeEvaluateModelsPrintsTheScorecardBestFirst(t *testing.T) {
	root, good, weak := compareRoot(t)
	scriptGoodModel(good)
	scriptWeakModel(weak)
	md := filepath.Join(t.TempDir(), "scorecard.md")

	// The weaker model is named first: the table puts the better ahead.
	code, out, errOut := runCLI(t, "", "knowledge", "evaluate", "--root", root, "--models", "weak:tiny,good:coder", "--out", md, "--json")
	if code != 0 {
		t.Fatalf("evaluate --models: exit %d\n%s%s", code, out, errOut)
	}
	var cmp replay.Comparison
	if err := json.Unmarshal([]byte(out), &cmp); err != nil {
		t.Fatalf("evaluate --models --json printed no JSON: %v\n%s", err, out)
	}
	if cmp.Condition != replay.Baseline || len(cmp.Rows) != 2 || cmp.Stopped || len(cmp.Tasks) != 4 {
		t.Fatalf("the comparison: condition %s, %d rows, stopped %v, tasks %v", cmp.Condition, len(cmp.Rows), cmp.Stopped, cmp.Tasks)
	}

	t.Run("the rows are what the scripts did", func(t *testing.T) {
		type row struct {
			model                              string
			tasks, working, workflow, attempts int
			firstEditCalls, firstEditTasks     int
			fromText, invalid, tokens          int
			reported                           bool
		}
		want := []row{
			{"good:coder", 4, 4, 4, 4, 4, 4, 1, 0, 11 * 1100, true},
			// About: the refused change, then the edit as the second
			// attempt's first call (2); hours 1; greeting 1; notes after
			// a read (2).
			{"weak:tiny", 4, 3, 3, 7, 6, 4, 0, 1, 19 * 1100, true},
		}
		for i, w := range want {
			r := cmp.Rows[i]
			got := row{r.Model, r.Tasks, r.WorkingCode, r.Workflow, r.Attempts, r.FirstEditCalls, r.FirstEditTasks, r.FromText, r.InvalidInputs, r.Tokens, r.TokensReported}
			if got != w {
				t.Errorf("row %d: %+v\nwant %+v", i+1, got, w)
			}
			if r.ID == 0 || r.WallMS <= 0 || r.Stamp != cmp.Stamp {
				t.Errorf("row %d was not kept with its time: %+v", i+1, r)
			}
		}
		turns := func(s *scripted.Server) int {
			n := 0
			for _, req := range s.Requests() {
				if req.Path == "/v1/chat/completions" {
					n++
				}
			}
			return n
		}
		if n := turns(good); n != 11 {
			t.Errorf("the good model was asked %d times, want 11", n)
		}
		if n := turns(weak); n != 19 {
			t.Errorf("the weak model was asked %d times, want 19", n)
		}
	})

	t.Run("a second attempt is told why the first failed", func(t *testing.T) {
		var second *scripted.Request
		for _, req := range weak.Requests() {
			if strings.HasSuffix(req.Header.Get(scripted.RunHeader), "-site-hours-a2") {
				second = &req
				break
			}
		}
		if second == nil {
			t.Fatal("the weak model's second attempt at the hours was never asked")
		}
		if !strings.Contains(second.LastUser(), `expected the text "Opening hours" on GET /`) {
			t.Errorf("the second attempt was not told why the first failed:\n%s", second.LastUser())
		}
	})

	t.Run("the markdown", func(t *testing.T) {
		b, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		header := "| Model | Working code | Workflow completed | Attempts per task | Calls to first edit | Tool calls recovered from text | Invalid tool inputs | Tokens | Wall time |"
		good := `| good:coder | 4/4 | 4/4 | 1 | 1 | 1 | 0 | 12,100 | \d+\.\ds |`
		weak := `| weak:tiny | 3/4 | 3/4 | 1.75 | 1.5 | 0 | 1 | 20,900 | \d+\.\ds |`
		re := regexp.MustCompile(`(?s)` + regexp.QuoteMeta(header) + `\n\| --- .*\n` + strings.ReplaceAll(good, "|", `\|`) + `\n` + strings.ReplaceAll(weak, "|", `\|`) + `\n`)
		if !re.MatchString(text) {
			t.Errorf("the scorecard is not the two rows, the better first:\n%s", text)
		}
		if !strings.Contains(text, "under baseline, each task tried up to 2 times") {
			t.Errorf("the scorecard does not say what ran:\n%s", text)
		}
	})

	t.Run("progress on stderr", func(t *testing.T) {
		for _, want := range []string{
			"model 1 of 2, weak:tiny, site-about attempt 1: working code no, workflow completed no, 1 calls, 2,200 tokens, ended answered",
			"model 1 of 2, weak:tiny, site-about attempt 2: working code yes",
			"model 1 of 2, weak:tiny: finished, working code 3/4, attempts per task 1.75",
			"model 2 of 2, good:coder: finished, working code 4/4, attempts per task 1",
		} {
			if !strings.Contains(errOut, want) {
				t.Errorf("stderr has no %q:\n%s", want, errOut)
			}
		}
	})

	t.Run("each model's latest row is kept", func(t *testing.T) {
		st, err := open(root)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		latest, err := knowledge.NewScorecards(st.Knowledge.DB()).Latest(context.Background())
		if err != nil || len(latest) != 2 || latest["good:coder"].WorkingCode != 4 || latest["weak:tiny"].Attempts != 7 {
			t.Fatalf("the kept rows: %+v, %v", latest, err)
		}
	})
}

// A comparison that cannot be what was asked for is refused before any
// model is asked for a turn, with a sentence.
func TestKnowledgeEvaluateModelsRefusals(t *testing.T) {
	root, good, weak := compareRoot(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--models", "good:coder,weak:nosuch"}, "There is no model weak:nosuch: the known models are "},
		{[]string{"--models", "good:coder"}, "Choose at least two models to compare."},
		{[]string{"--models", "good:coder,good:coder"}, "good:coder is named twice; name each model once."},
		{[]string{"--models", "good:coder,weak:tiny", "--condition", "lucky"}, `A comparison runs under one of baseline, orientation, orientation+facts, learned, not "lucky".`},
		{[]string{"--condition", "baseline"}, "--condition goes with --models"},
		{[]string{"--models", "good:coder,weak:tiny", "--runs", "2"}, "--runs and --notes go with a plain evaluation"},
	} {
		code, _, errOut := runCLI(t, "", append([]string{"knowledge", "evaluate", "--root", root}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
		oneSentence(t, errOut)
	}
	_, _, errOut := runCLI(t, "", "knowledge", "evaluate", "--root", root, "--models", "good:coder,weak:nosuch")
	if !strings.Contains(errOut, "good:coder, weak:tiny.") {
		t.Errorf("the refusal does not name the known models: %q", errOut)
	}
	for name, s := range map[string]*scripted.Server{"good": good, "weak": weak} {
		for _, req := range s.Requests() {
			if req.Path != "/v1/models" {
				t.Errorf("a refused comparison asked %s for %s", name, req.Path)
			}
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "evaluate")); len(entries) != 1 {
		t.Errorf("a refused comparison left %v beside the cache", entries)
	}
}
