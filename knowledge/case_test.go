package knowledge_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"autoapp/executor/build"
	"autoapp/intent/refusal"
	"autoapp/knowledge"
	"autoapp/migrations"
	"autoapp/migrations/migrationstest"
)

// caseStore is a real knowledge store in a temporary folder, migrated, with
// a clock that moves only when told.
type caseStore struct {
	t     *testing.T
	db    *migrations.DB
	cases *knowledge.Cases
	at    time.Time
}

func openCaseStore(t *testing.T) *caseStore {
	t.Helper()
	db := migrationstest.Knowledge(t)
	s := &caseStore{t: t, db: db, at: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	s.cases = knowledge.NewCases(db, func() time.Time { return s.at })
	return s
}

var caseStages = []string{"compile", "vet", "test"}

// failedBuild is a build of app that ran stages up to and including the
// last problem's stage and failed there.
func failedBuild(app, run string, problems ...knowledge.BuildProblem) knowledge.BuildObserved {
	last := problems[len(problems)-1].Stage
	i := slices.Index(caseStages, last)
	return knowledge.BuildObserved{
		AppID: app, RunID: run, Revision: "rev-" + run, ReleaseBefore: "rel-1",
		Request: "add tags", Model: "m", ServerVersion: "v1",
		StagesRun: slices.Clone(caseStages[:i+1]), Problems: problems,
	}
}

func passedBuild(app, run string) knowledge.BuildObserved {
	return knowledge.BuildObserved{AppID: app, RunID: run, Revision: "rev-" + run, StagesRun: caseStages, OK: true}
}

// problem is a problem of stage as the executor reports it, with the
// signature the build gives it.
func problem(stage, message string) knowledge.BuildProblem {
	return knowledge.BuildProblem{Stage: stage, Message: message, Signature: build.Signature(stage, message)}
}

func (s *caseStore) build(b knowledge.BuildObserved) (opened, resolved []int64) {
	s.t.Helper()
	s.at = s.at.Add(time.Minute)
	opened, resolved, err := s.cases.Build(context.Background(), b)
	if err != nil {
		s.t.Fatalf("build %s: %v", b.RunID, err)
	}
	return opened, resolved
}

func (s *caseStore) checks(c knowledge.ChecksObserved) (opened, resolved []int64) {
	s.t.Helper()
	s.at = s.at.Add(time.Minute)
	opened, resolved, err := s.cases.Checks(context.Background(), c)
	if err != nil {
		s.t.Fatalf("checks %s: %v", c.RunID, err)
	}
	return opened, resolved
}

func (s *caseStore) get(id int64) knowledge.Case {
	s.t.Helper()
	c, err := s.cases.Get(context.Background(), id)
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

func (s *caseStore) list(q knowledge.CaseQuery) []knowledge.Case {
	s.t.Helper()
	cs, err := s.cases.List(context.Background(), q)
	if err != nil {
		s.t.Fatal(err)
	}
	return cs
}

func caseCode(err error) refusal.Code {
	var ke *refusal.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return ""
}

func TestCaseSignatureIgnoresWhatVariesBetweenReports(t *testing.T) {
	for _, tc := range []struct {
		name         string
		first, again knowledge.BuildProblem
		same         bool
	}{
		{"a different path",
			problem("compile", "internal/tags/store.go:12:5: undefined: Tag"),
			problem("compile", "cmd/web/main.go:12:5: undefined: Tag"), true},
		{"a different line number",
			problem("compile", "store.go:12:5: undefined: Tag"),
			problem("compile", "store.go:97:2: undefined: Tag"), true},
		{"a different quoted name",
			problem("vet", `store.go:3: "fmt" imported and not used`),
			problem("vet", `store.go:3: "strings" imported and not used`), true},
		{"a different stage",
			problem("vet", "store.go:3: unreachable code"),
			problem("test", "store.go:3: unreachable code"), false},
		{"a different message",
			problem("compile", "store.go:12:5: undefined: Tag"),
			problem("compile", "store.go:12:5: missing return"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openCaseStore(t)
			opened, _ := s.build(failedBuild("blog", "r1", tc.first))
			if len(opened) != 1 {
				t.Fatalf("the first failure opened %v, want one case", opened)
			}
			again, _ := s.build(failedBuild("blog", "r2", tc.again))
			open := s.list(knowledge.CaseQuery{AppID: "blog", Open: new(true)})
			if tc.same {
				if len(again) != 0 || len(open) != 1 {
					t.Fatalf("the same failure opened %v; open cases %d, want the one case kept", again, len(open))
				}
				if got := s.get(opened[0]); got.Message != tc.first.Message || got.OpenedRunID != "r1" {
					t.Fatalf("the kept case changed: %+v", got)
				}
				return
			}
			if len(again) != 1 {
				t.Fatalf("a different failure opened %v, want a case of its own", again)
			}
			if a, b := s.get(opened[0]), s.get(again[0]); a.Signature == b.Signature {
				t.Fatalf("two failures share the signature %s", a.Signature)
			}
		})
	}
}

func TestBuildCaseRecordsItsOpening(t *testing.T) {
	s := openCaseStore(t)
	b := failedBuild("blog", "r1",
		problem("vet", "a.go:1: x declared and not used"),
		problem("vet", "b.go:9: x declared and not used"), // the same failure
		problem("vet", "a.go:4: unreachable code"))
	b.ContextID = 42
	opened, resolved := s.build(b)
	if len(opened) != 2 || len(resolved) != 0 {
		t.Fatalf("opened %v resolved %v, want two cases opened", opened, resolved)
	}
	c := s.get(opened[0])
	want := knowledge.Case{
		ID: opened[0], Kind: knowledge.CaseBuild, AppID: "blog", Stage: "vet",
		Signature: build.Signature("vet", "a.go:1: x declared and not used"),
		Message:   "a.go:1: x declared and not used", Request: "add tags", ContextID: 42,
		RevisionBefore: "rev-r1", ReleaseBefore: "rel-1", Model: "m", ServerVersion: "v1",
		OpenedAt: s.at, OpenedRunID: "r1",
	}
	c.OpenedAt = c.OpenedAt.UTC()
	if c != want {
		t.Fatalf("case\n got %+v\nwant %+v", c, want)
	}
	if c.Resolved() {
		t.Fatal("a new case is resolved")
	}
}

func TestBuildCaseResolution(t *testing.T) {
	undefined := problem("compile", "store.go:12:5: undefined: Tag")
	vetFails := problem("vet", "store.go:3: unreachable code")
	testFails := problem("test", "--- FAIL: TestTags (0.00s)")
	for _, tc := range []struct {
		name         string
		before       knowledge.BuildProblem
		later        knowledge.BuildObserved
		resolved     bool
		opensAnother bool
	}{
		{"the stage ran and the problem is gone", vetFails, passedBuild("blog", "r2"), true, false},
		{"a failing build resolves a stage that ran clean", undefined,
			failedBuild("blog", "r2", vetFails), true, true},
		{"the build stopped before that stage", testFails,
			failedBuild("blog", "r2", undefined), false, true},
		{"a different failure in the same stage", vetFails,
			failedBuild("blog", "r2", problem("vet", "store.go:8: self-assignment of x to x")), true, true},
		{"the same failure again", vetFails,
			failedBuild("blog", "r2", problem("vet", "other.go:99: unreachable code")), false, false},
		{"another application's build", vetFails, passedBuild("shop", "r2"), false, false},
		{"a build that stopped before its first stage", vetFails,
			knowledge.BuildObserved{AppID: "blog", RunID: "r2",
				Problems: []knowledge.BuildProblem{problem("", "The build could not prepare its environment: disk full")}},
			false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openCaseStore(t)
			first, _ := s.build(failedBuild("blog", "r1", tc.before))
			opened, resolved := s.build(tc.later)
			c := s.get(first[0])
			if c.Resolved() != tc.resolved {
				t.Fatalf("resolved = %v, want %v (%+v)", c.Resolved(), tc.resolved, c)
			}
			if tc.resolved {
				if !slices.Equal(resolved, first) {
					t.Fatalf("Build answered resolved %v, want %v", resolved, first)
				}
				if c.ResolvedRunID != "r2" || c.ResolvedRevision != "rev-r2" || !c.ResolvedAt.Equal(s.at) {
					t.Fatalf("resolution %q %q %v, want r2 rev-r2 %v", c.ResolvedRunID, c.ResolvedRevision, c.ResolvedAt, s.at)
				}
			} else if len(resolved) != 0 {
				t.Fatalf("Build answered resolved %v, want none", resolved)
			}
			if (len(opened) == 1) != tc.opensAnother || len(opened) > 1 {
				t.Fatalf("opened %v, want another case: %v", opened, tc.opensAnother)
			}
		})
	}
}

func TestBuildCaseOfTheEnvironmentIsResolvedOnceAStageRuns(t *testing.T) {
	s := openCaseStore(t)
	env := knowledge.BuildObserved{AppID: "blog", RunID: "r1", StagesRun: []string{},
		Problems: []knowledge.BuildProblem{problem("", "The build could not prepare its environment: disk full")}}
	opened, _ := s.build(env)
	if len(opened) != 1 || s.get(opened[0]).Stage != "" {
		t.Fatalf("opened %v, want one case with no stage", opened)
	}
	if _, resolved := s.build(failedBuild("blog", "r2", problem("compile", "a.go:1: missing return"))); !slices.Equal(resolved, opened) {
		t.Fatalf("a build that reached its first stage resolved %v, want %v", resolved, opened)
	}
}

func TestBuildProblemOfAStageThatNeverRanOpensNothing(t *testing.T) {
	s := openCaseStore(t)
	stopped := knowledge.BuildObserved{AppID: "blog", RunID: "r1", StagesRun: []string{"compile"},
		Problems: []knowledge.BuildProblem{problem("vet", "The build was stopped before stage vet began.")}}
	if opened, _ := s.build(stopped); len(opened) != 0 {
		t.Fatalf("opened %v for a stage that never ran", opened)
	}
}

func TestBuildRefusesAnIncompleteObservation(t *testing.T) {
	s := openCaseStore(t)
	for name, b := range map[string]knowledge.BuildObserved{
		"no application":       {RunID: "r1", OK: true},
		"no run":               {AppID: "blog", OK: true},
		"passed with problems": {AppID: "blog", RunID: "r1", OK: true, Problems: []knowledge.BuildProblem{problem("vet", "x")}},
		"a problem without its signature": {AppID: "blog", RunID: "r1", StagesRun: []string{"vet"},
			Problems: []knowledge.BuildProblem{{Stage: "vet", Message: "a.go:1: unreachable code"}}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := s.cases.Build(context.Background(), b); caseCode(err) != refusal.Invalid {
				t.Fatalf("err = %v, want an EInvalid refusal", err)
			}
		})
	}
}

