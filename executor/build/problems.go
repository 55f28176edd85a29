package build

import (
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// location is a line that starts with path:line[:col]: message, as the Go
// compiler, go vet, go test, gcc and make write them; go vet puts its own
// name first ("vet: ./main.go:17:2: undefined: x").
var location = regexp.MustCompile(`^\s*(?:vet: )?([^\s:]+):(\d+)(?::(\d+))?:\s*(\S.*)$`)

// colour is a terminal colour or style code.
var colour = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// extensionless are source files named without an extension that tools
// report problems in.
var extensionless = map[string]bool{
	"Makefile": true, "makefile": true, "GNUmakefile": true,
	"Dockerfile": true, "Containerfile": true, "Justfile": true,
}

// parseProblems reads the problems a failed stage's output names. A line
// that only looks like one (a host and port, a URL) is skipped. Lines
// indented by a tab right after a problem continue its message, as Go's
// "have … want …" lines do.
func parseProblems(stage, dir, output string) []Problem {
	var ps []Problem
	seen := map[Problem]bool{}
	last := -1 // index in ps of the problem a continuation line extends
	for line := range strings.SplitSeq(cleanOutput(output), "\n") {
		if strings.HasPrefix(line, "\t") && last >= 0 {
			if len(ps[last].Message) < 1000 {
				ps[last].Message += "\n" + strings.TrimSpace(line)
			}
			continue
		}
		last = -1
		m := location.FindStringSubmatch(line)
		if m == nil || !looksLikeFile(m[1]) {
			continue
		}
		n, err := strconv.Atoi(m[2])
		if err != nil || n <= 0 {
			continue
		}
		col, _ := strconv.Atoi(m[3])
		p := Problem{Stage: stage, File: relative(dir, m[1]), Line: n, Col: col, Message: strings.TrimSpace(m[4])}
		if seen[p] {
			continue
		}
		seen[p] = true
		ps = append(ps, p)
		last = len(ps) - 1
		if len(ps) == maxProblems {
			break
		}
	}
	return ps
}

// looksLikeFile tells a file name from a host name or a word: its last
// element has an extension that starts with a letter (main.go, app.test.ts)
// or is a build file named without one.
func looksLikeFile(p string) bool {
	if strings.Contains(p, "//") {
		return false
	}
	base := path.Base(filepath.ToSlash(p))
	if extensionless[base] {
		return true
	}
	ext := path.Ext(base)
	if len(ext) < 2 || ext == base {
		return false
	}
	c := ext[1]
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// relative writes a path the way the workspace names it: slashes, no
// leading ./, and relative to the workspace when it was absolute inside it.
func relative(dir, p string) string {
	if filepath.IsAbs(p) {
		if abs, err := filepath.Abs(dir); err == nil {
			if rel, err := filepath.Rel(abs, p); err == nil && filepath.IsLocal(rel) {
				p = rel
			}
		}
	}
	return path.Clean(filepath.ToSlash(p))
}

// cleanOutput removes colour codes and carriage returns.
func cleanOutput(s string) string {
	s = colour.ReplaceAllString(s, "")
	return strings.ReplaceAll(s, "\r", "")
}
