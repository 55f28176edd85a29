package knowledge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"autoapp/intent/refusal"
	"autoapp/knowledge"
)

// aRun is one finished run of the replay whose manifest is hash.
func aRun(hash, arm string, n int, passed bool) knowledge.ReplayRun {
	return knowledge.ReplayRun{Manifest: hash, OfCaseID: 7, CaseID: 7, LessonID: 3, Arm: arm, N: n,
		RunID: "replay-7-" + arm, Passed: passed, Judgement: "The build ran stage check.", Ended: "answered"}
}

func TestAReplaysRunsAreKeptUnderItsManifest(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	replays := knowledge.NewReplays(e.store.DB(), e.clock.Now)
	hash, err := replays.KeepManifest(ctx, `{"case": {"id": 7}}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []knowledge.ReplayRun{aRun(hash, knowledge.ArmWith, 1, true), aRun(hash, knowledge.ArmWithout, 1, false)} {
		if _, err := replays.Record(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := replays.Runs(ctx, hash)
	if err != nil || len(runs) != 2 || runs[0].Arm != knowledge.ArmWith || !runs[0].Passed || runs[1].Passed || runs[1].Manifest != hash {
		t.Fatalf("runs %+v %v", runs, err)
	}
	if got, ok, err := replays.LatestForLesson(ctx, 3); err != nil || !ok || got != hash {
		t.Fatalf("the latest replay of lesson 3: %q %v %v", got, ok, err)
	}
	if _, ok, err := replays.LatestForLesson(ctx, 4); err != nil || ok {
		t.Fatalf("lesson 4 was never replayed: %v %v", ok, err)
	}
	if n, err := replays.LastRun(ctx, 7, knowledge.ArmWithout); err != nil || n != 1 {
		t.Fatalf("the last without run of case 7: %d %v", n, err)
	}

	t.Run("a run names a kept manifest", func(t *testing.T) {
		_, err := replays.Record(ctx, aRun("0000", knowledge.ArmWith, 2, true))
		wantCode(t, err, refusal.NotFound)
		_, err = replays.Record(ctx, knowledge.ReplayRun{Manifest: hash, OfCaseID: 7, CaseID: 7, Arm: knowledge.ArmWith, N: 2, RunID: "r", Judgement: "x"})
		wantCode(t, err, refusal.Invalid)
	})

	t.Run("runs are never changed or deleted", func(t *testing.T) {
		for _, c := range []struct{ statement, refusal string }{
			{`UPDATE replays SET passed = 1`, "a replay's runs are never changed"},
			{`DELETE FROM replays`, "a replay's runs are never deleted"},
		} {
			if _, err := e.store.DB().Write.Exec(c.statement); err == nil || !strings.Contains(err.Error(), c.refusal) {
				t.Errorf("%s: err = %v, want the trigger's refusal %q", c.statement, err, c.refusal)
			}
		}
		if n := count(t, e.store, `SELECT count(*) FROM replays WHERE passed = 0`); n != 1 {
			t.Errorf("a run changed: %d failed runs, want 1", n)
		}
	})

	t.Run("retention keeps a manifest a run names", func(t *testing.T) {
		orphan, err := replays.KeepManifest(ctx, `{"case": {"id": 8}}`)
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Set(e.clock.Now().Add(knowledge.RetainFor + 24*time.Hour))
		if _, err := e.store.Retain(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := replays.Manifest(ctx, hash); err != nil {
			t.Errorf("the manifest runs name: %v", err)
		}
		if _, err := replays.Manifest(ctx, orphan); err == nil {
			t.Error("a manifest no run names outlived retention")
		}
	})
}
