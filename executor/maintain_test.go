package executor_test

import (
	"crypto/sha1"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"autoapp/intent"
)

// gitIn runs git in dir for the test to look at or set up the repository.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestARunLetsGitKeepTheRepositoryInOrderWhenItEnds: an application whose
// repository holds more loose objects than git's threshold for its
// automatic maintenance finds them packed once a run has ended, and the
// completed task's changed lines are git's count of its change.
func TestARunLetsGitKeepTheRepositoryInOrderWhenItEnds(t *testing.T) {
	h := newHost(t)
	dir := h.apps.WorkspaceDir("site")
	// git gc --auto packs once it guesses 6,700 loose objects: 28 in the
	// folder objects/17, where objects whose name begins 17 go.
	for i, n := 0, 0; n < 30; i++ {
		content := fmt.Sprintf("note %d\n", i)
		if sum := sha1.Sum(fmt.Appendf(nil, "blob %d\x00%s", len(content), content)); sum[0] == 0x17 {
			os.MkdirAll(filepath.Join(dir, "notes"), 0o755)
			os.WriteFile(filepath.Join(dir, "notes", fmt.Sprintf("%d.txt", i)), []byte(content), 0o644)
			n++
		}
	}
	gitIn(t, dir, "add", "notes")
	gitIn(t, dir, "-c", "maintenance.auto=false", "-c", "gc.auto=0", "commit", "-q", "-m", "Notes")
	loose := func() int {
		t.Helper()
		var n int
		for line := range strings.Lines(gitIn(t, dir, "count-objects", "-v")) {
			fmt.Sscanf(line, "count: %d", &n)
		}
		return n
	}
	if n := loose(); n < 30 {
		t.Fatalf("%d loose objects before the run", n)
	}

	id := h.plan(t, heading())
	h.headingCompletes(id)
	d := h.run(t, id)
	if d.Status != intent.IntentDone {
		t.Fatalf("intent %s (%s)", d.Status, d.StopReason)
	}
	if n := loose(); n != 0 {
		t.Errorf("%d loose objects once the run ended, want them packed", n)

	}
	task := h.task(t, id, headingSlug)
	var want int
	for _, f := range strings.Split(gitIn(t, dir, "diff", "--shortstat", "-M", task.RevBefore, task.RevAfter), ",")[1:] {
		var n int
		fmt.Sscanf(strings.TrimSpace(f), "%d", &n)
		want += n
	}
	if want == 0 || task.ActualLines != want {
		t.Errorf("the task's changed lines = %d, git counts %d", task.ActualLines, want)
	}
}
