// Package source describes the read-only source tools that builder and
// chat turns both offer: source.list, source.read and source.search. Each
// turn's session gives them its own handler; what the model reads of them
// (name, description, schema, example) is said once, here.
package source

import (
	"context"
	"encoding/json"

	"autoapp/executor/ai"
)

// PathSchema is a path from the workspace's top.
const PathSchema = `{"type": "string", "minLength": 1, "maxLength": 1024, "description": "a path from the workspace's top, such as \"site/index.html\""}`

// Handler answers one call of a tool with its raw input.
type Handler = func(ctx context.Context, input json.RawMessage) (any, error)

// ListInput is source.list's input.
type ListInput struct {
	Dir string `json:"dir"`
}

// ReadInput is source.read's input.
type ReadInput struct {
	Path string `json:"path"`
	From int    `json:"from"`
	To   int    `json:"to"`
}

// SearchInput is source.search's input.
type SearchInput struct {
	Query  string `json:"query"`
	Regexp bool   `json:"regexp"`
	Under  string `json:"under"`
}

// List is source.list, answered by h.
func List(h Handler) ai.Tool {
	return ai.Tool{
		Name: "source.list",
		Description: "List a folder of the application's workspace: each entry's name, path, whether it is a folder, and a file's size. " +
			`Give dir as a path from the workspace's top; "" is the top.`,
		Schema: json.RawMessage(`{"type": "object", "additionalProperties": false, "required": ["dir"], "properties": {
			"dir": {"type": "string", "maxLength": 1024, "description": "a folder from the workspace's top; \"\" for the top"}}}`),
		Example: json.RawMessage(`{"dir": ""}`),
		Handler: h,
	}
}

// Read is source.read, answered by h.
func Read(h Handler) ai.Tool {
	return ai.Tool{
		Name: "source.read",
		Description: "Read a text file of the workspace: its lines, each numbered, from line from to line to (both optional; " +
			"the whole file when left out, at most 2000 lines a read). Copy hunks for source.edit from what this returns, without the numbers.",
		Schema: json.RawMessage(`{"type": "object", "additionalProperties": false, "required": ["path"], "properties": {
			"path": ` + PathSchema + `,
			"from": {"type": "integer", "minimum": 0, "description": "the first line to read, counting from 1; 0 or left out is the top"},
			"to": {"type": "integer", "minimum": 0, "description": "the last line to read; 0 or left out is the end"}}}`),
		Example: json.RawMessage(`{"path": "autoapp.json"}`),
		Handler: h,
	}
}

// Search is source.search, answered by h.
func Search(h Handler) ai.Tool {
	return ai.Tool{
		Name: "source.search",
		Description: "Find the lines of the workspace's text files that contain query (or match it as a Go regular expression when regexp is true), " +
			"under a folder or file (the whole workspace when left out). Answers each match's path, line number and text, at most 200.",
		Schema: json.RawMessage(`{"type": "object", "additionalProperties": false, "required": ["query"], "properties": {
			"query": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "the text to find"},
			"regexp": {"type": "boolean", "description": "true to read query as a regular expression"},
			"under": {"type": "string", "maxLength": 1024, "description": "a folder or file from the workspace's top; left out is the whole workspace"}}}`),
		Example: json.RawMessage(`{"query": "<h1>"}`),
		Handler: h,
	}
}
