package replay_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"autoapp/executor/ai/scripted"
	"autoapp/executor/replay"
	"autoapp/intent/refusal"
	"autoapp/knowledge"
)

// gone is a revision no workspace holds.
const gone = "0123456789abcdef0123456789abcdef01234567"

// chats counts the chat completions the model was asked for.
func chats(m *scripted.Server) int {
	n := 0
	for _, r := range m.Requests() {
		if strings.HasSuffix(r.Path, "/chat/completions") {
			n++
		}
	}
	return n
}

// A replay that cannot be what the person asked is refused with its
// sentence before a turn is spent: no manifest, no row, no run folder,
// and the model asked nothing.
func TestAReplayIsRefusedBeforeAnythingRunsOrIsWritten(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// bare leaves the Settings model unchosen.
		bare bool
		// setup answers the case to replay and the options.
		setup func(t *testing.T, r *root) (int64, replay.Options)
		// want is the refusal's sentence, or its start when it ends with
		// what another package says.
		want   func(caseID int64, o replay.Options) string
		prefix bool
	}{
		{name: "eleven runs an arm", setup: func(t *testing.T, r *root) (int64, replay.Options) {
			c, _ := r.pageCase(t)
			return c, replay.Options{Runs: 11}
		}, want: func(int64, replay.Options) string { return "Give between 1 and 10 runs an arm." }},
		{name: "a case that is not there", setup: func(t *testing.T, r *root) (int64, replay.Options) {
			return 99, replay.Options{}
		}, want: func(int64, replay.Options) string { return "There is no case 99." }},
		{name: "a lesson that is not there", setup: func(t *testing.T, r *root) (int64, replay.Options) {
			c, _ := r.pageCase(t)
			return c, replay.Options{With: 999}
		}, want: func(int64, replay.Options) string { return "There is no lesson 999." }},
		{name: "a retired lesson", setup: func(t *testing.T, r *root) (int64, replay.Options) {
			c, _ := r.pageCase(t)
			ctx := context.Background()
			id, err := r.l.Lessons.Write(ctx, "An old habit, given up.", "Ada", knowledge.Applies{})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.l.Lessons.Retire(ctx, id, "Ada"); err != nil {
				t.Fatal(err)
			}
			return c, replay.Options{With: id}
		}, want: func(_ int64, o replay.Options) string {
			return fmt.Sprintf("Lesson %d is retired; only a provisional or confirmed lesson can be replayed.", o.With)
		}},
		{name: "a case no builder turn met", setup: func(t *testing.T, r *root) (int64, replay.Options) {
			return r.buildCase(t, "chat-notes-1", r.head(t), "scripted:builder", "check", emptyPageFailure), replay.Options{}
		}, want: func(c int64, _ replay.Options) string {
			return fmt.Sprintf("Case %d was met by chat-notes-1, not by a task's builder turn; only a case a builder turn met can be replayed.", c)
		}},
		{name: "a revision the workspace no longer holds", setup: func(t *testing.T, r *root) (int64, replay.Options) {
			return r.buildCase(t, taskRun, gone, "scripted:builder", "check", emptyPageFailure), replay.Options{}
		}, want: func(c int64, _ replay.Options) string {
			return fmt.Sprintf("Case %d was met at revision 0123456789ab, which the workspace of notes no longer holds; it cannot be replayed.", c)
		}},
		{name: "a model no provider offers", setup: func(t *testing.T, r *root) (int64, replay.Options) {
			return r.buildCase(t, taskRun, r.head(t), "gone:m", "check", emptyPageFailure), replay.Options{}
		}, want: func(c int64, _ replay.Options) string {
			return fmt.Sprintf("The model case %d ran on, gone:m, cannot be used: ", c)
		}, prefix: true},
		{name: "no model at all", bare: true, setup: func(t *testing.T, r *root) (int64, replay.Options) {
			return r.buildCase(t, taskRun, r.head(t), "", "check", emptyPageFailure), replay.Options{}
		}, want: func(c int64, _ replay.Options) string {
			return fmt.Sprintf("Case %d records no model and none is chosen in Settings: choose the Settings model first.", c)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRoot
			if tt.bare {
				r = bareRoot
			}
			rt := r(t)
			caseID, o := tt.setup(t, rt)
			blobs, rows := rt.count(t, "blobs"), rt.count(t, "replays")
			heard := 0
			res, err := rt.l.Replays.Replay(context.Background(), caseID, o, func(replay.Progress) { heard++ })
			re, ok := refusal.As(err)
			want := tt.want(caseID, o)
			if !ok || (tt.prefix && !strings.HasPrefix(re.Message, want)) || (!tt.prefix && re.Message != want) {
				t.Fatalf("the replay answered %v, want the refusal %q", err, want)
			}
			if res.ManifestHash != "" || heard != 0 {
				t.Fatalf("a refused replay answered the manifest %q and %d progress lines", res.ManifestHash, heard)
			}
			if b, n := rt.count(t, "blobs"), rt.count(t, "replays"); b != blobs || n != rows {
				t.Fatalf("a refused replay wrote %d blobs and %d rows", b-blobs, n-rows)
			}
			if _, err := os.Stat(filepath.Join(rt.dir, "replay")); !os.IsNotExist(err) {
				t.Fatalf("a refused replay made its folder (%v)", err)
			}
			if n := chats(rt.model); n != 0 {
				t.Fatalf("a refused replay asked the model %d times", n)
			}
		})
	}
}

