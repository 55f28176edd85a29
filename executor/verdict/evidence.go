package verdict

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"autoapp/executor/ai"
	"autoapp/intent/app"
	"autoapp/intent/plan"
	"autoapp/intent/workspace"
)

// Limits of the evidence document.
const (
	maxEvidenceWords = 12 // distinctive words searched
	maxLinesPerFile  = 6  // matching lines shown of one file
	maxFilesListed   = 20 // files named when nothing matches
	maxEvidenceLine  = 240
)

// stopWords are words too common in tasks and criteria to point at any
// file.
var stopWords = wordSet(`a an the and or but nor not no of to in on at by for from with without into onto
		as is are was were be been being it its it's this that these those there their they them then than
		when where which who whom what why how all any each every some such only own same so too very can
		will would should must may might shall do does did done has have had having get gets got
		he she his her we our you your i me my us if else also just more most other about above after
		again against below between both during before under over up down out off once here while
		one two three new make makes made shows show shown says say said see sees use uses used using
		page task tasks criterion criteria person user users able given returns return returned`)

func wordSet(text string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(text) {
		set[w] = true
	}
	return set
}

// declaration tells a line that declares something (a symbol) from other
// lines: Go, JavaScript and Python declarations, SQL tables, routes and
// HTML ids.
var declaration = regexp.MustCompile(`^\s*(func|type|const|var|let|function|class|def|export|interface|struct|package|CREATE\s+(TABLE|INDEX|VIEW))\b|\b(app|router|mux|r)\.(get|post|put|patch|delete|Handle|HandleFunc|Get|Post|Put|Patch|Delete)\(|\bid="`)

// Words are the distinctive words of the task's title and criteria, in
// the order they first appear: lowercase, without stop words, numbers or
// words shorter than three letters (two when one is a digit, like h1), a
// plural's s taken off, at most twelve.
func Words(t plan.Task) []string {
	texts := []string{t.Title}
	for _, c := range t.Criteria {
		texts = append(texts, c.Text)
	}
	var words []string
	seen := map[string]bool{}
	for _, text := range texts {
		for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
		}) {
			w = strings.Trim(w, "_")
			if !distinctive(w) {
				continue
			}
			if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is") {
				w = strings.TrimSuffix(w, "s")
			}
			if seen[w] {
				continue
			}
			seen[w] = true
			words = append(words, w)
			if len(words) == maxEvidenceWords {
				return words
			}
		}
	}
	return words
}

func distinctive(w string) bool {
	if stopWords[w] {
		return false
	}
	letters, digits := 0, 0
	for _, r := range w {
		if unicode.IsDigit(r) {
			digits++
		} else if unicode.IsLetter(r) {
			letters++
		}
	}
	switch {
	case letters == 0:
		return false
	case digits > 0:
		return len(w) >= 2
	}
	return len([]rune(w)) >= 3
}

// evidenceLine is one matching line and the words it matched.
type evidenceLine struct {
	path  string
	line  int
	text  string
	words []string
	// score favours lines matching rarer words, between lines with as
	// many words.
	score float64
}

