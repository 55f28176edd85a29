package planner

import (
	"context"
	"encoding/json"
	"fmt"

	"autoapp/executor/ai"
	"autoapp/executor/source"
	"autoapp/intent/workspace"
)

// SourceTools are the read-only source tools of a chat turn: source.list,
// source.read and source.search. They change nothing, so a turn that
// planned keeps them.
func (s *Session) SourceTools() []ai.Tool {
	return []ai.Tool{s.sourceList(), s.sourceRead(), s.sourceSearch()}
}

// withWorkspace is one read of the turn's workspace; the workspace
// answers an input it refuses with each field named.
func (s *Session) withWorkspace(read func(ws *workspace.Workspace) (any, error)) (any, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, err
	}
	out, err := read(ws)
	if ps, ok := workspace.AsProblems(err); ok {
		return nil, ai.Refuse(ps...)
	}
	return out, err
}

// read answers a source tool's call: its input decoded, then read from
// the workspace.
func read[In any](s *Session, work func(ws *workspace.Workspace, in In) (any, error)) source.Handler {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var in In
		if err := decode(raw, &in); err != nil {
			return nil, err
		}
		return s.withWorkspace(func(ws *workspace.Workspace) (any, error) { return work(ws, in) })
	}
}

func (s *Session) sourceList() ai.Tool {
	return source.List(read(s, func(ws *workspace.Workspace, in source.ListInput) (any, error) {
		entries, err := ws.List(in.Dir)
		return map[string]any{"entries": entries}, err
	}))
}

func (s *Session) sourceRead() ai.Tool {
	return source.Read(read(s, func(ws *workspace.Workspace, in source.ReadInput) (any, error) {
		return ws.Read(in.Path, in.From, in.To)
	}))
}

func (s *Session) sourceSearch() ai.Tool {
	return source.Search(read(s, func(ws *workspace.Workspace, in source.SearchInput) (any, error) {
		return ws.Search(in.Query, in.Regexp, in.Under)
	}))
}

// workspace is the turn's workspace, or why there is none.
func (s *Session) workspace() (*workspace.Workspace, error) {
	if s.cfg.Workspace == nil {
		return nil, fmt.Errorf("planner: the workspace of %s could not be opened for this turn", s.cfg.AppID)
	}
	return s.cfg.Workspace, nil
}
