package builder

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"autoapp/executor/ai"
	"autoapp/executor/source"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
)

// The guidance the source tools' answers carry.
const (
	// RereadNote is on the third identical read with no edit landed since.
	RereadNote = "You read this twice already and nothing changed since."
	// MissedHunkNote is on the second edit of a file whose hunk matched
	// nothing in it.
	MissedHunkNote = "Read the file again before another hunk: what you remember of it is not what is on disk."
	// NextAfterEdit is what an edit's verification says comes next.
	NextAfterEdit = "candidate.cycle"
	// WarnFromEdits is the number of unverified edits from which an edit's
	// answer warns.
	WarnFromEdits = 3
)

// UnverifiedWarning is the warning on an edit's answer when n edits (from
// WarnFromEdits) landed since the last build.
func UnverifiedWarning(n int) string {
	return fmt.Sprintf("%d edits since the last build: run candidate.cycle before another edit.", n)
}

// Shared pieces of the schemas.
const (
	pathSchema  = source.PathSchema
	hunksSchema = `{"type": "array", "minItems": 1, "maxItems": 100, "description": "exact find/replace pairs; each find must match exactly one place of the file as it is now",
		"items": {"type": "object", "additionalProperties": false, "required": ["find", "replace"], "properties": {
			"find": {"type": "string", "minLength": 1, "description": "the exact text to replace, copied from the file with its spaces and line breaks"},
			"replace": {"type": "string", "description": "the text that takes its place"}}}}`
	filesSchema = `{"type": "array", "minItems": 1, "maxItems": 50, "description": "whole files to create, overwrite or delete, in one commit",
		"items": {"type": "object", "additionalProperties": false, "required": ["path", "action"], "properties": {
			"path": ` + pathSchema + `,
			"action": {"type": "string", "enum": ["create", "overwrite", "delete"], "description": "create a new file, overwrite an existing one, or delete one"},
			"content": {"type": "string", "description": "the whole new file; none for a delete"}}}}`
)

// exampleFile is a small acceptance example, for the tools' examples.
const exampleFile = `{"title": "The home page shows its heading", "steps": [{"method": "GET", "path": "/", "expect": {"status": 200, "contains": ["<h1>"]}}]}`

// The reads' answers carry guidance: RereadNote when it applies.
type listAnswer struct {
	Entries  []workspace.Entry `json:"entries"`
	Guidance string            `json:"guidance,omitempty"`
}

type readAnswer struct {
	workspace.ReadResult
	Guidance string `json:"guidance,omitempty"`
}

type searchAnswer struct {
	workspace.SearchResult
	Guidance string `json:"guidance,omitempty"`
}

// Verification is the block every edit's answer carries: what is not
// built yet, how the last build went, and what comes next.
type Verification struct {
	EditsSinceBuild []string `json:"editsSinceBuild"`
	LastBuild       string   `json:"lastBuild"`
	Next            string   `json:"next"`
	Warning         string   `json:"warning,omitempty"`
}

type editAnswer struct {
	workspace.EditResult
	Verification Verification `json:"verification"`
}

func (s *Session) sourceList() ai.Tool {
	return source.List(handler(s, "source.list", func(ctx context.Context, _ workspace.CommitMeta, in source.ListInput) (any, error) {
		entries, err := s.ws.List(in.Dir)
		if err != nil {
			return nil, asRefusal(err)
		}
		return listAnswer{Entries: entries, Guidance: s.reread("source.list", cleanOrTop(in.Dir))}, nil
	}))
}

func (s *Session) sourceRead() ai.Tool {
	return source.Read(handler(s, "source.read", func(ctx context.Context, _ workspace.CommitMeta, in source.ReadInput) (any, error) {
		r, err := s.ws.Read(in.Path, in.From, in.To)
		if err != nil {
			return nil, asRefusal(err)
		}
		if !slices.Contains(s.st.readPaths, r.Path) {
			s.st.readPaths = append(s.st.readPaths, r.Path)
		}
		return readAnswer{ReadResult: r, Guidance: s.reread("source.read", r.Path, fmt.Sprint(in.From), fmt.Sprint(in.To))}, nil
	}))
}

func (s *Session) sourceSearch() ai.Tool {
	return source.Search(handler(s, "source.search", func(ctx context.Context, _ workspace.CommitMeta, in source.SearchInput) (any, error) {
		r, err := s.ws.Search(in.Query, in.Regexp, in.Under)
		if err != nil {
			return nil, asRefusal(err)
		}
		return searchAnswer{SearchResult: r, Guidance: s.reread("source.search", in.Query, fmt.Sprint(in.Regexp), cleanOrTop(in.Under))}, nil
	}))
}

