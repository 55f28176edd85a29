package knowledge_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"autoapp/knowledge"
	"autoapp/knowledge/origin"
)

func TestALogLineNamesItsRunByTheHostsAttributes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "knowledge.sqlite")
	st, err := knowledge.Open(path, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(st.Handler(slog.LevelInfo, nil))
	log.Info("a build ran", "run", "intent-1-0001-x-a1", "app", "site")
	ctx := origin.WithIdentity(context.Background(), origin.Identity{RunID: "from-the-envelope", AppID: "notes"})
	log.InfoContext(ctx, "the envelope wins", "run", "ignored", "app", "ignored")
	log.Info("no origin")
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = knowledge.Open(path, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	events, err := st.Log(context.Background(), knowledge.LogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]knowledge.Event{}
	for _, e := range events {
		got[e.Message] = e
	}
	if e := got["a build ran"]; e.RunID.String != "intent-1-0001-x-a1" || e.AppID.String != "site" {
		t.Errorf("from attributes: run %q app %q", e.RunID.String, e.AppID.String)
	}
	if e := got["the envelope wins"]; e.RunID.String != "from-the-envelope" || e.AppID.String != "notes" {
		t.Errorf("from the context: run %q app %q", e.RunID.String, e.AppID.String)
	}
	if e := got["no origin"]; e.RunID.Valid || e.AppID.Valid {
		t.Errorf("a line with no origin has run %v app %v; want NULL", e.RunID, e.AppID)
	}
}

// TestARowTakesThePositionAndCallItWasWrittenUnder: the rows of a turn
// take the release and revision its position holds when each is written,
// the call the envelope set, and the turn's run and application beside it.
func TestARowTakesThePositionAndCallItWasWrittenUnder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "knowledge.sqlite")
	st, err := knowledge.Open(path, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(st.Handler(slog.LevelInfo, nil))
	pos := origin.NewPosition("r1", "rev-1")
	turn := origin.WithPosition(origin.WithIdentity(context.Background(), origin.Identity{RunID: "run-1", CallID: "run-1:turn", AppID: "site"}), pos)
	log.InfoContext(turn, "the turn starts")
	call := origin.WithCall(turn, "run-1:1")
	pos.Committed("rev-2")
	log.InfoContext(call, "an edit landed")
	pos.Released("r2")
	log.InfoContext(origin.WithCall(call, "run-1:1.build"), "a build passed")
	if err := st.Append(turn, knowledge.Event{Level: knowledge.LevelInfo, Message: "appended"}); err != nil {
		t.Fatal(err)
	}
	log.Info("no origin")
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = knowledge.Open(path, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	events, err := st.Log(context.Background(), knowledge.LogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]origin.Identity{}
	for _, e := range events {
		got[e.Message] = e.Identity()
	}
	for message, want := range map[string]origin.Identity{
		"the turn starts": {RunID: "run-1", CallID: "run-1:turn", AppID: "site", ReleaseID: "r1", Revision: "rev-1"},
		"an edit landed":  {RunID: "run-1", CallID: "run-1:1", AppID: "site", ReleaseID: "r1", Revision: "rev-2"},
		"a build passed":  {RunID: "run-1", CallID: "run-1:1.build", AppID: "site", ReleaseID: "r2", Revision: "rev-2"},
		"appended":        {RunID: "run-1", CallID: "run-1:turn", AppID: "site", ReleaseID: "r2", Revision: "rev-2"},
		"no origin":       {},
	} {
		if got[message] != want {
			t.Errorf("%q: %+v, want %+v", message, got[message], want)
		}
	}
}