// Evidence is the task evidence, evidence:<slug>: the files, symbols and
// acceptance examples of the workspace whose words match the task's title
// and criteria, each line as path:line: text, ranked by how many of the
// words it matches. When nothing matches it says so and lists the
// workspace's main files with their sizes. It holds at most limit
// characters (0, or anything above MaxEvidence, is MaxEvidence), cut at a
// line from the end.
func Evidence(ws *workspace.Workspace, t plan.Task, limit int) (ai.Document, error) {
	if limit <= 0 || limit > MaxEvidence {
		limit = MaxEvidence
	}
	doc := ai.Document{Ref: "evidence:" + t.Slug, Title: "Task evidence for " + t.Slug}
	words := Words(t)
	head := []string{"# Task evidence for " + oneLine(t.Slug) + ": " + clip(oneLine(t.Title), 120)}
	if len(words) == 0 {
		head = append(head, "The task's title and criteria have no distinctive words to search for.")
	} else {
		head = append(head, "Words searched: "+strings.Join(words, ", ")+".")
	}

	found := map[string]*evidenceLine{}
	var order []*evidenceLine
	queries := make([]string, len(words))
	for i, w := range words {
		queries[i] = "(?i)" + regexp.QuoteMeta(w)
	}
	// One walk of the workspace for all the words.
	results, err := ws.SearchEach(queries, true, "")
	if len(words) > 0 && err != nil {
		return ai.Document{}, fmt.Errorf("verdict: evidence: search %s: %w", strings.Join(words, ", "), err)
	}
	for i, w := range words {
		res := results[i]
		weight := 1 / float64(len(res.Matches)+1)
		for _, m := range res.Matches {
			key := fmt.Sprintf("%s:%d", m.Path, m.Line)
			l, ok := found[key]
			if !ok {
				l = &evidenceLine{path: m.Path, line: m.Line, text: m.Text}
				found[key] = l
				order = append(order, l)
			}
			l.words = append(l.words, w)
			l.score += weight
		}
	}
	if len(order) == 0 {
		lines, err := mainFiles(ws)
		if err != nil {
			return ai.Document{}, err
		}
		if len(words) > 0 {
			head = append(head, "Nothing in the workspace matches these words.")
		}
		doc.Text = cutLines(append(head, lines...), limit)
		return doc, nil
	}

	slices.SortStableFunc(order, func(a, b *evidenceLine) int {
		return cmp.Or(
			cmp.Compare(len(b.words), len(a.words)),
			cmp.Compare(b.score, a.score),
			strings.Compare(a.path, b.path),
			cmp.Compare(a.line, b.line),
		)
	})

	// Files, ranked by the words they match.
	fileWords := map[string][]string{}
	var files []string
	for _, l := range order {
		if _, ok := fileWords[l.path]; !ok {
			files = append(files, l.path)
		}
		for _, w := range l.words {
			if !slices.Contains(fileWords[l.path], w) {
				fileWords[l.path] = append(fileWords[l.path], w)
			}
		}
	}
	slices.SortStableFunc(files, func(a, b string) int { return cmp.Compare(len(fileWords[b]), len(fileWords[a])) })
	var fileParts []string
	for _, f := range files {
		fileParts = append(fileParts, f+" ("+strings.Join(fileWords[f], ", ")+")")
	}

	examplesDir := acceptanceDir(ws)
	var examples, symbols, others []string
	perFile := map[string]int{}
	for _, l := range order {
		if perFile[l.path] == maxLinesPerFile {
			continue
		}
		perFile[l.path]++
		s := clip(fmt.Sprintf("%s:%d: %s", l.path, l.line, strings.TrimSpace(oneLine(l.text))), maxEvidenceLine)
		switch {
		case l.path == examplesDir || strings.HasPrefix(l.path, examplesDir+"/"):
			examples = append(examples, s)
		case declaration.MatchString(l.text):
			symbols = append(symbols, s)
		default:
			others = append(others, s)
		}
	}
	lines := append(head, clip("Files, by words matched: "+strings.Join(fileParts, "; ")+".", 2*maxEvidenceLine))
	for _, sec := range []struct {
		title string
		lines []string
	}{{"Acceptance examples:", examples}, {"Symbols:", symbols}, {"Other lines:", others}} {
		if len(sec.lines) > 0 {
			lines = append(lines, "", sec.title)
			lines = append(lines, sec.lines...)
		}
	}
	doc.Text = cutLines(lines, limit)
	return doc, nil
}

// acceptanceDir is the acceptance folder of the manifest the host obeys
// (HEAD's), or the default when there is none.
func acceptanceDir(ws *workspace.Workspace) string {
	// The manifest is read from the repository's own files, or, when they
	// are packed, by git within its own timeout.
	_, m, _, err := ws.Manifest(context.Background())
	if err != nil {
		return path.Clean(app.DefaultAcceptance)
	}
	return m.AcceptanceDir()
}

// mainFiles lists the files at the top of the workspace and one folder
// down, with their sizes.
func mainFiles(ws *workspace.Workspace) ([]string, error) {
	top, err := ws.List("")
	if err != nil {
		return nil, fmt.Errorf("verdict: evidence: %w", err)
	}
	var files []workspace.Entry
	for _, e := range top {
		if !e.Dir {
			files = append(files, e)
			continue
		}
		if e.Link {
			continue
		}
		sub, err := ws.List(e.Path)
		if err != nil {
			continue // a folder that cannot be listed is left out
		}
		for _, s := range sub {
			if !s.Dir {
				files = append(files, s)
			}
		}
	}
	lines := []string{"The workspace's main files:"}
	for i, f := range files {
		if i == maxFilesListed {
			lines = append(lines, fmt.Sprintf("and %d more files.", len(files)-i))
			break
		}
		lines = append(lines, fmt.Sprintf("%s (%d bytes)", f.Path, f.Size))
	}
	return lines, nil
}

// cutLines joins the lines, leaving whole lines out from the end to keep
// within limit characters, and says how many it left out.
func cutLines(lines []string, limit int) string {
	text := joinLines(lines)
	if chars(text) <= limit {
		return text
	}
	total := len(lines)
	for len(lines) > 1 {
		lines = lines[:len(lines)-1]
		note := fmt.Sprintf("[%d more lines left out to fit]", total-len(lines))
		if t := joinLines(append(slices.Clone(lines), note)); chars(t) <= limit {
			return t
		}
	}
	return clip(joinLines(lines), limit)
}
