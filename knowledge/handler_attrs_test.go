package knowledge_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"autoapp/knowledge"
)

func TestALogLineNamesItsRunByTheHostsAttributes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "knowledge.sqlite")
	st, err := knowledge.Open(path, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(st.Handler(slog.LevelInfo, nil))
	log.Info("a build ran", "run", "intent-1-0001-x-a1", "app", "site")
	ctx := knowledge.WithIdentity(context.Background(), knowledge.Identity{RunID: "from-the-envelope", AppID: "notes"})
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