func TestCheckCaseIsResolvedOnlyByAPassOfTheSameContent(t *testing.T) {
	s := openCaseStore(t)
	run := func(id string, results ...knowledge.ExampleResult) knowledge.ChecksObserved {
		return knowledge.ChecksObserved{AppID: "blog", RunID: id, Revision: "rev-" + id, Request: "add tags", Results: results}
	}
	failA := knowledge.ExampleResult{ID: "0007-add-tags", Hash: "aaaa", Failure: "expected status 200, got 404 on GET /tags"}
	passEdited := knowledge.ExampleResult{ID: "0007-add-tags", Hash: "bbbb", Passed: true}
	passA := knowledge.ExampleResult{ID: "0007-add-tags", Hash: "aaaa", Passed: true}

	opened, _ := s.checks(run("r1", failA, knowledge.ExampleResult{ID: "broken", Failure: "the file is not valid JSON"}))
	if len(opened) != 1 {
		t.Fatalf("opened %v, want one case (an unreadable example has no content to name it by)", opened)
	}
	c := s.get(opened[0])
	if c.Kind != knowledge.CaseCheck || c.Signature != "check:aaaa" || c.ExampleID != "0007-add-tags" ||
		c.ExampleHash != "aaaa" || c.Message != failA.Failure || c.Stage != "" {
		t.Fatalf("check case %+v", c)
	}
	if again, _ := s.checks(run("r2", failA)); len(again) != 0 {
		t.Fatalf("the same failure opened %v again", again)
	}
	if _, resolved := s.checks(run("r3", passEdited)); len(resolved) != 0 || s.get(c.ID).Resolved() {
		t.Fatalf("a pass of the edited example resolved %v", resolved)
	}
	if _, resolved := s.checks(run("r4", passA)); !slices.Equal(resolved, opened) {
		t.Fatalf("a pass of the same content resolved %v, want %v", resolved, opened)
	}
	if got := s.get(c.ID); got.ResolvedRunID != "r4" || got.ResolvedRevision != "rev-r4" {
		t.Fatalf("resolution %+v", got)
	}
	if reopened, _ := s.checks(run("r5", failA)); len(reopened) != 1 || reopened[0] == c.ID {
		t.Fatalf("a failure after the resolution opened %v, want a new case", reopened)
	}
}

