package planner

import (
	"context"
	"encoding/json"
	"fmt"

	"autoapp/executor/ai"
	"autoapp/executor/workspace"
)

// pathSchema is a path from the workspace's top.
const pathSchema = `{"type": "string", "minLength": 1, "maxLength": 1024, "description": "a path from the workspace's top, such as \"site/index.html\""}`

// SourceTools are the read-only source tools of a chat turn: source.list,
// source.read and source.search. They change nothing, so a turn that
// planned keeps them.
func (s *Session) SourceTools() []ai.Tool {
	return []ai.Tool{s.sourceList(), s.sourceRead(), s.sourceSearch()}
}

// withWorkspace opens the workspace for one read; the workspace answers
// an input it refuses with each field named.
func (s *Session) withWorkspace(read func(ws *workspace.Workspace) (any, error)) (any, error) {
	ws, err := workspace.Open(s.cfg.WorkspaceDir, s.cfg.Now)
	if err != nil {
		return nil, fmt.Errorf("planner: %w", err)
	}
	defer ws.Close()
	out, err := read(ws)
	if ps, ok := workspace.AsProblems(err); ok {
		problems := make([]ai.Problem, len(ps))
		for i, p := range ps {
			problems[i] = ai.Problem{Field: p.Field, Message: p.Message}
		}
		return nil, ai.Refuse(problems...)
	}
	return out, err
}

func (s *Session) sourceList() ai.Tool {
	type input struct {
		Dir string `json:"dir"`
	}
	return ai.Tool{
		Name:        "source.list",
		Description: `List a folder of the application's workspace: each entry's name, path, whether it is a folder, and a file's size. Give dir from the workspace's top; "" is the top.`,
		Schema: json.RawMessage(`{"type": "object", "additionalProperties": false, "required": ["dir"], "properties": {
			"dir": {"type": "string", "maxLength": 1024, "description": "a folder from the workspace's top; \"\" for the top"}}}`),
		Example: json.RawMessage(`{"dir": ""}`),
		Handler: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var in input
			if err := decode(raw, &in); err != nil {
				return nil, err
			}
			return s.withWorkspace(func(ws *workspace.Workspace) (any, error) {
				entries, err := ws.List(in.Dir)
				return map[string]any{"entries": entries}, err
			})
		},
	}
}

func (s *Session) sourceRead() ai.Tool {
	type input struct {
		Path string `json:"path"`
		From int    `json:"from"`
		To   int    `json:"to"`
	}
	return ai.Tool{
		Name: "source.read",
		Description: "Read a text file of the workspace: its lines, each numbered, from line from to line to " +
			"(both optional; the whole file when left out, at most 2000 lines a read).",
		Schema: json.RawMessage(`{"type": "object", "additionalProperties": false, "required": ["path"], "properties": {
			"path": ` + pathSchema + `,
			"from": {"type": "integer", "minimum": 0, "description": "the first line to read, counting from 1; 0 or left out is the top"},
			"to": {"type": "integer", "minimum": 0, "description": "the last line to read; 0 or left out is the end"}}}`),
		Example: json.RawMessage(`{"path": "autoapp.json"}`),
		Handler: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var in input
			if err := decode(raw, &in); err != nil {
				return nil, err
			}
			return s.withWorkspace(func(ws *workspace.Workspace) (any, error) {
				r, err := ws.Read(in.Path, in.From, in.To)
				return r, err
			})
		},
	}
}

func (s *Session) sourceSearch() ai.Tool {
	type input struct {
		Query  string `json:"query"`
		Regexp bool   `json:"regexp"`
		Under  string `json:"under"`
	}
	return ai.Tool{
		Name: "source.search",
		Description: "Find the lines of the workspace's text files that contain query (or match it as a Go regular expression when regexp is true), " +
			"under a folder or file (the whole workspace when left out). Answers each match's path, line number and text, at most 200.",
		Schema: json.RawMessage(`{"type": "object", "additionalProperties": false, "required": ["query"], "properties": {
			"query": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "the text to find"},
			"regexp": {"type": "boolean", "description": "true to read query as a regular expression"},
			"under": {"type": "string", "maxLength": 1024, "description": "a folder or file from the workspace's top; left out is the whole workspace"}}}`),
		Example: json.RawMessage(`{"query": "<h1>"}`),
		Handler: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var in input
			if err := decode(raw, &in); err != nil {
				return nil, err
			}
			return s.withWorkspace(func(ws *workspace.Workspace) (any, error) {
				r, err := ws.Search(in.Query, in.Regexp, in.Under)
				return r, err
			})
		},
	}
}
