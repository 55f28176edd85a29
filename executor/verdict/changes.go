package verdict

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"autoapp/executor/workspace"
)

// gitTimeout bounds the one git command RunChanges runs.
const gitTimeout = time.Minute

// RunChanges are the files changed by the workspace commits of the run
// runID, oldest first, each once: the commits whose subject names it as
// "(run <runID>" followed by "," or ")", as the workspace writes them. A
// run that committed nothing changed nothing.
func RunChanges(ws *workspace.Workspace, runID string) ([]string, error) {
	runID = strings.TrimSpace(runID)
	if runID == "" || strings.ContainsAny(runID, "\r\n") {
		return nil, fmt.Errorf("verdict: run changes: %q is not a run id", runID)
	}
	out, err := git(ws.Dir(), "log", "--reverse", "--no-renames", "--fixed-strings",
		"--grep=run "+runID, "--format=%x00%s", "--name-only", "HEAD", "--")
	if err != nil {
		return nil, fmt.Errorf("verdict: run changes of %s: %w", runID, err)
	}
	var files []string
	seen := map[string]bool{}
	for _, commit := range strings.Split(string(out), "\x00") {
		subject, names, _ := strings.Cut(commit, "\n")
		if !namesRun(subject, runID) {
			continue
		}
		for _, name := range strings.Split(names, "\n") {
			if name = strings.TrimSpace(name); name != "" && !seen[name] {
				seen[name] = true
				files = append(files, name)
			}
		}
	}
	return files, nil
}

// namesRun says a commit subject names exactly the run: a1 is not a10.
func namesRun(subject, runID string) bool {
	return strings.Contains(subject, "(run "+runID+",") || strings.Contains(subject, "(run "+runID+")")
}

// git runs a read-only git command in dir with the same safe environment
// as the workspace's own commands: none of the host's GIT_ variables, no
// global or system configuration, the C locale, paths unquoted.
func git(dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.quotePath=false", "-c", "core.fsmonitor=false"}, args...)...)
	cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			return nil, fmt.Errorf("git %s: %w", args[0], err)
		}
		return nil, fmt.Errorf("git %s: %s (%w)", args[0], clip(msg, 500), err)
	}
	return stdout.Bytes(), nil
}