func (s *Session) sourceEdit() ai.Tool {
	type input struct {
		Path  string           `json:"path"`
		Hunks []workspace.Hunk `json:"hunks"`
	}
	return ai.Tool{
		Name: "source.edit",
		Description: "Change one existing file with exact find/replace hunks and commit it. Each find must match exactly one place of the file as it is " +
			"on disk now: copy it from source.read. When a hunk is refused nothing is written. autoapp.json cannot be edited. " +
			"The answer says what is not built yet: verify with candidate.cycle.",
		Schema:  json.RawMessage(`{"type": "object", "additionalProperties": false, "required": ["path", "hunks"], "properties": {"path": ` + pathSchema + `, "hunks": ` + hunksSchema + `}}`),
		Example: json.RawMessage(`{"path": "site/index.html", "hunks": [{"find": "<h1>A new site</h1>", "replace": "<h1>Notes</h1>"}]}`),
		Edits:   true,
		Handler: handler(s, "source.edit", func(ctx context.Context, meta workspace.CommitMeta, in input) (any, error) {
			r, err := s.ws.Edit(ctx, in.Path, in.Hunks, meta)
			if ps, ok := workspace.AsProblems(err); ok {
				return nil, ai.Refuse(s.withMissNote(ps, in.Path, in.Hunks)...)
			}
			if err != nil {
				return nil, err
			}
			s.landed(ctx, "source.edit", r)
			return editAnswer{EditResult: r, Verification: s.verification()}, nil
		}),
	}
}

func (s *Session) sourceChange() ai.Tool {
	type input struct {
		Files []workspace.FileChange `json:"files"`
	}
	return ai.Tool{
		Name: "source.change",
		Description: "Create, overwrite or delete whole files and commit them together. create refuses a file that exists; overwrite and delete " +
			"refuse one that does not. When any file is refused nothing is written. autoapp.json cannot be changed. " +
			"The answer says what is not built yet: verify with candidate.cycle.",
		Schema:  json.RawMessage(`{"type": "object", "additionalProperties": false, "required": ["files"], "properties": {"files": ` + filesSchema + `}}`),
		Example: json.RawMessage(`{"files": [{"path": "acceptance/home-c1.json", "action": "create", "content": ` + quote(exampleFile) + `}]}`),
		Edits:   true,
		Handler: handler(s, "source.change", func(ctx context.Context, meta workspace.CommitMeta, in input) (any, error) {
			r, err := s.ws.Change(ctx, in.Files, meta)
			if err != nil {
				return nil, asRefusal(err)
			}
			s.landed(ctx, "source.change", r)
			return editAnswer{EditResult: r, Verification: s.verification()}, nil
		}),
	}
}

// reread counts a read and says so on the third identical one since the
// last edit landed.
func (s *Session) reread(tool string, key ...string) string {
	k := tool + "\x00" + strings.Join(key, "\x00")
	s.st.reads[k]++
	if s.st.reads[k] >= 3 {
		return RereadNote
	}
	return ""
}

// withMissNote adds MissedHunkNote to a refused edit of file when one of
// its hunks matches nothing on disk for the second time in that file.
func (s *Session) withMissNote(ps []refusal.Problem, file string, hunks []workspace.Hunk) []refusal.Problem {
	if file == "" || len(hunks) == 0 {
		return ps
	}
	b, err := s.ws.ReadFile(path.Clean(file), workspace.MaxFileBytes)
	if err != nil {
		return ps
	}
	missed := false
	for _, h := range hunks {
		if h.Find != "" && !strings.Contains(string(b), h.Find) {
			missed = true
		}
	}
	if !missed {
		return ps
	}
	key := path.Clean(file)
	s.st.misses[key]++
	if s.st.misses[key] >= 2 {
		ps = append(slices.Clip(ps), refusal.Problem{Message: MissedHunkNote}) // never into the caller's array
	}
	return ps
}

// verification is the block an edit's answer carries.
func (s *Session) verification() Verification {
	v := Verification{EditsSinceBuild: s.st.sinceBuild, LastBuild: s.lastBuildLine(), Next: NextAfterEdit}
	if s.st.unverified >= WarnFromEdits {
		v.Warning = UnverifiedWarning(s.st.unverified)
	}
	return v
}

// lastBuildLine is the application's last build in a line, as
// candidate.json records it.
func (s *Session) lastBuildLine() string {
	st, err := s.cfg.Candidates.State(s.cfg.AppID)
	if err != nil {
		return "unknown: the candidate state could not be read"
	}
	b := st.Build
	switch {
	case b == nil:
		return "none yet"
	case b.OK && b.Release != nil:
		return fmt.Sprintf("passed at %s (release %s)", short(b.Revision), b.Release.ID)
	case b.OK:
		return "passed at " + short(b.Revision)
	case len(b.Problems) == 0:
		return "failed at " + short(b.Revision)
	}
	line := fmt.Sprintf("failed at %s with %d %s; the first: %s", short(b.Revision), len(b.Problems),
		plural(len(b.Problems), "problem", "problems"), b.Problems[0].String())
	return line
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func cleanOrTop(p string) string {
	if p == "" {
		return "."
	}
	return path.Clean(p)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
