package knowledge_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"autoapp/knowledge"
	"autoapp/knowledge/origin"
)

// lockedBuffer is an io.Writer the handler's goroutine and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestHandlerRecordsLevelsAndAttrsFromTheMinimumUp(t *testing.T) {
	e := mustOpen(t)
	var next lockedBuffer
	log := slog.New(e.store.Handler(slog.LevelInfo, slog.NewTextHandler(&next, &slog.HandlerOptions{Level: slog.LevelDebug})))
	id := origin.Identity{RunID: "run-9", CallID: "call-1", AppID: "notes", Revision: "no-git"}
	ctx := origin.WithIdentity(context.Background(), id)

	log.DebugContext(ctx, "too quiet to keep", "n", 1)
	log.InfoContext(ctx, "preview started", "port", 4312, "took", 1500*time.Millisecond)
	log.With("component", "ai").WithGroup("turn").Warn("a tool failed", "tool", "source_edit", "err", errors.New("no such file"))
	log.Error("provider", slog.Group("request", "method", "POST", "api_key", "sk-do-not-keep"))
	log.Log(ctx, slog.LevelWarn+1, "between warn and error")

	e.reopen(t)
	got, err := e.store.Log(context.Background(), knowledge.LogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("recorded %d events, want 4 (debug is below the minimum): %+v", len(got), got)
	}
	// Newest first.
	between, errorLine, warn, info := got[0], got[1], got[2], got[3]

	if info.Level != knowledge.LevelInfo || info.Message != "preview started" || info.Identity() != id {
		t.Errorf("info event = %+v", info)
	}
	if info.Attrs["port"] != float64(4312) || info.Attrs["took"] != "1.5s" {
		t.Errorf("info attrs = %v", info.Attrs)
	}
	if warn.Level != knowledge.LevelWarn || warn.Identity() != (origin.Identity{}) {
		t.Errorf("warn event = %+v: a record without identity keeps NULL", warn)
	}
	turn, _ := warn.Attrs["turn"].(map[string]any)
	if warn.Attrs["component"] != "ai" || turn["tool"] != "source_edit" || turn["err"] != "no such file" {
		t.Errorf("warn attrs = %v", warn.Attrs)
	}
	request, _ := errorLine.Attrs["request"].(map[string]any)
	if errorLine.Level != knowledge.LevelError || request["method"] != "POST" || request["api_key"] != "[redacted]" {
		t.Errorf("error event = %+v", errorLine)
	}
	if between.Level != knowledge.LevelWarn {
		t.Errorf("a level between warn and error is stored as %s, want warn", between.Level)
	}

	// next took every record its own level allows, debug included.
	for _, line := range []string{"too quiet to keep", "preview started", "a tool failed", "between warn and error"} {
		if !strings.Contains(next.String(), line) {
			t.Errorf("next did not get %q:\n%s", line, next.String())
		}
	}
}

func TestHandlerWithoutNextIsEnabledOnlyFromItsLevel(t *testing.T) {
	e := mustOpen(t)
	h := e.store.Handler(slog.LevelWarn, nil)
	ctx := context.Background()
	if h.Enabled(ctx, slog.LevelInfo) {
		t.Error("enabled at info with a minimum of warn and no next")
	}
	if !h.Enabled(ctx, slog.LevelWarn) {
		t.Error("not enabled at warn")
	}
}

func TestHandlerFlushesOnClose(t *testing.T) {
	e := mustOpen(t)
	log := slog.New(e.store.Handler(slog.LevelDebug, nil))
	const n = 2000
	for i := range n {
		log.Info("line", "i", i)
	}
	e.reopen(t)
	if got := count(t, e.store, `SELECT count(*) FROM events`); got != n {
		t.Errorf("%d events after Close, want %d", got, n)
	}
}

func TestHandlerDropsToStderrWhenItsBufferIsFull(t *testing.T) {
	var stderr lockedBuffer
	e := mustOpen(t, knowledge.Options{LogBuffer: 1, Stderr: &stderr})
	log := slog.New(e.store.Handler(slog.LevelInfo, nil))

	// Hold the store's one write connection so the writer cannot write:
	// logging must still return at once.
	hold, err := e.store.DB().Write.Begin()
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	for i := range n {
		log.Info(fmt.Sprintf("line %d", i))
	}
	if err := hold.Rollback(); err != nil {
		t.Fatal(err)
	}
	e.reopen(t)

	kept := count(t, e.store, `SELECT count(*) FROM events WHERE message LIKE 'line %'`)
	var dropped int
	if err := e.store.DB().Read.Get(&dropped, `SELECT coalesce(sum(json_extract(attrs, '$.dropped')), 0) FROM events
		WHERE level = 'warn' AND message LIKE '% log lines were not recorded: the log buffer was full'`); err != nil {
		t.Fatal(err)
	}
	if dropped == 0 || kept+dropped != n {
		t.Errorf("kept %d and counted %d dropped, want some dropped and %d in all", kept, dropped, n)
	}
	out := stderr.String()
	if !strings.Contains(out, "log lines were not recorded") {
		t.Errorf("stderr does not have the count of dropped lines:\n%s", out)
	}
	// Which lines found the buffer full depends on when the writer took
	// one off it; every line is either recorded or on stderr.
	var recorded []string
	if err := e.store.DB().Read.Select(&recorded, `SELECT message FROM events WHERE message LIKE 'line %'`); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		line := fmt.Sprintf("line %d", i)
		if !slices.Contains(recorded, line) && !strings.Contains(out, " "+line+" ") {
			t.Errorf("%s was neither recorded nor written to stderr", line)
		}
	}
}

func TestHandlerAfterCloseStillPassesToNext(t *testing.T) {
	e := mustOpen(t)
	var next lockedBuffer
	log := slog.New(e.store.Handler(slog.LevelInfo, slog.NewTextHandler(&next, nil)))
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	log.Info("after close")
	if !strings.Contains(next.String(), "after close") {
		t.Errorf("next did not get the record: %q", next.String())
	}
}
