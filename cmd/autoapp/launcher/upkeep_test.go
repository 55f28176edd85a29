package launcher_test

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"autoapp/cmd/autoapp/launcher"
	"autoapp/knowledge"
	"autoapp/migrations"
)

// upkeepHistory is a data folder of tasks tasks with their runs and turns,
// and events events spread over the last 60 days (half older than
// retention keeps), whose links index an older version of the derivation
// wrote and which holds no rows: a start must rebuild it. It answers the
// rows the index holds when current.
func upkeepHistory(t testing.TB, root string, tasks, events int) []knowledge.Link {
	t.Helper()
	if err := seed(root, tasks, events, 60*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	db, err := migrations.Open(filepath.Join(root, "launcher", "knowledge.sqlite"), migrations.Knowledge)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := linkRows(t, db)
	if len(want) < tasks {
		t.Fatalf("the seeded index holds %d rows for %d tasks", len(want), tasks)
	}
	if _, err := db.Write.Exec(`DELETE FROM links`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Write.Exec(`UPDATE links_state SET version = ?`, knowledge.LinksVersion-1); err != nil {
		t.Fatal(err)
	}
	return want
}

// linkRows are the rows of the links index, without their ids.
func linkRows(t testing.TB, db *migrations.DB) []knowledge.Link {
	t.Helper()
	rows, err := knowledge.Links(context.Background(), db, knowledge.LinkQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		rows[i].ID = 0
	}
	return rows
}

// upkeepState is what the upkeep has done to a knowledge store: the
// version links_state names, the rows of the index, the events older than
// retention keeps and the newer ones.
type upkeepState struct {
	version    int
	links      int
	old, fresh int
}

func readUpkeep(t testing.TB, db *migrations.DB) upkeepState {
	t.Helper()
	var s upkeepState
	cutoff := time.Now().Add(-knowledge.RetainFor).UnixMilli()
	for _, q := range []struct {
		dest  *int
		query string
	}{
		{&s.version, `SELECT version FROM links_state`},
		{&s.links, `SELECT count(*) FROM links`},
		{&s.old, `SELECT count(*) FROM events WHERE at < ?`},
		// Those retention keeps: the seed's, newer than the cutoff (not
		// the server's own lines).
		{&s.fresh, `SELECT count(*) FROM events WHERE at >= ? AND message = 'preview started on its own port'`},
	} {
		var args []any
		if strings.Contains(q.query, "?") {
			args = append(args, cutoff)
		}
		if err := db.Read.Get(q.dest, q.query, args...); err != nil {
			t.Fatalf("%s: %v", q.query, err)
		}
	}
	return s
}

// waitUntil polls cond every 20 ms for up to a minute.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTheStartLeavesTheLinksIndexAndRetentionUntilItServes starts on a
// history whose links index must be rebuilt and whose old events must go:
// the start (New, Recover) does neither, the server answers, and then the
// index is rebuilt, the same rows a rebuild writes, and the old events
// deleted, the others kept.
func TestTheStartLeavesTheLinksIndexAndRetentionUntilItServes(t *testing.T) {
	root := t.TempDir()
	want := upkeepHistory(t, root, 300, 3000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := launcher.New(root, time.Now, nil, launcher.Options{Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	kdb := l.Knowledge.DB()
	before := readUpkeep(t, kdb)
	if before.version != knowledge.LinksVersion-1 || before.links != 0 || before.old == 0 {
		t.Fatalf("the start did the upkeep before serving: %+v", before)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := ln.Addr().String()
	served := make(chan error, 1)
	go func() { served <- l.Serve(ctx, ln, launcher.Site{Hosts: []string{host}}, nil) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	waitUntil(t, "/healthz", func() bool {
		resp, err := http.Get("http://" + host + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	waitUntil(t, "the upkeep", func() bool {
		s := readUpkeep(t, kdb)
		return s.version == knowledge.LinksVersion && s.old == 0
	})
	after := readUpkeep(t, kdb)
	if after.fresh != before.fresh {
		t.Errorf("retention kept %d of the %d events newer than its window", after.fresh, before.fresh)
	}
	if got := linkRows(t, kdb); !slices.Equal(got, want) {
		t.Errorf("the rebuilt index holds %d rows, a rebuild writes %d", len(got), len(want))
	}
}

// TestAServerKilledDuringItsUpkeepLosesNothing kills the real binary while
// it rebuilds a long history's links index and trims its events, then
// starts it again: after the kill the index is the one it had or the whole
// new one, and every event retention keeps is there; the next start
// finishes the upkeep.
func TestAServerKilledDuringItsUpkeepLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := realBinary(t)
	root := t.TempDir()
	want := upkeepHistory(t, root, 10_000, 20_000)
	path := filepath.Join(root, "launcher", "knowledge.sqlite")
	read := func() upkeepState {
		db, err := migrations.OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		return readUpkeep(t, db)
	}
	before := read()

	s, err := startServer(bin, root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stop() })
	// The rebuild of 10,000 tasks' links takes longer than this.
	time.Sleep(100 * time.Millisecond)
	if err := s.kill(); err != nil {
		t.Fatal(err)
	}
	killed := read()
	t.Logf("killed with the index at version %d (%d rows) and %d old events left", killed.version, killed.links, killed.old)
	switch {
	case killed.version == before.version && killed.links != 0:
		t.Errorf("the kill left %d rows of a rebuild that did not finish", killed.links)
	case killed.version == knowledge.LinksVersion && killed.links != len(want):
		t.Errorf("the rebuilt index holds %d rows, a rebuild writes %d", killed.links, len(want))
	}
	if killed.fresh != before.fresh {
		t.Errorf("after the kill %d of the %d events newer than retention's window are left", killed.fresh, before.fresh)
	}

	s, err = startServer(bin, root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stop() })
	waitUntil(t, "the upkeep after the restart", func() bool {
		u := read()
		return u.version == knowledge.LinksVersion && u.old == 0
	})
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	after := read()
	if after.fresh != before.fresh {
		t.Errorf("retention kept %d of the %d events newer than its window", after.fresh, before.fresh)
	}
	db, err := migrations.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := linkRows(t, db); !slices.Equal(got, want) {
		t.Errorf("the rebuilt index holds %d rows, a rebuild writes %d", len(got), len(want))
	}
}
