package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"autoapp/intent/workspace"
)

func TestRunDiffShowsOnlyThatRunsCommits(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := workspace.InitRepository(t.Context(), dir, "start", time.Now); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(dir, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	edits := []struct{ run, find, replace string }{
		{"intent-1-0001-x-a1", "one", "two"},
		{"intent-1-0001-x-a10", "two", "three"},
		{"intent-1-0001-x-a1", "three", "four"},
	}
	for i, e := range edits {
		if _, err := ws.Edit(t.Context(), "a.txt", []workspace.Hunk{{Find: e.find, Replace: e.replace}}, workspace.CommitMeta{RunID: e.run, CallID: "c" + string(rune('1'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	diff, err := ws.RunDiff(t.Context(), "intent-1-0001-x-a1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-one", "+two", "-three", "+four"} {
		if !strings.Contains(diff, want) {
			t.Errorf("the run's diff lacks %q:\n%s", want, diff)
		}
	}
	if strings.Contains(diff, "+three") {
		t.Errorf("the diff of run a1 holds run a10's change:\n%s", diff)
	}
	if strings.Index(diff, "+two") > strings.Index(diff, "+four") {
		t.Errorf("the commits are not oldest first:\n%s", diff)
	}
	none, err := ws.RunDiff(t.Context(), "intent-9-0009-y-a1")
	if err != nil || none != "" {
		t.Fatalf("a run that committed nothing: %q %v", none, err)
	}
}