// A case that taught no lesson is replayed without one only: the verdict
// says there was nothing under test, and every run is named as such.
func TestACaseThatTaughtNoLessonRunsOnlyTheWithoutArm(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	caseID := r.buildCase(t, taskRun, r.head(t), "scripted:builder", "check", emptyPageFailure)
	r.model.On(scripted.Any(), runs(2, emptyPage)...)

	var heard []replay.Progress
	res, err := r.l.Replays.Replay(context.Background(), caseID, replay.Options{Runs: 2}, func(p replay.Progress) { heard = append(heard, p) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Manifest.Lesson != nil {
		t.Fatalf("the manifest names lesson %+v, though the case taught none", res.Manifest.Lesson)
	}
	if want := []replay.Arm{{Arm: knowledge.ArmWith}, {Arm: knowledge.ArmWithout, Runs: 2}}; !slices.Equal(res.Arms, want) {
		t.Fatalf("arms %+v, want %+v", res.Arms, want)
	}
	if want := (replay.Verdict{Outcome: replay.Untested, Sentence: "No lesson was under test: the case taught none, so only the without arm ran."}); res.Verdict != want {
		t.Fatalf("verdict %+v", res.Verdict)
	}
	c := strconv.FormatInt(caseID, 10)
	var ids []string
	for _, run := range res.Runs {
		ids = append(ids, run.RunID)
		if run.LessonID != 0 || run.Passed || !strings.Contains(run.Judgement, "failed again with the case's failure: "+emptyPageFailure) {
			t.Errorf("run %s: lesson %d, passed %v, judged %q", run.RunID, run.LessonID, run.Passed, run.Judgement)
		}
	}
	if want := []string{"replay-" + c + "-without-1", "replay-" + c + "-without-2"}; !slices.Equal(ids, want) {
		t.Fatalf("runs %v, want %v", ids, want)
	}
	if len(heard) != 4 || heard[0].Total != 2 || heard[3].Index != 2 || !heard[3].Done {
		t.Fatalf("progress %+v", heard)
	}
	if rows := r.replayRows(t, res.ManifestHash); len(rows) != 2 {
		t.Fatalf("the store keeps %d rows of the replay, want 2", len(rows))
	}
	for _, req := range r.model.Requests() {
		if strings.Contains(string(req.Body), pageLesson) {
			t.Fatal("a run was given a lesson")
		}
	}
}

// --with tests the lesson given, not the case's own: its run is given
// that lesson's text and no other, the manifest and every row name it,
// and the verdict says when it did not help.
func TestAnotherLessonIsTestedOnTheCaseAndTheVerdictSaysItDidNotHelp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRoot(t)
	caseID, own := r.pageCase(t)
	const otherText = "Start the page again from nothing before you change it."
	other, err := r.l.Lessons.Write(ctx, otherText, "Ada", knowledge.Applies{})
	if err != nil {
		t.Fatal(err)
	}
	r.model.On(scripted.Mentions(otherText), turn(emptyPage)...)
	r.model.On(scripted.Any(), turn(wholePage)...)

	res, err := r.l.Replays.Replay(ctx, caseID, replay.Options{With: other, Runs: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l := res.Manifest.Lesson; l == nil || l.ID != other || l.Text != otherText || l.Status != knowledge.LessonConfirmed {
		t.Fatalf("the manifest's lesson is %+v, want lesson %d as written", l, other)
	}
	if want := "The lesson did not help: with it 0 of 1 runs passed, without it 1 of 1."; res.Verdict.Outcome != replay.Worse || res.Verdict.Sentence != want {
		t.Fatalf("verdict %+v, want %q", res.Verdict, want)
	}
	for _, row := range r.replayRows(t, res.ManifestHash) {
		if row.LessonID != other || row.OfCaseID != caseID {
			t.Errorf("row %s names lesson %d of case %d", row.RunID, row.LessonID, row.OfCaseID)
		}
	}
	for _, req := range r.model.Requests() {
		run := req.Header.Get(scripted.RunHeader)
		body := string(req.Body)
		if strings.Contains(body, pageLesson) {
			t.Errorf("%s was given the case's own lesson", run)
		}
		if given := strings.Contains(body, otherText); given != strings.Contains(run, "-with-") {
			t.Errorf("%s was given the lesson under test: %v", run, given)
		}
	}
	if latest, ok, err := r.l.Replays.Latest(ctx, other); err != nil || !ok || latest.ManifestHash != res.ManifestHash {
		t.Fatalf("the latest replay of lesson %d: %v %v", other, ok, err)
	}
	if _, ok, err := r.l.Replays.Latest(ctx, own); err != nil || ok {
		t.Fatalf("the case's own lesson %d has a replay (%v), though it was not under test", own, err)
	}
}

// When both arms end alike the verdict is no difference, and it says
// whether the failure came back at all.
func TestTheVerdictSaysNoDifferenceWhenBothArmsEndAlike(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		change scripted.Reply
		want   string
	}{
		{"both keep the page whole", wholePage, "No difference: with it 1 of 1 runs passed, without it 1 of 1; the failure did not come back without the lesson either."},
		{"both empty it", emptyPage, "No difference: with it 0 of 1 runs passed, without it 0 of 1."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRoot(t)
			caseID, _ := r.pageCase(t)
			r.model.On(scripted.Any(), runs(2, tt.change)...)
			res, err := r.l.Replays.Replay(context.Background(), caseID, replay.Options{Runs: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict.Outcome != replay.NoDifference || res.Verdict.Sentence != tt.want {
				t.Fatalf("verdict %+v, want %q", res.Verdict, tt.want)
			}
		})
	}
}

// A model that stops answering ends the replay with a sentence naming the
// run; the run that finished keeps its row, and knowledge show's latest
// replay says it stopped with an arm empty.
func TestAModelThatStopsAnsweringEndsTheReplayKeepingWhatFinished(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRoot(t)
	caseID, lesson := r.pageCase(t)
	r.model.On(scripted.Mentions(pageLesson), turn(wholePage)...)
	r.model.Always(scripted.Any(), scripted.Reply{Fault: scripted.Status401})

	res, err := r.l.Replays.Replay(ctx, caseID, replay.Options{Runs: 2}, nil)
	re, ok := refusal.As(err)
	run := fmt.Sprintf("replay-%d-without-1", caseID)
	if !ok || !strings.HasPrefix(re.Message, "Run "+run+" of the replay got no answer from the model: ") ||
		!strings.HasSuffix(re.Message, " The replay stopped; the runs that finished are kept.") {
		t.Fatalf("the replay answered %v, want the refusal naming %s", err, run)
	}
	if len(res.Runs) != 1 || res.Runs[0].Arm != knowledge.ArmWith || !res.Runs[0].Passed {
		t.Fatalf("the runs that finished: %+v", res.Runs)
	}
	if rows := r.replayRows(t, res.ManifestHash); len(rows) != 1 || rows[0].RunID != fmt.Sprintf("replay-%d-with-1", caseID) {
		t.Fatalf("the store keeps %+v, want the with run's row only", rows)
	}
	latest, ok, err := r.l.Replays.Latest(ctx, lesson)
	if err != nil || !ok || !latest.Stopped || len(latest.Runs) != 1 {
		t.Fatalf("the latest replay: %+v %v %v", latest, ok, err)
	}
	if want := "An arm has no finished run (with it 1 of 1 runs passed, without it 0 of 0), so there is nothing to compare."; latest.Verdict.Outcome != replay.Untested || latest.Verdict.Sentence != want {
		t.Fatalf("the latest replay's verdict %+v, want %q", latest.Verdict, want)
	}
}

// Every run is a fresh clone at the revision the failure was met at, even
// when the workspace has moved on: its files are that revision's, which
// the manifest's hashes name (as git itself reads them), and what it
// commits stays in the clone. The application's workspace and releases
// are left as they were; a run that changed nothing says so.
func TestEachRunStartsFromTheCasesRevisionAndLeavesTheApplicationAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRoot(t)
	pinned, later := "example.com/tool v1.0.0 h1:pinned=\n", "example.com/tool v1.1.0 h1:later=\n"
	at := r.commit(t, "Pin the tool", map[string]string{"go.sum": pinned})
	caseID, _ := r.pageCase(t)
	moved := r.commit(t, "Later work", map[string]string{"go.sum": later, "site/about.html": "<h1>About</h1>\n"})
	commits := git(t, r.ws, "rev-list", "--all")
	releases, err := r.l.Apps.Releases(ctx, "notes", 100)
	if err != nil {
		t.Fatal(err)
	}
	r.model.On(scripted.Mentions(pageLesson), turn(wholePage)...)
	r.model.On(scripted.Any(), done)

	res, err := r.l.Replays.Replay(ctx, caseID, replay.Options{Runs: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("the manifest names the case's revision and its files", func(t *testing.T) {
		m := res.Manifest.Case
		if m.Revision != at {
			t.Fatalf("the manifest's revision is %s, want %s", m.Revision, at)
		}
		for _, name := range []string{"go.sum", "autoapp.json"} {
			sum := sha256.Sum256([]byte(git(t, r.ws, "cat-file", "blob", at+":"+name)))
			if got, want := m.Files[name], hex.EncodeToString(sum[:]); got != want {
				t.Errorf("the manifest says %s is %s, git says %s at the case's revision", name, got, want)
			}
		}
	})

	t.Run("each run is a clone at that revision", func(t *testing.T) {
		for _, run := range res.Runs {
			clone := filepath.Join(r.dir, "replay", strconv.FormatInt(caseID, 10), run.Arm, strconv.Itoa(run.N), "workspace")
			if err := exec.Command("git", "-C", clone, "merge-base", "--is-ancestor", at, "HEAD").Run(); err != nil {
				t.Errorf("%s: the case's revision is not under the clone's HEAD: %v", run.RunID, err)
			}
			if err := exec.Command("git", "-C", clone, "merge-base", "--is-ancestor", moved, "HEAD").Run(); err == nil {
				t.Errorf("%s: the clone holds the workspace's later work", run.RunID)
			}
			if b, err := os.ReadFile(filepath.Join(clone, "go.sum")); err != nil || string(b) != pinned {
				t.Errorf("%s: go.sum is %q (%v), want the case's revision's", run.RunID, b, err)
			}
			if _, err := os.Stat(filepath.Join(clone, "site", "about.html")); !os.IsNotExist(err) {
				t.Errorf("%s: the clone has the later page (%v)", run.RunID, err)
			}
			own := strings.Fields(git(t, clone, "rev-list", at+"..HEAD"))
			if landed := run.Arm == knowledge.ArmWith; (len(own) > 0) != landed {
				t.Errorf("%s committed %d revisions in its clone", run.RunID, len(own))
			}
		}
	})

	t.Run("a run that changed nothing says so", func(t *testing.T) {
		without := res.Runs[1]
		if without.Arm != knowledge.ArmWithout || !without.Passed || !strings.HasSuffix(without.Judgement, " The run landed no edit.") {
			t.Fatalf("the run that only answered is %+v", without)
		}
		if with := res.Runs[0]; strings.Contains(with.Judgement, "landed no edit") {
			t.Fatalf("the run that changed the page is judged %q", with.Judgement)
		}
	})

	t.Run("the application is left as it was", func(t *testing.T) {
		if head := r.head(t); head != moved {
			t.Fatalf("the workspace is at %s, was %s", head, moved)
		}
		if status := git(t, r.ws, "status", "--porcelain"); status != "" {
			t.Fatalf("the workspace has changes:\n%s", status)
		}
		if now := git(t, r.ws, "rev-list", "--all"); now != commits {
			t.Fatalf("the workspace's revisions changed:\n%s\nwere\n%s", now, commits)
		}
		after, err := r.l.Apps.Releases(ctx, "notes", 100)
		if err != nil || len(after) != len(releases) {
			t.Fatalf("notes has %d releases, had %d (%v)", len(after), len(releases), err)
		}
	})
}

// A case of the regression set that cannot be replayed is skipped with
// the reason, and the replay goes on.
func TestARegressionCaseThatCannotBeReplayedIsSkippedWithWhy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRoot(t)
	caseID, _ := r.pageCase(t)
	// An older case of notes, resolved, whose lesson a person confirmed,
	// met at a revision the workspace no longer holds.
	old := r.buildCase(t, taskRun, gone, "scripted:builder", "lint", "index.html:3: a heading is missing")
	if _, _, err := r.l.Cases.Build(ctx, knowledge.BuildObserved{AppID: "notes", RunID: taskRun, StagesRun: []string{"lint"}, OK: true}); err != nil {
		t.Fatal(err)
	}
	oldLesson, err := r.l.Lessons.Add(ctx, knowledge.Lesson{CaseID: old, Text: "Give every page one heading."})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.l.Lessons.Confirm(ctx, oldLesson, "Bea"); err != nil {
		t.Fatal(err)
	}
	r.model.On(scripted.Mentions(pageLesson), turn(wholePage)...)
	r.model.On(scripted.Any(), turn(emptyPage)...)

	res, err := r.l.Replays.Replay(ctx, caseID, replay.Options{Runs: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []replay.SkippedCase{{ID: old, Why: fmt.Sprintf("Case %d was met at revision 0123456789ab, which the workspace of notes no longer holds; it cannot be replayed.", old)}}
	if !slices.Equal(res.Manifest.Skipped, want) || len(res.Manifest.Regression) != 0 || len(res.Regression) != 0 {
		t.Fatalf("skipped %+v, regression %+v; want %+v", res.Manifest.Skipped, res.Manifest.Regression, want)
	}
	if res.Verdict.Outcome != replay.Helped || len(res.Runs) != 2 {
		t.Fatalf("the arms ran %+v, verdict %+v", res.Runs, res.Verdict)
	}
}

// The Knowledge page offers Replay this lesson only for a lesson it can
// replay, and says why not for the others; starting one anyway is refused
// with the same sentence.
func TestThePageSaysWhyALessonCannotBeReplayed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRoot(t)
	caseID, replayable := r.pageCase(t)
	retired, err := r.l.Lessons.Add(ctx, knowledge.Lesson{CaseID: caseID, Text: "Check the page before the build."})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.l.Lessons.Retire(ctx, retired, "Ada"); err != nil {
		t.Fatal(err)
	}
	method, err := r.l.Lessons.Add(ctx, knowledge.Lesson{CaseID: caseID, MethodUnclear: true, Text: "It was unclear when the check stage runs."})
	if err != nil {
		t.Fatal(err)
	}
	byHand, err := r.l.Lessons.Write(ctx, "Keep the greeting in the first paragraph.", "Bea", knowledge.Applies{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		lesson int64
		cannot string
	}{
		{"a note on the way of working", method, "This is a note on the way of working, never served to a turn, so there is nothing to replay."},
		{"a retired lesson", retired, fmt.Sprintf("Lesson %d is retired; only a provisional or confirmed lesson can be replayed.", retired)},
		{"a lesson written by hand", byHand, fmt.Sprintf("Lesson %d was written by hand and comes from no case: replay it on a case it is for with autoapp knowledge replay <caseId> --with %d.", byHand, byHand)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := r.l.LessonReplays.Lesson(ctx, tt.lesson)
			if err != nil {
				t.Fatal(err)
			}
			if p.Plan.Cannot != tt.cannot {
				t.Fatalf("the page says %q, want %q", p.Plan.Cannot, tt.cannot)
			}
			if err := r.l.LessonReplays.Start(ctx, tt.lesson); err == nil || err.Error() != tt.cannot {
				t.Fatalf("Replay this lesson answered %v, want %q", err, tt.cannot)
			}
		})
	}
	t.Run("a lesson of a case", func(t *testing.T) {
		p, err := r.l.LessonReplays.Lesson(ctx, replayable)
		if err != nil {
			t.Fatal(err)
		}
		if want := (replay.Plan{CaseID: caseID, Runs: replay.DefaultRuns}); p.Plan != want || p.Plan.Turns() != 6 || p.Latest != nil || p.Going != nil {
			t.Fatalf("the page's plan %+v (latest %v, going %v), want %+v", p.Plan, p.Latest, p.Going, want)
		}
	})
	if n := chats(r.model); n != 0 {
		t.Fatalf("the page asked the model %d times", n)
	}
}