func TestCheckCaseStaysOpenWhenTheSameContentAlsoFails(t *testing.T) {
	s := openCaseStore(t)
	opened, _ := s.checks(knowledge.ChecksObserved{AppID: "blog", RunID: "r1",
		Results: []knowledge.ExampleResult{{ID: "a", Hash: "h1", Failure: "got 500"}}})
	_, resolved := s.checks(knowledge.ChecksObserved{AppID: "blog", RunID: "r2",
		Results: []knowledge.ExampleResult{{ID: "a", Hash: "h1", Passed: true}, {ID: "a-copy", Hash: "h1", Failure: "got 500"}}})
	if len(resolved) != 0 || s.get(opened[0]).Resolved() {
		t.Fatalf("resolved %v while the same content failed in the same run", resolved)
	}
}

// The sentences of the triggers in migrations/knowledge/0003_cases.up.sql.
const (
	openingSentence    = "a case's opening columns never change"
	closedEditSentence = "a resolved case's edits never change"
	appendSentence     = "a case's edits are only appended to"
	resolutionSentence = "a case's resolution never changes once written"
	diagnosisSentence  = "a case's diagnosis is written once"
	deleteSentence     = "cases are never deleted"
)

func TestCaseTriggersRefuse(t *testing.T) {
	s := openCaseStore(t)
	ctx := context.Background()
	// buildCase stays open with an edit; checkCase is resolved and diagnosed.
	b, _ := s.build(failedBuild("blog", "r1", problem("vet", "a.go:1: unreachable code")))
	buildCase := b[0]
	if err := s.cases.AppendEdit(ctx, "blog", "r1", "source.edit a.go"); err != nil {
		t.Fatal(err)
	}
	c, _ := s.checks(knowledge.ChecksObserved{AppID: "blog", RunID: "r1",
		Results: []knowledge.ExampleResult{{ID: "tags", Hash: "h1", Failure: "got 404"}}})
	checkCase := c[0]
	if err := s.cases.AppendEdit(ctx, "blog", "r1", "source.edit tags.go"); err != nil {
		t.Fatal(err)
	}
	s.checks(knowledge.ChecksObserved{AppID: "blog", RunID: "r2", Results: []knowledge.ExampleResult{{ID: "tags", Hash: "h1", Passed: true}}})
	if err := s.cases.Diagnose(ctx, checkCase, `{"kind":"lesson"}`); err != nil {
		t.Fatal(err)
	}

	type refusal struct {
		name, stmt, sentence string
	}
	var refusals []refusal
	for _, col := range []string{"kind", "signature", "app_id", "stage", "message", "request",
		"revision_before", "release_before", "model", "server_version", "opened_run_id"} {
		refusals = append(refusals, refusal{"change " + col,
			fmt.Sprintf(`UPDATE cases SET %s = coalesce(%s, '') || 'x' WHERE id = %d`, col, col, buildCase), openingSentence})
	}
	for _, col := range []string{"example_id", "example_hash"} {
		refusals = append(refusals, refusal{"change " + col,
			fmt.Sprintf(`UPDATE cases SET %s = %s || 'x' WHERE id = %d`, col, col, checkCase), openingSentence})
	}
	for _, col := range []string{"context_id", "opened_at", "id"} {
		refusals = append(refusals, refusal{"change " + col,
			fmt.Sprintf(`UPDATE cases SET %s = coalesce(%s, 0) + 1000 WHERE id = %d`, col, col, buildCase), openingSentence})
	}
	refusals = append(refusals,
		refusal{"set the request of a resolved case",
			fmt.Sprintf(`UPDATE cases SET request = 'other' WHERE id = %d`, checkCase), openingSentence},
		refusal{"rewrite an open case's edits",
			fmt.Sprintf(`UPDATE cases SET edits = 'nothing happened' WHERE id = %d`, buildCase), appendSentence},
		refusal{"clear an open case's edits",
			fmt.Sprintf(`UPDATE cases SET edits = '' WHERE id = %d`, buildCase), appendSentence},
		refusal{"prepend to an open case's edits",
			fmt.Sprintf(`UPDATE cases SET edits = 'x' || edits WHERE id = %d`, buildCase), appendSentence},
		refusal{"append to a resolved case's edits",
			fmt.Sprintf(`UPDATE cases SET edits = edits || 'late edit' WHERE id = %d`, checkCase), closedEditSentence},
		refusal{"reopen a resolved case",
			fmt.Sprintf(`UPDATE cases SET resolved_at = NULL, resolved_run_id = NULL, resolved_revision = NULL WHERE id = %d`, checkCase), resolutionSentence},
		refusal{"change resolved_at",
			fmt.Sprintf(`UPDATE cases SET resolved_at = resolved_at + 1 WHERE id = %d`, checkCase), resolutionSentence},
		refusal{"change resolved_run_id",
			fmt.Sprintf(`UPDATE cases SET resolved_run_id = 'r9' WHERE id = %d`, checkCase), resolutionSentence},
		refusal{"change resolved_revision",
			fmt.Sprintf(`UPDATE cases SET resolved_revision = 'rev-9' WHERE id = %d`, checkCase), resolutionSentence},
		refusal{"rewrite the diagnosis",
			fmt.Sprintf(`UPDATE cases SET diagnosis = 'another story' WHERE id = %d`, checkCase), diagnosisSentence},
		refusal{"clear the diagnosis",
			fmt.Sprintf(`UPDATE cases SET diagnosis = NULL WHERE id = %d`, checkCase), diagnosisSentence},
		refusal{"delete an open case", fmt.Sprintf(`DELETE FROM cases WHERE id = %d`, buildCase), deleteSentence},
		refusal{"delete a resolved case", fmt.Sprintf(`DELETE FROM cases WHERE id = %d`, checkCase), deleteSentence},
		refusal{"delete every case", `DELETE FROM cases`, deleteSentence},
	)

	before := s.list(knowledge.CaseQuery{})
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			_, err := s.db.Write.Exec(r.stmt)
			if err == nil || !strings.Contains(err.Error(), r.sentence) {
				t.Fatalf("%s: err = %v, want the trigger's refusal %q", r.stmt, err, r.sentence)
			}
		})
	}
	if after := s.list(knowledge.CaseQuery{}); !slices.Equal(before, after) {
		t.Fatalf("a refused statement changed the cases:\nbefore %+v\n after %+v", before, after)
	}

	t.Run("a second open case of the same failure", func(t *testing.T) {
		_, err := s.db.Write.Exec(`INSERT INTO cases (kind, signature, app_id, stage, message, opened_at, opened_run_id)
			SELECT kind, signature, app_id, stage, message, opened_at, 'r3' FROM cases WHERE id = ?`, buildCase)
		if err == nil || !strings.Contains(err.Error(), "UNIQUE") {
			t.Fatalf("err = %v, want the one-open-case index to refuse", err)
		}
	})
	t.Run("what stays writable", func(t *testing.T) {
		for _, stmt := range []string{
			fmt.Sprintf(`UPDATE cases SET edits = edits || 'one more line' WHERE id = %d`, buildCase),
			fmt.Sprintf(`UPDATE cases SET diagnosis = 'first word' WHERE id = %d`, buildCase),
			fmt.Sprintf(`UPDATE cases SET resolved_at = 1, resolved_run_id = 'r3', resolved_revision = 'rev-3' WHERE id = %d`, buildCase),
			fmt.Sprintf(`UPDATE cases SET distill_state = 'asked', distill_tries = distill_tries + 1 WHERE id = %d`, checkCase),
			fmt.Sprintf(`UPDATE cases SET distill_state = NULL, distill_tries = 0 WHERE id = %d`, checkCase),
			fmt.Sprintf(`UPDATE cases SET resolved_at = resolved_at, diagnosis = diagnosis, edits = edits WHERE id = %d`, checkCase),
		} {
			if _, err := s.db.Write.Exec(stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
	})
}

func TestAppendEditAppendsToOpenCasesAndStopsAtTheCap(t *testing.T) {
	s := openCaseStore(t)
	ctx := context.Background()
	resolvedCase, _ := s.build(failedBuild("blog", "r1", problem("compile", "a.go:1: missing return")))
	s.build(passedBuild("blog", "r2"))
	openCase, _ := s.build(failedBuild("blog", "r3", problem("vet", "a.go:1: unreachable code")))
	other, _ := s.build(failedBuild("shop", "r3", problem("vet", "a.go:1: unreachable code")))

	if err := s.cases.AppendEdit(ctx, "blog", "r3", "source.edit a.go\n(2 hunks)"); err != nil {
		t.Fatal(err)
	}
	want := s.at.Format(time.RFC3339) + " r3 source.edit a.go (2 hunks)\n"
	if got := s.get(openCase[0]).Edits; got != want {
		t.Fatalf("edits %q, want %q", got, want)
	}
	if got := s.get(resolvedCase[0]).Edits; got != "" {
		t.Fatalf("a resolved case was appended to: %q", got)
	}
	if got := s.get(other[0]).Edits; got != "" {
		t.Fatalf("another application's case was appended to: %q", got)
	}

	// Lines of 105 characters, 40 of them two bytes wide, past the cap.
	summary := strings.Repeat("é", 40) + strings.Repeat("x", 40)
	var last string
	for i := 0; i < 300; i++ {
		if err := s.cases.AppendEdit(ctx, "blog", "r3", summary); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		got := s.get(openCase[0]).Edits
		if !strings.HasPrefix(got, last) {
			t.Fatalf("append %d rewrote the edits", i)
		}
		last = got
	}
	if n := len([]rune(last)); n > knowledge.MaxCaseEdits || n < knowledge.MaxCaseEdits-200 {
		t.Fatalf("edits hold %d characters, want just under %d", n, knowledge.MaxCaseEdits)
	}
	if !strings.HasSuffix(last, "\n[cut]\n") || strings.Count(last, "[cut]") != 1 {
		t.Fatalf("edits end %q, want one [cut] line at the end", last[len(last)-120:])
	}
	if err := s.cases.AppendEdit(ctx, "blog", "r3", "short"); err != nil {
		t.Fatal(err)
	}
	if got := s.get(openCase[0]).Edits; got != last {
		t.Fatal("a cut case was appended to")
	}
	if err := s.cases.AppendEdit(ctx, "blog", "r3", " \n "); caseCode(err) != refusal.Invalid {
		t.Fatalf("an empty summary: err = %v, want EInvalid", err)
	}
}

func TestDiagnosisIsWrittenOnce(t *testing.T) {
	s := openCaseStore(t)
	ctx := context.Background()
	opened, _ := s.build(failedBuild("blog", "r1", problem("vet", "a.go:1: unreachable code")))
	id := opened[0]
	if err := s.cases.Diagnose(ctx, id, ""); caseCode(err) != refusal.Invalid {
		t.Fatalf("an empty diagnosis: err = %v, want EInvalid", err)
	}
	if err := s.cases.Diagnose(ctx, id, "the handler returned early"); err != nil {
		t.Fatal(err)
	}
	err := s.cases.Diagnose(ctx, id, "another story")
	if caseCode(err) != refusal.Conflict {
		t.Fatalf("a second diagnosis: err = %v, want EConflict", err)
	}
	if got := s.get(id).Diagnosis; got != "the handler returned early" {
		t.Fatalf("diagnosis %q", got)
	}
	if err := s.cases.Diagnose(ctx, id+100, "x"); caseCode(err) != refusal.NotFound {
		t.Fatalf("a missing case: err = %v, want ENotFound", err)
	}
}

func TestDistillBookkeepingStaysWritable(t *testing.T) {
	s := openCaseStore(t)
	ctx := context.Background()
	first, _ := s.build(failedBuild("blog", "r1", problem("compile", "a.go:1: missing return")))
	open, _ := s.build(failedBuild("blog", "r2", problem("vet", "a.go:1: unreachable code")))
	queued, err := s.cases.QueueResolved(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(queued) != 1 || queued[0].ID != first[0] || queued[0].DistillState != knowledge.DistillQueued {
		t.Fatalf("queued %+v, want the resolved case %d", queued, first[0])
	}
	if again, err := s.cases.QueueResolved(ctx); err != nil || len(again) != 0 {
		t.Fatalf("queued again %+v, %v; want none", again, err)
	}
	if err := s.cases.Diagnose(ctx, first[0], "the build was right"); err != nil {
		t.Fatal(err)
	}
	for tries, state := range []string{knowledge.DistillAsked, knowledge.DistillQueued, knowledge.DistillAsked, knowledge.DistillFailed} {
		if err := s.cases.MarkDistill(ctx, first[0], state, tries+1); err != nil {
			t.Fatalf("mark %s: %v", state, err)
		}
		if c := s.get(first[0]); c.DistillState != state || c.DistillTries != tries+1 {
			t.Fatalf("after marking %s: %s, %d tries", state, c.DistillState, c.DistillTries)
		}
	}
	if err := s.cases.MarkDistill(ctx, first[0], knowledge.DistillDone, 5); caseCode(err) != refusal.Conflict {
		t.Fatalf("a failed distillation marked done: err = %v, want EConflict", err)
	}
	if err := s.cases.MarkDistill(ctx, first[0], "pondering", 1); caseCode(err) != refusal.Invalid {
		t.Fatalf("an unknown state: err = %v, want EInvalid", err)
	}
	if err := s.cases.MarkDistill(ctx, first[0], knowledge.DistillDone, -1); caseCode(err) != refusal.Invalid {
		t.Fatalf("negative tries: err = %v, want EInvalid", err)
	}
	if err := s.cases.MarkDistill(ctx, open[0]+100, knowledge.DistillDone, 1); caseCode(err) != refusal.NotFound {
		t.Fatalf("a missing case: err = %v, want ENotFound", err)
	}
	if c := s.get(open[0]); c.DistillState != "" {
		t.Fatalf("an open case was queued: %+v", c)
	}
}

func TestListCases(t *testing.T) {
	s := openCaseStore(t)
	resolved, _ := s.build(failedBuild("blog", "r1", problem("compile", "a.go:1: missing return")))
	s.build(passedBuild("blog", "r2"))
	blogOpen, _ := s.build(failedBuild("blog", "r3", problem("vet", "a.go:1: unreachable code")))
	shopOpen, _ := s.build(failedBuild("shop", "r3", problem("vet", "a.go:1: unreachable code")))

	ids := func(cs []knowledge.Case) []int64 {
		var out []int64
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		q    knowledge.CaseQuery
		want []int64
	}{
		{"every case, newest first", knowledge.CaseQuery{}, []int64{shopOpen[0], blogOpen[0], resolved[0]}},
		{"one application", knowledge.CaseQuery{AppID: "blog"}, []int64{blogOpen[0], resolved[0]}},
		{"open", knowledge.CaseQuery{Open: new(true)}, []int64{shopOpen[0], blogOpen[0]}},
		{"resolved", knowledge.CaseQuery{AppID: "blog", Open: new(false)}, []int64{resolved[0]}},
		{"limited", knowledge.CaseQuery{Limit: 1}, []int64{shopOpen[0]}},
		{"another application", knowledge.CaseQuery{AppID: "none"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ids(s.list(tc.q)); !slices.Equal(got, tc.want) {
				t.Fatalf("ids %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := s.cases.Get(context.Background(), 999); caseCode(err) != refusal.NotFound {
		t.Fatalf("a missing case: err = %v, want ENotFound", err)
	}
}

// allowedDistillMoves is the table of a case's distillation, written out
// again here so the test does not read the code's own; "" is a case never
// queued.
var allowedDistillMoves = map[[2]string]bool{
	{"", knowledge.DistillQueued}:                     true,
	{"", knowledge.DistillDone}:                       true,
	{knowledge.DistillQueued, knowledge.DistillAsked}: true,
	{knowledge.DistillQueued, knowledge.DistillDone}:  true,
	{knowledge.DistillAsked, knowledge.DistillAsked}:  true,
	{knowledge.DistillAsked, knowledge.DistillQueued}: true,
	{knowledge.DistillAsked, knowledge.DistillFailed}: true,
	{knowledge.DistillAsked, knowledge.DistillDone}:   true,
}

func TestMarkDistillEveryPair(t *testing.T) {
	ctx := context.Background()
	pathTo := map[string][]string{
		"":                      {},
		knowledge.DistillQueued: {knowledge.DistillQueued},
		knowledge.DistillAsked:  {knowledge.DistillQueued, knowledge.DistillAsked},
		knowledge.DistillFailed: {knowledge.DistillQueued, knowledge.DistillAsked, knowledge.DistillFailed},
		knowledge.DistillDone:   {knowledge.DistillDone},
	}
	for from, path := range pathTo {
		for _, to := range []string{knowledge.DistillQueued, knowledge.DistillAsked, knowledge.DistillFailed, knowledge.DistillDone} {
			t.Run(fmt.Sprintf("%q to %s", from, to), func(t *testing.T) {
				s := openCaseStore(t)
				id, _ := s.build(failedBuild("blog", "r1", problem("compile", "a.go:1: missing return")))
				s.build(passedBuild("blog", "r2"))
				for i, step := range path {
					if err := s.cases.MarkDistill(ctx, id[0], step, i+1); err != nil {
						t.Fatalf("on the way to %q, %s: %v", from, step, err)
					}
				}
				err := s.cases.MarkDistill(ctx, id[0], to, 9)
				c := s.get(id[0])
				if allowedDistillMoves[[2]string{from, to}] {
					if err != nil || c.DistillState != to || c.DistillTries != 9 {
						t.Fatalf("err = %v, state %q, %d tries; want %s, 9", err, c.DistillState, c.DistillTries, to)
					}
					return
				}
				if caseCode(err) != refusal.Conflict || c.DistillState != from {
					t.Fatalf("err = %v, state %q; want EConflict and %q", err, c.DistillState, from)
				}
			})
		}
	}
}
