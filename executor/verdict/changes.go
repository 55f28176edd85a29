package verdict

import (
	"context"
	"fmt"
	"strings"

	"autoapp/intent/workspace"
)

// RunChanges are the files changed by the workspace commits of the run
// runID, oldest first, each once: the commits whose subject names it as
// "(run <runID>" followed by "," or ")", as the workspace writes them. A
// run that committed nothing changed nothing.
func RunChanges(ctx context.Context, ws *workspace.Workspace, runID string) ([]string, error) {
	runID = strings.TrimSpace(runID)
	if runID == "" || strings.ContainsAny(runID, "\r\n") {
		return nil, fmt.Errorf("verdict: run changes: %q is not a run id", runID)
	}
	out, err := workspace.Git(ctx, ws.Dir(), "log", "--reverse", "--no-renames", "--fixed-strings",
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

// EditedSince are the files changed between the revision from and HEAD,
// as git diff --name-only names them.
func EditedSince(ctx context.Context, ws *workspace.Workspace, from string) ([]string, error) {
	from = strings.TrimSpace(from)
	if from == "" || strings.HasPrefix(from, "-") || strings.ContainsAny(from, "\r\n") {
		return nil, fmt.Errorf("verdict: edited since: %q is not a revision", from)
	}
	out, err := workspace.Git(ctx, ws.Dir(), "diff", "--name-only", "--no-renames", "--no-ext-diff", from, "HEAD", "--")
	if err != nil {
		return nil, fmt.Errorf("verdict: edited since %s: %w", from, err)
	}
	var files []string
	for _, name := range strings.Split(string(out), "\n") {
		if name = strings.TrimSpace(name); name != "" {
			files = append(files, name)
		}
	}
	return files, nil
}
