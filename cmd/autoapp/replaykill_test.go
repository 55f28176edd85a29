package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"autoapp/executor/ai/scripted"
	"autoapp/migrations"
)

// TestAReplayKilledHalfWayKeepsTheRunsThatFinished runs the real binary's
// knowledge replay, lets the run with the lesson finish, holds the next
// one at its first model call and kills the process there (SIGKILL, no
// chance to clean up): the finished run's row is in the store, the one
// cut off has none, half or whole, and the next replay starts cleanly.
func TestAReplayKilledHalfWayKeepsTheRunsThatFinished(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	root, model, caseID, _, _ := replayRoot(t)
	held := scripted.NewGate(t)
	page := func(content string) scripted.Reply {
		return scripted.Reply{ToolCalls: []scripted.Call{{Name: "source_change",
			Args: `{"files":[{"path":"site/index.html","action":"overwrite","content":` + strconv.Quote(content) + `}]}`}}}
	}
	cycle := scripted.Reply{ToolCalls: []scripted.Call{{Name: "candidate_cycle", Args: `{}`}}}
	done := scripted.Reply{Text: "Done."}
	model.On(scripted.Mentions(replayLesson), page("<h1>Notes</h1>\n<p>Tags soon.</p>\n"), cycle, done)
	cut := page("")
	cut.Before = held.Hold
	model.On(scripted.Any(), cut, cycle, done)

	c := strconv.FormatInt(caseID, 10)
	cmd := exec.Command(bin, "knowledge", "replay", c, "--root", root, "--runs", "1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	held.Wait(t) // the run without the lesson is at its first call
	var said []string
	for len(lines) > 0 {
		said = append(said, <-lines)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if !strings.Contains(strings.Join(said, "\n"), "run 1 of 2, with: passed") {
		t.Fatalf("the run with the lesson had not finished before the kill:\n%s", strings.Join(said, "\n"))
	}

	db, err := migrations.Open(filepath.Join(root, "launcher", "knowledge.sqlite"), migrations.Knowledge)
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Arm    string `db:"arm"`
		N      int    `db:"n"`
		Passed bool   `db:"passed"`
	}
	if err := db.Read.Select(&rows, `SELECT arm, n, passed FROM replays WHERE of_case_id = ? ORDER BY id`, caseID); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if len(rows) != 1 || rows[0].Arm != "with" || rows[0].N != 1 || !rows[0].Passed {
		t.Fatalf("after the kill the store holds %+v, want the one finished run (with, 1, passed)", rows)
	}
	if _, err := os.Stat(filepath.Join(root, "replay", c, "with", "1")); err != nil {
		t.Errorf("the finished run's folder: %v", err)
	}

	// The next replay starts and finishes.
	held.Open()
	model.On(scripted.Mentions(replayLesson), page("<h1>Notes</h1>\n<p>Tags soon.</p>\n"), cycle, done)
	model.On(scripted.Any(), page(""), cycle, done)
	again := exec.Command(bin, "knowledge", "replay", c, "--root", root, "--runs", "1")
	out, err := again.CombinedOutput()
	if err != nil {
		t.Fatalf("the replay after the kill: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Verdict: The lesson helped") {
		t.Fatalf("the replay after the kill:\n%s", out)
	}
}
